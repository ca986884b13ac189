/* softmax.cl: nn.softmax and nn.log_softmax along one axis, one slice per work-item, as
 * the reference kernel computes them: exp(x - max) / sum(exp(x - max)), or with
 * LOG_SOFTMAX (x - max) - log(sum(exp(x - max))), where max ignores NaN (fmax). The
 * exponentials are computed again for the result rather than read back, so a float16
 * result is rounded once.
 *
 * The data is OUTER blocks of LEN slices of INNER elements; work-item id = o * INNER + k
 * handles elements (o * LEN + c) * INNER + k for c in [0, LEN).
 *
 * Defined by the generator: KNAME, KPARAMS (x, y, then epilogue operands), OUTER, LEN,
 * INNER, LOG_SOFTMAX (0 or 1), EPILOGUE(v, fi), LD_x, ST_Y. */
__kernel void KNAME(KPARAMS)
{
    const int id = get_global_id(0);
    if (id >= OUTER * INNER)
        return;
    const int o = id / INNER, k = id - o * INNER;
    const int base = o * LEN * INNER + k;
    float top = -INFINITY;
    for (int c = 0; c < LEN; c++)
        top = fmax(top, LD_x(base + c * INNER));
    float sum = 0.0f;
    for (int c = 0; c < LEN; c++)
        sum += exp(LD_x(base + c * INNER) - top);
#if LOG_SOFTMAX
    const float log_sum = log(sum);
#endif
    for (int c = 0; c < LEN; c++) {
        const int fi = base + c * INNER;
#if LOG_SOFTMAX
        float v = (LD_x(fi) - top) - log_sum;
#else
        float v = exp(LD_x(fi) - top) / sum;
#endif
        EPILOGUE(v, fi);
        ST_Y(fi, v);
    }
}
