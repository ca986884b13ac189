/* reduce.cl: sum, mean, prod, max, min, all, any and variance over any set of axes, one
 * output element per
 * work-item, as the reference kernel computes them (codegen/ops/transform.c): max and min
 * propagate NaN (byocl_max/byocl_min); sums are compensated (Neumaier), so that a float
 * sum comes close to the reference's double sum however many elements it adds; mean
 * divides the sum by the count. The result is rounded once, when stored (float16).
 *
 * Work-item o computes output element o from the COUNT input elements
 * BASE(o) + AT(r), r in [0, COUNT): BASE(o) is the offset of the first of them (o's digits
 * along the kept axes times their input strides), AT(r) the offset of the r-th (C order)
 * from it (r's digits along the reduced axes times theirs).
 *
 * argmax and argmin (ARG 1) store the int32 position r of the best element instead, as
 * the reference picks it: TAKES(x, b) says whether x replaces the best so far (greater,
 * or smaller; with select_last_index an equal one too; a NaN replaces any number and is
 * then kept, so the first NaN wins).
 *
 * variance (VARIANCE 1) sums the squares (x - m)^2 the same compensated way, m its mean
 * argument's element o (the mean has the output's elements, the reduced axes kept as 1):
 * a two-pass variance, the first pass the mean op, so a large mean costs no digits.
 *
 * Defined by the generator: KNAME, KPARAMS (x, then m for variance, y, then epilogue
 * operands), NOUT, COUNT, BASE(o), AT(r), ARG (0/1), VARIANCE (0/1), SUMS (1: sum, mean
 * or variance, then FINISH(v) is the result of sum v), else INIT and STEP(a, x) (prod: 1
 * and a * x; max: -INFINITY and byocl_max; min: INFINITY and byocl_min; all and any on
 * bools as 0 and 1: 1 and fmin, 0 and fmax; argmax and argmin: -INFINITY or INFINITY and
 * TAKES(x, b)), EPILOGUE(v, fi), LD_x, LD_m, ST_Y. */
__kernel void KNAME(KPARAMS)
{
    const int o = get_global_id(0);
    if (o >= NOUT)
        return;
    const int base = BASE(o);
#if ARG
    float best = INIT;
    int at = 0;
    for (int r = 0; r < COUNT; r++) {
        const float e = LD_x(base + AT(r));
        const bool takes = TAKES(e, best);
        best = takes ? e : best;
        at = takes ? r : at;
    }
    ST_Y(o, at);
#else
#if SUMS
    float s = 0.0f, c = 0.0f;
#if VARIANCE
    const float mo = LD_m(o);
#endif
    for (int r = 0; r < COUNT; r++) {
#if VARIANCE
        const float dx = LD_x(base + AT(r)) - mo;
        const float e = dx * dx;
#else
        const float e = LD_x(base + AT(r)); /* not `x`: the input parameter's name */
#endif
        const float t = s + e;
        c += fabs(s) >= fabs(e) ? (s - t) + e : (e - t) + s;
        s = t;
    }
    /* Once s is infinite or NaN the compensation is NaN, and s is the result. */
    float v = FINISH(isfinite(s) ? s + c : s);
#else
    float v = INIT;
    for (int r = 0; r < COUNT; r++)
        v = STEP(v, LD_x(base + AT(r)));
#endif
    EPILOGUE(v, o);
    ST_Y(o, v);
#endif
}
