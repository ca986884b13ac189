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
 *   nn.pad                       x's element at fi's digits less the widths before,
 *                                clamped ("edge") or mirrored ("reflect"); outside x in
 *                                "constant" mode, the scalar buffer `pv`
 * Values pass through float, which is exact for float32 and float16.
 *
 * Defined by the generator: KNAME, KPARAMS (x, y, [ix or pv], then epilogue operands), NOUT,
 * GATHER_INDEX(fi, src, ok) (adds to int src, and sets ok false where there is no
 * element), MISSING (the value then: NAN, or LD_pv(0)), EPILOGUE(v, fi), LD_x, [LD_ix],
 * [LD_pv], ST_Y. */
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
