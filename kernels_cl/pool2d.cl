/* pool2d.cl: nn.max_pool2d and nn.avg_pool2d over NCHW data, one output cell per
 * work-item (ox, oy, n*C + c), with a fused elementwise epilogue (max and average pooling
 * over rows wide enough for tiles have pool2d_rows.cl, small planes at stride 1
 * pool2d_plane.cl, global average pooling global_pool2d.cl). The
 * rules are the reference kernel's (codegen/ops/pool.c): padding cells never enter a
 * maximum, and a NaN anywhere in the window makes it NaN; an average divides by the input
 * cells the window covers, or with COUNT_INCLUDE_PAD by its cells inside the padded image
 * (not the extra cells ceil_mode hangs past it); a window with no cell gives -inf (max)
 * or 0 (average).
 *
 * The loads are selects rather than branches, so that the work-items of a work-group
 * vectorize together.
 *
 * Defined by the generator: KNAME, KPARAMS (x, y, then epilogue operands), POOL_MAX (0/1),
 * COUNT_INCLUDE_PAD (0/1), H, W, OH, OW, KH, KW, SH, SW, DH, DW, PAD_T, PAD_L, PADDED_H
 * (H + bottom padding), PADDED_W, EPILOGUE(v, fi), LD_x, ST_Y. */
__kernel void KNAME(KPARAMS)
{
    const int ox = get_global_id(0), oy = get_global_id(1), plane = get_global_id(2);
    const int fi = (plane * OH + oy) * OW + ox;
    const int y0 = oy * SH - PAD_T, x0 = ox * SW - PAD_L;
    const int base = plane * (H * W);
#if POOL_MAX
    float best = -INFINITY;
    int any_nan = 0;
#else
    float sum = 0.0f;
    int n_input = 0, n_padded = 0;
#endif
    for (int kh = 0; kh < KH; kh++) {
        const int iy = y0 + kh * DH;
        for (int kw = 0; kw < KW; kw++) {
            const int ix = x0 + kw * DW;
            const bool inside = iy >= 0 && iy < H && ix >= 0 && ix < W;
#if POOL_MAX
            const float v = inside ? LD_x(base + iy * W + ix) : -INFINITY;
            best = v > best ? v : best;
            any_nan |= isnan(v);
#else
            sum += inside ? LD_x(base + iy * W + ix) : 0.0f;
            n_input += inside;
            n_padded += iy < PADDED_H && ix < PADDED_W;
#endif
        }
    }
#if POOL_MAX
    float v = any_nan ? NAN : best;
#else
    const int divisor = COUNT_INCLUDE_PAD ? n_padded : n_input;
    float v = divisor > 0 ? sum / (float)divisor : 0.0f;
#endif
    EPILOGUE(v, fi);
    ST_Y(fi, v);
}
