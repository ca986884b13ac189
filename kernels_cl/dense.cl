/* dense.cl: nn.dense (y[r][u] = sum_k x[r][k] * w[u][k]) and nn.batch_matmul (one such
 * product per batch index b, x = tensor_a and w = tensor_b, y[b][r][u] = sum_k
 * x[b][r][k] * w[b][k][u], either operand possibly stored transposed or one matrix for
 * every b) with a fused elementwise epilogue.
 *
 * Work-item (ub, rb, b) computes UT units (block ub) for RT rows (block rb) of product b
 * (dense launches two dimensions: b is 0): RT accumulators of UT floats; each step over
 * k is one vector load of the packed weight and RT fused multiply-adds with x's element
 * broadcast. Weights (batch_matmul's tensor_b) are packed as [matrices][UB][K][UT] (zeros
 * past U), so the loads do not depend on how w is stored. The last block of rows starts
 * at R - RT, overlapping the block before it, whose rows there it computes again to the
 * same bits: so that every block's RT rows are rows of x, at constant distances
 * (X_RSTRIDE) from the first, and one index serves the RT loads of a step. With each
 * row's index clamped to R - 1, PoCL's compiler kept the RT indices in a vector and
 * took them out one by one at every step: 3136 rows of 96 -> 384 took 2.98 ms, 1.67 now
 * (2-core Zen 2).
 *
 * Defined by the generator: KNAME, KPARAMS (x, w, y, then epilogue operands), VEC
 * (float##UT, or float), VLOAD_W(ptr), UT, RT (at most R), K, U, R, UB, X_AT(b, row, k)
 * (the offset of x's element), X_KSTRIDE and X_RSTRIDE (the offset's steps along k and
 * along the rows), W_MATRIX(b) (the packed matrix product b reads), EPILOGUE(v, fi), ST_Y,
 * LD_x; where the epilogue has a vector form (and UT > 1), EPILOGUE_V(v, fi) and
 * VSTORE_Y(fi, v). */
__kernel void KNAME(KPARAMS)
{
    const int ub = get_global_id(0), rb = get_global_id(1), b = get_global_id(2);
    const int r0 = min(rb * RT, R - RT);
    const __global float *wp = w + (W_MATRIX(b) * UB + ub) * (K * UT);
    VEC acc[RT]; /* in registers: the loops over them are unrolled */
#pragma unroll
    for (int i = 0; i < RT; i++)
        acc[i] = (VEC)(0.0f);
    const int x0 = X_AT(b, r0, 0);
    for (int k = 0; k < K; k++) {
        const VEC wv = VLOAD_W(wp + k * UT);
        const int xk = x0 + k * X_KSTRIDE;
#pragma unroll
        for (int i = 0; i < RT; i++)
            acc[i] = fma((VEC)(LD_x(xk + i * X_RSTRIDE)), wv, acc[i]);
    }
#ifdef EPILOGUE_V
    if ((ub + 1) * UT <= U) {
        /* All UT units inside the row: the vector epilogue and one vector store a row. */
#pragma unroll
        for (int i = 0; i < RT; i++) {
            const int fi0 = (b * R + r0 + i) * U + ub * UT;
            VEC v = acc[i];
            EPILOGUE_V(v, fi0);
            VSTORE_Y(fi0, v);
        }
        return;
    }
#endif
    /* Edge tiles: rolled loops over a copy of the accumulators (conv2d.cl says why). */
    VEC spilled[RT];
#pragma unroll
    for (int i = 0; i < RT; i++)
        spilled[i] = acc[i];
    const float *res = (const float *)spilled;
    for (int i = 0; i < RT; i++) {
        const int row = r0 + i;
        for (int t = 0; t < UT; t++) {
            const int u = ub * UT + t;
            if (u < U) {
                const int fi = (b * R + row) * U + u;
                float v = res[i * UT + t];
                EPILOGUE(v, fi);
                ST_Y(fi, v);
            }
        }
    }
}
