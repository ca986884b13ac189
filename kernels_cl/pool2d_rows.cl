/* pool2d_rows.cl: nn.max_pool2d and nn.avg_pool2d over NCHW data in row tiles, with a
 * fused elementwise epilogue: work-item (oy, tx, plane) computes PT neighbouring outputs
 * of row oy, ox0 = TILE_X0(tx) onwards (the last tile ending at the row's end, as in
 * conv2d_depthwise.cl; rows along dimension 0, as there), reading each tap's PT inputs as
 * one vector as conv2d_depthwise.cl does (TAP_IN inside the row, TAP_EDGE_TILE at its
 * edges, -inf for a maximum and 0 for a sum outside it; rows outside the input are
 * skipped). The rules are pool2d.cl's, the reference kernel's: padding never enters a
 * maximum, a NaN in the window makes it NaN, a window with no cell gives -inf (max) or 0
 * (average); an average divides by the input cells the window covers or, with
 * COUNT_INCLUDE_PAD, by its cells inside the padded image, counted per lane as the rows
 * times the columns (a window is a rectangle).
 *
 * Defined by the generator: KNAME, KPARAMS (x, y, then epilogue operands), POOL_MAX (0/1),
 * COUNT_INCLUDE_PAD (0/1), VEC (float##PT), VSTORE (vstore##PT), INTV (int##PT),
 * TO_VEC(v) (convert_float##PT), LANES (an INTV of 0 .. PT-1), PT, H, W, OH, OW, KH, KW,
 * SH, SW, DH, DW, PAD_T, PAD_L, PADDED_H (H + bottom padding), PADDED_W, SPAN, TAP_IN(at),
 * TAP_EDGE(row, col), TAP_EDGE_TILE(row, col, kw), EPILOGUE(v, fi), LD_x, ST_Y;
 * where the epilogue has a vector form, EPILOGUE_V(v, fi) and VSTORE_Y(fi, v), which a
 * tile inside the row takes. */
__kernel void KNAME(KPARAMS)
{
    const int oy = get_global_id(0), tx = get_global_id(1), plane = get_global_id(2);
    const int ox0 = TILE_X0(tx), ix0 = ox0 * SW - PAD_L;
    const bool interior = ix0 >= 0 && ix0 + SPAN <= W;
#if POOL_MAX
    VEC best = (VEC)(-INFINITY);
    INTV nan = (INTV)(0);
#else
    VEC sum = (VEC)(0.0f);
    int rows = 0, rows_padded = 0;
#endif
#pragma unroll
    for (int kh = 0; kh < KH; kh++) {
        const int iy = oy * SH - PAD_T + kh * DH;
#if !POOL_MAX
        rows_padded += iy < PADDED_H;
#endif
        if (iy >= 0 && iy < H) {
            const int row = (plane * H + iy) * W;
#if !POOL_MAX
            rows++;
#endif
#pragma unroll
            for (int kw = 0; kw < KW; kw++) {
                const int col = ix0 + kw * DW;
                const VEC v = interior ? TAP_IN(row + col) : TAP_EDGE_TILE(row, col, kw);
#if POOL_MAX
                best = select(best, v, v > best); /* maxps; fmax would add NaN handling */
                nan |= isnan(v);
#else
                sum += v;
#endif
            }
        }
    }
#if POOL_MAX
    best = select(best, (VEC)(NAN), nan);
#else
    /* The columns each lane's window covers, inside the input and inside the padded
     * image (comparisons give -1 for true). */
    INTV cols = (INTV)(0), cols_padded = (INTV)(0);
#pragma unroll
    for (int kw = 0; kw < KW; kw++) {
        const INTV ix = (INTV)(ix0 + kw * DW) + LANES * SW;
        cols -= (ix >= 0) & (ix < W);
        cols_padded -= ix < PADDED_W;
    }
    const INTV divisor = COUNT_INCLUDE_PAD ? rows_padded * cols_padded : rows * cols;
    VEC best = select(sum / TO_VEC(divisor), (VEC)(0.0f), divisor <= 0);
#endif
    const int fi0 = (plane * OH + oy) * OW + ox0;
#ifdef EPILOGUE_V
    if (ox0 + PT <= OW) {
        EPILOGUE_V(best, fi0);
        VSTORE_Y(fi0, best);
        return;
    }
#endif
    float r[PT];
    VSTORE(best, 0, r);
    for (int j = 0; j < PT; j++) { /* rolled: conv2d.cl says why */
        if (ox0 + j < OW) {
            float v = r[j];
            EPILOGUE(v, fi0 + j);
            ST_Y(fi0 + j, v);
        }
    }
}
