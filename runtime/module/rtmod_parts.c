/* Runtime modules that report the timed parts of their region calls.
 *
 * byocl_rtmod_new_timed wraps the module's own vtable: the wrapper runs the module and,
 * while it lives, is listed here with the parts vtable, so that profiles find a module's
 * parts from the byocl_rtmod the compiled model holds. The wrapper forwards the module's
 * device memory (byocl_rtmod_i.memory) too. (New members of byocl_rtmod_i come last:
 * modules written with positional initializers stay valid.) */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dlpack.h"

typedef struct timed_module {
    struct timed_module *next;
    byocl_rtmod *mod; /* the wrapper's module (set once made) */
    byocl_rtmod_i iface;
    byocl_rtmod_parts_i parts;
    void *ctx;
} timed_module;

static pthread_mutex_t timed_lock = PTHREAD_MUTEX_INITIALIZER;
static timed_module *timed; /* live timed modules */

static byocl_status timed_run(void *ctx, const char *symbol, DLTensor *const *args, int n_in,
                              int n_out, byocl_error *err)
{
    timed_module *t = ctx;
    return t->iface.run(t->ctx, symbol, args, n_in, n_out, err);
}

static bool timed_memory(void *ctx, byocl_device_memory *out)
{
    timed_module *t = ctx;
    return t->iface.memory && t->iface.memory(t->ctx, out);
}

static void timed_destroy(void *ctx)
{
    timed_module *t = ctx;
    pthread_mutex_lock(&timed_lock);
    for (timed_module **at = &timed; *at; at = &(*at)->next)
        if (*at == t) {
            *at = t->next;
            break;
        }
    pthread_mutex_unlock(&timed_lock);
    if (t->iface.destroy)
        t->iface.destroy(t->ctx);
    free(t);
}

byocl_status byocl_rtmod_new_timed(const char *name, const byocl_rtmod_i *iface,
                                   const byocl_rtmod_parts_i *parts, void *ctx,
                                   byocl_rtmod **out, byocl_error *err)
{
    if (!iface || !iface->run || !parts || !parts->count || !parts->get) {
        if (out)
            *out = NULL;
        if (iface && iface->destroy)
            iface->destroy(ctx);
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "byocl_rtmod_new_timed: a timed runtime module needs a run "
                               "function and the parts' count and get");
    }
    timed_module *t = calloc(1, sizeof *t);
    if (!t) {
        if (out)
            *out = NULL;
        if (iface->destroy)
            iface->destroy(ctx);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    }
    t->iface = *iface;
    t->parts = *parts;
    t->ctx = ctx;
    static const byocl_rtmod_i wrapper = {
        .run = timed_run, .destroy = timed_destroy, .memory = timed_memory};
    byocl_status st = byocl_rtmod_new(name, &wrapper, t, out, err); /* frees t on failure */
    if (st != BYOCL_OK)
        return st;
    t->mod = *out;
    pthread_mutex_lock(&timed_lock);
    t->next = timed;
    timed = t;
    pthread_mutex_unlock(&timed_lock);
    return BYOCL_OK;
}

/* The timed module of `mod`, or NULL. The caller holds timed_lock. */
static timed_module *find_locked(const byocl_rtmod *mod)
{
    timed_module *t = timed;
    while (t && t->mod != mod)
        t = t->next;
    return t;
}

int byocl_rtmod_num_parts(const byocl_rtmod *mod, const char *symbol)
{
    pthread_mutex_lock(&timed_lock);
    timed_module *t = mod && symbol ? find_locked(mod) : NULL;
    int n = t ? t->parts.count(t->ctx, symbol) : 0;
    pthread_mutex_unlock(&timed_lock);
    return n;
}

bool byocl_rtmod_part(const byocl_rtmod *mod, const char *symbol, int index,
                      byocl_region_part *out)
{
    memset(out, 0, sizeof *out); /* what a module built before a field was added leaves */
    pthread_mutex_lock(&timed_lock);
    timed_module *t = mod && symbol ? find_locked(mod) : NULL;
    bool ok = t && index >= 0 && t->parts.get(t->ctx, symbol, index, out);
    pthread_mutex_unlock(&timed_lock);
    return ok;
}

void byocl_rtmod_reset_parts(byocl_rtmod *mod)
{
    pthread_mutex_lock(&timed_lock);
    timed_module *t = mod ? find_locked(mod) : NULL;
    if (t && t->parts.reset)
        t->parts.reset(t->ctx);
    pthread_mutex_unlock(&timed_lock);
}
