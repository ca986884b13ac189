/* byocl regions called by Apache TVM through tvm-ffi's C ABI (include/byocl/tvm.h): the
 * region compiled on its first call and kept in its slot, then each call's arguments
 * checked, copied in, run, and the outputs copied out. Only byocl's public API is used
 * here; libbyocl_tvm.so links libbyocl.so and libtvm_ffi.so (cmake/tvm.cmake). */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <tvm/ffi/c_api.h>

#include "byocl/capture.h"
#include "byocl/passes.h"
#include "byocl/pipeline.h"
#include "byocl/runtime.h"
#include "byocl/tensor_io.h"
#include "byocl/text.h"
#include "byocl/tvm.h"
#include "clock.h"
#include "tvm_args.h"
#include "tvm_registry.h"

#define RUNTIME_ERROR "RuntimeError"

struct byocl_tvm_region {
    char *symbol;
    /* A failed compile: status and message, raised again by every call. */
    byocl_status failed;
    char *failure;
    byocl_compiled *compiled;
    byocl_executor *ex;
    int n_inputs, n_outputs;
    pthread_mutex_t run_lock; /* one call at a time: the executor has one set of buffers */
    /* Capturing (BYOCL_CAPTURE_DIR): the region's module, loaded again from the spec by
     * the first capturing call and kept (read atomically: tvm_region_wants_weights), and
     * the run time of each capturing call, under run_lock. */
    byocl_module *module;
    char *target;
    double *times;
    int calls, cap_times;
};

/* Guards every slot's creation, and compiling: byocl's target registry, which
 * byocl_compile registers the built-in targets into, is not thread-safe. */
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;

void tvm_registry_lock(void)
{
    pthread_mutex_lock(&slots_lock);
}

void tvm_registry_unlock(void)
{
    pthread_mutex_unlock(&slots_lock);
}

/* Set by an atexit handler (registered with the first region), which exit() runs before
 * the libraries' destructors: byocl_tvm_region_unload then leaves the regions alone. */
static bool exiting;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

static void mark_exiting(void)
{
    __atomic_store_n(&exiting, true, __ATOMIC_RELEASE);
}

static void watch_exit(void)
{
    atexit(mark_exiting);
}

const char *byocl_tvm_ffi_version(void)
{
#define BYOCL_TVM_STR2(x) #x
#define BYOCL_TVM_STR(x) BYOCL_TVM_STR2(x)
    return BYOCL_TVM_STR(TVM_FFI_VERSION_MAJOR) "." BYOCL_TVM_STR(
        TVM_FFI_VERSION_MINOR) "." BYOCL_TVM_STR(TVM_FFI_VERSION_PATCH);
}

/* Parses "T.K=V, T.K=V" into `opts`. */
static byocl_status parse_target_options(const char *text, byocl_target_options *opts,
                                         byocl_error *err)
{
    char *copy = strdup(text);
    if (!copy)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    byocl_status st = BYOCL_OK;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item && st == BYOCL_OK;
         item = strtok_r(NULL, ",", &save)) {
        while (*item == ' ' || *item == '\t' || *item == '\n')
            item++;
        char *end = item + strlen(item);
        while (end > item && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n'))
            *--end = '\0';
        if (*item)
            st = byocl_target_options_parse(opts, item, err);
    }
    free(copy);
    return st;
}

/* The region's module: the text parsed with the .npz's meta constants, its other members
 * bound to @main's parameters by name (as byocl_load_model does with a parameter file),
 * typed and verified. */
static byocl_status load_module(const byocl_tvm_region_spec *spec, byocl_module **out,
                                byocl_error *err)
{
    byocl_params *params = NULL;
    byocl_status st = BYOCL_OK;
    if (spec->weights_npz && spec->weights_npz_len > 0)
        st = byocl_npz_read_mem(spec->weights_npz, spec->weights_npz_len, "the weights (.npz)",
                                &params, err);
    byocl_module *m = NULL;
    if (st == BYOCL_OK)
        st = byocl_text_parse(spec->relay_text, strlen(spec->relay_text), spec->symbol, params,
                              &m, err);
    int n = params ? byocl_params_count(params) : 0;
    const char **names = calloc((size_t)n + 1, sizeof *names);
    byocl_tensor **values = calloc((size_t)n + 1, sizeof *values);
    if (st == BYOCL_OK && (!names || !values))
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    int n_bind = 0;
    for (int i = 0; st == BYOCL_OK && i < n; i++) {
        const char *name = byocl_params_name(params, i);
        if (strncmp(name, "relay.Constant.", 15) == 0)
            continue; /* a meta constant: the parser took it */
        names[n_bind] = name;
        values[n_bind++] = byocl_params_tensor(params, i);
    }
    if (st == BYOCL_OK && n_bind > 0 &&
        (st = byocl_bind_params(m, names, values, n_bind, err)) != BYOCL_OK)
        byocl_error_prefix(err, "binding the weights: ");
    free(names);
    free(values);
    if (st == BYOCL_OK)
        st = byocl_infer_types(m, err);
    if (st == BYOCL_OK)
        st = byocl_verify(m, true, err);
    byocl_params_free(params);
    if (st != BYOCL_OK) {
        byocl_module_free(m);
        return st;
    }
    *out = m;
    return BYOCL_OK;
}

/* Compiles the region for its target and makes its executor. */
static byocl_status compile_region(byocl_tvm_region *r, const byocl_tvm_region_spec *spec,
                                   byocl_error *err)
{
    const char *target = spec->target ? spec->target : "host";
    if (!spec->relay_text)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "the spec has no Relay text");
    byocl_module *m = NULL;
    byocl_status st = load_module(spec, &m, err);
    if (st != BYOCL_OK)
        return st;
    byocl_target_options *opts = NULL;
    st = byocl_target_options_new(&opts, err);
    if (st == BYOCL_OK && spec->target_options)
        st = parse_target_options(spec->target_options, opts, err);
    if (st == BYOCL_OK) {
        byocl_compile_options co = byocl_compile_options_default();
        const char *targets[1] = {target};
        if (strcmp(target, "host") == 0 || strcmp(target, "ref") == 0) {
            co.build.target = target; /* the whole region on a host backend */
        } else {
            co.partition.targets = targets; /* a region target; the rest on the host */
            co.partition.n_targets = 1;
        }
        co.build.threads = spec->threads;
        co.build.target_options = opts;
        st = byocl_compile(m, &co, &r->compiled, err);
    }
    if (st == BYOCL_OK)
        st = byocl_executor_new(r->compiled, &r->ex, err);
    if (st != BYOCL_OK)
        byocl_error_prefix(err, "compiling for target %s: ", target);
    byocl_target_options_free(opts);
    byocl_module_free(m);
    if (st == BYOCL_OK) {
        r->n_inputs = byocl_compiled_num_inputs(r->compiled);
        r->n_outputs = byocl_compiled_num_outputs(r->compiled);
    }
    return st;
}

static void region_free(byocl_tvm_region *r)
{
    if (!r)
        return;
    byocl_module_free(r->module);
    free(r->target);
    free(r->times);
    byocl_executor_free(r->ex);
    byocl_compiled_free(r->compiled);
    pthread_mutex_destroy(&r->run_lock);
    free(r->failure);
    free(r->symbol);
    free(r);
}

/* The region of *slot, compiled from `spec` when the slot is empty (under slots_lock). A
 * failed compile is a region too, that says why; NULL only when out of memory. A filled
 * slot is read without the lock (an acquire load, paired with the release store below),
 * so that the calls of compiled regions never wait for another region's compile. */
static byocl_tvm_region *slot_region(byocl_tvm_region **slot, const byocl_tvm_region_spec *spec)
{
    byocl_tvm_region *r = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (r)
        return r;
    pthread_once(&exit_once, watch_exit);
    pthread_mutex_lock(&slots_lock);
    r = *slot;
    if (!r && (r = calloc(1, sizeof *r)) != NULL) {
        byocl_error err = {0};
        r->symbol = strdup(spec->symbol ? spec->symbol : "(no symbol)");
        r->target = strdup(spec->target ? spec->target : "host");
        if (pthread_mutex_init(&r->run_lock, NULL) != 0 || !r->symbol || !r->target) {
            free(r->symbol);
            free(r->target);
            free(r);
            r = NULL;
        } else if ((r->failed = compile_region(r, spec, &err)) != BYOCL_OK) {
            byocl_executor_free(r->ex);
            byocl_compiled_free(r->compiled);
            r->ex = NULL;
            r->compiled = NULL;
            r->failure = strdup(err.msg);
        }
        __atomic_store_n(slot, r, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&slots_lock);
    return r;
}

byocl_status byocl_tvm_region_prepare(byocl_tvm_region **slot, const byocl_tvm_region_spec *spec,
                                      byocl_error *err)
{
    if (!slot || !spec)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_tvm_region_prepare: no %s",
                               !slot ? "slot" : "spec");
    byocl_tvm_region *r = slot_region(slot, spec);
    if (!r)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "byocl region %s: out of memory",
                               spec->symbol ? spec->symbol : "(no symbol)");
    if (r->failed != BYOCL_OK)
        return byocl_error_set(err, r->failed, "byocl region %s: %s", r->symbol,
                               r->failure ? r->failure : "compile failed");
    return BYOCL_OK;
}

void byocl_tvm_region_free(byocl_tvm_region **slot)
{
    if (!slot)
        return;
    pthread_mutex_lock(&slots_lock);
    region_free(*slot);
    __atomic_store_n(slot, NULL, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&slots_lock);
}

void byocl_tvm_region_unload(byocl_tvm_region **slot)
{
    if (!__atomic_load_n(&exiting, __ATOMIC_ACQUIRE))
        byocl_tvm_region_free(slot);
}

/* "argument 1 (%w)" or "argument 3 (output 0)". */
static const char *arg_label(const byocl_tvm_region *r, int i, char *buf, size_t len)
{
    if (i < r->n_inputs)
        snprintf(buf, len, "argument %d (%%%s)", i,
                 byocl_compiled_input_name(r->compiled, i));
    else
        snprintf(buf, len, "argument %d (output %d)", i, i - r->n_inputs);
    return buf;
}

/* "2 inputs (%x, %w), then 1 output". */
static void describe_args(const byocl_tvm_region *r, char *buf, size_t len)
{
    size_t at = 0;
    at += (size_t)snprintf(buf, len, "%d input%s (", r->n_inputs, r->n_inputs == 1 ? "" : "s");
    for (int i = 0; i < r->n_inputs && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%%%s", i ? ", " : "",
                               byocl_compiled_input_name(r->compiled, i));
    if (at < len)
        snprintf(buf + at, len - at, "), then %d output%s", r->n_outputs,
                 r->n_outputs == 1 ? "" : "s");
}

/* The folder that region `symbol` is captured into: $BYOCL_CAPTURE_DIR, unless
 * $BYOCL_CAPTURE_REGION names another region; NULL: no capture. Read at every call, so that
 * a capture can start and stop while the process runs. */
static const char *capture_dir(const char *symbol)
{
    const char *dir = getenv("BYOCL_CAPTURE_DIR");
    const char *only = getenv("BYOCL_CAPTURE_REGION");
    if (!dir || !*dir || (only && *only && strcmp(only, symbol) != 0))
        return NULL;
    return dir;
}

bool tvm_region_wants_weights(byocl_tvm_region *const *slot)
{
    byocl_tvm_region *r = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!r)
        return true; /* the first call compiles the region */
    return r->failed == BYOCL_OK && !__atomic_load_n(&r->module, __ATOMIC_ACQUIRE) &&
           capture_dir(r->symbol);
}

/* Writes this call as the capture folder DIR/<symbol> (byocl_capture_write_call): the
 * inputs as TVM passed them, the outputs as byocl computed them. Under run_lock. */
static byocl_status capture_call(byocl_tvm_region *r, const byocl_tvm_region_spec *spec,
                                 const char *dir, const DLTensor *const *views, double ms,
                                 byocl_error *err)
{
    byocl_status st = BYOCL_OK;
    if (!r->module) {
        byocl_module *m = NULL;
        if ((st = load_module(spec, &m, err)) != BYOCL_OK) {
            byocl_error_prefix(err, "loading the region again: ");
            return st;
        }
        __atomic_store_n(&r->module, m, __ATOMIC_RELEASE);
    }
    if (r->calls == r->cap_times) {
        int n = r->cap_times ? 2 * r->cap_times : 16;
        double *times = realloc(r->times, (size_t)n * sizeof *times);
        if (!times)
            return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
        r->times = times;
        r->cap_times = n;
    }
    r->times[r->calls++] = ms;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return byocl_error_set(err, BYOCL_ERR_IO, "cannot create %s: %s", dir, strerror(errno));
    const byocl_tensor **inputs = calloc((size_t)r->n_inputs + 1, sizeof *inputs);
    const byocl_tensor **outputs = calloc((size_t)r->n_outputs + 1, sizeof *outputs);
    if (!inputs || !outputs)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (int i = 0; i < r->n_inputs && st == BYOCL_OK; i++) {
        const byocl_type *type = byocl_compiled_input_type(r->compiled, i);
        const DLTensor *in = views[i];
        if (!(inputs[i] = byocl_tensor_from_data(type->dtype, &type->shape,
                                                 (const char *)in->data + in->byte_offset, err)))
            st = BYOCL_ERR_NOMEM;
    }
    for (int k = 0; k < r->n_outputs && st == BYOCL_OK; k++)
        st = byocl_executor_output(r->ex, k, &outputs[k], err);
    char runner[96];
    snprintf(runner, sizeof runner, "tvm/%s", r->target);
    byocl_capture_call call = {
        .symbol = r->symbol,
        .target = r->target,
        .runner = runner,
        .module = r->module,
        .inputs = inputs,
        .outputs = outputs,
        .times_ms = r->times,
        .calls = r->calls,
    };
    if (st == BYOCL_OK)
        st = byocl_capture_write_call(&call, dir, NULL, err);
    for (int i = 0; inputs && i < r->n_inputs; i++)
        byocl_tensor_unref((byocl_tensor *)inputs[i]);
    free(inputs);
    free(outputs);
    return st;
}

/* Checks every argument, sets the inputs, runs, copies the outputs out; under run_lock. */
static int run_region(byocl_tvm_region *r, const byocl_tvm_region_spec *spec,
                      const TVMFFIAny *args)
{
    char label[512], msg[1024];
    int n = r->n_inputs + r->n_outputs;
    const DLTensor *stack[16];
    const DLTensor **views = n <= 16 ? stack : calloc((size_t)n, sizeof *views);
    if (!views)
        return tvm_raise_error(RUNTIME_ERROR, r->symbol, "out of memory");
    int rc = 0;
    /* Every argument is checked before any is used. */
    for (int i = 0; i < n && rc == 0; i++) {
        const byocl_type *want = i < r->n_inputs
                                     ? byocl_compiled_input_type(r->compiled, i)
                                     : byocl_compiled_output_type(r->compiled, i - r->n_inputs);
        const char *kind = tvm_arg_tensor(&args[i], want, &views[i], msg, sizeof msg);
        if (kind)
            rc = tvm_raise_error(kind, r->symbol, "%s: %s", arg_label(r, i, label, sizeof label),
                             msg);
    }
    byocl_error err = {0};
    for (int i = 0; i < r->n_inputs && rc == 0; i++) {
        /* Checked: byocl's own DLPack dtype (bool may have come as {kDLBool, 8}), and no
         * strides (compact ones may have been given). */
        DLTensor in = *views[i];
        in.dtype = byocl_dtype_to_dlpack(byocl_compiled_input_type(r->compiled, i)->dtype);
        in.strides = NULL;
        if (byocl_executor_set_input_dl(r->ex, byocl_compiled_input_name(r->compiled, i), &in,
                                        &err) != BYOCL_OK)
            rc = tvm_raise_error(RUNTIME_ERROR, r->symbol, "%s: %s",
                             arg_label(r, i, label, sizeof label), err.msg);
    }
    double start = base_now_ms();
    if (rc == 0 && byocl_executor_run(r->ex, &err) != BYOCL_OK)
        rc = tvm_raise_error(RUNTIME_ERROR, r->symbol, "run failed: %s", err.msg);
    double ms = base_now_ms() - start;
    for (int k = 0; k < r->n_outputs && rc == 0; k++) {
        const byocl_tensor *value;
        const DLTensor *out = views[r->n_inputs + k];
        if (byocl_executor_output(r->ex, k, &value, &err) != BYOCL_OK)
            rc = tvm_raise_error(RUNTIME_ERROR, r->symbol, "output %d: %s", k, err.msg);
        else if (byocl_tensor_nbytes(value) > 0)
            memcpy((char *)out->data + out->byte_offset, byocl_tensor_cdata(value),
                   byocl_tensor_nbytes(value));
    }
    const char *dir = rc == 0 ? capture_dir(r->symbol) : NULL;
    if (dir && capture_call(r, spec, dir, views, ms, &err) != BYOCL_OK)
        rc = tvm_raise_error(RUNTIME_ERROR, r->symbol, "capturing into %s: %s", dir, err.msg);
    if (views != stack)
        free(views);
    return rc;
}

int byocl_tvm_region_call(byocl_tvm_region **slot, const byocl_tvm_region_spec *spec,
                          const void *args_v, int32_t num_args, void *result_v)
{
    const TVMFFIAny *args = args_v;
    TVMFFIAny *result = result_v;
    const char *symbol = spec && spec->symbol ? spec->symbol : "(no symbol)";
    if (!slot || !spec)
        return tvm_raise_error(RUNTIME_ERROR, symbol, "byocl_tvm_region_call without a %s",
                     !slot ? "slot" : "spec");
    byocl_tvm_region *r = slot_region(slot, spec);
    if (!r)
        return tvm_raise_error(RUNTIME_ERROR, symbol, "out of memory");
    if (r->failed != BYOCL_OK)
        return tvm_raise_error(RUNTIME_ERROR, r->symbol, "%s", r->failure ? r->failure : "compile failed");
    if (num_args != r->n_inputs + r->n_outputs || (num_args > 0 && !args)) {
        char what[1024];
        describe_args(r, what, sizeof what);
        return tvm_raise_error(TVM_ARG_VALUE_ERROR, r->symbol, "expected %d arguments (%s), got %d",
                     r->n_inputs + r->n_outputs, what, (int)num_args);
    }
    pthread_mutex_lock(&r->run_lock);
    int rc = run_region(r, spec, args);
    pthread_mutex_unlock(&r->run_lock);
    if (rc == 0 && result) {
        result->type_index = kTVMFFINone;
        result->zero_padding = 0;
        result->v_int64 = 0;
    }
    return rc;
}
