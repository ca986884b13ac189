/* libFuzzer target: the capture manifest reader (byocl_capture_manifest_parse, JSON). */
#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    return fuzz_run_one("capture", data, len);
}
