/* ONNX import: opens the model (onnx_model.c: its ModelProto, initializers' values left in
 * the file until needed), checks the opset and that every op is one byocl imports (one
 * error giving every reason), resolves the graph inputs' shapes (the model's, or --shape
 * for symbolic ones), and builds @main node by node with the converters of onnx_ops.c.
 * Every node is typed as it is built, so converters can read their inputs' shapes. */
#include <assert.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/passes.h"
#include "onnx_frontend.h"
#include "onnx_import.h"
#include "ops/elemwise_util.h"
#include "ops/fold.h"
#include "ops/node_util.h"
#include "ops/op_impl.h"
#include "tensorio/tensor_pb.h"

/* ------------------------------------------------------------------ names */

static bool name_alpha(char c) { return isalpha((unsigned char)c) || c == '_'; }
static bool name_alnum(char c) { return isalnum((unsigned char)c) || c == '_'; }

char *byocl_onnx_relay_name(const char *onnx_name, char *buf, size_t len)
{
    if (len == 0)
        return buf;
    const char *src = onnx_name ? onnx_name : "";
    size_t n = strlen(src);
    size_t lead = (n == 0 || !name_alpha(src[0])) ? 1 : 0;
    if (lead + n + 1 > len)
        n = len - 1 - lead;
    if (lead)
        buf[0] = '_';
    /* Right to left: whether a separator may stay depends on the (final) next character. */
    buf[lead + n] = '\0';
    for (size_t i = n; i-- > 0;) {
        char c = src[i];
        char next = buf[lead + i + 1];
        bool keep = name_alnum(c) ||
                    ((c == '/' || c == ':' || c == '-') && name_alnum(next)) ||
                    (c == '.' && name_alpha(next));
        /* Only after the first character: the name must start with a letter or '_'. */
        if (i == 0 && !lead && !name_alpha(c))
            keep = false;
        buf[lead + i] = keep ? c : '_';
    }
    return buf;
}

/* ------------------------------------------------------------ the values */

static const char *str_or_empty(const char *s) { return s ? s : ""; }

static int find_value(const onnx_ctx *cx, const char *name)
{
    const text_name_slot *slot = text_names_find(&cx->by_name, name, strlen(name));
    return slot ? slot->id : -1;
}

/* A new value `name` (which must not exist yet); returns its index or -1. */
static int add_value(onnx_ctx *cx, const char *name)
{
    if (cx->n_values == cx->cap_values) {
        int cap = cx->cap_values ? 2 * cx->cap_values : 64;
        onnx_value *v = realloc(cx->values, sizeof *v * (size_t)cap);
        if (!v) {
            byocl_error_set(cx->err, BYOCL_ERR_NOMEM, "%s: out of memory", cx->path);
            return -1;
        }
        cx->values = v;
        cx->cap_values = cap;
    }
    int k = cx->n_values;
    if (!text_names_add(&cx->by_name, name, strlen(name), k, 0, 0)) {
        byocl_error_set(cx->err, BYOCL_ERR_NOMEM, "%s: out of memory", cx->path);
        return -1;
    }
    cx->values[k] = (onnx_value){
        .name = name, .node = -1, .init = -1, .pad_of = -1, .pad_value_of = -1};
    cx->n_values++;
    return k;
}

/* ---------------------------------------------------------------- errors */

static void node_label(const onnx_ctx *cx, char *buf, size_t len)
{
    const Onnx__NodeProto *n = cx->node;
    if (n->name && *n->name)
        snprintf(buf, len, "node '%s' (%s)", n->name, str_or_empty(n->op_type));
    else
        snprintf(buf, len, "node %d (%s)", cx->node_index, str_or_empty(n->op_type));
}

byocl_status onnx_fail(onnx_ctx *cx, byocl_status status, const char *fmt, ...)
{
    char msg[BYOCL_ERROR_MSG_MAX], label[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (cx->node) {
        node_label(cx, label, sizeof label);
        return byocl_error_set(cx->err, status, "%s: %s: %s", cx->path, label, msg);
    }
    return byocl_error_set(cx->err, status, "%s: %s", cx->path, msg);
}

/* Whether `msg` names `op` already: it begins "OP: " or "OP " (a type relation's, the
 * attribute schema's "OP has no attribute ...") or says "... of OP: " (an attribute's
 * check: "bad value for attribute 'A' of OP: ..."). */
static bool names_op(const char *msg, const char *op)
{
    size_t len = strlen(op);
    if (strncmp(msg, op, len) == 0 && (msg[len] == ':' || msg[len] == ' '))
        return true;
    char of[128];
    snprintf(of, sizeof of, " of %s: ", op);
    return strstr(msg, of) != NULL;
}

/* Rewrites an error that a byocl builder recorded as one about the current node, naming
 * the op unless the message does (so that no message says "trilu: trilu: ..."). */
static int builder_failed(onnx_ctx *cx, const char *op)
{
    byocl_status st = cx->err ? cx->err->status : BYOCL_ERR_INVALID;
    char msg[BYOCL_ERROR_MSG_MAX];
    snprintf(msg, sizeof msg, "%s", cx->err ? cx->err->msg : "?");
    bool named = names_op(msg, op);
    onnx_fail(cx, st, "%s%s%s", named ? "" : op, named ? "" : ": ", msg);
    return -1;
}

/* -------------------------------------------------------------- builders */

/* Types node `id` from its arguments (the nodes before it are typed already). */
/* Types a node just built; -1 (error recorded) when building or typing failed. */
static int typed(onnx_ctx *cx, int id, const char *what)
{
    if (id < 0 || ops_infer_node(cx->mod, cx->fn, id, cx->err) != BYOCL_OK)
        return builder_failed(cx, what);
    return id;
}

/* Shape arithmetic is folded as it is built: a call whose arguments are all constants
 * (or shape_of of anything: shapes are static here) becomes a constant node in place,
 * evaluated by ops_fold_node exactly as the fold_constants pass would, so that the
 * converters after it (a Reshape's shape, a Slice's starts) can read its value. Results
 * over OPS_FOLD_MAX_BYTES stay calls here (OPS_FOLD_SMALL: every weight is still held;
 * the fold_constants pass folds the larger ones that do not grow, transposed weights); a kernel error (an index out of range in constant
 * data) is an error of the ONNX node. */
static int folded(onnx_ctx *cx, int id, const char *op)
{
    bool done;
    if (id >= 0 && ops_fold_in_place(cx->fn, id, OPS_FOLD_SMALL, &done, cx->err) != BYOCL_OK)
        return builder_failed(cx, op);
    cx->folded += id >= 0 && done;
    return id;
}

int onnx_call(onnx_ctx *cx, const char *op, const int *args, int n_args,
              const byocl_attrs *attrs)
{
    for (int i = 0; i < n_args; i++)
        if (args[i] < 0) /* a failed argument: its error is recorded */
            return -1;
    int id = typed(cx, byocl_function_add_call(cx->fn, op, args, n_args, attrs, cx->err), op);
    return folded(cx, id, op);
}

int onnx_call1(onnx_ctx *cx, const char *op, int arg, const byocl_attrs *attrs)
{
    return onnx_call(cx, op, &arg, 1, attrs);
}

int onnx_reshape(onnx_ctx *cx, int id, int rank, const int64_t *dims)
{
    if (id < 0)
        return -1;
    byocl_shape want = byocl_shape_make(rank, dims);
    if (byocl_shape_equal(&onnx_type(cx, id)->shape, &want))
        return id;
    byocl_attrs *a = onnx_attrs(cx);
    if (!a || onnx_attrs_ok(cx, byocl_attrs_set_ints(cx->mod, a, "newshape", dims, rank)))
        return -1;
    return onnx_call1(cx, "reshape", id, a);
}

int onnx_scalar(onnx_ctx *cx, byocl_dtype dtype, double v)
{
    return typed(cx, byocl_function_add_scalar(cx->fn, dtype, v, cx->err), "a scalar constant");
}

int onnx_constant(onnx_ctx *cx, byocl_tensor *t)
{
    return typed(cx, byocl_function_add_constant(cx->fn, t, cx->err), "a constant");
}

int onnx_tuple(onnx_ctx *cx, const int *fields, int n)
{
    return typed(cx, byocl_function_add_tuple(cx->fn, fields, n, cx->err), "a tuple");
}

int onnx_getitem(onnx_ctx *cx, int tuple, int index)
{
    return typed(cx, byocl_function_add_getitem(cx->fn, tuple, index, cx->err), "a tuple item");
}

byocl_attrs *onnx_attrs(onnx_ctx *cx)
{
    byocl_attrs *a = byocl_attrs_new(cx->mod);
    if (!a)
        onnx_fail(cx, BYOCL_ERR_NOMEM, "out of memory");
    return a;
}

byocl_status onnx_attrs_ok(onnx_ctx *cx, byocl_status st)
{
    return st == BYOCL_OK ? BYOCL_OK : onnx_fail(cx, st, "out of memory building attributes");
}

const byocl_type *onnx_type(onnx_ctx *cx, int id) { return cx->fn->nodes[id].type; }

/* ------------------------------------------------------------ attributes */

const Onnx__AttributeProto *onnx_attr(const Onnx__NodeProto *node, const char *name)
{
    for (size_t i = 0; i < node->n_attribute; i++)
        if (node->attribute[i]->name && strcmp(node->attribute[i]->name, name) == 0)
            return node->attribute[i];
    return NULL;
}

/* The attribute's type; old models may leave `type` out, so it is read off the content. */
static Onnx__AttributeProto__AttributeType attr_type(const Onnx__AttributeProto *a)
{
    if (a->has_type)
        return a->type;
    if (a->n_ints)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    if (a->n_floats)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    if (a->has_i)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    if (a->has_f)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    if (a->has_s)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    if (a->t)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
}

static byocl_status wrong_attr_type(onnx_ctx *cx, const char *name, const char *want)
{
    return onnx_fail(cx, BYOCL_ERR_INVALID, "attribute '%s' should be %s", name, want);
}

byocl_status onnx_attr_int(onnx_ctx *cx, const char *name, int64_t def, int64_t *out)
{
    const Onnx__AttributeProto *a = onnx_attr(cx->node, name);
    *out = def;
    if (!a)
        return BYOCL_OK;
    if (attr_type(a) != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
        return wrong_attr_type(cx, name, "an int");
    *out = a->i;
    return BYOCL_OK;
}

/* ONNX float attributes are float32: 1e-3 arrives as 0.0010000000474974513. The shortest
 * decimal that reads back as the same float32 is what the model's author wrote. */
static double float32_decimal(float f)
{
    char buf[32];
    if (!isfinite(f))
        return f;
    for (int digits = 1; digits <= 9; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, (double)f);
        if ((float)strtod(buf, NULL) == f)
            break;
    }
    return strtod(buf, NULL);
}

byocl_status onnx_attr_float(onnx_ctx *cx, const char *name, double def, double *out)
{
    const Onnx__AttributeProto *a = onnx_attr(cx->node, name);
    *out = def;
    if (!a)
        return BYOCL_OK;
    if (attr_type(a) == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT)
        *out = float32_decimal(a->f);
    else if (attr_type(a) == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
        *out = (double)a->i;
    else
        return wrong_attr_type(cx, name, "a float");
    return BYOCL_OK;
}

byocl_status onnx_attr_ints(onnx_ctx *cx, const char *name, int64_t *out, int max, int *n)
{
    const Onnx__AttributeProto *a = onnx_attr(cx->node, name);
    *n = -1;
    if (!a)
        return BYOCL_OK;
    Onnx__AttributeProto__AttributeType t = attr_type(a);
    /* An empty list may come without a type, or typed INTS with no values. */
    if (t != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS &&
        t != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED)
        return wrong_attr_type(cx, name, "a list of ints");
    if (a->n_ints > (size_t)max)
        return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                         "attribute '%s' has %zu values; byocl handles at most %d", name,
                         a->n_ints, max);
    for (size_t i = 0; i < a->n_ints; i++)
        out[i] = a->ints[i];
    *n = (int)a->n_ints;
    return BYOCL_OK;
}

byocl_status onnx_attr_string(onnx_ctx *cx, const char *name, const char *def, char *buf,
                              size_t len)
{
    const Onnx__AttributeProto *a = onnx_attr(cx->node, name);
    if (!a) {
        snprintf(buf, len, "%s", def);
        return BYOCL_OK;
    }
    if (attr_type(a) != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING)
        return wrong_attr_type(cx, name, "a string");
    size_t n = a->s.len < len ? a->s.len : len - 1;
    memcpy(buf, a->s.data, n);
    buf[n] = '\0';
    return BYOCL_OK;
}

byocl_status onnx_axis(onnx_ctx *cx, int64_t axis, int rank, const char *what, int *out)
{
    if (axis < -rank || axis >= rank || (rank == 0 && axis != 0))
        return onnx_fail(cx, BYOCL_ERR_INVALID, "%s %lld is out of range for rank %d", what,
                         (long long)axis, rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return BYOCL_OK;
}

/* ------------------------------------------------------- inputs, outputs */

bool onnx_has_input(const Onnx__NodeProto *node, int k)
{
    return k >= 0 && (size_t)k < node->n_input && node->input[k] && node->input[k][0];
}

bool onnx_has_output(const Onnx__NodeProto *node, int k)
{
    return k >= 0 && (size_t)k < node->n_output && node->output[k] && node->output[k][0];
}

/* The value of input k; the walk checked that every present input is defined. */
static int input_value(onnx_ctx *cx, int k)
{
    return onnx_has_input(cx->node, k) ? find_value(cx, cx->node->input[k]) : -1;
}

static byocl_status missing_input(onnx_ctx *cx, int k)
{
    return onnx_fail(cx, BYOCL_ERR_INVALID, "input %d is missing", k);
}

/* Converts an initializer to a tensor the first time it is needed. */
static byocl_status value_constant(onnx_ctx *cx, int v)
{
    onnx_value *val = &cx->values[v];
    if (val->constant || val->init < 0)
        return BYOCL_OK;
    char what[512];
    snprintf(what, sizeof what, "%s: initializer '%s'", cx->path, val->name);
    byocl_status st =
        onnx_model_initializer(cx->model, (size_t)val->init, what, &val->constant, cx->err);
    if (st == BYOCL_OK)
        val->init = -1;
    return st;
}

static byocl_status materialize(onnx_ctx *cx, int v, int *id);

/* A constant-mode Pad that no consumer absorbs: nn.pad with the padding value, a scalar
 * constant or the run-time input reshaped to a scalar. */
static byocl_status materialize_pad(onnx_ctx *cx, int v, int *id)
{
    int x, value;
    TRY(materialize(cx, cx->values[v].pad_of, &x));
    const onnx_value *val = &cx->values[v]; /* after materialize, which may grow values */
    if (val->pad_value_of >= 0) {
        int given;
        TRY(materialize(cx, val->pad_value_of, &given));
        val = &cx->values[v];
        int64_t no_dims[1];
        TRY_ID(scalar, onnx_reshape(cx, given, 0, no_dims));
        value = scalar;
    } else {
        TRY_ID(scalar, onnx_scalar(cx, onnx_type(cx, x)->dtype, val->pad_value));
        value = scalar;
    }
    return onnx_pad_op(cx, x, value, val->pads, val->pad_rank, "constant", id);
}

static byocl_status materialize(onnx_ctx *cx, int v, int *id)
{
    byocl_status st = BYOCL_OK;
    if (cx->values[v].node < 0) {
        int node = -1;
        if (cx->values[v].pad_of >= 0) {
            st = materialize_pad(cx, v, &node);
        } else {
            st = value_constant(cx, v);
            assert(st != BYOCL_OK || cx->values[v].constant); /* else it had a node */
            if (st == BYOCL_OK && (node = onnx_constant(cx, cx->values[v].constant)) < 0)
                st = cx->err->status;
        }
        if (st == BYOCL_OK)
            cx->values[v].node = node;
    }
    if (st == BYOCL_OK)
        *id = cx->values[v].node;
    return st;
}

byocl_status onnx_input(onnx_ctx *cx, int k, int *id)
{
    int v = input_value(cx, k);
    if (v < 0)
        return missing_input(cx, k);
    return materialize(cx, v, id);
}

byocl_status onnx_input_unpadded(onnx_ctx *cx, int k, bool fold, int *id, int64_t pad_tlbr[4])
{
    int v = input_value(cx, k);
    memset(pad_tlbr, 0, 4 * sizeof pad_tlbr[0]);
    if (v < 0)
        return missing_input(cx, k);
    const onnx_value *val = &cx->values[v];
    if (fold && val->node < 0 && val->pad_of >= 0 && val->pad_rank == 4 &&
        val->pad_value_of < 0 && val->pad_value == 0.0 &&
        val->pads[0] == 0 && val->pads[1] == 0 && val->pads[4] == 0 && val->pads[5] == 0) {
        pad_tlbr[0] = val->pads[2];
        pad_tlbr[1] = val->pads[3];
        pad_tlbr[2] = val->pads[6];
        pad_tlbr[3] = val->pads[7];
        return materialize(cx, val->pad_of, id);
    }
    return materialize(cx, v, id);
}

/* The value of a node built as a constant (folded by onnx_call), else NULL. */
static byocl_tensor *node_constant(onnx_ctx *cx, int v)
{
    int id = cx->values[v].node;
    return id >= 0 && cx->fn->nodes[id].kind == BYOCL_NODE_CONSTANT ? cx->fn->nodes[id].value
                                                                    : NULL;
}

bool onnx_input_is_constant(onnx_ctx *cx, int k)
{
    int v = input_value(cx, k);
    return v >= 0 &&
           (cx->values[v].constant || cx->values[v].init >= 0 || node_constant(cx, v));
}

/* The graph inputs that value v is computed from, quoted and separated by commas, into
 * buf (at most `size` bytes, cut with "..."); *n their count (0: v depends on none, or is
 * not built yet). These are what --params can bind, when v itself is not a graph input. */
static void run_time_sources(onnx_ctx *cx, int v, char *buf, size_t size, int *n)
{
    *n = 0;
    buf[0] = '\0';
    int root = cx->values[v].node;
    if (root < 0 && cx->values[v].pad_of >= 0) /* a pending Pad: its input */
        root = cx->values[cx->values[v].pad_of].node;
    bool *needed = root >= 0 ? calloc((size_t)root + 1, sizeof *needed) : NULL;
    if (!needed)
        return;
    needed[root] = true;
    for (int id = root; id >= 0; id--) /* nodes come after their arguments */
        if (needed[id])
            for (int a = 0; a < cx->fn->nodes[id].n_args; a++)
                needed[cx->fn->nodes[id].args[a]] = true;
    size_t len = 0;
    for (int id = 0; id <= root; id++) {
        if (!needed[id] || cx->fn->nodes[id].kind != BYOCL_NODE_VAR)
            continue;
        int w = snprintf(buf + len, size - len, "%s'%s'", *n ? ", " : "", cx->fn->nodes[id].name);
        if (w < 0 || (size_t)w >= size - len) {
            snprintf(buf + (size > 4 ? size - 4 : 0), size > 4 ? 4 : size, "...");
            len = size - 1;
        } else {
            len += (size_t)w;
        }
        (*n)++;
    }
    free(needed);
}

byocl_status onnx_input_constant(onnx_ctx *cx, int k, const char *why, const byocl_tensor **out)
{
    int v = input_value(cx, k);
    if (v < 0)
        return missing_input(cx, k);
    if (!onnx_input_is_constant(cx, k)) {
        const char *name = cx->values[v].name;
        char sources[256];
        int n_sources = 0;
        run_time_sources(cx, v, sources, sizeof sources, &n_sources);
        int node = cx->values[v].node;
        bool is_input = node >= 0 && cx->fn->nodes[node].kind == BYOCL_NODE_VAR;
        if (n_sources == 0 || is_input)
            return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                             "input %d ('%s') is %s, but byocl needs %s when it compiles the model "
                             "(make it an initializer or a Constant, or bind it with --params)",
                             k, name, is_input ? "a graph input" : "computed at run time", why);
        /* Computed from graph inputs: those are what the user can bind. */
        return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                         "input %d ('%s') is computed at run time from graph input%s %s, but byocl "
                         "needs %s when it compiles the model (bind %s with --params, or make %s "
                         "initializer%s)",
                         k, name, n_sources > 1 ? "s" : "", sources, why,
                         n_sources > 1 ? "them" : "it", n_sources > 1 ? "them" : "it an",
                         n_sources > 1 ? "s" : "");
    }
    byocl_status st = value_constant(cx, v);
    if (st == BYOCL_OK)
        *out = cx->values[v].constant ? cx->values[v].constant : node_constant(cx, v);
    return st;
}

byocl_status onnx_input_ints(onnx_ctx *cx, int k, const char *why, int64_t *vals, int max,
                             int *n)
{
    const byocl_tensor *t;
    byocl_status st = onnx_input_constant(cx, k, why, &t);
    if (st != BYOCL_OK)
        return st;
    byocl_dtype d = byocl_tensor_dtype(t);
    if (d != BYOCL_INT64 && d != BYOCL_INT32)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "input %d (%s) should be int64, got %s", k, why,
                         byocl_dtype_name(d));
    int64_t count = byocl_tensor_numel(t);
    if (count > max)
        return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                         "input %d (%s) has %lld values; byocl handles at most %d", k, why,
                         (long long)count, max);
    for (int64_t i = 0; i < count; i++)
        vals[i] = elemwise_load_int(t, i); /* exact: a double would round INT64_MAX up */
    *n = (int)count;
    return BYOCL_OK;
}

/* The value for output k of the current node; -1 when the output is absent. */
static byocl_status output_value(onnx_ctx *cx, int k, int *v)
{
    *v = -1;
    if (!onnx_has_output(cx->node, k))
        return BYOCL_OK;
    const char *name = cx->node->output[k];
    if (find_value(cx, name) >= 0)
        return onnx_fail(cx, BYOCL_ERR_INVALID,
                         "output '%s' is already defined (ONNX values are assigned once)", name);
    *v = add_value(cx, name);
    return *v < 0 ? cx->err->status : BYOCL_OK;
}

/* Names node `id`, when the current ONNX node built it, as the ONNX file does: output 0
 * by the node's name (its output's when it has none), output k > 0 by its output's name.
 * Messages and `byocl print` then call it so. */
static byocl_status name_output(onnx_ctx *cx, int k, int id)
{
    if (id < cx->first_new || byocl_node_name(cx->fn, id))
        return BYOCL_OK; /* an input passed through (Identity), or named already */
    const char *name = k == 0 && cx->node->name && *cx->node->name ? cx->node->name
                                                                    : cx->node->output[k];
    if (byocl_node_set_name(cx->fn, id, name, cx->err) != BYOCL_OK)
        return onnx_fail(cx, BYOCL_ERR_NOMEM, "out of memory");
    return BYOCL_OK;
}

byocl_status onnx_output(onnx_ctx *cx, int k, int id)
{
    int v;
    byocl_status st = output_value(cx, k, &v);
    if (st == BYOCL_OK && v >= 0) {
        cx->values[v].node = id;
        st = name_output(cx, k, id);
    }
    return st;
}

byocl_status onnx_output_constant(onnx_ctx *cx, int k, byocl_tensor *value)
{
    int v;
    byocl_status st = output_value(cx, k, &v);
    if (st == BYOCL_OK && v >= 0)
        cx->values[v].constant = byocl_tensor_ref(value);
    return st;
}

byocl_status onnx_output_pad(onnx_ctx *cx, int k, const int64_t *pads, int rank, double value,
                             int value_input)
{
    int src = input_value(cx, 0);
    if (src < 0)
        return missing_input(cx, 0);
    int value_of = value_input >= 0 ? input_value(cx, value_input) : -1;
    int v;
    byocl_status st = output_value(cx, k, &v);
    if (st == BYOCL_OK && v >= 0) {
        onnx_value *val = &cx->values[v];
        val->pad_of = src;
        val->pad_rank = rank;
        memcpy(val->pads, pads, sizeof val->pads[0] * 2 * (size_t)rank);
        val->pad_value = value;
        val->pad_value_of = value_of;
    }
    return st;
}

/* ------------------------------------------------------------- the model */

static bool is_default_domain(const char *domain)
{
    return !domain || !*domain || strcmp(domain, "ai.onnx") == 0;
}

/* The opset of the default domain; 0 when the model imports none. */
static int64_t default_opset(const Onnx__ModelProto *mp)
{
    for (size_t i = 0; i < mp->n_opset_import; i++)
        if (is_default_domain(mp->opset_import[i]->domain))
            return mp->opset_import[i]->version;
    return 0;
}

/* What is wrong with the model's opset, in `buf` (empty when nothing), and its status. */
static byocl_status opset_problem(int64_t opset, char *buf, size_t len)
{
    buf[0] = '\0';
    if (opset == 0) {
        snprintf(buf, len, "the model imports no opset of the default ONNX domain");
        return BYOCL_ERR_INVALID;
    }
    if (opset < ONNX_OPSET_MIN || opset > ONNX_OPSET_MAX) {
        snprintf(buf, len, "opset %lld is not supported (byocl imports opsets %d to %d)",
                 (long long)opset, ONNX_OPSET_MIN, ONNX_OPSET_MAX);
        return BYOCL_ERR_UNSUPPORTED;
    }
    return BYOCL_OK;
}

/* The op types byocl does not import, with counts, in the order they first appear
 * ("LSTM x2, Resize x1"), in `list`; returns how many kinds. */
static int unsupported_ops(const Onnx__GraphProto *g, char *list, size_t len)
{
    size_t used = 0;
    int n_kinds = 0;
    list[0] = '\0';
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        if (is_default_domain(n->domain) && onnx_find_op(str_or_empty(n->op_type)))
            continue;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++) {
            const Onnx__NodeProto *m = g->node[j];
            seen = strcmp(str_or_empty(m->op_type), str_or_empty(n->op_type)) == 0 &&
                   strcmp(str_or_empty(m->domain), str_or_empty(n->domain)) == 0;
        }
        if (seen)
            continue;
        int count = 0;
        for (size_t j = i; j < g->n_node; j++)
            count += strcmp(str_or_empty(g->node[j]->op_type), str_or_empty(n->op_type)) == 0 &&
                     strcmp(str_or_empty(g->node[j]->domain), str_or_empty(n->domain)) == 0;
        const char *type = n->op_type && *n->op_type ? n->op_type : "(no op_type)";
        int w = snprintf(list + used, used < len ? len - used : 0, "%s%s%s%s x%d",
                         n_kinds ? ", " : "", is_default_domain(n->domain) ? "" : n->domain,
                         is_default_domain(n->domain) ? "" : ".", type, count);
        used += w > 0 ? (size_t)w : 0;
        n_kinds++;
    }
    return n_kinds;
}

/* Before anything is converted (no weight is unpacked yet): one error that gives every
 * reason the model cannot be imported as a whole, the ops byocl lacks and the opset:
 * "unsupported ONNX ops: LSTM x2, Resize x1 (opset 13)", "opset 6 is not supported
 * (byocl imports opsets 7 to 18)", or both: "unsupported ONNX ops: Upsample x1, and
 * opset 6 is not supported (...)". */
static byocl_status check_model(const char *path, const Onnx__GraphProto *g, int64_t opset,
                                byocl_error *err)
{
    char ops[BYOCL_ERROR_MSG_MAX - 512], problem[256];
    int n_kinds = unsupported_ops(g, ops, sizeof ops);
    byocl_status st = opset_problem(opset, problem, sizeof problem);
    if (n_kinds == 0)
        return st == BYOCL_OK ? BYOCL_OK : byocl_error_set(err, st, "%s: %s", path, problem);
    /* A model of ops of other domains only need not import the default one. */
    if (opset == 0)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED, "%s: unsupported ONNX ops: %s", path,
                               ops);
    if (st != BYOCL_OK)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED, "%s: unsupported ONNX ops: %s, and %s",
                               path, ops, problem);
    return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED, "%s: unsupported ONNX ops: %s (opset %lld)",
                           path, ops, (long long)opset);
}

/* ------------------------------------------------------- inputs and shapes */

static const char *type_case_name(Onnx__TypeProto__ValueCase c)
{
    switch (c) {
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: return "a sequence";
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE: return "a map";
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: return "an optional";
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE: return "a sparse tensor";
    default: return "of no type";
    }
}

/* The dtype of a graph input or output. */
static byocl_status value_info_dtype(onnx_ctx *cx, const Onnx__ValueInfoProto *vi,
                                     const char *role, byocl_dtype *dtype)
{
    const Onnx__TypeProto *tp = vi->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
        return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED, "%s '%s' is %s, not a tensor", role,
                         str_or_empty(vi->name), tp ? type_case_name(tp->value_case)
                                                    : "of no type");
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    char buf[32];
    if (!tt->has_elem_type || !tensorio_onnx_to_dtype(tt->elem_type, dtype))
        return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                         "%s '%s' has dtype %s, which byocl does not support (byocl has %s)",
                         role, str_or_empty(vi->name),
                         tt->has_elem_type
                             ? tensorio_onnx_dtype_name(tt->elem_type, buf, sizeof buf)
                             : "(none)",
                         tensorio_onnx_supported_dtypes);
    return BYOCL_OK;
}

/* A model's dims as text, symbolic ones by name or '?': "(batch, 3, 224, 224)". */
static void declared_dims_str(const Onnx__TensorShapeProto *sp, char *buf, size_t len)
{
    size_t used = 0;
    used += (size_t)snprintf(buf, len, "(");
    for (size_t i = 0; i < sp->n_dim && used < len; i++) {
        const Onnx__TensorShapeProto__Dimension *d = sp->dim[i];
        const char *sep = i ? ", " : "";
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
            used += (size_t)snprintf(buf + used, len - used, "%s%lld", sep,
                                     (long long)d->dim_value);
        else
            used += (size_t)snprintf(buf + used, len - used, "%s%s", sep,
                                     d->value_case ==
                                             ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
                                         ? d->dim_param
                                         : "?");
    }
    if (used < len)
        snprintf(buf + used, len - used, ")");
}

static const byocl_input_shape *given_shape(const byocl_load_options *opt, const char *onnx_name,
                                            const char *relay_name)
{
    for (int i = 0; opt && i < opt->n_shapes; i++)
        if (strcmp(opt->shapes[i].name, onnx_name) == 0 ||
            strcmp(opt->shapes[i].name, relay_name) == 0)
            return &opt->shapes[i];
    return NULL;
}

/* The type of a real graph input: the model's shape, with `given` (from --shape) filling
 * its symbolic or unknown dims. */
static byocl_status input_type(onnx_ctx *cx, const Onnx__ValueInfoProto *vi,
                               const byocl_input_shape *given, byocl_type *out)
{
    byocl_dtype dtype;
    byocl_status st = value_info_dtype(cx, vi, "input", &dtype);
    if (st != BYOCL_OK)
        return st;
    const char *name = vi->name;
    const Onnx__TensorShapeProto *sp = vi->type->tensor_type->shape;
    char dims_s[512];
    if (!sp) {
        if (!given)
            return onnx_fail(cx, BYOCL_ERR_INVALID,
                             "input '%s' has no shape in the model; give it with --shape "
                             "%s=DIMS, e.g. --shape %s=1x3x224x224",
                             name, name, name);
        *out = byocl_type_tensor(dtype, given->shape.rank, given->shape.dims);
        return BYOCL_OK;
    }
    declared_dims_str(sp, dims_s, sizeof dims_s);
    if (sp->n_dim > BYOCL_MAX_RANK)
        return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED, "input '%s' has rank %zu; byocl handles at "
                                                    "most %d",
                         name, sp->n_dim, BYOCL_MAX_RANK);
    int rank = (int)sp->n_dim;
    if (given && given->shape.rank != rank)
        return onnx_fail(cx, BYOCL_ERR_INVALID,
                         "the shape given for input '%s' has rank %d, but the model declares "
                         "rank %d %s",
                         name, given->shape.rank, rank, dims_s);
    int64_t dims[BYOCL_MAX_RANK];
    for (int i = 0; i < rank; i++) {
        const Onnx__TensorShapeProto__Dimension *d = sp->dim[i];
        bool fixed = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
                     d->dim_value >= 0;
        if (fixed && given && given->shape.dims[i] != d->dim_value)
            return onnx_fail(cx, BYOCL_ERR_INVALID,
                             "the shape given for input '%s' has %lld at dimension %d, but the "
                             "model fixes it to %lld %s",
                             name, (long long)given->shape.dims[i], i, (long long)d->dim_value,
                             dims_s);
        if (fixed) {
            dims[i] = d->dim_value;
        } else if (given) {
            dims[i] = given->shape.dims[i];
        } else {
            /* The example shape takes 1 for every dimension the model leaves open. */
            char example[256];
            size_t used = 0;
            for (int j = 0; j < rank && used < sizeof example; j++) {
                bool jf = sp->dim[j]->value_case ==
                              ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
                          sp->dim[j]->dim_value >= 0;
                used += (size_t)snprintf(example + used, sizeof example - used, "%s%lld",
                                         j ? "x" : "", jf ? (long long)sp->dim[j]->dim_value : 1LL);
            }
            char which[300];
            if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM)
                snprintf(which, sizeof which, "symbolic dimension %d ('%s')", i, d->dim_param);
            else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
                snprintf(which, sizeof which, "negative dimension %d (%lld)", i,
                         (long long)d->dim_value);
            else
                snprintf(which, sizeof which, "unknown dimension %d", i);
            return onnx_fail(cx, BYOCL_ERR_INVALID,
                             "input '%s' %s has %s; give its shape with --shape %s=DIMS, e.g. "
                             "--shape %s=%s",
                             name, dims_s, which, name, name, example);
        }
    }
    byocl_shape shape = byocl_shape_make(rank, dims);
    char shape_s[200];
    if (byocl_shape_numel(&shape) < 0)
        return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                         "input '%s' of shape %s has more elements than a 64-bit count holds",
                         name, byocl_shape_str(&shape, shape_s, sizeof shape_s));
    *out = byocl_type_tensor(dtype, rank, dims);
    return BYOCL_OK;
}

static bool is_initializer(const Onnx__GraphProto *g, const char *name)
{
    for (size_t i = 0; i < g->n_initializer; i++)
        if (strcmp(str_or_empty(g->initializer[i]->name), name) == 0)
            return true;
    return false;
}

/* ", "-separated names of the graph's real inputs, for messages. */
static void real_input_list(const Onnx__GraphProto *g, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < g->n_input && used < len; i++) {
        const char *name = str_or_empty(g->input[i]->name);
        if (is_initializer(g, name))
            continue;
        used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", name);
    }
    if (!buf[0])
        snprintf(buf, len, "none");
}

/* Registers the initializers as lazy constants. */
static byocl_status add_initializers(onnx_ctx *cx, const Onnx__GraphProto *g)
{
    for (size_t i = 0; i < g->n_initializer; i++) {
        const Onnx__TensorProto *t = g->initializer[i];
        const char *name = str_or_empty(t->name);
        if (!*name)
            return onnx_fail(cx, BYOCL_ERR_INVALID, "initializer %zu has no name", i);
        if (find_value(cx, name) >= 0)
            return onnx_fail(cx, BYOCL_ERR_INVALID, "initializer '%s' is defined twice", name);
        int v = add_value(cx, name);
        if (v < 0)
            return cx->err->status;
        cx->values[v].init = (int)i;
    }
    return BYOCL_OK;
}

/* The graph input that `name` means: its ONNX name, else its Relay name; or NULL. */
static const Onnx__ValueInfoProto *find_real_input(const Onnx__GraphProto *g, const char *name)
{
    char relay[512];
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < g->n_input; i++) {
            const char *in = str_or_empty(g->input[i]->name);
            if (is_initializer(g, in))
                continue;
            const char *as = pass == 0 ? in : byocl_onnx_relay_name(in, relay, sizeof relay);
            if (strcmp(as, name) == 0)
                return g->input[i];
        }
    }
    return NULL;
}

static void tensor_type_str(const byocl_tensor *t, char *buf, size_t len)
{
    byocl_type ty = byocl_type_tensor(byocl_tensor_dtype(t), byocl_tensor_shape(t)->rank,
                                      byocl_tensor_shape(t)->dims);
    byocl_type_str(&ty, buf, len);
}

/* `params` (byocl_load_model's): each member binds a graph input (which then is a
 * constant, not a parameter) or replaces an initializer. Inputs are registered here. */
static byocl_status bind_params(onnx_ctx *cx, const Onnx__GraphProto *g, const byocl_params *p)
{
    for (int i = 0; p && i < byocl_params_count(p); i++) {
        const char *name = byocl_params_name(p, i);
        byocl_tensor *t = byocl_params_tensor(p, i);
        char got[256], want[256];
        tensor_type_str(t, got, sizeof got);
        const Onnx__ValueInfoProto *vi = find_real_input(g, name);
        if (vi) {
            byocl_input_shape given = {.name = vi->name, .shape = *byocl_tensor_shape(t)};
            byocl_type ty;
            byocl_status st = input_type(cx, vi, &given, &ty);
            if (st == BYOCL_OK && ty.dtype != byocl_tensor_dtype(t))
                st = onnx_fail(cx, BYOCL_ERR_TYPE, "params member '%s': input '%s' is %s, got %s",
                               name, vi->name, byocl_dtype_name(ty.dtype), got);
            if (st != BYOCL_OK)
                return st;
            if (find_value(cx, vi->name) >= 0)
                return onnx_fail(cx, BYOCL_ERR_INVALID, "params bind input '%s' twice",
                                 vi->name);
            int v = add_value(cx, vi->name);
            if (v < 0)
                return cx->err->status;
            cx->values[v].constant = byocl_tensor_ref(t);
            continue;
        }
        int v = find_value(cx, name);
        if (v >= 0 && cx->values[v].init >= 0) {
            const Onnx__TensorProto *init = g->initializer[cx->values[v].init];
            byocl_dtype d;
            bool same = init->has_data_type && tensorio_onnx_to_dtype(init->data_type, &d) &&
                        d == byocl_tensor_dtype(t) &&
                        (size_t)byocl_tensor_shape(t)->rank == init->n_dims;
            for (size_t k = 0; same && k < init->n_dims; k++)
                same = init->dims[k] == byocl_tensor_shape(t)->dims[k];
            if (!same) {
                byocl_shape s = byocl_shape_make(init->n_dims <= BYOCL_MAX_RANK ? (int)init->n_dims : 0,
                                                 init->dims);
                char sbuf[200], tbuf[32];
                snprintf(want, sizeof want, "%s of %s", byocl_shape_str(&s, sbuf, sizeof sbuf),
                         init->has_data_type
                             ? tensorio_onnx_dtype_name(init->data_type, tbuf, sizeof tbuf)
                             : "no dtype");
                return onnx_fail(cx, BYOCL_ERR_TYPE,
                                 "params member '%s': the initializer is %s, got %s", name,
                                 want, got);
            }
            cx->values[v].init = -1;
            cx->values[v].constant = byocl_tensor_ref(t);
            continue;
        }
        if (strncmp(name, "relay.Constant.", strlen("relay.Constant.")) == 0)
            return onnx_fail(cx, BYOCL_ERR_INVALID,
                             "params member '%s' is a meta constant, but an ONNX model cannot "
                             "refer to it",
                             name);
        return onnx_fail(cx, BYOCL_ERR_NOT_FOUND,
                         "params member '%s' is neither an input nor an initializer of the "
                         "model",
                         name);
    }
    return BYOCL_OK;
}

/* Every --shape must name a real input that is not bound. */
static byocl_status check_given_shapes(onnx_ctx *cx, const Onnx__GraphProto *g,
                                       const byocl_load_options *opt)
{
    for (int i = 0; opt && i < opt->n_shapes; i++) {
        const char *name = opt->shapes[i].name ? opt->shapes[i].name : "";
        const Onnx__ValueInfoProto *vi = find_real_input(g, name);
        if (!vi) {
            char list[1024];
            real_input_list(g, list, sizeof list);
            return onnx_fail(cx, BYOCL_ERR_NOT_FOUND,
                             "a shape is given for '%s', which is not an input of the model "
                             "(its inputs: %s)",
                             name, list);
        }
        if (find_value(cx, vi->name) >= 0)
            return onnx_fail(cx, BYOCL_ERR_INVALID,
                             "a shape is given for input '%s', which params bind", vi->name);
    }
    return BYOCL_OK;
}

/* The real inputs (not initializers, not bound) become @main's parameters, in order. */
static byocl_status add_params(onnx_ctx *cx, const Onnx__GraphProto *g,
                               const byocl_load_options *opt)
{
    for (size_t i = 0; i < g->n_input; i++) {
        const Onnx__ValueInfoProto *vi = g->input[i];
        const char *name = str_or_empty(vi->name);
        if (!*name)
            return onnx_fail(cx, BYOCL_ERR_INVALID, "graph input %zu has no name", i);
        int existing = find_value(cx, name);
        if (existing >= 0 && (cx->values[existing].init >= 0 || cx->values[existing].constant))
            continue; /* an initializer that old models list as an input too, or bound */
        if (existing >= 0)
            return onnx_fail(cx, BYOCL_ERR_INVALID, "graph input '%s' is listed twice", name);
        char relay[512], unique[540];
        byocl_onnx_relay_name(name, relay, sizeof relay);
        snprintf(unique, sizeof unique, "%s", relay);
        for (int k = 2; byocl_function_find_param(cx->fn, unique) >= 0; k++)
            snprintf(unique, sizeof unique, "%s_%d", relay, k);
        byocl_type ty;
        byocl_status st = input_type(cx, vi, given_shape(opt, name, relay), &ty);
        if (st != BYOCL_OK)
            return st;
        int v = add_value(cx, name);
        if (v < 0)
            return cx->err->status;
        int id = byocl_function_add_param(cx->fn, unique, &ty, cx->err);
        if (id < 0) {
            builder_failed(cx, "a parameter");
            return cx->err->status;
        }
        cx->values[v].node = id;
    }
    return BYOCL_OK;
}

/* ------------------------------------------------------------- the nodes */

/* The first node at or after `from` that outputs `name`, or -1. */
static long later_producer(const Onnx__GraphProto *g, size_t from, const char *name)
{
    for (size_t i = from; i < g->n_node; i++)
        for (size_t k = 0; k < g->node[i]->n_output; k++)
            if (onnx_has_output(g->node[i], (int)k) && strcmp(g->node[i]->output[k], name) == 0)
                return (long)i;
    return -1;
}

/* An input no earlier node defines: a cycle (ONNX graphs are acyclic and listed in
 * topological order), or a name nothing defines. */
static byocl_status undefined_input(onnx_ctx *cx, const Onnx__GraphProto *g, size_t at,
                                    size_t k)
{
    const char *name = g->node[at]->input[k];
    long producer = later_producer(g, at, name);
    if (producer == (long)at)
        return onnx_fail(cx, BYOCL_ERR_INVALID,
                         "input %zu '%s' is the node's own output (a cycle)", k, name);
    if (producer >= 0)
        return onnx_fail(cx, BYOCL_ERR_INVALID,
                         "input %zu '%s' is the output of node %ld (%s), a later node: the graph "
                         "has a cycle or is not in topological order",
                         k, name, producer, str_or_empty(g->node[producer]->op_type));
    return onnx_fail(cx, BYOCL_ERR_INVALID,
                     "input %zu '%s' is not defined by an earlier node, a graph input or an "
                     "initializer",
                     k, name);
}

static byocl_status convert_node(onnx_ctx *cx, const Onnx__GraphProto *g, size_t at)
{
    const Onnx__NodeProto *n = g->node[at];
    for (size_t k = 0; k < n->n_input; k++)
        if (onnx_has_input(n, (int)k) && find_value(cx, n->input[k]) < 0)
            return undefined_input(cx, g, at, k);
    const onnx_op *op = onnx_find_op(n->op_type);
    if (cx->opset < op->since) /* a model that uses an op of a later opset than it imports */
        return onnx_fail(cx, BYOCL_ERR_INVALID,
                         "%s is not in opset %lld: it came in opset %d (the model should import "
                         "opset %d or later)",
                         n->op_type, (long long)cx->opset, op->since, op->since);
    for (size_t i = 0; i < n->n_attribute; i++) {
        const char *name = str_or_empty(n->attribute[i]->name);
        bool known = onnx_legacy_attr(cx->opset, n->op_type, name);
        for (int k = 0; op->attrs && op->attrs[k] && !known; k++)
            known = strcmp(op->attrs[k], name) == 0;
        if (!known)
            return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED, "attribute '%s' is not supported", name);
    }
    byocl_status st = op->convert(cx, n);
    for (size_t k = 0; k < n->n_output && st == BYOCL_OK; k++)
        if (onnx_has_output(n, (int)k) && find_value(cx, n->output[k]) < 0)
            st = onnx_fail(cx, BYOCL_ERR_UNSUPPORTED, "output %zu ('%s') is not supported", k,
                           n->output[k]);
    return st;
}

/* ------------------------------------------------------------ the outputs */

/* Checks what byocl computed against the type the model declares for an output (its
 * fixed dims; symbolic ones match anything). A mismatch means a converter is wrong. */
static byocl_status check_output_type(onnx_ctx *cx, const Onnx__ValueInfoProto *vi,
                                      const byocl_type *got)
{
    const Onnx__TypeProto *tp = vi->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
        return BYOCL_OK;
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    byocl_dtype d;
    bool ok = !tt->has_elem_type || tt->elem_type == 0 ||
              (tensorio_onnx_to_dtype(tt->elem_type, &d) && d == got->dtype);
    const Onnx__TensorShapeProto *sp = tt->shape;
    if (ok && sp) {
        ok = sp->n_dim == (size_t)got->shape.rank;
        for (size_t i = 0; ok && i < sp->n_dim; i++)
            if (sp->dim[i]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
                ok = sp->dim[i]->dim_value == got->shape.dims[i];
    }
    if (ok)
        return BYOCL_OK;
    char want_s[512] = "?", got_s[256], tbuf[32];
    if (sp)
        declared_dims_str(sp, want_s, sizeof want_s);
    return onnx_fail(cx, BYOCL_ERR_TYPE,
                     "output '%s': the model declares %s of %s, but byocl computed %s",
                     str_or_empty(vi->name), want_s,
                     tt->has_elem_type
                         ? tensorio_onnx_dtype_name(tt->elem_type, tbuf, sizeof tbuf)
                         : "any dtype",
                     byocl_type_str(got, got_s, sizeof got_s));
}

static byocl_status set_outputs(onnx_ctx *cx, const Onnx__GraphProto *g)
{
    if (g->n_output == 0)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "the graph has no outputs");
    int *ids = malloc(sizeof *ids * g->n_output);
    if (!ids)
        return onnx_fail(cx, BYOCL_ERR_NOMEM, "out of memory");
    byocl_status st = BYOCL_OK;
    for (size_t i = 0; i < g->n_output && st == BYOCL_OK; i++) {
        const Onnx__ValueInfoProto *vi = g->output[i];
        int v = find_value(cx, str_or_empty(vi->name));
        if (v < 0) {
            st = onnx_fail(cx, BYOCL_ERR_INVALID, "graph output '%s' is not defined",
                           str_or_empty(vi->name));
            break;
        }
        byocl_dtype dtype;
        st = value_info_dtype(cx, vi, "output", &dtype);
        if (st == BYOCL_OK)
            st = materialize(cx, v, &ids[i]);
        /* A parameter or constant returned as is gets a copy: outputs are fresh tensors. */
        byocl_node_kind kind = st == BYOCL_OK ? cx->fn->nodes[ids[i]].kind : BYOCL_NODE_CALL;
        if (kind == BYOCL_NODE_VAR || kind == BYOCL_NODE_CONSTANT)
            if ((ids[i] = onnx_call1(cx, "copy", ids[i], NULL)) < 0)
                st = cx->err->status;
        if (st == BYOCL_OK)
            st = check_output_type(cx, vi, onnx_type(cx, ids[i]));
    }
    int body = -1;
    if (st == BYOCL_OK)
        body = g->n_output == 1 ? ids[0] : onnx_tuple(cx, ids, (int)g->n_output);
    if (st == BYOCL_OK && body < 0)
        st = cx->err->status;
    if (st == BYOCL_OK)
        st = byocl_function_set_body(cx->fn, body, cx->err);
    free(ids);
    return st;
}

/* ---------------------------------------------------------------- import */

static byocl_status import_graph(onnx_ctx *cx, const Onnx__GraphProto *g,
                                 const byocl_load_options *opt)
{
    byocl_status st = add_initializers(cx, g);
    if (st == BYOCL_OK)
        st = bind_params(cx, g, opt ? opt->params : NULL);
    if (st == BYOCL_OK)
        st = check_given_shapes(cx, g, opt);
    if (st == BYOCL_OK)
        st = add_params(cx, g, opt);
    for (size_t i = 0; i < g->n_node && st == BYOCL_OK; i++) {
        cx->node = g->node[i];
        cx->node_index = (int)i;
        cx->first_new = byocl_function_num_nodes(cx->fn);
        st = convert_node(cx, g, i);
    }
    cx->node = NULL;
    if (st == BYOCL_OK)
        st = set_outputs(cx, g);
    /* What the folding left unused (the Concat of a folded shape, its pieces) goes. */
    if (st == BYOCL_OK && cx->folded > 0)
        st = byocl_fold_constants(cx->mod, cx->err);
    return st;
}

/* Checks the model, then builds @main; `model` is closed by the caller. */
static byocl_status import_model(onnx_model *model, const byocl_load_options *opt,
                                 byocl_module **out, byocl_error *err)
{
    const char *path = model->path;
    int64_t opset = default_opset(model->proto);
    byocl_status st = check_model(path, model->graph, opset, err);
    if (st != BYOCL_OK)
        return st;

    byocl_error local;
    onnx_ctx cx = {.path = path, .model = model, .opset = opset, .err = err ? err : &local};
    text_names_init(&cx.by_name);
    cx.mod = byocl_module_new();
    if (!cx.mod)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "%s: out of memory", path);
    if (st == BYOCL_OK && !(cx.fn = byocl_module_add_function(cx.mod, "main", err)))
        st = err ? err->status : BYOCL_ERR_NOMEM;
    if (st == BYOCL_OK)
        st = import_graph(&cx, model->graph, opt);

    for (int i = 0; i < cx.n_values; i++)
        byocl_tensor_unref(cx.values[i].constant);
    free(cx.values);
    text_names_free(&cx.by_name);
    if (st != BYOCL_OK) {
        byocl_module_free(cx.mod);
        return st;
    }
    *out = cx.mod;
    return BYOCL_OK;
}

byocl_status onnx_import(const char *path, const byocl_load_options *opt,
                         byocl_module **out, byocl_error *err)
{
    *out = NULL;
    onnx_model model;
    byocl_status st = onnx_model_open_file(path, &model, err);
    if (st != BYOCL_OK)
        return st;
    st = import_model(&model, opt, out, err);
    onnx_model_close(&model);
    return st;
}

byocl_status onnx_import_mem(const void *data, size_t len, const char *path,
                             const byocl_load_options *opt, byocl_module **out,
                             byocl_error *err)
{
    *out = NULL;
    onnx_model model;
    byocl_status st = onnx_model_open_mem(data, len, path, &model, err);
    if (st != BYOCL_OK)
        return st;
    st = import_model(&model, opt, out, err);
    onnx_model_close(&model);
    return st;
}
