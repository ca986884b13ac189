/* byocl: building a module and running it many times.
 *
 *   byocl_build      module -> compiled model: an execution plan of steps in topological
 *                    order (a host kernel per fusion group, or a call of a partitioned
 *                    region into its runtime module) and a storage plan that reuses
 *                    buffers by liveness. Immutable once built.
 *   byocl_executor   one set of buffers for a compiled model: set inputs by name, run,
 *                    read outputs by index; runs again without re-planning. Several
 *                    executors of one compiled model may run in parallel threads.
 *
 * Regions (functions with a Compiler attribute, called from @main) run in runtime
 * modules: a small vtable that receives the region's inputs then its outputs as DLPack
 * DLTensors pointing into the executor's own buffers (no copies), as TVM's and ONNX
 * Runtime's external runtimes do. See docs/executor.md. */
#ifndef BYOCL_RUNTIME_H
#define BYOCL_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include "byocl/ir.h"
#include "byocl/target.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ DLPack */

/* byocl's dtypes as DLPack types: float32/float16 {kDLFloat, 32/16}, int64/32/8
 * {kDLInt, ...}, uint8 {kDLUInt, 8}; bool is TVM's {kDLUInt, 1} stored one byte per
 * element. Lanes are 1. */
DLDataType byocl_dtype_to_dlpack(byocl_dtype dtype);
/* The inverse; false for a DLPack type byocl has no dtype for. */
bool byocl_dtype_from_dlpack(DLDataType type, byocl_dtype *out);

/* ---------------------------------------------------------- runtime modules */

/* Memory of a device that does not share the host's (ggml's buffer types). A runtime
 * module whose device keeps its own memory describes it with one of these; the executor
 * then keeps the region's tensors there and copies a tensor only where it crosses from
 * one memory to another: a model input is uploaded once, a tensor passed from one region
 * to the next on the same device is not copied at all, a model output is downloaded once.
 * Pointers into device memory are the handles `alloc` returns, never dereferenced by
 * byocl. Calls come from the thread that runs the executor.
 *
 * What the graph executor does (docs/executor.md, "Device memory"): each value a region
 * with device memory writes lives there; inputs, constants and what host kernels write
 * live in host memory. byocl_executor_new allocates one buffer per value and memory that
 * the plan needs (at least one byte each; no reuse by liveness) and uploads the constants
 * regions read; byocl_executor_free frees them. Each run uploads a value before the first
 * region of a memory that reads it, downloads it before the first host step that reads it
 * (a value on another device goes down, then up), and downloads model outputs after the
 * last step; byocl_plan_stats counts these copies. A failed call fails the executor's
 * call with the region and the value named. */
typedef struct byocl_device_memory_i {
    byocl_status (*alloc)(void *ctx, size_t bytes, void **out, byocl_error *err);
    void (*free)(void *ctx, void *buffer);
    /* Host -> device and device -> host, `bytes` from the start of `buffer`. */
    byocl_status (*upload)(void *ctx, void *buffer, const void *host, size_t bytes,
                           byocl_error *err);
    byocl_status (*download)(void *ctx, void *host, const void *buffer, size_t bytes,
                             byocl_error *err);
} byocl_device_memory_i;

typedef struct byocl_device_memory {
    /* Which memory (DLPack's device: kDLOpenCL, kDLCUDA, kDLExtDev...; never kDLCPU). Two
     * modules with equal `device` share tensors without a copy; the executor allocates,
     * frees and copies that memory's buffers through the first such module (in step
     * order). */
    DLDevice device;
    const byocl_device_memory_i *iface;
    void *ctx; /* passed to iface; lives as long as the module */
} byocl_device_memory;

/* What a target's compiled region is at run time. `run` executes region `symbol` (the
 * function's global_symbol attribute) on `args`: n_in inputs, then n_out outputs, in the
 * order of the region's parameters and of its (flattened) result. Every DLTensor is in
 * host memory (kDLCPU), or in the module's device memory when it has one (`memory`), in
 * C order (strides NULL), byte_offset 0, with the dtype and shape of the region's types.
 * Inputs are read-only; every element of every output must be written. `run` may be
 * called concurrently by several executors of one compiled model: a module that cannot
 * allow that serializes its calls itself. */
typedef struct byocl_rtmod_i {
    byocl_status (*run)(void *ctx, const char *symbol, DLTensor *const *args, int n_in,
                        int n_out, byocl_error *err);
    /* Optional: frees ctx when the module is freed. */
    void (*destroy)(void *ctx);
    /* Optional: true (and *out filled) when run takes its tensors in device memory of its
     * own; absent or false: host memory. */
    bool (*memory)(void *ctx, byocl_device_memory *out);
} byocl_rtmod_i;

typedef struct byocl_rtmod byocl_rtmod;

/* A runtime module named `name` (its target's, shown by profiles) around `iface` (copied)
 * and `ctx`. It owns ctx from then on, also when creating it fails. */
byocl_status byocl_rtmod_new(const char *name, const byocl_rtmod_i *iface, void *ctx,
                             byocl_rtmod **out, byocl_error *err);
void byocl_rtmod_free(byocl_rtmod *mod); /* NULL is fine */
const char *byocl_rtmod_name(const byocl_rtmod *mod);
/* The module's device memory (byocl_rtmod_i.memory); false for host memory. */
bool byocl_rtmod_memory(const byocl_rtmod *mod, byocl_device_memory *out);
byocl_status byocl_rtmod_run(byocl_rtmod *mod, const char *symbol, DLTensor *const *args,
                             int n_in, int n_out, byocl_error *err);

/* Runtime modules that time the parts of a region call (the OpenCL module with profiling
 * on: its transfers, each kernel and the gaps between kernels, by OpenCL events) report
 * them through this. A part's
 * times are the module's own, summed over every executor of the compiled model. */
typedef struct byocl_region_part {
    const char *name;   /* "transfers", "gaps between kernels", or what a kernel computes
                           ("nn.conv2d+nn.relu %3") */
    const char *kernel; /* the kernel's function name; NULL for the other two */
    bool transfer;      /* host <-> device copies (or maps), not a kernel */
    double flops;       /* the kernel's arithmetic, 0 when unknown */
    int64_t runs;
    double last_ms, min_ms, total_ms;
    /* Added last (December 2026), so that a module built before it still fills the fields
     * above; byocl_rtmod_part zeroes the part before asking the module. */
    bool between_kernels; /* the device idle between consecutive kernels (one kernel's end
                             to the next one's start: the driver's scheduling) */
} byocl_region_part;

typedef struct byocl_rtmod_parts_i {
    /* How many parts region `symbol` has (0: none timed). */
    int (*count)(void *ctx, const char *symbol);
    /* Part `index` (0 <= index < count); false when out of range. */
    bool (*get)(void *ctx, const char *symbol, int index, byocl_region_part *out);
    /* Optional: forgets the recorded times. */
    void (*reset)(void *ctx);
} byocl_rtmod_parts_i;

/* byocl_rtmod_new for a module that also reports timed parts through `parts` (copied;
 * it receives the same ctx). Runs cost one more indirect call. (runtime/module/rtmod_parts.c) */
byocl_status byocl_rtmod_new_timed(const char *name, const byocl_rtmod_i *iface,
                                   const byocl_rtmod_parts_i *parts, void *ctx,
                                   byocl_rtmod **out, byocl_error *err);
/* The parts of region `symbol` in `mod`: 0 for a module made without parts. */
int byocl_rtmod_num_parts(const byocl_rtmod *mod, const char *symbol);
bool byocl_rtmod_part(const byocl_rtmod *mod, const char *symbol, int index,
                      byocl_region_part *out);
/* Forgets the parts' times of `mod` (a module made without parts: nothing). */
void byocl_rtmod_reset_parts(byocl_rtmod *mod);

/* The ref region module (named "ref"): runs the partitioned function `region` (of any
 * module; it and the functions it calls are copied) with the reference executor. It
 * answers to the function's global_symbol (or its name when it has none), checks every
 * DLTensor against the region's types and runs one call at a time. byocl_build uses it for
 * regions that no runtime module was made for: those of targets that are not registered
 * or have no compile member (see byocl_build). Tensor parameters only. */
byocl_status byocl_rtmod_ref_new(const byocl_function *region, byocl_rtmod **out,
                                 byocl_error *err);

/* The host region module (named after the host target, "host" or "ref"): `region` copied
 * as @main of a module of its own, built by byocl_build for host target `target` with
 * `threads` (0: all cores), and run by an executor of its own (inputs are copied in,
 * outputs out; one call at a time). byocl_build uses it for regions that fall back to the
 * host (byocl_build_options.fallback). */
byocl_status byocl_rtmod_host_new(const byocl_function *region, const char *target, int threads,
                                  byocl_rtmod **out, byocl_error *err);

/* ------------------------------------------------------------------- build */

typedef struct byocl_compiled byocl_compiled;

/* Makes the runtime module of one region (a function with a Compiler attribute that the
 * built function calls). Return BYOCL_OK with *out NULL to leave the region to the
 * default: the compile member of the registered target its Compiler attribute names
 * (include/byocl/target.h; the built-in targets are registered first), else the ref
 * region module. */
typedef byocl_status (*byocl_region_compile_fn)(void *user, const byocl_function *region,
                                                byocl_rtmod **out, byocl_error *err);

typedef struct byocl_build_options {
    /* Code for the host part: "host" (LLVM, compiled) or "ref" (the ops' reference
     * kernels, one kernel per op). NULL means "host". */
    const char *target;
    /* The function to build; NULL means "main". */
    const char *fn_name;
    /* Threads that run kernels, the calling thread included; 0 means all cores. */
    int threads;
    /* Optimization level of the host code, 0..3: LLVM's default<O0..O3> pipeline (the
     * default, 2: O3 ran no faster and compiled 6-10% slower; docs/host-codegen.md). */
    int opt_level;
    /* Optional hook for the runtime modules of regions, and its first argument. */
    byocl_region_compile_fn region_compile;
    void *region_user;
    /* Where a region runs when its target's compile fails (no OpenCL platform or device,
     * a program that does not build, ...): "host" (compiled by the LLVM host backend as a
     * model of its own, byocl_rtmod_host_new; the ref region module in a build without
     * LLVM) or "ref" (the ref region module). NULL: the failure fails the build. */
    const char *fallback;
    /* Optional: called for each region that falls back, with the reason (the target's
     * error message), before the build goes on. */
    void (*on_fallback)(void *user, const char *region, const char *reason);
    void *fallback_user;
    /* Options of the region targets (include/byocl/target.h), checked at the start of the
     * build; each target's compile receives its own. NULL: none. */
    const byocl_target_options *target_options;
} byocl_build_options;

/* target "host", fn_name "main", threads 0 (all cores), opt_level 2, no hook. */
byocl_build_options byocl_build_options_default(void);

/* Builds function fn_name of `m`, type-checked here on a copy; when fn_name is "main", the
 * copy's constant computations are folded first (byocl_fold_constants), as partitioning
 * folds them. `m` is not changed and may be freed afterwards; the copy shares m's
 * constant tensors, whose reference counts are not atomic, so do not use `m` from another
 * thread during the build. `opt` may be NULL (the defaults). Errors: a target byocl does
 * not know (or "host" in a build without LLVM: BYOCL_ERR_UNSUPPORTED), a tuple-typed
 * parameter, a call of a global function without a Compiler attribute (inline it first),
 * a constant computation that fails (an index out of range in constant data), a region
 * whose runtime module cannot be made. */
byocl_status byocl_build(const byocl_module *m, const byocl_build_options *opt,
                         byocl_compiled **out, byocl_error *err);
/* Executors keep their compiled model alive: it may be freed before them. NULL is fine. */
void byocl_compiled_free(byocl_compiled *c);

const char *byocl_compiled_target(const byocl_compiled *c); /* "host" or "ref" */
int byocl_compiled_threads(const byocl_compiled *c);       /* resolved, >= 1 */
/* Inputs are the built function's parameters, in order; outputs its flattened result. */
int byocl_compiled_num_inputs(const byocl_compiled *c);
const char *byocl_compiled_input_name(const byocl_compiled *c, int index);
const byocl_type *byocl_compiled_input_type(const byocl_compiled *c, int index);
int byocl_compiled_num_outputs(const byocl_compiled *c);
const byocl_type *byocl_compiled_output_type(const byocl_compiled *c, int index);

/* What the storage plan saves (`byocl run --stats`). Intermediates are the tensors the
 * steps produce that are not outputs; without reuse each would need its own buffer. */
typedef struct byocl_plan_stats {
    int n_steps, n_kernels, n_regions;
    int n_kernel_functions;    /* distinct functions among the kernels (equal code shared) */
    int n_concats_in_place;    /* concatenations without a step: the steps that compute
                                  their inputs write them into their slices of the result */
    int n_intermediates;
    size_t intermediate_bytes; /* their sizes summed */
    int n_buffers;             /* the storage plan's blocks: distinct offsets in its pool */
    size_t planned_bytes;      /* the pool's size (each tensor rounded up to 64 bytes) */
    size_t live_peak_bytes;    /* the most intermediate bytes live at one step: the least
                                  any plan of this step order can use */
    size_t input_bytes, output_bytes, constant_bytes;
    /* Copies between host and device memory that each run makes (see byocl_device_memory;
     * all 0 when no region module has device memory of its own). Constants a region reads
     * are uploaded once, when an executor is made, and are not counted here. */
    int n_uploads, n_downloads;
    size_t upload_bytes, download_bytes;
} byocl_plan_stats;

void byocl_compiled_stats(const byocl_compiled *c, byocl_plan_stats *out);

/* ---------------------------------------------------------------- executor */

typedef struct byocl_executor byocl_executor;

/* An executor with its own buffers and thread pool. */
byocl_status byocl_executor_new(byocl_compiled *c, byocl_executor **out, byocl_error *err);
void byocl_executor_free(byocl_executor *ex); /* NULL is fine */

/* Copies the value of input `name` into the executor. The tensor must have the input's
 * dtype and shape. An input keeps its value across runs until it is set again. */
byocl_status byocl_executor_set_input(byocl_executor *ex, const char *name,
                                      const byocl_tensor *value, byocl_error *err);
/* The same from a DLTensor in host memory (compact C order; strides NULL or compact). */
byocl_status byocl_executor_set_input_dl(byocl_executor *ex, const char *name,
                                         const DLTensor *value, byocl_error *err);

/* Runs every step once. All inputs must be set. */
byocl_status byocl_executor_run(byocl_executor *ex, byocl_error *err);

int byocl_executor_num_outputs(const byocl_executor *ex);
/* Output `index` of the last successful run, as a view into the executor's memory: a
 * borrowed tensor (do not unref it, do not write to it) whose data stay valid until the
 * next byocl_executor_run or byocl_executor_free. */
byocl_status byocl_executor_output(const byocl_executor *ex, int index,
                                   const byocl_tensor **out, byocl_error *err);
/* A copy of output `index` that the caller owns (byocl_tensor_unref). */
byocl_status byocl_executor_copy_output(const byocl_executor *ex, int index,
                                        byocl_tensor **out, byocl_error *err);

/* ---------------------------------------------------------------- profile */

typedef enum byocl_step_kind {
    BYOCL_STEP_KERNEL = 0, /* a host kernel: one fusion group */
    BYOCL_STEP_REGION      /* a call of a partitioned region into its runtime module */
} byocl_step_kind;

/* One step of the execution plan, with its times in this executor (every run is timed). */
typedef struct byocl_step_info {
    byocl_step_kind kind;
    const char *name;   /* kernel: the group's name; region: its global symbol */
    const char *runner; /* kernel: the host backend ("ref", "llvm"); region: the runtime
                           module's name */
    int node;           /* the node of the function the step ends with (a region: its call) */
    int n_nodes;        /* nodes the step computes */
    double flops;       /* the arithmetic of the step's ops (a region: of its function's) */
    int64_t runs;       /* how often the step ran */
    double last_ms, min_ms, total_ms;
} byocl_step_info;

int byocl_executor_num_steps(const byocl_executor *ex);
byocl_status byocl_executor_step(const byocl_executor *ex, int index, byocl_step_info *out,
                                 byocl_error *err);
/* Forgets the recorded times (e.g. after a warm-up run). */
void byocl_executor_reset_profile(byocl_executor *ex);

/* The nodes step `index` computes (in the step order of byocl_executor_step), to tell
 * which nodes of a model a step's time goes to: a kernel step, the op calls of its fusion
 * group, nodes of the built function; a region step, every node of the region's function
 * but its parameters and constants. *fn (may be NULL) receives the function they belong
 * to and *nodes (may be NULL) their ids, ascending; both are c's own (its typed copy of
 * the module), valid until byocl_compiled_free. Returns how many (0, and NULLs, for an
 * index out of range). The copy keeps the node ids and source positions (byocl_node_pos)
 * of the module that was built, and partitioning carries positions into the regions, so
 * a program that marks @main before partitioning (byocl_capture_mark_nodes) reads back
 * which of its nodes each step computes (byocl_capture_marked_node). */
int byocl_compiled_step_nodes(const byocl_compiled *c, int index, const byocl_function **fn,
                              const int **nodes);

/* The timed parts of step `index` (a region step whose runtime module reports parts, see
 * byocl_rtmod_new_timed; 0 for any other step), in the step order of
 * byocl_executor_step. The parts' times belong to the runtime module, which every executor
 * of the compiled model shares: they sum the calls of all of them. */
int byocl_compiled_num_step_parts(const byocl_compiled *c, int index);
byocl_status byocl_compiled_step_part(const byocl_compiled *c, int index, int part,
                                      byocl_region_part *out, byocl_error *err);
/* Forgets the parts' times of every runtime module of `c`. */
void byocl_compiled_reset_parts(byocl_compiled *c);

#ifdef __cplusplus
}
#endif
#endif
