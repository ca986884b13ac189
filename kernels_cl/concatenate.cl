/* concatenate.cl: a concatenation whose inputs are contiguous blocks of its output (every
 * dimension before the axis is 1), up to CLG_CONCAT_ONE_LAUNCH_MAX of its inputs in one
 * launch (a concatenation of more takes a launch per that many). Work-item (i, f) copies
 * element i of input f into its block; input f's work-items all take the same case, so
 * each copy is a plain loop that PoCL vectorizes, as move.cl's. One launch instead of one
 * per input saves the driver's per-launch cost (docs/opencl-runtime.md, "Costs").
 *
 * When all the data are float32 the generator also defines CONCAT_VEC (with VLOAD of
 * that width; the stores are BYOCL_VSTORE_F32), and work-item i copies elements
 * [i*CONCAT_VEC, (i+1)*CONCAT_VEC) of its input by CONCAT_MOVE: one vector where the
 * input has them all, else one by one (its last chunk). A work-item per element had made
 * PoCL run a work-group per few hundred elements, whose dispatch cost more than the copy.
 *
 * Defined by the generator: KNAME, KPARAMS (x0, x1, ... then y, then the int parameters
 * L0, O0, L1, O1, ...: each input's length and where its block starts in y),
 * CONCAT_COPY(i, f) (stores element i of input f, if it has one, or with CONCAT_VEC its
 * chunk i), LD_x0, LD_x1, ..., ST_Y. */
#ifdef CONCAT_VEC
#define CONCAT_MOVE(x, len, at, i)                                                         \
    do {                                                                                   \
        const int first_ = (i) * CONCAT_VEC;                                               \
        if (first_ + CONCAT_VEC <= (len)) {                                                \
            BYOCL_VSTORE_F32(CONCAT_VEC, VLOAD(0, (x) + first_), y + (at) + first_);       \
        } else {                                                                           \
            for (int e_ = first_; e_ < (len); e_++)                                        \
                y[(at) + e_] = (x)[e_];                                                    \
        }                                                                                  \
    } while (0)
#endif

__kernel void KNAME(KPARAMS)
{
    const int i = get_global_id(0), f = get_global_id(1);
    CONCAT_COPY(i, f);
}
#ifdef CONCAT_VEC
#undef CONCAT_MOVE
#endif
