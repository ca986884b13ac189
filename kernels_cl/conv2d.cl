/* conv2d.cl: nn.conv2d (any groups, strides, dilation, padding; depthwise convs have
 * conv2d_depthwise.cl) as a register-tiled direct convolution over a "flat" input, with a
 * fused elementwise epilogue.
 *
 * The input x is laid out so that every tap of the kernel is a constant offset: for a
 * strided or padded conv, a `move` kernel first writes the zero-padded input split into
 * stride phases (conv input row oy*stride + kh*dilation is row oy + dy of phase
 * (kh*dilation) % stride), each channel a set of planes WPH wide; an unpadded 1x1 conv
 * with stride 1 reads its input directly (the last tile may read past it, into the next
 * plane or the buffer's slack: clg_conv_schedule). Output pixel (oy, ox) is then grid position
 * p = oy*WPH + ox, and tap t adds x[c][p + TAP_t] * w[oc][c][t]. Positions with
 * ox >= OW are computed and dropped, which keeps every load a plain vector load.
 *
 * Work-item (pt, ob, n*G + g) computes OCT output channels (block ob of group g) times
 * PT consecutive grid positions: OCT accumulators of PT floats, each tap one vector load
 * of x and OCT fused multiply-adds. Weights are packed as [G][OB][CIN_G][NTAPS][OCT]
 * (zeros past OC_G), so a work-item reads them in order.
 *
 * Defined by the generator: KNAME, KPARAMS (x, w, y, CIN_G (an int parameter), then
 * epilogue operands), XT (x's element type), VEC (float##PT), VLOAD_X(ptr), PREFETCH_X(p)
 * (prefetches of the input lines read some channels after p's, on a CPU device; else
 * nothing), PT, OCT, G,
 * OB, OC_G, OC, OH, OW,
 * WPH, XC_STRIDE (floats between channel planes of x), XN_STRIDE (between images),
 * NTAPS, CONV_TAPS(T) (T(offset) once per tap, in weight order, offsets from `xr`, which
 * it sets from xp: for kernels of many taps a loop over the kernel's rows, xr at each
 * row and T once per tap of a row), EPILOGUE(v, fi), ST_Y;
 * where the epilogue has a vector form, EPILOGUE_V(v, fi) and VSTORE_Y(fi, v), and
 * EPILOGUE_V_PLANE where that form is the same at every fi of a plane; with a prologue
 * (an unpadded 1x1 conv reading its input as it is), PROLOGUE_V(v, plane), applied to
 * each vector of x as it is loaded. */
__kernel void KNAME(KPARAMS)
{
    const int pt = get_global_id(0), ob = get_global_id(1), ng = get_global_id(2);
    const int n = ng / G, g = ng - n * G;
    const int p0 = pt * PT;
    const __global XT *xp = x + n * XN_STRIDE + g * CIN_G * XC_STRIDE + p0;
    const __global float *wp = w + (g * OB + ob) * (CIN_G * NTAPS * OCT);
    /* The accumulators must stay in registers: every loop over them is unrolled (PoCL's
     * compiler keeps a rolled one in memory, at a fifth of the speed). */
    VEC acc[OCT];
#pragma unroll
    for (int o = 0; o < OCT; o++)
        acc[o] = (VEC)(0.0f);
    for (int c = 0; c < CIN_G; c++) {
        PREFETCH_X(xp);
#ifdef PROLOGUE_V
        const int x_plane = (n * G + g) * CIN_G + c; /* n * C + the input channel */
#define BYOCL_X_PROLOGUE(v) PROLOGUE_V(v, x_plane)
#else
#define BYOCL_X_PROLOGUE(v)
#endif
#define BYOCL_CONV_TAP(off)                                 \
        {                                                   \
            VEC xv = VLOAD_X(xr + (off));                   \
            BYOCL_X_PROLOGUE(xv);                           \
            _Pragma("unroll")                               \
            for (int o = 0; o < OCT; o++)                   \
                acc[o] = fma((VEC)(wp[o]), xv, acc[o]);     \
            wp += OCT;                                      \
        }
        CONV_TAPS(BYOCL_CONV_TAP)
#undef BYOCL_CONV_TAP
#undef BYOCL_X_PROLOGUE
        xp += XC_STRIDE;
    }
#ifdef EPILOGUE_V
    {
        /* A tile inside one output row (with WPH == OW, inside the plane: the grid is the
         * output) takes the vector epilogue and one vector store per channel. */
        const int oy = p0 / WPH, ox0 = p0 - oy * WPH;
        if (WPH == OW ? p0 + PT <= OH * OW : ox0 + PT <= OW && oy < OH) {
#pragma unroll
            for (int o = 0; o < OCT; o++) {
                const int ocg = ob * OCT + o;
                if (ocg < OC_G) {
                    const int fi0 = ((n * OC + g * OC_G + ocg) * OH + oy) * OW + ox0;
                    VEC v = acc[o];
                    EPILOGUE_V(v, fi0);
                    VSTORE_Y(fi0, v);
                }
            }
            return;
        }
    }
#endif
    /* Edge tiles: the accumulators go to a private array once, so that the epilogue below
     * is one rolled loop (unrolled, its OCT x PT copies made a conv kernel several times
     * larger and slower for PoCL to compile) and acc itself is only ever indexed by
     * constants, which keeps it in registers. */
    VEC spilled[OCT];
#pragma unroll
    for (int o = 0; o < OCT; o++)
        spilled[o] = acc[o];
    const float *r = (const float *)spilled;
    /* The lanes walk the grid row by row from p0's (oy0, ox0); those inside the output are
     * stored one by one. Where the epilogue is the same along the plane (operands per
     * channel, literals: EPILOGUE_V_PLANE) it runs once per channel on the vector; else
     * per element. With the scalar epilogue on every element, the tiles that cross a row
     * took a 16 -> 64 channel 3x3 conv on 54x54 a third longer. */
    const int oy0 = p0 / WPH, ox0 = p0 - oy0 * WPH;
    for (int o = 0; o < OCT; o++) {
        const int ocg = ob * OCT + o;
        if (ocg < OC_G) {
            const int plane = (n * OC + g * OC_G + ocg) * (OH * OW);
#ifdef EPILOGUE_V_PLANE
            VEC vec = spilled[o];
            EPILOGUE_V(vec, plane);
            spilled[o] = vec;
#endif
            int oy = oy0, ox = ox0;
            for (int j = 0; j < PT; j++) {
                if (ox < OW && oy < OH) {
                    const int fi = plane + oy * OW + ox;
                    float v = r[o * PT + j];
#ifndef EPILOGUE_V_PLANE
                    EPILOGUE(v, fi);
#endif
                    ST_Y(fi, v);
                }
                if (++ox == WPH) {
                    ox = 0;
                    oy++;
                }
            }
        }
    }
}
