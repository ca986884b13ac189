/* pool2d_rows.cl: nn.max_pool2d and nn.avg_pool2d over NCHW data in row tiles, with a
 * fused elementwise epilogue: work-item (ty, 0, plane) computes RY whole output rows,
 * rows oy0 = ty * RY onwards (row blocks along dimension 0), in TILES tiles of PT
 * neighbouring outputs, columns ox0 = TILE_X0(tx) onwards for tile tx (the last tile
 * ending at the row's end), the loop over the tiles unrolled as conv2d_depthwise.cl's
 * where a row has few (else work-item (ty, tx, plane) computes tile tx alone; its
 * work-group takes all tiles of its rows: local_whole_dim1 in cl_kernel.c). A row a
 * work-item took resnet18's 3x3/2 pool of 112x112 maps 0.180 -> 0.127 ms, and
 * squeezenet1_1's of 109x109 0.185 -> 0.125, against a tile per work-item. Each tile
 * walks the ROWS_IN input rows it reads once, as conv2d_depthwise.cl does: per input
 * row, each tap's PT inputs as one vector (TAP_IN inside the row, TAP_EDGE_TILE at its
 * edges, -inf for a maximum and 0 for a sum outside it), the KW taps combined first, then
 * the row's combination into each output row that reads it (rows outside the input are skipped;
 * output rows past OH computed and dropped). With a row per work-item, each input row
 * was read up to KH times and each work-item's own cost spread over a single row:
 * a 3x3 pool over 28x28 maps took 1.75x its time now. The rules are pool2d.cl's, the
 * reference kernel's: padding never enters a maximum, a NaN in the window makes it NaN, a
 * window with no cell gives -inf (max) or 0 (average); an average divides by the input
 * cells the window covers or, with COUNT_INCLUDE_PAD, by its cells inside the padded
 * image, counted per lane as the rows times the columns (a window is a rectangle).
 *
 * Defined by the generator: KNAME, KPARAMS (x, y, opaque_zero as conv2d_depthwise.cl's,
 * then epilogue operands), POOL_MAX (0/1), COUNT_INCLUDE_PAD (0/1), VEC (float##PT),
 * VSTORE (vstore##PT), INTV (int##PT), TO_VEC(v) (convert_float##PT), LANES (an INTV of
 * 0 .. PT-1), PT, TILES (tiles a row), TX_FIRST, TX_END (as conv2d_depthwise.cl's),
 * RY, ROWS_IN ((RY - 1) * SH + (KH - 1) * DH + 1), H, W, OH, OW, KH, KW, SH, SW, DH, DW, PAD_T,
 * PAD_L, PADDED_H (H + bottom padding), PADDED_W, SPAN, TAP_IN(at), TAP_EDGE(row, col),
 * TAP_EDGE_TILE(row, col, kw), EPILOGUE(v, fi), LD_x, ST_Y;
 * where the epilogue has a vector form, EPILOGUE_V(v, fi) and VSTORE_Y(fi, v), which a
 * tile inside the row takes. */
__kernel void KNAME(KPARAMS)
{
    const int ty = get_global_id(0), plane = get_global_id(2);
    const int oy0 = ty * RY;
#pragma unroll
    for (int tx = TX_FIRST; tx < TX_END; tx++) {
        const int ox0 = TILE_X0(tx), ix0 = ox0 * SW - PAD_L;
        const bool interior = ix0 >= 0 && ix0 + SPAN <= W;
        /* In registers: every loop over them is unrolled (conv2d.cl says why). */
#if POOL_MAX
        VEC best[RY];
        INTV nan[RY];
#else
        VEC best[RY];
        int rows[RY];
#endif
#pragma unroll
        for (int r = 0; r < RY; r++) {
#if POOL_MAX
            best[r] = (VEC)(-INFINITY);
            nan[r] = (INTV)(0);
#else
            best[r] = (VEC)(0.0f);
            rows[r] = 0;
#endif
        }
#pragma unroll
        for (int j = 0; j < ROWS_IN; j++) {
            const int iy = oy0 * SH - PAD_T + j;
            if (iy >= 0 && iy < H) {
                const int row = (plane * H + iy) * W;
                /* The row's KW taps combined, then added to each output row that reads it */
#if POOL_MAX
                VEC h = (VEC)(-INFINITY);
                INTV h_nan = (INTV)(0);
#else
                VEC h = (VEC)(0.0f);
#endif
#pragma unroll
                for (int kw = 0; kw < KW; kw++) {
                    const int col = ix0 + kw * DW;
                    const VEC v = interior ? TAP_IN(row + col) : TAP_EDGE_TILE(row, col, kw);
#if POOL_MAX
                    h = select(h, v, v > h); /* maxps; fmax would add NaN handling */
                    h_nan |= isnan(v);
#else
                    h += v;
#endif
                }
#pragma unroll
                for (int r = 0; r < RY; r++) {
                    const int dy = j - r * SH; /* kh * DH for the output row that reads it */
                    if (dy >= 0 && dy % DH == 0 && dy / DH < KH) {
#if POOL_MAX
                        best[r] = select(best[r], h, h > best[r]);
                        nan[r] |= h_nan;
#else
                        best[r] += h;
                        rows[r]++;
#endif
                    }
                }
            }
        }
#if !POOL_MAX
        /* The columns each lane's window covers, inside the input and inside the padded
         * image (comparisons give -1 for true), the same for every row. */
        INTV cols = (INTV)(0), cols_padded = (INTV)(0);
#pragma unroll
        for (int kw = 0; kw < KW; kw++) {
            const INTV ix = (INTV)(ix0 + kw * DW) + LANES * SW;
            cols -= (ix >= 0) & (ix < W);
            cols_padded -= ix < PADDED_W;
        }
#endif
#pragma unroll
        for (int r = 0; r < RY; r++) {
#if POOL_MAX
            best[r] = select(best[r], (VEC)(NAN), nan[r]);
#else
            int rows_padded = 0;
            for (int kh = 0; kh < KH; kh++)
                rows_padded += (oy0 + r) * SH - PAD_T + kh * DH < PADDED_H;
            const INTV divisor = COUNT_INCLUDE_PAD ? rows_padded * cols_padded : rows[r] * cols;
            best[r] = select(best[r] / TO_VEC(divisor), (VEC)(0.0f), divisor <= 0);
#endif
        }
#ifdef EPILOGUE_V
        if (ox0 + PT <= OW) {
            BYOCL_ROW_TILE_STORE_VECTORS(best, plane, oy0, ox0)
            continue;
        }
#endif
        BYOCL_ROW_TILE_STORE_LANES(best, plane, oy0, ox0)
    }
}
