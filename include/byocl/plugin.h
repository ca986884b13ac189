/* byocl: targets as plugins ("registering as an external compiler target").
 *
 * A target plugin is a shared library that registers one or more targets
 * (include/byocl/target.h) when byocl loads it: `byocl --plugin path/libtarget.so ...` or
 * byocl_plugin_load. The library defines two symbols, declared below:
 *
 *     #include "byocl/plugin.h"
 *     const uint32_t byocl_target_plugin_api_version = BYOCL_TARGET_API_VERSION;
 *     byocl_status byocl_target_plugin_init(uint32_t api_version, byocl_error *err)
 *     {
 *         ...check api_version, then byocl_target_register(&my_target, err)...
 *     }
 *
 * byocl reads the version first and refuses a plugin built for another target API; then
 * it calls init with its own version. The plugin calls byocl's public API, which the
 * program that loads it exports (the byocl CLI does; a program linking libbyocl.so has
 * it too). docs/writing-a-target.md walks through writing one. */
#ifndef BYOCL_PLUGIN_H
#define BYOCL_PLUGIN_H

#include <stdint.h>

#include "byocl/error.h"
#include "byocl/target.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BYOCL_PLUGIN_VERSION_SYMBOL "byocl_target_plugin_api_version"
#define BYOCL_PLUGIN_INIT_SYMBOL "byocl_target_plugin_init"

/* What a plugin defines. The version: BYOCL_TARGET_API_VERSION of the headers it was built
 * with. */
extern const uint32_t byocl_target_plugin_api_version;
/* Registers the plugin's targets. `api_version` is the loading byocl's
 * BYOCL_TARGET_API_VERSION. Return BYOCL_OK, or a status with `err` set (the plugin is
 * then unloaded unless it registered a target). */
byocl_status byocl_target_plugin_init(uint32_t api_version, byocl_error *err);
typedef byocl_status (*byocl_target_plugin_init_fn)(uint32_t api_version, byocl_error *err);

/* Loads the plugin at `path` (dlopen; a path without '/' is searched like dlopen does)
 * and runs its init. Errors: a file that does not exist or is not a loadable library
 * (BYOCL_ERR_IO), a missing symbol (BYOCL_ERR_NOT_FOUND), a version other than this
 * byocl's (BYOCL_ERR_UNSUPPORTED), an init that fails (its status, the message prefixed
 * with the path) or registers no target (BYOCL_ERR_INVALID). Not thread-safe, like the
 * target registry. */
byocl_status byocl_plugin_load(const char *path, byocl_error *err);
/* Plugins loaded and still open. */
int byocl_plugin_count(void);
/* Closes every loaded plugin. Call it after byocl_target_registry_reset (a plugin's
 * targets must be unregistered while its code is still loaded). */
void byocl_plugin_close_all(void);

#ifdef __cplusplus
}
#endif
#endif
