/* The JIT under the LLVM host backend: TargetMachines for the host (CPU name and features
 * of this machine), one ORC LLJIT per compiled model with the runtime symbols that
 * generated code may call, the modules a model's kernels are spread over, and the cache
 * of their objects. Internal to libbyocl_llvm.so. */
#ifndef BYOCL_LLVM_JIT_H
#define BYOCL_LLVM_JIT_H

#include <stdint.h>

#include <llvm-c/Core.h>

#include "byocl/error.h"

/* What the code generators need to know about the host. */
typedef struct jit_host {
    char triple[128];
    char cpu[64];
    const char *features;   /* "+avx2,+fma,..." (owned by the JIT module) */
    int vector_floats;      /* floats per vector register: 16, 8 or 4 */
    int64_t l1d_bytes;      /* one core's L1 data cache (sizes the host convs' blocks) */
    int64_t l2_bytes;       /* one core's L2 cache (sizes the host convs' bands) */
} jit_host;

/* The host, detected once per process. */
byocl_status jit_host_get(const jit_host **host, byocl_error *err);

typedef struct jit jit;

/* The host that `j` compiles for: jit_host_get's, with the cache sizes of
 * BYOCL_LLVM_CACHE_KIB when set. */
const jit_host *jit_target(const jit *j);

/* Modules a JIT compiles in parallel, at most. */
#define JIT_MAX_PARTS 8

/* A JIT with `n_parts` empty modules, each in a context of its own, ready for code
 * generation: kernels are spread over them (jit_next_kernel), and jit_finish compiles
 * them on as many threads. */
byocl_status jit_create(jit **out, int n_parts, byocl_error *err);
/* Starts the next kernel: a module of its own (jit_module), in the context of the part
 * with the least code so far. Call before generating each kernel, then either
 * jit_kernel_done with its main function, which keeps it for jit_finish to link into
 * its part, or jit_kernel_drop, which throws it away (its code is an earlier kernel's). */
void jit_next_kernel(jit *j);
byocl_status jit_kernel_done(jit *j, LLVMValueRef fn, byocl_error *err);
void jit_kernel_drop(jit *j);
/* What makes the kernel of main function `fn` what it is, before jit_finish: the bitcode
 * of its module (everything it defines and declares), with the group's names in it made
 * the same for all kernels. Malloc'ed, `size` bytes; NULL when out of memory. Two kernels
 * of equal keys compute the same from the same arguments and ctx: one can serve both. */
void *jit_kernel_key(LLVMValueRef fn, size_t *size);
/* The context and the module of the current kernel. */
LLVMContextRef jit_context(jit *j);
LLVMModuleRef jit_module(jit *j);
/* Floats per vector the kernels of this JIT use: the host's, or fewer when the
 * environment says BYOCL_LLVM_VECTOR_BITS=128|256 (read by jit_create; it tests the
 * narrower schedules on a wide machine). */
int jit_vector_floats(const jit *j);
/* Sets the attributes every kernel function carries: target CPU and features, the
 * preferred vector width, nounwind. */
void jit_set_function_attrs(jit *j, LLVMValueRef fn);
/* Verifies the modules and makes machine code for `n` symbols, storing their addresses.
 * Each module's object comes from the cache folder `cache_dir` when it holds one for it
 * (keyed by its bitcode and everything else that shapes the code); the others are
 * optimized (opt_level 0..3 picks default<O0..O3>) and compiled to objects, one thread per
 * module, and stored there (cache_dir NULL: no cache); LLJIT links them all. With
 * BYOCL_LLVM_DUMP=DIR set, writes DIR/<module>.ll before and DIR/<module>.opt.ll after
 * optimization (the latter only when it compiles); modules are byocl_host, byocl_host.1,
 * ... */
byocl_status jit_finish(jit *j, int opt_level, const char *cache_dir, const char *const *symbols,
                        int n, void **addresses, byocl_error *err);
void jit_free(jit *j); /* NULL is fine; frees the generated code too */

#endif
