/* The fuzzed entry points (fuzz_targets.h). Each mirrors what byocl does with such a file
 * after reading it, so that the fuzzer also reaches the passes that trust a parser. */
#include "fuzz_targets.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/capture.h"
#include "byocl/limits.h"
#include "byocl/passes.h"
#include "byocl/tensor_io.h"
#include "byocl/text.h"
#include "frontend/onnx/onnx_frontend.h"

/* The name inputs get in messages, as a file name would. */
#define FUZZ_INPUT "fuzz-input"

/* Types and verifies a module that parsed, then prints it (with types when they are known),
 * as byocl_load_model and `byocl print` do. Text is printed with its tensor constants in a
 * #[metadata] section (`--metadata inline`), so that the section's writer is fuzzed with
 * its reader; ONNX is not: a 1 KB model may make a constant of hundreds of megabytes (within
 * the limits), whose base64 takes longer than the fuzzer's timeout. */
static byocl_status check_and_print(byocl_module *m, byocl_metadata_mode metadata,
                                    byocl_error *err)
{
    byocl_status st = byocl_infer_types(m, err);
    if (st == BYOCL_OK)
        st = byocl_verify(m, true, err);
    if (st != BYOCL_OK)
        byocl_error_prefix(err, "%s: ", FUZZ_INPUT); /* as byocl_load_model does */
    byocl_print_options opt = {.show_types = st == BYOCL_OK, .metadata = metadata};
    byocl_error print_err;
    char *text = byocl_text_print(m, &opt, NULL, &print_err);
    if (!text && st == BYOCL_OK) {
        *err = print_err;
        st = print_err.status;
    }
    free(text);
    return st;
}

static byocl_status run_text(const uint8_t *data, size_t len, byocl_error *err)
{
    byocl_module *m = NULL;
    byocl_status st = byocl_text_parse((const char *)data, len, FUZZ_INPUT, NULL, &m, err);
    if (st == BYOCL_OK)
        st = check_and_print(m, BYOCL_METADATA_INLINE, err);
    byocl_module_free(m);
    return st;
}

static byocl_status run_onnx(const uint8_t *data, size_t len, byocl_error *err)
{
    byocl_module *m = NULL;
    byocl_status st = onnx_import_mem(data, len, FUZZ_INPUT, NULL, &m, err);
    if (st == BYOCL_OK)
        st = check_and_print(m, BYOCL_METADATA_NPZ, err);
    byocl_module_free(m);
    return st;
}

/* A tensor that was read is encoded again, as `byocl run --save-outputs` would. */
static byocl_status encode_tensor(byocl_tensor *t, byocl_error *err)
{
    void *bytes = NULL;
    size_t n = 0;
    byocl_status st = byocl_npy_encode(t, &bytes, &n, err);
    free(bytes);
    return st;
}

static byocl_status run_npy(const uint8_t *data, size_t len, byocl_error *err)
{
    byocl_tensor *t = NULL;
    byocl_status st = byocl_npy_read_mem(data, len, FUZZ_INPUT, &t, err);
    if (st == BYOCL_OK)
        st = encode_tensor(t, err);
    byocl_tensor_unref(t);
    return st;
}

static byocl_status run_npz(const uint8_t *data, size_t len, byocl_error *err)
{
    byocl_params *p = NULL;
    byocl_status st = byocl_npz_read_mem(data, len, FUZZ_INPUT, &p, err);
    for (int i = 0; st == BYOCL_OK && i < byocl_params_count(p); i++)
        st = encode_tensor(byocl_params_tensor(p, i), err);
    byocl_params_free(p);
    return st;
}

static byocl_status run_pb(const uint8_t *data, size_t len, byocl_error *err)
{
    byocl_tensor *t = NULL;
    char *name = NULL;
    byocl_status st = byocl_pb_read_mem(data, len, FUZZ_INPUT, &t, &name, err);
    if (st == BYOCL_OK)
        st = encode_tensor(t, err);
    byocl_tensor_unref(t);
    free(name);
    return st;
}

static byocl_status run_capture(const uint8_t *data, size_t len, byocl_error *err)
{
    byocl_capture_manifest *m = NULL;
    byocl_status st =
        byocl_capture_manifest_parse((const char *)data, len, FUZZ_INPUT, &m, err);
    byocl_capture_manifest_free(m);
    return st;
}

const fuzz_target fuzz_targets[] = {
    {"text", run_text}, {"onnx", run_onnx}, {"npy", run_npy},
    {"npz", run_npz},   {"pb", run_pb},     {"capture", run_capture},
};
const int fuzz_targets_count = (int)(sizeof fuzz_targets / sizeof fuzz_targets[0]);

const fuzz_target *fuzz_target_find(const char *name)
{
    for (int i = 0; i < fuzz_targets_count; i++)
        if (strcmp(fuzz_targets[i].name, name) == 0)
            return &fuzz_targets[i];
    return NULL;
}

void fuzz_set_limits(void)
{
    const byocl_limits limits = {.max_tensor_bytes = FUZZ_MAX_TENSOR_BYTES,
                                 .max_total_bytes = FUZZ_MAX_TOTAL_BYTES};
    byocl_limits_set(&limits);
}

int fuzz_run_one(const char *name, const uint8_t *data, size_t len)
{
    const fuzz_target *target = fuzz_target_find(name);
    byocl_error err;
    if (!target)
        abort(); /* a fuzz_<name>.c naming a target this table lacks */
    static bool limited;
    if (!limited) {
        fuzz_set_limits();
        limited = true;
    }
    target->run(data, len, &err);
    return 0;
}
