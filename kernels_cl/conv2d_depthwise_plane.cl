/* conv2d_depthwise_plane.cl: a depthwise nn.conv2d of stride 1 whose output rows are as
 * long as its input rows (OW == W), over a small plane, one channel's whole plane per
 * work-item, in vectors of PT consecutive outputs of the flattened plane. Output p =
 * oy * W + ox reads, for tap (kh, kw), input p + (kh * DH - PAD_T) * W + kw * DW - PAD_L:
 * the same offset for every output of the plane, so a vector of outputs reads one vector
 * of inputs whatever rows it spans. A lane is padding where its column lies outside the
 * row, and, the column being inside, its row lies outside the plane exactly where its
 * flat index does. For a vector that starts at a constant both are constants, so the
 * generator lists every vector and tap (TAPS_v): one load at the tap's offset, whatever
 * plane that reaches into (no tap reaches further than the planes before and after), its
 * padding's lanes cleared by a mask. The first and the last plane, whose neighbours may
 * lie outside the buffer, are computed by a rolled loop output by output instead.
 *
 * The masks are constants XORed with a kernel argument that is 0 (opaque_zero): with
 * constant masks (a select, a shuffle with 0, or an AND) LLVM knows which lanes of each
 * load are used, and takes the loads apart into pairs of floats and rebuilds them with
 * permutes, several times slower. Row tiles (conv2d_depthwise.cl) fill a 16-wide vector
 * with 7 of a 7x7 map's columns and read every tap of such a row at its edges; here a 7x7
 * plane is 4 vectors of 16.
 *
 * Defined by the generator: KNAME, KPARAMS (x, w, y, then epilogue operands), VEC
 * (float##PT), INTV (int##PT), AS_VEC, AS_INTV, VSTORE (vstore##PT), PT, NC (images x
 * channels), C, H, W, OH, OW, KH, KW, DH, DW, PAD_T, PAD_L, LD_x, LD_w, ST_Y,
 * EPILOGUE(v, fi); PLANE_VECTORS(VECTOR), VECTOR(v, p0) for each vector v of outputs, p0
 * its first (the last one ends at the plane's end, overlapping the one before it, whose
 * outputs there it computes again to the same bits); TAPS_##v(TAP, TAP_MASKED), TAP(t,
 * xv) or TAP_MASKED(t, xv, mask) for each tap t of vector v that reads some input, xv
 * the load (around the plane that starts at element `plane`), mask its lanes inside;
 * where the epilogue has a vector form, EPILOGUE_V(v, fi) and VSTORE_Y(fi, v). */
__kernel void KNAME(KPARAMS)
{
    const int nc = get_global_id(0);
    if (nc >= NC) /* the launch is whole work-groups */
        return;
    const int c = nc % C, plane = nc * (H * W);
    if (nc == 0 || nc == NC - 1) {
#pragma unroll 1
        for (int p = 0; p < OH * OW; p++) {
            const int oy = p / OW, ox = p % OW;
            float acc = 0.0f;
            for (int kh = 0; kh < KH; kh++) {
                const int iy = oy + kh * DH - PAD_T;
                for (int kw = 0; kw < KW; kw++) {
                    const int ix = ox + kw * DW - PAD_L;
                    if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                        acc = fma(LD_w(c * (KH * KW) + kh * KW + kw), LD_x(plane + iy * W + ix),
                                  acc);
                }
            }
            EPILOGUE(acc, nc * (OH * OW) + p);
            ST_Y(nc * (OH * OW) + p, acc);
        }
        return;
    }
    float wt[KH * KW];
#pragma unroll
    for (int t = 0; t < KH * KW; t++)
        wt[t] = LD_w(c * (KH * KW) + t);
#define PLANE_TAP(t, xv) acc = fma((VEC)(wt[t]), (xv), acc);
#define PLANE_TAP_MASKED(t, xv, mask)                                                       \
    acc = fma((VEC)(wt[t]), AS_VEC(AS_INTV(xv) & ((mask) ^ (INTV)(opaque_zero))), acc);
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
#define PLANE_VECTOR(v, p0)                                                                 \
    {                                                                                      \
        VEC acc = (VEC)(0.0f);                                                             \
        TAPS_##v(PLANE_TAP, PLANE_TAP_MASKED)                                              \
        PLANE_STORE(p0)                                                                    \
    }
    PLANE_VECTORS(PLANE_VECTOR)
#undef PLANE_VECTOR
#undef PLANE_STORE
#undef PLANE_TAP_MASKED
#undef PLANE_TAP
}
