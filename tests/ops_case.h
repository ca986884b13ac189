/* Helpers for the op suites (tests/test_ops_*.c): build a one-call module with the builder
 * API, infer its types, run the op's reference kernel, and check generated cases
 * (tests/gen/gen_ops_*.py writes tests/fixtures/ops/<group>_cases.h with numpy's values).
 * Header-only (static inline) because each suite is a single source file. */
#ifndef BYOCL_TESTS_OPS_CASE_H
#define BYOCL_TESTS_OPS_CASE_H

#include <math.h> /* NAN, INFINITY in the generated cases */
#include <stdlib.h>
#include <string.h>

#include "test_support.h"
#include "ops/op_impl.h"

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
    bool tuple_result;             /* the outputs are the fields of a tuple (split) */
    int n_in;
    const gen_array *in[4];
    int n_out;
    const gen_array *out[8];
    double rtol, atol; /* both 0: exact (float16 bit for bit) */
} gen_case;

static inline byocl_type gen_array_type(const gen_array *a)
{
    return byocl_type_tensor(a->dtype, a->rank, a->dims);
}

static inline byocl_tensor *gen_array_tensor(const gen_array *a)
{
    byocl_shape s = byocl_shape_make(a->rank, a->dims);
    byocl_tensor *t = a->data ? byocl_tensor_from_data(a->dtype, &s, a->data, NULL)
                              : byocl_tensor_new(a->dtype, &s, NULL);
    assert_non_null(t);
    return t;
}

/* @main(%p0, %p1, ...) { op(args, attrs) }: the call's args are the parameters, or one
 * tuple of them. `status` is the first failure of building or type inference. */
typedef struct op_case {
    byocl_module *m;
    byocl_function *fn;
    int call;
    byocl_status status;
    byocl_error err;
} op_case;

static inline void op_case_build(op_case *c, const char *op, const byocl_type *types, int n,
                                 bool tuple_arg, const char *attrs)
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
        args[k] = byocl_build_param(c->fn, name, &types[k], &c->err);
        assert_true(args[k] >= 0);
    }
    int n_args = n;
    if (tuple_arg) {
        args[0] = byocl_build_tuple(c->fn, args, n, &c->err);
        assert_true(args[0] >= 0);
        n_args = 1;
    }
    c->call = byocl_build_call_str(c->fn, op, args, n_args, attrs, &c->err);
    if (c->call < 0) {
        c->status = c->err.status;
        return;
    }
    c->status = byocl_function_set_body(c->fn, c->call, &c->err);
    if (c->status == BYOCL_OK)
        c->status = byocl_infer_types(c->m, &c->err);
}

static inline void op_case_free(op_case *c) { byocl_module_free(c->m); }

/* The type relation's own words: the message after infer_types' "in @main, %0 (op): ". */
static inline const char *op_case_reason(const op_case *c)
{
    const char *p = strstr(c->err.msg, "): ");
    if (strncmp(c->err.msg, "in @main, ", 10) != 0 || !p)
        fail_msg("unexpected error format: %s", c->err.msg);
    return p + 3;
}

/* Asserts the case failed type inference with `status` and exactly `reason`. */
static inline void op_case_expect_error(const op_case *c, byocl_status status,
                                        const char *reason)
{
    if (c->status == BYOCL_OK)
        fail_msg("expected the error \"%s\", but the case type-checked", reason);
    assert_string_equal(op_case_reason(c), reason);
    assert_int_equal(c->status, status);
}

/* Runs the call's reference kernel on `in` (flattened inputs); allocates the outputs from
 * the inferred type (one per tuple field) into out[0..*n_out). */
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
    }
    *n_out = n;
    assert_non_null(node->op->ref);
    return node->op->ref(&node->attrs, (const byocl_tensor *const *)in, n_in, out, n, err);
}

static inline void op_tensors_free(byocl_tensor **t, int n)
{
    for (int k = 0; k < n; k++)
        byocl_tensor_unref(t[k]);
}

static inline void assert_type_is(const byocl_type *got, const gen_array *want)
{
    byocl_type w = gen_array_type(want);
    char a[256], b[256];
    if (!byocl_type_equal(got, &w))
        fail_msg("type %s, want %s", byocl_type_str(got, a, sizeof a),
                 byocl_type_str(&w, b, sizeof b));
}

/* Same dtype, shape and bytes; the failure names the first differing element. */
static inline void assert_tensor_bytes_equal(const byocl_tensor *got, const byocl_tensor *want,
                                             const char *what)
{
    assert_int_equal(byocl_tensor_dtype(got), byocl_tensor_dtype(want));
    assert_true(byocl_shape_equal(byocl_tensor_shape(got), byocl_tensor_shape(want)));
    size_t es = byocl_dtype_size(byocl_tensor_dtype(want));
    const unsigned char *g = byocl_tensor_cdata(got), *w = byocl_tensor_cdata(want);
    for (int64_t e = 0; e < byocl_tensor_numel(want); e++)
        if (memcmp(g + (size_t)e * es, w + (size_t)e * es, es) != 0)
            fail_msg("%s: element %lld is %.17g, want %.17g", what, (long long)e,
                     byocl_tensor_get(got, e), byocl_tensor_get(want, e));
}

/* Builds, type-checks and runs one generated case, comparing against numpy's values. */
static inline void gen_case_check(const gen_case *k)
{
    print_message("case %s: %s(%s)\n", k->name, k->op, k->attrs);
    byocl_type types[4];
    byocl_tensor *in[4], *out[8];
    for (int i = 0; i < k->n_in; i++) {
        types[i] = gen_array_type(k->in[i]);
        in[i] = gen_array_tensor(k->in[i]);
    }
    op_case c;
    op_case_build(&c, k->op, types, k->n_in, k->tuple_arg, k->attrs);
    if (c.status != BYOCL_OK)
        fail_msg("case %s: %s", k->name, c.err.msg);
    const byocl_type *t = byocl_node_type(c.fn, c.call);
    if (k->tuple_result) {
        assert_int_equal(t->kind, BYOCL_TYPE_TUPLE);
        assert_int_equal(t->n_fields, k->n_out);
        for (int i = 0; i < k->n_out; i++)
            assert_type_is(t->fields[i], k->out[i]);
    } else {
        assert_int_equal(k->n_out, 1);
        assert_type_is(t, k->out[0]);
    }
    int n_out = 0;
    byocl_error err = {0};
    byocl_status st = op_case_run(&c, in, k->n_in, out, 8, &n_out, &err);
    if (st != BYOCL_OK)
        fail_msg("case %s: kernel failed: %s", k->name, err.msg);
    for (int i = 0; i < n_out; i++) {
        byocl_tensor *want = gen_array_tensor(k->out[i]);
        byocl_dtype dtype = k->out[i]->dtype;
        bool exact = k->rtol == 0 && k->atol == 0;
        if (byocl_dtype_is_float(dtype) && !(exact && dtype == BYOCL_FLOAT16))
            ts_assert_tensor_close(out[i], want, k->rtol, k->atol);
        else
            assert_tensor_bytes_equal(out[i], want, k->name);
        byocl_tensor_unref(want);
    }
    op_tensors_free(out, n_out);
    op_tensors_free(in, k->n_in);
    op_case_free(&c);
}

/* Every op in `names` is registered, documented, and documents each attribute. */
static inline void assert_ops_documented(const char *const *names, int n)
{
    for (int i = 0; i < n; i++) {
        const byocl_op *op = byocl_op_find(names[i]);
        if (!op)
            fail_msg("op %s is not registered", names[i]);
        if (!byocl_op_doc(op)[0])
            fail_msg("op %s has no doc", names[i]);
        for (int k = 0; k < byocl_op_num_attrs(op); k++)
            if (!byocl_op_attr_doc(op, k)[0])
                fail_msg("attribute %s of %s has no doc", byocl_op_attr_name(op, k), names[i]);
    }
}

#endif
