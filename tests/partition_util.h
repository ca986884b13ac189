/* Helpers shared by the annotation and partitioning suites (test_regions, test_merge,
 * test_partition, test_extract): modules from Relay text, printing, node lookup by the
 * printed number, and running two modules on the same random inputs. Include after
 * test_support.h. */
#ifndef BYOCL_TEST_PARTITION_UTIL_H
#define BYOCL_TEST_PARTITION_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/byocl.h"

/* A module from Relay text, types inferred (fails the test on any error). */
static inline byocl_module *pu_parse(const char *text)
{
    byocl_module *m = NULL;
    byocl_error err;
    if (byocl_text_parse(text, strlen(text), "test.relay", NULL, &m, &err) != BYOCL_OK)
        fail_msg("parse: %s\n%s", err.msg, text);
    if (byocl_infer_types(m, &err) != BYOCL_OK)
        fail_msg("infer_types: %s\n%s", err.msg, text);
    return m;
}

/* The module as Relay text (types shown or not); caller frees. */
static inline char *pu_print(const byocl_module *m, bool types)
{
    byocl_print_options opt = {.show_types = types};
    byocl_error err;
    char *text = byocl_text_print(m, &opt, NULL, &err);
    if (!text)
        fail_msg("print: %s", err.msg);
    return text;
}

/* Asserts the module prints (without types) as `want`. */
static inline void pu_assert_prints(const byocl_module *m, const char *want)
{
    char *got = pu_print(m, false);
    if (strcmp(got, want) != 0)
        fail_msg("printed:\n%s\nwanted:\n%s", got, want);
    free(got);
}

/* Node id of @main's %number. */
static inline int pu_node(const byocl_module *m, int number)
{
    int id = byocl_text_node_by_number(byocl_module_find(m, "main"), number);
    if (id < 0)
        fail_msg("@main has no %%%d", number);
    return id;
}

/* Asserts that `status` failed with exactly `want` as the message. */
#define PU_ASSERT_ERROR(status, err, want_status, want)                                     \
    do {                                                                                  \
        byocl_status pu_st_ = (status);                                                   \
        if (pu_st_ != (want_status))                                                      \
            fail_msg("status %d (%s), wanted %d", pu_st_, (err).msg, (want_status));      \
        assert_string_equal((err).msg, (want));                                           \
    } while (0)

/* One random tensor per parameter of @main (values in [-1, 1), deterministic). */
static inline byocl_tensor **pu_random_inputs(const byocl_module *m, uint64_t seed, int *n)
{
    const byocl_function *fn = byocl_module_find(m, "main");
    *n = byocl_function_num_params(fn);
    byocl_tensor **in = calloc((size_t)*n + 1, sizeof *in);
    assert_non_null(in);
    for (int k = 0; k < *n; k++) {
        const byocl_type *t = byocl_node_type(fn, byocl_function_param(fn, k));
        assert_int_equal(t->kind, BYOCL_TYPE_TENSOR);
        in[k] = byocl_tensor_new(t->dtype, &t->shape, NULL);
        assert_non_null(in[k]);
        byocl_tensor_fill_random(in[k], seed + (uint64_t)k, -1.0, 1.0);
    }
    return in;
}

/* Runs @main of `m` on `in`; returns the outputs (free with byocl_tensors_free). */
static inline byocl_tensor **pu_run(const byocl_module *m, byocl_tensor *const *in, int n_in,
                                    int *n_out)
{
    byocl_tensor **out = NULL;
    byocl_error err;
    if (byocl_reference_run(m, "main", in, n_in, &out, n_out, &err) != BYOCL_OK)
        fail_msg("reference run: %s", err.msg);
    return out;
}

/* Asserts that @main of `a` and of `b` (same parameters) give bit-identical outputs on
 * the same random inputs. */
static inline void pu_assert_same_outputs(const byocl_module *a, const byocl_module *b,
                                          uint64_t seed)
{
    int n_in;
    byocl_tensor **in = pu_random_inputs(a, seed, &n_in);
    int n_a, n_b;
    byocl_tensor **out_a = pu_run(a, in, n_in, &n_a);
    byocl_tensor **out_b = pu_run(b, in, n_in, &n_b);
    assert_int_equal(n_a, n_b);
    for (int i = 0; i < n_a; i++)
        if (!byocl_tensor_equal(out_a[i], out_b[i]))
            fail_msg("output %d differs", i);
    byocl_tensors_free(out_a, n_a);
    byocl_tensors_free(out_b, n_b);
    byocl_tensors_free(in, n_in);
}

/* A deep copy (fails the test on error). */
static inline byocl_module *pu_clone(const byocl_module *m)
{
    byocl_error err;
    byocl_module *c = byocl_module_clone(m, &err);
    if (!c)
        fail_msg("clone: %s", err.msg);
    return c;
}

/* Prints, parses back and prints again: the same text, and the parsed module type-checks
 * and verifies. */
static inline void pu_assert_round_trips(const byocl_module *m)
{
    byocl_params *meta = byocl_params_new();
    assert_non_null(meta);
    byocl_print_options opt = {.show_types = true};
    byocl_error err;
    char *text = byocl_text_print(m, &opt, meta, &err);
    assert_non_null(text);
    byocl_module *back = NULL;
    if (byocl_text_parse(text, strlen(text), "printed.relay", meta, &back, &err) != BYOCL_OK)
        fail_msg("parse back: %s", err.msg);
    assert_int_equal(byocl_infer_types(back, &err), BYOCL_OK);
    assert_int_equal(byocl_verify(back, true, &err), BYOCL_OK);
    char *again = byocl_text_print(back, &opt, NULL, &err);
    assert_non_null(again);
    assert_string_equal(again, text);
    free(again);
    free(text);
    byocl_module_free(back);
    byocl_params_free(meta);
}

#endif
