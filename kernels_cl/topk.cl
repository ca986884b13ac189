/* topk.cl: the K first elements of each line along the axis, in the reference's order
 * (codegen/ops/index.c, topk_before): the largest first (the smallest with is_ascend),
 * NaN above every number, equal keys by position. One work-item per line keeps them
 * sorted in the outputs by insertion as it reads the line once: LEN * K steps at most,
 * no barriers and no scratch memory, and, since an element only passes those strictly
 * after it in that order, equal keys keep their positions' order.
 *
 * Line l = (o, j) (o over the axes before the axis, j over those after it) reads x at
 * o * LEN * INNER + t * INNER + j and writes slot r at o * K * INNER + r * INNER + j.
 *
 * Defined by the generator: KNAME, KPARAMS (x, then vals and/or idx), LINES, LEN, INNER,
 * K, BEFORE(a, b) (a comes before b), KEY(at) (the value of the slot at offset at: read
 * back from vals, or from x through idx), SET(at, v, t) (stores value v of position t),
 * MOVE(to, from) (moves a slot), LD_x. */
__kernel void KNAME(KPARAMS)
{
    const int line = get_global_id(0);
    if (line >= LINES)
        return;
    const int o = line / INNER, j = line % INNER;
    const int src = o * LEN * INNER + j, dst = o * K * INNER + j;
    int kept = 0;
    for (int t = 0; t < LEN; t++) {
        const float v = LD_x(src + t * INNER);
        if (kept == K && !BEFORE(v, KEY(dst + (K - 1) * INNER)))
            continue;
        /* The free slot: the next one, or the last one, whose element drops out. */
        int r = kept < K ? kept++ : K - 1;
        for (; r > 0 && BEFORE(v, KEY(dst + (r - 1) * INNER)); r--)
            MOVE(dst + r * INNER, dst + (r - 1) * INNER);
        SET(dst + r * INNER, v, t);
    }
}
