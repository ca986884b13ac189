/* The finished plan: the scratch buffer plan (buffers reused by liveness over the
 * launches), the plan's ownership, its text form and the --emit files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/storage_plan.h"
#include "base/file_util.h"
#include "cl_impl.h"

/* Scratch buffers start at multiples of this (a cache line). */
#define CLG_SCRATCH_ALIGN 64

void clg_plan_free(byocl_cl_plan *plan)
{
    if (!plan)
        return;
    free(plan->source);
    free(plan->kernels);
    free(plan->build_options);
    free(plan->scratch_bytes);
    free(plan->slices);
    for (int i = 0; i < plan->n_constants; i++)
        byocl_tensor_unref(plan->constants[i]);
    free(plan->constants);
    for (int i = 0; i < plan->n_launches; i++)
        free(plan->launches[i].args);
    free(plan->launches);
    free(plan->region);
    free(plan->buffers_text);
    free(plan);
}

static const char *const kind_names[] = {"input", "output", "scratch", "constant", "slice"};

/* Which launches touch each scratch buffer (a buffer lives while any of its slices is
 * used), then one place per buffer that is no slice, then the slices (*slices). */
static byocl_status plan_scratch(clg_gen *gen, size_t **sizes, int *n_scratch,
                                 byocl_cl_slice **slices, int *n_slices)
{
    for (int l = 0; l < gen->n_launches; l++) {
        const byocl_cl_launch *launch = &gen->launches[l];
        for (int a = 0; a < launch->n_args; a++) {
            if (launch->args[a].kind != BYOCL_CL_ARG_BUFFER)
                continue;
            clg_buf *b = &gen->bufs[launch->args[a].buffer.index];
            if (b->first < 0)
                b->first = l;
            b->last = l;
        }
    }
    int n = 0, n_sliced = 0;
    for (int i = 0; i < gen->n_bufs; i++) {
        clg_buf *b = &gen->bufs[i];
        if (b->kind != BYOCL_CL_BUF_SCRATCH || b->first < 0 || b->within < 0)
            continue;
        clg_buf *holder = &gen->bufs[clg_gen_buf_outermost(gen, i, NULL)];
        if (holder->first < 0 || b->first < holder->first)
            holder->first = b->first;
        if (b->last > holder->last)
            holder->last = b->last;
        n_sliced++;
    }
    for (int i = 0; i < gen->n_bufs; i++)
        n += gen->bufs[i].kind == BYOCL_CL_BUF_SCRATCH && gen->bufs[i].first >= 0 &&
             gen->bufs[i].within < 0;
    byocl_live_range *ranges = malloc((size_t)(n ? n : 1) * sizeof *ranges);
    int *ids = malloc((size_t)(n ? n : 1) * sizeof *ids);
    int *place = malloc((size_t)(n ? n : 1) * sizeof *place);
    *slices = n_sliced ? malloc((size_t)n_sliced * sizeof **slices) : NULL;
    *n_slices = 0;
    byocl_status st = BYOCL_OK;
    if (!ranges || !ids || !place || (n_sliced && !*slices))
        st = byocl_error_set(gen->err, BYOCL_ERR_NOMEM, "out of memory planning buffers");
    n = 0;
    for (int i = 0; st == BYOCL_OK && i < gen->n_bufs; i++) {
        const clg_buf *b = &gen->bufs[i];
        if (b->kind != BYOCL_CL_BUF_SCRATCH || b->first < 0 || b->within >= 0)
            continue;
        ranges[n] = (byocl_live_range){.bytes = b->bytes, .first = b->first, .last = b->last};
        ids[n++] = i;
    }
    if (st == BYOCL_OK)
        st = storage_plan(ranges, n, CLG_SCRATCH_ALIGN, place, sizes, n_scratch, gen->err);
    for (int i = 0; st == BYOCL_OK && i < n; i++)
        gen->bufs[ids[i]].index = place[i];
    for (int i = 0; st == BYOCL_OK && i < gen->n_bufs; i++) {
        clg_buf *b = &gen->bufs[i];
        if (b->kind != BYOCL_CL_BUF_SCRATCH || b->first < 0 || b->within < 0)
            continue;
        size_t offset;
        int holder = clg_gen_buf_outermost(gen, i, &offset);
        (*slices)[*n_slices] = (byocl_cl_slice){
            .scratch = gen->bufs[holder].index, .offset = offset,
            .bytes = gen->bufs[holder].bytes - offset}; /* see byocl_cl_slice */
        b->kind = BYOCL_CL_BUF_SLICE;
        b->index = (*n_slices)++;
    }
    if (st != BYOCL_OK) {
        free(*slices);
        *slices = NULL;
    }
    free(ranges);
    free(ids);
    free(place);
    return st;
}

/* Whether slice buffer a comes before b in the buffer listing: by offset, then the
 * larger value (the one holding the other) first. */
static bool slice_before(const byocl_cl_slice *slices, const clg_buf *a, const clg_buf *b)
{
    const byocl_cl_slice *x = &slices[a->index], *y = &slices[b->index];
    if (x->offset != y->offset)
        return x->offset < y->offset;
    return a->bytes != b->bytes ? a->bytes > b->bytes : a->index < b->index;
}

static void buffers_text(const clg_gen *gen, const size_t *scratch, int n_scratch,
                         const byocl_cl_slice *slices, byocl_textbuf *t)
{
    const byocl_function *fn = gen->fn;
    for (int kind = 0; kind < 4; kind++) {
        if (kind == BYOCL_CL_BUF_SCRATCH)
            continue;
        for (int i = 0; i < gen->n_bufs; i++) {
            const clg_buf *b = &gen->bufs[i];
            if ((int)b->kind != kind)
                continue;
            char type[160] = "";
            if (kind == BYOCL_CL_BUF_INPUT)
                byocl_type_str(fn->nodes[fn->params[b->index]].type, type, sizeof type);
            else if (kind == BYOCL_CL_BUF_OUTPUT)
                byocl_type_str(clg_tensor_type(fn, gen->graph.outputs[b->index]), type,
                               sizeof type);
            else {
                const byocl_tensor *c = gen->consts[b->index];
                byocl_type ct = byocl_type_tensor(byocl_tensor_dtype(c),
                                                  byocl_tensor_shape(c)->rank,
                                                  byocl_tensor_shape(c)->dims);
                byocl_type_str(&ct, type, sizeof type);
            }
            base_textbuf_printf(t, "  %s%d  %zu bytes  %s  %s\n", kind_names[kind], b->index,
                                b->bytes, type, b->what);
        }
    }
    for (int s = 0; s < n_scratch; s++) {
        base_textbuf_printf(t, "  scratch%d  %zu bytes\n", s, scratch[s]);
        for (int i = 0; i < gen->n_bufs; i++) {
            const clg_buf *b = &gen->bufs[i];
            if (b->kind == BYOCL_CL_BUF_SCRATCH && b->first >= 0 && b->index == s)
                base_textbuf_printf(t, "    launches %d..%d: %s (%zu bytes)\n", b->first, b->last,
                                    b->what, b->bytes);
        }
        /* Its slices by offset, a concatenation before the slices it holds. */
        for (const clg_buf *prev = NULL;;) {
            const clg_buf *next = NULL;
            for (int i = 0; i < gen->n_bufs; i++) {
                const clg_buf *b = &gen->bufs[i];
                if (b->kind == BYOCL_CL_BUF_SLICE && slices[b->index].scratch == s &&
                    (!prev || slice_before(slices, prev, b)) &&
                    (!next || slice_before(slices, b, next)))
                    next = b;
            }
            if (!next)
                break;
            base_textbuf_printf(t, "    slice%d at %zu: launches %d..%d: %s (%zu bytes)\n",
                                next->index, slices[next->index].offset, next->first,
                                next->last, next->what, next->bytes);
            prev = next;
        }
    }
}

byocl_status clg_plan_finish(clg_gen *gen, byocl_cl_plan **out)
{
    size_t *scratch = NULL;
    byocl_cl_slice *slices = NULL;
    int n_scratch = 0, n_slices = 0;
    byocl_status st = plan_scratch(gen, &scratch, &n_scratch, &slices, &n_slices);
    if (st != BYOCL_OK)
        return st;
    byocl_textbuf text = {0};
    buffers_text(gen, scratch, n_scratch, slices, &text);
    byocl_cl_plan *plan = calloc(1, sizeof *plan);
    if (plan) {
        plan->buffers_text = base_textbuf_take(&text);
        plan->source = base_textbuf_take(&gen->src);
        plan->kernels = malloc((size_t)(gen->n_kernel_texts ? gen->n_kernel_texts : 1) *
                               sizeof *plan->kernels);
        /* -w: the kernels are byocl's, not the user's; without it PoCL's clang prints
         * "N warnings generated." on the user's stderr when float16 vectors meet a
         * device without AVX-512 (a -Wpsabi note that changes nothing here). */
        plan->build_options = strdup("-cl-std=CL1.2 -cl-mad-enable -w");
        plan->region = strdup(gen->fn->name);
    }
    if (!plan || !plan->buffers_text || !plan->source || !plan->kernels ||
        !plan->build_options || !plan->region) {
        base_textbuf_free(&text);
        free(scratch);
        free(slices);
        clg_plan_free(plan);
        return byocl_error_set(gen->err, BYOCL_ERR_NOMEM, "out of memory finishing the plan of @%s",
                               gen->fn->name);
    }
    plan->n_kernels = gen->n_kernel_texts;
    plan->prelude_length = gen->prelude_length;
    for (int i = 0; i < gen->n_kernel_texts; i++)
        plan->kernels[i] = gen->kernel_texts[i].span;
    plan->n_inputs = gen->fn->n_params;
    plan->n_outputs = gen->graph.n_outputs;
    plan->n_scratch = n_scratch;
    plan->scratch_bytes = scratch;
    plan->n_slices = n_slices;
    plan->slices = slices;
    for (int l = 0; l < gen->n_launches; l++) {
        byocl_cl_launch *launch = &gen->launches[l];
        for (int a = 0; a < launch->n_args; a++) {
            byocl_cl_arg *arg = &launch->args[a];
            if (arg->kind == BYOCL_CL_ARG_BUFFER) {
                const clg_buf *b = &gen->bufs[arg->buffer.index];
                arg->buffer = (byocl_cl_buffer_ref){.kind = b->kind, .index = b->index};
            }
        }
    }
    plan->n_launches = gen->n_launches;
    plan->launches = gen->launches;
    gen->launches = NULL;
    gen->n_launches = gen->cap_launches = 0;
    plan->n_constants = gen->n_consts;
    plan->constants = gen->consts;
    gen->consts = NULL;
    gen->n_consts = gen->cap_consts = 0;
    *out = plan;
    return BYOCL_OK;
}

char *clg_plan_text(const byocl_cl_plan *plan, const char *symbol)
{
    byocl_textbuf t = {0};
    base_textbuf_printf(&t, "# byocl OpenCL launch plan of region @%s (symbol %s)\n",
                        plan->region ? plan->region : "?", symbol ? symbol : "?");
    base_textbuf_printf(&t, "program: %s.cl, build options: %s\n", symbol ? symbol : "?",
                        plan->build_options ? plan->build_options : "");
    base_textbuf_printf(&t, "\nbuffers: %d input%s, %d output%s, %d constant%s, %d scratch",
                        plan->n_inputs, plan->n_inputs == 1 ? "" : "s", plan->n_outputs,
                        plan->n_outputs == 1 ? "" : "s", plan->n_constants,
                        plan->n_constants == 1 ? "" : "s", plan->n_scratch);
    if (plan->n_slices > 0)
        base_textbuf_printf(&t, " (%d slice%s: values written in place into concatenations)",
                            plan->n_slices, plan->n_slices == 1 ? "" : "s");
    base_textbuf_puts(&t, "\n");
    base_textbuf_puts(&t, plan->buffers_text ? plan->buffers_text : "");
    double total = 0;
    for (int l = 0; l < plan->n_launches; l++)
        total += plan->launches[l].flops;
    base_textbuf_printf(&t, "\nlaunches, in order: %d (%.6g GFLOP in all)\n", plan->n_launches,
                        total * 1e-9);
    for (int l = 0; l < plan->n_launches; l++) {
        const byocl_cl_launch *launch = &plan->launches[l];
        base_textbuf_printf(&t, "  %d  %s  global [", l, launch->kernel);
        for (int d = 0; d < launch->work_dim; d++)
            base_textbuf_printf(&t, "%s%zu", d ? ", " : "", launch->global[d]);
        if (launch->local[0] == 0) {
            base_textbuf_puts(&t, "]  local NULL\n");
        } else {
            base_textbuf_puts(&t, "]  local [");
            for (int d = 0; d < launch->work_dim; d++)
                base_textbuf_printf(&t, "%s%zu", d ? ", " : "", launch->local[d]);
            base_textbuf_puts(&t, "]\n");
        }
        base_textbuf_printf(&t, "     computes: %s", launch->label);
        if (launch->flops > 0)
            base_textbuf_printf(&t, " (%.6g GFLOP)", launch->flops * 1e-9);
        base_textbuf_puts(&t, "\n     args:");
        for (int a = 0; a < launch->n_args; a++) {
            const byocl_cl_arg *arg = &launch->args[a];
            if (arg->kind == BYOCL_CL_ARG_BUFFER)
                base_textbuf_printf(&t, " %s%d", kind_names[arg->buffer.kind], arg->buffer.index);
            else if (arg->kind == BYOCL_CL_ARG_INT)
                base_textbuf_printf(&t, " int %d", (int)arg->i);
            else
                base_textbuf_printf(&t, " float %.9g", (double)arg->f);
        }
        base_textbuf_puts(&t, "\n");
    }
    return base_textbuf_take(&t);
}

byocl_status clg_plan_write(const byocl_cl_plan *plan, const char *dir, const char *symbol,
                            byocl_error *err)
{
    if (!plan || !dir || !symbol || !symbol[0] || strchr(symbol, '/'))
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "clg_plan_write: needs a plan, a folder and a symbol without "
                               "'/'");
    char *text = clg_plan_text(plan, symbol);
    if (!text)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory writing the plan of %s",
                               symbol);
    size_t len = strlen(dir) + strlen(symbol) + 16;
    char *path = malloc(len);
    byocl_status st = BYOCL_OK;
    if (!path)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory writing the plan of %s", symbol);
    if (st == BYOCL_OK) {
        snprintf(path, len, "%s/%s.cl", dir, symbol);
        byocl_file_part part = {plan->source, strlen(plan->source)};
        st = base_file_write_atomic(path, &part, 1, err);
    }
    if (st == BYOCL_OK) {
        snprintf(path, len, "%s/%s.launch.txt", dir, symbol);
        byocl_file_part part = {text, strlen(text)};
        st = base_file_write_atomic(path, &part, 1, err);
    }
    free(path);
    free(text);
    return st;
}
