/* The host region module: a region compiled by a host backend as a small model of its
 * own (byocl_build of the region alone) and run by its own executor. byocl_build uses it
 * for `fallback` "host": the regions a target cannot compile run on the host path. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "executor_impl.h"
#include "module/dlpack.h"

typedef struct host_region {
    char *symbol;
    byocl_compiled *compiled;
    byocl_executor *ex;
    pthread_mutex_t lock; /* one executor: one call at a time */
} host_region;

static void host_region_destroy(void *ctx)
{
    host_region *r = ctx;
    if (!r)
        return;
    byocl_executor_free(r->ex);
    byocl_compiled_free(r->compiled);
    free(r->symbol);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

static byocl_status host_region_run(void *ctx, const char *symbol, DLTensor *const *args,
                                    int n_in, int n_out, byocl_error *err)
{
    host_region *r = ctx;
    if (strcmp(symbol, r->symbol) != 0)
        return byocl_error_set(err, BYOCL_ERR_NOT_FOUND,
                               "this host region module runs %s, not %s", r->symbol, symbol);
    const byocl_compiled *c = r->compiled;
    int want_in = byocl_compiled_num_inputs(c), want_out = byocl_compiled_num_outputs(c);
    if (n_in != want_in || n_out != want_out)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "region %s takes %d input%s and %d output%s, got %d and %d",
                               r->symbol, want_in, want_in == 1 ? "" : "s", want_out,
                               want_out == 1 ? "" : "s", n_in, n_out);
    for (int k = 0; k < n_out; k++) {
        byocl_status st = dl_check(args[n_in + k], byocl_compiled_output_type(c, k), err);
        if (st != BYOCL_OK) {
            byocl_error_prefix(err, "region %s, output %d: ", r->symbol, k);
            return st;
        }
    }
    pthread_mutex_lock(&r->lock);
    byocl_status st = BYOCL_OK;
    for (int k = 0; k < n_in && st == BYOCL_OK; k++) /* checks dtype and shape */
        st = byocl_executor_set_input_dl(r->ex, byocl_compiled_input_name(c, k), args[k], err);
    if (st == BYOCL_OK)
        st = byocl_executor_run(r->ex, err);
    for (int k = 0; k < n_out && st == BYOCL_OK; k++) {
        const byocl_tensor *view;
        st = byocl_executor_output(r->ex, k, &view, err);
        size_t nbytes = st == BYOCL_OK ? byocl_tensor_nbytes(view) : 0;
        if (nbytes)
            memcpy((char *)args[n_in + k]->data + args[n_in + k]->byte_offset,
                   byocl_tensor_cdata(view), nbytes);
    }
    pthread_mutex_unlock(&r->lock);
    if (st != BYOCL_OK)
        byocl_error_prefix(err, "region %s on the host: ", r->symbol);
    return st;
}

byocl_status byocl_rtmod_host_new(const byocl_function *region, const char *target, int threads,
                                  byocl_rtmod **out, byocl_error *err)
{
    if (out)
        *out = NULL;
    if (!region || !out)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_rtmod_host_new: no region given");
    host_region *r = calloc(1, sizeof *r);
    if (!r)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&r->lock, NULL);
    byocl_status st = BYOCL_OK;
    r->symbol = strdup(byocl_attrs_get_str(byocl_function_attrs(region), "global_symbol",
                                           byocl_function_name(region)));
    byocl_module *m = byocl_module_new();
    if (!r->symbol || !m)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    /* The region alone, as @main of a module of its own. */
    if (st == BYOCL_OK && !byocl_module_copy_function(m, region, "main", err))
        st = err ? err->status : BYOCL_ERR_NOMEM;
    byocl_build_options opt = byocl_build_options_default();
    opt.target = target;
    opt.threads = threads;
    if (st == BYOCL_OK)
        st = byocl_build(m, &opt, &r->compiled, err);
    byocl_module_free(m);
    if (st == BYOCL_OK)
        st = byocl_executor_new(r->compiled, &r->ex, err);
    if (st != BYOCL_OK) {
        byocl_error_prefix(err, "region @%s on the host: ", byocl_function_name(region));
        host_region_destroy(r);
        return st;
    }
    static const byocl_rtmod_i iface = {.run = host_region_run, .destroy = host_region_destroy};
    return byocl_rtmod_new(byocl_compiled_target(r->compiled), &iface, r, out, err);
}
