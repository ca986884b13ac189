/* Recording the region calls of a run (include/byocl/capture.h): the capture's regions,
 * the runtime module that wraps each region's own to copy its tensors (and, for bisect,
 * run it against the host), and what was recorded. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "capture_impl.h"
#include "driver/region_targets.h"

static bool is_region(const byocl_function *fn)
{
    return byocl_attrs_get_str(byocl_function_attrs(fn), "Compiler", NULL) != NULL;
}

static const char *symbol_of(const byocl_function *fn)
{
    return byocl_attrs_get_str(byocl_function_attrs(fn), "global_symbol",
                               byocl_function_name(fn));
}

/* "a, b, c": the symbols of the module's regions. */
static void region_list(const byocl_module *m, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int f = 0; f < byocl_module_num_functions(m) && at < len; f++) {
        const byocl_function *fn = byocl_module_function_at(m, f);
        if (is_region(fn))
            at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? ", " : "", symbol_of(fn));
    }
}

static void free_tensors(byocl_tensor **ts, int n)
{
    for (int i = 0; ts && i < n; i++)
        byocl_tensor_unref(ts[i]);
    free(ts);
}

static void region_free(cap_region *r)
{
    free(r->symbol);
    free(r->compiler);
    free(r->in_types);
    free(r->out_types);
    free(r->in_origin);
    free(r->out_origin);
    free_tensors(r->inputs, r->n_in);
    free_tensors(r->outputs, r->n_out);
    free_tensors(r->got, r->n_out);
    free(r->diffs);
    free(r->times);
}

void byocl_capture_free(byocl_capture *cap)
{
    if (!cap)
        return;
    for (int k = 0; k < cap->n_regions; k++)
        region_free(&cap->regions[k]);
    free(cap->regions);
    byocl_module_free(cap->module);
    free(cap->model);
    free(cap->check);
    pthread_mutex_destroy(&cap->lock);
    free(cap);
}

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

/* The flattened tensor types of `type` into `out` (room for byocl_type_num_tensors). */
static void flatten(const byocl_type *type, const byocl_type **out, int *at)
{
    if (type->kind == BYOCL_TYPE_TUPLE) {
        for (int i = 0; i < type->n_fields; i++)
            flatten(type->fields[i], out, at);
    } else {
        out[(*at)++] = type;
    }
}

/* Fills region r from its function `fn` of the capture's module. */
static byocl_status region_init(const capture_tracer *t, const byocl_function *main_fn,
                                const byocl_function *fn, cap_region *r, byocl_error *err)
{
    r->order = -1;
    r->symbol = strdup(symbol_of(fn));
    r->compiler = strdup(byocl_attrs_get_str(byocl_function_attrs(fn), "Compiler", ""));
    r->n_in = byocl_function_num_params(fn);
    const byocl_type *ret = byocl_node_type(fn, byocl_function_body(fn));
    r->n_out = byocl_type_num_tensors(ret);
    r->in_types = calloc((size_t)r->n_in + 1, sizeof *r->in_types);
    r->out_types = calloc((size_t)r->n_out + 1, sizeof *r->out_types);
    r->in_origin = calloc((size_t)r->n_in + 1, sizeof *r->in_origin);
    r->out_origin = calloc((size_t)r->n_out + 1, sizeof *r->out_origin);
    if (!r->symbol || !r->compiler || !r->in_types || !r->out_types || !r->in_origin || !r->out_origin)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (int k = 0; k < r->n_in; k++) {
        r->in_types[k] = byocl_node_type(fn, byocl_function_param(fn, k));
        if (r->in_types[k]->kind != BYOCL_TYPE_TENSOR)
            return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                                   "region %s: parameter %d is a tuple; only tensor parameters "
                                   "can be captured",
                                   r->symbol, k);
        snprintf(r->in_origin[k].node, sizeof r->in_origin[k].node, "?");
        snprintf(r->in_origin[k].op, sizeof r->in_origin[k].op, "?");
        capture_trace(t, fn, byocl_function_param(fn, k), &r->in_origin[k]);
    }
    int at = 0;
    flatten(ret, r->out_types, &at);
    for (int i = 0; i < r->n_out; i++) {
        snprintf(r->out_origin[i].node, sizeof r->out_origin[i].node, "?");
        snprintf(r->out_origin[i].op, sizeof r->out_origin[i].op, "?");
        capture_trace_output(t, fn, i, &r->out_origin[i]);
    }
    int call = capture_call_of(main_fn, byocl_function_name(fn));
    if (call >= 0)
        byocl_node_label(main_fn, call, r->call_node, sizeof r->call_node);
    else
        snprintf(r->call_node, sizeof r->call_node, "?");
    return BYOCL_OK;
}

byocl_status byocl_capture_new(const byocl_module *original, byocl_module *partitioned,
                               const byocl_capture_options *opt, byocl_capture **out,
                               byocl_error *err)
{
    *out = NULL;
    const byocl_function *orig_main = byocl_module_find(original, "main");
    const byocl_function *main_fn = byocl_module_find(partitioned, "main");
    if (!orig_main || !main_fn)
        return byocl_error_set(err, BYOCL_ERR_NOT_FOUND, "the model has no @main to capture");
    if (opt->check && strcmp(opt->check, "host") != 0 && strcmp(opt->check, "ref") != 0)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "unknown host target '%s' to check regions against (known: "
                               "host, ref)",
                               opt->check);
    capture_tracer t;
    int nf = byocl_module_num_functions(partitioned);
    byocl_status st = capture_tracer_init(&t, original, partitioned, err);
    char list[1024];
    region_list(partitioned, list, sizeof list);
    if (st == BYOCL_OK && !*list)
        st = byocl_error_set(err, BYOCL_ERR_NOT_FOUND,
                             "no region to capture: @main calls no function with a Compiler "
                             "attribute");
    bool found = !opt->region;
    for (int f = 0; st == BYOCL_OK && !found && f < nf; f++) {
        const byocl_function *fn = byocl_module_function_at(partitioned, f);
        found = is_region(fn) && strcmp(symbol_of(fn), opt->region) == 0;
    }
    if (st == BYOCL_OK && !found)
        st = byocl_error_set(err, BYOCL_ERR_NOT_FOUND, "no region '%s' to capture (regions: %s)",
                             opt->region, list);
    byocl_capture *cap = st == BYOCL_OK ? calloc(1, sizeof *cap) : NULL;
    if (st == BYOCL_OK && !cap)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    if (cap) {
        pthread_mutex_init(&cap->lock, NULL);
        cap->rtol = opt->rtol;
        cap->atol = opt->atol;
        cap->model = dup_or_empty(opt->model);
        cap->check = opt->check ? strdup(opt->check) : NULL;
        cap->regions = calloc((size_t)nf + 1, sizeof *cap->regions);
        if (!cap->model || (opt->check && !cap->check) || !cap->regions)
            st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    }
    for (int f = 0; st == BYOCL_OK && f < nf; f++) {
        const byocl_function *fn = byocl_module_function_at(partitioned, f);
        if (!is_region(fn) || (opt->region && strcmp(symbol_of(fn), opt->region) != 0))
            continue;
        st = region_init(&t, main_fn, fn, &cap->regions[cap->n_regions++], err);
    }
    capture_tracer_free(&t);
    if (st == BYOCL_OK && !(cap->module = byocl_module_clone(partitioned, err)))
        st = err->status;
    if (st != BYOCL_OK) {
        byocl_capture_free(cap);
        return st;
    }
    /* The types point into the caller's module until now; the copy has the same layout. */
    for (int k = 0; k < cap->n_regions; k++) {
        cap_region *r = &cap->regions[k];
        const byocl_function *fn = NULL;
        for (int f = 0; f < nf && !fn; f++) {
            const byocl_function *g = byocl_module_function_at(cap->module, f);
            if (is_region(g) && strcmp(symbol_of(g), r->symbol) == 0)
                fn = g;
        }
        for (int i = 0; i < r->n_in; i++)
            r->in_types[i] = byocl_node_type(fn, byocl_function_param(fn, i));
        int at = 0;
        flatten(byocl_node_type(fn, byocl_function_body(fn)), r->out_types, &at);
    }
    *out = cap;
    return BYOCL_OK;
}

/* ------------------------------------------------------- the wrapping module */

/* The wrapper has the device memory of the module it wraps (byocl_rtmod_i.memory), so the
 * executor hands it the same tensors; what it records it downloads to the host first. */
typedef struct cap_module {
    byocl_capture *cap;
    cap_region *region;
    byocl_rtmod *target; /* the region's own runtime module */
    byocl_rtmod *host;   /* check: the host's module, whose outputs go on */
    bool on_device;      /* the target's tensors are in its device memory */
    byocl_device_memory memory;
} cap_module;

static void cap_module_destroy(void *ctx)
{
    cap_module *m = ctx;
    byocl_rtmod_free(m->target);
    byocl_rtmod_free(m->host);
    free(m);
}

static bool cap_module_memory(void *ctx, byocl_device_memory *out)
{
    cap_module *m = ctx;
    if (m->on_device)
        *out = m->memory;
    return m->on_device;
}

/* A DLTensor over host tensor `t`. */
static DLTensor host_view(byocl_tensor *t)
{
    return (DLTensor){.data = byocl_tensor_data(t),
                      .device = {kDLCPU, 0},
                      .ndim = byocl_tensor_shape(t)->rank,
                      .dtype = byocl_dtype_to_dlpack(byocl_tensor_dtype(t)),
                      .shape = (int64_t *)byocl_tensor_shape(t)->dims};
}

/* Host copies of n DLTensors of the module's memory (downloaded from device memory), in
 * *out. */
static byocl_status host_copies(const cap_module *m, DLTensor *const *args, int n,
                                byocl_tensor ***out, byocl_error *err)
{
    byocl_tensor **ts = calloc((size_t)n + 1, sizeof *ts);
    *out = NULL;
    if (!ts)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory capturing a region");
    byocl_status st = BYOCL_OK;
    for (int i = 0; i < n && st == BYOCL_OK; i++) {
        byocl_dtype dtype;
        if (!byocl_dtype_from_dlpack(args[i]->dtype, &dtype)) {
            st = byocl_error_set(err, BYOCL_ERR_UNSUPPORTED, "a region tensor of an unknown dtype");
            break;
        }
        byocl_shape shape = byocl_shape_make(args[i]->ndim, args[i]->shape);
        if (!m->on_device) {
            if (!(ts[i] = byocl_tensor_from_data(dtype, &shape, args[i]->data, err)))
                st = err ? err->status : BYOCL_ERR_NOMEM;
            continue;
        }
        if (!(ts[i] = byocl_tensor_new(dtype, &shape, err)))
            st = err ? err->status : BYOCL_ERR_NOMEM;
        else if (byocl_tensor_nbytes(ts[i]) &&
                 (st = m->memory.iface->download(m->memory.ctx, byocl_tensor_data(ts[i]),
                                                 args[i]->data, byocl_tensor_nbytes(ts[i]),
                                                 err)) != BYOCL_OK)
            byocl_error_prefix(err, "capture of %s: downloading tensor %d: ", m->region->symbol, i);
    }
    if (st != BYOCL_OK) {
        free_tensors(ts, n);
        return st;
    }
    *out = ts;
    return BYOCL_OK;
}

/* Fresh host tensors of the region's output types. */
static byocl_tensor **new_outputs(const cap_region *r, byocl_error *err)
{
    byocl_tensor **outs = calloc((size_t)r->n_out + 1, sizeof *outs);
    if (!outs) {
        byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (int i = 0; i < r->n_out; i++)
        if (!(outs[i] = byocl_tensor_new(r->out_types[i]->dtype, &r->out_types[i]->shape, err))) {
            free_tensors(outs, i);
            return NULL;
        }
    return outs;
}

/* check: runs the target on the inputs into fresh outputs (device buffers of its own
 * when it has device memory), *got receives them on the host. */
static byocl_status run_target_aside(cap_module *m, const char *symbol, DLTensor *const *args,
                                     int n_in, int n_out, byocl_tensor ***got, byocl_error *err)
{
    byocl_tensor **outs = new_outputs(m->region, err);
    DLTensor *views = calloc((size_t)n_out + 1, sizeof *views);
    DLTensor **all = calloc((size_t)(n_in + n_out) + 1, sizeof *all);
    void **device = calloc((size_t)n_out + 1, sizeof *device);
    byocl_status st = BYOCL_OK;
    if (!outs)
        st = err ? err->status : BYOCL_ERR_NOMEM;
    else if (!views || !all || !device)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n_in && st == BYOCL_OK; i++)
        all[i] = args[i];
    int n_device = 0;
    for (int i = 0; i < n_out && st == BYOCL_OK; i++) {
        views[i] = host_view(outs[i]);
        if (m->on_device) {
            size_t bytes = byocl_tensor_nbytes(outs[i]);
            st = m->memory.iface->alloc(m->memory.ctx, bytes ? bytes : 1, &device[i], err);
            if (st != BYOCL_OK)
                break;
            n_device++;
            views[i].data = device[i];
            views[i].device = m->memory.device;
        }
        all[n_in + i] = &views[i];
    }
    if (st == BYOCL_OK)
        st = byocl_rtmod_run(m->target, symbol, all, n_in, n_out, err);
    for (int i = 0; i < n_device; i++) {
        size_t bytes = byocl_tensor_nbytes(outs[i]);
        if (st == BYOCL_OK && bytes)
            st = m->memory.iface->download(m->memory.ctx, byocl_tensor_data(outs[i]), device[i],
                                           bytes, err);
        m->memory.iface->free(m->memory.ctx, device[i]);
    }
    free(device);
    free(views);
    free(all);
    if (st != BYOCL_OK) {
        free_tensors(outs, outs ? n_out : 0);
        return st;
    }
    *got = outs;
    return BYOCL_OK;
}

/* check: runs the host's module, whose outputs go on to the rest of the model: into the
 * executor's tensors, or through the host and then up into the target's device memory. */
static byocl_status run_host(cap_module *m, const char *symbol, DLTensor *const *args, int n_in,
                             int n_out, byocl_error *err)
{
    if (!m->on_device)
        return byocl_rtmod_run(m->host, symbol, args, n_in, n_out, err);
    byocl_tensor **ins = NULL, **outs = NULL;
    DLTensor *views = calloc((size_t)(n_in + n_out) + 1, sizeof *views);
    DLTensor **all = calloc((size_t)(n_in + n_out) + 1, sizeof *all);
    byocl_status st = views && all ? host_copies(m, args, n_in, &ins, err)
                                   : byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    if (st == BYOCL_OK && !(outs = new_outputs(m->region, err)))
        st = err ? err->status : BYOCL_ERR_NOMEM;
    for (int i = 0; i < n_in + n_out && st == BYOCL_OK; i++) {
        views[i] = host_view(i < n_in ? ins[i] : outs[i - n_in]);
        all[i] = &views[i];
    }
    if (st == BYOCL_OK)
        st = byocl_rtmod_run(m->host, symbol, all, n_in, n_out, err);
    for (int i = 0; i < n_out && st == BYOCL_OK; i++)
        if (byocl_tensor_nbytes(outs[i]))
            st = m->memory.iface->upload(m->memory.ctx, args[n_in + i]->data,
                                         byocl_tensor_data(outs[i]),
                                         byocl_tensor_nbytes(outs[i]), err);
    free_tensors(ins, ins ? n_in : 0);
    free_tensors(outs, outs ? n_out : 0);
    free(views);
    free(all);
    return st;
}

/* Keeps this call's tensors (host copies, taken over) and time as the region's last
 * call. */
static byocl_status record(cap_module *m, byocl_tensor **inputs, byocl_tensor **outputs,
                           byocl_tensor **got, double ms, byocl_error *err)
{
    cap_region *r = m->region;
    byocl_capture *cap = m->cap;
    byocl_capture_diff *diffs = got ? calloc((size_t)r->n_out + 1, sizeof *diffs) : NULL;
    if (got && !diffs) {
        free_tensors(inputs, r->n_in);
        free_tensors(outputs, r->n_out);
        free_tensors(got, r->n_out);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    }
    bool ok = true;
    for (int i = 0; got && i < r->n_out; i++) {
        byocl_capture_compare(got[i], outputs[i], cap->rtol, cap->atol, &diffs[i]);
        ok = ok && diffs[i].ok;
    }
    pthread_mutex_lock(&cap->lock);
    byocl_status st = BYOCL_OK;
    if (r->calls == r->cap_times) {
        int n = r->cap_times ? 2 * r->cap_times : 8;
        double *times = realloc(r->times, (size_t)n * sizeof *times);
        if (times) {
            r->times = times;
            r->cap_times = n;
        } else {
            st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
        }
    }
    if (st == BYOCL_OK) {
        r->times[r->calls++] = ms;
        if (r->order < 0)
            r->order = cap->n_called++;
        snprintf(r->runner, sizeof r->runner, "%s", byocl_rtmod_name(m->target));
        byocl_tensor **old_in = r->inputs, **old_out = r->outputs, **old_got = r->got;
        byocl_capture_diff *old_diffs = r->diffs;
        r->inputs = inputs;
        r->outputs = outputs;
        r->got = got;
        r->diffs = diffs;
        r->ok = ok;
        inputs = old_in;
        outputs = old_out;
        got = old_got;
        diffs = old_diffs;
    }
    pthread_mutex_unlock(&cap->lock);
    free_tensors(inputs, r->n_in);
    free_tensors(outputs, r->n_out);
    free_tensors(got, r->n_out);
    free(diffs);
    return st;
}

/* A failed call: the region is not captured at all (no folder for a failed run). */
static void forget(cap_module *m)
{
    cap_region *r = m->region;
    pthread_mutex_lock(&m->cap->lock);
    r->order = -1;
    r->calls = 0;
    free_tensors(r->inputs, r->n_in);
    free_tensors(r->outputs, r->n_out);
    free_tensors(r->got, r->n_out);
    free(r->diffs);
    r->inputs = r->outputs = r->got = NULL;
    r->diffs = NULL;
    pthread_mutex_unlock(&m->cap->lock);
}

static byocl_status cap_module_run(void *ctx, const char *symbol, DLTensor *const *args,
                                   int n_in, int n_out, byocl_error *err)
{
    cap_module *m = ctx;
    if (n_in != m->region->n_in || n_out != m->region->n_out)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "capture of %s: called with %d inputs and %d outputs, expected "
                               "%d and %d",
                               m->region->symbol, n_in, n_out, m->region->n_in,
                               m->region->n_out);
    byocl_tensor **got = NULL, **inputs = NULL, **outputs = NULL;
    double t0 = base_now_ms(), ms;
    byocl_status st;
    if (m->host) {
        st = run_target_aside(m, symbol, args, n_in, n_out, &got, err);
        ms = base_now_ms() - t0;
        if (st == BYOCL_OK)
            st = run_host(m, symbol, args, n_in, n_out, err);
    } else {
        st = byocl_rtmod_run(m->target, symbol, args, n_in, n_out, err);
        ms = base_now_ms() - t0;
    }
    if (st == BYOCL_OK)
        st = host_copies(m, args, n_in, &inputs, err);
    if (st == BYOCL_OK)
        st = host_copies(m, args + n_in, n_out, &outputs, err);
    if (st == BYOCL_OK) {
        st = record(m, inputs, outputs, got, ms, err); /* takes the tensors */
    } else {
        free_tensors(inputs, inputs ? n_in : 0);
        free_tensors(got, got ? n_out : 0);
    }
    if (st != BYOCL_OK)
        forget(m);
    return st;
}

static cap_region *find_region(byocl_capture *cap, const byocl_function *fn)
{
    for (int k = 0; k < cap->n_regions; k++)
        if (strcmp(cap->regions[k].symbol, symbol_of(fn)) == 0)
            return &cap->regions[k];
    return NULL;
}

/* The build's hook: the region's own module (from the build's own hook, its target, or
 * its fallback), wrapped. */
static byocl_status capture_compile(void *user, const byocl_function *region, byocl_rtmod **out,
                                    byocl_error *err)
{
    byocl_capture *cap = user;
    const byocl_build_options *base = &cap->base;
    *out = NULL;
    byocl_rtmod *target = NULL;
    byocl_status st = base->region_compile
                          ? base->region_compile(base->region_user, region, &target, err)
                          : BYOCL_OK;
    if (st == BYOCL_OK && !target)
        st = driver_region_rtmod(region, base, base->threads, &target, err);
    cap_region *r = find_region(cap, region);
    if (st != BYOCL_OK || !r) { /* not captured: the module as it is */
        *out = target;
        return st;
    }
    cap_module *m = calloc(1, sizeof *m);
    if (!m) {
        byocl_rtmod_free(target);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    }
    m->cap = cap;
    m->region = r;
    m->target = target;
    m->on_device = byocl_rtmod_memory(target, &m->memory);
    if (cap->check && strcmp(cap->check, "ref") == 0)
        st = byocl_rtmod_ref_new(region, &m->host, err);
    else if (cap->check)
        st = byocl_rtmod_host_new(region, cap->check, base->threads, &m->host, err);
    if (st != BYOCL_OK) {
        cap_module_destroy(m);
        return st;
    }
    static const byocl_rtmod_i iface = {
        .run = cap_module_run, .destroy = cap_module_destroy, .memory = cap_module_memory};
    return byocl_rtmod_new(byocl_rtmod_name(target), &iface, m, out, err);
}

void byocl_capture_install(byocl_capture *cap, byocl_build_options *opt)
{
    cap->base = *opt;
    opt->region_compile = capture_compile;
    opt->region_user = cap;
}

/* ------------------------------------------------------------ the results */

int byocl_capture_num_regions(const byocl_capture *cap)
{
    int n = 0;
    for (int i = 0; i < cap->n_regions; i++)
        n += cap->regions[i].calls > 0;
    return n;
}

static int compare_doubles(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

/* The region recorded k-th, or NULL. */
cap_region *capture_recorded(const byocl_capture *cap, int k)
{
    /* Ranks of first calls have gaps where a region was forgotten (its call failed). */
    for (int rank = 0, seen = 0; rank < cap->n_called; rank++)
        for (int i = 0; i < cap->n_regions; i++)
            if (cap->regions[i].order == rank && cap->regions[i].calls > 0 && seen++ == k)
                return &cap->regions[i];
    return NULL;
}

void capture_time_stats(const double *times, int n, double *last, double *min, double *median)
{
    *last = times[n - 1];
    *min = times[0];
    for (int i = 1; i < n; i++)
        *min = times[i] < *min ? times[i] : *min;
    *median = *last; /* without memory to sort, the last time stands for the median */
    double *sorted = malloc((size_t)n * sizeof *sorted);
    if (sorted) {
        memcpy(sorted, times, (size_t)n * sizeof *sorted);
        qsort(sorted, (size_t)n, sizeof *sorted, compare_doubles);
        *median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        free(sorted);
    }
}

byocl_capture_region byocl_capture_region_at(const byocl_capture *cap, int k)
{
    byocl_capture_region out = {0};
    cap_region *r = capture_recorded(cap, k);
    if (!r)
        return out;
    capture_time_stats(r->times, r->calls, &out.last_ms, &out.min_ms, &out.median_ms);
    out.symbol = r->symbol;
    out.runner = r->runner;
    out.call_node = r->call_node;
    out.calls = r->calls;
    out.n_outputs = r->n_out;
    out.diffs = r->diffs;
    out.ok = r->ok;
    return out;
}
