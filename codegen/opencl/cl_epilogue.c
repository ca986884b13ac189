/* Elementwise steps as OpenCL C: EPILOGUE(v, fi) applies a group's chain of elementwise
 * ops to the value v of the element at flat index fi, in float (a bool as 0.0f or 1.0f:
 * comparisons, logical ops, isnan, isinf, where's condition), with the semantics of
 * the reference kernels (codegen/ops/elemwise.c, nn.c): NaN stays NaN through relu and
 * clip and wins in maximum/minimum; the float functions (exp, log, sqrt, rsqrt, pow,
 * tanh, fmod, rint for round, floor, ceil, sin ... atanh) are OpenCL's, in float, and erf
 * is byocl_erf (kernels_cl/prelude.cl: OpenCL's is slow on PoCL); a step whose op
 * yields float16 rounds there, as the unfused op would store it. Operands (a residual, a bias, batch_norm's statistics) are
 * kernel parameters read at their broadcast offset. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_impl.h"
#include "ops/op_impl.h"

/* --------------------------------------------------------------- offsets */

/* The step, in elements of `operand` broadcast to `out`, along each axis of `out`. */
static void broadcast_strides(const byocl_shape *out, const byocl_shape *operand, int axis,
                              int64_t *stride)
{
    int64_t s = 1;
    for (int d = out->rank - 1; d >= 0; d--) {
        if (axis >= 0) {
            stride[d] = d == axis ? 1 : 0;
            continue;
        }
        int k = d - (out->rank - operand->rank);
        if (k < 0 || operand->dims[k] == 1) {
            stride[d] = 0;
        } else {
            stride[d] = s;
            s *= operand->dims[k];
        }
    }
}

void clg_broadcast_offset(const byocl_shape *out, const byocl_shape *operand, int axis,
                         const char *fi, char *buf, size_t len)
{
    int rank = out->rank;
    int64_t stride[BYOCL_MAX_RANK];
    broadcast_strides(out, operand, axis, stride);
    /* Merge neighbouring dimensions that the operand walks as one (or skips as one). */
    int64_t ext[BYOCL_MAX_RANK], str[BYOCL_MAX_RANK];
    int m = 0;
    for (int d = 0; d < rank; d++) {
        if (out->dims[d] == 1)
            continue;
        if (m > 0 && str[m - 1] == stride[d] * out->dims[d]) {
            ext[m - 1] *= out->dims[d];
            str[m - 1] = stride[d];
            continue;
        }
        ext[m] = out->dims[d];
        str[m] = stride[d];
        m++;
    }
    size_t at = 0;
    buf[0] = '\0';
    int64_t inner = 1;
    for (int i = m - 1; i >= 0; inner *= ext[i], i--) {
        if (str[i] == 0)
            continue;
        char index[96];
        if (inner == 1 && i == 0)
            snprintf(index, sizeof index, "%s", fi);
        else if (inner == 1)
            snprintf(index, sizeof index, "%s %% %lld", fi, (long long)ext[i]);
        else if (i == 0)
            snprintf(index, sizeof index, "%s / %lld", fi, (long long)inner);
        else
            snprintf(index, sizeof index, "%s / %lld %% %lld", fi, (long long)inner,
                     (long long)ext[i]);
        char term[128];
        if (str[i] == 1)
            snprintf(term, sizeof term, at ? "(%s)" : "%s", index);
        else
            snprintf(term, sizeof term, "(%s) * %lld", index, (long long)str[i]);
        int w = snprintf(buf + at, at < len ? len - at : 0, "%s%s", at ? " + " : "", term);
        at += w > 0 ? (size_t)w : 0;
    }
    if (at == 0)
        snprintf(buf, len, "0");
}

/* --------------------------------------------------------------- steps */

/* The epilogue is written in two forms at once: EPILOGUE(v, fi) on one float, and, where
 * every step and operand allows it, EPILOGUE_V(v, fi) on a VEC of `pt` consecutive
 * elements from fi on, which the kernel guarantees lie in one row of the result
 * (tile_axes 1) or in one plane of its last two axes (tile_axes 2). Each operand of a
 * tile is then one vector load (contiguous along the tile) or one element broadcast
 * (constant along it), and the kernel stores the tile with one vector store: per
 * element, the scalar form's offset arithmetic, operand loads and store cost more than a
 * 1x1 conv's arithmetic with few input channels. Where every operand is constant along
 * the last two axes (per channel, or a literal), EPILOGUE_V_PLANE is defined too:
 * EPILOGUE_V then gives the same lanes at any fi of the plane, so a tile whose elements
 * lie in several rows can take it (conv2d.cl).
 * A third form, EPILOGUE_VC(v, fi), takes a VEC of `pt` consecutive channels (axis 1)
 * of one position instead: lane j is element fi + j * S, S the elements of a channel
 * (conv2d_channels.cl's tiles, whose accumulators hold channels). An operand is then one
 * element broadcast (constant along the channels), one vector load (a per-channel
 * operand) or pt loads S apart (BYOCL_GATHER, a residual), and SCATTER_Y(fi, v) stores
 * the lanes S apart: the scalar form's offsets, its tests and its reloads of per-channel
 * operands took 20-35% of such a kernel's time (regnet_x_400mf's 7x7 and 14x14 convs). */
typedef struct epi_ctx {
    clg_kernel *k;
    const byocl_function *fn;
    byocl_textbuf body, vbody;
    int pt, tile_axes; /* tile_axes 0: no vector form along the positions */
    bool channels;     /* the vector form is EPILOGUE_VC's, across channels */
    bool prologue;     /* a conv's prologue: fi is the index of a plane, n * C + c */
    bool vector_ok;
    bool plane_uniform; /* every operand constant along the last two axes */
} epi_ctx;

/* An operand's (or a literal's) text in the scalar form and in the vector form. */
typedef struct operand_text {
    char s[600], v[640];
} operand_text;

static void same_text(operand_text *t, const char *text)
{
    snprintf(t->s, sizeof t->s, "%s", text);
    snprintf(t->v, sizeof t->v, "%s", text);
}

static void literal_text(operand_text *t, double value)
{
    clg_float_literal(value, t->s, sizeof t->s);
    snprintf(t->v, sizeof t->v, "%s", t->s);
}

/* One line of both forms: fmt's %s are the texts of a, b, c and d (NULL: ""). */
static void put_line(epi_ctx *e, const char *fmt, const operand_text *a, const operand_text *b,
                     const operand_text *c, const operand_text *d)
{
    base_textbuf_printf(&e->body, fmt, a ? a->s : "", b ? b->s : "", c ? c->s : "",
                        d ? d->s : "");
    if (e->vector_ok)
        base_textbuf_printf(&e->vbody, fmt, a ? a->v : "", b ? b->v : "", c ? c->v : "",
                            d ? d->v : "");
}

/* A float constant of one element (through reshapes, the node's root): its value, which
 * a step can use as a literal instead of a load. */
static bool scalar_constant(const epi_ctx *e, int node, int arg, double *value)
{
    const byocl_function *fn = e->fn;
    int root = e->k->gen->graph.info[fn->nodes[node].args[arg]].root;
    const byocl_node *r = root >= 0 ? &fn->nodes[root] : NULL;
    if (!r || r->kind != BYOCL_NODE_CONSTANT || !r->value || byocl_tensor_numel(r->value) != 1)
        return false;
    byocl_dtype d = byocl_tensor_dtype(r->value);
    if (d != BYOCL_FLOAT32 && d != BYOCL_FLOAT16)
        return false;
    *value = byocl_tensor_get(r->value, 0);
    return true;
}

/* The offset in operand `shape` (broadcast to `out`, along `axis` when >= 0) of element fi:
 * of the output's element fi, or in a prologue, whose operands are the same across each
 * plane, of plane fi (n * C + c), the broadcast over the first two axes (a conv reads a
 * plane per input channel, so its prologue's offsets cost nothing per element). */
static void operand_offset(const epi_ctx *e, const byocl_shape *out, const byocl_shape *shape,
                           int axis, char *buf, size_t len)
{
    if (!e->prologue) {
        clg_broadcast_offset(out, shape, axis, "(fi)", buf, len);
        return;
    }
    byocl_shape planes = *out, per_plane = *shape;
    planes.rank = 2;
    if (axis < 0) /* the last two axes, ones, aligned with the planes' rows and columns */
        per_plane.rank = shape->rank > 2 ? shape->rank - 2 : 0;
    clg_broadcast_offset(&planes, &per_plane, axis, "(fi)", buf, len);
}

/* The load of operand `name` (a parameter of shape `shape` broadcast to `out`) for a whole
 * tile from element offset `offset`: one vector load, one element broadcast, or, when it
 * is neither along the tile, no vector form. */
static void operand_tile_load(epi_ctx *e, const byocl_shape *out, const byocl_shape *shape,
                              byocl_dtype dtype, int axis, const char *name,
                              const char *offset, char *buf, size_t len)
{
    int r = out->rank;
    if (!e->vector_ok || dtype != BYOCL_FLOAT32 || r < e->tile_axes || r < 1) {
        e->vector_ok = false;
        return;
    }
    int64_t stride[BYOCL_MAX_RANK] = {0};
    broadcast_strides(out, shape, axis, stride);
    if (e->channels) { /* lanes one channel apart */
        if (stride[1] == 0)
            snprintf(buf, len, "((VEC)(LD_%s(%s)))", name, offset);
        else if (stride[1] == 1)
            snprintf(buf, len, "vload%d(0, %s + (%s))", e->pt, name, offset);
        else
            snprintf(buf, len, "BYOCL_GATHER%d(LD_%s, %s, %lld)", e->pt, name, offset,
                     (long long)stride[1]);
        return;
    }
    e->plane_uniform = e->plane_uniform && stride[r - 1] == 0 && (r < 2 || stride[r - 2] == 0);
    /* A tile spans rows only with tile_axes 2, and then only if there are rows. */
    bool rows = e->tile_axes == 2 && out->dims[r - 2] > 1;
    int64_t row_stride = rows ? stride[r - 2] : 0;
    if (stride[r - 1] == 0 && row_stride == 0)
        snprintf(buf, len, "((VEC)(LD_%s(%s)))", name, offset);
    else if (stride[r - 1] == 1 && (!rows || row_stride == out->dims[r - 1]))
        snprintf(buf, len, "vload%d(0, %s + (%s))", e->pt, name, offset);
    else
        e->vector_ok = false;
}

/* The expression of argument `arg` of `node` at element fi: a float literal for a scalar
 * constant (the compiler then folds it: pow(v, 2.0f) becomes v * v), else a load at its
 * broadcast offset (`axis` >= 0: along that output axis only). */
static byocl_status operand_load(epi_ctx *e, int node, int arg, int axis, operand_text *t,
                                 byocl_error *err)
{
    const byocl_function *fn = e->fn;
    double value;
    if (scalar_constant(e, node, arg, &value)) {
        char literal[48];
        clg_float_literal(value, literal, sizeof literal);
        snprintf(t->s, sizeof t->s, "%s", literal);
        snprintf(t->v, sizeof t->v, "((VEC)(%s))", literal);
        return BYOCL_OK;
    }
    int a = fn->nodes[node].args[arg];
    int root = e->k->gen->graph.info[a].root;
    int b = clg_gen_root_buf(e->k->gen, root);
    if (b < 0)
        return err->status;
    const byocl_type *at = fn->nodes[a].type;
    const char *name = clg_kernel_operand(e->k, b, at->dtype);
    if (!name)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "in @%s: too many operands fused into one kernel", fn->name);
    const byocl_shape *out = &clg_tensor_type(fn, node)->shape;
    char offset[512];
    operand_offset(e, out, &at->shape, axis, offset, sizeof offset);
    snprintf(t->s, sizeof t->s, "LD_%s(%s)", name, offset);
    operand_tile_load(e, out, &at->shape, at->dtype, axis, name, offset, t->v, sizeof t->v);
    return BYOCL_OK;
}

static int norm_axis(int64_t axis, int rank)
{
    return (int)(axis < 0 ? axis + rank : axis);
}

/* batch_norm with constant statistics: scale and shift per channel, computed here in
 * double as the reference kernel does and rounded to float once. */
static byocl_status batch_norm_constants(epi_ctx *e, int node, int axis, operand_text *scale_load,
                                         operand_text *shift_load, byocl_error *err)
{
    const byocl_function *fn = e->fn;
    const byocl_node *n = &fn->nodes[node];
    const byocl_tensor *gamma = fn->nodes[n->args[1]].value, *beta = fn->nodes[n->args[2]].value;
    const byocl_tensor *mean = fn->nodes[n->args[3]].value, *var = fn->nodes[n->args[4]].value;
    double eps = byocl_attrs_get_float(&n->attrs, "epsilon", 1e-5);
    bool center = byocl_attrs_get_bool(&n->attrs, "center", true);
    bool scale = byocl_attrs_get_bool(&n->attrs, "scale", true);
    int64_t c = byocl_tensor_numel(mean);
    byocl_shape shape = byocl_shape_make(1, &c);
    byocl_tensor *ts = byocl_tensor_new(BYOCL_FLOAT32, &shape, err);
    byocl_tensor *tt = ts ? byocl_tensor_new(BYOCL_FLOAT32, &shape, err) : NULL;
    if (!tt) {
        byocl_tensor_unref(ts);
        return err->status;
    }
    float *s = byocl_tensor_data(ts), *t = byocl_tensor_data(tt);
    for (int64_t i = 0; i < c; i++) {
        double mul = 1.0 / sqrt(byocl_tensor_get(var, i) + eps);
        if (scale)
            mul *= byocl_tensor_get(gamma, i);
        double shift = center ? byocl_tensor_get(beta, i) : 0.0;
        s[i] = (float)mul;
        t[i] = (float)(shift - byocl_tensor_get(mean, i) * mul);
    }
    char what[112], label[64];
    clg_node_desc(fn, node, label, sizeof label);
    snprintf(what, sizeof what, "batch_norm scale of %s", label);
    int bs = clg_gen_const(e->k->gen, ts, what);
    snprintf(what, sizeof what, "batch_norm shift of %s", label);
    int bt = bs >= 0 ? clg_gen_const(e->k->gen, tt, what) : (byocl_tensor_unref(tt), -1);
    if (bt < 0)
        return err->status;
    const char *ns = clg_kernel_operand(e->k, bs, BYOCL_FLOAT32);
    const char *nt = clg_kernel_operand(e->k, bt, BYOCL_FLOAT32);
    if (!ns || !nt)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "in @%s: too many operands fused into one kernel", fn->name);
    const byocl_shape *out = &clg_tensor_type(fn, node)->shape;
    char offset[512];
    operand_offset(e, out, &shape, axis, offset, sizeof offset);
    snprintf(scale_load->s, sizeof scale_load->s, "LD_%s(%s)", ns, offset);
    snprintf(shift_load->s, sizeof shift_load->s, "LD_%s(%s)", nt, offset);
    operand_tile_load(e, out, &shape, BYOCL_FLOAT32, axis, ns, offset, scale_load->v,
                      sizeof scale_load->v);
    operand_tile_load(e, out, &shape, BYOCL_FLOAT32, axis, nt, offset, shift_load->v,
                      sizeof shift_load->v);
    return BYOCL_OK;
}

static bool all_constant(const byocl_function *fn, const byocl_node *n, int from, int to)
{
    for (int k = from; k < to; k++)
        if (fn->nodes[n->args[k]].kind != BYOCL_NODE_CONSTANT)
            return false;
    return true;
}

static byocl_status batch_norm_step(epi_ctx *e, int node, byocl_error *err)
{
    const byocl_function *fn = e->fn;
    const byocl_node *n = &fn->nodes[node];
    int axis = norm_axis(byocl_attrs_get_int(&n->attrs, "axis", 1),
                         clg_tensor_type(fn, node)->shape.rank);
    operand_text a, b;
    if (all_constant(fn, n, 1, 5)) {
        byocl_status st = batch_norm_constants(e, node, axis, &a, &b, err);
        if (st == BYOCL_OK)
            put_line(e, "    v = fma(v, %s, %s); \\\n", &a, &b, NULL, NULL);
        return st;
    }
    bool center = byocl_attrs_get_bool(&n->attrs, "center", true);
    bool scale = byocl_attrs_get_bool(&n->attrs, "scale", true);
    char eps[48];
    clg_float_literal(byocl_attrs_get_float(&n->attrs, "epsilon", 1e-5), eps, sizeof eps);
    operand_text mean, var;
    byocl_status st = operand_load(e, node, 3, axis, &mean, err);
    if (st == BYOCL_OK)
        st = operand_load(e, node, 4, axis, &var, err);
    if (st == BYOCL_OK && scale)
        st = operand_load(e, node, 1, axis, &a, err);
    if (st == BYOCL_OK && center)
        st = operand_load(e, node, 2, axis, &b, err);
    if (st != BYOCL_OK)
        return st;
    char fmt[160];
    snprintf(fmt, sizeof fmt, "    v = (v - %%s) * (1.0f / sqrt(%%s + %s)%s)%s; \\\n", eps,
             scale ? " * %s" : "%s", center ? " + %s" : "%s");
    put_line(e, fmt, &mean, &var, scale ? &a : NULL, center ? &b : NULL);
    return BYOCL_OK;
}

/* The elementwise steps: binary ops (the chain value either argument, the other read at
 * its broadcast offset), unary ops as an expression of v, and the steps written out in
 * step() below. This table is the one list: clg_is_elemwise_op, clg_is_binary_op and the
 * target's supports read it. */
static const struct {
    const char *op;
    const char *infix, *function; /* binary: "a infix b" or "function(a, b)" */
    const char *expr;             /* unary: expression of v */
    const char *predicate;        /* binary, a bool result: "a predicate b" */
    bool logical;                 /* the predicate's operands are bools (nonzero: true) */
    /* The vector form's function or expression where the scalar one takes no vectors
     * (kernels_cl/prelude.cl), or no vector form at all. */
    const char *vector;
    bool scalar_only;
} elemwise_steps[] = {
    {.op = "add", .infix = "+"},
    {.op = "subtract", .infix = "-"},
    {.op = "multiply", .infix = "*"},
    {.op = "divide", .infix = "/"},
    {.op = "maximum", .function = "byocl_max", .vector = "BYOCL_MAX_V"},
    {.op = "minimum", .function = "byocl_min", .vector = "BYOCL_MIN_V"},
    {.op = "power", .function = "pow"},
    {.op = "mod", .function = "fmod"},
    {.op = "floor_mod", .function = "byocl_floor_mod", .scalar_only = true},
    {.op = "nn.relu", .expr = "v < 0.0f ? 0.0f : v"},
    {.op = "sigmoid", .expr = "byocl_sigmoid(v)", .vector = "BYOCL_SIGMOID_V(v)"},
    {.op = "tanh", .expr = "tanh(v)"},
    {.op = "abs", .expr = "fabs(v)"},
    {.op = "negative", .expr = "-v"},
    {.op = "exp", .expr = "exp(v)"},
    {.op = "log", .expr = "log(v)"},
    {.op = "sqrt", .expr = "sqrt(v)"},
    {.op = "rsqrt", .expr = "rsqrt(v)"},
    {.op = "erf", .expr = "byocl_erf(v)", .scalar_only = true},
    {.op = "sign", .expr = "v > 0.0f ? 1.0f : v < 0.0f ? -1.0f : v"},
    {.op = "round", .expr = "rint(v)"},
    {.op = "floor", .expr = "floor(v)"},
    {.op = "ceil", .expr = "ceil(v)"},
    {.op = "sin", .expr = "sin(v)"},
    {.op = "cos", .expr = "cos(v)"},
    {.op = "tan", .expr = "tan(v)"},
    {.op = "asin", .expr = "asin(v)"},
    {.op = "acos", .expr = "acos(v)"},
    {.op = "atan", .expr = "atan(v)"},
    {.op = "sinh", .expr = "sinh(v)"},
    {.op = "cosh", .expr = "cosh(v)"},
    {.op = "asinh", .expr = "asinh(v)"},
    {.op = "acosh", .expr = "acosh(v)"},
    {.op = "atanh", .expr = "atanh(v)"},
    {.op = "cast"},
    {.op = "equal", .predicate = "=="},
    {.op = "not_equal", .predicate = "!="},
    {.op = "less", .predicate = "<"},
    {.op = "greater", .predicate = ">"},
    {.op = "less_equal", .predicate = "<="},
    {.op = "greater_equal", .predicate = ">="},
    {.op = "logical_and", .predicate = "&&", .logical = true},
    {.op = "logical_or", .predicate = "||", .logical = true},
    {.op = "logical_xor", .predicate = "!=", .logical = true},
    {.op = "logical_not", .expr = "v == 0.0f ? 1.0f : 0.0f"},
    {.op = "isnan", .expr = "isnan(v) ? 1.0f : 0.0f"},
    {.op = "isinf", .expr = "isinf(v) ? 1.0f : 0.0f"},
    {.op = "where"},
    {.op = "nn.leaky_relu"},
    {.op = "clip"},
    {.op = "nn.bias_add"},
    {.op = "nn.batch_norm"},
};
enum { N_STEPS = sizeof elemwise_steps / sizeof elemwise_steps[0] };

static int step_index(const char *op)
{
    for (int i = 0; i < N_STEPS; i++)
        if (strcmp(op, elemwise_steps[i].op) == 0)
            return i;
    return -1;
}

bool clg_is_elemwise_op(const char *op) { return step_index(op) >= 0; }

bool clg_is_binary_op(const char *op)
{
    int i = step_index(op);
    return i >= 0 &&
           (elemwise_steps[i].infix || elemwise_steps[i].function || elemwise_steps[i].predicate);
}

bool clg_step_vectorizes(const char *op)
{
    int i = step_index(op);
    return i >= 0 && !elemwise_steps[i].scalar_only;
}

int clg_chain_args(const char *op)
{
    return strcmp(op, "where") == 0 ? 3 : clg_is_binary_op(op) ? 2 : 1;
}

/* One step: `node` applied to the chain value v, which is its argument `chain_arg`. */
static byocl_status step(epi_ctx *e, int node, int chain_arg, byocl_error *err)
{
    const byocl_function *fn = e->fn;
    const byocl_node *n = &fn->nodes[node];
    const char *op = n->op->name;
    operand_text text, hi, a;
    clg_node_desc(fn, node, text.s, sizeof text.s);
    snprintf(text.v, sizeof text.v, "%s", text.s);
    put_line(e, "    /* %s */ \\\n", &text, NULL, NULL, NULL);
    int si = step_index(op);
    if (si >= 0 && elemwise_steps[si].scalar_only)
        e->vector_ok = false;
    const char *vector = si >= 0 ? elemwise_steps[si].vector : NULL;
    if (si >= 0 && elemwise_steps[si].expr) {
        snprintf(text.s, sizeof text.s, "%s", elemwise_steps[si].expr);
        snprintf(text.v, sizeof text.v, "%s", vector ? vector : elemwise_steps[si].expr);
        if (strcmp(text.s, "v") != 0)
            put_line(e, "    v = %s; \\\n", &text, NULL, NULL, NULL);
        return BYOCL_OK;
    }
    if (strcmp(op, "nn.leaky_relu") == 0) {
        literal_text(&text, byocl_attrs_get_float(&n->attrs, "alpha", 0.25));
        put_line(e, "    v = v < 0.0f ? %s * v : v; \\\n", &text, NULL, NULL, NULL);
        return BYOCL_OK;
    }
    if (strcmp(op, "clip") == 0) {
        literal_text(&text, byocl_attrs_get_float(&n->attrs, "a_min", 0.0));
        literal_text(&hi, byocl_attrs_get_float(&n->attrs, "a_max", 0.0));
        put_line(e, "    v = v < %s ? %s : (v > %s ? %s : v); \\\n", &text, &text, &hi, &hi);
        return BYOCL_OK;
    }
    if (strcmp(op, "nn.bias_add") == 0) {
        int axis = norm_axis(byocl_attrs_get_int(&n->attrs, "axis", 1),
                             clg_tensor_type(fn, node)->shape.rank);
        byocl_status st = operand_load(e, node, 1, axis, &a, err);
        if (st == BYOCL_OK)
            put_line(e, "    v = v + %s; \\\n", &a, NULL, NULL, NULL);
        return st;
    }
    if (strcmp(op, "nn.batch_norm") == 0)
        return batch_norm_step(e, node, err);
    if (strcmp(op, "cast") == 0) {
        /* To bool: nonzero (NaN too) is true; to a float dtype: v as it is (a float16
         * result rounds where it is stored or read next). */
        if (clg_tensor_type(fn, node)->dtype == BYOCL_BOOL)
            put_line(e, "    v = v != 0.0f ? 1.0f : 0.0f; \\\n", NULL, NULL, NULL, NULL);
        return BYOCL_OK;
    }
    if (strcmp(op, "where") == 0) {
        /* The chain value is one of condition, x and y; the others are read. */
        operand_text args[3];
        for (int k = 0; k < 3; k++) {
            if (k == chain_arg) {
                same_text(&args[k], "v");
                continue;
            }
            byocl_status st = operand_load(e, node, k, -1, &args[k], err);
            if (st != BYOCL_OK)
                return st;
        }
        put_line(e, "    v = %s != 0.0f ? %s : %s; \\\n", &args[0], &args[1], &args[2], NULL);
        return BYOCL_OK;
    }
    double exponent;
    if (strcmp(op, "power") == 0 && chain_arg == 0 && scalar_constant(e, node, 1, &exponent) &&
        exponent == 2.0) {
        /* Squares (layer norm's variance as torch exports it): exact, as the reference's
         * pow in double rounded once is, where PoCL 3.1's pow (and pown) took 130 ns per
         * element even with a literal exponent. */
        put_line(e, "    v = v * v; \\\n", NULL, NULL, NULL, NULL);
        return BYOCL_OK;
    }
    if (clg_is_binary_op(op)) {
        byocl_status st = operand_load(e, node, 1 - chain_arg, -1, &a, err);
        if (st != BYOCL_OK)
            return st;
        same_text(&text, "v");
        const operand_text *lhs = chain_arg == 0 ? &text : &a, *rhs = chain_arg == 0 ? &a : &text;
        char fmt[96];
        if (elemwise_steps[si].predicate && elemwise_steps[si].logical)
            snprintf(fmt, sizeof fmt, "    v = ((%%s) != 0.0f) %s ((%%s) != 0.0f) ? 1.0f : 0.0f; \\\n",
                     elemwise_steps[si].predicate);
        else if (elemwise_steps[si].predicate)
            snprintf(fmt, sizeof fmt, "    v = %%s %s %%s ? 1.0f : 0.0f; \\\n",
                     elemwise_steps[si].predicate);
        else if (elemwise_steps[si].infix)
            snprintf(fmt, sizeof fmt, "    v = %%s %s %%s; \\\n", elemwise_steps[si].infix);
        else
            snprintf(fmt, sizeof fmt, "    v = %s(%%s, %%s); \\\n", elemwise_steps[si].function);
        base_textbuf_printf(&e->body, fmt, lhs->s, rhs->s);
        if (e->vector_ok && vector)
            snprintf(fmt, sizeof fmt, "    v = %s(%%s, %%s); \\\n", vector);
        if (e->vector_ok)
            base_textbuf_printf(&e->vbody, fmt, lhs->v, rhs->v);
        return BYOCL_OK;
    }
    return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED, "in @%s, %s: no epilogue for op %s",
                           fn->name, text.s, op);
}

/* Whether the vector form can be written at all: float32 from the anchor's result through
 * every step (bools and float16 roundings have no vector form), one shape throughout. */
static bool vector_form_possible(const epi_ctx *e, const clg_group *grp)
{
    const byocl_function *fn = e->fn;
    const byocl_type *tail = clg_tensor_type(fn, grp->tail);
    if (e->channels ? tail->shape.rank < 2 || grp->kind == CLG_ANCHOR_ELEMWISE
                    : e->tile_axes <= 0)
        return false;
    if (tail->dtype != BYOCL_FLOAT32)
        return false;
    for (int i = 0; i < grp->n_steps; i++) {
        int node = grp->steps[i];
        const byocl_type *t = clg_tensor_type(fn, node);
        const byocl_type *in = fn->nodes[fn->nodes[node].args[grp->chain_arg[i]]].type;
        if (t->dtype != BYOCL_FLOAT32 || in->dtype != BYOCL_FLOAT32 ||
            !byocl_shape_equal(&t->shape, &tail->shape))
            return false;
    }
    return true;
}

/* What define_epilogue writes: the epilogue (EPILOGUE, and EPILOGUE_V or EPILOGUE_VC where
 * it has that form), or a conv's prologue (PROLOGUE and PROLOGUE_V). */
typedef enum epi_form { EPI_POSITIONS, EPI_CHANNELS, EPI_PROLOGUE } epi_form;

static byocl_status define_epilogue(clg_kernel *k, const clg_group *grp, int pt, int tile_axes,
                                    epi_form form, byocl_error *err)
{
    bool channels = form == EPI_CHANNELS, prologue = form == EPI_PROLOGUE;
    epi_ctx e = {.k = k, .fn = k->gen->fn, .pt = pt, .tile_axes = tile_axes,
                 .channels = channels, .prologue = prologue, .plane_uniform = true};
    e.vector_ok = vector_form_possible(&e, grp);
    const byocl_function *fn = e.fn;
    byocl_status st = BYOCL_OK;
    operand_text first = {{0}, {0}};
    if (grp->kind == CLG_ANCHOR_ELEMWISE && !prologue) {
        st = operand_load(&e, grp->steps[0], grp->chain_arg[0], -1, &first, err);
        if (st == BYOCL_OK)
            clg_kernel_define(k, "LD_FIRST(fi)", "%s", first.s);
    }
    for (int i = 0; st == BYOCL_OK && i < grp->n_steps; i++) {
        int node = grp->steps[i];
        /* The value entering this step was a float16 tensor in the unfused graph. */
        int in = fn->nodes[node].args[grp->chain_arg[i]];
        bool loaded = i == 0 && grp->kind == CLG_ANCHOR_ELEMWISE; /* exact already */
        if (!loaded && fn->nodes[in].type->dtype == BYOCL_FLOAT16)
            base_textbuf_puts(&e.body, "    v = byocl_round_f16(v); \\\n");
        st = step(&e, node, grp->chain_arg[i], err);
    }
    char *body = base_textbuf_take(&e.body), *vbody = base_textbuf_take(&e.vbody);
    if (st == BYOCL_OK && (!body || (e.vector_ok && grp->n_steps > 0 && !vbody)))
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory writing an epilogue");
    if (st == BYOCL_OK && prologue && !(e.vector_ok && e.plane_uniform))
        st = byocl_error_set(err, BYOCL_ERR_INVALID,
                             "in @%s: a conv's prologue without a vector form per plane",
                             fn->name); /* cl_graph.c's prologue_fits admits none */
    if (st == BYOCL_OK && prologue) {
        clg_kernel_define(k, "PROLOGUE(v, fi)", "do { \\\n%s} while (0)", body);
        clg_kernel_define(k, "PROLOGUE_V(v, fi)", "do { \\\n%s} while (0)", vbody);
    } else if (st == BYOCL_OK) {
        clg_kernel_define(k, "EPILOGUE(v, fi)", "do { \\\n%s} while (0)", body);
        if (e.vector_ok && channels) {
            const byocl_shape *out = &clg_tensor_type(fn, grp->tail)->shape;
            int64_t channel_elems = 1;
            for (int d = 2; d < out->rank; d++)
                channel_elems *= out->dims[d];
            clg_kernel_define(k, "EPILOGUE_VC(v, fi)", "do { \\\n%s} while (0)",
                              vbody ? vbody : "");
            clg_kernel_define(k, "SCATTER_Y(fi, v)", "BYOCL_SCATTER%d(ST_Y, (fi), %lld, v)", pt,
                              (long long)channel_elems);
        } else if (e.vector_ok) {
            if (grp->kind == CLG_ANCHOR_ELEMWISE)
                clg_kernel_define(k, "LD_FIRST_V(fi)", "%s", first.v);
            clg_kernel_define(k, "EPILOGUE_V(v, fi)", "do { \\\n%s} while (0)",
                              vbody ? vbody : "");
            clg_kernel_define(k, "VSTORE_Y(fi, v)", "BYOCL_VSTORE_F32(%d, (v), y + (fi))", pt);
            if (e.plane_uniform)
                clg_kernel_define(k, "EPILOGUE_V_PLANE", "1");
        }
    }
    free(body);
    free(vbody);
    return st;
}

byocl_status clg_epilogue_define(clg_kernel *k, const clg_group *grp, byocl_error *err)
{
    return define_epilogue(k, grp, 0, 0, EPI_POSITIONS, err);
}

byocl_status clg_epilogue_define_tiles(clg_kernel *k, const clg_group *grp, int pt,
                                       int tile_axes, byocl_error *err)
{
    return define_epilogue(k, grp, pt, tile_axes, EPI_POSITIONS, err);
}

byocl_status clg_epilogue_define_channels(clg_kernel *k, const clg_group *grp, int pt,
                                          byocl_error *err)
{
    return define_epilogue(k, grp, pt, 0, EPI_CHANNELS, err);
}

byocl_status clg_prologue_define(clg_kernel *k, const clg_group *grp, int pt, byocl_error *err)
{
    return define_epilogue(k, grp, pt, 2, EPI_PROLOGUE, err);
}
