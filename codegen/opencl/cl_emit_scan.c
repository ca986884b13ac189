/* The kernels of the ops that combine many input elements along a line in order:
 * cumsum (kernels_cl/cumsum.cl: one work-item per line, a compensated running sum) and
 * scatter_elements and scatter_nd (kernels_cl/scatter.cl) in "gather form": one work-item
 * per output element starts from the data's element and combines, in the reference's
 * order, the updates whose index names it. No two work-items write one element, so there
 * are no races, and a repeated index is applied in order exactly as the host does; the
 * price is that every output element looks at every update that could target it
 * (clg_scatter_candidates), which clg_supports bounds (CLG_MAX_SCATTER_STEPS). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_impl.h"
#include "ops/index.h"
#include "ops/op_impl.h"

/* The digit along axis `d` of flat index `var` in an array of extents dims[] (C order):
 * "(fi) / 20 % 4"; the outermost digit needs no modulo. */
static void digit_text(const int64_t *dims, int rank, int d, const char *var, char *buf,
                       size_t len)
{
    int64_t below = 1;
    for (int k = d + 1; k < rank; k++)
        below *= dims[k];
    int at = snprintf(buf, len, "(%s)", var);
    if (below > 1 && at > 0 && (size_t)at < len)
        at += snprintf(buf + at, len - (size_t)at, " / %lld", (long long)below);
    if (d > 0 && at > 0 && (size_t)at < len)
        snprintf(buf + at, len - (size_t)at, " %% %lld", (long long)dims[d]);
}

/* Starts kernel `tmpl` of the group with its buffers: x (the anchor's first argument), y
 * (the group's value) and, when `indexed`, ix and u (a scatter's indices and updates). */
static byocl_status begin_kernel(clg_gen *gen, const clg_group *grp, const char *tmpl,
                                 bool indexed, clg_kernel *k)
{
    const byocl_function *fn = gen->fn;
    const byocl_node *n = &fn->nodes[grp->anchor];
    int roots[3], bufs[3], n_args = indexed ? 3 : 1;
    for (int a = 0; a < n_args; a++) {
        roots[a] = gen->graph.info[n->args[a]].root;
        bufs[a] = clg_gen_root_buf(gen, roots[a]);
        if (bufs[a] < 0)
            return gen->err->status;
    }
    int y = clg_gen_root_buf(gen, grp->tail);
    if (y < 0)
        return gen->err->status;
    clg_kernel_begin(k, gen, tmpl);
    clg_kernel_buffer(k, "x", bufs[0], clg_tensor_type(fn, roots[0])->dtype, false);
    clg_kernel_buffer(k, "y", y, clg_tensor_type(fn, grp->tail)->dtype, true);
    if (indexed) {
        clg_kernel_buffer(k, "ix", bufs[1], clg_tensor_type(fn, roots[1])->dtype, false);
        clg_kernel_buffer(k, "u", bufs[2], clg_tensor_type(fn, roots[2])->dtype, false);
    }
    return BYOCL_OK;
}

/* Adds the group's epilogue and writes the kernel, launched over `global` work-items. */
static byocl_status finish_kernel(clg_gen *gen, const clg_group *grp, clg_kernel *k,
                                  const char *tmpl, int64_t global)
{
    char label[96];
    clg_group_label(gen, grp, label, sizeof label);
    byocl_status st = clg_epilogue_define(k, grp, gen->err);
    size_t work = (size_t)global;
    return clg_kernel_finish(k, st, tmpl, label, 1, &work, clg_group_flops(gen, grp));
}

/* cumsum: outer x inner lines of LEN elements, INNER apart (axis None: one line of all). */
byocl_status clg_emit_cumsum(clg_gen *gen, const clg_group *grp)
{
    const byocl_node *n = &gen->fn->nodes[grp->anchor];
    int64_t outer, len, inner;
    bool reverse = ops_cumsum_plan(&n->attrs, &gen->fn->nodes[n->args[0]].type->shape, &outer,
                                   &len, &inner);
    clg_kernel k;
    byocl_status st = begin_kernel(gen, grp, "cumsum", false, &k);
    if (st != BYOCL_OK)
        return st;
    clg_kernel_define(&k, "LINES", "%lld", (long long)(outer * inner));
    clg_kernel_define(&k, "LEN", "%lld", (long long)len);
    clg_kernel_define(&k, "INNER", "%lld", (long long)inner);
    clg_kernel_define(&k, "REVERSE", "%d", reverse);
    clg_kernel_define(&k, "EXCLUSIVE", "%d",
                      byocl_attrs_get_bool(&n->attrs, "exclusive", false));
    return finish_kernel(gen, grp, &k, "cumsum", outer * inner);
}

int64_t clg_scatter_candidates(const byocl_function *fn, const byocl_node *n)
{
    const byocl_shape *data = &fn->nodes[n->args[0]].type->shape;
    const byocl_shape *idx = &fn->nodes[n->args[1]].type->shape;
    if (strcmp(n->op->name, "scatter_nd") == 0) /* indices (M, Y..): the positions Y.. */
        return idx->rank > 0 && idx->dims[0] > 0 ? byocl_shape_numel(idx) / idx->dims[0] : 0;
    return idx->dims[ops_gather_axis(&n->attrs, data->rank)];
}

/* An index v_ names position `want` of an axis of `count` (-count..-1 from the end; out of
 * range names none, so it is skipped). */
static void index_hit_text(long long count, const char *want, byocl_textbuf *t)
{
    base_textbuf_printf(t, "(v_ < 0 ? v_ + %lld : v_) == %s", count, want);
}

/* scatter_elements: output element fi (digits d) takes the updates at the index positions
 * whose digits off the axis are d's (none when one of those lies past the indices' shape),
 * in order along the axis, where the index equals d's axis digit. */
static void scatter_elements_text(const byocl_node *n, const byocl_shape *data,
                                  const byocl_shape *idx, byocl_textbuf *setup,
                                  byocl_textbuf *match)
{
    int rank = data->rank, axis = ops_gather_axis(&n->attrs, rank);
    int64_t stride[BYOCL_MAX_RANK], coef[BYOCL_MAX_RANK], s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        stride[d] = s;
        s *= idx->dims[d];
    }
    char digit[96];
    digit_text(data->dims, rank, axis, "fi", digit, sizeof digit);
    base_textbuf_printf(setup, "const int want_ = %s; \\\nconst int first_ = ", digit);
    for (int d = 0; d < rank; d++)
        coef[d] = d == axis ? 0 : stride[d];
    clg_digits_offset_text(data->dims, coef, rank, "fi", setup);
    base_textbuf_puts(setup, "; \\\ncount = ");
    bool bounded = false; /* some digit off the axis may lie past the indices' extent */
    for (int d = 0; d < rank; d++)
        if (d != axis && idx->dims[d] < data->dims[d]) {
            digit_text(data->dims, rank, d, "fi", digit, sizeof digit);
            base_textbuf_printf(setup, "%s%s < %lld", bounded ? " && " : "", digit,
                                (long long)idx->dims[d]);
            bounded = true;
        }
    base_textbuf_printf(setup, bounded ? " ? %lld : 0" : "%lld", (long long)idx->dims[axis]);
    base_textbuf_puts(match, "{ \\\n    from = first_ + (t)");
    if (stride[axis] != 1)
        base_textbuf_printf(match, " * %lld", (long long)stride[axis]);
    base_textbuf_puts(match, "; \\\n    const long v_ = (long)LD_ix(from); \\\n    hit = ");
    index_hit_text((long long)data->dims[axis], "want_", match);
    base_textbuf_puts(match, "; \\\n}");
}

/* scatter_nd: output element fi (leading digits w_j along the M indexed axes, then s_ in
 * its slice) takes element s_ of the slice of every index position whose M indices are
 * the w_j, in position order. */
static byocl_status scatter_nd_text(const byocl_shape *data, const byocl_shape *idx,
                                    byocl_textbuf *setup, byocl_textbuf *match,
                                    byocl_error *err)
{
    ops_nd_plan p;
    byocl_status st = ops_nd_plan_make("scatter_nd", 0, data, idx, &p, err);
    if (st != BYOCL_OK)
        return st;
    char digit[96], want[16];
    for (int j = 0; j < p.m; j++) {
        digit_text(data->dims, data->rank, j, "fi", digit, sizeof digit);
        base_textbuf_printf(setup, "const int w%d_ = %s; \\\n", j, digit);
    }
    if (p.slice > 1)
        base_textbuf_printf(setup, "const int s_ = (fi) %% %lld; \\\n", (long long)p.slice);
    base_textbuf_printf(setup, "count = %lld", (long long)p.positions);
    base_textbuf_puts(match, "{ \\\n    long v_; \\\n    hit = true; \\\n");
    for (int j = 0; j < p.m; j++) {
        snprintf(want, sizeof want, "w%d_", j);
        base_textbuf_puts(match, "    v_ = (long)LD_ix(");
        if (j > 0)
            base_textbuf_printf(match, "%lld + ", (long long)(j * p.positions));
        base_textbuf_puts(match, "(t)); \\\n    hit = hit && ");
        index_hit_text((long long)p.dim[j], want, match);
        base_textbuf_puts(match, "; \\\n");
    }
    if (p.slice > 1)
        base_textbuf_printf(match, "    from = (t) * %lld + s_; \\\n}", (long long)p.slice);
    else
        base_textbuf_puts(match, "    from = (t); \\\n}");
    return BYOCL_OK;
}

/* COMBINE(a, b) of scatter_combine (codegen/ops/index.c): float arithmetic gives the
 * reference's double result rounded to float, and a float16 result is rounded again as
 * the reference stores it; min and max keep a NaN, the element's first. */
static const char *combine_text(ops_scatter_reduce r, bool half)
{
    switch (r) {
    case OPS_SCATTER_UPDATE: return "(b)";
    case OPS_SCATTER_ADD: return half ? "byocl_round_f16((a) + (b))" : "((a) + (b))";
    case OPS_SCATTER_MUL: return half ? "byocl_round_f16((a) * (b))" : "((a) * (b))";
    case OPS_SCATTER_MIN: return "(isnan(a) ? (a) : isnan(b) ? (b) : (b) < (a) ? (b) : (a))";
    case OPS_SCATTER_MAX: return "(isnan(a) ? (a) : isnan(b) ? (b) : (b) > (a) ? (b) : (a))";
    }
    return "(b)";
}

byocl_status clg_emit_scatter(clg_gen *gen, const clg_group *grp)
{
    const byocl_function *fn = gen->fn;
    const byocl_node *n = &fn->nodes[grp->anchor];
    const byocl_shape *data = &fn->nodes[n->args[0]].type->shape;
    const byocl_shape *idx = &fn->nodes[n->args[1]].type->shape;
    byocl_textbuf setup = {0}, match = {0};
    byocl_status st = BYOCL_OK;
    if (strcmp(n->op->name, "scatter_nd") == 0)
        st = scatter_nd_text(data, idx, &setup, &match, gen->err);
    else
        scatter_elements_text(n, data, idx, &setup, &match);
    char *setup_text = base_textbuf_take(&setup), *match_text = base_textbuf_take(&match);
    if (st == BYOCL_OK && (!setup_text || !match_text))
        st = byocl_error_set(gen->err, BYOCL_ERR_NOMEM, "out of memory writing a scatter");
    clg_kernel k;
    if (st == BYOCL_OK)
        st = begin_kernel(gen, grp, "scatter", true, &k);
    if (st == BYOCL_OK) {
        int64_t nout = byocl_shape_numel(data);
        bool half = fn->nodes[grp->anchor].type->dtype == BYOCL_FLOAT16;
        clg_kernel_define(&k, "NOUT", "%lld", (long long)nout);
        clg_kernel_define(&k, "SCATTER_SETUP(fi, count)", "%s", setup_text);
        clg_kernel_define(&k, "SCATTER_MATCH(t, from, hit)", "%s", match_text);
        clg_kernel_define(&k, "COMBINE(a, b)", "%s",
                          combine_text(ops_scatter_reduce_of(&n->attrs), half));
        st = finish_kernel(gen, grp, &k, "scatter", nout);
    }
    free(setup_text);
    free(match_text);
    return st;
}
