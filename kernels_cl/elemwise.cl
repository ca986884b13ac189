/* elemwise.cl: a chain of elementwise ops (unary, broadcasting binary, bias_add,
 * batch_norm, cast) that no producer absorbed. The first op's input is loaded (LD_FIRST,
 * with its broadcast offset), then EPILOGUE applies the whole chain, first op included.
 *
 * Where the chain has a vector form (float32 throughout, every operand contiguous or
 * constant along a tile), a work-item takes a tile of PT elements, which the generator
 * makes lie in one row or one plane of the last two axes: each operand is one vector load
 * or one broadcast element, and the offset arithmetic (a division by the plane size for a
 * per-channel operand) is done once per tile rather than per element.
 *
 * Planes that the tile width does not divide (7x7: 49 elements) are a work-item each
 * (PLANE defined): NV tiles, the last one ending at the plane's end and overlapping the
 * one before it. Every tile is loaded and computed before any is stored, so that the
 * overlap reads inputs, not results, also where y shares its buffer with an operand.
 *
 * Defined by the generator: KNAME, KPARAMS (y, then the operands), NOUT, LD_FIRST(fi),
 * EPILOGUE(v, fi), ST_Y; for tiles also VEC (float##PT), PT, LD_FIRST_V(fi),
 * EPILOGUE_V(v, fi) and VSTORE_Y(fi, v); for whole planes also PLANE and NV. */
#ifdef PLANE
__kernel void KNAME(KPARAMS)
{
    const int base = get_global_id(0) * PLANE;
    if (base >= NOUT)
        return;
    VEC v[NV];
#pragma unroll
    for (int t = 0; t < NV; t++) {
        const int fi = base + min(t * PT, PLANE - PT);
        v[t] = LD_FIRST_V(fi);
        EPILOGUE_V(v[t], fi);
    }
#pragma unroll
    for (int t = 0; t < NV; t++)
        VSTORE_Y(base + min(t * PT, PLANE - PT), v[t]);
}
#elif defined(LD_FIRST_V)
__kernel void KNAME(KPARAMS)
{
    const int fi = get_global_id(0) * PT;
    if (fi >= NOUT)
        return;
    VEC v = LD_FIRST_V(fi);
    EPILOGUE_V(v, fi);
    VSTORE_Y(fi, v);
}
#else
__kernel void KNAME(KPARAMS)
{
    const int fi = get_global_id(0);
    if (fi >= NOUT)
        return;
    float v = LD_FIRST(fi);
    EPILOGUE(v, fi);
    ST_Y(fi, v);
}
#endif
