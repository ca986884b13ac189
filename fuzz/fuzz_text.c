/* libFuzzer target: the Relay text parser (byocl_text_parse), then type inference, verify and print. */
#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    return fuzz_run_one("text", data, len);
}
