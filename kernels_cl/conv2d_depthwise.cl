/* conv2d_depthwise.cl: a depthwise nn.conv2d (groups = input channels = output channels)
 * read straight from its NCHW input, with a fused elementwise epilogue. Each output
 * element has only KH * KW taps, so conv2d.cl's laid-out input would cost more than the
 * arithmetic: here padding is a bounds check instead.
 *
 * Work-item (oy, tx, n*C + c) computes PT neighbouring outputs of row oy of channel c,
 * ox0 = tx * PT onwards (rows along dimension 0, which PoCL runs together: neighbouring
 * rows take the same path, neighbouring tiles of a row may not): for each tap, one vector of PT inputs (columns ox * SW - PAD_L +
 * kw * DW) times the tap's weight. A tile whose columns all lie inside the row reads them
 * with one vector load (TAP_IN; stride 2 takes the even lanes of a double-width load);
 * tiles at the edges take 0 outside the row: one load inside the row and a constant
 * shuffle per tap where the row is one load wide, else lane by lane (TAP_EDGE_TILE,
 * TAP_EDGE). Rows outside the
 * input are skipped. The PT results of a tile are consecutive outputs, stored in order.
 *
 * Defined by the generator: KNAME, KPARAMS (x, w, y, then epilogue operands), VEC
 * (float##PT), VSTORE (vstore##PT), PT, C, H, W, OH, OW, KH, KW, SH, DH, DW, PAD_T, PAD_L, SW, SPAN (columns a
 * tile's loads reach from its first), TAP_IN(at) (the vector at element offset at),
 * TAP_EDGE(row, col) (the same, checked: row is the row's offset, col the first column),
 * TAP_EDGE_TILE(row, col, kw) (what tile tx reads for tap kw when it is not inside),
 * EPILOGUE(v, fi), LD_x, LD_w, ST_Y; where the epilogue has a vector form, EPILOGUE_V(v, fi)
 * and VSTORE_Y(fi, v), which a tile inside the row takes. */
__kernel void KNAME(KPARAMS)
{
    const int oy = get_global_id(0), tx = get_global_id(1), nc = get_global_id(2);
    const int c = nc % C, ox0 = tx * PT, ix0 = ox0 * SW - PAD_L;
    const bool interior = ix0 >= 0 && ix0 + SPAN <= W;
    VEC acc = (VEC)(0.0f);
#pragma unroll
    for (int kh = 0; kh < KH; kh++) {
        const int iy = oy * SH - PAD_T + kh * DH;
        if (iy >= 0 && iy < H) {
            const int row = (nc * H + iy) * W;
#pragma unroll
            for (int kw = 0; kw < KW; kw++) {
                const int col = ix0 + kw * DW;
                const VEC xv = interior ? TAP_IN(row + col) : TAP_EDGE_TILE(row, col, kw);
                acc = fma((VEC)(LD_w(c * (KH * KW) + kh * KW + kw)), xv, acc);
            }
        }
    }
    const int fi0 = (nc * OH + oy) * OW + ox0;
#ifdef EPILOGUE_V
    if (ox0 + PT <= OW) {
        EPILOGUE_V(acc, fi0);
        VSTORE_Y(fi0, acc);
        return;
    }
#endif
    float r[PT];
    VSTORE(acc, 0, r);
    for (int j = 0; j < PT; j++) { /* rolled: conv2d.cl says why */
        if (ox0 + j < OW) {
            float v = r[j];
            EPILOGUE(v, fi0 + j);
            ST_Y(fi0 + j, v);
        }
    }
}
