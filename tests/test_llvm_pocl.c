/* LLVM 19 (the host JIT, linked statically into libbyocl_llvm.so) and PoCL's LLVM 15 in
 * one process: JIT-compile and run host kernels, build and run an OpenCL kernel on PoCL
 * with a fresh kernel cache (so that PoCL really compiles it: a warm cache hides the
 * clash), then JIT again. With a shared LLVM of another version in the process, PoCL's
 * first kernel build crashes (../shared/PLATFORM_NOTES.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include "llvm_harness.h"

/* @main(%x) = relu(x * 2 + 1), through the LLVM backend; checks a few values. */
static void jit_and_run(float scale)
{
    byocl_error err = {0};
    byocl_module *m = NULL;
    char text[256];
    snprintf(text, sizeof text,
             "def @main(%%x: Tensor[(3, 37), float32]) {\n"
             "  nn.relu(add(multiply(%%x, %gf), 1f))\n"
             "}\n",
             scale);
    if (byocl_text_parse(text, strlen(text), "jit.relay", NULL, &m, &err) != BYOCL_OK ||
        byocl_infer_types(m, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    int64_t dims[2] = {3, 37};
    byocl_shape s = byocl_shape_make(2, dims);
    byocl_tensor *x = byocl_tensor_new(BYOCL_FLOAT32, &s, &err);
    assert_non_null(x);
    float *xv = byocl_tensor_data(x);
    for (int i = 0; i < 3 * 37; i++)
        xv[i] = (float)(i - 55) / 8;
    byocl_tensor **out = NULL;
    int n_out = 0;
    lh_options opt = {.threads = 2};
    if (lh_run(m, &x, &opt, &out, &n_out, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(n_out, 1);
    const float *y = byocl_tensor_cdata(out[0]);
    for (int i = 0; i < 3 * 37; i++) {
        float want = xv[i] * scale + 1.0f;
        assert_float_equal(y[i], want > 0 ? want : 0.0f, 0.0f);
    }
    byocl_tensors_free(out, n_out);
    byocl_tensor_unref(x);
    byocl_module_free(m);
}

static const char kernel_src[] =
    "__kernel void axpy(__global const float *x, __global float *y, float a) {\n"
    "    size_t i = get_global_id(0);\n"
    "    y[i] = a * x[i] + y[i];\n"
    "}\n";

/* Builds and runs axpy on the first OpenCL platform; skips when there is none. */
static void opencl_build_and_run(void)
{
    cl_platform_id platform;
    cl_uint n_platforms = 0;
    if (clGetPlatformIDs(1, &platform, &n_platforms) != CL_SUCCESS || n_platforms == 0) {
        fprintf(stderr, "no OpenCL platform: the PoCL half of this test is skipped\n");
        skip();
    }
    cl_device_id dev;
    assert_int_equal(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL), CL_SUCCESS);
    cl_int rc;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &rc);
    assert_int_equal(rc, CL_SUCCESS);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &rc);
    assert_int_equal(rc, CL_SUCCESS);
    const char *src = kernel_src;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &rc);
    assert_int_equal(rc, CL_SUCCESS);
    rc = clBuildProgram(prog, 1, &dev, "", NULL, NULL);
    if (rc != CL_SUCCESS) {
        char log[4096] = "";
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fail_msg("clBuildProgram: %d\n%s", rc, log);
    }
    cl_kernel k = clCreateKernel(prog, "axpy", &rc);
    assert_int_equal(rc, CL_SUCCESS);
    enum { N = 1024 };
    float x[N], y[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = 1.0f;
    }
    cl_mem bx = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof x, x, &rc);
    assert_int_equal(rc, CL_SUCCESS);
    cl_mem by = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof y, y, &rc);
    assert_int_equal(rc, CL_SUCCESS);
    float a = 3.0f;
    assert_int_equal(clSetKernelArg(k, 0, sizeof bx, &bx), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(k, 1, sizeof by, &by), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(k, 2, sizeof a, &a), CL_SUCCESS);
    size_t global = N;
    assert_int_equal(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL),
                     CL_SUCCESS);
    assert_int_equal(clEnqueueReadBuffer(q, by, CL_TRUE, 0, sizeof y, y, 0, NULL, NULL),
                     CL_SUCCESS);
    for (int i = 0; i < N; i++)
        assert_float_equal(y[i], 3.0f * (float)i + 1.0f, 0.0f);
    clReleaseMemObject(bx);
    clReleaseMemObject(by);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
}

static void test_jit_pocl_jit(void **state)
{
    (void)state;
    /* A fresh cache, set before the ICD loader starts PoCL. */
    const char *cache = ts_tmpdir("pocl-cache");
    setenv("POCL_CACHE_DIR", cache, 1);
    jit_and_run(2.0f);
    opencl_build_and_run();
    jit_and_run(-0.5f);
    ts_remove_tree(cache);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_jit_pocl_jit)};
    return cmocka_run_group_tests_name("llvm_pocl", tests, NULL, NULL);
}
