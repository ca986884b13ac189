/* clg_codegen: a region becomes one OpenCL program, written in one pass over its
 * groups in launch order:
 *   1. analyse the region (cl_graph.c): roots, uses, fusion groups, outputs
 *   2. bind the region's inputs and outputs to buffers; a group whose value is an output
 *      writes it in place, other outputs get a copy at the end
 *   3. concatenations in place (cl_concat.c): their inputs become slices of their buffers
 *   4. the prelude, then each group's kernels (cl_emit.c), specialized from the
 *      kernels_cl/ templates, with their launches
 *   5. the buffer plan over the launches and the finished plan (cl_plan.c) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_impl.h"
#include "cl_templates.h"
#include "ops/op_impl.h"

void clg_node_desc(const byocl_function *fn, int node, char *buf, size_t len)
{
    char label[48];
    byocl_node_label(fn, node, label, sizeof label);
    const byocl_node *n = &fn->nodes[node];
    if (n->kind == BYOCL_NODE_CALL && n->op)
        snprintf(buf, len, "%s (%s)", label, n->op->name);
    else
        snprintf(buf, len, "%s", label);
}

int clg_gen_buf(clg_gen *gen, byocl_cl_buffer_kind kind, int index, size_t bytes,
               const char *what)
{
    if (gen->n_bufs == gen->cap_bufs) {
        int cap = gen->cap_bufs ? 2 * gen->cap_bufs : 32;
        clg_buf *b = realloc(gen->bufs, (size_t)cap * sizeof *b);
        if (!b) {
            byocl_error_set(gen->err, BYOCL_ERR_NOMEM, "out of memory planning buffers");
            return -1;
        }
        gen->bufs = b;
        gen->cap_bufs = cap;
    }
    clg_buf *b = &gen->bufs[gen->n_bufs];
    *b = (clg_buf){
        .kind = kind, .index = index, .bytes = bytes, .first = -1, .last = -1, .within = -1};
    snprintf(b->what, sizeof b->what, "%s", what);
    return gen->n_bufs++;
}

int clg_gen_const(clg_gen *gen, byocl_tensor *t, const char *what)
{
    if (gen->n_consts == gen->cap_consts) {
        int cap = gen->cap_consts ? 2 * gen->cap_consts : 16;
        byocl_tensor **c = realloc(gen->consts, (size_t)cap * sizeof *c);
        if (!c) {
            byocl_tensor_unref(t);
            byocl_error_set(gen->err, BYOCL_ERR_NOMEM, "out of memory keeping constants");
            return -1;
        }
        gen->consts = c;
        gen->cap_consts = cap;
    }
    int b = clg_gen_buf(gen, BYOCL_CL_BUF_CONSTANT, gen->n_consts, byocl_tensor_nbytes(t), what);
    if (b < 0) {
        byocl_tensor_unref(t);
        return -1;
    }
    gen->consts[gen->n_consts++] = t;
    return b;
}

static size_t tensor_bytes(const byocl_type *t)
{
    return (size_t)byocl_shape_numel(&t->shape) * byocl_dtype_size(t->dtype);
}

size_t clg_gen_root_bytes(const clg_gen *gen, int root)
{
    return tensor_bytes(clg_tensor_type(gen->fn, root));
}

/* Bytes at the end of each scratch buffer of a value that kernels may read past the tensor
 * (and drop what they read): a direct conv2d's last tile (clg_conv_schedule). */
#define SCRATCH_SLACK_BYTES 64

int64_t clg_gen_root_slack(const clg_gen *gen, int root)
{
    int buf = gen->graph.info[root].buf;
    if (buf < 0 || gen->bufs[buf].kind != BYOCL_CL_BUF_SCRATCH)
        return 0;
    /* A slice (cl_concat.c) may be read up to the end of the scratch buffer it lies in: the
     * slices after it, then that buffer's slack (densenet's 1x1 convs on 14x14 maps read
     * their inputs, the start of a dense block's concatenation, as they are so). */
    size_t offset;
    int outer = clg_gen_buf_outermost(gen, buf, &offset);
    size_t end = offset + clg_gen_root_bytes(gen, root);
    if (gen->bufs[outer].kind != BYOCL_CL_BUF_SCRATCH || gen->bufs[outer].bytes <= end)
        return 0;
    return (int64_t)((gen->bufs[outer].bytes - end) /
                     byocl_dtype_size(clg_tensor_type(gen->fn, root)->dtype));
}

int clg_gen_root_buf(clg_gen *gen, int root)
{
    clg_node_info *info = &gen->graph.info[root];
    if (info->buf >= 0)
        return info->buf;
    const byocl_function *fn = gen->fn;
    const byocl_node *n = &fn->nodes[root];
    char what[112];
    clg_node_desc(fn, root, what, sizeof what);
    if (n->kind == BYOCL_NODE_CONSTANT)
        info->buf = clg_gen_const(gen, byocl_tensor_ref(n->value), what);
    else
        info->buf = clg_gen_buf(gen, BYOCL_CL_BUF_SCRATCH, -1,
                               tensor_bytes(clg_tensor_type(fn, root)) + SCRATCH_SLACK_BYTES,
                               what);
    return info->buf;
}

int clg_gen_root_slice(clg_gen *gen, int root, int within, size_t offset)
{
    char what[112];
    clg_node_desc(gen->fn, root, what, sizeof what);
    int b = clg_gen_buf(gen, BYOCL_CL_BUF_SCRATCH, -1, clg_gen_root_bytes(gen, root), what);
    if (b >= 0) {
        gen->bufs[b].within = within;
        gen->bufs[b].offset = offset;
        gen->graph.info[root].buf = b;
    }
    return b;
}

int clg_gen_buf_outermost(const clg_gen *gen, int buf, size_t *offset)
{
    size_t at = 0;
    for (; gen->bufs[buf].within >= 0; buf = gen->bufs[buf].within)
        at += gen->bufs[buf].offset;
    if (offset)
        *offset = at;
    return buf;
}

/* Parameters are the inputs; outputs go straight into the output buffers where a group
 * computes them (once); the rest are copied at the end (*copies lists those outputs). */
static byocl_status bind_io(clg_gen *gen, int *copies, int *n_copies)
{
    const byocl_function *fn = gen->fn;
    clg_graph *g = &gen->graph;
    for (int k = 0; k < fn->n_params; k++) {
        int p = fn->params[k];
        char what[112];
        clg_node_desc(fn, p, what, sizeof what);
        g->info[p].buf = clg_gen_buf(gen, BYOCL_CL_BUF_INPUT, k, tensor_bytes(fn->nodes[p].type),
                                    what);
        if (g->info[p].buf < 0)
            return gen->err->status;
    }
    *n_copies = 0;
    for (int k = 0; k < g->n_outputs; k++) {
        int r = g->outputs[k];
        const clg_node_info *info = &g->info[r];
        /* topk's group computes its indices item too (cl_graph.c). */
        bool computed = info->group >= 0 && (g->groups[info->group].tail == r ||
                                             g->groups[info->group].kind == CLG_ANCHOR_TOPK);
        char what[112];
        clg_node_desc(fn, r, what, sizeof what);
        int b = clg_gen_buf(gen, BYOCL_CL_BUF_OUTPUT, k, tensor_bytes(clg_tensor_type(fn, r)),
                           what);
        if (b < 0)
            return gen->err->status;
        gen->output_bufs[k] = b;
        if (computed && info->buf < 0)
            g->info[r].buf = b;
        else
            copies[(*n_copies)++] = k;
    }
    return BYOCL_OK;
}

byocl_status clg_codegen(const byocl_function *region, const byocl_cl_codegen_options *opt,
                         byocl_cl_plan **out, byocl_error *err)
{
    byocl_error local;
    if (!err)
        err = &local;
    if (!out || !region)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "clg_codegen: missing %s",
                               out ? "region" : "output");
    *out = NULL;
    clg_gen gen = {.fn = region, .err = err};
    if (opt)
        gen.opt = *opt;
    byocl_status st = clg_graph_build(region, &gen.opt, &gen.graph, err);
    if (st != BYOCL_OK)
        return st;
    int *copies = malloc((size_t)gen.graph.n_outputs * sizeof *copies);
    gen.output_bufs = malloc((size_t)gen.graph.n_outputs * sizeof *gen.output_bufs);
    int n_copies = 0;
    if (!copies || !gen.output_bufs)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory generating @%s", region->name);
    if (st == BYOCL_OK)
        st = bind_io(&gen, copies, &n_copies);
    if (st == BYOCL_OK)
        st = clg_concat_in_place(&gen);
    if (st == BYOCL_OK) {
        base_textbuf_printf(&gen.src,
                            "/* OpenCL C 1.2 program for region @%s, generated by byocl. */\n\n",
                            region->name);
        base_textbuf_puts(&gen.src, clg_template_text("prelude"));
        gen.prelude_length = gen.src.len;
    }
    for (int i = 0; st == BYOCL_OK && i < gen.graph.n_groups; i++)
        st = clg_emit_group(&gen, &gen.graph.groups[i]);
    for (int i = 0; st == BYOCL_OK && i < n_copies; i++)
        st = clg_emit_output_copy(&gen, copies[i]);
    free(copies);
    if (st == BYOCL_OK)
        st = clg_plan_finish(&gen, out);
    /* On success clg_plan_finish took what the plan keeps. */
    for (int i = 0; i < gen.n_consts; i++)
        byocl_tensor_unref(gen.consts[i]);
    free(gen.consts);
    for (int i = 0; i < gen.n_launches; i++)
        free(gen.launches[i].args);
    free(gen.launches);
    free(gen.kernel_texts);
    free(gen.bufs);
    free(gen.output_bufs);
    base_textbuf_free(&gen.src);
    clg_graph_free(&gen.graph);
    return st;
}
