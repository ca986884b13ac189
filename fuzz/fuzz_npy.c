/* libFuzzer target: the .npy reader (byocl_npy_read_mem), then encoding the tensor again. */
#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    return fuzz_run_one("npy", data, len);
}
