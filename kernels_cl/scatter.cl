/* scatter.cl: scatter_elements and scatter_nd in gather form, one work-item per output
 * element: it starts from the data's element and combines, in the reference's order
 * (codegen/ops/index.c applies the updates one after another), every update whose
 * resolved index names this element. Each element has one writer, so a repeated index
 * needs no atomics and gives the reference's result exactly. An index out of range
 * (the host reports an error there) names no element here: its update is skipped.
 *
 * SCATTER_SETUP(fi, count) sets count, the candidate updates of element fi, and declares
 * what SCATTER_MATCH reads (names ending in _); SCATTER_MATCH(t, from, hit) sets from, the
 * position of candidate t in the updates, and hit, whether its index names fi.
 *
 * Defined by the generator: KNAME, KPARAMS (x: data, y, ix: indices, u: updates, then
 * epilogue operands), NOUT, SCATTER_SETUP, SCATTER_MATCH, COMBINE(a, b) (the reduction:
 * update, add, mul, min or max, rounded to float16 where the output is), EPILOGUE(v, fi),
 * LD_x, LD_ix, LD_u, ST_Y. */
__kernel void KNAME(KPARAMS)
{
    const int fi = get_global_id(0);
    if (fi >= NOUT)
        return;
    float v = LD_x(fi);
    int count = 0;
    SCATTER_SETUP(fi, count);
    for (int t = 0; t < count; t++) {
        int from = 0;
        bool hit = false;
        SCATTER_MATCH(t, from, hit);
        if (hit)
            v = COMBINE(v, LD_u(from));
    }
    EPILOGUE(v, fi);
    ST_Y(fi, v);
}
