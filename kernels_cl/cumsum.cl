/* cumsum.cl: running sums along an axis, one work-item per line, as the reference kernel
 * computes them (codegen/ops/index.c) but in float: the sum is compensated (Neumaier, as
 * reduce.cl's), so that every prefix stays close to the reference's double sum however
 * long the line; each stored element is rounded once (float16). REVERSE runs the line
 * from its end; EXCLUSIVE stores the sum before the element instead of after it.
 *
 * Line l (of LINES = outer x inner) is elements (l / INNER) * LEN * INNER + l % INNER +
 * t * INNER, t in [0, LEN): neighbouring work-items read neighbouring elements when
 * INNER > 1, and walk contiguous lines when the axis is the last.
 *
 * Defined by the generator: KNAME, KPARAMS (x, y, then epilogue operands), LINES, LEN,
 * INNER, REVERSE and EXCLUSIVE (0/1), EPILOGUE(v, fi), LD_x, ST_Y. */
__kernel void KNAME(KPARAMS)
{
    const int line = get_global_id(0);
    if (line >= LINES)
        return;
    const int base = line / INNER * (LEN * INNER) + line % INNER;
    float s = 0.0f, c = 0.0f;
    for (int t = 0; t < LEN; t++) {
        const int fi = base + (REVERSE ? LEN - 1 - t : t) * INNER;
        const float e = LD_x(fi);
        float t_sum = s + e;
        float t_err = fabs(s) >= fabs(e) ? (s - t_sum) + e : (e - t_sum) + s;
#if !EXCLUSIVE
        c += t_err;
        s = t_sum;
#endif
        /* Once s is infinite or NaN the compensation is NaN, and s is the result. */
        float v = isfinite(s) ? s + c : s;
        EPILOGUE(v, fi);
        ST_Y(fi, v);
#if EXCLUSIVE
        c += t_err;
        s = t_sum;
#endif
    }
}
