/* move.cl: element moves, one element per work-item: y[DST] = x[SRC], or 0 where the
 * source is outside x. The generator writes MOVE_INDEX for each use:
 *   transpose           DST = i, SRC = the permuted index (depth_to_space and
 *                       space_to_depth too: a permuted rank-6 view); where the last
 *                       axes stay in place and the data are float32, the generator also
 *                       defines MOVE_VEC (with VLOAD of that width) and work-item i moves
 *                       the MOVE_VEC elements from SRC to DST = i * MOVE_VEC (ok unused)
 *   concatenate         one launch per input: SRC = i, DST = i shifted into its slice
 *                       (where the inputs are not contiguous blocks of the output, which
 *                       concatenate.cl copies several at a time)
 *   copy                DST = SRC = i (a region output that another value already holds)
 *   weight packing      DST = i over the packed layout, SRC = the weight, absent past the
 *                       last output channel (when the weight is a region input)
 * Values pass through float, which is exact for float32 and float16; integers (argmax's
 * positions) pass as they are.
 *
 * Defined by the generator: KNAME, KPARAMS (x, y, then the int parameters N, the
 * work-items that do something, and for a concatenation's block OFFSET, where it goes),
 * MOVE_INDEX(i, src, dst, ok) (sets int src, dst and bool ok), LD_x, ST_Y. */
__kernel void KNAME(KPARAMS)
{
    const int i = get_global_id(0);
    if (i >= N)
        return;
    int src = 0, dst = 0;
    bool ok = true;
    MOVE_INDEX(i, src, dst, ok);
#ifdef MOVE_VEC
    BYOCL_VSTORE_F32(MOVE_VEC, VLOAD(0, x + src), y + dst);
#else
    ST_Y(dst, ok ? LD_x(src) : 0); /* 0, not 0.0f: an int stays an int */
#endif
}
