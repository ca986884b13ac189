/* max_pool2d.cl: nn.max_pool2d over NCHW data in row tiles, with a fused elementwise
 * epilogue: work-item (oy, tx, plane) computes PT neighbouring outputs of row oy, ox0 =
 * tx * PT onwards (rows along dimension 0, as in conv2d_depthwise.cl), reading each tap's PT inputs as one vector as conv2d_depthwise.cl
 * does (TAP_IN inside the row, TAP_EDGE_TILE at its edges, -inf outside; rows
 * outside the input are skipped). The rules are pool2d.cl's, the reference kernel's:
 * padding never enters a maximum, a NaN in the window makes it NaN, a window with no
 * cell gives -inf.
 *
 * Defined by the generator: KNAME, KPARAMS (x, y, then epilogue operands), VEC
 * (float##PT), VSTORE (vstore##PT), INTV (int##PT), PT, H, W, OH, OW, KH, KW, SH, SW, DH,
 * DW, PAD_T, PAD_L, SPAN, TAP_IN(at), TAP_EDGE(row, col), TAP_EDGE_TILE(row, col, kw),
 * EPILOGUE(v, fi), LD_x, ST_Y;
 * where the epilogue has a vector form, EPILOGUE_V(v, fi) and VSTORE_Y(fi, v), which a
 * tile inside the row takes. */
__kernel void KNAME(KPARAMS)
{
    const int oy = get_global_id(0), tx = get_global_id(1), plane = get_global_id(2);
    const int ox0 = tx * PT, ix0 = ox0 * SW - PAD_L;
    const bool interior = ix0 >= 0 && ix0 + SPAN <= W;
    VEC best = (VEC)(-INFINITY);
    INTV nan = (INTV)(0);
#pragma unroll
    for (int kh = 0; kh < KH; kh++) {
        const int iy = oy * SH - PAD_T + kh * DH;
        if (iy >= 0 && iy < H) {
            const int row = (plane * H + iy) * W;
#pragma unroll
            for (int kw = 0; kw < KW; kw++) {
                const int col = ix0 + kw * DW;
                const VEC v = interior ? TAP_IN(row + col) : TAP_EDGE_TILE(row, col, kw);
                best = select(best, v, v > best); /* maxps; fmax would add NaN handling */
                nan |= isnan(v);
            }
        }
    }
    best = select(best, (VEC)(NAN), nan);
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
