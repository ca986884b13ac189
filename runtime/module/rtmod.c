/* Runtime modules: what a region runs in, a small vtable (byocl_rtmod_i) behind an opaque
 * handle that names it and forwards each call. */
#include <stdlib.h>
#include <string.h>

#include "byocl/runtime.h"

struct byocl_rtmod {
    char *name;
    byocl_rtmod_i iface;
    void *ctx;
};

byocl_status byocl_rtmod_new(const char *name, const byocl_rtmod_i *iface, void *ctx,
                             byocl_rtmod **out, byocl_error *err)
{
    byocl_status st = BYOCL_OK;
    byocl_rtmod *mod = NULL;
    if (out)
        *out = NULL;
    if (!out || !iface || !iface->run)
        st = byocl_error_set(err, BYOCL_ERR_INVALID,
                             "byocl_rtmod_new: a runtime module needs a run function");
    else if (!name || !*name)
        st = byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_rtmod_new: a runtime module needs "
                                                     "a name");
    else if (!(mod = calloc(1, sizeof *mod)) || !(mod->name = strdup(name)))
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    if (st != BYOCL_OK) {
        if (mod)
            free(mod);
        if (iface && iface->destroy)
            iface->destroy(ctx);
        return st;
    }
    mod->iface = *iface;
    mod->ctx = ctx;
    *out = mod;
    return BYOCL_OK;
}

void byocl_rtmod_free(byocl_rtmod *mod)
{
    if (!mod)
        return;
    if (mod->iface.destroy)
        mod->iface.destroy(mod->ctx);
    free(mod->name);
    free(mod);
}

const char *byocl_rtmod_name(const byocl_rtmod *mod)
{
    return mod->name;
}

bool byocl_rtmod_memory(const byocl_rtmod *mod, byocl_device_memory *out)
{
    byocl_device_memory none = {.device = {kDLCPU, 0}};
    if (out)
        *out = none;
    if (!mod || !out || !mod->iface.memory || !mod->iface.memory(mod->ctx, out)) {
        if (out)
            *out = none; /* a module that said no may have written half of it */
        return false;
    }
    return true;
}

byocl_status byocl_rtmod_run(byocl_rtmod *mod, const char *symbol, DLTensor *const *args,
                             int n_in, int n_out, byocl_error *err)
{
    if (!mod || !symbol || n_in < 0 || n_out < 0 || (n_in + n_out > 0 && !args))
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "byocl_rtmod_run: needs a module, a symbol and the arguments");
    return mod->iface.run(mod->ctx, symbol, args, n_in, n_out, err);
}

