/* dense_gemv.cl: nn.dense of a few rows (y[r][u] = sum_k x[r][k] * w[u][k]) over its float32
 * weight as it is, [U][K], with a fused elementwise epilogue. dense.cl reads a packed copy
 * of the weight ([UB][K][UT]); for a classifier's GEMV (vgg11's 25088 -> 4096 layer: 411
 * MB) that copy cost every build, cached ones too, its packing and its pages, while one
 * row of x reuses each weight only once.
 *
 * Work-item ub computes units ub*UT .. ub*UT + UT - 1 (the last work-item's units past U
 * read unit U - 1 again and store nothing) for all R rows: per step of 16 along k, one
 * vload16 of each row of x and of each unit's weight row and R*UT vector fused
 * multiply-adds; the lanes are summed at the end, the K % 16 last products added one by
 * one, then each output goes through the epilogue.
 *
 * Defined by the generator: KNAME, KPARAMS (x, w, y, then epilogue operands), UT, R, K,
 * U, EPILOGUE(v, fi), ST_Y. */
__kernel void KNAME(KPARAMS)
{
    const int u0 = get_global_id(0) * UT;
    int rows[UT]; /* each unit's weight row, in floats */
#pragma unroll
    for (int t = 0; t < UT; t++)
        rows[t] = min(u0 + t, U - 1) * K;
    float16 acc[R][UT];
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int t = 0; t < UT; t++)
            acc[r][t] = (float16)(0.0f);
    for (int k = 0; k + 16 <= K; k += 16) {
        float16 xv[R];
#pragma unroll
        for (int r = 0; r < R; r++)
            xv[r] = vload16(0, x + r * K + k);
#pragma unroll
        for (int t = 0; t < UT; t++) {
            const float16 wv = vload16(0, w + rows[t] + k);
#pragma unroll
            for (int r = 0; r < R; r++)
                acc[r][t] = fma(xv[r], wv, acc[r][t]);
        }
    }
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int t = 0; t < UT; t++) {
            const float16 a = acc[r][t];
            const float8 h8 = a.lo + a.hi;
            const float4 h4 = h8.lo + h8.hi;
            const float2 h2 = h4.lo + h4.hi;
            float v = h2.x + h2.y;
            for (int k = K / 16 * 16; k < K; k++)
                v = fma(x[r * K + k], w[rows[t] + k], v);
            const int u = u0 + t;
            if (u < U) {
                const int fi = r * U + u;
                EPILOGUE(v, fi);
                ST_Y(fi, v);
            }
        }
}
