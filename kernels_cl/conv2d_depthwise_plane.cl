/* conv2d_depthwise_plane.cl: a depthwise nn.conv2d of stride 1 whose output rows are as
 * long as its input rows (OW == W), one channel's whole plane per work-item, in vectors
 * of PT consecutive outputs of the flattened plane. Output p = oy * W + ox reads, for tap
 * (kh, kw), input p + (kh * DH - PAD_T) * W + kw * DW - PAD_L: the same offset for every
 * output of the plane, so a vector of outputs reads one vector of inputs per tap whatever
 * rows it spans, whatever plane that reaches into (no tap reaches further than the planes
 * before and after). A lane is padding where its column lies outside the row, and, the
 * column being inside, its row lies outside the plane exactly where its flat index does;
 * such lanes are cleared. Row tiles (conv2d_depthwise.cl) fill a 16-wide vector with 7 of
 * a 7x7 map's columns and read every tap of such a row at its edges; here a 7x7 plane is 4
 * vectors of 16.
 *
 * Small planes (PLANE_VECTORS defined): the generator lists every vector and tap
 * (TAPS_v), whose masks are constants XORed with a kernel argument that is 0
 * (opaque_zero): with masks it can see (a select, a shuffle with 0, an AND) LLVM knows
 * which lanes of each load are used, and takes the loads apart into pairs of floats
 * rebuilt by permutes, several times slower. The first and the last plane, whose
 * neighbours may lie outside the buffer, are computed output by output instead. Larger
 * planes loop over their vectors, the masks computed (the rows' only where some tap of
 * the vector leaves the plane's rows, none where every tap of every lane stays inside
 * its row: mobilenet_v2's 32 x 112 x 112 and 144 x 56 x 56 3x3 convs, 5 of every 7
 * vectors and 2 of every 4, took 0.147 and 0.166 ms with masks everywhere, 0.123 and
 * 0.140 so), and a vector whose loads would leave the tensor computed output by output.
 *
 * Defined by the generator: KNAME, KPARAMS (x, w, y, opaque_zero, then epilogue
 * operands), VEC (float##PT), INTV (int##PT), AS_VEC, AS_INTV, VSTORE (vstore##PT), PT, NC
 * (images x channels), C, H, W, OH, OW, KH, KW, DH, DW, PAD_T, PAD_L, LD_x, LD_w, ST_Y,
 * VLOAD_X(p) (PT elements of x from pointer p), NV (vectors of a plane), MIN_OFF and
 * MAX_OFF (the first and the last tap's offsets), LANES (0, 1, ... as an INTV),
 * EPILOGUE(v, fi); for small planes PLANE_VECTORS(VECTOR), VECTOR(v, p0) for each vector
 * v of outputs, p0 its first (the last one ends at the plane's end, overlapping the one
 * before it, whose outputs there it computes again to the same bits), and
 * TAPS_##v(TAP, TAP_MASKED), TAP(t, xv) or TAP_MASKED(t, xv, mask) for each tap t of
 * vector v that reads some input, xv its load (around the plane that starts at element
 * `plane`), mask its lanes inside; where the epilogue has a vector form, EPILOGUE_V(v, fi)
 * and VSTORE_Y(fi, v). */
/* Output p of plane nc, tap by tap, each checked against the input's bounds. */
#define PLANE_ONE_OUTPUT(p)                                                                 \
    {                                                                                      \
        const int oy = (p) / OW, ox = (p) % OW;                                            \
        float one = 0.0f;                                                                  \
        for (int kh = 0; kh < KH; kh++) {                                                  \
            const int iy = oy + kh * DH - PAD_T;                                           \
            for (int kw = 0; kw < KW; kw++) {                                              \
                const int ix = ox + kw * DW - PAD_L;                                       \
                if (iy >= 0 && iy < H && ix >= 0 && ix < W)                                \
                    one = fma(LD_w(c * (KH * KW) + kh * KW + kw), LD_x(plane + iy * W + ix), \
                              one);                                                        \
            }                                                                              \
        }                                                                                  \
        EPILOGUE(one, nc * (OH * OW) + (p));                                               \
        ST_Y(nc * (OH * OW) + (p), one);                                                   \
    }
#ifdef EPILOGUE_V
#define PLANE_STORE(p0)                                                                     \
    {                                                                                      \
        const int fi0 = nc * (OH * OW) + (p0);                                             \
        EPILOGUE_V(acc, fi0);                                                              \
        VSTORE_Y(fi0, acc);                                                                \
    }
#else
#define PLANE_STORE(p0)                                                                     \
    {                                                                                      \
        float res[PT];                                                                     \
        VSTORE(acc, 0, res);                                                               \
        const int fi0 = nc * (OH * OW) + (p0);                                             \
        for (int j = 0; j < PT; j++) { /* rolled: conv2d.cl says why */                    \
            float v = res[j];                                                              \
            EPILOGUE(v, fi0 + j);                                                          \
            ST_Y(fi0 + j, v);                                                              \
        }                                                                                  \
    }
#endif
__kernel void KNAME(KPARAMS)
{
    const int nc = get_global_id(0);
    if (nc >= NC) /* the launch is whole work-groups */
        return;
    const int c = nc % C, plane = nc * (H * W);
    float wt[KH * KW];
#pragma unroll
    for (int t = 0; t < KH * KW; t++)
        wt[t] = LD_w(c * (KH * KW) + t);
#ifdef PLANE_VECTORS
    if (nc == 0 || nc == NC - 1) {
#pragma unroll 1
        for (int p = 0; p < OH * OW; p++)
            PLANE_ONE_OUTPUT(p)
        return;
    }
#define PLANE_TAP(t, xv) acc = fma((VEC)(wt[t]), (xv), acc);
#define PLANE_TAP_MASKED(t, xv, mask)                                                       \
    acc = fma((VEC)(wt[t]), AS_VEC(AS_INTV(xv) & ((mask) ^ (INTV)(opaque_zero))), acc);
#define PLANE_VECTOR(v, p0)                                                                 \
    {                                                                                      \
        VEC acc = (VEC)(0.0f);                                                             \
        TAPS_##v(PLANE_TAP, PLANE_TAP_MASKED)                                              \
        PLANE_STORE(p0)                                                                    \
    }
    PLANE_VECTORS(PLANE_VECTOR)
#undef PLANE_VECTOR
#undef PLANE_TAP_MASKED
#undef PLANE_TAP
#else
    (void)opaque_zero;
#pragma unroll 1
    for (int v = 0; v < NV; v++) {
        BYOCL_PLANE_VECTOR_BEGIN(v, nc, p0, rows_in, PLANE_ONE_OUTPUT)
        const INTV lane = (INTV)(p0) + LANES, col = lane % W;
        INTV col_in[KW];
#pragma unroll
        for (int kw = 0; kw < KW; kw++)
            col_in[kw] = (col + (kw * DW - PAD_L) >= 0) & (col + (kw * DW - PAD_L) < W);
        const int at = plane + p0, col0 = p0 % W;
        /* every tap of every lane inside its row: no masks */
        const bool cols_in = col0 + PT <= W && col0 - PAD_L >= 0 &&
                             col0 + PT - 1 + (KW - 1) * DW - PAD_L < W;
        VEC acc = (VEC)(0.0f);
        if (rows_in && cols_in) {
#pragma unroll
            for (int kh = 0; kh < KH; kh++)
#pragma unroll
                for (int kw = 0; kw < KW; kw++)
                    acc = fma((VEC)(wt[kh * KW + kw]),
                              VLOAD_X(x + at + (kh * DH - PAD_T) * W + kw * DW - PAD_L), acc);
        } else if (rows_in) {
#pragma unroll
            for (int kh = 0; kh < KH; kh++)
#pragma unroll
                for (int kw = 0; kw < KW; kw++) {
                    const VEC xv = VLOAD_X(x + at + (kh * DH - PAD_T) * W + kw * DW - PAD_L);
                    acc = fma((VEC)(wt[kh * KW + kw]), select((VEC)(0.0f), xv, col_in[kw]),
                              acc);
                }
        } else {
#pragma unroll
            for (int kh = 0; kh < KH; kh++) {
                const INTV in_row = lane + (kh * DH - PAD_T) * W;
                const INTV row_in = (in_row >= 0) & (in_row < H * W);
#pragma unroll
                for (int kw = 0; kw < KW; kw++) {
                    const VEC xv = VLOAD_X(x + at + (kh * DH - PAD_T) * W + kw * DW - PAD_L);
                    acc = fma((VEC)(wt[kh * KW + kw]),
                              select((VEC)(0.0f), xv, col_in[kw] & row_in), acc);
                }
            }
        }
        PLANE_STORE(p0)
    }
#endif
}
#undef PLANE_STORE
#undef PLANE_ONE_OUTPUT
