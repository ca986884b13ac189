/* Helpers of the OpenCL runtime's suites (test_opencl_runtime, test_cli_opencl,
 * test_opencl_models): the float32 bound and fresh cache folders. */
#ifndef BYOCL_OPENCL_TEST_UTIL_H
#define BYOCL_OPENCL_TEST_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_support.h"

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

#endif
