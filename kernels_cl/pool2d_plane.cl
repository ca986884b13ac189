/* pool2d_plane.cl: nn.max_pool2d and nn.avg_pool2d of stride 1 whose output rows are as
 * long as their input rows (OW == W: a 3x3 window padded by 1, as googlenet's and
 * inception_v3's branch pools), one channel's whole plane per work-item, in vectors of PT
 * consecutive outputs of the flattened plane, as conv2d_depthwise_plane.cl's looped planes:
 * output p = oy * W + ox reads, for tap (kh, kw), input p + (kh * DH - PAD_T) * W + kw * DW
 * - PAD_L, one vector load per tap whatever rows the vector spans. A lane is outside the
 * window where its column leaves the row, or (the column inside) where its flat index
 * leaves the plane; such lanes count as padding (-INFINITY for max, nothing for the sum
 * and, without COUNT_INCLUDE_PAD, for the divisor). A vector whose loads would leave the
 * tensor (the first plane's start, the last one's end) is computed output by output.
 * Max propagates NaN as byocl_max does: the comparison takes the larger value (maxps) and
 * a NaN seen anywhere in the window makes the result NaN. Row tiles (pool2d_rows.cl)
 * filled a 16-wide vector with 7 of a 7x7 map's columns.
 *
 * Defined by the generator: KNAME, KPARAMS (x, y, opaque_zero (0), then epilogue
 * operands), VEC (float##PT), INTV (int##PT), AS_VEC, AS_INTV, TO_VEC (convert_float##PT),
 * VSTORE (vstore##PT), PT, NC (images x channels), H, W, OH, OW, KH, KW, DH, DW, PAD_T,
 * PAD_L, POOL_MAX (0/1), COUNT_INCLUDE_PAD (0/1), LD_x, ST_Y, VLOAD_X(p), NV (vectors of a
 * plane), MIN_OFF and MAX_OFF (the first and the last tap's offsets), LANES (0, 1, ... as
 * an INTV), EPILOGUE(v, fi); where the epilogue has a vector form, EPILOGUE_V(v, fi) and
 * VSTORE_Y(fi, v). */
/* Output p of plane nc, tap by tap, each checked against the input's bounds. */
#define POOL_ONE_OUTPUT(p)                                                                  \
    {                                                                                      \
        const int oy = (p) / OW, ox = (p) % OW;                                            \
        float one = POOL_MAX ? -INFINITY : 0.0f;                                           \
        int count = 0;                                                                     \
        for (int kh = 0; kh < KH; kh++) {                                                  \
            const int iy = oy + kh * DH - PAD_T;                                           \
            for (int kw = 0; kw < KW; kw++) {                                              \
                const int ix = ox + kw * DW - PAD_L;                                       \
                if (iy >= 0 && iy < H && ix >= 0 && ix < W) {                              \
                    const float v = LD_x(plane + iy * W + ix);                             \
                    one = POOL_MAX ? byocl_max(one, v) : one + v;                          \
                    count++;                                                               \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
        if (!POOL_MAX)                                                                     \
            one /= COUNT_INCLUDE_PAD ? (float)(KH * KW) : (float)count;                    \
        EPILOGUE(one, nc * (OH * OW) + (p));                                               \
        ST_Y(nc * (OH * OW) + (p), one);                                                   \
    }
__kernel void KNAME(KPARAMS)
{
    const int nc = get_global_id(0);
    if (nc >= NC) /* the launch is whole work-groups */
        return;
    const int plane = nc * (H * W);
#pragma unroll 1
    for (int v = 0; v < NV; v++) {
        BYOCL_PLANE_VECTOR_BEGIN(v, nc, p0, rows_in, POOL_ONE_OUTPUT)
        /* each lane's column: p0's, then wrapped past the row's end (no vector division) */
        const INTV lane = (INTV)(p0) + LANES;
        INTV col = (INTV)(p0 % W) + LANES;
#pragma unroll
        for (int wrap = 0; wrap < (PT + W - 2) / W; wrap++)
            col = select(col, col - W, col >= W);
        const int at = plane + p0;
        VEC acc = (VEC)(POOL_MAX ? -INFINITY : 0.0f);
        INTV nan = (INTV)(0), count = (INTV)(0);
#pragma unroll
        for (int kh = 0; kh < KH; kh++) {
            const INTV in_row = lane + (kh * DH - PAD_T) * W;
            const INTV row_in = rows_in ? (INTV)(-1) : (in_row >= 0) & (in_row < H * W);
#pragma unroll
            for (int kw = 0; kw < KW; kw++) {
                const INTV in = row_in & (col + (kw * DW - PAD_L) >= 0) &
                                (col + (kw * DW - PAD_L) < W);
                /* XORed with a kernel argument that is 0, so that LLVM, seeing the
                 * lanes the mask keeps, does not split the load into pieces */
                const VEC xv = AS_VEC(AS_INTV(VLOAD_X(x + at + (kh * DH - PAD_T) * W +
                                                      kw * DW - PAD_L)) ^
                                      (INTV)(opaque_zero));
#if POOL_MAX
                const VEC v = select((VEC)(-INFINITY), xv, in);
                acc = select(acc, v, v > acc); /* maxps; fmax would add NaN handling */
                nan |= isnan(v);
#else
                acc += select((VEC)(0.0f), xv, in);
                count -= in; /* in is -1 where true */
#endif
            }
        }
#if POOL_MAX
        acc = select(acc, (VEC)(NAN), nan);
#elif COUNT_INCLUDE_PAD
        acc /= (float)(KH * KW); /* as the output-by-output path and the reference divide */
#else
        acc /= TO_VEC(count);
#endif
#ifdef EPILOGUE_V
        {
            const int fi0 = nc * (OH * OW) + p0;
            EPILOGUE_V(acc, fi0);
            VSTORE_Y(fi0, acc);
        }
#else
        {
            float res[PT];
            VSTORE(acc, 0, res);
            const int fi0 = nc * (OH * OW) + p0;
            for (int j = 0; j < PT; j++) { /* rolled: conv2d.cl says why */
                float r = res[j];
                EPILOGUE(r, fi0 + j);
                ST_Y(fi0 + j, r);
            }
        }
#endif
    }
}
#undef POOL_ONE_OUTPUT
