/* byocl_executor: one set of buffers for a compiled model, and the run loop.
 *
 * Everything a run needs is laid out when the executor is made: one 64-byte aligned
 * block holds the storage plan's shared buffers, the outputs' buffers and the inputs'
 * buffers; every kernel step has its argument pointers and every region step its
 * DLTensors, pointing straight into that block (or at a constant's data). A run only
 * walks the steps. The compiled model is read-only here, so executors of one model may
 * run in parallel threads.
 *
 * When region modules have device memory of their own, the executor also allocates every
 * device buffer the plan names (one per value and memory: no reuse by liveness there),
 * and a run makes the planned copies just before the step that needs them (build.c,
 * plan_memories); without device memory there are none to make. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "executor_impl.h"
#include "base/thread_pool.h"
#include "module/dlpack.h"
#include "base/limits_impl.h"
#include "ir/ir_impl.h"
#include "ops/node_util.h"
#include "base/tensor_impl.h"

#define BLOCK_ALIGN 64

typedef enum run_state { NEVER_RAN, RAN_OK, RAN_FAILED } run_state;

typedef struct step_time {
    int64_t runs;
    double last_ms, min_ms, total_ms;
} step_time;

struct byocl_executor {
    byocl_compiled *c;
    byocl_thread_pool *pool;
    unsigned char *block;
    size_t block_counted;   /* bytes of block counted against byocl_limits */
    void **value_data;      /* per value */
    void **input_data;      /* per input */
    void **output_data;     /* per output: where its view points */
    bool *input_set;
    void **kernel_args;     /* all kernel steps' argument pointers, back to back */
    DLTensor *dl;           /* all region steps' tensors, back to back */
    DLTensor **dl_args;
    int64_t *dl_shapes;
    size_t *step_first_arg; /* per step: index into kernel_args or dl_args */
    byocl_tensor **views;   /* per output */
    step_time *times;       /* per step */
    void **devbuf_data;     /* per device buffer of the plan: the memory's handle */
    int n_devbufs_made;     /* devbuf_data[0, n) are allocated */
    run_state state;
};

static size_t align_up(size_t n)
{
    return (n + BLOCK_ALIGN - 1) / BLOCK_ALIGN * BLOCK_ALIGN;
}

/* Lays out the block: the pool, output buffers, input buffers. */
static byocl_status place_buffers(byocl_executor *ex, byocl_error *err)
{
    const byocl_compiled *c = ex->c;
    size_t *out_at = malloc((size_t)(c->n_output_buffers + 1) * sizeof *out_at);
    size_t *in_at = malloc((size_t)(c->n_inputs + 1) * sizeof *in_at);
    byocl_status st = BYOCL_OK;
    if (!out_at || !in_at) {
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
        goto done;
    }
    size_t total = align_up(c->pool_bytes), largest = c->pool_bytes; /* the pool first */
    for (int i = 0; i < c->n_output_buffers; i++) {
        out_at[i] = total;
        total += align_up(c->output_buffer_bytes[i]);
        largest = c->output_buffer_bytes[i] > largest ? c->output_buffer_bytes[i] : largest;
    }
    for (int k = 0; k < c->n_inputs; k++) {
        size_t bytes = c->values[c->input_values[k]].nbytes;
        in_at[k] = total;
        total += align_up(bytes);
        largest = bytes > largest ? bytes : largest;
    }
    if ((st = base_limits_reserve(total, largest, "the executor's buffers", err)) != BYOCL_OK)
        goto done;
    ex->block_counted = total;
    ex->block = aligned_alloc(BLOCK_ALIGN, total ? total : BLOCK_ALIGN);
    if (!ex->block) {
        st = byocl_error_set(err, BYOCL_ERR_NOMEM,
                             "out of memory allocating the executor's %zu bytes of buffers",
                             total);
        goto done;
    }
    for (int v = 0; v < c->n_values; v++) {
        const byocl_xvalue *r = &c->values[c->values[v].root];
        switch (r->home) {
        case HOME_INPUT: ex->value_data[v] = ex->block + in_at[r->slot]; break;
        case HOME_CONSTANT: ex->value_data[v] = (void *)r->constant; break;
        case HOME_POOL:
            /* A root no step writes (inside a fused group) has no buffer, nor one that
             * lives in device memory only. */
            ex->value_data[v] = r->producer >= 0 && (r->memory == HOST_MEMORY || r->host_copy)
                                    ? ex->block + r->pool_offset
                                    : NULL;
            break;
        case HOME_OUTPUT: ex->value_data[v] = ex->block + out_at[r->slot]; break;
        }
    }
    for (int k = 0; k < c->n_inputs; k++)
        ex->input_data[k] = ex->block + in_at[k];
    for (int i = 0; i < c->n_outputs; i++)
        ex->output_data[i] = c->outputs[i].copy ? ex->block + out_at[c->outputs[i].buffer]
                                                : ex->value_data[c->outputs[i].value];
done:
    free(out_at);
    free(in_at);
    return st;
}

/* ----------------------------------------------------------- device memory */

/* "%3.1 (Tensor[(2, 3), float32])": value v as errors name it. */
static void value_label(const byocl_compiled *c, int v, char *buf, size_t len)
{
    const byocl_xvalue *x = &c->values[v];
    char node[128], type[256];
    byocl_node_label(c->fn, x->node, node, sizeof node);
    byocl_type_str(x->type, type, sizeof type);
    if (x->field >= 0)
        snprintf(buf, len, "%s.%d (%s)", node, x->field, type);
    else
        snprintf(buf, len, "%s (%s)", node, type);
}

/* The error of a device memory call (`why`, which the memory filled or not) into `err`:
 * "<doing> <value><to>: <why>", after where: the region step `s`. */
static byocl_status memory_error(const byocl_compiled *c, byocl_status st, const byocl_error *why,
                                 int s, const char *doing, int value, const char *to,
                                 byocl_error *err)
{
    char label[512];
    value_label(c, value, label, sizeof label);
    byocl_error_set(err, st == BYOCL_OK ? BYOCL_ERR_RUNTIME : st, "%s %s%s: %s", doing, label, to,
                    why->msg[0] ? why->msg : "the device memory gave no reason");
    ops_node_error_at(err, c->fn, c->steps[s].node);
    return err ? err->status : (st == BYOCL_OK ? BYOCL_ERR_RUNTIME : st);
}

/* Allocates every device buffer of the plan. Each is at least one byte: some devices
 * refuse empty buffers. */
static byocl_status alloc_device_buffers(byocl_executor *ex, byocl_error *err)
{
    const byocl_compiled *c = ex->c;
    ex->devbuf_data = calloc((size_t)c->n_devbufs + 1, sizeof *ex->devbuf_data);
    if (!ex->devbuf_data)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (int d = 0; d < c->n_devbufs; d++) {
        const byocl_xdevbuf *b = &c->devbufs[d];
        const byocl_device_memory *mem = &c->memories[b->memory];
        size_t bytes = c->values[b->value].nbytes;
        byocl_error why;
        why.msg[0] = '\0';
        byocl_status st = mem->iface->alloc(mem->ctx, bytes ? bytes : 1, &ex->devbuf_data[d], &why);
        if (st != BYOCL_OK) {
            char what[96];
            snprintf(what, sizeof what, "allocating %zu bytes of device memory for", bytes);
            return memory_error(c, st, &why, b->step, what, b->value, "", err);
        }
        ex->n_devbufs_made = d + 1;
    }
    return BYOCL_OK;
}

static void free_device_buffers(byocl_executor *ex)
{
    const byocl_compiled *c = ex->c;
    for (int d = ex->n_devbufs_made - 1; d >= 0; d--) {
        const byocl_device_memory *mem = &c->memories[c->devbufs[d].memory];
        mem->iface->free(mem->ctx, ex->devbuf_data[d]);
    }
    ex->n_devbufs_made = 0;
    free(ex->devbuf_data);
    ex->devbuf_data = NULL;
}

/* Makes the planned copies transfers[first, first + n). */
static byocl_status make_transfers(byocl_executor *ex, int first, int n, byocl_error *err)
{
    const byocl_compiled *c = ex->c;
    for (int t = first; t < first + n; t++) {
        const byocl_xtransfer *x = &c->transfers[t];
        const byocl_xdevbuf *b = &c->devbufs[x->devbuf];
        const byocl_device_memory *mem = &c->memories[b->memory];
        size_t bytes = c->values[b->value].nbytes;
        if (bytes == 0)
            continue;
        void *host = ex->value_data[b->value], *device = ex->devbuf_data[x->devbuf];
        byocl_error why;
        why.msg[0] = '\0';
        byocl_status st = x->upload ? mem->iface->upload(mem->ctx, device, host, bytes, &why)
                                    : mem->iface->download(mem->ctx, host, device, bytes, &why);
        if (st == BYOCL_OK)
            continue;
        /* An upload is named after the region that reads the value, a download after the
         * region that wrote it. */
        if (x->upload)
            return memory_error(c, st, &why, x->step >= 0 ? x->step : b->step, "uploading",
                                b->value, " to device memory", err);
        return memory_error(c, st, &why, c->values[b->value].producer, "downloading", b->value,
                            " from device memory", err);
    }
    return BYOCL_OK;
}

/* Kernel argument pointers and region DLTensors for every step. */
static byocl_status place_step_args(byocl_executor *ex, byocl_error *err)
{
    const byocl_compiled *c = ex->c;
    size_t n_kernel_args = 0, n_dl = 0, n_dims = 0;
    for (int s = 0; s < c->n_steps; s++) {
        const byocl_xstep *step = &c->steps[s];
        int n = step->n_in + step->n_out;
        if (step->kind == BYOCL_STEP_KERNEL) {
            n_kernel_args += (size_t)n;
            continue;
        }
        n_dl += (size_t)n;
        for (int i = 0; i < n; i++)
            n_dims += (size_t)c->values[step->args[i]].type->shape.rank;
    }
    ex->kernel_args = calloc(n_kernel_args + 1, sizeof *ex->kernel_args);
    ex->dl = calloc(n_dl + 1, sizeof *ex->dl);
    ex->dl_args = calloc(n_dl + 1, sizeof *ex->dl_args);
    ex->dl_shapes = calloc(n_dims + 1, sizeof *ex->dl_shapes);
    if (!ex->kernel_args || !ex->dl || !ex->dl_args || !ex->dl_shapes)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    size_t k_at = 0, dl_at = 0, dim_at = 0;
    for (int s = 0; s < c->n_steps; s++) {
        const byocl_xstep *step = &c->steps[s];
        int n = step->n_in + step->n_out;
        if (step->kind == BYOCL_STEP_KERNEL) {
            ex->step_first_arg[s] = k_at;
            for (int i = 0; i < n; i++)
                ex->kernel_args[k_at++] = ex->value_data[step->args[i]];
            continue;
        }
        ex->step_first_arg[s] = dl_at;
        for (int i = 0; i < n; i++) {
            const byocl_type *t = c->values[step->args[i]].type;
            DLTensor *d = &ex->dl[dl_at];
            if (step->memory == HOST_MEMORY) {
                d->data = ex->value_data[step->args[i]];
                d->device = (DLDevice){kDLCPU, 0};
            } else { /* a view shares its root's device buffer from its start */
                d->data = ex->devbuf_data[step->devbufs[i]];
                d->device = c->memories[step->memory].device;
            }
            d->ndim = t->shape.rank;
            d->dtype = byocl_dtype_to_dlpack(t->dtype);
            d->shape = ex->dl_shapes + dim_at;
            memcpy(d->shape, t->shape.dims, (size_t)t->shape.rank * sizeof *d->shape);
            dim_at += (size_t)t->shape.rank;
            d->strides = NULL;
            d->byte_offset = 0;
            ex->dl_args[dl_at++] = d;
        }
    }
    return BYOCL_OK;
}

static byocl_status make_views(byocl_executor *ex, byocl_error *err)
{
    const byocl_compiled *c = ex->c;
    for (int i = 0; i < c->n_outputs; i++) {
        const byocl_type *t = c->values[c->outputs[i].value].type;
        ex->views[i] = base_tensor_wrap(t->dtype, &t->shape, ex->output_data[i], err);
        if (!ex->views[i])
            return err ? err->status : BYOCL_ERR_NOMEM;
    }
    return BYOCL_OK;
}

byocl_status byocl_executor_new(byocl_compiled *c, byocl_executor **out, byocl_error *err)
{
    if (!out)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_executor_new: no place for the "
                                                       "result");
    *out = NULL;
    if (!c)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_executor_new: no compiled model");
    byocl_executor *ex = calloc(1, sizeof *ex);
    if (!ex)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    atomic_fetch_add(&c->refs, 1);
    ex->c = c;
    ex->value_data = calloc((size_t)c->n_values + 1, sizeof *ex->value_data);
    ex->input_data = calloc((size_t)c->n_inputs + 1, sizeof *ex->input_data);
    ex->output_data = calloc((size_t)c->n_outputs + 1, sizeof *ex->output_data);
    ex->input_set = calloc((size_t)c->n_inputs + 1, sizeof *ex->input_set);
    ex->step_first_arg = calloc((size_t)c->n_steps + 1, sizeof *ex->step_first_arg);
    ex->views = calloc((size_t)c->n_outputs + 1, sizeof *ex->views);
    ex->times = calloc((size_t)c->n_steps + 1, sizeof *ex->times);
    byocl_status st = BYOCL_OK;
    if (!ex->value_data || !ex->input_data || !ex->output_data || !ex->input_set ||
        !ex->step_first_arg || !ex->views || !ex->times)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    if (st == BYOCL_OK)
        st = place_buffers(ex, err);
    if (st == BYOCL_OK && c->n_memories > 0) {
        st = alloc_device_buffers(ex, err);
        if (st == BYOCL_OK) /* the constants regions read */
            st = make_transfers(ex, 0, c->n_setup_transfers, err);
    }
    if (st == BYOCL_OK)
        st = place_step_args(ex, err);
    if (st == BYOCL_OK)
        st = make_views(ex, err);
    if (st == BYOCL_OK)
        st = base_thread_pool_new(c->threads, &ex->pool, err);
    if (st != BYOCL_OK) {
        byocl_executor_free(ex);
        return st;
    }
    *out = ex;
    return BYOCL_OK;
}

void byocl_executor_free(byocl_executor *ex)
{
    if (!ex)
        return;
    base_thread_pool_free(ex->pool);
    free_device_buffers(ex);
    for (int i = 0; ex->views && i < ex->c->n_outputs; i++)
        base_tensor_wrap_free(ex->views[i]);
    free(ex->views);
    free(ex->times);
    free(ex->step_first_arg);
    free(ex->kernel_args);
    free(ex->dl);
    free(ex->dl_args);
    free(ex->dl_shapes);
    free(ex->input_set);
    free(ex->output_data);
    free(ex->input_data);
    free(ex->value_data);
    free(ex->block);
    base_limits_release(ex->block_counted);
    byocl_compiled_free(ex->c);
    free(ex);
}

/* ------------------------------------------------------------------ inputs */

/* "data, weight" (or "none"): what a wrong name is told. */
static void input_list(const byocl_compiled *c, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int k = 0; k < c->n_inputs && at < len; k++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", k ? ", " : "",
                               byocl_compiled_input_name(c, k));
    if (c->n_inputs == 0)
        snprintf(buf, len, "none");
}

static byocl_status find_input(const byocl_executor *ex, const char *name, int *index,
                               byocl_error *err)
{
    const byocl_compiled *c = ex->c;
    for (int k = 0; name && k < c->n_inputs; k++)
        if (strcmp(byocl_compiled_input_name(c, k), name) == 0) {
            *index = k;
            return BYOCL_OK;
        }
    char list[1024];
    input_list(c, list, sizeof list);
    return byocl_error_set(err, BYOCL_ERR_NOT_FOUND, "@%s has no input '%s' (its inputs: %s)",
                           c->fn->name, name ? name : "(null)", list);
}

byocl_status byocl_executor_set_input(byocl_executor *ex, const char *name,
                                      const byocl_tensor *value, byocl_error *err)
{
    int k;
    byocl_status st = find_input(ex, name, &k, err);
    if (st != BYOCL_OK)
        return st;
    const byocl_type *want = byocl_compiled_input_type(ex->c, k);
    if (!value)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "input '%s': no tensor given", name);
    byocl_type got = byocl_type_tensor(byocl_tensor_dtype(value), byocl_tensor_shape(value)->rank,
                                       byocl_tensor_shape(value)->dims);
    if (!byocl_type_equal(&got, want)) {
        char want_s[256], got_s[256];
        return byocl_error_set(err, BYOCL_ERR_TYPE, "input '%s': expected %s, got %s", name,
                               byocl_type_str(want, want_s, sizeof want_s),
                               byocl_type_str(&got, got_s, sizeof got_s));
    }
    if (byocl_tensor_nbytes(value))
        memcpy(ex->input_data[k], byocl_tensor_cdata(value), byocl_tensor_nbytes(value));
    ex->input_set[k] = true;
    return BYOCL_OK;
}

byocl_status byocl_executor_set_input_dl(byocl_executor *ex, const char *name,
                                         const DLTensor *value, byocl_error *err)
{
    int k;
    byocl_status st = find_input(ex, name, &k, err);
    if (st != BYOCL_OK)
        return st;
    if ((st = dl_check(value, byocl_compiled_input_type(ex->c, k), err)) != BYOCL_OK) {
        byocl_error_prefix(err, "input '%s': ", name);
        return st;
    }
    size_t nbytes = ex->c->values[ex->c->input_values[k]].nbytes;
    if (nbytes)
        memcpy(ex->input_data[k], (const char *)value->data + value->byte_offset, nbytes);
    ex->input_set[k] = true;
    return BYOCL_OK;
}

/* --------------------------------------------------------------------- run */

static byocl_status check_inputs_set(const byocl_executor *ex, byocl_error *err)
{
    const byocl_compiled *c = ex->c;
    char list[1024];
    size_t at = 0;
    int missing = 0;
    list[0] = '\0';
    for (int k = 0; k < c->n_inputs; k++)
        if (!ex->input_set[k] && at < sizeof list) {
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", missing ? ", " : "",
                                   byocl_compiled_input_name(c, k));
            missing++;
        }
    if (missing == 0)
        return BYOCL_OK;
    return byocl_error_set(err, BYOCL_ERR_INVALID, "input%s of @%s not set: %s",
                           missing == 1 ? "" : "s", c->fn->name, list);
}

static byocl_status run_kernel(byocl_executor *ex, const byocl_xstep *step, size_t first,
                               byocl_error *err)
{
    const byocl_compiled *c = ex->c;
    int32_t r = base_thread_pool_run(ex->pool, step->kernel.fn, ex->kernel_args + first,
                                     step->kernel.ctx, step->kernel.n_tasks);
    if (r == 0)
        return BYOCL_OK;
    const char *why = c->backend->error ? c->backend->error(c->backend_state) : NULL;
    if (why && *why)
        byocl_error_set(err, BYOCL_ERR_RUNTIME, "%s", why);
    else
        byocl_error_set(err, BYOCL_ERR_RUNTIME, "kernel %s failed (code %d)", step->name, (int)r);
    if (step->n_nodes == 1)
        ops_node_error_at(err, c->fn, step->node);
    else
        byocl_error_prefix(err, "in @%s, kernel %s: ", c->fn->name, step->name);
    return BYOCL_ERR_RUNTIME;
}

byocl_status byocl_executor_run(byocl_executor *ex, byocl_error *err)
{
    if (!ex)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_executor_run: no executor");
    const byocl_compiled *c = ex->c;
    byocl_status st = check_inputs_set(ex, err);
    if (st != BYOCL_OK)
        return st;
    ex->state = RAN_FAILED; /* until every step succeeded */
    for (int s = 0; s < c->n_steps; s++) {
        const byocl_xstep *step = &c->steps[s];
        size_t first = ex->step_first_arg[s];
        double t0 = base_now_ms();
        /* The copies into the step's memory count as its time. */
        if (step->n_transfers &&
            (st = make_transfers(ex, step->first_transfer, step->n_transfers, err)) != BYOCL_OK)
            return st;
        if (step->kind == BYOCL_STEP_KERNEL) {
            st = run_kernel(ex, step, first, err);
        } else {
            st = byocl_rtmod_run(step->rtmod, step->symbol, ex->dl_args + first, step->n_in,
                                 step->n_out, err);
            if (st != BYOCL_OK)
                ops_node_error_at(err, c->fn, step->node);
        }
        if (st != BYOCL_OK)
            return st;
        double ms = base_now_ms() - t0;
        step_time *t = &ex->times[s];
        t->last_ms = ms;
        t->min_ms = t->runs == 0 || ms < t->min_ms ? ms : t->min_ms;
        t->total_ms += ms;
        t->runs++;
    }
    if (c->first_final_transfer < c->n_transfers &&
        (st = make_transfers(ex, c->first_final_transfer,
                             c->n_transfers - c->first_final_transfer, err)) != BYOCL_OK)
        return st;
    for (int i = 0; i < c->n_outputs; i++)
        if (c->outputs[i].copy && c->values[c->outputs[i].value].nbytes)
            memcpy(ex->output_data[i], ex->value_data[c->outputs[i].value],
                   c->values[c->outputs[i].value].nbytes);
    ex->state = RAN_OK;
    return BYOCL_OK;
}

/* ----------------------------------------------------------------- outputs */

int byocl_executor_num_outputs(const byocl_executor *ex)
{
    return ex->c->n_outputs;
}

static byocl_status check_output(const byocl_executor *ex, int index, byocl_error *err)
{
    const byocl_compiled *c = ex->c;
    if (index < 0 || index >= c->n_outputs)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "output index %d is out of range: @%s has %d output%s", index,
                               c->fn->name, c->n_outputs, c->n_outputs == 1 ? "" : "s");
    if (ex->state == NEVER_RAN)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "no outputs yet: the executor has not run");
    if (ex->state == RAN_FAILED)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "no outputs: the last run failed");
    return BYOCL_OK;
}

byocl_status byocl_executor_output(const byocl_executor *ex, int index,
                                   const byocl_tensor **out, byocl_error *err)
{
    *out = NULL;
    byocl_status st = check_output(ex, index, err);
    if (st == BYOCL_OK)
        *out = ex->views[index];
    return st;
}

byocl_status byocl_executor_copy_output(const byocl_executor *ex, int index, byocl_tensor **out,
                                        byocl_error *err)
{
    *out = NULL;
    byocl_status st = check_output(ex, index, err);
    if (st == BYOCL_OK && !(*out = byocl_tensor_clone(ex->views[index], err)))
        st = err ? err->status : BYOCL_ERR_NOMEM;
    return st;
}

void *exec_value_data(const byocl_executor *ex, int value)
{
    return value >= 0 && value < ex->c->n_values ? ex->value_data[value] : NULL;
}

/* ----------------------------------------------------------------- profile */

int byocl_executor_num_steps(const byocl_executor *ex)
{
    return ex->c->n_steps;
}

byocl_status byocl_executor_step(const byocl_executor *ex, int index, byocl_step_info *out,
                                 byocl_error *err)
{
    const byocl_compiled *c = ex->c;
    if (index < 0 || index >= c->n_steps)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "step index %d is out of range: @%s has %d step%s", index,
                               c->fn->name, c->n_steps, c->n_steps == 1 ? "" : "s");
    const byocl_xstep *s = &c->steps[index];
    const step_time *t = &ex->times[index];
    *out = (byocl_step_info){
        .kind = s->kind,
        .name = s->name,
        .runner = s->kind == BYOCL_STEP_KERNEL ? c->backend->name : byocl_rtmod_name(s->rtmod),
        .node = s->node,
        .n_nodes = s->n_nodes,
        .flops = s->flops,
        .runs = t->runs,
        .last_ms = t->last_ms,
        .min_ms = t->min_ms,
        .total_ms = t->total_ms,
    };
    return BYOCL_OK;
}

void byocl_executor_reset_profile(byocl_executor *ex)
{
    memset(ex->times, 0, (size_t)ex->c->n_steps * sizeof *ex->times);
}
