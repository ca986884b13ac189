#include "test_support.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

char *ts_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    size_t got = fread(buf, 1, (size_t)n, f);
    fclose(f);
    buf[got] = '\0';
    if (len)
        *len = got;
    return buf;
}

const char *ts_fixture(const char *name)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", BYOCL_FIXTURES_DIR, name);
    return path;
}

const char *ts_tmpdir(const char *tag)
{
    static char path[4096];
    const char *base = getenv("BYOCL_TEST_TMP");
    if (!base)
        base = "/tmp/byocl-test";
    mkdir(base, 0777);
    snprintf(path, sizeof path, "%s/%s-%ld", base, tag, (long)getpid());
    char cmd[2 * sizeof path + 64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", path, path);
    if (system(cmd) != 0)
        fail_msg("cannot create %s", path);
    return path;
}

void ts_remove_tree(const char *dir)
{
    size_t need = strlen(dir) + 16;
    char *cmd = malloc(need);
    assert_non_null(cmd);
    snprintf(cmd, need, "rm -rf '%s'", dir);
    int rc = system(cmd);
    free(cmd);
    assert_int_equal(rc, 0);
}

static char *slurp_and_remove(const char *path)
{
    char *s = ts_read_file(path, NULL);
    remove(path);
    return s;
}

int ts_run_cli(const char *args, char **out, char **err)
{
    char out_path[256], err_path[256];
    snprintf(out_path, sizeof out_path, "/tmp/byocl-cli-%ld.out", (long)getpid());
    snprintf(err_path, sizeof err_path, "/tmp/byocl-cli-%ld.err", (long)getpid());
    size_t need = strlen(args) + strlen(BYOCL_CLI_PATH) + 600;
    char *cmd = malloc(need);
    assert_non_null(cmd);
    /* Progress lines on stderr would depend on how long a command takes (over a second on
     * a loaded machine or under valgrind): off, unless the test sets the delay itself. */
    const char *progress = getenv("BYOCL_PROGRESS_DELAY") ? "" : "BYOCL_PROGRESS_DELAY=off ";
    snprintf(cmd, need, "%s'%s' %s >'%s' 2>'%s' </dev/null", progress, BYOCL_CLI_PATH, args,
             out_path, err_path);
    int rc = system(cmd);
    free(cmd);
    char *o = slurp_and_remove(out_path);
    char *e = slurp_and_remove(err_path);
    if (out)
        *out = o;
    else
        free(o);
    if (err)
        *err = e;
    else
        free(e);
    if (rc == -1 || !WIFEXITED(rc))
        return -1;
    return WEXITSTATUS(rc);
}

char *ts_cli_expect(const char *args, int want_rc, const char *want_err)
{
    char *out, *err;
    int rc = ts_run_cli(args, &out, &err);
    if (rc != want_rc)
        fail_msg("byocl %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, rc, want_rc, out,
                 err);
    if (want_err)
        assert_string_equal(err, want_err);
    free(err);
    return out;
}

void ts_cli_expect_error(const char *args, int want_rc, const char *want_err)
{
    char *out = ts_cli_expect(args, want_rc, want_err);
    assert_string_equal(out, "");
    free(out);
}

void ts_cli_expect_usage(const char *args, const char *want_err)
{
    ts_cli_expect_error(args, 2, want_err);
}

void ts_cli_expect_failure(const char *args, const char *want_err)
{
    ts_cli_expect_error(args, 1, want_err);
}

void ts_write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
}

byocl_tensor *ts_tensor_f32(int rank, const int64_t *dims, const float *values)
{
    byocl_shape s = byocl_shape_make(rank, dims);
    byocl_tensor *t = values ? byocl_tensor_from_data(BYOCL_FLOAT32, &s, values, NULL)
                             : byocl_tensor_new(BYOCL_FLOAT32, &s, NULL);
    assert_non_null(t);
    return t;
}

void ts_assert_tensor_close(const byocl_tensor *got, const byocl_tensor *want, double rtol,
                            double atol)
{
    assert_non_null(got);
    assert_non_null(want);
    assert_int_equal(byocl_tensor_dtype(got), byocl_tensor_dtype(want));
    char a[128], b[128];
    if (!byocl_shape_equal(byocl_tensor_shape(got), byocl_tensor_shape(want)))
        fail_msg("shape %s, want %s", byocl_shape_str(byocl_tensor_shape(got), a, sizeof a),
                 byocl_shape_str(byocl_tensor_shape(want), b, sizeof b));
    byocl_compare_options tolerance = {.rtol = rtol, .atol = atol};
    byocl_compare_result r;
    byocl_error err = {0};
    if (byocl_tensor_compare(got, want, &tolerance, &r, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    int64_t i = r.first_mismatch;
    if (!r.ok)
        fail_msg("element %lld: got %.9g, want %.9g (rtol %g, atol %g)", (long long)i,
                 byocl_tensor_get(got, i), byocl_tensor_get(want, i), rtol, atol);
}

void ts_assert_f32_close(const byocl_tensor *got, const float *want, int64_t n, double rtol,
                         double atol)
{
    assert_non_null(got);
    assert_int_equal(byocl_tensor_dtype(got), BYOCL_FLOAT32);
    assert_int_equal(byocl_tensor_numel(got), n);
    byocl_tensor *w = byocl_tensor_from_data(BYOCL_FLOAT32, byocl_tensor_shape(got), want, NULL);
    assert_non_null(w);
    ts_assert_tensor_close(got, w, rtol, atol);
    byocl_tensor_unref(w);
}

double ts_relative_l2(const byocl_tensor *got, const byocl_tensor *want)
{
    assert_int_equal(byocl_tensor_dtype(got), byocl_tensor_dtype(want));
    assert_true(byocl_shape_equal(byocl_tensor_shape(got), byocl_tensor_shape(want)));
    byocl_compare_result r;
    assert_int_equal(byocl_tensor_compare(got, want, NULL, &r, NULL), BYOCL_OK);
    return r.sum_sq_expected > 0 ? sqrt(r.sum_sq_error / r.sum_sq_expected)
                                 : sqrt(r.sum_sq_error);
}

void ts_assert_contains(const char *haystack, const char *needle)
{
    if (!haystack || !strstr(haystack, needle))
        fail_msg("expected to find \"%s\" in:\n%s", needle, haystack ? haystack : "(null)");
}

int ts_count_substrings(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* m once parsed (`parsed` is the parser's status) and type-checked, or the test fails. */
static byocl_module *typed_or_fail(byocl_status parsed, byocl_module *m, byocl_error *err)
{
    if (parsed != BYOCL_OK || byocl_infer_types(m, err) != BYOCL_OK)
        fail_msg("%s", err->msg);
    return m;
}

byocl_module *ts_parse_typed(const char *text)
{
    byocl_module *m = NULL;
    byocl_error err = {0};
    byocl_status st = byocl_text_parse(text, strlen(text), "test.relay", NULL, &m, &err);
    return typed_or_fail(st, m, &err);
}

byocl_module *ts_parse_typed_file(const char *path)
{
    byocl_module *m = NULL;
    byocl_error err = {0};
    byocl_status st = byocl_text_parse_file(path, NULL, &m, &err);
    return typed_or_fail(st, m, &err);
}
