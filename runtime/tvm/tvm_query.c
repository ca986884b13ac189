/* What byocl's Python package (python/byocl_tvm) asks the C library while it partitions a
 * TVM model: whether a target takes an op call, written as Relay text with its types, and
 * the loading of target plugins into the process. Plain C types in and out (ctypes calls
 * them): a status code and a message buffer, no byocl struct. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/passes.h"
#include "byocl/plugin.h"
#include "byocl/target.h"
#include "byocl/text.h"
#include "byocl/tvm.h"
#include "tvm_registry.h"

static void copy_message(char *out, size_t len, const char *msg)
{
    if (out && len)
        snprintf(out, len, "%s", msg);
}

/* Whether `target` takes every op call of `fn` (host and ref take all). */
static int target_takes(const byocl_function *fn, const char *target, char *why, size_t len)
{
    if (strcmp(target, "host") == 0 || strcmp(target, "ref") == 0)
        return 1;
    const byocl_target_i *t = byocl_target_find(target);
    if (!t) {
        char names[512] = "";
        size_t at = 0;
        for (int i = 0; i < byocl_target_count() && at < sizeof names; i++)
            at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", i ? ", " : "",
                                   byocl_target_at(i)->name);
        if (why && len)
            snprintf(why, len, "unknown target \"%s\" (targets: host, ref%s%s)", target,
                     *names ? ", " : "", names);
        return -1;
    }
    for (int id = 0; id < byocl_function_num_nodes(fn); id++) {
        if (byocl_node_kind_of(fn, id) != BYOCL_NODE_CALL || !byocl_node_op(fn, id))
            continue;
        if (!t->supports(t->ctx, fn, id, why, len))
            return 0;
    }
    return 1;
}

int byocl_tvm_supports(const char *relay_text, const char *target, char *why, size_t why_len)
{
    copy_message(why, why_len, "");
    if (!relay_text || !target) {
        copy_message(why, why_len, "byocl_tvm_supports: no text or no target");
        return -1;
    }
    byocl_error err = {0};
    byocl_module *m = NULL;
    int rc = -1;
    tvm_registry_lock();
    if (byocl_target_register_builtins(&err) == BYOCL_OK &&
        byocl_text_parse(relay_text, strlen(relay_text), "the call", NULL, &m, &err) ==
            BYOCL_OK &&
        byocl_infer_types(m, &err) == BYOCL_OK) {
        const byocl_function *main_fn = byocl_module_find(m, "main");
        if (main_fn)
            rc = target_takes(main_fn, target, why, why_len);
        else
            copy_message(why, why_len, "the text has no @main");
    } else {
        /* The call does not parse or type in byocl: not taken, and why. */
        copy_message(why, why_len, err.msg);
        rc = 0;
    }
    tvm_registry_unlock();
    byocl_module_free(m);
    return rc;
}

byocl_status tvm_registry_load_plugins(const char *target, const char *plugins,
                                       byocl_error *err)
{
    char *copy = plugins && *plugins ? strdup(plugins) : NULL;
    if (plugins && *plugins && !copy)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    tvm_registry_lock();
    byocl_status st = byocl_target_register_builtins(err);
    char *save = NULL;
    for (char *path = copy ? strtok_r(copy, ":", &save) : NULL; path && st == BYOCL_OK;
         path = strtok_r(NULL, ":", &save))
        if (!target || !byocl_target_find(target))
            st = byocl_plugin_load(path, err);
    tvm_registry_unlock();
    free(copy);
    return st;
}

int byocl_tvm_check_region(const char *symbol, const char *relay_text, const void *weights_npz,
                           size_t weights_npz_len, const char *target, const char *target_options,
                           const char *plugins, int threads, char *message, size_t message_len)
{
    byocl_error err = {0};
    byocl_status st = tvm_registry_load_plugins(target, plugins, &err);
    if (st != BYOCL_OK) {
        if (message && message_len)
            snprintf(message, message_len, "byocl region %s: %s", symbol ? symbol : "(no symbol)",
                     err.msg);
        return -1;
    }
    byocl_tvm_region_spec spec = {symbol,  relay_text,     weights_npz, weights_npz_len,
                                  target,  target_options, threads};
    byocl_tvm_region *slot = NULL;
    st = byocl_tvm_region_prepare(&slot, &spec, &err);
    byocl_tvm_region_free(&slot);
    copy_message(message, message_len, st == BYOCL_OK ? "" : err.msg);
    return st == BYOCL_OK ? 0 : -1;
}

int byocl_tvm_load_plugin(const char *path, char *message, size_t message_len)
{
    byocl_error err = {0};
    tvm_registry_lock();
    byocl_status st = byocl_target_register_builtins(&err);
    if (st == BYOCL_OK)
        st = byocl_plugin_load(path, &err);
    tvm_registry_unlock();
    copy_message(message, message_len, st == BYOCL_OK ? "" : err.msg);
    return st == BYOCL_OK ? 0 : -1;
}
