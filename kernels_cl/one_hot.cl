/* one_hot.cl: out[fi] = on_value where the position along the new axis equals the index,
 * else off_value (Relay's rule: an index outside 0..DEPTH-1 matches nothing), one output
 * element per work-item, with the epilogue fused after it.
 *
 * fi splits into (o, k, j): o over the indices' axes before the new axis, k along it (of
 * DEPTH), j over those after it (of INNER); the index read is ix[o * INNER + j].
 *
 * Defined by the generator: KNAME, KPARAMS (ix, on, off, y, then epilogue operands), NOUT,
 * DEPTH, INNER, EPILOGUE(v, fi), LD_ix, LD_on, LD_off, ST_Y. */
__kernel void KNAME(KPARAMS)
{
    const int fi = get_global_id(0);
    if (fi >= NOUT)
        return;
    const int j = fi % INNER, k = fi / INNER % DEPTH, o = fi / INNER / DEPTH;
    float v = LD_ix(o * INNER + j) == k ? LD_on(0) : LD_off(0);
    EPILOGUE(v, fi);
    ST_Y(fi, v);
}
