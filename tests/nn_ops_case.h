/* Shared by test_ops_conv.c, test_ops_pool.c and test_ops_nn.c: op test cases whose
 * inputs and expected outputs tests/gen/gen_ops_{conv,pool,nn}.py computed with numpy
 * (tests/fixtures/ops/{conv,pool,nn}_cases.h), and helpers for type-relation errors.
 *
 * A case is run the way the reference executor runs a call: a module `@main` with one
 * parameter per input and the op call as body is built and type-checked, the inferred
 * type is compared with the expected outputs' types, and the op's `ref` kernel runs on
 * the inputs with outputs allocated from the inferred type. */
#ifndef BYOCL_TEST_NN_OPS_CASE_H
#define BYOCL_TEST_NN_OPS_CASE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"
#include "ops/op_impl.h"

/* A typed array: float16 data are IEEE bit patterns, bool data are bytes. */
typedef struct nn_array {
    byocl_dtype dtype;
    int rank;
    int64_t dims[BYOCL_MAX_RANK];
    const void *data; /* NULL when empty */
} nn_array;

typedef struct nn_case_attr {
    const char *key;
    byocl_attr_kind kind;
    int64_t i;         /* INT, BOOL */
    double f;          /* FLOAT */
    const char *s;     /* STR */
    int n;             /* INTS */
    int64_t ints[4];
} nn_case_attr;

#define NN_MAX_CASE_ATTRS 8

typedef struct nn_case {
    const char *name;
    const char *op;
    int n_attrs;
    nn_case_attr attrs[NN_MAX_CASE_ATTRS];
    int n_in;
    const nn_array *in[5];
    int n_out;
    const nn_array *out[3]; /* expected: dtype, shape and values */
    double rtol, atol;
} nn_case;

#define NN_INT(k, v) {.key = (k), .kind = BYOCL_ATTR_INT, .i = (v)}
#define NN_BOOL(k, v) {.key = (k), .kind = BYOCL_ATTR_BOOL, .i = (v)}
#define NN_FLOAT(k, v) {.key = (k), .kind = BYOCL_ATTR_FLOAT, .f = (v)}
#define NN_STR(k, v) {.key = (k), .kind = BYOCL_ATTR_STR, .s = (v)}
#define NN_NONE(k) {.key = (k), .kind = BYOCL_ATTR_NULL}
#define NN_INTS(k, ...)                                                              \
    {.key = (k), .kind = BYOCL_ATTR_INTS,                                            \
     .n = (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), .ints = {__VA_ARGS__}}
/* A tensor type: NN_TYPE(BYOCL_FLOAT32, 1, 3, 8, 8). */
#define NN_TYPE(dtype, ...)                                                               \
    byocl_type_tensor((dtype), (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), \
                      (int64_t[]){__VA_ARGS__})

static inline byocl_attrs *nn_case_attrs(byocl_module *m, const nn_case_attr *attrs, int n)
{
    byocl_attrs *a = byocl_attrs_new(m);
    assert_non_null(a);
    for (int k = 0; k < n; k++) {
        const nn_case_attr *c = &attrs[k];
        byocl_status st = BYOCL_OK;
        switch (c->kind) {
        case BYOCL_ATTR_INT: st = byocl_attrs_set_int(m, a, c->key, c->i); break;
        case BYOCL_ATTR_BOOL: st = byocl_attrs_set_bool(m, a, c->key, c->i != 0); break;
        case BYOCL_ATTR_FLOAT: st = byocl_attrs_set_float(m, a, c->key, c->f); break;
        case BYOCL_ATTR_STR: st = byocl_attrs_set_str(m, a, c->key, c->s); break;
        case BYOCL_ATTR_INTS: st = byocl_attrs_set_ints(m, a, c->key, c->ints, c->n); break;
        case BYOCL_ATTR_NULL: st = byocl_attrs_set_null(m, a, c->key); break;
        }
        assert_int_equal(st, BYOCL_OK);
    }
    return a;
}

static inline byocl_type nn_array_type(const nn_array *a)
{
    return byocl_type_tensor(a->dtype, a->rank, a->dims);
}

static inline byocl_tensor *nn_array_tensor(const nn_array *a)
{
    byocl_shape s = byocl_shape_make(a->rank, a->dims);
    byocl_error err;
    byocl_tensor *t = a->data ? byocl_tensor_from_data(a->dtype, &s, a->data, &err)
                              : byocl_tensor_new(a->dtype, &s, &err);
    if (!t)
        fail_msg("cannot make a tensor: %s", err.msg);
    return t;
}

/* Builds `@main(%p0, ...) { op(%p0, ...) }`, type-checks it and returns the call's id. */
static inline int nn_case_module(const char *op, const byocl_type *arg_types, int n_args,
                                 const nn_case_attr *attrs, int n_attrs, byocl_module **out,
                                 byocl_error *err)
{
    byocl_module *m = byocl_module_new();
    assert_non_null(m);
    *out = m;
    byocl_function *fn = byocl_module_add_function(m, "main", err);
    assert_non_null(fn);
    int args[8];
    assert_true(n_args <= 8);
    for (int k = 0; k < n_args; k++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", k);
        args[k] = byocl_build_param(fn, name, &arg_types[k], err);
        assert_true(args[k] >= 0);
    }
    int call = byocl_build_call(fn, op, args, n_args, nn_case_attrs(m, attrs, n_attrs), err);
    if (call < 0)
        return -1;
    if (byocl_function_set_body(fn, call, err) != BYOCL_OK ||
        byocl_infer_types(m, err) != BYOCL_OK)
        return -1;
    return call;
}

static inline void nn_assert_type(const char *what, const byocl_type *got, const nn_array *want)
{
    byocl_type w = nn_array_type(want);
    if (!byocl_type_equal(got, &w)) {
        char a[256], b[256];
        fail_msg("%s: type %s, want %s", what, byocl_type_str(got, a, sizeof a),
                 byocl_type_str(&w, b, sizeof b));
    }
}

static inline void nn_assert_values(const char *what, const byocl_tensor *got,
                                    const byocl_tensor *want, double rtol, double atol)
{
    int64_t n = byocl_tensor_numel(want);
    assert_int_equal(byocl_tensor_numel(got), n);
    for (int64_t i = 0; i < n; i++) {
        double g = byocl_tensor_get(got, i), w = byocl_tensor_get(want, i);
        if (isnan(w) && isnan(g))
            continue;
        if (isinf(w) && g == w)
            continue;
        if (!(fabs(g - w) <= atol + rtol * fabs(w)))
            fail_msg("%s: element %lld is %.9g, want %.9g (rtol %g, atol %g)", what,
                     (long long)i, g, w, rtol, atol);
    }
}

static inline void nn_case_run(const nn_case *c)
{
    byocl_error err;
    byocl_type types[5];
    for (int k = 0; k < c->n_in; k++)
        types[k] = nn_array_type(c->in[k]);
    byocl_module *m = NULL;
    int call = nn_case_module(c->op, types, c->n_in, c->attrs, c->n_attrs, &m, &err);
    if (call < 0)
        fail_msg("%s: %s", c->name, err.msg);
    byocl_function *fn = byocl_module_find(m, "main");

    /* The inferred type: one tensor, or a tuple of them. */
    const byocl_type *type = byocl_node_type(fn, call);
    const byocl_type *fields[3];
    char what[160];
    if (c->n_out == 1) {
        fields[0] = type;
    } else {
        assert_int_equal(type->kind, BYOCL_TYPE_TUPLE);
        assert_int_equal(type->n_fields, c->n_out);
        for (int k = 0; k < c->n_out; k++)
            fields[k] = type->fields[k];
    }
    for (int k = 0; k < c->n_out; k++) {
        snprintf(what, sizeof what, "%s output %d", c->name, k);
        nn_assert_type(what, fields[k], c->out[k]);
    }

    /* The kernel, on outputs allocated from the inferred type and filled with junk so
     * that an element the kernel forgets to write shows. */
    byocl_tensor *in[5], *out[3];
    for (int k = 0; k < c->n_in; k++)
        in[k] = nn_array_tensor(c->in[k]);
    for (int k = 0; k < c->n_out; k++) {
        out[k] = byocl_tensor_new(fields[k]->dtype, &fields[k]->shape, &err);
        assert_non_null(out[k]);
        byocl_tensor_fill_random(out[k], 99 + (uint64_t)k, -77.0, 77.0);
    }
    const byocl_op *op = byocl_op_find(c->op);
    assert_non_null(op);
    assert_non_null(op->ref);
    byocl_status st = op->ref(byocl_node_attrs(fn, call), (const byocl_tensor *const *)in,
                              c->n_in, out, c->n_out, &err);
    if (st != BYOCL_OK)
        fail_msg("%s: kernel failed: %s", c->name, err.msg);
    for (int k = 0; k < c->n_out; k++) {
        byocl_tensor *want = nn_array_tensor(c->out[k]);
        snprintf(what, sizeof what, "%s output %d", c->name, k);
        nn_assert_values(what, out[k], want, c->rtol, c->atol);
        byocl_tensor_unref(want);
        byocl_tensor_unref(out[k]);
    }
    for (int k = 0; k < c->n_in; k++)
        byocl_tensor_unref(in[k]);
    byocl_module_free(m);
}

static inline void nn_case_test(void **state) { nn_case_run(*state); }

/* Runs every case as a cmocka test of its own (named after the case), then `extra`. */
static inline int nn_run_suite(const char *group, const nn_case *cases, int n_cases,
                               const struct CMUnitTest *extra, int n_extra)
{
    struct CMUnitTest *tests = calloc((size_t)(n_cases + n_extra), sizeof *tests);
    if (!tests)
        return 1;
    for (int k = 0; k < n_cases; k++)
        tests[k] = (struct CMUnitTest){.name = cases[k].name, .test_func = nn_case_test,
                                       .initial_state = (void *)&cases[k]};
    for (int k = 0; k < n_extra; k++)
        tests[n_cases + k] = extra[k];
    int failed = _cmocka_run_group_tests(group, tests, (size_t)(n_cases + n_extra), NULL, NULL);
    free(tests);
    return failed;
}

/* The op exists with these attributes in this order, a doc line, and a doc per attribute. */
static inline void nn_assert_op_schema(const char *name, const char *const *attrs, int n)
{
    const byocl_op *op = byocl_op_find(name);
    if (!op)
        fail_msg("op %s is not registered", name);
    assert_true(strlen(byocl_op_doc(op)) > 0);
    assert_int_equal(byocl_op_num_attrs(op), n);
    for (int k = 0; k < n; k++) {
        assert_string_equal(byocl_op_attr_name(op, k), attrs[k]);
        assert_true(strlen(byocl_op_attr_doc(op, k)) > 0);
        assert_false(byocl_op_attr_required(op, k));
    }
}

/* The default of attribute `key` as `byocl ops` shows it. */
static inline void nn_assert_attr_default(const char *name, const char *key, const char *want)
{
    const byocl_op *op = byocl_op_find(name);
    assert_non_null(op);
    for (int k = 0; k < byocl_op_num_attrs(op); k++) {
        if (strcmp(byocl_op_attr_name(op, k), key) != 0)
            continue;
        char buf[128];
        assert_string_equal(byocl_op_attr_default_str(op, k, buf, sizeof buf), want);
        return;
    }
    fail_msg("%s has no attribute %s", name, key);
}

/* The attribute `key` of a call after validation (defaults filled, normalized). */
static inline void nn_assert_normalized(const char *op, const byocl_type *arg_types, int n_args,
                                        const nn_case_attr *attrs, int n_attrs, const char *key,
                                        const char *want)
{
    byocl_module *m = NULL;
    byocl_error err;
    int call = nn_case_module(op, arg_types, n_args, attrs, n_attrs, &m, &err);
    if (call < 0)
        fail_msg("%s: %s", op, err.msg);
    const byocl_attr *a = byocl_attrs_find(byocl_node_attrs(byocl_module_find(m, "main"), call),
                                           key);
    assert_non_null(a);
    char buf[128];
    assert_string_equal(byocl_attr_value_str(a, buf, sizeof buf), want);
    byocl_module_free(m);
}

/* Runs the op's kernel (default attributes) on zero tensors of `in_types` into tensors of
 * `out_types` and asserts its exact error. */
static inline void nn_expect_ref_error(const char *op_name, const byocl_type *in_types, int n_in,
                                       const byocl_type *out_types, int n_out,
                                       const char *want_msg)
{
    const byocl_op *op = byocl_op_find(op_name);
    assert_non_null(op);
    byocl_module *m = byocl_module_new();
    assert_non_null(m);
    byocl_error err;
    byocl_attrs attrs;
    assert_int_equal(byocl_op_normalize_attrs(m, op, NULL, &attrs, &err), BYOCL_OK);
    byocl_tensor *in[8], *out[8];
    assert_true(n_in <= 8 && n_out <= 8);
    for (int k = 0; k < n_in; k++)
        assert_non_null(in[k] = byocl_tensor_new(in_types[k].dtype, &in_types[k].shape, &err));
    for (int k = 0; k < n_out; k++)
        assert_non_null(out[k] = byocl_tensor_new(out_types[k].dtype, &out_types[k].shape, &err));
    byocl_error_clear(&err);
    byocl_status st = op->ref(&attrs, (const byocl_tensor *const *)in, n_in, out, n_out, &err);
    for (int k = 0; k < n_in; k++)
        byocl_tensor_unref(in[k]);
    for (int k = 0; k < n_out; k++)
        byocl_tensor_unref(out[k]);
    byocl_module_free(m);
    assert_int_not_equal(st, BYOCL_OK);
    assert_string_equal(err.msg, want_msg);
}

/* Runs the op's attribute check and type relation directly, as type inference does, and
 * asserts the exact status and message. */
static inline void nn_expect_infer_error(const char *op_name, const byocl_type *arg_types,
                                         int n_args, const nn_case_attr *attrs, int n_attrs,
                                         byocl_status want_status, const char *want_msg)
{
    const byocl_op *op = byocl_op_find(op_name);
    assert_non_null(op);
    byocl_module *m = byocl_module_new();
    assert_non_null(m);
    byocl_error err;
    byocl_error_clear(&err);
    byocl_attrs norm;
    byocl_status st = byocl_op_normalize_attrs(m, op, nn_case_attrs(m, attrs, n_attrs), &norm,
                                               &err);
    if (st == BYOCL_OK) {
        const byocl_type *types[8];
        for (int k = 0; k < n_args; k++)
            types[k] = &arg_types[k];
        byocl_infer_ctx ctx = {.mod = m, .arg_types = types, .n_args = n_args, .attrs = &norm};
        byocl_type out = byocl_type_none;
        st = op->infer(&ctx, &out, &err);
    }
    byocl_module_free(m);
    if (st == BYOCL_OK)
        fail_msg("%s: expected the error \"%s\", but it passed", op_name, want_msg);
    if (strcmp(err.msg, want_msg) != 0)
        fail_msg("%s: error\n  \"%s\"\nwant\n  \"%s\"", op_name, err.msg, want_msg);
    assert_int_equal(st, want_status);
}

/* The same error as a user meets it: building and type-checking a module; the message
 * carries the node and op around the relation's text. Returns nothing; asserts. */
static inline void nn_expect_module_error(const char *op, const byocl_type *arg_types,
                                          int n_args, const nn_case_attr *attrs, int n_attrs,
                                          byocl_status want_status, const char *want_part)
{
    byocl_module *m = NULL;
    byocl_error err;
    byocl_error_clear(&err);
    int call = nn_case_module(op, arg_types, n_args, attrs, n_attrs, &m, &err);
    byocl_module_free(m);
    if (call >= 0)
        fail_msg("%s: expected an error containing \"%s\", but it passed", op, want_part);
    ts_assert_contains(err.msg, want_part);
    assert_int_equal(err.status, want_status);
}

#endif
