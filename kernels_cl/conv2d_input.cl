/* conv2d_input.cl: lays out the input of a conv2d for kernels_cl/conv2d.cl: zero-padded
 * and split into the stride phases its taps use, one plane of HPH x WPH per channel and
 * phase, then whole planes of zeros up to the last element a work-item of the conv may
 * read. Plane q = (n*C + c) * NPH + slot holds padded input row h*SH + PHASE_Y(slot),
 * column j*SW + PHASE_X(slot) at (h, j).
 *
 * Work-item (h, 0, q) writes row h of plane q in tiles of PT neighbouring elements (rows
 * along dimension 0, which PoCL runs together, as in conv2d_depthwise.cl): tile tj holds
 * input columns c + j*SW from j0 = TILE_J0(tj) on (tj * PT, the last tile ending at the
 * row's end where the row holds one, as in conv2d_depthwise.cl), read as one vector inside
 * the input row (TAP_IN) or lane by lane with 0 outside it (TAP_EDGE), stored as one
 * vector (BYOCL_VSTORE_F32; element by element in a row narrower than PT). With one
 * element per work-item and its index arithmetic, resnet18's 20 layouts took 1.66 ms in
 * all against 1.18 ms; with one tile per work-item they took 3.3 ms against 2.1 with a
 * row (inception_v3's 54: 9.0 against 5.0; 2-core Zen 2, another day).
 *
 * Defined by the generator: KNAME, KPARAMS (x, y, opaque_zero as conv2d_depthwise.cl's),
 * VEC (float##PT), VSTORE (vstore##PT),
 * PT, NT (tiles per row), TILE_J0(t), LOAD (input columns TAP_IN reads), NC (N * C), NPH
 * (phases), H, W, HPH, WPH, SH, SW, PAD_T, PAD_L, PHASE_Y(s), PHASE_X(s), TAP_IN(at),
 * TAP_EDGE(row, col), LD_x; with a conv's prologue (an unpadded 1x1 conv: every element
 * stored is an input value, none padding), PROLOGUE_V(v, plane), applied to the loads. */
__kernel void KNAME(KPARAMS)
{
    const int h = get_global_id(0), q = get_global_id(2);
    const int slot = q % NPH, nc = q / NPH;
    const int iy = h * SH + PHASE_Y(slot) - PAD_T;
    const bool row_in = nc < NC && iy >= 0 && iy < H;
    const int row = (nc * H + iy) * W;
    __global float *out_row = y + (q * HPH + h) * WPH;
    for (int tj = 0; tj < NT; tj++) {
        const int j0 = TILE_J0(tj), c = j0 * SW + PHASE_X(slot) - PAD_L;
        VEC v = (VEC)(0.0f);
        if (row_in) {
            v = c >= 0 && c + LOAD <= W ? TAP_IN(row + c) : TAP_EDGE(row, c);
#ifdef PROLOGUE_V
            PROLOGUE_V(v, nc);
#endif
        }
        __global float *out = out_row + j0;
        if (j0 + PT <= WPH) {
            BYOCL_VSTORE_F32(PT, v, out);
            continue;
        }
        float r[PT];
        VSTORE(v, 0, r);
#pragma unroll
        for (int j = 0; j < PT; j++)
            if (j0 + j < WPH)
                out[j] = r[j];
    }
}
