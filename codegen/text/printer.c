/* Printer for TVM Relay's text format (the grammar is in parser.c). Printing, parsing and
 * printing again gives the same text.
 *
 * Layout, as TVM prints: the version header, then each function in module order:
 *
 *   def @main(%x: Tensor[(1, 3), float32], Compiler="my_npu") -> Tensor[(1, 3), float32] {
 *     %0 = nn.relu(%x) <ty comment>;
 *     %x0 = add(%0, 1f);
 *     nn.softmax(%x0)
 *   }
 *
 * With show_types, <ty comment> is a block comment `ty=Tensor[(1, 3), float32]` as TVM
 * writes it (omitted otherwise). Every node but Vars and Constants gets a binding: its
 * binding name from the source (%78, %x0) when it has a usable one, else a number from 0
 * per function in node order that no kept name uses; numbers the source gave are kept
 * only in a function whose every binding keeps its name (plan_function); the body is printed
 * inline as the last line (unless another node uses it). Scalar constants print as
 * literals, other constants as meta[relay.Constant][K]; with BYOCL_METADATA_INLINE their
 * values follow the functions in a #[metadata] section (metadata.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/ops.h"
#include "byocl/tensor_io.h"
#include "byocl/text.h"
#include "ir/ir_impl.h"
#include "lexer.h"
#include "metadata.h"
#include "names.h"
#include "ops/op_impl.h"
#include "base/textbuf.h"

/* ------------------------------------------------------------ formatters */

/* Appends what a `char *f(x, buf, len)` formatter writes, growing the buffer until the
 * text fits (the formatters truncate silently). */
typedef char *(*format_fn)(const void *x, char *buf, size_t len);

static void buf_format(byocl_textbuf *b, format_fn fmt, const void *x)
{
    for (size_t len = 256; len <= ((size_t)1 << 26); len *= 4) {
        if (!base_textbuf_reserve(b, len))
            return;
        char *at = b->data + b->len;
        fmt(x, at, len);
        size_t n = strlen(at);
        if (n + 1 < len) {
            b->len += n;
            return;
        }
    }
    b->oom = true;
}

static char *format_type(const void *t, char *buf, size_t len)
{
    return byocl_type_str(t, buf, len);
}

static char *format_attr(const void *a, char *buf, size_t len)
{
    return byocl_attr_value_str(a, buf, len);
}

/* ------------------------------------------------------------- literals */

/* A scalar constant as a literal: 1f, 2e-05f, 1f16, 1bf16, 1f64, 1, 1i64, 3i8, 3u8, 3i16, 3u16,
 * 3u32, 3u64, True. */
static void format_scalar(const byocl_tensor *t, char *buf, size_t len)
{
    double v = byocl_tensor_get(t, 0);
    byocl_dtype d = byocl_tensor_dtype(t);
    switch (d) {
    case BYOCL_FLOAT32:
    case BYOCL_FLOAT16:
    case BYOCL_BFLOAT16:
    case BYOCL_FLOAT64: {
        char num[64];
        /* A bfloat16 is a float32 whose low half is zero: float32's spelling reads back. */
        ir_format_real(v, d == BYOCL_BFLOAT16 ? 32 : (int)byocl_dtype_size(d) * 8, num,
                       sizeof num);
        snprintf(buf, len, "%s%s", num,
                 d == BYOCL_FLOAT16    ? "f16"
                 : d == BYOCL_BFLOAT16 ? "bf16"
                 : d == BYOCL_FLOAT64  ? "f64"
                                       : "f");
        break;
    }
    case BYOCL_BOOL:
        snprintf(buf, len, "%s", v != 0 ? "True" : "False");
        break;
    case BYOCL_INT32:
    case BYOCL_INT8:
    case BYOCL_UINT8:
    case BYOCL_INT16:
    case BYOCL_UINT16:
    case BYOCL_UINT32: /* all exact in a double */
        snprintf(buf, len, "%lld%s", (long long)v,
                 d == BYOCL_INT8     ? "i8"
                 : d == BYOCL_UINT8  ? "u8"
                 : d == BYOCL_INT16  ? "i16"
                 : d == BYOCL_UINT16 ? "u16"
                 : d == BYOCL_UINT32 ? "u32"
                                     : "");
        break;
    case BYOCL_INT64: {
        int64_t i;
        memcpy(&i, byocl_tensor_cdata(t), sizeof i); /* exact beyond 2^53 */
        snprintf(buf, len, "%lldi64", (long long)i);
        break;
    }
    case BYOCL_UINT64: {
        uint64_t u;
        memcpy(&u, byocl_tensor_cdata(t), sizeof u); /* exact beyond 2^53 */
        snprintf(buf, len, "%lluu64", (unsigned long long)u);
        break;
    }
    default:
        snprintf(buf, len, "?");
        break;
    }
}

/* ------------------------------------------------------------- numbering */

/* How each node of a function is printed: bound to %N (number >= 0), bound to its own
 * name (named), or neither (vars, constants, the inline body). */
typedef struct print_plan {
    int *number;
    bool *named;
    int body_inline; /* the body's id when it is printed inline, else -1 */
    bool renumbered; /* numbers the source gave bindings (%78) were not kept */
} print_plan;

static void plan_free(print_plan *plan)
{
    free(plan->number);
    free(plan->named);
}

static bool is_bound_kind(byocl_node_kind kind)
{
    return kind != BYOCL_NODE_VAR && kind != BYOCL_NODE_CONSTANT;
}

/* The parameters' names into `used`, then each binding's own name where it reads back as
 * itself (not taken by a parameter or an earlier binding, no odd characters; names that
 * are numbers only with `keep_numbers`). False when out of memory; *all_named says
 * whether every binding got its name. */
static bool name_bindings(const byocl_function *fn, print_plan *plan, text_names *used,
                          bool keep_numbers, bool *all_named)
{
    int n = byocl_function_num_nodes(fn);
    bool ok = true;
    *all_named = true;
    text_names_clear(used);
    for (int k = 0; ok && k < byocl_function_num_params(fn); k++) {
        const char *name = byocl_node_name(fn, byocl_function_param(fn, k));
        if (name && !text_names_find(used, name, strlen(name)))
            ok = text_names_add(used, name, strlen(name), k, 0, 0);
    }
    for (int id = 0; ok && id < n; id++) {
        plan->number[id] = -1;
        plan->named[id] = false;
        if (!is_bound_kind(byocl_node_kind_of(fn, id)) || id == plan->body_inline)
            continue;
        const char *name = byocl_node_name(fn, id);
        if (name && (keep_numbers || !text_is_numeric_name(name)) &&
            text_is_plain_local_name(name) && !text_names_find(used, name, strlen(name))) {
            plan->named[id] = true;
            ok = text_names_add(used, name, strlen(name), id, 0, 0);
        } else {
            *all_named = false;
        }
    }
    return ok;
}

/* The source's binding names are kept (%78, %x0). Where a binding has none to keep (a
 * node a pass built, a call written inline), numbers the source gave (%78) could be
 * mistaken for the numbers the printer assigns, so the function's bindings are numbered
 * from %0 in node order, as TVM prints after its passes; names like %x0 stay. That is
 * also what `renumber` asks for (byocl's own numbering, #N in a --range). Numbers skip
 * every name kept. */
static bool plan_function(const byocl_function *fn, bool renumber, print_plan *plan)
{
    int n = byocl_function_num_nodes(fn);
    plan->number = malloc((size_t)(n ? n : 1) * sizeof *plan->number);
    plan->named = calloc((size_t)(n ? n : 1), sizeof *plan->named);
    plan->body_inline = -1;
    text_names used;
    text_names_init(&used);
    bool ok = plan->number && plan->named;

    /* The body goes inline unless a node uses it (it would be printed after its user). */
    int body = byocl_function_body(fn);
    if (ok && body >= 0 && is_bound_kind(byocl_node_kind_of(fn, body))) {
        plan->body_inline = body;
        for (int id = 0; id < n && plan->body_inline >= 0; id++)
            for (int k = 0; k < byocl_node_num_args(fn, id); k++)
                if (byocl_node_arg(fn, id, k) == body)
                    plan->body_inline = -1;
    }
    bool all_named = true;
    plan->renumbered = false;
    if (ok)
        ok = name_bindings(fn, plan, &used, !renumber, &all_named);
    if (ok && !renumber && !all_named)
        ok = name_bindings(fn, plan, &used, false, &all_named);
    for (int id = 0; ok && id < n; id++)
        plan->renumbered |= is_bound_kind(byocl_node_kind_of(fn, id)) && !plan->named[id] &&
                            text_is_numeric_name(byocl_node_name(fn, id));
    int counter = 0;
    for (int id = 0; ok && id < n; id++) {
        if (!is_bound_kind(byocl_node_kind_of(fn, id)) || id == plan->body_inline || plan->named[id])
            continue;
        char digits[16];
        while (snprintf(digits, sizeof digits, "%d", counter),
               text_names_find(&used, digits, strlen(digits)))
            counter++; /* a parameter is named like this number */
        plan->number[id] = counter++;
    }
    text_names_free(&used);
    if (!ok)
        plan_free(plan);
    return ok;
}

int byocl_text_node_number(const byocl_function *fn, int id)
{
    if (!fn || id < 0 || id >= byocl_function_num_nodes(fn))
        return -1;
    print_plan plan;
    if (!plan_function(fn, false, &plan))
        return -1;
    int number = plan.number[id];
    plan_free(&plan);
    return number;
}

static int *node_numbers(const byocl_function *fn, bool renumber)
{
    print_plan plan;
    if (!fn || !plan_function(fn, renumber, &plan))
        return NULL;
    int *numbers = plan.number;
    plan.number = NULL;
    plan_free(&plan);
    return numbers;
}

int *byocl_text_node_numbers(const byocl_function *fn) { return node_numbers(fn, false); }

int *byocl_text_node_own_numbers(const byocl_function *fn) { return node_numbers(fn, true); }


char *byocl_text_node_label(const byocl_function *fn, int id, char *buf, size_t len)
{
    print_plan plan;
    if (!fn || id < 0 || id >= byocl_function_num_nodes(fn) || !plan_function(fn, false, &plan)) {
        snprintf(buf, len, "node #%d", id);
        return buf;
    }
    const char *name = byocl_node_name(fn, id);
    bool numeric = text_is_numeric_name(name);
    if (byocl_node_kind_of(fn, id) == BYOCL_NODE_VAR || plan.named[id])
        snprintf(buf, len, "%%%s", name);
    else if (plan.number[id] >= 0 && name && !numeric) /* odd characters: '/a.0/Conv' */
        snprintf(buf, len, "'%s' (%%%d)", name, plan.number[id]);
    else if (plan.number[id] >= 0)
        snprintf(buf, len, "%%%d", plan.number[id]);
    else if (name && !(numeric && plan.renumbered)) /* the result, printed inline */
        snprintf(buf, len, text_is_plain_local_name(name) ? "%%%s" : "'%s'", name);
    else if (byocl_node_kind_of(fn, id) == BYOCL_NODE_CONSTANT)
        snprintf(buf, len, "a constant");
    else if (id == byocl_function_body(fn))
        snprintf(buf, len, "the result");
    else
        snprintf(buf, len, "node #%d", id);
    plan_free(&plan);
    return buf;
}

int byocl_text_node_by_number(const byocl_function *fn, int number)
{
    if (!fn || number < 0)
        return -1;
    print_plan plan;
    if (!plan_function(fn, false, &plan))
        return -1;
    int found = -1;
    char digits[16];
    snprintf(digits, sizeof digits, "%d", number);
    for (int id = 0; id < byocl_function_num_nodes(fn) && found < 0; id++)
        if (plan.number[id] == number ||
            (plan.named[id] && strcmp(byocl_node_name(fn, id), digits) == 0))
            found = id;
    plan_free(&plan);
    return found;
}

/* ---------------------------------------------------------------- printer */

typedef struct printer {
    byocl_textbuf out;
    bool show_types, renumber;
    byocl_params *meta_out;
    /* Non-scalar constants in order of first appearance; the index is K. */
    const byocl_tensor **consts;
    int n_consts, cap_consts;
    bool failed;
    byocl_error err;
} printer;

/* K for a non-scalar constant (the same tensor keeps its K). */
static int meta_index(printer *pr, byocl_tensor *t)
{
    for (int k = 0; k < pr->n_consts; k++)
        if (pr->consts[k] == t)
            return k;
    if (pr->n_consts == pr->cap_consts) {
        int cap = pr->cap_consts ? pr->cap_consts * 2 : 16;
        const byocl_tensor **grown = realloc(pr->consts, (size_t)cap * sizeof *grown);
        if (!grown) {
            pr->out.oom = true;
            return -1;
        }
        pr->consts = grown;
        pr->cap_consts = cap;
    }
    int k = pr->n_consts++;
    pr->consts[k] = t;
    if (pr->meta_out) {
        char name[64];
        snprintf(name, sizeof name, "relay.Constant.%d", k);
        if (byocl_params_set(pr->meta_out, name, t, &pr->err) != BYOCL_OK)
            pr->failed = true;
    }
    return k;
}

/* How node `id` appears as an argument: %x, %3, %x0, 2f, meta[relay.Constant][0]. */
static void print_ref(printer *pr, const byocl_function *fn, const print_plan *plan, int id)
{
    switch (byocl_node_kind_of(fn, id)) {
    case BYOCL_NODE_VAR:
        base_textbuf_printf(&pr->out, "%%%s", byocl_node_name(fn, id));
        return;
    case BYOCL_NODE_CONSTANT: {
        byocl_tensor *t = fn->nodes[id].value; /* meta_out takes its own reference */
        if (byocl_tensor_shape(t)->rank == 0) {
            char lit[96];
            format_scalar(t, lit, sizeof lit);
            base_textbuf_puts(&pr->out, lit);
        } else {
            base_textbuf_printf(&pr->out, "meta[relay.Constant][%d]", meta_index(pr, t));
        }
        return;
    }
    default:
        if (plan->named[id])
            base_textbuf_printf(&pr->out, "%%%s", byocl_node_name(fn, id));
        else
            base_textbuf_printf(&pr->out, "%%%d", plan->number[id]);
        return;
    }
}

static void print_args(printer *pr, const byocl_function *fn, const print_plan *plan, int id)
{
    for (int k = 0; k < byocl_node_num_args(fn, id); k++) {
        if (k)
            base_textbuf_puts(&pr->out, ", ");
        print_ref(pr, fn, plan, byocl_node_arg(fn, id, k));
    }
}

/* Non-default attributes of an op call, in schema order. */
static void print_op_attrs(printer *pr, const byocl_function *fn, int id, bool after_args)
{
    const byocl_op *op = fn->nodes[id].op;
    const byocl_attrs *attrs = &fn->nodes[id].attrs;
    for (int k = 0; op && k < byocl_op_num_attrs(op); k++) {
        const byocl_attr *value = byocl_attrs_find(attrs, byocl_op_attr_name(op, k));
        if (!value || ops_attr_is_default(op, k, value))
            continue;
        base_textbuf_printf(&pr->out, "%s%s=", after_args ? ", " : "", value->key);
        buf_format(&pr->out, format_attr, value);
        after_args = true;
    }
}

/* The expression that defines node `id` (a call, a tuple or a tuple item). */
static void print_expr(printer *pr, const byocl_function *fn, const print_plan *plan, int id)
{
    int n_args = byocl_node_num_args(fn, id);
    switch (byocl_node_kind_of(fn, id)) {
    case BYOCL_NODE_CALL:
        if (byocl_node_op(fn, id))
            base_textbuf_printf(&pr->out, "%s(", byocl_node_op(fn, id));
        else
            base_textbuf_printf(&pr->out, "@%s(", byocl_node_callee(fn, id));
        print_args(pr, fn, plan, id);
        if (byocl_node_op(fn, id))
            print_op_attrs(pr, fn, id, n_args > 0);
        base_textbuf_puts(&pr->out, ")");
        break;
    case BYOCL_NODE_TUPLE:
        base_textbuf_puts(&pr->out, "(");
        print_args(pr, fn, plan, id);
        base_textbuf_puts(&pr->out, n_args == 1 ? ",)" : ")");
        break;
    case BYOCL_NODE_GETITEM:
        print_ref(pr, fn, plan, byocl_node_arg(fn, id, 0));
        base_textbuf_printf(&pr->out, ".%d", byocl_node_index(fn, id));
        break;
    default:
        print_ref(pr, fn, plan, id);
        break;
    }
    const byocl_type *type = byocl_node_type(fn, id);
    if (pr->show_types && type && type->kind != BYOCL_TYPE_NONE) {
        base_textbuf_puts(&pr->out, " /* ty=");
        buf_format(&pr->out, format_type, type);
        base_textbuf_puts(&pr->out, " */");
    }
}

static void print_signature(printer *pr, const byocl_function *fn)
{
    base_textbuf_printf(&pr->out, "def @%s(", byocl_function_name(fn));
    int n_params = byocl_function_num_params(fn);
    for (int k = 0; k < n_params; k++) {
        int id = byocl_function_param(fn, k);
        base_textbuf_printf(&pr->out, "%s%%%s: ", k ? ", " : "", byocl_node_name(fn, id));
        buf_format(&pr->out, format_type, byocl_node_type(fn, id));
    }
    const byocl_attrs *attrs = byocl_function_attrs(fn);
    for (int k = 0; attrs && k < attrs->n; k++) {
        base_textbuf_printf(&pr->out, "%s%s=", k + n_params ? ", " : "", attrs->items[k].key);
        buf_format(&pr->out, format_attr, &attrs->items[k]);
    }
    base_textbuf_puts(&pr->out, ")");
    const byocl_type *ret = byocl_function_ret_type(fn);
    if (ret && ret->kind != BYOCL_TYPE_NONE) {
        base_textbuf_puts(&pr->out, " -> ");
        buf_format(&pr->out, format_type, ret);
    }
    base_textbuf_puts(&pr->out, " {\n");
}

static void print_function(printer *pr, const byocl_function *fn)
{
    int body = byocl_function_body(fn);
    if (body < 0) {
        byocl_error_set(&pr->err, BYOCL_ERR_INVALID, "cannot print @%s: it has no body",
                        byocl_function_name(fn));
        pr->failed = true;
        return;
    }
    print_plan plan;
    if (!plan_function(fn, pr->renumber, &plan)) {
        pr->out.oom = true;
        return;
    }
    print_signature(pr, fn);
    for (int id = 0; id < byocl_function_num_nodes(fn); id++) {
        if (!is_bound_kind(byocl_node_kind_of(fn, id)) || id == plan.body_inline)
            continue;
        base_textbuf_puts(&pr->out, "  ");
        print_ref(pr, fn, &plan, id);
        base_textbuf_puts(&pr->out, " = ");
        print_expr(pr, fn, &plan, id);
        base_textbuf_puts(&pr->out, ";\n");
    }
    base_textbuf_puts(&pr->out, "  ");
    if (body == plan.body_inline)
        print_expr(pr, fn, &plan, body);
    else
        print_ref(pr, fn, &plan, body);
    base_textbuf_puts(&pr->out, "\n}\n");
    plan_free(&plan);
}

char *byocl_text_print(const byocl_module *m, const byocl_print_options *opt,
                       byocl_params *meta_out, byocl_error *err)
{
    printer pr;
    memset(&pr, 0, sizeof pr);
    pr.show_types = opt && opt->show_types;
    pr.renumber = opt && opt->renumber;
    pr.meta_out = meta_out;
    base_textbuf_puts(&pr.out, "#[version = \"0.0.5\"]\n");
    for (int f = 0; f < byocl_module_num_functions(m) && !pr.failed; f++) {
        if (f)
            base_textbuf_puts(&pr.out, "\n");
        print_function(&pr, byocl_module_function_at(m, f));
    }
    if (!pr.failed && opt && opt->metadata == BYOCL_METADATA_INLINE && pr.n_consts > 0)
        text_metadata_print(&pr.out, pr.consts, pr.n_consts);
    free(pr.consts);
    if (pr.out.oom && !pr.failed) {
        byocl_error_set(&pr.err, BYOCL_ERR_NOMEM, "out of memory while printing the module");
        pr.failed = true;
    }
    if (pr.failed) {
        base_textbuf_free(&pr.out);
        if (err)
            *err = pr.err;
        return NULL;
    }
    return base_textbuf_take(&pr.out);
}
