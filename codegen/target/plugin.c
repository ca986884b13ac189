/* Target plugins: shared libraries that register targets when loaded (byocl/plugin.h).
 * The version symbol is read before any of the plugin's code runs, so a plugin built for
 * another target API is refused with a message instead of being called with the wrong
 * structs. */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "byocl/plugin.h"

static void **handles; /* open plugins, in load order */
static int n_handles, cap_handles;

/* The address of `name` in the library, or NULL. */
static void *find_symbol(void *handle, const char *name)
{
    dlerror();
    return dlsym(handle, name);
}

byocl_status byocl_plugin_load(const char *path, byocl_error *err)
{
    if (!path || !*path)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_plugin_load: no path given");
    struct stat sb;
    if (strchr(path, '/') && stat(path, &sb) != 0)
        return byocl_error_set(err, BYOCL_ERR_IO, "cannot load target plugin %s: %s", path,
                               strerror(errno));
    if (n_handles == cap_handles) {
        int cap = cap_handles ? 2 * cap_handles : 4;
        void **grown = realloc(handles, (size_t)cap * sizeof *grown);
        if (!grown)
            return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory loading a plugin");
        handles = grown;
        cap_handles = cap;
    }
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        /* dlerror() often repeats the path ("PATH: invalid ELF header"): said once. */
        size_t path_len = strlen(path);
        if (why && strncmp(why, path, path_len) == 0 && strncmp(why + path_len, ": ", 2) == 0)
            why += path_len + 2;
        return byocl_error_set(err, BYOCL_ERR_IO, "cannot load target plugin %s: %s", path,
                               why ? why : "dlopen failed");
    }
    byocl_status st = BYOCL_OK;
    const uint32_t *version = find_symbol(handle, BYOCL_PLUGIN_VERSION_SYMBOL);
    void *init_sym = version ? find_symbol(handle, BYOCL_PLUGIN_INIT_SYMBOL) : NULL;
    byocl_target_plugin_init_fn init = NULL;
    memcpy(&init, &init_sym, sizeof init); /* a data pointer to a function pointer */
    int before = byocl_target_count();
    if (!version)
        st = byocl_error_set(err, BYOCL_ERR_NOT_FOUND,
                             "target plugin %s does not define %s (a plugin includes "
                             "byocl/plugin.h and defines it as BYOCL_TARGET_API_VERSION; see "
                             "docs/writing-a-target.md)",
                             path, BYOCL_PLUGIN_VERSION_SYMBOL);
    else if (*version != BYOCL_TARGET_API_VERSION)
        st = byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                             "target plugin %s was built for target API version %u; this byocl "
                             "has version %u (rebuild the plugin with this byocl's headers)",
                             path, (unsigned)*version, (unsigned)BYOCL_TARGET_API_VERSION);
    else if (!init)
        st = byocl_error_set(err, BYOCL_ERR_NOT_FOUND,
                             "target plugin %s has no function %s (byocl_status %s(uint32_t "
                             "api_version, byocl_error *err), declared in byocl/plugin.h)",
                             path, BYOCL_PLUGIN_INIT_SYMBOL, BYOCL_PLUGIN_INIT_SYMBOL);
    else if ((st = init(BYOCL_TARGET_API_VERSION, err)) != BYOCL_OK)
        byocl_error_prefix(err, "target plugin %s: ", path);
    else if (byocl_target_count() == before)
        st = byocl_error_set(err, BYOCL_ERR_INVALID,
                             "target plugin %s registered no target (its %s returned without "
                             "calling byocl_target_register)",
                             path, BYOCL_PLUGIN_INIT_SYMBOL);
    if (st != BYOCL_OK && byocl_target_count() == before) {
        dlclose(handle);
        return st;
    }
    /* Loaded, or failed after registering a target whose code must stay. */
    handles[n_handles++] = handle;
    return st;
}

int byocl_plugin_count(void)
{
    return n_handles;
}

void byocl_plugin_close_all(void)
{
    while (n_handles > 0)
        dlclose(handles[--n_handles]);
    free(handles);
    handles = NULL;
    cap_handles = 0;
}
