/* gather.cl: ops whose output element fi is one element of the input x, one output
 * element per work-item, with the epilogue fused after them:
 *   strided_slice, broadcast_to  x's element at an offset affine in fi's digits (the
 *                                map of codegen/ops/index.c: negative steps, 0 on
 *                                broadcast axes)
 *   take                         the element the index tensor `ix` names along the axis,
 *                                resolved by the op's mode (clip, wrap; "fast" has no
 *                                answer for an index out of range, which gives NaN here
 *                                where the host reports an error: nothing is read out of
 *                                bounds)
 *   gather_nd                    the slice element the index columns `ix` name along
 *                                the indexed axes (-n..-1 from the end; out of range
 *                                gives NaN where the host reports an error)
 *   trilu                        x's element fi where its column less its row is at
 *                                least (upper) or at most (lower) k, read from the
 *                                scalar buffer `ix` when running; 0 elsewhere
 *   nn.pad                       x's element at fi's digits less the widths before,
 *                                clamped ("edge") or mirrored ("reflect"); outside x in
 *                                "constant" mode, the scalar buffer `pv`
 * Values pass through float, which is exact for float32 and float16.
 *
 * Defined by the generator: KNAME, KPARAMS (x, y, [ix or pv], then epilogue operands), NOUT,
 * GATHER_INDEX(fi, src, ok) (adds to int src, and sets ok false where there is no
 * element), MISSING (the value then: NAN, LD_pv(0), or trilu's 0.0f), EPILOGUE(v, fi),
 * LD_x, [LD_ix], [LD_pv], ST_Y. */
__kernel void KNAME(KPARAMS)
{
    const int fi = get_global_id(0);
    if (fi >= NOUT)
        return;
    int src = 0;
    bool ok = true;
    GATHER_INDEX(fi, src, ok);
    float v = ok ? LD_x(src) : MISSING;
    EPILOGUE(v, fi);
    ST_Y(fi, v);
}
