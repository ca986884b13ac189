/* The OpenCL runtime module (runtime/opencl/) on PoCL: device listing and choice, one
 * shared context per device, regions run on the executor's tensors (zero-copy and with
 * copies), the program cache (miss, hit, corrupted entries), profiling parts, fallback to
 * the host, large regions built in parallel parts by worker processes, and the faults:
 * no platform, a program that does not build, a buffer the device cannot allocate, bad
 * arguments.
 *
 * Every test uses fresh PoCL and byocl cache folders (set before the first OpenCL call):
 * a warm cache would hide build problems. The no-platform case runs in a child forked
 * before any OpenCL call, with OCL_ICD_VENDORS pointing at an empty folder. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opencl_test_util.h"
#include "byocl/opencl.h"
#include "byocl/pipeline.h"
#include "byocl/reference.h"
#include "byocl/target.h"
#include "opencl/cl_codegen.h"
#include "opencl/opencl_impl.h"

static char pocl_cache[512], byocl_cache[512];
static char no_platform_msg[2048]; /* what the child saw with no ICD */
static int no_platform_status = -1;

/* ------------------------------------------------------------ regions */

/* A module whose @main calls region @opencl_main_0 (`body` over %opencl_0_i0 and, when
 * `two_inputs`, %opencl_0_i1, both Tensor[(2, 5), float32]). */
static byocl_module *region_module(const char *body, bool two_inputs, const char *ret)
{
    char text[2048];
    const char *t = "Tensor[(2, 5), float32]";
    snprintf(text, sizeof text,
             "def @main(%%x: %s%s%s) {\n"
             "  @opencl_main_0(%%x%s)\n"
             "}\n"
             "def @opencl_main_0(%%opencl_0_i0: %s%s%s, Compiler=\"opencl\", Primitive=1, "
             "Inline=1, global_symbol=\"opencl_main_0\") -> %s {\n"
             "  %s\n"
             "}\n",
             t, two_inputs ? ", %y: " : "", two_inputs ? t : "", two_inputs ? ", %y" : "", t,
             two_inputs ? ", %opencl_0_i1: " : "", two_inputs ? t : "", ret, body);
    byocl_error err = {0};
    byocl_module *m = NULL;
    if (byocl_text_parse(text, strlen(text), "region.relay", NULL, &m, &err) != BYOCL_OK ||
        byocl_infer_types(m, &err) != BYOCL_OK)
        fail_msg("%s\n%s", err.msg, text);
    return m;
}

static byocl_module *relu_module(void)
{
    return region_module("nn.relu(%opencl_0_i0)", false, "Tensor[(2, 5), float32]");
}

static const byocl_function *region_of(const byocl_module *m)
{
    const byocl_function *fn = byocl_module_find(m, "opencl_main_0");
    assert_non_null(fn);
    return fn;
}

static byocl_opencl_options options(void)
{
    byocl_opencl_options o = byocl_opencl_options_default();
    o.cache_dir = byocl_cache;
    return o;
}

static byocl_rtmod *compile_ok(const byocl_function *region, const byocl_opencl_options *o)
{
    byocl_rtmod *mod = NULL;
    byocl_error err = {0};
    if (byocl_opencl_compile(region, o, &mod, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    assert_string_equal(byocl_rtmod_name(mod), "opencl");
    return mod;
}

static DLTensor dl_of(byocl_tensor *t)
{
    return (DLTensor){
        .data = byocl_tensor_data(t),
        .device = {kDLCPU, 0},
        .ndim = byocl_tensor_shape(t)->rank,
        .dtype = byocl_dtype_to_dlpack(byocl_tensor_dtype(t)),
        .shape = (int64_t *)byocl_tensor_shape(t)->dims,
        .strides = NULL,
        .byte_offset = 0,
    };
}

static const int64_t dims25[2] = {2, 5};
static const float x_values[10] = {-1.5f, 2, -0.25f, 0, 3.5f, -7, 1, 0.5f, -2, 4};
static const float y_values[10] = {1, -1, 2, -2, 0.5f, 8, -3, 0.25f, 2, -9};

/* Runs `mod` on inputs (in order) into fresh outputs of shape (2, 5). */
static byocl_status run_region(byocl_rtmod *mod, byocl_tensor **in, int n_in,
                               byocl_tensor **out, int n_out, byocl_error *err)
{
    DLTensor dl[4];
    DLTensor *args[4];
    for (int k = 0; k < n_in + n_out; k++) {
        if (k >= n_in)
            out[k - n_in] = ts_tensor_f32(2, dims25, NULL);
        dl[k] = dl_of(k < n_in ? in[k] : out[k - n_in]);
        args[k] = &dl[k];
    }
    return byocl_rtmod_run(mod, "opencl_main_0", args, n_in, n_out, err);
}

/* relu of x_values, written out. */
static const float relu_x[10] = {0, 2, 0, 0, 3.5f, 0, 1, 0.5f, 0, 4};

static void expect_relu_run(byocl_rtmod *mod)
{
    byocl_tensor *x = ts_tensor_f32(2, dims25, x_values), *y = NULL;
    byocl_error err = {0};
    if (run_region(mod, &x, 1, &y, 1, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    ts_assert_f32_close(y, relu_x, 10, 0, 0);
    byocl_tensor_unref(x);
    byocl_tensor_unref(y);
}

/* ------------------------------------------------------------ devices */

static void test_devices_listed(void **state)
{
    (void)state;
    byocl_opencl_device_info *devs = NULL;
    int n = 0;
    byocl_error err = {0};
    assert_int_equal(byocl_opencl_devices(&devs, &n, &err), BYOCL_OK);
    assert_true(n >= 1);
    assert_int_equal(devs[0].index, 0);
    assert_string_equal(devs[0].platform, "Portable Computing Language");
    assert_string_equal(devs[0].type, "CPU");
    assert_true(devs[0].unified_memory);
    assert_true(devs[0].compute_units >= 1);
    assert_true(devs[0].float_vector_width == 4 || devs[0].float_vector_width == 8 ||
                devs[0].float_vector_width == 16); /* a CPU's SIMD width */
    assert_true(devs[0].global_mem_bytes > 0);
    free(devs);
}

static void expect_no_device(const char *spec, const char *source)
{
    byocl_opencl_device_info *devs = NULL;
    int n = 0;
    assert_int_equal(byocl_opencl_devices(&devs, &n, NULL), BYOCL_OK);
    char want[1024];
    snprintf(want, sizeof want,
             "%s '%s' names no OpenCL device: give an index from 0 to %d or a part of a "
             "device's or platform's name (devices: 0: %s (%s)",
             source, spec, n - 1, devs[0].name, devs[0].platform);
    free(devs);
    ocl_device_desc desc;
    byocl_error err = {0};
    assert_int_equal(ocl_choose_device(strcmp(source, "device") == 0 ? spec : NULL, &desc, &err),
                     BYOCL_ERR_NOT_FOUND);
    ts_assert_contains(err.msg, want);
}

static void test_device_choice(void **state)
{
    (void)state;
    ocl_device_desc desc;
    byocl_error err = {0};
    assert_int_equal(ocl_choose_device("0", &desc, &err), BYOCL_OK);
    assert_int_equal(desc.info.index, 0);
    /* a part of the platform's name, in any case */
    assert_int_equal(ocl_choose_device("PORTABLE computing", &desc, &err), BYOCL_OK);
    assert_int_equal(desc.info.index, 0);
    /* a part of the device's name */
    char part[8];
    snprintf(part, sizeof part, "%.6s", desc.info.name);
    assert_int_equal(ocl_choose_device(part, &desc, &err), BYOCL_OK);
    assert_int_equal(desc.info.index, 0);
    expect_no_device("nvidia", "device");
    expect_no_device("99", "device");
    /* the environment variable when no option is given */
    setenv("BYOCL_OPENCL_DEVICE", "radeon", 1);
    expect_no_device("radeon", "BYOCL_OPENCL_DEVICE");
    setenv("BYOCL_OPENCL_DEVICE", "0", 1);
    assert_int_equal(ocl_choose_device(NULL, &desc, &err), BYOCL_OK);
    unsetenv("BYOCL_OPENCL_DEVICE");
    /* no choice: the first GPU or accelerator, else the first device (the CPU here) */
    assert_int_equal(ocl_choose_device(NULL, &desc, &err), BYOCL_OK);
    assert_int_equal(desc.info.index, 0);
    /* byocl_opencl_compile passes the option's failure on */
    byocl_module *m = relu_module();
    byocl_opencl_options o = options();
    o.device = "nvidia";
    byocl_rtmod *mod = NULL;
    assert_int_equal(byocl_opencl_compile(region_of(m), &o, &mod, &err), BYOCL_ERR_NOT_FOUND);
    assert_null(mod);
    ts_assert_contains(err.msg, "device 'nvidia' names no OpenCL device");
    byocl_module_free(m);
    /* The public lookup picks as the options do. */
    byocl_opencl_device_info info;
    assert_int_equal(byocl_opencl_device_find("portable", &info, &err), BYOCL_OK);
    assert_int_equal(info.index, 0);
    assert_string_equal(info.platform, "Portable Computing Language");
    assert_int_equal(byocl_opencl_device_find("nvidia", &info, &err), BYOCL_ERR_NOT_FOUND);
    ts_assert_contains(err.msg, "device 'nvidia' names no OpenCL device");
}

/* The child forked before any OpenCL call saw this with OCL_ICD_VENDORS at an empty folder. */
static void test_no_platform(void **state)
{
    (void)state;
    assert_int_equal(no_platform_status, BYOCL_ERR_UNSUPPORTED);
    assert_string_equal(no_platform_msg,
                        "no OpenCL platform found: the OpenCL ICD loader has no driver to load; "
                        "install an OpenCL driver (ICD) such as pocl-opencl-icd (Debian/Ubuntu: "
                        "apt-get install pocl-opencl-icd), or check OCL_ICD_VENDORS and "
                        "/etc/OpenCL/vendors");
}

static void test_shared_device(void **state)
{
    (void)state;
    byocl_module *m = relu_module();
    byocl_opencl_options o = options();
    assert_int_equal(ocl_device_live_count(), 0);
    byocl_rtmod *a = compile_ok(region_of(m), &o);
    byocl_rtmod *b = compile_ok(region_of(m), &o);
    assert_int_equal(ocl_device_live_count(), 1); /* one context and queue for both */
    o.profile = true;
    byocl_rtmod *c = compile_ok(region_of(m), &o); /* a profiling queue is another */
    assert_int_equal(ocl_device_live_count(), 2);
    expect_relu_run(a);
    expect_relu_run(b);
    expect_relu_run(c);
    byocl_rtmod_free(a);
    assert_int_equal(ocl_device_live_count(), 2);
    byocl_rtmod_free(b);
    byocl_rtmod_free(c);
    assert_int_equal(ocl_device_live_count(), 0);

    /* Kept open: the device outlives its modules, and the next module gets the same one. */
    o.profile = false;
    a = compile_ok(region_of(m), &o);
    o.keep_device = true; /* keeps the device a uses too: it is the same one */
    b = compile_ok(region_of(m), &o);
    o.profile = true;
    c = compile_ok(region_of(m), &o);
    byocl_rtmod_free(a);
    byocl_rtmod_free(b);
    byocl_rtmod_free(c);
    assert_int_equal(ocl_device_live_count(), 2);
    o.profile = false;
    a = compile_ok(region_of(m), &o);
    assert_int_equal(ocl_device_live_count(), 2);
    expect_relu_run(a);
    /* Closing keeps what a module still uses, until that module goes. */
    byocl_opencl_close_devices();
    assert_int_equal(ocl_device_live_count(), 1);
    byocl_rtmod_free(a);
    assert_int_equal(ocl_device_live_count(), 0);
    /* Not kept: a device closes with its last module. */
    o.keep_device = false;
    a = compile_ok(region_of(m), &o);
    byocl_rtmod_free(a);
    assert_int_equal(ocl_device_live_count(), 0);
    /* Through the target: option keep_device, and unregistering the target closes what it
     * kept. */
    byocl_error err = {0};
    assert_int_equal(byocl_target_register_builtins(&err), BYOCL_OK);
    byocl_target_options *topts = NULL;
    assert_int_equal(byocl_target_options_new(&topts, &err), BYOCL_OK);
    assert_int_equal(byocl_target_options_parse(topts, "opencl.keep_device=on", &err), BYOCL_OK);
    byocl_build_options bo = byocl_build_options_default();
    bo.threads = 1;
    bo.target_options = topts;
    byocl_compiled *c1 = NULL;
    if (byocl_build(m, &bo, &c1, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    byocl_compiled_free(c1);
    assert_int_equal(ocl_device_live_count(), 1);
    byocl_target_registry_reset();
    assert_int_equal(ocl_device_live_count(), 0);
    byocl_target_options_free(topts);
    byocl_module_free(m);
}

/* ------------------------------------------------------------ running */

static void test_relu_runs_zero_copy(void **state)
{
    (void)state;
    byocl_module *m = relu_module();
    byocl_opencl_options o = options();
    /* AUTO on a CPU device wraps the executor's memory */
    ocl_device_desc desc;
    ocl_device *dev = NULL;
    assert_int_equal(ocl_choose_device(NULL, &desc, NULL), BYOCL_OK);
    assert_int_equal(ocl_device_acquire(&desc, false, BYOCL_OPENCL_BUFFERS_AUTO, &dev, NULL),
                     BYOCL_OK);
    assert_true(dev->zero_copy);
    ocl_device_release(dev);
    byocl_rtmod *mod = compile_ok(region_of(m), &o);
    /* each call binds the tensors it is given: new ones every time here */
    for (int i = 0; i < 3; i++)
        expect_relu_run(mod);
    /* the same tensors with new values (an executor's buffers across runs): the kernels
     * see the new inputs, the host sees the new outputs (these short calls poll for the
     * end of their commands: wait_for_queue) */
    byocl_tensor *x = ts_tensor_f32(2, dims25, x_values), *y = ts_tensor_f32(2, dims25, NULL);
    DLTensor dx = dl_of(x), dy = dl_of(y);
    DLTensor *args[2] = {&dx, &dy};
    float *xs = byocl_tensor_data(x);
    for (int run = 0; run < 3; run++) {
        float want[10];
        for (int i = 0; i < 10; i++) {
            xs[i] = x_values[i] * (float)(run % 2 ? -run : run + 1);
            want[i] = xs[i] > 0 ? xs[i] : 0;
        }
        assert_int_equal(byocl_rtmod_run(mod, "opencl_main_0", args, 1, 1, NULL), BYOCL_OK);
        ts_assert_f32_close(y, want, 10, 0, 0);
    }
    byocl_tensor_unref(x);
    byocl_tensor_unref(y);
    byocl_rtmod_free(mod);
    byocl_module_free(m);
}

/* Two inputs, two outputs (a tuple): (relu(x + y), abs(x) * y). */
static void expect_two_outputs(byocl_opencl_buffers buffers)
{
    byocl_module *m = region_module(
        "%0 = add(%opencl_0_i0, %opencl_0_i1);\n  %1 = nn.relu(%0);\n"
        "  %2 = abs(%opencl_0_i0);\n  %3 = multiply(%2, %opencl_0_i1);\n  (%1, %3)",
        true, "(Tensor[(2, 5), float32], Tensor[(2, 5), float32])");
    byocl_opencl_options o = options();
    o.buffers = buffers;
    byocl_rtmod *mod = compile_ok(region_of(m), &o);
    byocl_tensor *in[2] = {ts_tensor_f32(2, dims25, x_values), ts_tensor_f32(2, dims25, y_values)};
    byocl_tensor *out[2] = {NULL, NULL};
    byocl_error err = {0};
    for (int run = 0; run < 2; run++) {
        for (int i = 0; i < 2; i++)
            byocl_tensor_unref(out[i]);
        if (run_region(mod, in, 2, out, 2, &err) != BYOCL_OK)
            fail_msg("%s", err.msg);
    }
    float want0[10], want1[10];
    for (int i = 0; i < 10; i++) {
        float s = x_values[i] + y_values[i];
        want0[i] = s > 0 ? s : 0;
        want1[i] = fabsf(x_values[i]) * y_values[i];
    }
    ts_assert_f32_close(out[0], want0, 10, 0, 0);
    ts_assert_f32_close(out[1], want1, 10, 0, 0);
    for (int i = 0; i < 2; i++) {
        byocl_tensor_unref(in[i]);
        byocl_tensor_unref(out[i]);
    }
    byocl_rtmod_free(mod);
    byocl_module_free(m);
}

static void test_two_outputs_zero_copy(void **state)
{
    (void)state;
    expect_two_outputs(BYOCL_OPENCL_BUFFERS_ZERO_COPY);
}

/* What a discrete GPU does: device buffers, written and read back on every call. */
static void test_two_outputs_with_copies(void **state)
{
    (void)state;
    expect_two_outputs(BYOCL_OPENCL_BUFFERS_COPY);
}

static void test_run_argument_errors(void **state)
{
    (void)state;
    byocl_module *m = relu_module();
    byocl_opencl_options o = options();
    byocl_rtmod *mod = compile_ok(region_of(m), &o);
    byocl_tensor *x = ts_tensor_f32(2, dims25, x_values), *y = ts_tensor_f32(2, dims25, NULL);
    int64_t dims33[2] = {3, 3};
    byocl_tensor *wrong = ts_tensor_f32(2, dims33, NULL);
    DLTensor dx = dl_of(x), dy = dl_of(y), dw = dl_of(wrong);
    DLTensor *args[2] = {&dx, &dy};
    byocl_error err = {0};
    assert_int_equal(byocl_rtmod_run(mod, "opencl_main_7", args, 1, 1, &err),
                     BYOCL_ERR_NOT_FOUND);
    assert_string_equal(err.msg,
                        "this OpenCL runtime module runs opencl_main_0, not opencl_main_7");
    assert_int_equal(byocl_rtmod_run(mod, "opencl_main_0", args, 2, 0, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "region @opencl_main_0 takes 1 input and 1 output, got 2 and 0");
    args[1] = &dw;
    assert_int_equal(byocl_rtmod_run(mod, "opencl_main_0", args, 1, 1, &err), BYOCL_ERR_TYPE);
    assert_string_equal(err.msg, "region @opencl_main_0, output 0: expected Tensor[(2, 5), "
                                 "float32], got Tensor[(3, 3), float32]");
    byocl_tensor_unref(x);
    byocl_tensor_unref(y);
    byocl_tensor_unref(wrong);
    byocl_rtmod_free(mod);
    byocl_module_free(m);
}

/* -------------------------------------------------------------- cache */

static char *entry_of(const byocl_function *region, bool profile)
{
    byocl_cl_plan *plan = NULL;
    byocl_error err = {0};
    ocl_device_desc desc;
    ocl_device *dev = NULL;
    assert_int_equal(ocl_choose_device(NULL, &desc, &err), BYOCL_OK);
    assert_int_equal(ocl_device_acquire(&desc, profile, BYOCL_OPENCL_BUFFERS_AUTO, &dev, &err),
                     BYOCL_OK);
    byocl_cl_codegen_options copt = {.compute_units = dev->info.compute_units};
    assert_int_equal(clg_codegen(region, &copt, &plan, &err), BYOCL_OK);
    char *path = NULL;
    assert_int_equal(ocl_cache_entry_path(byocl_cache, dev, plan->source, plan->build_options,
                                          &path, &err),
                     BYOCL_OK);
    clg_plan_free(plan);
    ocl_device_release(dev);
    return path;
}

/* Files in the cache folder whose names contain `part`. */
static int count_files(const char *part)
{
    DIR *d = opendir(byocl_cache);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strstr(e->d_name, part) != NULL;
    closedir(d);
    return n;
}

static void compile_and_run(const byocl_function *region)
{
    byocl_opencl_options o = options();
    byocl_rtmod *mod = compile_ok(region, &o);
    expect_relu_run(mod);
    byocl_rtmod_free(mod);
}

static void expect_stats(int hits, int misses, int corrupt, int stored)
{
    ocl_cache_stats s = ocl_cache_stats_get();
    assert_int_equal(s.hits, hits);
    assert_int_equal(s.misses, misses);
    assert_int_equal(s.corrupt, corrupt);
    assert_int_equal(s.stored, stored);
    assert_int_equal(s.rejected, 0);
}

/* The .so files under `dir`, at any depth. */
static int count_shared_objects(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat sb;
        size_t len = strlen(e->d_name);
        if (lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
            n += count_shared_objects(path);
        else
            n += len > 3 && strcmp(e->d_name + len - 3, ".so") == 0;
    }
    closedir(d);
    return n;
}

/* A cold build stores the program binary and runs it once: PoCL compiles the kernel once
 * (its compiled kernels are the .so files of its cache), not once for the binary and
 * again for the launch (opencl_device.c, avoid_second_compilation). */
static void test_each_kernel_compiled_once(void **state)
{
    (void)state;
    ts_remove_tree(byocl_cache);
    assert_int_equal(count_shared_objects(pocl_cache), 0); /* the process's first program */
    byocl_module *m = relu_module();
    compile_and_run(region_of(m));
    assert_int_equal(count_shared_objects(pocl_cache), 1);
    assert_string_equal(getenv("POCL_WORK_GROUP_SPECIALIZATION"), "0");
    byocl_module_free(m);
}

static void test_cache_miss_then_hit(void **state)
{
    (void)state;
    ts_remove_tree(byocl_cache);
    ocl_cache_stats_reset();
    byocl_module *m = relu_module();
    char *path = entry_of(region_of(m), false);
    compile_and_run(region_of(m)); /* the folder is made on first use */
    expect_stats(0, 1, 0, 1);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(count_files(".tmp"), 0); /* written by a rename */
    assert_int_equal(count_files(".clbin"), 1);
    char *data = ts_read_file(path, NULL);
    assert_memory_equal(data, "BYOCLPC1", 8);
    free(data);
    compile_and_run(region_of(m));
    expect_stats(1, 1, 0, 1);
    /* The profiling queue does not change the program: the same entry serves it. */
    char *profiled = entry_of(region_of(m), true);
    assert_string_equal(profiled, path);
    free(profiled);
    /* Another program (other build options would do too) is another entry. */
    byocl_module *m2 = region_module("abs(%opencl_0_i0)", false, "Tensor[(2, 5), float32]");
    char *other = entry_of(region_of(m2), false);
    assert_string_not_equal(other, path);
    free(other);
    byocl_module_free(m2);
    /* cache_dir "" turns the cache off */
    byocl_opencl_options o = options();
    o.cache_dir = "";
    byocl_rtmod *mod = compile_ok(region_of(m), &o);
    byocl_rtmod_free(mod);
    expect_stats(1, 1, 0, 1);
    free(path);
    byocl_module_free(m);
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

static void test_cache_corruption_rebuilds(void **state)
{
    (void)state;
    ts_remove_tree(byocl_cache);
    ocl_cache_stats_reset();
    byocl_module *m = relu_module();
    char *path = entry_of(region_of(m), false);
    compile_and_run(region_of(m));
    expect_stats(0, 1, 0, 1);
    size_t len = 0;
    char *good = ts_read_file(path, &len);
    assert_true(len > 64);

    /* a flipped byte in the binary: the checksum catches it */
    char *bad = malloc(len);
    assert_non_null(bad);
    memcpy(bad, good, len);
    bad[len - 1] ^= 0x5a;
    write_file(path, bad, len);
    compile_and_run(region_of(m));
    expect_stats(0, 1, 1, 2); /* rebuilt and stored again */
    char *again = ts_read_file(path, NULL);
    assert_memory_equal(again, good, len);
    free(again);

    /* a truncated entry (a crash while writing it somewhere without rename) */
    write_file(path, good, 40);
    compile_and_run(region_of(m));
    expect_stats(0, 1, 2, 3);

    /* another program's valid entry under this name: the stored key differs */
    byocl_module *m2 = region_module("abs(%opencl_0_i0)", false, "Tensor[(2, 5), float32]");
    char *other = entry_of(region_of(m2), false);
    byocl_opencl_options o = options();
    byocl_rtmod *mod = compile_ok(region_of(m2), &o);
    byocl_rtmod_free(mod);
    expect_stats(0, 2, 2, 4);
    size_t other_len = 0;
    char *foreign = ts_read_file(other, &other_len);
    write_file(path, foreign, other_len);
    compile_and_run(region_of(m));
    expect_stats(0, 2, 3, 5);
    compile_and_run(region_of(m)); /* and the rewritten entry is good */
    expect_stats(1, 2, 3, 5);
    free(foreign);
    free(other);
    byocl_module_free(m2);
    free(bad);
    free(good);
    free(path);
    byocl_module_free(m);
}

/* ------------------------------------------------------------ profiling */

static void test_profile_parts(void **state)
{
    (void)state;
    byocl_module *m = region_module("%0 = nn.softmax(%opencl_0_i0);\n  %1 = nn.relu(%0);\n"
                                    "  nn.softmax(%1)",
                                    false, "Tensor[(2, 5), float32]");
    byocl_opencl_options o = options();
    byocl_rtmod *plain = compile_ok(region_of(m), &o);
    assert_int_equal(byocl_rtmod_num_parts(plain, "opencl_main_0"), 0);
    byocl_rtmod_free(plain);

    o.profile = true;
    byocl_rtmod *mod = compile_ok(region_of(m), &o);
    int n = byocl_rtmod_num_parts(mod, "opencl_main_0");
    assert_true(n >= 4); /* transfers, at least the two softmax kernels, the gaps */
    assert_int_equal(byocl_rtmod_num_parts(mod, "opencl_main_1"), 0);
    byocl_tensor *x = ts_tensor_f32(2, dims25, x_values), *y = NULL;
    for (int run = 0; run < 3; run++) {
        byocl_tensor_unref(y);
        assert_int_equal(run_region(mod, &x, 1, &y, 1, NULL), BYOCL_OK);
    }
    byocl_region_part p;
    assert_true(byocl_rtmod_part(mod, "opencl_main_0", 0, &p));
    assert_string_equal(p.name, "transfers");
    assert_null(p.kernel);
    assert_true(p.transfer);
    assert_false(p.between_kernels);
    assert_int_equal(p.runs, 3);
    double kernel_ms = 0;
    for (int i = 1; i < n - 1; i++) {
        assert_true(byocl_rtmod_part(mod, "opencl_main_0", i, &p));
        assert_false(p.transfer);
        assert_false(p.between_kernels);
        assert_non_null(p.kernel);
        assert_true(strlen(p.name) > 0);
        assert_int_equal(p.runs, 3);
        assert_true(p.min_ms <= p.last_ms && p.min_ms * 3 <= p.total_ms + 1e-12);
        kernel_ms += p.total_ms;
    }
    assert_true(kernel_ms > 0); /* event times were read */
    /* The last part: the device idle between consecutive kernels, once per call. */
    assert_true(byocl_rtmod_part(mod, "opencl_main_0", n - 1, &p));
    assert_string_equal(p.name, "gaps between kernels");
    assert_null(p.kernel);
    assert_false(p.transfer);
    assert_true(p.between_kernels);
    assert_int_equal(p.runs, 3);
    assert_true(p.min_ms >= 0 && p.min_ms <= p.last_ms && p.min_ms * 3 <= p.total_ms + 1e-12);
    assert_false(byocl_rtmod_part(mod, "opencl_main_0", n, &p));
    byocl_tensor_unref(x);
    byocl_tensor_unref(y);
    byocl_rtmod_free(mod);
    byocl_module_free(m);
}

/* Profiling through byocl_build and the compiled model's parts API. */
static void test_profile_through_build(void **state)
{
    (void)state;
    byocl_module *m = relu_module();
    byocl_error err = {0};
    byocl_target_options *topts = NULL;
    assert_int_equal(byocl_target_options_new(&topts, &err), BYOCL_OK);
    assert_int_equal(byocl_target_options_parse(topts, "opencl.profile=on", &err), BYOCL_OK);
    assert_int_equal(byocl_target_options_set(topts, "opencl", "cache_dir", byocl_cache, &err),
                     BYOCL_OK);
    byocl_build_options bo = byocl_build_options_default();
    bo.threads = 1;
    bo.target_options = topts;
    byocl_compiled *c = NULL;
    byocl_executor *ex = NULL;
    if (byocl_build(m, &bo, &c, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(byocl_executor_new(c, &ex, &err), BYOCL_OK);
    byocl_tensor *x = ts_tensor_f32(2, dims25, x_values);
    assert_int_equal(byocl_executor_set_input(ex, "x", x, &err), BYOCL_OK);
    for (int i = 0; i < 2; i++)
        assert_int_equal(byocl_executor_run(ex, &err), BYOCL_OK);
    const byocl_tensor *out;
    assert_int_equal(byocl_executor_output(ex, 0, &out, &err), BYOCL_OK);
    ts_assert_f32_close(out, relu_x, 10, 0, 0);
    assert_int_equal(byocl_executor_num_steps(ex), 1);
    byocl_step_info info;
    assert_int_equal(byocl_executor_step(ex, 0, &info, &err), BYOCL_OK);
    assert_string_equal(info.runner, "opencl");
    /* transfers, the relu, the gaps between kernels */
    assert_int_equal(byocl_compiled_num_step_parts(c, 0), 3);
    byocl_region_part p;
    assert_int_equal(byocl_compiled_step_part(c, 0, 1, &p, &err), BYOCL_OK);
    assert_int_equal(p.runs, 2);
    assert_int_equal(byocl_compiled_step_part(c, 0, 2, &p, &err), BYOCL_OK);
    assert_true(p.between_kernels);
    assert_int_equal(p.runs, 2);
    assert_true(p.total_ms == 0); /* one kernel: nothing between kernels */
    byocl_compiled_reset_parts(c);
    assert_int_equal(byocl_compiled_step_part(c, 0, 1, &p, &err), BYOCL_OK);
    assert_int_equal(p.runs, 0);
    assert_int_equal(byocl_compiled_step_part(c, 0, 3, &p, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "part 3 is out of range: step 0 (opencl_main_0) has 3 timed "
                                 "parts");
    assert_int_equal(byocl_compiled_step_part(c, 1, 0, &p, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "step 1 is not a region step of the compiled model");
    assert_int_equal(byocl_compiled_num_step_parts(c, 5), 0);
    byocl_tensor_unref(x);
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    byocl_module_free(m);
    byocl_target_options_free(topts);
    byocl_target_registry_reset();
}

/* ---------------------------------------------------------------- faults */

/* A plan for the relu region, to break on purpose. */
static byocl_cl_plan *relu_plan(const byocl_function *region)
{
    byocl_cl_plan *plan = NULL;
    byocl_error err = {0};
    if (clg_codegen(region, NULL, &plan, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return plan;
}

static ocl_device *default_device(void)
{
    ocl_device_desc desc;
    ocl_device *dev = NULL;
    assert_int_equal(ocl_choose_device(NULL, &desc, NULL), BYOCL_OK);
    assert_int_equal(ocl_device_acquire(&desc, false, BYOCL_OPENCL_BUFFERS_AUTO, &dev, NULL),
                     BYOCL_OK);
    return dev;
}

static int count_lines(const char *s)
{
    int n = 1;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void test_build_failure_names_kernel(void **state)
{
    (void)state;
    byocl_module *m = relu_module();
    ocl_device *dev = default_device();
    byocl_cl_plan *plan = relu_plan(region_of(m));
    /* a kernel of our own at the end of the program, with an error on its second line */
    static const char broken[] = "\n__kernel void broken_kernel(__global float *y)\n"
                                 "{\n    y[0] = undeclared_value;\n}\n";
    size_t len = strlen(plan->source);
    char *src = realloc(plan->source, len + sizeof broken);
    assert_non_null(src);
    memcpy(src + len, broken, sizeof broken);
    plan->source = src;
    int line = count_lines(src) - 2; /* the line of the error */
    ocl_rtmod_options ropt = {.cache_dir = NULL};
    byocl_rtmod *mod = NULL;
    byocl_error err = {0};
    assert_int_equal(ocl_rtmod_new(dev, region_of(m), plan, &ropt, &mod, &err),
                     BYOCL_ERR_RUNTIME);
    assert_null(mod);
    char want[512];
    snprintf(want, sizeof want,
             "region @opencl_main_0: the OpenCL program does not build on device 0 (%s): "
             "CL_BUILD_PROGRAM_FAILURE (-11) in kernel broken_kernel (line %d of the program); "
             "build log:\n",
             dev->info.name, line);
    ts_assert_contains(err.msg, want);
    ts_assert_contains(err.msg, "undeclared_value"); /* the log itself */

    /* an error inside a generated kernel (after the #define that names it) names that
     * kernel */
    plan = relu_plan(region_of(m));
    const char *kernel = plan->launches[0].kernel;
    char define[128];
    snprintf(define, sizeof define, "#define KNAME %s\n", kernel);
    const char *at = strstr(plan->source, define);
    assert_non_null(at);
    static const char bad_line[] = "float byocl_broken = undeclared_value;\n";
    size_t head = (size_t)(at - plan->source) + strlen(define);
    len = strlen(plan->source);
    src = malloc(len + sizeof bad_line);
    assert_non_null(src);
    memcpy(src, plan->source, head);
    src[head] = '\0';
    line = count_lines(src); /* the bad line's number */
    memcpy(src + head, bad_line, sizeof bad_line - 1);
    memcpy(src + head + sizeof bad_line - 1, plan->source + head, len - head + 1);
    free(plan->source);
    plan->source = src;
    snprintf(want, sizeof want, "in kernel %s (line %d of the program); build log:\n", kernel,
             line);
    assert_int_equal(ocl_rtmod_new(dev, region_of(m), plan, &ropt, &mod, &err),
                     BYOCL_ERR_RUNTIME);
    ts_assert_contains(err.msg, want);
    ocl_device_release(dev);
    byocl_module_free(m);
}

/* Adds a scratch buffer of `bytes` to the plan; returns its index. */
static int add_scratch(byocl_cl_plan *plan, size_t bytes)
{
    size_t *sizes = realloc(plan->scratch_bytes, ((size_t)plan->n_scratch + 1) * sizeof *sizes);
    assert_non_null(sizes);
    plan->scratch_bytes = sizes;
    sizes[plan->n_scratch] = bytes;
    return plan->n_scratch++;
}

static void test_allocation_failure(void **state)
{
    (void)state;
    byocl_module *m = relu_module();
    ocl_device *dev = default_device();
    byocl_cl_plan *plan = relu_plan(region_of(m));
    add_scratch(plan, (size_t)1 << 60); /* a buffer nobody uses, absurdly big */
    int plan_scratch = plan->n_scratch; /* the plan is the module's (freed) after the call */
    ocl_rtmod_options ropt = {.cache_dir = NULL};
    byocl_rtmod *mod = NULL;
    byocl_error err = {0};
    assert_int_equal(ocl_rtmod_new(dev, region_of(m), plan, &ropt, &mod, &err), BYOCL_ERR_NOMEM);
    char want[512];
    snprintf(want, sizeof want,
             "region @opencl_main_0: scratch buffer %d needs 1152921504606846976 bytes, more "
             "than OpenCL device 0 (%s) allocates at once (%llu bytes)",
             plan_scratch - 1, dev->info.name, (unsigned long long)dev->max_alloc);
    assert_string_equal(err.msg, want);
    ocl_device_release(dev);
    byocl_module_free(m);
}

/* --------------------------------------------------------------- fallback */

typedef struct fallback_note {
    int calls;
    char region[64];
    char reason[512];
} fallback_note;

static void note_fallback(void *user, const char *region, const char *reason)
{
    fallback_note *n = user;
    n->calls++;
    snprintf(n->region, sizeof n->region, "%s", region);
    snprintf(n->reason, sizeof n->reason, "%s", reason);
}

static void test_fallback_to_host(void **state)
{
    (void)state;
    byocl_module *m = relu_module();
    byocl_error err = {0};
    /* The default device is chosen at compile time: a wrong one fails the region's compile
     * (a wrong opencl.device option would fail the build's option check instead). */
    setenv("BYOCL_OPENCL_DEVICE", "no such device", 1);
    byocl_build_options bo = byocl_build_options_default();
    bo.threads = 1;
    byocl_compiled *c = NULL;
    /* without a fallback the build fails where the region is called */
    assert_int_equal(byocl_build(m, &bo, &c, &err), BYOCL_ERR_NOT_FOUND);
    ts_assert_contains(err.msg,
                       "in @main, the result (@opencl_main_0) at 2:3: BYOCL_OPENCL_DEVICE 'no such "
                       "device' names no OpenCL device");
    bo.fallback = "cpu";
    assert_int_equal(byocl_build(m, &bo, &c, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "unknown fallback 'cpu' for regions (known: host, ref)");
    const char *fallbacks[2] = {"host", "ref"};
    for (int f = 0; f < 2; f++) {
        fallback_note note = {0};
        bo.fallback = fallbacks[f];
        bo.on_fallback = note_fallback;
        bo.fallback_user = &note;
        if (byocl_build(m, &bo, &c, &err) != BYOCL_OK)
            fail_msg("%s", err.msg);
        assert_int_equal(note.calls, 1);
        assert_string_equal(note.region, "opencl_main_0");
        ts_assert_contains(note.reason,
                           "BYOCL_OPENCL_DEVICE 'no such device' names no OpenCL device");
        byocl_executor *ex = NULL;
        assert_int_equal(byocl_executor_new(c, &ex, &err), BYOCL_OK);
        byocl_tensor *x = ts_tensor_f32(2, dims25, x_values);
        assert_int_equal(byocl_executor_set_input(ex, "x", x, &err), BYOCL_OK);
        assert_int_equal(byocl_executor_run(ex, &err), BYOCL_OK);
        const byocl_tensor *out;
        assert_int_equal(byocl_executor_output(ex, 0, &out, &err), BYOCL_OK);
        ts_assert_f32_close(out, relu_x, 10, 0, 0);
        byocl_step_info info;
        assert_int_equal(byocl_executor_step(ex, 0, &info, &err), BYOCL_OK);
        assert_string_equal(info.runner, fallbacks[f]); /* the host module, or ref */
        byocl_tensor_unref(x);
        byocl_executor_free(ex);
        byocl_compiled_free(c);
    }
    unsetenv("BYOCL_OPENCL_DEVICE");
    byocl_module_free(m);
    byocl_target_registry_reset();
}

/* A target without compile: its regions run on the ref region module. */
static bool claims_relu(void *ctx, const byocl_function *fn, int node, char *why, size_t len)
{
    (void)ctx;
    (void)why;
    (void)len;
    const char *op = byocl_node_op(fn, node);
    return op && strcmp(op, "nn.relu") == 0;
}

static void test_target_without_compile(void **state)
{
    (void)state;
    byocl_target_i t = {.name = "nocompile", .api_version = BYOCL_TARGET_API_VERSION,
                        .supports = claims_relu};
    byocl_error err = {0};
    assert_int_equal(byocl_target_register(&t, &err), BYOCL_OK);
    byocl_module *m = NULL;
    const char *text = "def @main(%x: Tensor[(2, 5), float32]) { nn.relu(%x) }";
    assert_int_equal(byocl_text_parse(text, strlen(text), "t.relay", NULL, &m, &err), BYOCL_OK);
    const char *targets[1] = {"nocompile"};
    byocl_compile_options co = byocl_compile_options_default();
    co.partition.targets = targets;
    co.partition.n_targets = 1;
    byocl_compiled *c = NULL;
    if (byocl_compile(m, &co, &c, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    byocl_executor *ex = NULL;
    assert_int_equal(byocl_executor_new(c, &ex, &err), BYOCL_OK);
    byocl_step_info info;
    assert_int_equal(byocl_executor_step(ex, 0, &info, &err), BYOCL_OK);
    assert_string_equal(info.runner, "ref");
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    byocl_module_free(m);
    byocl_target_registry_reset();
}

/* ----------------------------------------------------- parallel builds */

/* A depthwise convolution and four convolutions of different shapes, with their weights
 * as inputs: a depthwise kernel (build cost 8), four conv2d kernels and three input
 * layouts (3 each) and the weights' packing launches, enough for two parts (12 each). */
static byocl_module *five_convs(void)
{
    return ts_parse_typed(
        "def @main(%x: Tensor[(1, 8, 12, 12), float32], %wd: Tensor[(8, 1, 3, 3), float32], "
        "%w1: Tensor[(8, 8, 3, 3), float32], "
        "%w2: Tensor[(16, 8, 3, 3), float32], %w3: Tensor[(16, 16, 3, 3), float32], "
        "%w4: Tensor[(8, 16, 1, 1), float32]) {\n"
        "  %d = nn.conv2d(%x, %wd, padding=[1, 1, 1, 1], groups=8);\n"
        "  %0 = nn.conv2d(%d, %w1, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3]);\n"
        "  %1 = nn.relu(%0);\n"
        "  %2 = nn.conv2d(%1, %w2, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3]);\n"
        "  %3 = nn.conv2d(%2, %w3, strides=[2, 2], padding=[1, 1, 1, 1], channels=16, "
        "kernel_size=[3, 3]);\n"
        "  nn.conv2d(%3, %w4, padding=[0, 0, 0, 0], channels=8, kernel_size=[1, 1])\n"
        "}\n");
}

/* Builds `m` with its ops on OpenCL, runs it against the reference executor and returns
 * what the build did to the process's program totals. */
static byocl_opencl_build_totals build_and_check(const byocl_module *m)
{
    byocl_error err = {0};
    int n_in = 0, n_want = 0;
    byocl_tensor **want = NULL;
    byocl_tensor **inputs = ocl_reference_case(m, 40, -1, 1, &n_in, &want, &n_want);
    byocl_opencl_build_totals before, after;
    byocl_opencl_build_totals_get(&before);
    byocl_compiled *c = ocl_compile(m);
    byocl_opencl_build_totals_get(&after);
    byocl_executor *ex = NULL;
    assert_int_equal(byocl_executor_new(c, &ex, &err), BYOCL_OK);
    for (int k = 0; k < n_in; k++)
        assert_int_equal(byocl_executor_set_input(ex, byocl_compiled_input_name(c, k), inputs[k],
                                                  &err),
                         BYOCL_OK);
    if (byocl_executor_run(ex, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    const byocl_tensor *got;
    assert_int_equal(byocl_executor_output(ex, 0, &got, &err), BYOCL_OK);
    double e = ts_relative_l2(got, want[0]);
    if (e > OCL_TOL_F32)
        fail_msg("relative L2 error %g against the reference", e);
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    ocl_reference_case_free(inputs, n_in, want, n_want);
    return (byocl_opencl_build_totals){
        .compiled = after.compiled - before.compiled,
        .loaded = after.loaded - before.loaded,
        .compiled_by_workers = after.compiled_by_workers - before.compiled_by_workers,
    };
}

static void expect_totals(byocl_opencl_build_totals t, int compiled, int by_workers, int loaded)
{
    assert_int_equal(t.compiled, compiled);
    assert_int_equal(t.compiled_by_workers, by_workers);
    assert_int_equal(t.loaded, loaded);
}

/* Two build jobs: this process compiles one part while a worker compiles the other into
 * the cache; the next build loads both; one job builds the whole program as one. */
/* A dense block's concatenations, in place: the runtime makes each slice a sub-buffer
 * (the plan's slices, cl_concat.c), and the results are the reference's. */
static void test_concat_slices(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed(
        "def @main(%x: Tensor[(1, 8, 6, 6), float32], %w1: Tensor[(8, 8, 3, 3), float32], "
        "%w2: Tensor[(8, 16, 3, 3), float32]) {\n"
        "  %0 = nn.relu(%x);\n"
        "  %1 = nn.conv2d(%0, %w1, padding=[1, 1, 1, 1]);\n"
        "  %2 = concatenate((%0, %1), axis=1);\n"
        "  %3 = nn.conv2d(%2, %w2, padding=[1, 1, 1, 1]);\n"
        "  %4 = concatenate((%0, %1, %3), axis=1);\n"
        "  nn.relu(%4)\n"
        "}\n");
    build_and_check(m);
    byocl_module_free(m);
}

/* Slices that the device cannot make are refused, naming the slice and why. */
static void test_slice_errors(void **state)
{
    (void)state;
    static const struct {
        size_t offset, bytes;
        byocl_status status;
        const char *want;
    } cases[] = {
        {4, 64, BYOCL_ERR_INVALID,
         "region @opencl_main_0: slice 0 starts at byte 4 of scratch buffer %d, not a "
         "multiple of OpenCL device 0 (%s)'s base address alignment (%d bytes); the plan was "
         "generated for another device"},
        {0, 2048, BYOCL_ERR_INVALID,
         "region @opencl_main_0: slice 0 (2048 bytes at 0) does not lie in scratch buffer %d"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        byocl_module *m = relu_module();
        ocl_device *dev = default_device();
        byocl_cl_plan *plan = relu_plan(region_of(m));
        int scratch = add_scratch(plan, 1024);
        free(plan->slices); /* none: a relu has no concatenation */
        plan->slices = calloc(1, sizeof *plan->slices);
        assert_non_null(plan->slices);
        plan->slices[0] = (byocl_cl_slice){.scratch = scratch, .offset = cases[i].offset,
                                           .bytes = cases[i].bytes};
        plan->n_slices = 1;
        ocl_rtmod_options ropt = {.cache_dir = NULL};
        byocl_rtmod *mod = NULL;
        byocl_error err = {0};
        assert_int_equal(ocl_rtmod_new(dev, region_of(m), plan, &ropt, &mod, &err),
                         cases[i].status);
        char want[512];
        snprintf(want, sizeof want, cases[i].want, scratch, dev->info.name,
                 dev->info.mem_base_align);
        assert_string_equal(err.msg, want);
        ocl_device_release(dev);
        byocl_module_free(m);
    }
}

static void test_parallel_build(void **state)
{
    (void)state;
    ts_remove_tree(byocl_cache);
    char path[4096];
    assert_non_null(ocl_build_worker_path(path, sizeof path));
    ts_assert_contains(path, "/tools/byocl-opencl-build");
    byocl_module *m = five_convs();
    setenv("BYOCL_OPENCL_BUILD_JOBS", "2", 1);
    expect_totals(build_and_check(m), 2, 1, 0);
    assert_int_equal(count_files(".clbin"), 2);
    assert_int_equal(count_files("part-"), 0); /* the parts' sources handed to the worker */
    expect_totals(build_and_check(m), 0, 0, 2);
    setenv("BYOCL_OPENCL_BUILD_JOBS", "1", 1);
    expect_totals(build_and_check(m), 1, 0, 0);
    assert_int_equal(count_files(".clbin"), 3);
    /* A small region is one program whatever the jobs. */
    setenv("BYOCL_OPENCL_BUILD_JOBS", "8", 1);
    byocl_module *small = relu_module();
    compile_and_run(region_of(small));
    assert_int_equal(count_files(".clbin"), 4);
    byocl_module_free(small);
    unsetenv("BYOCL_OPENCL_BUILD_JOBS");
    byocl_module_free(m);
    byocl_target_registry_reset();
}

/* What a worker does not deliver is compiled here: a worker that fails, none at all, and
 * without a cache folder the parts go through a temporary one, removed afterwards. */
static void test_parallel_build_fallbacks(void **state)
{
    (void)state;
    byocl_module *m = five_convs();
    setenv("BYOCL_OPENCL_BUILD_JOBS", "2", 1);
    ts_remove_tree(byocl_cache);
    setenv("BYOCL_OPENCL_BUILD_WORKER", "/bin/false", 1);
    expect_totals(build_and_check(m), 2, 0, 0);
    assert_int_equal(count_files(".clbin"), 2);
    ts_remove_tree(byocl_cache);
    setenv("BYOCL_OPENCL_BUILD_WORKER", "", 1); /* workers off: one program */
    char path[16];
    assert_null(ocl_build_worker_path(path, sizeof path));
    expect_totals(build_and_check(m), 1, 0, 0);
    assert_int_equal(count_files(".clbin"), 1);
    unsetenv("BYOCL_OPENCL_BUILD_WORKER");

    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s", ts_tmpdir("opencl_parts_tmp"));
    char *old_tmp = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
    setenv("TMPDIR", tmp, 1);
    setenv("BYOCL_CACHE_DIR", "", 1); /* no program cache */
    expect_totals(build_and_check(m), 2, 1, 0);
    DIR *d = opendir(tmp);
    assert_non_null(d);
    int left = 0;
    for (struct dirent *e; (e = readdir(d));)
        left += e->d_name[0] != '.';
    closedir(d);
    assert_int_equal(left, 0);
    setenv("BYOCL_CACHE_DIR", byocl_cache, 1);
    if (old_tmp)
        setenv("TMPDIR", old_tmp, 1);
    else
        unsetenv("TMPDIR");
    free(old_tmp);
    ts_remove_tree(tmp);
    unsetenv("BYOCL_OPENCL_BUILD_JOBS");
    byocl_module_free(m);
    byocl_target_registry_reset();
}

/* A part that does not build: the region is built again as one program, so the error
 * names the kernel and its line in the whole program (the one --emit writes). */
static void test_parallel_build_failure(void **state)
{
    (void)state;
    byocl_module *m = five_convs();
    ocl_device *dev = default_device();
    byocl_cl_codegen_options copt = {.compute_units = dev->info.compute_units,
                                     .vector_width = dev->info.float_vector_width};
    byocl_cl_plan *plan = NULL;
    byocl_error err = {0};
    assert_int_equal(clg_codegen(byocl_module_find(m, "main"), &copt, &plan, &err), BYOCL_OK);
    /* The last kernel's KPARAMS line becomes an #error of the same length. */
    const byocl_cl_kernel_span *k = &plan->kernels[plan->n_kernels - 1];
    char *at = strstr(plan->source + k->offset, "#define KPARAMS");
    assert_non_null(at);
    assert_true(at < plan->source + k->offset + k->length);
    memcpy(at, "#error  KPARAMS", 15);
    char c = *at;
    *at = '\0';
    int line = count_lines(plan->source);
    *at = c;
    setenv("BYOCL_OPENCL_BUILD_JOBS", "2", 1);
    ts_remove_tree(byocl_cache);
    assert_int_equal(mkdir(byocl_cache, 0700), 0); /* as byocl_opencl_compile makes it */
    ocl_program_parts parts;
    assert_int_equal(ocl_program_parts_build(dev, byocl_cache, "@r", plan, &parts, &err),
                     BYOCL_ERR_RUNTIME);
    char want[256];
    snprintf(want, sizeof want, "in kernel %s (line %d of the program); build log:\n", k->name,
             line);
    ts_assert_contains(err.msg, want);
    assert_int_equal(count_files("part-"), 0);
    unsetenv("BYOCL_OPENCL_BUILD_JOBS");
    clg_plan_free(plan);
    ocl_device_release(dev);
    byocl_module_free(m);
}

/* A bad job count is refused, naming the variable and the value. */
static void test_bad_build_jobs(void **state)
{
    (void)state;
    const char *bad[] = {"abc", "0", "-2", "3x", "99999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("BYOCL_OPENCL_BUILD_JOBS", bad[i], 1);
        int jobs = 0;
        byocl_error err = {0};
        assert_int_equal(ocl_build_jobs(&jobs, &err), BYOCL_ERR_INVALID);
        char want[256];
        snprintf(want, sizeof want,
                 "bad BYOCL_OPENCL_BUILD_JOBS '%s': expected a whole number of build jobs from 1 "
                 "to 4096 (1: build in this process only)",
                 bad[i]);
        assert_string_equal(err.msg, want);
    }
    byocl_module *m = relu_module();
    byocl_opencl_options o = options();
    byocl_rtmod *mod = NULL;
    byocl_error err = {0};
    assert_int_equal(byocl_opencl_compile(region_of(m), &o, &mod, &err), BYOCL_ERR_INVALID);
    ts_assert_contains(err.msg, "bad BYOCL_OPENCL_BUILD_JOBS '99999'");
    assert_null(mod);
    unsetenv("BYOCL_OPENCL_BUILD_JOBS");
    int jobs = 0;
    assert_int_equal(ocl_build_jobs(&jobs, &err), BYOCL_OK);
    assert_true(jobs >= 1);
    byocl_module_free(m);
}

/* Runs the worker with `args` (shell words); its output (stdout and stderr) in out and its
 * exit status. */
static int run_worker(const char *worker, const char *args, char *out, size_t len)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", worker, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t got = fread(out, 1, len - 1, p);
    out[got] = '\0';
    int status = pclose(p);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* The worker program refuses what it was not made for, saying so. */
static void test_worker_usage(void **state)
{
    (void)state;
    char worker[4096];
    assert_non_null(ocl_build_worker_path(worker, sizeof worker));
    const struct {
        const char *args, *why;
    } cases[] = {
        {"", "another byocl's protocol"},
        {"--protocol 0 --device 0 --cache-dir /tmp --options '' --region r f.cl",
         "another byocl's protocol"},
        {"--protocol 1 --device 0 --cache-dir /tmp --options ''", "an argument is missing"},
        {"--protocol 1 --bogus 1", "an unknown argument"},
        {"--protocol 1 --device", "an option without its value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[1024], want[256];
        assert_int_equal(run_worker(worker, cases[i].args, out, sizeof out), 2);
        snprintf(want, sizeof want, "byocl-opencl-build: %s\n", cases[i].why);
        ts_assert_contains(out, want);
    }
    /* A source that does not build: status 1 and the build's message. */
    char src[700], args[2048], out[8192];
    snprintf(src, sizeof src, "%s/broken.cl", ts_tmpdir("opencl_worker"));
    ts_write_text(src, "__kernel void k(__global float *x) { x[0] = undefined_name; }\n");
    snprintf(args, sizeof args,
             "--protocol 1 --device 0 --cache-dir '%s' --options '-cl-std=CL1.2' --region @r '%s'",
             byocl_cache, src);
    assert_int_equal(run_worker(worker, args, out, sizeof out), 1);
    ts_assert_contains(out, "byocl-opencl-build: region @r: the OpenCL program does not build");
    ts_assert_contains(out, "undefined_name");
}

/* ------------------------------------------------------------------ main */

static int setup(void **state)
{
    (void)state;
    ocl_cache_stats_reset();
    return 0;
}

/* Runs byocl_opencl_devices in a child whose ICD loader finds no driver; keeps its status
 * and message. Must run before this process makes any OpenCL call. */
static void probe_no_platform(void)
{
    char empty[600];
    snprintf(empty, sizeof empty, "%s", ts_tmpdir("opencl_no_icd"));
    int fds[2];
    if (pipe(fds) != 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        setenv("OCL_ICD_VENDORS", empty, 1);
        byocl_opencl_device_info *devs = NULL;
        int n = 0;
        byocl_error err = {0};
        byocl_status st = byocl_opencl_devices(&devs, &n, &err);
        free(devs);
        char buf[sizeof no_platform_msg + 8];
        int len = snprintf(buf, sizeof buf, "%d|%s", (int)st, st == BYOCL_OK ? "" : err.msg);
        ssize_t w = write(fds[1], buf, (size_t)len);
        (void)w;
        _exit(0);
    }
    close(fds[1]);
    char buf[sizeof no_platform_msg + 8] = "";
    size_t got = 0;
    for (ssize_t r; (r = read(fds[0], buf + got, sizeof buf - 1 - got)) > 0;)
        got += (size_t)r;
    close(fds[0]);
    waitpid(pid, NULL, 0);
    buf[got] = '\0';
    char *bar = strchr(buf, '|');
    if (bar) {
        no_platform_status = atoi(buf);
        snprintf(no_platform_msg, sizeof no_platform_msg, "%s", bar + 1);
    }
    ts_remove_tree(empty);
}

int main(void)
{
    probe_no_platform();
    /* test_each_kernel_compiled_once checks byocl's default, not a value set outside. */
    unsetenv("POCL_WORK_GROUP_SPECIALIZATION");
    ocl_fresh_caches("opencl_runtime", pocl_cache, byocl_cache, sizeof pocl_cache);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_platform),
        cmocka_unit_test(test_devices_listed),
        cmocka_unit_test(test_each_kernel_compiled_once),
        cmocka_unit_test(test_device_choice),
        cmocka_unit_test(test_shared_device),
        cmocka_unit_test(test_relu_runs_zero_copy),
        cmocka_unit_test(test_two_outputs_zero_copy),
        cmocka_unit_test(test_two_outputs_with_copies),
        cmocka_unit_test(test_run_argument_errors),
        cmocka_unit_test(test_cache_miss_then_hit),
        cmocka_unit_test(test_cache_corruption_rebuilds),
        cmocka_unit_test(test_profile_parts),
        cmocka_unit_test(test_profile_through_build),
        cmocka_unit_test(test_build_failure_names_kernel),
        cmocka_unit_test(test_allocation_failure),
        cmocka_unit_test(test_concat_slices),
        cmocka_unit_test(test_slice_errors),
        cmocka_unit_test(test_fallback_to_host),
        cmocka_unit_test(test_target_without_compile),
        cmocka_unit_test(test_parallel_build),
        cmocka_unit_test(test_parallel_build_fallbacks),
        cmocka_unit_test(test_parallel_build_failure),
        cmocka_unit_test(test_bad_build_jobs),
        cmocka_unit_test(test_worker_usage),
    };
    int failed = cmocka_run_group_tests(tests, setup, NULL);
    ts_remove_tree(pocl_cache);
    ts_remove_tree(byocl_cache);
    return failed;
}
