/* conv2d_input.cl: lays out the input of a conv2d for kernels_cl/conv2d.cl: zero-padded
 * and split into the stride phases its taps use, one plane of HPH x WPH per channel and
 * phase, then whole planes of zeros up to the last element a work-item of the conv may
 * read. Plane q = (n*C + c) * NPH + slot holds padded input row h*SH + PHASE_Y(slot),
 * column j*SW + PHASE_X(slot) at (h, j).
 *
 * Work-item (h, tj, q) writes PT neighbouring elements of row h of plane q, j0 = tj * PT
 * onwards (rows along dimension 0, which PoCL runs together, as in conv2d_depthwise.cl):
 * input columns c + j*SW, read as one vector inside the input row (TAP_IN) or lane by
 * lane with 0 outside it (TAP_EDGE), stored as one vector, element by element at the
 * end of a row. With one element per work-item and its index arithmetic, resnet18's 20
 * layouts took 1.66 ms in all against 1.18 ms.
 *
 * Defined by the generator: KNAME, KPARAMS (x, y), VEC (float##PT), VSTORE (vstore##PT),
 * PT, LOAD (input columns TAP_IN reads), NC (N * C), NPH (phases), H, W, HPH, WPH, SH,
 * SW, PAD_T, PAD_L, PHASE_Y(s), PHASE_X(s), TAP_IN(at), TAP_EDGE(row, col), LD_x. */
__kernel void KNAME(KPARAMS)
{
    const int h = get_global_id(0), tj = get_global_id(1), q = get_global_id(2);
    const int slot = q % NPH, nc = q / NPH;
    const int iy = h * SH + PHASE_Y(slot) - PAD_T;
    const int j0 = tj * PT, c = j0 * SW + PHASE_X(slot) - PAD_L;
    VEC v = (VEC)(0.0f);
    if (nc < NC && iy >= 0 && iy < H) {
        const int row = (nc * H + iy) * W;
        v = c >= 0 && c + LOAD <= W ? TAP_IN(row + c) : TAP_EDGE(row, c);
    }
    __global float *out = y + (q * HPH + h) * WPH + j0;
    if (j0 + PT <= WPH) {
        VSTORE(v, 0, out);
        return;
    }
    float r[PT];
    VSTORE(v, 0, r);
#pragma unroll
    for (int j = 0; j < PT; j++)
        if (j0 + j < WPH)
            out[j] = r[j];
}
