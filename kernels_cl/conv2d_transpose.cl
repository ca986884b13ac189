/* conv2d_transpose.cl: nn.conv2d_transpose (NCHW data, IOHW weight; groups, strides,
 * dilation, padding, output_padding) as a gather, one output element per work-item, with
 * a fused elementwise epilogue. The reference (codegen/ops/conv.c) scatters input cell
 * (iy, ix) to output (iy*SH + kh*DH - PAD_T, ix*SW + kw*DW - PAD_L); so output (oy, ox)
 * sums, over the taps (kh, kw) for which oy + PAD_T - kh*DH is a multiple of SH within
 * [0, H*SH) (and likewise across), x[n][ic][iy][ix] * w[ic][oc % OC_G][kh][kw] for the
 * CIN_G input channels ic of oc's group. The weight is read as it is (a constant or a
 * region input).
 *
 * Defined by the generator: KNAME, KPARAMS (x, w, y, then epilogue operands), NOUT, C, H,
 * W, OC, OH, OW, KH, KW, SH, SW, DH, DW, PAD_T, PAD_L, CIN_G, OC_G, EPILOGUE(v, fi),
 * LD_x, LD_w, ST_Y. */
__kernel void KNAME(KPARAMS)
{
    const int o = get_global_id(0);
    if (o >= NOUT)
        return;
    const int ox = o % OW, oy = o / OW % OH, noc = o / (OW * OH);
    const int oc = noc % OC, n = noc / OC;
    const int g = oc / OC_G, ocg = oc - g * OC_G;
    const int xbase = (n * C + g * CIN_G) * (H * W);
    const int wbase = (g * CIN_G * OC_G + ocg) * (KH * KW);
    float v = 0.0f;
    for (int kh = 0; kh < KH; kh++) {
        const int ty = oy + PAD_T - kh * DH, iy = ty / SH;
        if (ty < 0 || iy * SH != ty || iy >= H)
            continue;
        for (int kw = 0; kw < KW; kw++) {
            const int tx = ox + PAD_L - kw * DW, ix = tx / SW;
            if (tx < 0 || ix * SW != tx || ix >= W)
                continue;
            const int xo = xbase + iy * W + ix, wo = wbase + kh * KW + kw;
            for (int c = 0; c < CIN_G; c++)
                v = fma(LD_x(xo + c * (H * W)), LD_w(wo + c * (OC_G * KH * KW)), v);
        }
    }
    EPILOGUE(v, o);
    ST_Y(o, v);
}
