/* `cmake --install` into a temporary prefix gives a library, headers, CLI, CMake package
 * and pkg-config file that a program outside the tree can build against and run. */
#include "test_support.h"

#include "byocl/frontend.h"
#include "byocl/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* snprintf into a fixed buffer, failing the test rather than truncating. */
#define FMT(buf, ...) assert_true(snprintf((buf), sizeof(buf), __VA_ARGS__) < (int)sizeof(buf))

/* BYOCL_CLI_PATH is BUILD/tools/byocl: the build tree is two levels up. */
static void build_dir(char *buf, size_t len)
{
    snprintf(buf, len, "%s", BYOCL_CLI_PATH);
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(buf, '/');
        assert_non_null(slash);
        *slash = '\0';
    }
}

/* What docs/examples/run_model.c prints for builtin:seed on target ref, each line prefixed
 * with `prefix`: the outputs computed here by the reference executor from the example's
 * inputs (input k random from seed k), the storage plan from a build here. */
static void example_output(const char *prefix, char *buf, size_t len)
{
    byocl_module *m;
    byocl_error err;
    assert_int_equal(byocl_load_model("builtin:seed", NULL, &m, &err), BYOCL_OK);
    const byocl_function *fn = byocl_module_find(m, "main");
    int n_in = byocl_function_num_params(fn);
    byocl_tensor **in = calloc((size_t)n_in, sizeof *in), **out;
    for (int k = 0; k < n_in; k++) {
        const byocl_type *t = byocl_node_type(fn, byocl_function_param(fn, k));
        in[k] = byocl_tensor_new(t->dtype, &t->shape, &err);
        byocl_tensor_fill_random(in[k], (uint64_t)k, 0.0, 1.0);
    }
    int n_out;
    assert_int_equal(byocl_reference_run(m, "main", in, n_in, &out, &n_out, &err), BYOCL_OK);
    byocl_build_options opt = byocl_build_options_default();
    opt.target = "ref";
    byocl_compiled *c;
    assert_int_equal(byocl_build(m, &opt, &c, &err), BYOCL_OK);
    byocl_plan_stats stats;
    byocl_compiled_stats(c, &stats);
    size_t at = 0;
#define PUT(...) (at += (size_t)snprintf(buf + at, at < len ? len - at : 0, __VA_ARGS__))
    PUT("%sbuiltin:seed on target ref: %d outputs\n", prefix, n_out);
    for (int i = 0; i < n_out; i++) {
        char type_s[256];
        const byocl_shape *shape = byocl_tensor_shape(out[i]);
        byocl_type type = byocl_type_tensor(byocl_tensor_dtype(out[i]), shape->rank, shape->dims);
        PUT("%soutput %d: %s, first values", prefix, i,
            byocl_type_str(&type, type_s, sizeof type_s));
        for (int64_t j = 0; j < byocl_tensor_numel(out[i]) && j < 3; j++)
            PUT(" %.9g", byocl_tensor_get(out[i], j));
        PUT("\n");
    }
    PUT("%sstorage plan: %zu bytes for %zu bytes of intermediates\n", prefix,
        stats.planned_bytes, stats.intermediate_bytes);
#undef PUT
    assert_true(at < len);
    byocl_compiled_free(c);
    byocl_tensors_free(out, n_out);
    byocl_tensors_free(in, n_in);
    byocl_module_free(m);
}

static void test_install_and_consume(void **state)
{
    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    /* A sanitizer build installs an instrumented library that only programs linked with
     * the sanitizer runtime can load; the plain consumer cannot. */
    skip();
#endif
    char build[4096], cmd[16384];
    build_dir(build, sizeof build);
    const char *work = ts_tmpdir("install");
    FMT(cmd, "'%s/../install_consumer/check_install.sh' '%s' '%s/w' 2>&1",
             BYOCL_FIXTURES_DIR, build, work);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char out[8192];
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int rc = pclose(p);
    if (rc != 0)
        fail_msg("check_install.sh failed (%d):\n%s", rc, out);

    /* What the consumer must print, computed here through the static library. */
    byocl_module *m;
    byocl_error err;
    assert_int_equal(byocl_builtin_build("seed", &m, &err), BYOCL_OK);
    int n_fns = byocl_module_num_functions(m);
    byocl_module_free(m);
    char want[4096], example_pc[1500], example_cmake[1500];
    example_output("example pkg-config: ", example_pc, sizeof example_pc);
    example_output("example find_package: ", example_cmake, sizeof example_cmake);
    FMT(want,
             "pkg-config version: %s\n"
             "pkg-config: builtin:seed has %d function(s); byocl %s\n"
             "find_package: builtin:seed has %d function(s); byocl %s\n"
             "cli: byocl %s\n"
             "worker: exit 2: byocl-opencl-build: another byocl's protocol\n"
             "%s%s",
             BYOCL_VERSION_STRING, n_fns, BYOCL_VERSION_STRING, n_fns, BYOCL_VERSION_STRING,
             BYOCL_VERSION_STRING, example_pc, example_cmake);
    assert_string_equal(out, want);
    /* A whole install tree per run would pile up; keep it only when something failed. */
    FMT(cmd, "rm -rf '%s'", work);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_install_and_consume),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
