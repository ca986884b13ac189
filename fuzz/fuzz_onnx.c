/* libFuzzer target: the ONNX importer (a ModelProto from memory), then type inference, verify and print. */
#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    return fuzz_run_one("onnx", data, len);
}
