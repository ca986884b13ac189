/* conv2d_depthwise.cl: a depthwise nn.conv2d (groups = input channels = output channels)
 * read straight from its NCHW input, with a fused elementwise epilogue. Each output
 * element has only KH * KW taps, so conv2d.cl's laid-out input would cost more than the
 * arithmetic: here padding is a bounds check instead.
 *
 * Work-item (ty, 0, n*C + c) computes RY whole output rows of channel c, rows oy0 = ty * RY onwards
 * (row blocks along dimension 0, which PoCL runs together), in TILES tiles of PT neighbouring
 * outputs, one after the other (or, where a row has more tiles than that walk takes, work-item (ty,
 * tx, n*C + c) computes tile tx alone): tile tx's columns are ox0 = TILE_X0(tx) onwards (tx * PT,
 * but the last tile of a row at least PT wide ends at the row's end, overlapping the tile before
 * it, whose outputs there it computes again to the same bits: so every tile stores whole vectors,
 * where a partial tile stored lane by lane had cost a 28x28 conv a third of its time;
 * clg_row_tile_first). The loop over the tiles is unrolled (rows of at most ROW_TILES_UNROLLED_MAX
 * tiles, cl_emit.c: PoCL's compile time grows with the tiles unrolled), so each tile's edge
 * handling is known when compiled: with a tile per work-item (wider rows still), each tap chose
 * between the inside load and the edge shuffles at run time, and a 112x112 -> 56x56 3x3 conv of 96
 * channels took 0.25 ms against 0.16 now (the loop rolled took PoCL 1.7 times as long to compile
 * mobilenet_v2). Each tile walks the ROWS_IN input rows its output rows read (oy0 * SH - PAD_T
 * onwards) once: per row and tap kw, one vector of PT inputs (columns ox * SW - PAD_L + kw * DW),
 * which each output row that reads it (input row j is filter row (j - r * SH) / DH of output row r)
 * multiplies by its weight. RY rows per work-item read each input row once instead of up to KH
 * times, and spread the work-item's own cost over RY times the arithmetic. A tile whose columns all
 * lie inside the row reads them with one vector load (TAP_IN; stride 2 takes the even lanes of a
 * double-width load, or of two at PT 16); tiles at the edges take 0 outside the row: one load (or
 * two) inside the row and a constant shuffle per tap where the row is one load wide, else lane by
 * lane (TAP_EDGE_TILE, TAP_EDGE). Rows outside the input are skipped, and output rows past OH (the
 * last block when RY does not divide OH) are computed and dropped. The PT results of a tile are
 * consecutive outputs, stored in order.
 *
 * Defined by the generator: KNAME, KPARAMS (x, w, y, opaque_zero (0, where a tap's load is two
 * vectors: stride 2, PT 16), then epilogue operands), VEC (float##PT), VSTORE (vstore##PT), PT,
 * TILES (tiles a row), TX_FIRST and TX_END (the tiles a work-item computes: all, in a loop
 * unrolled, or its one), RY, ROWS_IN ((RY - 1) * SH + (KH - 1) * DH + 1), C, H, W, OH, OW, KH, KW,
 * SH, DH, DW, PAD_T, PAD_L, SW, SPAN (columns a tile's loads reach from its first), TAP_IN(at) (the
 * vector at element offset at), TAP_EDGE(row, col) (the same, checked: row is the row's offset, col
 * the first column), TAP_EDGE_TILE(row, col, kw) (what tile tx reads for tap kw when it is not
 * inside), EPILOGUE(v, fi), LD_x, LD_w, ST_Y; where the epilogue has a vector form,
 * EPILOGUE_V(v, fi) and VSTORE_Y(fi, v), which a tile inside the row takes. */
__kernel void KNAME(KPARAMS)
{
    const int ty = get_global_id(0), nc = get_global_id(2);
    const int oy0 = ty * RY, c = nc % C;
#pragma unroll
    for (int tx = TX_FIRST; tx < TX_END; tx++) {
        const int ox0 = TILE_X0(tx), ix0 = ox0 * SW - PAD_L;
        const bool interior = ix0 >= 0 && ix0 + SPAN <= W;
        /* In registers: every loop over them is unrolled (conv2d.cl says why). */
        VEC acc[RY];
#pragma unroll
        for (int r = 0; r < RY; r++)
            acc[r] = (VEC)(0.0f);
#pragma unroll
        for (int j = 0; j < ROWS_IN; j++) {
            const int iy = oy0 * SH - PAD_T + j;
            if (iy >= 0 && iy < H) {
                const int row = (nc * H + iy) * W;
#pragma unroll
                for (int kw = 0; kw < KW; kw++) {
                    const int col = ix0 + kw * DW;
                    const VEC xv = interior ? TAP_IN(row + col) : TAP_EDGE_TILE(row, col, kw);
#pragma unroll
                    for (int r = 0; r < RY; r++) {
                        const int dy = j - r * SH; /* kh * DH for the output row that reads it */
                        if (dy >= 0 && dy % DH == 0 && dy / DH < KH)
                            acc[r] = fma((VEC)(LD_w(c * (KH * KW) + dy / DH * KW + kw)), xv,
                                         acc[r]);
                    }
                }
            }
        }
#ifdef EPILOGUE_V
        if (ox0 + PT <= OW) {
            BYOCL_ROW_TILE_STORE_VECTORS(acc, nc, oy0, ox0)
            continue;
        }
#endif
        BYOCL_ROW_TILE_STORE_LANES(acc, nc, oy0, ox0)
    }
}
