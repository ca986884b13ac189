/* resize.cl: image.resize2d over NCHW data (every method and coordinate transformation),
 * one output element per work-item, with a fused elementwise epilogue.
 *
 * The generator plans the taps as the reference does (ops_resize_plan, codegen/ops/
 * image.c) and passes them as two constant tables of (OH + OW) * TAPS entries: `at`, the
 * input offsets (a row's premultiplied by W), and `wt`, their weights; output row oy
 * reads entries oy*TAPS + t, column ox entries (OH + ox)*TAPS + u. The element is
 * sum_t wy[t] * sum_u wx[u] * x[row_t + col_u], as the reference sums it (in double
 * there, in float here); nearest has one tap of weight 1, so it copies exactly. With
 * tf_crop_and_resize, a row or column outside the input has offsets -1 and the element is
 * EXTRAPOLATION (extrapolation_value), defined then only.
 *
 * Defined by the generator: KNAME, KPARAMS (x, at, wt, y, then epilogue operands), NOUT,
 * H, W, OH, OW, TAPS (1, 2 or 4), EPILOGUE(v, fi), LD_x, ST_Y; EXTRAPOLATION. */
__kernel void KNAME(KPARAMS)
{
    const int o = get_global_id(0);
    if (o >= NOUT)
        return;
    const int ox = o % OW, oy = o / OW % OH, plane = o / (OW * OH);
    const int base = plane * (H * W);
    const int ry = oy * TAPS, rx = (OH + ox) * TAPS;
    float v = 0.0f;
#ifdef EXTRAPOLATION
    if (LD_at(ry) < 0 || LD_at(rx) < 0)
        v = EXTRAPOLATION;
    else
#endif
    for (int t = 0; t < TAPS; t++) {
        const int row = base + LD_at(ry + t);
        float line = 0.0f;
        for (int u = 0; u < TAPS; u++)
            line += LD_wt(rx + u) * LD_x(row + LD_at(rx + u));
        v += LD_wt(ry + t) * line;
    }
    EPILOGUE(v, o);
    ST_Y(o, v);
}
