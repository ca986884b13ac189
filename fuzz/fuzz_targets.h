/* The parsers byocl fuzzes, one entry point each, shared by the libFuzzer programs
 * (fuzz/fuzz_<name>.c, built with -DBYOCL_FUZZ=ON) and by tests/test_fuzz_regressions.c,
 * which feeds them the inputs that once crashed, in the normal build. docs/reliability.md
 * says how to run them. */
#ifndef BYOCL_FUZZ_TARGETS_H
#define BYOCL_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

#include "byocl/error.h"

/* Parses `data` as the target's format and runs what byocl runs next on what parses;
 * everything it allocates is freed before it returns. The status is the first failure
 * (BYOCL_OK when the input went through), with the message in *err. */
typedef byocl_status (*fuzz_entry_fn)(const uint8_t *data, size_t len, byocl_error *err);

typedef struct fuzz_target {
    const char *name; /* fuzz_<name>, tests/fuzz_regressions/<name>/, fuzz/corpus/<name>/ */
    fuzz_entry_fn run;
} fuzz_target;

extern const fuzz_target fuzz_targets[];
extern const int fuzz_targets_count;

/* The target called `name`, or NULL. */
const fuzz_target *fuzz_target_find(const char *name);

/* Caps tensor memory (byocl_limits_set) well under libFuzzer's -rss_limit_mb (2 GiB in
 * fuzz/run.sh): an input that asks for a huge tensor must then get byocl's clean error,
 * and one that slips past the cap shows up as the fuzzer's out-of-memory report. */
#define FUZZ_MAX_TENSOR_BYTES (UINT64_C(256) << 20)
#define FUZZ_MAX_TOTAL_BYTES (UINT64_C(512) << 20)
void fuzz_set_limits(void);

/* LLVMFuzzerTestOneInput of fuzz_<name>: runs the target on one input; always 0 (the
 * outcome of a bad input is an error, which is fine; a crash or leak is what is sought). */
int fuzz_run_one(const char *name, const uint8_t *data, size_t len);

#endif
