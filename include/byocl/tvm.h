/* byocl: compiled regions as tvm-ffi functions, for Apache TVM (docs/tvm.md).
 *
 * A region is a byocl module in Relay text whose @main is what TVM offloads: its
 * parameters are the region's inputs, its (flattened) result the outputs. Built into
 * libbyocl_tvm.so, only where tvm-ffi (PyPI's apache-tvm-ffi, its C ABI and
 * libtvm_ffi.so) was found when byocl was configured; `byocl info` says whether it was.
 *
 * TVM calls an external function through tvm-ffi's stable C ABI: a symbol
 * `__tvm_ffi_<name>` of type TVMFFISafeCallType, called with the inputs, then the
 * preallocated outputs (Relax's call_dps_packed: destination-passing style). A C (or C++)
 * file defines one per region with BYOCL_TVM_DEFINE_REGION, which calls
 * byocl_tvm_region_call; the first call compiles the region, later calls reuse it.
 *
 * This header names no tvm-ffi type (so byocl.h can include it anywhere): the argument
 * and result arrays are TVMFFIAny arrays passed as void pointers. The macro, which
 * needs TVMFFIAny, is for files that include <tvm/ffi/c_api.h> first. */
#ifndef BYOCL_TVM_H
#define BYOCL_TVM_H

#include <stddef.h>
#include <stdint.h>

#include "byocl/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a region is; read by the first call of its slot only (later calls ignore it). */
typedef struct byocl_tvm_region_spec {
    /* The region's name: messages say "byocl region <symbol>: ...". */
    const char *symbol;
    /* A byocl module as Relay text (NUL-terminated); its @main is the region. Tensor
     * parameters, a tensor or a tuple of tensors as result. */
    const char *relay_text;
    /* Optional: the region's weights, an .npz archive in memory (NULL: none). Members
     * "relay.Constant.K" are the text's meta constants (meta[relay.Constant][K]); every
     * other member binds @main's parameter of that name, which then is no argument. */
    const void *weights_npz;
    size_t weights_npz_len;
    /* Where it runs: "host" (the LLVM host backend), "ref" (the reference kernels), or a
     * region target ("opencl", a plugin's registered target): @main is partitioned for it
     * (its ops that the target does not take run on the host). NULL: "host". */
    const char *target;
    /* Optional target options, "TARGET.KEY=VALUE" separated by commas
     * ("opencl.buffers=copy, opencl.profile=on"), as --target-opt takes them. */
    const char *target_options;
    /* Threads of the host part (kernels); 0: all cores. */
    int threads;
} byocl_tvm_region_spec;

/* A compiled region (or the reason it did not compile); one per slot. */
typedef struct byocl_tvm_region byocl_tvm_region;

/* The body of `__tvm_ffi_<symbol>`: calls the region of `*slot`, compiling it from `spec`
 * into *slot on the first call (slot starts NULL). `args` is TVM's `const TVMFFIAny *`
 * array of `num_args` arguments: the region's inputs in @main's parameter order, then its
 * outputs, each a tensor of kind kTVMFFIDLTensorPtr (a borrowed DLTensor *) or
 * kTVMFFITensor (a tensor object); `result` (TVMFFIAny *) is set to None.
 *
 * Each argument is checked against the region's types: a tensor (TypeError), its dtype
 * (TypeError), its shape (ValueError), on the CPU (kDLCPU; ValueError), compact row-major
 * (strides NULL or those of C order, byte_offset honoured; ValueError), with data.
 * Inputs are copied into the region's executor, which runs, and each output is copied into
 * the caller's tensor. A failing compile or run is a RuntimeError; a failed compile is
 * kept, and every later call raises the same error.
 *
 * Capture: while $BYOCL_CAPTURE_DIR is set (read at every call; $BYOCL_CAPTURE_REGION, when
 * set, names the one region to capture), each call that ran writes its capture folder
 * there (byocl_capture_write_call, <byocl/capture.h>), which `byocl replay` reads; a
 * folder that cannot be written is a RuntimeError "capturing into DIR: ...".
 *
 * Returns 0, or -1 with the error raised through TVMFFIErrorSetRaisedFromCStr (TVM turns
 * it into a Python exception of that kind); every message names the region and the
 * argument, e.g. "byocl region byocl_main_0: argument 1 (%w): expected float32[4, 4, 3, 3],
 * got float32[4, 4, 3]".
 *
 * Thread safety: slots are filled under one lock of the library (compiling is
 * serialized: byocl's target registry is not thread-safe; a filled slot is read without
 * it), and the calls of one region are serialized by a lock of its own (its executor has
 * one set of buffers); calls of different regions run in parallel. */
int byocl_tvm_region_call(byocl_tvm_region **slot, const byocl_tvm_region_spec *spec,
                          const void *args, int32_t num_args, void *result);

/* Compiles the region into *slot now, when it is not there yet (what the first call would
 * do), for a caller that wants compile errors before the first run. Returns the status of
 * the compile (also a kept failure of an earlier one), with err set. */
byocl_status byocl_tvm_region_prepare(byocl_tvm_region **slot, const byocl_tvm_region_spec *spec,
                                      byocl_error *err);

/* Frees the region of *slot and sets *slot to NULL (NULL or an empty slot is fine). No
 * call of that slot may be running. */
void byocl_tvm_region_free(byocl_tvm_region **slot);

/* What BYOCL_TVM_DEFINE_REGION's destructor calls when the library that holds `slot` is
 * unloaded: byocl_tvm_region_free, unless the process is exiting. At exit the region is
 * left to the operating system: the destructors of the OpenCL driver may have run by
 * then, and the region's OpenCL state must not be released after them. */
void byocl_tvm_region_unload(byocl_tvm_region **slot);

/* The entry of the code that byocl's Relax codegen (relax.ext.byocl in python/byocl_tvm,
 * docs/tvm.md) generates for each region: byocl_tvm_region_call with the spec's fields
 * passed one by one, and the weights (an .npz archive) as base64 text (NULL or "": none).
 * TVM compiles that code without byocl's headers or link flags, so it loads
 * libbyocl_tvm.so with dlopen and finds this function by name. `plugins` ("A.so:B.so",
 * NULL or "": none) are loaded before the first compile, each while `target` is not
 * registered yet, so that a library exported from TVM finds a plugin's target in a fresh
 * process too. Returns 0, or -1 with the error raised as byocl_tvm_region_call does. */
int byocl_tvm_embedded_call(byocl_tvm_region **slot, const char *symbol, const char *relay_text,
                            const char *weights_base64, const char *target,
                            const char *target_options, const char *plugins, int threads,
                            const void *args, int32_t num_args, void *result);

/* Asked by partition_for_byocl's pattern checks: does `target` take every op call of
 * `relay_text`'s @main (a byocl module in Relay text, parameters typed, no weights)? 1: yes;
 * 0: no, and `why` says why (the target's reason, or the parser's or type checker's message
 * when byocl cannot read or type the call); -1: an error, `target` unknown for instance
 * (`why` lists the targets). "host" and "ref" take every call that byocl types. */
int byocl_tvm_supports(const char *relay_text, const char *target, char *why, size_t why_len);

/* Compiles a region once and frees it (byocl_tvm_region_prepare on a slot of its own), so
 * that relax.ext.byocl raises a compile failure when TVM compiles the model: 0, or -1 with
 * `message` set ("byocl region <symbol>: compiling for target T: ..."). `plugins` as for
 * byocl_tvm_embedded_call. */
int byocl_tvm_check_region(const char *symbol, const char *relay_text, const void *weights_npz,
                           size_t weights_npz_len, const char *target, const char *target_options,
                           const char *plugins, int threads, char *message, size_t message_len);

/* Loads a target plugin (byocl_plugin_load) into the process, after byocl's built-in targets
 * are registered: its targets can then be asked and compiled for. 0, or -1 with `message`
 * set. */
int byocl_tvm_load_plugin(const char *path, char *message, size_t message_len);

/* The C ABI version of tvm-ffi that libbyocl_tvm.so was built against ("0.1.16"). */
const char *byocl_tvm_ffi_version(void);

#ifdef __cplusplus
#define BYOCL_TVM_EXTERN_C extern "C"
#else
#define BYOCL_TVM_EXTERN_C
#endif

/* Defines the exported function `__tvm_ffi_<symbol>` (TVMFFISafeCallType; extern "C" in
 * C++, as TVM's export_library compiles C-source modules with g++) for the region that
 * `spec` (an expression of type const byocl_tvm_region_spec *) describes, with a slot of
 * its own, `byocl_tvm_slot_<symbol>` (static: byocl_tvm_region_free(&byocl_tvm_slot_<symbol>)
 * frees it), and a destructor that frees the region when the library is unloaded
 * (byocl_tvm_region_unload). Needs <tvm/ffi/c_api.h> included before. `symbol` is an
 * identifier: the name tvm-ffi finds the function by (tvm_ffi.load_module(lib)["<symbol>"]). */
#define BYOCL_TVM_DEFINE_REGION(symbol, spec)                                                 \
    static byocl_tvm_region *byocl_tvm_slot_##symbol;                                         \
    __attribute__((destructor)) static void byocl_tvm_unload_##symbol(void)                   \
    {                                                                                         \
        byocl_tvm_region_unload(&byocl_tvm_slot_##symbol);                                    \
    }                                                                                         \
    BYOCL_TVM_EXTERN_C __attribute__((visibility("default"))) int __tvm_ffi_##symbol(         \
        void *handle, const TVMFFIAny *args, int32_t num_args, TVMFFIAny *result);            \
    BYOCL_TVM_EXTERN_C __attribute__((visibility("default"))) int __tvm_ffi_##symbol(         \
        void *handle, const TVMFFIAny *args, int32_t num_args, TVMFFIAny *result)             \
    {                                                                                         \
        (void)handle;                                                                         \
        return byocl_tvm_region_call(&byocl_tvm_slot_##symbol, (spec), args, num_args,        \
                                     result);                                                 \
    }

#ifdef __cplusplus
}
#endif
#endif
