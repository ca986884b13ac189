/* concatenate.cl: a concatenation whose inputs are contiguous blocks of its output (every
 * dimension before the axis is 1), all its inputs in one launch. Work-item (i, f) copies
 * element i of input f into its block; input f's work-items all take the same case, so
 * each copy is a plain loop that PoCL vectorizes, as move.cl's. One launch instead of one
 * per input saves the driver's per-launch cost (docs/opencl-runtime.md, "Costs"); the
 * generator uses it for 2 to CLG_CONCAT_ONE_LAUNCH_MAX inputs and moves each input with
 * move.cl otherwise.
 *
 * Defined by the generator: KNAME, KPARAMS (x0, x1, ... then y, then the int parameters
 * L0, O0, L1, O1, ...: each input's length and where its block starts in y),
 * CONCAT_COPY(i, f) (stores element i of input f, if it has one), LD_x0, LD_x1, ..., ST_Y. */
__kernel void KNAME(KPARAMS)
{
    const int i = get_global_id(0), f = get_global_id(1);
    CONCAT_COPY(i, f);
}
