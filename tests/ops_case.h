/* The harness of the op suites (tests/test_ops_*.c).
 *
 * A call is tested the way a user meets it: a module `@main(%p0, ...) { op(...) }` is built
 * with the builder API (attributes in the text format's syntax) and type-checked; the op's
 * reference kernel then runs on outputs allocated from the inferred type. Generated cases
 * (tests/gen/gen_ops_<group>.py computes them with numpy; tests/gen/ops_fixture.py writes
 * tests/fixtures/ops/<group>_cases.h) run that way, each as a cmocka test of its own.
 * Header-only (static inline) because each suite is a single source file. */
#ifndef BYOCL_TESTS_OPS_CASE_H
#define BYOCL_TESTS_OPS_CASE_H

#include <math.h> /* NAN, INFINITY in the generated cases */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"
#include "ops/op_impl.h"

#define N_ITEMS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* A tensor type: OP_TYPE(BYOCL_FLOAT32, 1, 3, 8, 8). */
#define OP_TYPE(dtype, ...)                                                               \
    byocl_type_tensor((dtype), (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), \
                      (int64_t[]){__VA_ARGS__})

/* ------------------------------------------------------------ generated cases */

/* One array of a generated case: float16 as bit patterns, bool as bytes. */
typedef struct gen_array {
    byocl_dtype dtype;
    int rank;
    int64_t dims[BYOCL_MAX_RANK];
    const void *data; /* NULL when empty */
} gen_array;

typedef struct gen_case {
    const char *name, *op, *attrs; /* attrs in the text format's syntax */
    bool tuple_arg;                /* the inputs form one Tuple argument (concatenate) */
    bool tuple_result;             /* the outputs are the fields of a tuple */
    int n_in;
    const gen_array *in[5];
    int n_out;
    const gen_array *out[8]; /* expected: dtype, shape and values */
    double rtol, atol;       /* both 0: exact (integers and float16 bit for bit) */
    bool const_args;         /* the inputs are constants of the call, not parameters  */
                             /* (arange: its result's shape needs their values)       */
} gen_case;

static inline byocl_type gen_array_type(const gen_array *a)
{
    return byocl_type_tensor(a->dtype, a->rank, a->dims);
}

static inline byocl_tensor *gen_array_tensor(const gen_array *a)
{
    byocl_shape s = byocl_shape_make(a->rank, a->dims);
    byocl_error err = {0};
    byocl_tensor *t = a->data ? byocl_tensor_from_data(a->dtype, &s, a->data, &err)
                              : byocl_tensor_new(a->dtype, &s, &err);
    if (!t)
        fail_msg("cannot make a tensor: %s", err.msg);
    return t;
}

/* ------------------------------------------------------------ one-call modules */

/* @main(%p0, %p1, ...) { op(args, attrs) }: the call's args are the parameters, or one
 * tuple of them. `status` is the first failure of building or type inference. */
typedef struct op_case {
    byocl_module *m;
    byocl_function *fn;
    int call;
    byocl_status status;
    byocl_error err;
} op_case;

/* The same with the arguments constants of these values (no parameters) when `consts`
 * is not NULL. */
static inline void op_case_build_with(op_case *c, const char *op, const byocl_type *types,
                                      byocl_tensor *const *consts, int n, bool tuple_arg,
                                      const char *attrs)
{
    memset(c, 0, sizeof *c);
    c->call = -1;
    c->m = byocl_module_new();
    assert_non_null(c->m);
    c->fn = byocl_module_add_function(c->m, "main", &c->err);
    assert_non_null(c->fn);
    int args[8];
    assert_true(n <= 8);
    for (int k = 0; k < n; k++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", k);
        args[k] = consts ? byocl_function_add_constant(c->fn, consts[k], &c->err)
                         : byocl_function_add_param(c->fn, name, &types[k], &c->err);
        assert_true(args[k] >= 0);
    }
    int n_args = n;
    if (tuple_arg) {
        args[0] = byocl_function_add_tuple(c->fn, args, n, &c->err);
        assert_true(args[0] >= 0);
        n_args = 1;
    }
    c->call = byocl_function_add_call_str(c->fn, op, args, n_args, attrs, &c->err);
    if (c->call < 0) {
        c->status = c->err.status;
        return;
    }
    c->status = byocl_function_set_body(c->fn, c->call, &c->err);
    if (c->status == BYOCL_OK)
        c->status = byocl_infer_types(c->m, &c->err);
}

static inline void op_case_build(op_case *c, const char *op, const byocl_type *types, int n,
                                 bool tuple_arg, const char *attrs)
{
    op_case_build_with(c, op, types, NULL, n, tuple_arg, attrs);
}

static inline void op_case_free(op_case *c) { byocl_module_free(c->m); }

/* Asserts the case type-checked (the failure shows the error). */
static inline void op_case_expect_ok(const op_case *c, const char *what)
{
    if (c->status != BYOCL_OK)
        fail_msg("%s: %s", what, c->err.msg);
}

/* Where a call fails: building it (attributes, argument count) or type inference. */
typedef enum op_stage { OP_AT_BUILD, OP_AT_INFER } op_stage;

/* Asserts the case failed at `stage` with `status` and exactly `msg`. Type inference puts
 * "in @main, <the call> (<op>): " before the relation's words; `msg` leaves that out. */
static inline void op_case_expect_error(const op_case *c, op_stage stage, byocl_status status,
                                        const char *msg)
{
    if (c->status == BYOCL_OK)
        fail_msg("expected the error \"%s\", but the case type-checked", msg);
    if ((c->call >= 0) != (stage == OP_AT_INFER))
        fail_msg("expected \"%s\" from %s, but %s failed: %s", msg,
                 stage == OP_AT_INFER ? "type inference" : "building the call",
                 c->call >= 0 ? "type inference" : "building the call", c->err.msg);
    const char *want = msg;
    char label[64], located[1024];
    if (stage == OP_AT_INFER) {
        snprintf(located, sizeof located, "in @main, %s (%s): %s",
                 byocl_node_label(c->fn, c->call, label, sizeof label),
                 byocl_node_op(c->fn, c->call), msg);
        want = located;
    }
    assert_string_equal(c->err.msg, want);
    assert_int_equal(c->status, status);
}

/* op(%p0: types[0], ...; attrs) fails at `stage` with `status` and exactly `msg`. */
static inline void op_expect_error(op_stage stage, const char *op, const byocl_type *types, int n,
                                   const char *attrs, byocl_status status, const char *msg)
{
    op_case c;
    op_case_build(&c, op, types, n, false, attrs);
    op_case_expect_error(&c, stage, status, msg);
    op_case_free(&c);
}

static inline void op_expect_type_error(const char *op, const byocl_type *types, int n,
                                        const char *attrs, byocl_status status, const char *msg)
{
    op_expect_error(OP_AT_INFER, op, types, n, attrs, status, msg);
}

static inline void op_expect_build_error(const char *op, const byocl_type *types, int n,
                                         const char *attrs, byocl_status status, const char *msg)
{
    op_expect_error(OP_AT_BUILD, op, types, n, attrs, status, msg);
}

/* Relay text, parsed and type-checked (the test fails otherwise). */
static inline byocl_module *op_parse_typed(const char *text, const char *path)
{
    byocl_module *m = NULL;
    byocl_error err = {0};
    if (byocl_text_parse(text, strlen(text), path, NULL, &m, &err) != BYOCL_OK ||
        byocl_infer_types(m, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return m;
}

/* Runs @main of `m` on the reference executor; asserts it succeeds with `want_outputs`
 * outputs and returns them (free with byocl_tensors_free). */
static inline byocl_tensor **op_run_main(const byocl_module *m, byocl_tensor **in, int n_in,
                                         int want_outputs)
{
    byocl_tensor **out = NULL;
    int n_out = 0;
    byocl_error err = {0};
    if (byocl_reference_run(m, "main", in, n_in, &out, &n_out, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(n_out, want_outputs);
    return out;
}

/* The attribute `key` of the call once validated (defaults filled, normalized), as the
 * printer writes it. */
static inline void op_assert_normalized(const char *op, const byocl_type *types, int n,
                                        const char *attrs, const char *key, const char *want)
{
    op_case c;
    op_case_build(&c, op, types, n, false, attrs);
    op_case_expect_ok(&c, op);
    const byocl_attr *a = byocl_attrs_find(byocl_node_attrs(c.fn, c.call), key);
    if (!a)
        fail_msg("%s(%s) has no attribute %s", op, attrs, key);
    char buf[128];
    assert_string_equal(byocl_attr_value_str(a, buf, sizeof buf), want);
    op_case_free(&c);
}

/* --------------------------------------------------------------------- kernels */

static inline void op_tensors_free(byocl_tensor **t, int n)
{
    for (int k = 0; k < n; k++)
        byocl_tensor_unref(t[k]);
}

/* Runs the call's reference kernel on `in` (flattened inputs) into out[0..*n_out), one
 * tensor per field of the inferred type. The outputs start as junk so that an element the
 * kernel forgets to write shows. */
static inline byocl_status op_case_run(const op_case *c, byocl_tensor *const *in, int n_in,
                                       byocl_tensor **out, int max_out, int *n_out,
                                       byocl_error *err)
{
    assert_int_equal(c->status, BYOCL_OK);
    const byocl_node *node = &c->fn->nodes[c->call];
    const byocl_type *t = node->type;
    int n = t->kind == BYOCL_TYPE_TUPLE ? t->n_fields : 1;
    assert_true(n <= max_out);
    for (int k = 0; k < n; k++) {
        const byocl_type *f = t->kind == BYOCL_TYPE_TUPLE ? t->fields[k] : t;
        assert_int_equal(f->kind, BYOCL_TYPE_TENSOR);
        out[k] = byocl_tensor_new(f->dtype, &f->shape, NULL);
        assert_non_null(out[k]);
        byocl_tensor_fill_random(out[k], 99 + (uint64_t)k, -77.0, 77.0);
    }
    *n_out = n;
    assert_non_null(node->op->ref);
    return node->op->ref(&node->attrs, (const byocl_tensor *const *)in, n_in, out, n, err);
}

/* Runs the op's kernel with its default attributes on zero tensors of `in_types` into
 * tensors of `out_types`, and asserts it refuses them with `status` and exactly `msg`:
 * kernels re-check what they are given rather than trust their caller. */
static inline void op_expect_ref_error(const char *op_name, const byocl_type *in_types, int n_in,
                                       const byocl_type *out_types, int n_out,
                                       byocl_status status, const char *msg)
{
    const byocl_op *op = byocl_op_find(op_name);
    assert_non_null(op);
    assert_non_null(op->ref);
    byocl_module *m = byocl_module_new();
    assert_non_null(m);
    byocl_error err = {0};
    byocl_attrs attrs;
    assert_int_equal(ops_normalize_attrs(m, op, NULL, &attrs, &err), BYOCL_OK);
    byocl_tensor *in[8], *out[8];
    assert_true(n_in <= 8 && n_out <= 8);
    for (int k = 0; k < n_in; k++)
        assert_non_null(in[k] = byocl_tensor_new(in_types[k].dtype, &in_types[k].shape, &err));
    for (int k = 0; k < n_out; k++)
        assert_non_null(out[k] = byocl_tensor_new(out_types[k].dtype, &out_types[k].shape, &err));
    byocl_error_clear(&err);
    byocl_status st = op->ref(&attrs, (const byocl_tensor *const *)in, n_in, out, n_out, &err);
    op_tensors_free(in, n_in);
    op_tensors_free(out, n_out);
    byocl_module_free(m);
    if (st == BYOCL_OK)
        fail_msg("%s kernel: expected the error \"%s\", but it ran", op_name, msg);
    assert_string_equal(err.msg, msg);
    assert_int_equal(st, status);
}

/* ------------------------------------------------------------------ comparisons */

static inline void assert_type_is(const char *what, const byocl_type *got, const gen_array *want)
{
    byocl_type w = gen_array_type(want);
    char a[256], b[256];
    if (!byocl_type_equal(got, &w))
        fail_msg("%s: type %s, want %s", what, byocl_type_str(got, a, sizeof a),
                 byocl_type_str(&w, b, sizeof b));
}

/* Same dtype, shape and bytes (with nan_any, any NaN matches any NaN); the failure names
 * the first differing element. */
static inline void assert_tensor_elements_equal(const byocl_tensor *got,
                                                const byocl_tensor *want, bool nan_any,
                                                const char *what)
{
    assert_int_equal(byocl_tensor_dtype(got), byocl_tensor_dtype(want));
    assert_true(byocl_shape_equal(byocl_tensor_shape(got), byocl_tensor_shape(want)));
    size_t es = byocl_dtype_size(byocl_tensor_dtype(want));
    const unsigned char *g = byocl_tensor_cdata(got), *w = byocl_tensor_cdata(want);
    for (int64_t e = 0; e < byocl_tensor_numel(want); e++) {
        double gv = byocl_tensor_get(got, e), wv = byocl_tensor_get(want, e);
        if (nan_any && isnan(gv) && isnan(wv))
            continue;
        if (memcmp(g + (size_t)e * es, w + (size_t)e * es, es) != 0)
            fail_msg("%s: element %lld is %.17g, want %.17g", what, (long long)e, gv, wv);
    }
}

static inline void assert_tensor_bytes_equal(const byocl_tensor *got, const byocl_tensor *want,
                                             const char *what)
{
    assert_tensor_elements_equal(got, want, false, what);
}

/* The same, except that any NaN matches any NaN: NaN payloads are not part of any op's
 * meaning, and kernels produce different ones (PoCL's NAN, an input's NaN). */
static inline void assert_tensor_values_equal(const byocl_tensor *got, const byocl_tensor *want,
                                              const char *what)
{
    assert_tensor_elements_equal(got, want, true, what);
}

/* The case's call built and type-checked into *c, and its inputs as tensors in[0..n_in). */
static inline void gen_case_build(const gen_case *k, op_case *c, byocl_tensor **in)
{
    byocl_type types[5];
    assert_true(k->n_in <= 5);
    for (int i = 0; i < k->n_in; i++) {
        types[i] = gen_array_type(k->in[i]);
        in[i] = gen_array_tensor(k->in[i]);
    }
    op_case_build_with(c, k->op, types, k->const_args ? in : NULL, k->n_in, k->tuple_arg,
                       k->attrs);
    op_case_expect_ok(c, k->name);
}

/* The parameters of a generated case's module: its inputs, or none (const_args). */
static inline int gen_case_n_params(const gen_case *k) { return k->const_args ? 0 : k->n_in; }

/* Builds, type-checks and runs one generated case against numpy's values: floats within
 * the case's tolerance (NaN matches NaN), integers, bools and exact float16 and bfloat16 bit for bit. */
static inline void gen_case_check(const gen_case *k)
{
    byocl_tensor *in[5], *out[8];
    op_case c;
    gen_case_build(k, &c, in);
    const byocl_type *t = byocl_node_type(c.fn, c.call);
    char what[160];
    if (k->tuple_result) {
        assert_int_equal(t->kind, BYOCL_TYPE_TUPLE);
        assert_int_equal(t->n_fields, k->n_out);
    } else {
        assert_int_equal(k->n_out, 1);
    }
    for (int i = 0; i < k->n_out; i++) {
        snprintf(what, sizeof what, "%s output %d", k->name, i);
        assert_type_is(what, k->tuple_result ? t->fields[i] : t, k->out[i]);
    }
    int n_out = 0;
    byocl_error err = {0};
    byocl_status st = op_case_run(&c, in, k->n_in, out, 8, &n_out, &err);
    if (st != BYOCL_OK)
        fail_msg("%s: kernel failed: %s", k->name, err.msg);
    bool exact = k->rtol == 0 && k->atol == 0;
    for (int i = 0; i < n_out; i++) {
        byocl_tensor *want = gen_array_tensor(k->out[i]);
        byocl_dtype dtype = k->out[i]->dtype;
        snprintf(what, sizeof what, "%s output %d", k->name, i);
        if (byocl_dtype_is_float(dtype) &&
            !(exact && (dtype == BYOCL_FLOAT16 || dtype == BYOCL_BFLOAT16)))
            ts_assert_tensor_close(out[i], want, k->rtol, k->atol);
        else
            assert_tensor_bytes_equal(out[i], want, what);
        byocl_tensor_unref(want);
    }
    op_tensors_free(out, n_out);
    op_tensors_free(in, k->n_in);
    op_case_free(&c);
}

static inline void gen_case_test(void **state) { gen_case_check(*state); }

/* Runs every generated case as a cmocka test of its own (named after the case), then
 * `extra`. Returns the number of failures. */
static inline int op_run_suite(const char *group, const gen_case *cases, int n_cases,
                               const struct CMUnitTest *extra, int n_extra)
{
    struct CMUnitTest *tests = calloc((size_t)(n_cases + n_extra), sizeof *tests);
    if (!tests)
        return 1;
    for (int k = 0; k < n_cases; k++)
        tests[k] = (struct CMUnitTest){.name = cases[k].name, .test_func = gen_case_test,
                                       .initial_state = (void *)&cases[k]};
    for (int k = 0; k < n_extra; k++)
        tests[n_cases + k] = extra[k];
    int failed = _cmocka_run_group_tests(group, tests, (size_t)(n_cases + n_extra), NULL, NULL);
    free(tests);
    return failed;
}

/* ------------------------------------------------------------------ the registry */

/* The op is registered, documented, and documents each attribute. */
static inline const byocl_op *op_assert_documented(const char *name)
{
    const byocl_op *op = byocl_op_find(name);
    if (!op)
        fail_msg("op %s is not registered", name);
    if (!byocl_op_doc(op)[0])
        fail_msg("op %s has no doc", name);
    for (int k = 0; k < byocl_op_num_attrs(op); k++)
        if (!byocl_op_attr_doc(op, k)[0])
            fail_msg("attribute %s of %s has no doc", byocl_op_attr_name(op, k), name);
    return op;
}

static inline void assert_ops_documented(const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        op_assert_documented(names[i]);
}

/* One attribute of an op's schema: its name and its default as `byocl ops` shows it
 * (NULL: required, no default). */
typedef struct op_attr_spec {
    const char *name, *def;
} op_attr_spec;

/* The op is documented and has exactly these attributes, in this order, with these
 * defaults. */
static inline void op_assert_schema(const char *name, const op_attr_spec *attrs, int n)
{
    const byocl_op *op = op_assert_documented(name);
    assert_int_equal(byocl_op_num_attrs(op), n);
    for (int k = 0; k < n; k++) {
        assert_string_equal(byocl_op_attr_name(op, k), attrs[k].name);
        assert_int_equal(byocl_op_attr_required(op, k), attrs[k].def == NULL);
        if (attrs[k].def) {
            char buf[128];
            assert_string_equal(byocl_op_attr_default_str(op, k, buf, sizeof buf), attrs[k].def);
        }
    }
}

#endif
