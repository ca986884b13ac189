/* byocl: targets, the external-compiler API (TVM's relay.ext.<name>, ggml's backends).
 *
 * A target is a small vtable registered by name. `supports` decides which calls may run
 * on it (annotate_target asks each target in priority order); `compile` (optional until a
 * target can build code) turns one partitioned function into a runtime module, given the
 * options the user set for the target; `options` lists those options and `devices` the
 * devices it can compile for. The built-in OpenCL target uses this same API, and a
 * vendor's target can be registered by any program that links byocl
 * (docs/writing-a-target.md). Version 2 added the options, the devices and the config
 * argument of compile; version 3 added byocl_attr.cols (attributes written as lists of
 * integer rows, nn.pad's pad_width), which changes the layout of the attributes a target
 * reads. A plugin built for another version is refused. */
#ifndef BYOCL_TARGET_H
#define BYOCL_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "byocl/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BYOCL_TARGET_API_VERSION 3u
#define BYOCL_TARGET_NAME_MAX 64

/* A runtime module (include/byocl/runtime.h). */
typedef struct byocl_rtmod byocl_rtmod;

/* ----------------------------------------------------------------- devices */

typedef enum byocl_device_kind {
    BYOCL_DEVICE_CPU = 0,
    BYOCL_DEVICE_GPU,
    BYOCL_DEVICE_ACCELERATOR,
    BYOCL_DEVICE_OTHER
} byocl_device_kind;

/* One device a target can compile for (ONNX Runtime's OrtEpDevice, ggml's devices). */
typedef struct byocl_device_info {
    char name[256];
    char description[256];  /* free text: platform, driver, compute units */
    byocl_device_kind kind;
    uint64_t memory_bytes;  /* 0 when unknown */
    bool host_memory;       /* shares the host's memory: region tensors need no copies */
} byocl_device_info;

/* "CPU", "GPU", "accelerator", "other". */
const char *byocl_device_kind_name(byocl_device_kind kind);

/* ----------------------------------------------------------------- options */

/* The values an option takes; byocl checks them before the target sees them. */
typedef enum byocl_option_kind {
    BYOCL_OPTION_STRING = 0, /* any text */
    BYOCL_OPTION_BOOL,       /* on|off, true|false, yes|no, 1|0, in any case */
    BYOCL_OPTION_INT,        /* a decimal integer */
    BYOCL_OPTION_CHOICE      /* one of `choices` */
} byocl_option_kind;

/* An option a target accepts, e.g. {"profile", BYOCL_OPTION_BOOL, NULL, "off", "time ..."}. */
typedef struct byocl_target_option {
    const char *key;     /* letters, digits and '_' */
    byocl_option_kind kind;
    const char *choices; /* BYOCL_OPTION_CHOICE: "auto|zero_copy|copy" */
    const char *default_value; /* shown by byocl info; NULL: none */
    const char *help;
} byocl_target_option;

/* A set of target options, "TARGET.KEY=VALUE" each (`--target-opt opencl.profile=on`).
 * "TARGET.device=D" picks a device of a target with a devices member: D is its index in
 * the target's list or a case-insensitive part of its name. */
typedef struct byocl_target_options byocl_target_options;

byocl_status byocl_target_options_new(byocl_target_options **out, byocl_error *err);
void byocl_target_options_free(byocl_target_options *opts); /* NULL is fine */
/* Adds (or replaces) one option. Errors (BYOCL_ERR_INVALID) name the text, the target and
 * the key: no '=' or no "TARGET.", a bad target name or key. Whether the target exists and
 * takes that key and value is checked by byocl_target_options_check. */
byocl_status byocl_target_options_parse(byocl_target_options *opts, const char *text,
                                        byocl_error *err);
byocl_status byocl_target_options_set(byocl_target_options *opts, const char *target,
                                      const char *key, const char *value, byocl_error *err);
/* The value given for TARGET.KEY, or NULL. */
const char *byocl_target_options_get(const byocl_target_options *opts, const char *target,
                                     const char *key);
int byocl_target_options_count(const byocl_target_options *opts);
/* Checks every option against the registered targets: the target is registered, the key
 * is one of its options (or "device" for a target with devices), the value is of the
 * option's kind, a device names one of the target's devices. The error names the target
 * and the key ("target option opencl.profil: target opencl has no option 'profil'
 * (options: device, profile, cache_dir, buffers, keep_device)"). */
byocl_status byocl_target_options_check(const byocl_target_options *opts, byocl_error *err);

/* One target's view of a set of options, handed to its compile. */
typedef struct byocl_target_config byocl_target_config;

/* The value of `key` for this target, or NULL when not given (use the default). */
const char *byocl_target_config_get(const byocl_target_config *cfg, const char *key);
/* An option of kind BOOL: `fallback` when not given. */
bool byocl_target_config_bool(const byocl_target_config *cfg, const char *key, bool fallback);
/* The device option, as an index in the target's devices list; -1 when not given (the
 * target picks its default). */
int byocl_target_config_device(const byocl_target_config *cfg);

/* ------------------------------------------------------------------ target */

typedef struct byocl_target_i {
    /* The Compiler attribute value, e.g. Compiler="my_npu": letters, digits and '_' only. */
    const char *name;
    /* BYOCL_TARGET_API_VERSION of the header the target was built against. */
    uint32_t api_version;
    /* Passed back to every member. */
    void *ctx;
    /* Required. May call `node` of `fn` (a Call of an op, types inferred) run on this target?
     * When not, write a short reason into `why` (e.g. "layout NHWC is not supported"). */
    bool (*supports)(void *ctx, const byocl_function *fn, int node, char *why, size_t why_len);
    /* Optional. Called once when the target is unregistered (also by
     * byocl_target_registry_reset). */
    void (*release)(void *ctx);
    /* Optional. Compiles one partitioned region (a typed function with Compiler=<name>,
     * tensor parameters, a tensor or tuple result) into a runtime module (runtime.h) that
     * the executor calls with the region's inputs then outputs, once per region function.
     * `config` holds the options the user gave this target (checked against `options`
     * already); it is valid during the call only. A target without compile has its
     * regions run by the ref region module (byocl_rtmod_ref_new). On failure return a
     * status with `err` set (byocl adds where the region is called); with the build's
     * fallback set, the region runs on the host instead. */
    byocl_status (*compile)(void *ctx, const byocl_function *region,
                            const byocl_target_config *config, byocl_rtmod **out,
                            byocl_error *err);
    /* Optional. The options compile accepts, ended by an entry whose key is NULL. "device"
     * is accepted from every target with a devices member and is not listed here. */
    const byocl_target_option *options;
    /* Optional. The devices the target can compile for: fills out[0..cap) and sets *n to
     * how many there are (call with cap 0 to count). An error when it cannot list them
     * (no driver): the message says what to install. */
    byocl_status (*devices)(void *ctx, byocl_device_info *out, int cap, int *n,
                            byocl_error *err);
    /* Optional. Writes what compile would make of `region` (typed), for a person to read,
     * into the existing folder `dir`: files named after the region's global symbol, each
     * written atomically (the OpenCL target: <symbol>.cl and <symbol>.launch.txt).
     * `byocl partition --emit DIR` calls it (byocl_emit_regions). */
    byocl_status (*emit)(void *ctx, const byocl_function *region,
                         const byocl_target_config *config, const char *dir, byocl_error *err);
} byocl_target_i;

/* Registers a copy of `target` (its name is copied too). Errors: a missing name or
 * supports, a name with other characters or longer than BYOCL_TARGET_NAME_MAX - 1, a name
 * already registered, an api_version other than BYOCL_TARGET_API_VERSION. On an error
 * nothing is registered and `release` is not called (the caller still owns ctx). */
byocl_status byocl_target_register(const byocl_target_i *target, byocl_error *err);
/* Removes the target and calls its `release`; an unknown name is BYOCL_ERR_NOT_FOUND. */
byocl_status byocl_target_unregister(const char *name, byocl_error *err);
/* NULL when no target has that name. */
const byocl_target_i *byocl_target_find(const char *name);
/* Registered targets in registration order (index 0 first); NULL when out of range. The
 * pointers stay valid until that target is unregistered. */
int byocl_target_count(void);
const byocl_target_i *byocl_target_at(int index);
/* The devices of target `name` (*out malloc'ed: free()); errors: no such target, a target
 * without a devices member, the target's own. */
byocl_status byocl_target_devices(const char *name, byocl_device_info **out, int *n,
                                  byocl_error *err);
/* The device `spec` picks on target `name`: a decimal index in its list, or a
 * case-insensitive part of a device's name or description (the first that matches). The
 * error (BYOCL_ERR_NOT_FOUND) lists the devices there are. */
byocl_status byocl_target_device_find(const char *name, const char *spec, int *index,
                                      byocl_device_info *out, byocl_error *err);

/* Registers byocl's built-in targets (the OpenCL target, include/byocl/opencl.h) that are
 * not registered yet. byocl_compile calls it; a program that partitions by hand calls it
 * first. Makes no device call. */
byocl_status byocl_target_register_builtins(byocl_error *err);

/* Unregisters every target, last registered first, calling each `release`; frees the
 * registry's own storage. byocl installs no atexit handler: a program (or test) that
 * registered targets calls this before it exits. The registry is not thread-safe:
 * register and unregister from one thread, before and after compiling. */
void byocl_target_registry_reset(void);

#ifdef __cplusplus
}
#endif
#endif
