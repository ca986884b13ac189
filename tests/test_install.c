/* `cmake --install` into a temporary prefix gives a library, headers, CLI, CMake package
 * and pkg-config file that a program outside the tree can build against and run. */
#include "test_support.h"

#include "byocl/frontend.h"

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
    char want[1024];
    FMT(want,
             "pkg-config version: %s\n"
             "pkg-config: builtin:seed has %d function(s); byocl %s\n"
             "find_package: builtin:seed has %d function(s); byocl %s\n"
             "cli: byocl %s\n",
             BYOCL_VERSION_STRING, n_fns, BYOCL_VERSION_STRING, n_fns, BYOCL_VERSION_STRING,
             BYOCL_VERSION_STRING);
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
