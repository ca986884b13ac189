/* conv2d_channels.cl: nn.conv2d over the same laid-out input and packed weights as
 * conv2d.cl, with the output channels along the vector instead of the grid positions:
 * a work-item computes a tile of RT output rows x CT output columns (its positions'
 * offsets in the input are constants) times OCT output channels, one vector. Per input
 * channel and tap: one vector load of the packed weight, RT * CT loads of x broadcast,
 * RT * CT fused multiply-adds. A tile holds output positions only (conv2d.cl's tiles
 * also compute the grid's halo columns: a 7x7 output of a padded 3x3 conv is 64 grid
 * positions for 49 outputs there, 56 here in tiles of 2 x 7).
 *
 * Work-item (t, ob, n*G + g): row tile t / NCT, column tile t % NCT. Positions past the
 * output's rows or columns are computed from whatever the input holds there (the next
 * row, the next plane, the zero planes after the last) and not stored.
 *
 * With IN_PLACE (a tile as wide as the output: NCT is 1) the conv reads its NCHW input
 * as it is, without the laid-out copy: tap (kh, kw) of position (r, j) reads input row
 * (oy0 + r) * SH + kh * DH - PAD_T, column j * SW + kw * DW - PAD_L. A column outside the
 * input is a constant here (every tile starts at column 0), so its multiply-adds are not
 * emitted at all; a row outside it is the same for every input channel, and its
 * multiply-adds are skipped by a test made once per work-item (row_in).
 *
 * Defined by the generator: KNAME, KPARAMS (x, w, y, CIN_G (an int parameter), then
 * epilogue operands), XT, LD_X(ptr) (one element of x as a float), PREFETCH_X(p) (as
 * conv2d.cl's), VEC (float##OCT),
 * VLOAD_W (vload##OCT), OCT, RT, CT, NCT, G, OB, OC_G, OC, OH, OW, WPH, XC_STRIDE,
 * XN_STRIDE, NTAPS, CONV_TAPS(T) (the laid-out input's taps, as conv2d.cl's),
 * EPILOGUE(v, fi), ST_Y, and where the epilogue has that form EPILOGUE_VC(v, fi) and
 * SCATTER_Y(fi, v); with IN_PLACE: H, W, KH, KW, SH, SW, DH, DW, PAD_T, PAD_L instead of
 * CONV_TAPS. */
#define BYOCL_TILE (RT * CT)
__kernel void KNAME(KPARAMS)
{
    const int t = get_global_id(0), ob = get_global_id(1), ng = get_global_id(2);
    const int n = ng / G, g = ng - n * G;
    const int ty = t / NCT, tx = t - ty * NCT;
    const int oy0 = ty * RT, ox0 = tx * CT;
#ifdef IN_PLACE
    const __global XT *xp = x + n * XN_STRIDE + g * CIN_G * XC_STRIDE + oy0 * SH * W;
    bool row_in[RT * KH];
#pragma unroll
    for (int r = 0; r < RT; r++)
#pragma unroll
        for (int kh = 0; kh < KH; kh++) {
            const int iy = (oy0 + r) * SH + kh * DH - PAD_T;
            row_in[r * KH + kh] = iy >= 0 && iy < H;
        }
#else
    const __global XT *xp = x + n * XN_STRIDE + g * CIN_G * XC_STRIDE + oy0 * WPH + ox0;
#endif
    const __global float *wp = w + (g * OB + ob) * (CIN_G * NTAPS * OCT);
    /* Every loop over the accumulators is unrolled, so that they stay in registers. */
    VEC acc[BYOCL_TILE];
#pragma unroll
    for (int p = 0; p < BYOCL_TILE; p++)
        acc[p] = (VEC)(0.0f);
    for (int c = 0; c < CIN_G; c++) {
        PREFETCH_X(xp);
#ifdef IN_PLACE
#pragma unroll
        for (int kh = 0; kh < KH; kh++) {
#pragma unroll
            for (int kw = 0; kw < KW; kw++) {
                const VEC wv = VLOAD_W(0, wp);
#pragma unroll
                for (int r = 0; r < RT; r++) {
                    if (!row_in[r * KH + kh])
                        continue;
#pragma unroll
                    for (int j = 0; j < CT; j++) {
                        const int ix = j * SW + kw * DW - PAD_L;
                        if (j < OW && ix >= 0 && ix < W)
                            acc[r * CT + j] = fma(
                                (VEC)(LD_X(xp + (r * SH + kh * DH - PAD_T) * W + ix)), wv,
                                acc[r * CT + j]);
                    }
                }
                wp += OCT;
            }
        }
#else
#define BYOCL_CONV_TAP(off)                                                   \
        {                                                                     \
            const VEC wv = VLOAD_W(0, wp);                                    \
            _Pragma("unroll")                                                 \
            for (int p = 0; p < BYOCL_TILE; p++)                              \
                acc[p] = fma((VEC)(LD_X(xr + (off) + (p / CT) * WPH + p % CT)), wv, \
                             acc[p]);                                         \
            wp += OCT;                                                        \
        }
        CONV_TAPS(BYOCL_CONV_TAP)
#undef BYOCL_CONV_TAP
#endif
        xp += XC_STRIDE;
    }
    /* The accumulators go to a private array once, so that the epilogue is a rolled loop
     * (see conv2d.cl's edge tiles): unrolled, PoCL took twice as long to build the kernel
     * (googlenet's cold offloaded build 6.6 -> 12.4 s with the vector epilogue). */
    VEC spilled[BYOCL_TILE];
#pragma unroll
    for (int p = 0; p < BYOCL_TILE; p++)
        spilled[p] = acc[p];
#ifdef EPILOGUE_VC
    /* A whole block of channels: each position's vector through the epilogue at once. */
    if ((ob + 1) * OCT <= OC_G) {
        const int plane = (n * OC + g * OC_G + ob * OCT) * (OH * OW);
#pragma unroll 1
        for (int p = 0; p < BYOCL_TILE; p++) {
            const int oy = oy0 + p / CT, ox = ox0 + p % CT;
            if (oy < OH && ox < OW) {
                const int fi = plane + oy * OW + ox;
                VEC v = spilled[p];
                EPILOGUE_VC(v, fi);
                SCATTER_Y(fi, v);
            }
        }
        return;
    }
#endif
    const float *r = (const float *)spilled;
    for (int o = 0; o < OCT; o++) {
        const int ocg = ob * OCT + o;
        if (ocg >= OC_G)
            break;
        const int plane = (n * OC + g * OC_G + ocg) * (OH * OW);
        for (int p = 0; p < BYOCL_TILE; p++) {
            const int oy = oy0 + p / CT, ox = ox0 + p % CT;
            if (oy < OH && ox < OW) {
                const int fi = plane + oy * OW + ox;
                float v = r[p * OCT + o];
                EPILOGUE(v, fi);
                ST_Y(fi, v);
            }
        }
    }
}
#undef BYOCL_TILE
