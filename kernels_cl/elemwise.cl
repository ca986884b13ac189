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
 * Defined by the generator: KNAME, KPARAMS (y, then the operands), NOUT, LD_FIRST(fi),
 * EPILOGUE(v, fi), ST_Y; for tiles also VEC (float##PT), PT, LD_FIRST_V(fi),
 * EPILOGUE_V(v, fi) and VSTORE_Y(fi, v). */
#ifdef LD_FIRST_V
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
