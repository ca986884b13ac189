/* Helpers of the OpenCL runtime's suites (test_opencl_runtime, test_cli_opencl,
 * test_opencl_models): the float32 bound, fresh cache folders, random inputs with the
 * reference executor's outputs, a model compiled with its regions on OpenCL. */
#ifndef BYOCL_OPENCL_TEST_UTIL_H
#define BYOCL_OPENCL_TEST_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_support.h"
#include "byocl/pipeline.h"
#include "byocl/reference.h"

/* The float32 bound of the issue: relative L2 error against the reference. */
#define OCL_TOL_F32 1e-5

/* Fresh PoCL and byocl program caches for this process (a warm cache would hide build
 * problems), set in the environment before any OpenCL call; children inherit them. The
 * paths go to pocl and byocl (each at least 512 bytes). */
static inline void ocl_fresh_caches(const char *tag, char *pocl, char *byocl, size_t len)
{
    char name[128];
    snprintf(name, sizeof name, "%s_pocl_cache", tag);
    snprintf(pocl, len, "%s", ts_tmpdir(name));
    snprintf(name, sizeof name, "%s_byocl_cache", tag);
    snprintf(byocl, len, "%s", ts_tmpdir(name));
    setenv("POCL_CACHE_DIR", pocl, 1);
    setenv("BYOCL_CACHE_DIR", byocl, 1);
    unsetenv("BYOCL_OPENCL_DEVICE");
}

/* Random inputs for @main of m (input k from seed + k, uniform in [lo, hi)), *n_in of
 * them, and the reference executor's outputs for them in *want (byocl_tensors_free). */
static inline byocl_tensor **ocl_reference_case(const byocl_module *m, uint64_t seed, double lo,
                                                double hi, int *n_in, byocl_tensor ***want,
                                                int *n_want)
{
    byocl_error err = {0};
    const byocl_function *fn = byocl_module_find(m, "main");
    *n_in = byocl_function_num_params(fn);
    byocl_tensor **inputs = calloc((size_t)*n_in + 1, sizeof *inputs);
    assert_non_null(inputs);
    for (int k = 0; k < *n_in; k++) {
        const byocl_type *t = byocl_node_type(fn, byocl_function_param(fn, k));
        inputs[k] = byocl_tensor_new(t->dtype, &t->shape, &err);
        assert_non_null(inputs[k]);
        byocl_tensor_fill_random(inputs[k], seed + (uint64_t)k, lo, hi);
    }
    if (byocl_reference_run(m, "main", inputs, *n_in, want, n_want, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return inputs;
}

/* Frees what ocl_reference_case returned. */
static inline void ocl_reference_case_free(byocl_tensor **inputs, int n_in, byocl_tensor **want,
                                           int n_want)
{
    byocl_tensors_free(want, n_want);
    for (int k = 0; k < n_in; k++)
        byocl_tensor_unref(inputs[k]);
    free(inputs);
}

/* `m` compiled with its regions on OpenCL (partitioned by op support). */
static inline byocl_compiled *ocl_compile(const byocl_module *m)
{
    const char *targets[1] = {"opencl"};
    byocl_compile_options co = byocl_compile_options_default();
    co.partition.targets = targets;
    co.partition.n_targets = 1;
    byocl_error err = {0};
    byocl_compiled *c = NULL;
    if (byocl_compile(m, &co, &c, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return c;
}

#endif
