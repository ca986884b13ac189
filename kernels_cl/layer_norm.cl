/* layer_norm.cl: nn.layer_norm along one axis, one slice per work-item, as the reference
 * kernel computes it: the mean, then the variance as the mean of (x - mean)^2 (two
 * passes: no cancellation for large means), then (x - mean) / sqrt(var + EPSILON),
 * times gamma (SCALE) plus beta (CENTER). Sums are in float, of the slice shifted by its
 * first element: x - x0 is exact for values of one magnitude, so a large common offset
 * (1e4 + small deviations) costs no digits of the deviations.
 *
 * The data is OUTER blocks of LEN slices of INNER elements; work-item id = o * INNER + k
 * handles elements (o * LEN + c) * INNER + k for c in [0, LEN); gamma and beta are
 * indexed by c.
 *
 * Defined by the generator: KNAME, KPARAMS (x, gamma, beta, y, then epilogue operands),
 * OUTER, LEN, INNER, EPSILON, SCALE and CENTER (0 or 1), EPILOGUE(v, fi), LD_x, LD_gamma,
 * LD_beta, ST_Y. */
__kernel void KNAME(KPARAMS)
{
    const int id = get_global_id(0);
    if (id >= OUTER * INNER)
        return;
    const int o = id / INNER, k = id - o * INNER;
    const int base = o * LEN * INNER + k;
    const float x0 = LD_x(base);
    float sum = 0.0f;
    for (int c = 0; c < LEN; c++)
        sum += LD_x(base + c * INNER) - x0;
    const float mean = sum / LEN; /* of the shifted slice */
    float sq = 0.0f;
    for (int c = 0; c < LEN; c++) {
        const float d = (LD_x(base + c * INNER) - x0) - mean;
        sq += d * d;
    }
    const float inv = 1.0f / sqrt(sq / LEN + EPSILON);
    for (int c = 0; c < LEN; c++) {
        const int fi = base + c * INNER;
        float v = ((LD_x(fi) - x0) - mean) * inv;
#if SCALE
        v *= LD_gamma(c);
#endif
#if CENTER
        v += LD_beta(c);
#endif
        EPILOGUE(v, fi);
        ST_Y(fi, v);
    }
}
