/* elemwise.cl: a chain of elementwise ops (unary, broadcasting binary, bias_add,
 * batch_norm, cast) that no producer absorbed, one output element per work-item. The
 * first op's input is loaded (LD_FIRST, with its broadcast offset), then EPILOGUE applies
 * the whole chain, first op included.
 *
 * Defined by the generator: KNAME, KPARAMS (y, then the operands), NOUT, LD_FIRST(fi),
 * EPILOGUE(v, fi), ST_Y. */
__kernel void KNAME(KPARAMS)
{
    const int fi = get_global_id(0);
    if (fi >= NOUT)
        return;
    float v = LD_FIRST(fi);
    EPILOGUE(v, fi);
    ST_Y(fi, v);
}
