/* The OpenCL runtime module of one region: it builds the region's program (through the
 * program cache), makes one kernel per launch of the plan with every argument that does
 * not change between calls already set (scalars, scratch buffers, constants), allocates
 * the scratch buffers and uploads the constants once. On every call it binds the region's
 * inputs and outputs, enqueues the launches and waits:
 *   zero-copy devices (CPU, unified memory): the executor's tensors are wrapped with
 *     CL_MEM_USE_HOST_PTR, and each output is mapped and unmapped once the kernels are
 *     done (no copy there; it is what makes the host's view current). On a CPU device the
 *     wrappers stay for the next call while the tensors stay where they are (an executor's
 *     buffers do): making them costs more than the kernel of a small region. Other
 *     devices may copy host memory when a wrapper is made, so they get fresh ones per call;
 *   other devices: inputs are written to device buffers made once per module, outputs
 *     read back.
 * A call whose previous one was short waits for its commands by polling (wait_for_queue).
 * With a profiling queue every command has an event, and the module reports its
 * transfers and each launch as timed parts (byocl_rtmod_new_timed). Calls on one device
 * are serialized by the device's lock (the kernels' arguments are per module). */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "module/dlpack.h"
#include "opencl_impl.h"

typedef struct part_time {
    int64_t runs;
    double last_ms, min_ms, total_ms;
} part_time;

typedef struct ocl_launch {
    cl_kernel kernel;
    int n_io;    /* arguments bound on each call: the region's inputs and outputs */
    int *io_arg; /* their argument indexes */
    int *io_buf; /* their tensors: input k is k, output k is n_in + k */
} ocl_launch;

typedef struct ocl_region {
    ocl_device *dev;
    byocl_cl_plan *plan;
    char *symbol;
    int n_in, n_out;
    byocl_type *types; /* inputs then outputs */
    size_t *bytes;     /* their sizes */
    ocl_program_parts programs; /* one, or the parts of a large region */
    ocl_launch *launches;
    cl_mem *scratch, *constants;
    cl_mem *slices;    /* sub-buffers of scratch buffers (byocl_cl_slice) */
    cl_mem *io;        /* copy mode: made once; zero-copy: for the tensors of a call */
    void **io_host;    /* zero-copy: the memory each io buffer wraps */
    bool keep_io;      /* zero-copy on a CPU device: io buffers stay for the next call */
    cl_event *events;  /* one call's: transfers first, then the launches */
    double last_call_us; /* how long the previous call took (0: none yet) */
    pthread_mutex_t times_lock;
    part_time *times;  /* [0] transfers, [1 + l] launch l, [1 + n_launches] the gaps */
} ocl_region;

static void release_mems(cl_mem *mems, int n)
{
    for (int i = 0; mems && i < n; i++)
        if (mems[i]) {
            clReleaseMemObject(mems[i]);
            mems[i] = NULL;
        }
}

static void region_destroy(void *ctx)
{
    ocl_region *r = ctx;
    if (!r)
        return;
    for (int l = 0; r->launches && l < r->plan->n_launches; l++) {
        if (r->launches[l].kernel)
            clReleaseKernel(r->launches[l].kernel);
        free(r->launches[l].io_arg);
        free(r->launches[l].io_buf);
    }
    free(r->launches);
    if (r->plan) {
        release_mems(r->slices, r->plan->n_slices);
        release_mems(r->scratch, r->plan->n_scratch);
        release_mems(r->constants, r->plan->n_constants);
    }
    release_mems(r->io, r->n_in + r->n_out);
    free(r->scratch);
    free(r->slices);
    free(r->constants);
    free(r->io);
    free(r->io_host);
    free(r->events);
    free(r->times);
    ocl_program_parts_release(&r->programs);
    clg_plan_free(r->plan);
    ocl_device_release(r->dev);
    free(r->types);
    free(r->bytes);
    free(r->symbol);
    pthread_mutex_destroy(&r->times_lock);
    free(r);
}

/* ------------------------------------------------------------------- setup */

static void flatten(const byocl_type *t, byocl_type *leaves, int *at)
{
    if (t->kind == BYOCL_TYPE_TUPLE) {
        for (int k = 0; k < t->n_fields; k++)
            flatten(t->fields[k], leaves, at);
        return;
    }
    leaves[(*at)++] = *t;
}

static byocl_status region_types(ocl_region *r, const byocl_function *region, byocl_error *err)
{
    int body = byocl_function_body(region);
    const byocl_type *ret = body >= 0 ? byocl_node_type(region, body) : NULL;
    if (!ret || ret->kind == BYOCL_TYPE_NONE)
        return byocl_error_set(err, BYOCL_ERR_TYPE, "region %s is not type-checked", r->symbol);
    r->n_in = byocl_function_num_params(region);
    r->n_out = byocl_type_num_tensors(ret);
    if (r->plan->n_inputs != r->n_in || r->plan->n_outputs != r->n_out)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "region %s has %d inputs and %d outputs, its OpenCL plan %d and %d",
                               r->symbol, r->n_in, r->n_out, r->plan->n_inputs,
                               r->plan->n_outputs);
    size_t n = (size_t)(r->n_in + r->n_out) + 1;
    r->types = calloc(n, sizeof *r->types);
    r->bytes = calloc(n, sizeof *r->bytes);
    if (!r->types || !r->bytes)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (int k = 0; k < r->n_in; k++) {
        const byocl_type *t = byocl_node_type(region, byocl_function_param(region, k));
        if (t->kind != BYOCL_TYPE_TENSOR)
            return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                                   "region %s: parameter %d is not a tensor", r->symbol, k);
        r->types[k] = *t;
    }
    int at = r->n_in;
    flatten(ret, r->types, &at);
    for (int k = 0; k < r->n_in + r->n_out; k++)
        r->bytes[k] =
            (size_t)byocl_shape_numel(&r->types[k].shape) * byocl_dtype_size(r->types[k].dtype);
    return BYOCL_OK;
}

/* A buffer of `bytes` (at least 1: OpenCL has no empty buffers); host_ptr NULL for none. */
static cl_mem make_mem(ocl_region *r, cl_mem_flags flags, size_t bytes, void *host_ptr,
                       cl_int *e)
{
    if (bytes == 0) {
        flags &= ~(cl_mem_flags)(CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR);
        host_ptr = NULL;
        bytes = 1;
    }
    return clCreateBuffer(r->dev->context, flags, bytes, host_ptr, e);
}

static byocl_status alloc_error(ocl_region *r, const char *what, int index, size_t bytes,
                                cl_int e, byocl_error *err)
{
    char code[64];
    const ocl_device *d = r->dev;
    if (e == CL_SUCCESS) /* refused before asking the driver */
        return byocl_error_set(err, BYOCL_ERR_NOMEM,
                               "region %s: %s buffer %d needs %zu bytes, more than OpenCL device "
                               "%d (%s) allocates at once (%llu bytes)",
                               r->symbol, what, index, bytes, d->info.index, d->info.name,
                               (unsigned long long)d->max_alloc);
    return byocl_error_set(err, BYOCL_ERR_NOMEM,
                           "region %s: cannot allocate %s buffer %d (%zu bytes) on OpenCL device "
                           "%d (%s): %s",
                           r->symbol, what, index, bytes, d->info.index, d->info.name,
                           ocl_error_name(e, code, sizeof code));
}

/* Slice i of the plan as a sub-buffer of its scratch buffer, checked against the plan
 * and the device (the code generator aligned it for this device's
 * CL_DEVICE_MEM_BASE_ADDR_ALIGN; a plan made for another device may not be). */
static byocl_status make_slice(ocl_region *r, int i, byocl_error *err)
{
    const byocl_cl_slice *s = &r->plan->slices[i];
    const ocl_device *d = r->dev;
    if (s->scratch < 0 || s->scratch >= r->plan->n_scratch || s->bytes == 0 ||
        s->offset + s->bytes > r->plan->scratch_bytes[s->scratch])
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "region %s: slice %d (%zu bytes at %zu) does not lie in scratch "
                               "buffer %d",
                               r->symbol, i, s->bytes, s->offset, s->scratch);
    if (d->info.mem_base_align > 0 && s->offset % (size_t)d->info.mem_base_align != 0)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "region %s: slice %d starts at byte %zu of scratch buffer %d, not "
                               "a multiple of OpenCL device %d (%s)'s base address alignment "
                               "(%d bytes); the plan was generated for another device",
                               r->symbol, i, s->offset, s->scratch, d->info.index, d->info.name,
                               d->info.mem_base_align);
    cl_buffer_region region = {.origin = s->offset, .size = s->bytes};
    cl_int e = CL_SUCCESS;
    r->slices[i] = clCreateSubBuffer(r->scratch[s->scratch], CL_MEM_READ_WRITE,
                                     CL_BUFFER_CREATE_TYPE_REGION, &region, &e);
    if (e != CL_SUCCESS) {
        char code[64];
        r->slices[i] = NULL;
        return byocl_error_set(err, e == CL_OUT_OF_HOST_MEMORY ? BYOCL_ERR_NOMEM : BYOCL_ERR_RUNTIME,
                               "region %s: cannot make slice %d (%zu bytes at %zu of scratch "
                               "buffer %d) on OpenCL device %d (%s): %s",
                               r->symbol, i, s->bytes, s->offset, s->scratch, d->info.index,
                               d->info.name, ocl_error_name(e, code, sizeof code));
    }
    return BYOCL_OK;
}

static byocl_status make_buffers(ocl_region *r, byocl_error *err)
{
    const byocl_cl_plan *p = r->plan;
    r->scratch = calloc((size_t)p->n_scratch + 1, sizeof *r->scratch);
    r->slices = calloc((size_t)p->n_slices + 1, sizeof *r->slices);
    r->constants = calloc((size_t)p->n_constants + 1, sizeof *r->constants);
    r->io = calloc((size_t)(r->n_in + r->n_out) + 1, sizeof *r->io);
    r->io_host = calloc((size_t)(r->n_in + r->n_out) + 1, sizeof *r->io_host);
    if (!r->scratch || !r->slices || !r->constants || !r->io || !r->io_host)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    cl_int e = CL_SUCCESS;
    for (int i = 0; i < p->n_scratch; i++) {
        if (p->scratch_bytes[i] > r->dev->max_alloc)
            return alloc_error(r, "scratch", i, p->scratch_bytes[i], CL_SUCCESS, err);
        if (!(r->scratch[i] = make_mem(r, CL_MEM_READ_WRITE, p->scratch_bytes[i], NULL, &e)))
            return alloc_error(r, "scratch", i, p->scratch_bytes[i], e, err);
    }
    for (int i = 0; i < p->n_slices; i++) {
        byocl_status st = make_slice(r, i, err);
        if (st != BYOCL_OK)
            return st;
    }
    for (int i = 0; i < p->n_constants; i++) {
        size_t bytes = byocl_tensor_nbytes(p->constants[i]);
        /* The plan keeps the constant alive as long as the module: zero-copy may wrap it. */
        cl_mem_flags flags =
            CL_MEM_READ_ONLY | (r->dev->zero_copy ? CL_MEM_USE_HOST_PTR : CL_MEM_COPY_HOST_PTR);
        if (bytes > r->dev->max_alloc)
            return alloc_error(r, "constant", i, bytes, CL_SUCCESS, err);
        if (!(r->constants[i] = make_mem(r, flags, bytes,
                                         (void *)byocl_tensor_cdata(p->constants[i]), &e)))
            return alloc_error(r, "constant", i, bytes, e, err);
    }
    for (int k = 0; !r->dev->zero_copy && k < r->n_in + r->n_out; k++) {
        const char *what = k < r->n_in ? "input" : "output";
        int index = k < r->n_in ? k : k - r->n_in;
        if (r->bytes[k] > r->dev->max_alloc)
            return alloc_error(r, what, index, r->bytes[k], CL_SUCCESS, err);
        if (!(r->io[k] = make_mem(r, CL_MEM_READ_WRITE, r->bytes[k], NULL, &e)))
            return alloc_error(r, what, index, r->bytes[k], e, err);
    }
    return BYOCL_OK;
}

/* The buffer a fixed argument names (scratch, slice or constant), checking its index. */
static cl_mem *fixed_buffer(ocl_region *r, byocl_cl_buffer_ref ref)
{
    const byocl_cl_plan *p = r->plan;
    if (ref.kind == BYOCL_CL_BUF_SCRATCH && ref.index >= 0 && ref.index < p->n_scratch)
        return &r->scratch[ref.index];
    if (ref.kind == BYOCL_CL_BUF_CONSTANT && ref.index >= 0 && ref.index < p->n_constants)
        return &r->constants[ref.index];
    if (ref.kind == BYOCL_CL_BUF_SLICE && ref.index >= 0 && ref.index < p->n_slices)
        return &r->slices[ref.index];
    return NULL;
}

static byocl_status launch_error(ocl_region *r, int l, const char *what, cl_int e,
                                 byocl_error *err)
{
    char code[64];
    const byocl_cl_launch *launch = &r->plan->launches[l];
    return byocl_error_set(err, e == CL_OUT_OF_HOST_MEMORY ? BYOCL_ERR_NOMEM : BYOCL_ERR_RUNTIME,
                           "region %s: kernel %s (%s): %s failed: %s", r->symbol, launch->kernel,
                           launch->label, what, ocl_error_name(e, code, sizeof code));
}

/* Kernel l with its fixed arguments set; the input and output arguments listed. */
static byocl_status make_launch(ocl_region *r, int l, byocl_error *err)
{
    const byocl_cl_launch *launch = &r->plan->launches[l];
    ocl_launch *k = &r->launches[l];
    cl_int e;
    if (launch->work_dim < 1 || launch->work_dim > 3)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "region %s: kernel %s has work_dim %d",
                               r->symbol, launch->kernel, launch->work_dim);
    k->kernel = clCreateKernel(ocl_program_parts_find(&r->programs, r->plan, launch->kernel),
                               launch->kernel, &e);
    if (e != CL_SUCCESS)
        return launch_error(r, l, "clCreateKernel", e, err);
    k->io_arg = malloc(((size_t)launch->n_args + 1) * sizeof *k->io_arg);
    k->io_buf = malloc(((size_t)launch->n_args + 1) * sizeof *k->io_buf);
    if (!k->io_arg || !k->io_buf)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (int a = 0; a < launch->n_args; a++) {
        const byocl_cl_arg *arg = &launch->args[a];
        byocl_cl_buffer_ref ref = arg->buffer;
        if (arg->kind == BYOCL_CL_ARG_INT) {
            e = clSetKernelArg(k->kernel, (cl_uint)a, sizeof(cl_int), &arg->i);
        } else if (arg->kind == BYOCL_CL_ARG_FLOAT) {
            e = clSetKernelArg(k->kernel, (cl_uint)a, sizeof(cl_float), &arg->f);
        } else if (ref.kind == BYOCL_CL_BUF_INPUT || ref.kind == BYOCL_CL_BUF_OUTPUT) {
            int limit = ref.kind == BYOCL_CL_BUF_INPUT ? r->n_in : r->n_out;
            if (ref.index < 0 || ref.index >= limit)
                return byocl_error_set(err, BYOCL_ERR_INVALID,
                                       "region %s: kernel %s, argument %d names %s %d of %d",
                                       r->symbol, launch->kernel, a,
                                       ref.kind == BYOCL_CL_BUF_INPUT ? "input" : "output",
                                       ref.index, limit);
            k->io_arg[k->n_io] = a;
            k->io_buf[k->n_io++] = ref.kind == BYOCL_CL_BUF_INPUT ? ref.index : r->n_in + ref.index;
            continue;
        } else {
            cl_mem *m = fixed_buffer(r, ref);
            if (!m)
                return byocl_error_set(err, BYOCL_ERR_INVALID,
                                       "region %s: kernel %s, argument %d names buffer %d of "
                                       "kind %d, which the plan does not have",
                                       r->symbol, launch->kernel, a, ref.index, (int)ref.kind);
            e = clSetKernelArg(k->kernel, (cl_uint)a, sizeof(cl_mem), m);
        }
        if (e != CL_SUCCESS)
            return launch_error(r, l, "clSetKernelArg", e, err);
    }
    return BYOCL_OK;
}

/* --------------------------------------------------------------------- run */

/* An event's start and end on the device's clock (ns); false when it has none. */
static bool event_span(cl_event ev, cl_ulong *t0, cl_ulong *t1)
{
    *t0 = *t1 = 0;
    return ev &&
           clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof *t0, t0, NULL) ==
               CL_SUCCESS &&
           clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof *t1, t1, NULL) ==
               CL_SUCCESS &&
           *t1 >= *t0;
}

static double event_ms(cl_event ev)
{
    cl_ulong t0, t1;
    return event_span(ev, &t0, &t1) ? (double)(t1 - t0) * 1e-6 : 0;
}

/* The time between consecutive launches: from one kernel's end to the next one's start,
 * which the driver spends handing the next command to its threads (in an in-order queue
 * the next kernel is only submitted when the previous one has ended). */
static double launch_gaps_ms(const cl_event *launch_ev, int n_launches)
{
    double gaps = 0;
    cl_ulong prev_end = 0;
    bool have_prev = false;
    for (int l = 0; l < n_launches; l++) {
        cl_ulong t0, t1;
        if (!event_span(launch_ev[l], &t0, &t1)) {
            have_prev = false;
            continue;
        }
        if (have_prev && t0 > prev_end)
            gaps += (double)(t0 - prev_end) * 1e-6;
        prev_end = t1;
        have_prev = true;
    }
    return gaps;
}

static void record(part_time *t, double ms)
{
    t->last_ms = ms;
    t->min_ms = t->runs == 0 || ms < t->min_ms ? ms : t->min_ms;
    t->total_ms += ms;
    t->runs++;
}

/* Adds one call's event times to the parts. */
static void collect_times(ocl_region *r)
{
    double transfer_ms = 0;
    for (int i = 0; i < 2 * (r->n_in + r->n_out); i++)
        transfer_ms += event_ms(r->events[i]);
    const cl_event *launch_ev = r->events + 2 * (r->n_in + r->n_out);
    int n = r->plan->n_launches;
    double gaps_ms = launch_gaps_ms(launch_ev, n);
    pthread_mutex_lock(&r->times_lock);
    record(&r->times[0], transfer_ms);
    for (int l = 0; l < n; l++)
        record(&r->times[1 + l], event_ms(launch_ev[l]));
    record(&r->times[1 + n], gaps_ms);
    pthread_mutex_unlock(&r->times_lock);
}

/* Room for one call's events: two transfers per tensor (a map and an unmap), then one
 * per launch. */
static int n_events(const ocl_region *r)
{
    return 2 * (r->n_in + r->n_out) + r->plan->n_launches;
}

static void release_events(cl_event *events, int n)
{
    for (int i = 0; i < n; i++)
        if (events[i]) {
            clReleaseEvent(events[i]);
            events[i] = NULL;
        }
}

static byocl_status check_args(ocl_region *r, const char *symbol, DLTensor *const *args,
                               int n_in, int n_out, byocl_error *err)
{
    if (strcmp(symbol, r->symbol + 1) != 0)
        return byocl_error_set(err, BYOCL_ERR_NOT_FOUND,
                               "this OpenCL runtime module runs %s, not %s", r->symbol + 1,
                               symbol);
    if (n_in != r->n_in || n_out != r->n_out)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "region %s takes %d input%s and %d output%s, got %d and %d",
                               r->symbol, r->n_in, r->n_in == 1 ? "" : "s", r->n_out,
                               r->n_out == 1 ? "" : "s", n_in, n_out);
    for (int k = 0; k < n_in + n_out; k++) {
        byocl_status st = dl_check(args[k], &r->types[k], err);
        if (st != BYOCL_OK) {
            byocl_error_prefix(err, "region %s, %s %d: ", r->symbol,
                               k < n_in ? "input" : "output", k < n_in ? k : k - n_in);
            return st;
        }
    }
    return BYOCL_OK;
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

/* Calls whose previous one took less than this poll for the end of their commands. */
#define POLL_BELOW_US 200.0

/* Waits until the queue is done: clFinish, which sleeps until the driver wakes it. A short
 * call (the previous one under POLL_BELOW_US) first looks at a marker's status instead,
 * giving up its core between looks, until the marker completes or twice the previous
 * call's time has passed: waking the sleeping caller took PoCL about as long as a small
 * region's kernels (one 1x1 conv on 4x4: 60-70 us a call against 30 polling, two threads
 * on an Intel Xeon). Long calls sleep: polling through a 6 ms region took its cores from
 * the driver's threads (mobilenet_v2 offloaded 4% slower). */
static cl_int wait_for_queue(ocl_region *r, cl_command_queue q, double start_us)
{
    if (r->last_call_us > 0 && r->last_call_us < POLL_BELOW_US) {
        cl_event marker;
        if (clEnqueueMarkerWithWaitList(q, 0, NULL, &marker) == CL_SUCCESS) {
            double deadline = start_us + 2 * r->last_call_us;
            cl_int status = CL_QUEUED;
            if (clFlush(q) == CL_SUCCESS)
                while (clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status,
                                      &status, NULL) == CL_SUCCESS &&
                       status > CL_COMPLETE && now_us() < deadline)
                    sched_yield();
            clReleaseEvent(marker);
        }
    }
    return clFinish(q);
}

/* Enqueues one call: inputs in, the launches, outputs out; then waits. With profiling,
 * r->events gets the transfers' events (at most two per tensor) then the launches'. */
static byocl_status enqueue_call(ocl_region *r, DLTensor *const *args, byocl_error *err)
{
    double start_us = now_us();
    ocl_device *dev = r->dev;
    cl_command_queue q = dev->queue;
    int n_io = r->n_in + r->n_out;
    cl_event *ev = r->events;
    bool timed = dev->profiling;
    int nt = 0;
    cl_int e = CL_SUCCESS;
    char code[64];
    byocl_status st = BYOCL_OK;
    for (int k = 0; k < n_io && st == BYOCL_OK; k++) {
        void *data = (char *)args[k]->data + args[k]->byte_offset;
        if (dev->zero_copy && !(r->io[k] && r->io_host[k] == data)) {
            cl_mem_flags flags = (k < r->n_in ? CL_MEM_READ_ONLY : CL_MEM_READ_WRITE) |
                                 CL_MEM_USE_HOST_PTR;
            release_mems(&r->io[k], 1);
            r->io_host[k] = data;
            if (!(r->io[k] = make_mem(r, flags, r->bytes[k], data, &e)))
                st = alloc_error(r, k < r->n_in ? "input" : "output",
                                 k < r->n_in ? k : k - r->n_in, r->bytes[k], e, err);
        } else if (k < r->n_in && r->bytes[k] > 0) {
            e = clEnqueueWriteBuffer(q, r->io[k], CL_FALSE, 0, r->bytes[k], data, 0, NULL,
                                     timed ? &ev[nt++] : NULL);
            if (e != CL_SUCCESS)
                st = byocl_error_set(err, BYOCL_ERR_RUNTIME,
                                     "region %s: writing input %d to the device failed: %s",
                                     r->symbol, k, ocl_error_name(e, code, sizeof code));
        }
    }
    cl_event *launch_ev = ev + 2 * n_io;
    for (int l = 0; l < r->plan->n_launches && st == BYOCL_OK; l++) {
        const ocl_launch *k = &r->launches[l];
        const byocl_cl_launch *launch = &r->plan->launches[l];
        for (int a = 0; a < k->n_io && e == CL_SUCCESS; a++)
            e = clSetKernelArg(k->kernel, (cl_uint)k->io_arg[a], sizeof(cl_mem),
                               &r->io[k->io_buf[a]]);
        if (e != CL_SUCCESS) {
            st = launch_error(r, l, "clSetKernelArg", e, err);
            break;
        }
        e = clEnqueueNDRangeKernel(q, k->kernel, (cl_uint)launch->work_dim, NULL,
                                   launch->global, launch->local[0] ? launch->local : NULL, 0,
                                   NULL, timed ? &launch_ev[l] : NULL);
        if (e != CL_SUCCESS)
            st = launch_error(r, l, "clEnqueueNDRangeKernel", e, err);
    }
    for (int k = r->n_in; k < n_io && st == BYOCL_OK; k++) {
        if (r->bytes[k] == 0)
            continue;
        void *data = (char *)args[k]->data + args[k]->byte_offset;
        if (dev->zero_copy) {
            /* Mapping makes the host's view current (no copy on zero-copy devices). */
            void *p = clEnqueueMapBuffer(q, r->io[k], CL_FALSE, CL_MAP_READ, 0, r->bytes[k], 0,
                                         NULL, timed ? &ev[nt++] : NULL, &e);
            if (e == CL_SUCCESS)
                e = clEnqueueUnmapMemObject(q, r->io[k], p, 0, NULL, timed ? &ev[nt++] : NULL);
        } else {
            e = clEnqueueReadBuffer(q, r->io[k], CL_FALSE, 0, r->bytes[k], data, 0, NULL,
                                    timed ? &ev[nt++] : NULL);
        }
        if (e != CL_SUCCESS)
            st = byocl_error_set(err, BYOCL_ERR_RUNTIME,
                                 "region %s: reading output %d back failed: %s", r->symbol,
                                 k - r->n_in, ocl_error_name(e, code, sizeof code));
    }
    /* Wait for everything enqueued, also after a failure: the tensors must not be in use
     * when this returns. */
    e = wait_for_queue(r, q, start_us);
    r->last_call_us = st == BYOCL_OK ? now_us() - start_us : 0;
    if (e != CL_SUCCESS && st == BYOCL_OK)
        st = byocl_error_set(err, BYOCL_ERR_RUNTIME, "region %s: running the kernels failed: %s",
                             r->symbol, ocl_error_name(e, code, sizeof code));
    if (dev->zero_copy && (!r->keep_io || st != BYOCL_OK))
        release_mems(r->io, n_io);
    return st;
}

static byocl_status region_run(void *ctx, const char *symbol, DLTensor *const *args, int n_in,
                               int n_out, byocl_error *err)
{
    ocl_region *r = ctx;
    byocl_status st = check_args(r, symbol, args, n_in, n_out, err);
    if (st != BYOCL_OK)
        return st;
    pthread_mutex_lock(&r->dev->lock);
    st = enqueue_call(r, args, err);
    if (r->dev->profiling) {
        if (st == BYOCL_OK)
            collect_times(r);
        release_events(r->events, n_events(r));
    }
    pthread_mutex_unlock(&r->dev->lock);
    return st;
}

/* ------------------------------------------------------------------- parts */

static int parts_count(void *ctx, const char *symbol)
{
    ocl_region *r = ctx;
    return r->dev->profiling && strcmp(symbol, r->symbol + 1) == 0 ? 2 + r->plan->n_launches : 0;
}

static bool parts_get(void *ctx, const char *symbol, int index, byocl_region_part *out)
{
    ocl_region *r = ctx;
    if (index < 0 || index >= parts_count(ctx, symbol))
        return false;
    pthread_mutex_lock(&r->times_lock);
    part_time t = r->times[index];
    pthread_mutex_unlock(&r->times_lock);
    bool gaps = index == 1 + r->plan->n_launches;
    const byocl_cl_launch *launch = index > 0 && !gaps ? &r->plan->launches[index - 1] : NULL;
    *out = (byocl_region_part){
        .name = launch ? launch->label : gaps ? "gaps between kernels" : "transfers",
        .kernel = launch ? launch->kernel : NULL,
        .transfer = index == 0,
        .between_kernels = gaps,
        .flops = launch ? launch->flops : 0,
        .runs = t.runs,
        .last_ms = t.last_ms,
        .min_ms = t.min_ms,
        .total_ms = t.total_ms,
    };
    return true;
}

static void parts_reset(void *ctx)
{
    ocl_region *r = ctx;
    pthread_mutex_lock(&r->times_lock);
    memset(r->times, 0, (2 + (size_t)r->plan->n_launches) * sizeof *r->times);
    pthread_mutex_unlock(&r->times_lock);
}

/* ------------------------------------------------------------------ create */

byocl_status ocl_rtmod_new(ocl_device *dev, const byocl_function *region, byocl_cl_plan *plan,
                           const ocl_rtmod_options *opt, byocl_rtmod **out, byocl_error *err)
{
    *out = NULL;
    ocl_region *r = calloc(1, sizeof *r);
    if (!r) {
        clg_plan_free(plan);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    }
    pthread_mutex_init(&r->times_lock, NULL);
    r->plan = plan;
    r->dev = ocl_device_retain(dev);
    const char *sym = byocl_attrs_get_str(byocl_function_attrs(region), "global_symbol",
                                          byocl_function_name(region));
    size_t len = strlen(sym) + 2;
    byocl_status st = BYOCL_OK;
    if (!(r->symbol = malloc(len))) {
        region_destroy(r);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    }
    snprintf(r->symbol, len, "@%s", sym); /* "@name" in messages; run compares name */
    st = region_types(r, region, err);
    if (st == BYOCL_OK) {
        r->launches = calloc((size_t)plan->n_launches + 1, sizeof *r->launches);
        r->events = calloc((size_t)n_events(r) + 1, sizeof *r->events);
        r->times = calloc((size_t)plan->n_launches + 2, sizeof *r->times);
        if (!r->launches || !r->events || !r->times)
            st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    }
    if (st == BYOCL_OK)
        st = make_buffers(r, err);
    r->keep_io = r->dev->zero_copy && strcmp(r->dev->info.type, "CPU") == 0;
    if (st == BYOCL_OK)
        st = ocl_program_parts_build(r->dev, opt ? opt->cache_dir : NULL, r->symbol, plan,
                                     &r->programs, err);
    for (int l = 0; l < plan->n_launches && st == BYOCL_OK; l++)
        st = make_launch(r, l, err);
    if (st != BYOCL_OK) {
        region_destroy(r);
        return st;
    }
    static const byocl_rtmod_i iface = {.run = region_run, .destroy = region_destroy};
    static const byocl_rtmod_parts_i parts = {parts_count, parts_get, parts_reset};
    return byocl_rtmod_new_timed("opencl", &iface, &parts, r, out, err);
}
