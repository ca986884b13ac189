/* libFuzzer target: the TensorProto .pb reader (byocl_pb_read_mem). */
#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    return fuzz_run_one("pb", data, len);
}
