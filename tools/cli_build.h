/* Building a model for a target the way every command that runs one does (run,
 * conformance, bench, replay, bisect): "host" and "ref" build @main as it is; a region
 * target (opencl, a plugin's) partitions @main for it first, unless the model carries its
 * own annotations or regions, then builds the rest for the host. */
#ifndef BYOCL_CLI_BUILD_H
#define BYOCL_CLI_BUILD_H

#include <stdbool.h>

#include "byocl/runtime.h"
#include "cli.h"

typedef struct cli_build_request {
    const char *target;   /* "host", "ref", or a registered region target */
    const char *fn_name;  /* NULL: "main" (a region target always builds @main) */
    const char *device;   /* --device, with target "opencl"; NULL: the default device */
    const char *fallback; /* --fallback: "host", "ref" or NULL */
    int threads;          /* 0: all cores */
    bool profile;         /* time each region's parts (OpenCL events) */
    bool quiet_fallback;  /* no warning on stderr for a region that falls back */
    /* Progress on stderr while building (cli_progress.h): `label` names the step (NULL:
     * "building @FN for target T"); `quiet` shows none. */
    const char *label;
    bool quiet;
    /* Optional: changes the build options last (a capture installs its hook). */
    void (*adjust)(void *user, byocl_build_options *opt);
    void *adjust_user;
} cli_build_request;

/* Whether `target` names a region target (anything but "host" and "ref"). */
bool cli_is_region_target(const char *target);

/* Checks --target NAME: host, ref, or a registered region target. CLI_EXIT_OK, or a usage
 * error listing the known targets. */
int cli_check_target(const cli_command *cmd, const char *target);

/* Checks --device D against --target: it goes with opencl only (a usage error), and must
 * name an OpenCL device (a failure listing them), before any model is loaded or built.
 * CLI_EXIT_OK when device is NULL. */
int cli_check_device(const cli_command *cmd, const char *target, const char *device);

/* Whether m brings its own regions: compiler_begin annotations in @main, or functions
 * with a Compiler attribute. */
bool cli_has_regions(const byocl_module *m);

/* A copy of m with @main partitioned for region target req->target (or by the model's own
 * annotations), the target's options set. */
byocl_status cli_partition_for_target(const cli_build_request *req, const byocl_module *m,
                                      byocl_module **out, byocl_error *err);

/* Builds m for req (partitioning first for a region target), with progress on stderr when
 * it takes over a second. *build_ms (may be NULL) receives the wall time of partitioning
 * and building. Reports a library error. */
byocl_status cli_build_model(const cli_build_request *req, const byocl_module *m,
                             byocl_compiled **out, double *build_ms, byocl_error *err);

#endif
