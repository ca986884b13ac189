/* Device memory of region runtime modules (byocl_device_memory, docs/executor.md "Device
 * memory"), through the devmem plugin (tests/plugins/devmem_target.c): two simulated
 * devices whose modules check that every tensor they receive is a buffer of their own
 * memory and count every copy. The executor must copy a tensor only where it crosses from
 * one memory to another: each input uploaded once per run, each output downloaded once,
 * nothing between two regions of one device, one download and one upload around a host
 * kernel; through views and tuples; constants once per executor. Results equal the
 * reference executor; injected failures give errors that name the region and the tensor
 * and leak no buffer; stats count the copies; capture records the right values. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"
#include "byocl/capture.h"
#include "byocl/pipeline.h"
#include "byocl/plugin.h"
#include "byocl/reference.h"
#include "byocl/runtime.h"
#include "byocl/target.h"
#include "plugins/devmem_target.h"

#define PLUGIN_PATH BYOCL_PLUGIN_DIR "/libdevmem_target.so"
#define RUNS 3

static devmem_counters_fn counters_of;
static devmem_reset_fn reset_counters;
static devmem_fail_fn fail_call;

static int group_setup(void **state)
{
    (void)state;
    byocl_error err = {0};
    if (byocl_plugin_load(PLUGIN_PATH, &err) != BYOCL_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    /* The loader opened it already: this only finds it. */
    void *lib = dlopen(PLUGIN_PATH, RTLD_NOW | RTLD_NOLOAD);
    if (!lib)
        return -1;
    *(void **)&counters_of = dlsym(lib, DEVMEM_COUNTERS_SYMBOL);
    *(void **)&reset_counters = dlsym(lib, DEVMEM_RESET_SYMBOL);
    *(void **)&fail_call = dlsym(lib, DEVMEM_FAIL_SYMBOL);
    dlclose(lib);
    return counters_of && reset_counters && fail_call ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    byocl_target_registry_reset();
    byocl_plugin_close_all();
    return 0;
}

static int test_setup(void **state)
{
    (void)state;
    reset_counters();
    return 0;
}

/* Every test ends with all device buffers freed. */
static int test_teardown(void **state)
{
    (void)state;
    for (int d = 0; d < DEVMEM_DEVICES; d++) {
        devmem_counters k;
        counters_of(d, &k);
        if (k.live != 0) {
            fprintf(stderr, "device %d: %ld buffers not freed\n", d, k.live);
            return -1;
        }
    }
    return 0;
}

static devmem_counters counts(int device)
{
    devmem_counters k;
    counters_of(device, &k);
    return k;
}

/* ------------------------------------------------------------------ helpers */

/* The devmem target that claims `op`, or NULL. */
static const char *target_of(const char *op)
{
    if (!op)
        return NULL;
    if (strcmp(op, "add") == 0 || strcmp(op, "multiply") == 0 || strcmp(op, "nn.relu") == 0)
        return "devmem";
    return strcmp(op, "subtract") == 0 ? "devmem2" : NULL;
}

/* @main of `m` with each op call the devmem targets claim annotated as a region of its
 * own (annotating by op support groups neighbouring ops into one region). */
static byocl_module *one_region_per_op(const byocl_module *m)
{
    const byocl_function *src = byocl_module_find(m, "main");
    byocl_module *out = byocl_module_new();
    byocl_error err = {0};
    byocl_function *fn = out ? byocl_module_add_function(out, "main", &err) : NULL;
    int n = byocl_function_num_nodes(src);
    int *map = malloc((size_t)n * sizeof *map);
    assert_true(fn && map);
    for (int id = 0; id < n; id++) {
        int args[8], n_args = byocl_node_num_args(src, id);
        assert_true(n_args <= 8);
        const char *op = byocl_node_op(src, id), *target = target_of(op);
        char attrs[64];
        snprintf(attrs, sizeof attrs, "compiler=\"%s\"", target ? target : "");
        for (int k = 0; k < n_args; k++) {
            args[k] = map[byocl_node_arg(src, id, k)];
            if (target)
                args[k] = byocl_function_add_call_str(fn, "annotation.compiler_begin", &args[k],
                                                      1, attrs, &err);
        }
        switch (byocl_node_kind_of(src, id)) {
        case BYOCL_NODE_VAR:
            map[id] = byocl_function_add_param(fn, byocl_node_name(src, id),
                                               byocl_node_type(src, id), &err);
            break;
        case BYOCL_NODE_CONSTANT:
            map[id] = byocl_function_add_constant(fn, (byocl_tensor *)byocl_node_value(src, id),
                                                  &err);
            break;
        case BYOCL_NODE_CALL:
            map[id] = byocl_function_add_call(fn, op, args, n_args, byocl_node_attrs(src, id),
                                              &err);
            if (target)
                map[id] = byocl_function_add_call_str(fn, "annotation.compiler_end", &map[id], 1,
                                                      attrs, &err);
            break;
        case BYOCL_NODE_TUPLE:
            map[id] = byocl_function_add_tuple(fn, args, n_args, &err);
            break;
        case BYOCL_NODE_GETITEM:
            map[id] = byocl_function_add_getitem(fn, args[0], byocl_node_index(src, id), &err);
            break;
        }
        if (map[id] < 0)
            fail_msg("%s", err.msg);
    }
    if (byocl_function_set_body(fn, map[byocl_function_body(src)], &err) != BYOCL_OK ||
        byocl_infer_types(out, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    free(map);
    return out;
}

/* `m` compiled for the devmem targets, the host part by the "ref" backend: by op support
 * (neighbouring ops of one target form one region), or `split`: each op a region of its
 * own. */
static byocl_compiled *compile_text(const byocl_module *m, bool split)
{
    static const char *const targets[] = {"devmem", "devmem2"};
    byocl_module *annotated = split ? one_region_per_op(m) : NULL;
    byocl_compile_options co = byocl_compile_options_default();
    co.partition.targets = targets; /* annotates nothing when the module has its own */
    co.partition.n_targets = 2;
    co.partition.no_merge = split;
    co.build.target = "ref";
    co.build.threads = 1;
    byocl_compiled *c = NULL;
    byocl_error err = {0};
    if (byocl_compile(split ? annotated : m, &co, &c, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    byocl_module_free(annotated);
    return c;
}

/* Deterministic inputs for every parameter of @main: input k holds k + i/7 - 1 at i. */
static byocl_tensor **make_inputs(const byocl_module *m, int *n)
{
    const byocl_function *fn = byocl_module_find(m, "main");
    *n = byocl_function_num_params(fn);
    byocl_tensor **in = calloc((size_t)*n + 1, sizeof *in);
    assert_non_null(in);
    for (int k = 0; k < *n; k++) {
        const byocl_type *t = byocl_node_type(fn, byocl_function_param(fn, k));
        in[k] = byocl_tensor_new(t->dtype, &t->shape, NULL);
        assert_non_null(in[k]);
        float *v = byocl_tensor_data(in[k]);
        for (int64_t i = 0; i < byocl_tensor_numel(in[k]); i++)
            v[i] = (float)k + (float)i / 7.0f - 1.0f;
    }
    return in;
}

static void set_inputs(const byocl_module *m, byocl_executor *ex, byocl_tensor **in, int n)
{
    const byocl_function *fn = byocl_module_find(m, "main");
    byocl_error err = {0};
    for (int k = 0; k < n; k++)
        if (byocl_executor_set_input(ex, byocl_node_name(fn, byocl_function_param(fn, k)), in[k],
                                     &err) != BYOCL_OK)
            fail_msg("%s", err.msg);
}

/* Every output of the last run equals the reference executor's on the same inputs. */
static void expect_reference(const byocl_module *m, const byocl_executor *ex, byocl_tensor **in,
                             int n_in)
{
    byocl_tensor **want = NULL;
    int n_want = 0;
    byocl_error err = {0};
    if (byocl_reference_run(m, "main", in, n_in, &want, &n_want, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(byocl_executor_num_outputs(ex), n_want);
    for (int i = 0; i < n_want; i++) {
        const byocl_tensor *got = NULL;
        assert_int_equal(byocl_executor_output(ex, i, &got, &err), BYOCL_OK);
        ts_assert_tensor_close(got, want[i], 0, 0);
    }
    byocl_tensors_free(want, n_want);
}

/* What a model is expected to copy per run, on each device. */
typedef struct per_run {
    int uploads[DEVMEM_DEVICES], downloads[DEVMEM_DEVICES];
    int regions[DEVMEM_DEVICES]; /* region calls per run */
} per_run;

/* Builds `text`, runs it RUNS times with one executor and checks the copies, the stats,
 * the buffers and the results. Returns the compiled model's stats. */
static byocl_plan_stats run_model(const char *text, bool split, const per_run *want)
{
    reset_counters();
    byocl_module *m = ts_parse_typed(text);
    byocl_compiled *c = compile_text(m, split);
    byocl_plan_stats stats;
    byocl_compiled_stats(c, &stats);
    int n_in = 0;
    byocl_tensor **in = make_inputs(m, &n_in);
    byocl_executor *ex = NULL;
    byocl_error err = {0};
    if (byocl_executor_new(c, &ex, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    devmem_counters made[DEVMEM_DEVICES];
    for (int d = 0; d < DEVMEM_DEVICES; d++) {
        made[d] = counts(d);
        assert_int_equal(made[d].uploads, 0); /* nothing copied before a run */
        assert_int_equal(made[d].live, made[d].allocs);
    }
    set_inputs(m, ex, in, n_in);
    for (int r = 1; r <= RUNS; r++) {
        if (byocl_executor_run(ex, &err) != BYOCL_OK)
            fail_msg("run %d: %s", r, err.msg);
        expect_reference(m, ex, in, n_in);
        for (int d = 0; d < DEVMEM_DEVICES; d++) {
            devmem_counters k = counts(d);
            if (k.uploads != r * want->uploads[d] || k.downloads != r * want->downloads[d] ||
                k.runs != r * want->regions[d])
                fail_msg("device %d after run %d: %ld uploads, %ld downloads, %ld region calls; "
                         "expected %d, %d, %d",
                         d, r, k.uploads, k.downloads, k.runs, r * want->uploads[d],
                         r * want->downloads[d], r * want->regions[d]);
            assert_int_equal(k.allocs, made[d].allocs); /* buffers made once */
        }
    }
    int uploads = 0, downloads = 0;
    size_t up_bytes = 0, down_bytes = 0;
    for (int d = 0; d < DEVMEM_DEVICES; d++) {
        devmem_counters k = counts(d);
        uploads += want->uploads[d];
        downloads += want->downloads[d];
        up_bytes += k.upload_bytes / RUNS;
        down_bytes += k.download_bytes / RUNS;
    }
    assert_int_equal(stats.n_uploads, uploads);
    assert_int_equal(stats.n_downloads, downloads);
    assert_int_equal(stats.upload_bytes, up_bytes);
    assert_int_equal(stats.download_bytes, down_bytes);
    byocl_executor_free(ex);
    for (int d = 0; d < DEVMEM_DEVICES; d++) {
        assert_int_equal(counts(d).frees, made[d].allocs);
        assert_int_equal(counts(d).live, 0);
    }
    byocl_compiled_free(c);
    byocl_tensors_free(in, n_in);
    byocl_module_free(m);
    return stats;
}

/* ------------------------------------------------------------------- tests */

/* input -> region -> region -> region -> output on one device: x and y go up once per
 * run (x is read by two regions), the result comes down once, nothing in between. */
static void test_chain_on_one_device(void **state)
{
    (void)state;
    static const char text[] = "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {\n"
                               "  %0 = add(%x, %y);\n"
                               "  %1 = nn.relu(%0);\n"
                               "  multiply(%1, %x)\n"
                               "}\n";
    per_run want = {.uploads = {2, 0}, .downloads = {1, 0}, .regions = {3, 0}};
    byocl_plan_stats st = run_model(text, true, &want);
    assert_int_equal(st.n_regions, 3);
    assert_int_equal(st.n_kernels, 0);
    assert_int_equal(st.upload_bytes, 2 * 24);
    assert_int_equal(st.download_bytes, 24);
    assert_int_equal(st.n_intermediates, 0); /* on the device only: no host buffer */
    /* Merged, the same copies. */
    want.regions[0] = 1;
    st = run_model(text, false, &want);
    assert_int_equal(st.n_regions, 1);
}

/* A host kernel between two regions of the device: its input comes down once, its result
 * goes up once. */
static void test_host_kernel_between(void **state)
{
    (void)state;
    static const char text[] = "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {\n"
                               "  %0 = add(%x, %y);\n"
                               "  %1 = abs(%0);\n"
                               "  %2 = nn.relu(%1);\n"
                               "  %3 = negative(%2);\n"
                               "  %4 = abs(%2);\n"
                               "  add(%3, %4)\n"
                               "}\n";
    /* up: x, y, abs(%0), then %3 and %4 (host kernels' results) for the last add; down:
     * %0 once, %2 once (read by two host kernels), the result */
    per_run want = {.uploads = {5, 0}, .downloads = {3, 0}, .regions = {3, 0}};
    byocl_plan_stats st = run_model(text, true, &want);
    assert_int_equal(st.n_kernels, 3);
}

/* A model output that a later region reads stays on the device for it and comes down
 * once, after the run; one that a host kernel reads comes down once, before it. */
static void test_output_read_later(void **state)
{
    (void)state;
    static const char by_region[] =
        "def @main(%x: Tensor[(4), float32], %y: Tensor[(4), float32]) {\n"
        "  %0 = add(%x, %y);\n"
        "  %1 = nn.relu(%0);\n"
        "  (%0, %1)\n"
        "}\n";
    per_run want = {.uploads = {2, 0}, .downloads = {2, 0}, .regions = {2, 0}};
    run_model(by_region, true, &want);
    static const char by_host[] =
        "def @main(%x: Tensor[(4), float32], %y: Tensor[(4), float32]) {\n"
        "  %0 = add(%x, %y);\n"
        "  %1 = abs(%0);\n"
        "  (%1, %0)\n"
        "}\n";
    per_run once = {.uploads = {2, 0}, .downloads = {1, 0}, .regions = {1, 0}};
    run_model(by_host, true, &once);
}

/* An input read by two regions (a host kernel between them keeps them apart) is
 * uploaded once per run. */
static void test_input_read_twice(void **state)
{
    (void)state;
    static const char text[] = "def @main(%x: Tensor[(3, 2), float32]) {\n"
                               "  %0 = nn.relu(%x);\n"
                               "  %1 = abs(%0);\n"
                               "  multiply(%x, %1)\n"
                               "}\n";
    per_run want = {.uploads = {2, 0}, .downloads = {2, 0}, .regions = {2, 0}};
    run_model(text, false, &want);
}

/* Between two devices a tensor goes through the host: down from one, up to the other. */
static void test_two_devices(void **state)
{
    (void)state;
    static const char text[] = "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {\n"
                               "  %0 = add(%x, %y);\n"
                               "  %1 = subtract(%0, %y);\n"
                               "  multiply(%1, %0)\n"
                               "}\n";
    /* devmem: x, y up; %0 down once (for devmem2); %1 up (from devmem2 via the host);
     * the result down. devmem2: %0 and y up, %1 down. */
    per_run want = {.uploads = {3, 2}, .downloads = {2, 1}, .regions = {2, 1}};
    run_model(text, true, &want);
}

/* Tuples, items and reshapes are views of the device buffers: regions pass them without
 * a copy. */
static void test_views(void **state)
{
    (void)state;
    static const char text[] = "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {\n"
                               "  %0 = add(%x, %y);\n"
                               "  %1 = nn.relu(%0);\n"
                               "  %2 = reshape(%0, newshape=[3, 2]);\n"
                               "  %3 = reshape(%1, newshape=[6]);\n"
                               "  %4 = reshape(%3, newshape=[3, 2]);\n"
                               "  %5 = multiply(%2, %4);\n"
                               "  (%5, %3)\n"
                               "}\n";
    /* one region of add and relu (a tuple of two outputs), one of multiply; %3 an
     * output through a view */
    per_run want = {.uploads = {2, 0}, .downloads = {2, 0}, .regions = {2, 0}};
    byocl_plan_stats st = run_model(text, false, &want);
    assert_int_equal(st.n_regions, 2);
    assert_int_equal(st.n_kernels, 0);
}

/* A constant a region reads (passed as an argument) goes up once, when the executor is
 * made, not at every run. */
static void test_constant_once(void **state)
{
    (void)state;
    byocl_module *m = byocl_module_new();
    assert_non_null(m);
    byocl_error err = {0};
    byocl_function *fn = byocl_module_add_function(m, "main", &err);
    assert_non_null(fn);
    int64_t dims[1] = {5};
    byocl_type t = byocl_type_tensor(BYOCL_FLOAT32, 1, dims);
    static const float cv[5] = {1, -2, 3, -4, 5};
    byocl_tensor *ct = ts_tensor_f32(1, dims, cv);
    int x = byocl_function_add_param(fn, "x", &t, &err);
    int k = byocl_function_add_constant(fn, ct, &err);
    int args[2] = {x, k};
    int sum = byocl_function_add_call(fn, "add", args, 2, NULL, &err);
    assert_true(x >= 0 && k >= 0 && sum >= 0);
    assert_int_equal(byocl_function_set_body(fn, sum, &err), BYOCL_OK);
    assert_int_equal(byocl_infer_types(m, &err), BYOCL_OK);
    static const char *const targets[] = {"devmem"};
    byocl_compile_options co = byocl_compile_options_default();
    co.partition.targets = targets;
    co.partition.n_targets = 1;
    co.partition.constants_as_args = true;
    co.build.target = "ref";
    byocl_compiled *c = NULL;
    if (byocl_compile(m, &co, &c, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    byocl_plan_stats st;
    byocl_compiled_stats(c, &st);
    assert_int_equal(st.n_uploads, 1); /* x; the constant is not counted per run */
    assert_int_equal(st.n_downloads, 1);
    byocl_executor *ex = NULL;
    assert_int_equal(byocl_executor_new(c, &ex, &err), BYOCL_OK);
    assert_int_equal(counts(0).uploads, 1);
    static const float xv[5] = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
    byocl_tensor *xt = ts_tensor_f32(1, dims, xv);
    assert_int_equal(byocl_executor_set_input(ex, "x", xt, &err), BYOCL_OK);
    for (int r = 1; r <= RUNS; r++) {
        assert_int_equal(byocl_executor_run(ex, &err), BYOCL_OK);
        const byocl_tensor *got = NULL;
        assert_int_equal(byocl_executor_output(ex, 0, &got, &err), BYOCL_OK);
        static const float want[5] = {1.5f, -1.5f, 3.5f, -3.5f, 5.5f};
        ts_assert_f32_close(got, want, 5, 0, 0);
    }
    assert_int_equal(counts(0).uploads, 1 + RUNS);
    assert_int_equal(counts(0).downloads, RUNS);
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    byocl_tensor_unref(xt);
    byocl_tensor_unref(ct);
    byocl_module_free(m);
}

/* ---------------------------------------------------------------- failures */

static const char failing_text[] =
    "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {\n"
    "  %0 = add(%x, %y);\n"
    "  %1 = abs(%0);\n"
    "  nn.relu(%1)\n"
    "}\n";

/* The executor of failing_text, its inputs set. */
static byocl_executor *failing_executor(byocl_module **m, byocl_compiled **c,
                                        byocl_tensor ***in, int *n_in)
{
    *m = ts_parse_typed(failing_text);
    *c = compile_text(*m, true);
    *in = make_inputs(*m, n_in);
    byocl_executor *ex = NULL;
    byocl_error err = {0};
    if (byocl_executor_new(*c, &ex, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    set_inputs(*m, ex, *in, *n_in);
    return ex;
}

static void free_failing(byocl_module *m, byocl_compiled *c, byocl_tensor **in, int n_in,
                         byocl_executor *ex)
{
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    byocl_tensors_free(in, n_in);
    byocl_module_free(m);
}

/* A run that fails leaves no outputs; the next one works. */
static void expect_run_error(byocl_module *m, byocl_executor *ex, byocl_tensor **in, int n_in,
                             const char *want)
{
    byocl_error err = {0};
    assert_int_not_equal(byocl_executor_run(ex, &err), BYOCL_OK);
    assert_string_equal(err.msg, want);
    const byocl_tensor *got = NULL;
    assert_int_equal(byocl_executor_output(ex, 0, &got, &err), BYOCL_ERR_INVALID);
    assert_int_equal(byocl_executor_run(ex, &err), BYOCL_OK);
    expect_reference(m, ex, in, n_in);
}

static void test_alloc_failure(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed(failing_text);
    byocl_compiled *c = compile_text(m, true);
    byocl_error err = {0};
    byocl_executor *ex = NULL;
    /* buffers: %0 and %2 (the regions' results), then x, y, %1 (copies, in step order) */
    fail_call(DEVMEM_ALLOC, 4);
    assert_int_equal(byocl_executor_new(c, &ex, &err), BYOCL_ERR_NOMEM);
    assert_null(ex);
    assert_string_equal(err.msg, "in @main, %0 (@devmem_main_0): allocating 24 bytes of "
                                 "device memory for %y (Tensor[(2, 3), float32]): devmem device "
                                 "0: out of device memory (injected)");
    assert_int_equal(counts(0).allocs, 3);
    assert_int_equal(counts(0).live, 0); /* the three made are freed */
    fail_call(DEVMEM_ALLOC, 1);
    assert_int_equal(byocl_executor_new(c, &ex, &err), BYOCL_ERR_NOMEM);
    ts_assert_contains(err.msg, "allocating 24 bytes of device memory for %0 (Tensor[(2, 3), "
                                "float32])");
    byocl_compiled_free(c);
    byocl_module_free(m);
}

static void test_upload_failure(void **state)
{
    (void)state;
    byocl_module *m;
    byocl_compiled *c;
    byocl_tensor **in;
    int n_in;
    byocl_executor *ex = failing_executor(&m, &c, &in, &n_in);
    fail_call(DEVMEM_UPLOAD, 2); /* y */
    expect_run_error(m, ex, in, n_in,
                     "in @main, %0 (@devmem_main_0): uploading %y (Tensor[(2, 3), float32]) to "
                     "device memory: devmem device 0: upload failed (injected)");
    fail_call(DEVMEM_UPLOAD, 3); /* abs's result, for the relu region */
    expect_run_error(m, ex, in, n_in,
                     "in @main, the result (@devmem_main_1): uploading %1 (Tensor[(2, 3), "
                     "float32]) to device memory: devmem device 0: upload failed (injected)");
    free_failing(m, c, in, n_in, ex);
}

static void test_download_failure(void **state)
{
    (void)state;
    byocl_module *m;
    byocl_compiled *c;
    byocl_tensor **in;
    int n_in;
    byocl_executor *ex = failing_executor(&m, &c, &in, &n_in);
    fail_call(DEVMEM_DOWNLOAD, 1); /* add's result, for abs */
    expect_run_error(m, ex, in, n_in,
                     "in @main, %0 (@devmem_main_0): downloading %0 (Tensor[(2, 3), float32]) "
                     "from device memory: devmem device 0: download failed (injected)");
    fail_call(DEVMEM_DOWNLOAD, 2); /* the output, after the run */
    expect_run_error(m, ex, in, n_in,
                     "in @main, the result (@devmem_main_1): downloading the result (Tensor[(2, "
                     "3), float32]) from device memory: devmem device 0: download failed (injected)");
    free_failing(m, c, in, n_in, ex);
}

/* ------------------------------------------------------------------ capture */

/* The capture wraps each region's module and keeps its device memory; what it records
 * (downloaded) is the region's real inputs and outputs. With check "ref", the host's
 * outputs go on, uploaded into the device buffers. */
static void capture_run(const char *check)
{
    static const char text[] = "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {\n"
                               "  %0 = add(%x, %y);\n"
                               "  %1 = abs(%0);\n"
                               "  nn.relu(%1)\n"
                               "}\n";
    byocl_module *m = ts_parse_typed(text);
    byocl_error err = {0};
    byocl_module *marked = byocl_module_clone(m, &err), *part = NULL;
    assert_non_null(marked);
    byocl_capture_mark_nodes(marked);
    static const char *const targets[] = {"devmem"};
    byocl_compile_options co = byocl_compile_options_default();
    co.partition.targets = targets;
    co.partition.n_targets = 1;
    co.build.target = "ref";
    if (byocl_compile_partition(marked, &co, &part, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    byocl_capture *cap = NULL;
    byocl_capture_options copt = {.model = "devmem", .check = check, .rtol = 1e-6, .atol = 0};
    if (byocl_capture_new(m, part, &copt, &cap, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    byocl_build_options bo = co.build;
    byocl_capture_install(cap, &bo);
    byocl_compiled *c = NULL;
    if (byocl_build(part, &bo, &c, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    int n_in = 0;
    byocl_tensor **in = make_inputs(m, &n_in);
    byocl_executor *ex = NULL;
    assert_int_equal(byocl_executor_new(c, &ex, &err), BYOCL_OK);
    set_inputs(m, ex, in, n_in);
    if (byocl_executor_run(ex, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    expect_reference(m, ex, in, n_in);
    assert_int_equal(byocl_capture_num_regions(cap), 2);
    /* What each region saw, from the model's inputs: add(x, y), then relu(abs(x + y)). */
    byocl_tensor *sum = byocl_tensor_clone(in[0], &err), *pos = byocl_tensor_clone(in[0], &err);
    assert_true(sum && pos);
    for (int64_t i = 0; i < byocl_tensor_numel(sum); i++) {
        float s = ((float *)byocl_tensor_data(in[0]))[i] + ((float *)byocl_tensor_data(in[1]))[i];
        ((float *)byocl_tensor_data(sum))[i] = s;
        ((float *)byocl_tensor_data(pos))[i] = s < 0 ? -s : s;
    }
    const char *dir = ts_tmpdir(check ? "devmem_capture_check" : "devmem_capture");
    for (int k = 0; k < 2; k++) {
        byocl_capture_region r = byocl_capture_region_at(cap, k);
        assert_string_equal(r.runner, "devmem");
        if (check)
            assert_true(r.ok);
        char *path = NULL;
        if (byocl_capture_write_region(cap, k, dir, &path, &err) != BYOCL_OK)
            fail_msg("%s", err.msg);
        byocl_capture_folder *f = NULL;
        if (byocl_capture_read(path, &f, &err) != BYOCL_OK)
            fail_msg("%s", err.msg);
        if (strcmp(r.symbol, "devmem_main_0") == 0) {
            assert_int_equal(f->manifest->n_inputs, 2);
            ts_assert_tensor_close(f->inputs[0], in[0], 0, 0);
            ts_assert_tensor_close(f->inputs[1], in[1], 0, 0);
            ts_assert_tensor_close(f->outputs[0], sum, 0, 0);
        } else {
            assert_string_equal(r.symbol, "devmem_main_1");
            ts_assert_tensor_close(f->inputs[0], pos, 0, 0);
            ts_assert_tensor_close(f->outputs[0], pos, 0, 0); /* relu of non-negatives */
        }
        byocl_capture_folder_free(f);
        free(path);
    }
    ts_remove_tree(dir);
    byocl_tensor_unref(sum);
    byocl_tensor_unref(pos);
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    byocl_capture_free(cap);
    byocl_tensors_free(in, n_in);
    byocl_module_free(part);
    byocl_module_free(marked);
    byocl_module_free(m);
}

static void test_capture(void **state)
{
    (void)state;
    capture_run(NULL);
    capture_run("ref");
}

/* ------------------------------------------------------------ a bad module */

/* A module whose memory lacks its functions is refused at build time. */
static byocl_status half_run(void *ctx, const char *symbol, DLTensor *const *args, int n_in,
                             int n_out, byocl_error *err)
{
    (void)ctx, (void)symbol, (void)args, (void)n_in, (void)n_out;
    return byocl_error_set(err, BYOCL_ERR_RUNTIME, "never called");
}

static bool half_memory(void *ctx, byocl_device_memory *out)
{
    static const byocl_device_memory_i no_download = {.alloc = NULL};
    (void)ctx;
    *out = (byocl_device_memory){.device = {kDLExtDev, 7}, .iface = &no_download};
    return true;
}

static byocl_status half_compile(void *user, const byocl_function *region, byocl_rtmod **out,
                                 byocl_error *err)
{
    (void)user, (void)region;
    static const byocl_rtmod_i iface = {.run = half_run, .memory = half_memory};
    return byocl_rtmod_new("half", &iface, NULL, out, err);
}

static void test_incomplete_memory(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed(failing_text);
    static const char *const targets[] = {"devmem"};
    byocl_compile_options co = byocl_compile_options_default();
    co.partition.targets = targets;
    co.partition.n_targets = 1;
    co.build.target = "ref";
    co.build.region_compile = half_compile;
    byocl_compiled *c = NULL;
    byocl_error err = {0};
    assert_int_equal(byocl_compile(m, &co, &c, &err), BYOCL_ERR_INVALID);
    ts_assert_contains(err.msg, "(@devmem_main_0): runtime module 'half' describes its "
                                "device memory without alloc, free, upload and download, or as "
                                "host memory (kDLCPU)");
    byocl_module_free(m);
}

/* A module made with byocl_rtmod_new_timed keeps its device memory, or its lack of one. */
static int no_parts(void *ctx, const char *symbol)
{
    (void)ctx, (void)symbol;
    return 0;
}

static bool no_part(void *ctx, const char *symbol, int index, byocl_region_part *out)
{
    (void)ctx, (void)symbol, (void)index, (void)out;
    return false;
}

static void test_timed_module_memory(void **state)
{
    (void)state;
    static const byocl_rtmod_parts_i parts = {.count = no_parts, .get = no_part};
    static const byocl_rtmod_i with = {.run = half_run, .memory = half_memory};
    static const byocl_rtmod_i without = {.run = half_run};
    byocl_rtmod *mod = NULL;
    byocl_error err = {0};
    byocl_device_memory mem;
    assert_int_equal(byocl_rtmod_new_timed("timed", &with, &parts, NULL, &mod, &err), BYOCL_OK);
    assert_true(byocl_rtmod_memory(mod, &mem));
    assert_int_equal(mem.device.device_type, kDLExtDev);
    assert_int_equal(mem.device.device_id, 7);
    byocl_rtmod_free(mod);
    assert_int_equal(byocl_rtmod_new_timed("timed", &without, &parts, NULL, &mod, &err), BYOCL_OK);
    assert_false(byocl_rtmod_memory(mod, &mem));
    assert_int_equal(mem.device.device_type, kDLCPU);
    byocl_rtmod_free(mod);
    assert_false(byocl_rtmod_memory(NULL, &mem));
}

/* `byocl run --stats` adds the copies of a run, only when there are any. */
static void test_cli_stats(void **state)
{
    (void)state;
    const char *dir = ts_tmpdir("devmem_cli");
    char model[600], args[1600];
    snprintf(model, sizeof model, "%s/chain.relay", dir);
    ts_write_text(model, "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {\n"
                         "  %0 = add(%x, %y);\n"
                         "  %1 = abs(%0);\n"
                         "  nn.relu(%1)\n"
                         "}\n");
    snprintf(args, sizeof args,
             "--plugin " PLUGIN_PATH " run '%s' --target devmem --random-inputs --stats", model);
    char *out = NULL;
    assert_int_equal(ts_run_cli(args, &out, NULL), 0);
    ts_assert_contains(out, "stats: 3 steps (1 kernel of 1 function, 2 regions)\n");
    ts_assert_contains(out, "  device copies per run: 3 uploads (72 bytes), 2 downloads (48 "
                            "bytes)\n");
    free(out);
    snprintf(args, sizeof args, "run '%s' --target ref --random-inputs --stats", model);
    assert_int_equal(ts_run_cli(args, &out, NULL), 0);
    assert_null(strstr(out, "device copies"));
    free(out);
    ts_remove_tree(dir);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, test_setup, test_teardown)
    const struct CMUnitTest tests[] = {
        T(test_chain_on_one_device), T(test_host_kernel_between), T(test_output_read_later),
        T(test_input_read_twice),    T(test_two_devices),         T(test_views),
        T(test_constant_once),       T(test_alloc_failure),       T(test_upload_failure),
        T(test_download_failure),    T(test_capture),             T(test_incomplete_memory),
        cmocka_unit_test(test_timed_module_memory), cmocka_unit_test(test_cli_stats),
    };
#undef T
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
