/* libFuzzer target: the .npz reader (byocl_npz_read_mem: libzip, then each .npy member). */
#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    return fuzz_run_one("npz", data, len);
}
