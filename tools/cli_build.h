/* Compiling a model for a target the way every command that runs one does (run,
 * conformance, bench, replay, bisect), through byocl_compile: "host" and "ref" build the
 * function as it is; a region target (opencl, a plugin's) partitions @main for it first,
 * unless the model carries its own annotations or regions, then builds the rest for the
 * host. */
#ifndef BYOCL_CLI_BUILD_H
#define BYOCL_CLI_BUILD_H

#include <stdbool.h>

#include "byocl/passes.h"
#include "byocl/runtime.h"
#include "cli.h"

typedef struct cli_build_request {
    const char *target;   /* "host", "ref", or a registered region target */
    const char *fn_name;  /* NULL: "main" (a region target always builds @main) */
    const char *device;   /* --device: the region target's device; NULL: its default */
    /* --target-opt T.KEY=VALUE, each (pointing into argv) */
    const char *const *target_opts;
    int n_target_opts;
    const char *dump_after; /* --dump-after PASS: print the module after that pass */
    /* --min-region-flops, --offload-profile: the regions that stay on the host */
    byocl_offload_policy offload;
    /* Complete the model's own annotations (check_annotations inserts what is missing):
     * a stage of a split model whose cut crossed an annotated region. */
    bool complete_annotations;
    const char *fallback; /* --fallback: "host", "ref" or NULL */
    int threads;          /* 0: all cores */
    bool profile;         /* time each region's parts (the target's profile option) */
    bool keep_device;     /* keep the device open across builds (the option keep_device) */
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

/* The flags for the region target: reads --device and --target-opt into req and checks
 * them against req->target (already checked): --device needs a region target and must
 * name one of its devices; each --target-opt must be T.KEY=VALUE (else a usage error), of
 * a registered target that has that key, with a value of its kind (else a failure naming
 * the target and the key). Commands without one of the flags simply do not read it. */
int cli_target_flags(const cli_command *cmd, const cli_args *args, cli_build_request *req);

/* Prints target t's options and devices (or why it lists none), indented, on stdout. */
void cli_print_target(const byocl_target_i *t);

#define CLI_OPTION_DUMP_AFTER                                                                \
    {"dump-after", 0, CLI_ARG_REQUIRED, false, "PASS",                                     \
     "print the module on stderr after PASS (fold_constants, annotate_target, "            \
     "annotate_range, check_annotations, merge_regions, keep_on_host, partition) or "     \
     "after every pass (all)"}
/* Checks --dump-after PASS (NULL is fine): a usage error naming the passes. */
int cli_check_dump_after(const cli_command *cmd, const char *pass);

#define CLI_OPTION_MIN_REGION_FLOPS                                                          \
    {"min-region-flops", 0, CLI_ARG_REQUIRED, false, "X",                                  \
     "keep each region of fewer estimated FLOPs than X (e.g. 2e6, 500k, 1.5G) on the host"}
#define CLI_OPTION_OFFLOAD_PROFILE                                                           \
    {"offload-profile", 0, CLI_ARG_REQUIRED, false, "FILE.json",                           \
     "keep on the host each region that ran slower offloaded in FILE.json (byocl bench "   \
     "--json of the same model and target)"}
/* Reads --min-region-flops X (a number >= 0, optionally with k, M or G) and
 * --offload-profile FILE.json (byocl_offload_profile_read) into *out, for a region target
 * (`target`; NULL: not checked here). CLI_EXIT_OK, a usage error (a bad number, no region
 * target) or a failure (a profile that cannot be read). Free with cli_offload_free. */
int cli_offload_flags(const cli_command *cmd, const cli_args *args, const char *target,
                      byocl_offload_policy *out);
void cli_offload_free(byocl_offload_policy *policy);

#define CLI_OPTION_DEVICE                                                                    \
    {"device", 0, CLI_ARG_REQUIRED, false, "D",                                            \
     "the region target's device: its index or part of its name (byocl info lists them)"}
#define CLI_OPTION_TARGET_OPT                                                                \
    {"target-opt", 0, CLI_ARG_REQUIRED, true, "T.KEY=VALUE",                               \
     "an option of region target T, e.g. opencl.buffers=copy (repeatable; byocl ops --target T)"}

/* A copy of m with @main partitioned for region target req->target (or by the model's own
 * annotations), as cli_build_model would (byocl_compile_partition). */
byocl_status cli_partition_for_target(const cli_build_request *req, const byocl_module *m,
                                      byocl_module **out, byocl_error *err);

/* Compiles m for req (byocl_compile: partitioning first for a region target), with
 * progress on stderr when it takes over a second. *build_ms (may be NULL) receives the wall
 * time of partitioning and building. Reports a library error. */
byocl_status cli_build_model(const cli_build_request *req, const byocl_module *m,
                             byocl_compiled **out, double *build_ms, byocl_error *err);

#endif
