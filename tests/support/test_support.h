/* Helpers shared by the cmocka suites. Include after <cmocka.h>'s prerequisites. */
#ifndef BYOCL_TEST_SUPPORT_H
#define BYOCL_TEST_SUPPORT_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "byocl/byocl.h"

/* Whole file as a NUL-terminated malloc'ed string (fails the test if unreadable). */
char *ts_read_file(const char *path, size_t *len);
/* Path of a fixture under tests/fixtures (static buffer, valid until the next call). */
const char *ts_fixture(const char *name);
/* A fresh empty directory for this test (under $BYOCL_TEST_TMP or /tmp); static buffer. */
const char *ts_tmpdir(const char *tag);

/* Deletes a directory made by ts_tmpdir (and everything in it). */
void ts_remove_tree(const char *dir);

/* Runs the byocl CLI with `args` (a shell-quoted string) and captures both streams.
 * Returns the exit code; *out and *err are malloc'ed (may be NULL to discard). Without
 * BYOCL_PROGRESS_DELAY in the environment the CLI runs with it "off": no progress lines,
 * so stderr does not depend on how long a command takes. */
int ts_run_cli(const char *args, char **out, char **err);

/* Runs the CLI and checks its exit code and (when want_err is not NULL) that stderr is
 * exactly want_err; returns stdout (malloc'ed). */
char *ts_cli_expect(const char *args, int want_rc, const char *want_err);
/* The same for a failing run that must print nothing on stdout. */
void ts_cli_expect_error(const char *args, int want_rc, const char *want_err);
/* A usage error (exit 2) / a failure (exit 1) with nothing on stdout. */
void ts_cli_expect_usage(const char *args, const char *want_err);
void ts_cli_expect_failure(const char *args, const char *want_err);
/* Relay text (or a fixture file) parsed and type-checked; fails the test with the parser's
 * or type checker's message otherwise. */
byocl_module *ts_parse_typed(const char *text);
byocl_module *ts_parse_typed_file(const char *path);
/* Writes `text` to `path` (fails the test on error). */
void ts_write_text(const char *path, const char *text);

/* A float32 tensor with the given shape and values (values may be NULL: zeros). */
byocl_tensor *ts_tensor_f32(int rank, const int64_t *dims, const float *values);
/* Asserts |got - want| <= atol + rtol * |want| elementwise (both converted to double),
 * and equal dtype and shape; the failure names the first bad index. */
void ts_assert_tensor_close(const byocl_tensor *got, const byocl_tensor *want, double rtol,
                            double atol);
void ts_assert_f32_close(const byocl_tensor *got, const float *want, int64_t n, double rtol,
                         double atol);
/* ||got - want|| / ||want|| (||got - want|| when want is all 0), after asserting equal
 * dtype and shape: the measure for compiled code. NaN against NaN and an infinity against
 * the same one count as equal; any other NaN or infinity makes it NaN or infinite. */
double ts_relative_l2(const byocl_tensor *got, const byocl_tensor *want);
/* Asserts that `haystack` contains `needle` (with a readable failure message). */
void ts_assert_contains(const char *haystack, const char *needle);
/* How many times `needle` occurs in `text` (overlapping occurrences counted). */
int ts_count_substrings(const char *text, const char *needle);

#endif
