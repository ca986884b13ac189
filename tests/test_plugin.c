/* Target plugins (include/byocl/plugin.h): the example plugin (tests/plugins/
 * example_target.c, built as a shared library by cmake/plugins.cmake) is loaded through the
 * C API and the CLI's --plugin, partitioned to and run end to end; the loader's errors
 * (missing file, not a library, missing symbols, another API version, a second load) are
 * exact messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl_test_util.h"
#include "byocl/pipeline.h"
#include "byocl/plugin.h"
#include "byocl/runtime.h"
#include "byocl/target.h"

#define PLUGIN(name) BYOCL_PLUGIN_DIR "/lib" name ".so"

/* add and relu go to the example target, softmax stays on the host, abs is a second
 * region. */
static const char model_text[] =
    "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {\n"
    "  %0 = add(%x, %y);\n"
    "  %1 = nn.relu(%0);\n"
    "  %2 = nn.softmax(%1);\n"
    "  abs(%2)\n"
    "}\n";

static byocl_module *parse_model(void)
{
    byocl_module *m = NULL;
    byocl_error err = {0};
    if (byocl_text_parse(model_text, strlen(model_text), "plugin.relay", NULL, &m, &err) !=
            BYOCL_OK ||
        byocl_infer_types(m, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return m;
}

static void load_example(void)
{
    byocl_error err = {0};
    if (byocl_plugin_load(PLUGIN("example_target"), &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
}

static int teardown(void **state)
{
    (void)state;
    byocl_target_registry_reset();
    byocl_plugin_close_all();
    return 0;
}

static void test_load_registers_target(void **state)
{
    (void)state;
    assert_null(byocl_target_find("example"));
    load_example();
    assert_int_equal(byocl_plugin_count(), 1);
    const byocl_target_i *t = byocl_target_find("example");
    assert_non_null(t);
    assert_int_equal(t->api_version, BYOCL_TARGET_API_VERSION);
    assert_non_null(t->compile);
    /* Loading it again runs its init again, which cannot register "example" twice. */
    byocl_error err = {0};
    assert_int_equal(byocl_plugin_load(PLUGIN("example_target"), &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "target plugin " PLUGIN("example_target")
                                 ": a target named \"example\" is already registered");
    assert_int_equal(byocl_plugin_count(), 1);
}

static void test_supports_explains(void **state)
{
    (void)state;
    load_example();
    const byocl_target_i *t = byocl_target_find("example");
    byocl_module *m = parse_model();
    const byocl_function *fn = byocl_module_find(m, "main");
    char why[128] = "";
    for (int id = 0; id < byocl_function_num_nodes(fn); id++) {
        const char *op = byocl_node_op(fn, id);
        if (!op)
            continue;
        bool ok = t->supports(t->ctx, fn, id, why, sizeof why);
        assert_int_equal(ok, strcmp(op, "nn.softmax") != 0);
        if (!ok)
            assert_string_equal(why, "op nn.softmax is not one of nn.relu, abs, add");
    }
    byocl_module_free(m);
}

/* Partitioned for "example", built (host for the rest) and run: the same as the reference
 * executor on the unpartitioned model. */
static void test_partition_build_run(void **state)
{
    (void)state;
    load_example();
    byocl_module *m = parse_model();
    const char *targets[1] = {"example"};
    byocl_compile_options co = byocl_compile_options_default();
    co.partition.targets = targets;
    co.partition.n_targets = 1;
    byocl_error err = {0};
    byocl_module *p = NULL;
    if (byocl_compile_partition(m, &co, &p, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    assert_non_null(byocl_module_find(p, "example_main_0"));
    assert_non_null(byocl_module_find(p, "example_main_1"));
    byocl_compiled *c = NULL;
    if (byocl_compile(m, &co, &c, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    byocl_executor *ex = NULL;
    assert_int_equal(byocl_executor_new(c, &ex, &err), BYOCL_OK);
    int64_t dims[2] = {2, 3};
    static const float xv[6] = {1, -2, 3, -4, 5, -6}, yv[6] = {-0.5f, 1, -1, 2, 0.25f, 8};
    byocl_tensor *in[2] = {ts_tensor_f32(2, dims, xv), ts_tensor_f32(2, dims, yv)};
    assert_int_equal(byocl_executor_set_input(ex, "x", in[0], &err), BYOCL_OK);
    assert_int_equal(byocl_executor_set_input(ex, "y", in[1], &err), BYOCL_OK);
    if (byocl_executor_run(ex, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    int example_steps = 0;
    for (int s = 0; s < byocl_executor_num_steps(ex); s++) {
        byocl_step_info info;
        assert_int_equal(byocl_executor_step(ex, s, &info, &err), BYOCL_OK);
        example_steps += info.kind == BYOCL_STEP_REGION && strcmp(info.runner, "example") == 0;
    }
    assert_int_equal(example_steps, 2);
    byocl_tensor **want = NULL;
    int n_want = 0;
    assert_int_equal(byocl_reference_run(m, "main", in, 2, &want, &n_want, &err), BYOCL_OK);
    const byocl_tensor *got;
    assert_int_equal(byocl_executor_output(ex, 0, &got, &err), BYOCL_OK);
    ts_assert_tensor_close(got, want[0], 1e-6, 1e-7);
    byocl_tensors_free(want, n_want);
    byocl_tensor_unref(in[0]);
    byocl_tensor_unref(in[1]);
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    byocl_module_free(p);
    byocl_module_free(m);
}

static void expect_load_error(const char *path, byocl_status status, const char *msg)
{
    byocl_error err = {0};
    assert_int_equal(byocl_plugin_load(path, &err), status);
    if (msg)
        assert_string_equal(err.msg, msg);
    assert_int_equal(byocl_plugin_count(), 0);
    assert_int_equal(byocl_target_count(), 0);
}

static void test_load_errors(void **state)
{
    (void)state;
    expect_load_error("/nonexistent/libtarget.so", BYOCL_ERR_IO,
                      "cannot load target plugin /nonexistent/libtarget.so: No such file or "
                      "directory");
    expect_load_error("", BYOCL_ERR_INVALID, "byocl_plugin_load: no path given");
    expect_load_error(PLUGIN("example_target_v99"), BYOCL_ERR_UNSUPPORTED,
                      "target plugin " PLUGIN("example_target_v99")
                      " was built for target API version 99; this byocl has version 3 (rebuild "
                      "the plugin with this byocl's headers)");
    expect_load_error(PLUGIN("example_target_noinit"), BYOCL_ERR_NOT_FOUND,
                      "target plugin " PLUGIN("example_target_noinit")
                      " has no function byocl_target_plugin_init (byocl_status "
                      "byocl_target_plugin_init(uint32_t api_version, byocl_error *err), "
                      "declared in byocl/plugin.h)");
    /* a shared library that is no plugin: searched by name, like dlopen does */
    expect_load_error("libm.so.6", BYOCL_ERR_NOT_FOUND,
                      "target plugin libm.so.6 does not define byocl_target_plugin_api_version "
                      "(a plugin includes byocl/plugin.h and defines it as "
                      "BYOCL_TARGET_API_VERSION; see docs/writing-a-target.md)");
    /* a file that is not a library at all */
    const char *dir = ts_tmpdir("plugin_not_elf");
    char path[600];
    snprintf(path, sizeof path, "%s/libtext.so", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("not a library\n", f);
    fclose(f);
    byocl_error err = {0};
    assert_int_equal(byocl_plugin_load(path, &err), BYOCL_ERR_IO);
    char want[1400];
    snprintf(want, sizeof want, "cannot load target plugin %s: ", path);
    ts_assert_contains(err.msg, want);
    assert_null(strstr(err.msg + strlen(want), path)); /* dlerror's copy of the path is cut */
    ts_remove_tree(dir);
}

/* --------------------------------------------------------------------- CLI */

static void test_cli_plugin_run(void **state)
{
    (void)state;
    const char *dir = ts_tmpdir("plugin_cli");
    char model[600], args[1600];
    snprintf(model, sizeof model, "%s/plugin.relay", dir);
    FILE *f = fopen(model, "w");
    assert_non_null(f);
    fputs(model_text, f);
    fclose(f);
    char *out = NULL, *err = NULL;
    snprintf(args, sizeof args,
             "--plugin " PLUGIN("example_target") " run '%s' --target example --random-inputs "
             "--profile",
             model);
    assert_int_equal(ts_run_cli(args, &out, &err), 0);
    ts_assert_contains(out, "built @main of ");
    ts_assert_contains(out, " for target example in ");
    ts_assert_contains(out, "example_main_0 (region, example)\n");
    ts_assert_contains(out, "example_main_1 (region, example)\n");
    ts_assert_contains(out, "output 0: Tensor[(2, 3), float32]\n");
    assert_string_equal(err, "");
    free(out);
    free(err);
    /* the same outputs as the reference executor, value for value */
    char *ref = NULL;
    snprintf(args, sizeof args, "run '%s' --random-inputs", model);
    assert_int_equal(ts_run_cli(args, &ref, NULL), 0);
    snprintf(args, sizeof args,
             "--plugin=" PLUGIN("example_target") " run '%s' --target example --random-inputs",
             model);
    assert_int_equal(ts_run_cli(args, &out, NULL), 0);
    ts_assert_contains(out, strstr(ref, "output 0:"));
    free(out);

    /* The plugin's own option: regions over max_ops fail to compile, and fall back. */
    snprintf(args, sizeof args,
             "--plugin=" PLUGIN("example_target") " run '%s' --target example --random-inputs "
             "--target-opt example.max_ops=1 --fallback ref --profile",
             model);
    assert_int_equal(ts_run_cli(args, &out, &err), 0);
    ts_assert_contains(out, strstr(ref, "output 0:"));
    ts_assert_contains(out, "example_main_0 (region, ref)\n"); /* 2 ops: fell back */
    ts_assert_contains(out, "example_main_1 (region, example)\n");
    assert_string_equal(err, "byocl: warning: region @example_main_0 runs on the host (--fallback "
                             "ref): example target: region has 2 ops, more than max_ops=1\n");
    free(out);
    free(err);
    free(ref);
    snprintf(args, sizeof args,
             "--plugin=" PLUGIN("example_target") " run '%s' --target example --random-inputs "
             "--target-opt example.max_ops=few",
             model);
    assert_int_equal(ts_run_cli(args, &out, &err), 1);
    assert_string_equal(err, "byocl: error: target option example.max_ops: 'few' is not an "
                             "integer\n");
    free(out);
    free(err);
    snprintf(args, sizeof args,
             "--plugin=" PLUGIN("example_target") " run '%s' --target example --random-inputs "
             "--device 0",
             model);
    assert_int_equal(ts_run_cli(args, &out, &err), 1);
    assert_string_equal(err, "byocl: error: target example has no devices to choose from\n");
    free(out);
    free(err);

    snprintf(args, sizeof args, "--plugin " PLUGIN("example_target") " info");
    assert_int_equal(ts_run_cli(args, &out, NULL), 0);
    ts_assert_contains(out, "targets: opencl, example\n");
    ts_assert_contains(out, "target example\n  options (--target-opt example.KEY=VALUE):\n"
                            "    max_ops  INTEGER              refuse regions of more ops "
                            "(their compile fails; --fallback runs them on the host) (default: "
                            "unlimited)\n");
    free(out);

    snprintf(args, sizeof args,
             "--plugin " PLUGIN("example_target") " partition '%s' --target example --explain",
             model);
    assert_int_equal(ts_run_cli(args, &out, &err), 0);
    ts_assert_contains(err, "%2 (nn.softmax) stays on the host: example: op nn.softmax is not one "
                            "of nn.relu, abs, add\n");
    ts_assert_contains(out, "Compiler=\"example\"");
    free(out);
    free(err);
    ts_remove_tree(dir);
}

static void test_cli_plugin_errors(void **state)
{
    (void)state;
    char *out = NULL, *err = NULL;
    assert_int_equal(ts_run_cli("--plugin /nonexistent/libx.so info", &out, &err), 1);
    assert_string_equal(out, "");
    assert_string_equal(err, "byocl: error: cannot load target plugin /nonexistent/libx.so: No "
                             "such file or directory\n");
    free(out);
    free(err);
    assert_int_equal(ts_run_cli("--plugin " PLUGIN("example_target_v99") " info", NULL, &err), 1);
    ts_assert_contains(err, "was built for target API version 99; this byocl has version 3");
    free(err);
    assert_int_equal(ts_run_cli("--plugin", NULL, &err), 2);
    assert_string_equal(err, "byocl: error: --plugin needs a shared library: --plugin LIB; see "
                             "'byocl --help'\n");
    free(err);
    /* without the plugin, the target is unknown */
    assert_int_equal(ts_run_cli("run builtin:seed --target example --random-inputs", NULL, &err),
                     2);
    ts_assert_contains(err, "byocl: error: unknown target 'example' (known: host, ref, opencl)");
    free(err);
}

int main(void)
{
    char pocl_cache[512], byocl_cache[512]; /* the CLI lists OpenCL devices (byocl info) */
    ocl_fresh_caches("plugin", pocl_cache, byocl_cache, sizeof pocl_cache);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_load_registers_target, teardown),
        cmocka_unit_test_teardown(test_supports_explains, teardown),
        cmocka_unit_test_teardown(test_partition_build_run, teardown),
        cmocka_unit_test_teardown(test_load_errors, teardown),
        cmocka_unit_test(test_cli_plugin_run),
        cmocka_unit_test(test_cli_plugin_errors),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    ts_remove_tree(pocl_cache);
    ts_remove_tree(byocl_cache);
    return failed;
}
