/* conv2d_input.cl: lays out the input of a conv2d for kernels_cl/conv2d.cl: zero-padded
 * and split into the stride phases its taps use, one plane of HPH x WPH per channel and
 * phase, then whole planes of zeros up to the last element a work-item of the conv may
 * read. Work-item (j, h, q) writes element (h, j) of plane q = (n*C + c) * NPH + slot,
 * which holds padded input row h*SH + PHASE_Y(slot), column j*SW + PHASE_X(slot).
 *
 * Defined by the generator: KNAME, KPARAMS (x, y), NC (N * C), NPH (phases), H, W, HPH,
 * WPH, SH, SW, PAD_T, PAD_L, PHASE_Y(s), PHASE_X(s), LD_x, ST_Y. */
__kernel void KNAME(KPARAMS)
{
    const int j = get_global_id(0), h = get_global_id(1), q = get_global_id(2);
    const int slot = q % NPH, nc = q / NPH;
    const int iy = h * SH + PHASE_Y(slot) - PAD_T, ix = j * SW + PHASE_X(slot) - PAD_L;
    const bool inside = nc < NC && iy >= 0 && iy < H && ix >= 0 && ix < W;
    ST_Y((q * HPH + h) * WPH + j, inside ? LD_x((nc * H + iy) * W + ix) : 0.0f);
}
