/* Every built-in model with its regions on OpenCL (PoCL here) agrees with the reference
 * executor: builtin:seed with its own annotated region, resnet18 and mobilenet_v2
 * partitioned by op support (every op they have is one the opencl target takes), built for
 * the host for the rest, run on the same random inputs; every output within relative L2
 * 1e-5; resnet18 in 2 pipeline stages, bitwise the whole model. The models' programs are compiled from source: PoCL's and byocl's caches are fresh
 * folders (a warm cache hides build problems), so this suite takes minutes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl_test_util.h"
#include "byocl/opencl.h"
#include "byocl/pipeline.h"
#include "byocl/runtime.h"
#include "byocl/split.h"
#include "byocl/target.h"

static char pocl_cache[512], byocl_cache[512];

/* Runs `name` on OpenCL and on the reference executor; returns the worst error. */
static double check_model(const char *name, bool by_support)
{
    byocl_error err = {0};
    byocl_module *m = NULL;
    if (byocl_builtin_build(name, &m, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    int n_in = 0, n_want = 0;
    byocl_tensor **want = NULL;
    byocl_tensor **inputs = ocl_reference_case(m, 100, 0, 1, &n_in, &want, &n_want);

    /* A model with its own annotations keeps them: the target then annotates nothing. */
    assert_int_equal(byocl_module_has_regions(m), !by_support);
    byocl_compiled *c = ocl_compile(m);
    byocl_executor *ex = NULL;
    byocl_plan_stats st;
    byocl_compiled_stats(c, &st);
    assert_true(st.n_regions >= 1);
    if (by_support) /* every op of the network is in a region */
        assert_int_equal(st.n_kernels, 0);
    assert_int_equal(byocl_executor_new(c, &ex, &err), BYOCL_OK);
    for (int s = 0; s < byocl_executor_num_steps(ex); s++) {
        byocl_step_info info;
        assert_int_equal(byocl_executor_step(ex, s, &info, &err), BYOCL_OK);
        if (info.kind == BYOCL_STEP_REGION)
            assert_string_equal(info.runner, "opencl");
    }
    for (int k = 0; k < n_in; k++)
        assert_int_equal(byocl_executor_set_input(ex, byocl_compiled_input_name(c, k), inputs[k],
                                                  &err),
                         BYOCL_OK);
    double worst = 0;
    for (int run = 0; run < 2; run++) { /* twice: the second call reuses what the first made */
        if (byocl_executor_run(ex, &err) != BYOCL_OK)
            fail_msg("%s: %s", name, err.msg);
        assert_int_equal(byocl_executor_num_outputs(ex), n_want);
        for (int i = 0; i < n_want; i++) {
            const byocl_tensor *got;
            assert_int_equal(byocl_executor_output(ex, i, &got, &err), BYOCL_OK);
            double e = ts_relative_l2(got, want[i]);
            if (e > OCL_TOL_F32)
                fail_msg("%s output %d: relative L2 error %g", name, i, e);
            worst = e > worst ? e : worst;
        }
    }
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    ocl_reference_case_free(inputs, n_in, want, n_want);
    byocl_module_free(m);
    return worst;
}

static void test_seed(void **state)
{
    (void)state;
    printf("builtin:seed: relative L2 %.3g\n", check_model("seed", false));
}

static void test_resnet18(void **state)
{
    (void)state;
    printf("builtin:resnet18: relative L2 %.3g\n", check_model("resnet18", true));
}

/* An executor of `m` compiled with its regions on OpenCL (partitioned by op support). */
static byocl_executor *opencl_executor(const byocl_module *m, byocl_compiled **c)
{
    *c = ocl_compile(m);
    byocl_error err;
    byocl_executor *ex = NULL;
    if (byocl_executor_new(*c, &ex, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return ex;
}

/* resnet18 split in 2 stages, each compiled for OpenCL: the outputs are bitwise those of
 * the whole model compiled for OpenCL (the same kernels run). The whole model's programs
 * come from the cache test_resnet18 filled; each stage is a program of its own, which
 * PoCL compiles: about 100 s here, so 2 stages only (3 agree too: checked by hand, and
 * 3 stages on the host run in the mpi_stages test). */
static void test_resnet18_in_stages(void **state)
{
    (void)state;
    byocl_error err;
    byocl_module *m = NULL;
    assert_int_equal(byocl_builtin_build("resnet18", &m, &err), BYOCL_OK);
    const byocl_function *fn = byocl_module_find(m, "main");
    const byocl_type *t = byocl_node_type(fn, byocl_function_param(fn, 0));
    byocl_tensor *input = byocl_tensor_new(t->dtype, &t->shape, &err);
    byocl_tensor_fill_random(input, 7, 0, 1);
    byocl_compiled *whole_c = NULL;
    byocl_executor *whole = opencl_executor(m, &whole_c);
    assert_int_equal(byocl_executor_set_input(whole, byocl_compiled_input_name(whole_c, 0), input,
                                              &err),
                     BYOCL_OK);
    assert_int_equal(byocl_executor_run(whole, &err), BYOCL_OK);
    const byocl_tensor *want;
    assert_int_equal(byocl_executor_output(whole, 0, &want, &err), BYOCL_OK);
    enum { PARTS = 2 };
    byocl_stages *s = NULL;
    if (byocl_split(m, NULL, 0, PARTS, &s, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    byocl_compiled *c[PARTS] = {NULL};
    byocl_executor *ex[PARTS] = {NULL};
    for (int k = 0; k < PARTS; k++)
        ex[k] = opencl_executor(byocl_stages_module(s, k), &c[k]);
    byocl_tensor **got = NULL;
    int n_got = 0;
    if (byocl_stages_run_on(s, ex, &input, 1, NULL, NULL, &got, &n_got, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(n_got, 1);
    if (!byocl_tensor_equal(got[0], want))
        fail_msg("stages on OpenCL: relative L2 %g against the whole model",
                 ts_relative_l2(got[0], want));
    byocl_tensors_free(got, n_got);
    for (int k = 0; k < PARTS; k++) {
        byocl_executor_free(ex[k]);
        byocl_compiled_free(c[k]);
    }
    byocl_stages_free(s);
    byocl_executor_free(whole);
    byocl_compiled_free(whole_c);
    byocl_tensor_unref(input);
    byocl_module_free(m);
}

static void test_mobilenet_v2(void **state)
{
    (void)state;
    printf("builtin:mobilenet_v2: relative L2 %.3g\n", check_model("mobilenet_v2", true));
}

static int teardown(void **state)
{
    (void)state;
    byocl_target_registry_reset();
    return 0;
}

int main(void)
{
    ocl_fresh_caches("opencl_models", pocl_cache, byocl_cache, sizeof pocl_cache);
    if (byocl_opencl_register() != BYOCL_OK)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed),
        cmocka_unit_test(test_resnet18),
        cmocka_unit_test(test_resnet18_in_stages),
        cmocka_unit_test(test_mobilenet_v2),
    };
    int failed = cmocka_run_group_tests(tests, NULL, teardown);
    ts_remove_tree(pocl_cache);
    ts_remove_tree(byocl_cache);
    return failed;
}
