/* The JIT under the LLVM host backend: one host TargetMachine (CPU name and features
 * of this machine), one ORC LLJIT per compiled model, and the runtime symbols that
 * generated code may call. Internal to libbyocl_llvm.so. */
#ifndef BYOCL_LLVM_JIT_H
#define BYOCL_LLVM_JIT_H

#include <llvm-c/Core.h>

#include "byocl/error.h"

/* What the code generators need to know about the host. */
typedef struct jit_host {
    char triple[128];
    char cpu[64];
    const char *features;   /* "+avx2,+fma,..." (owned by the JIT module) */
    int vector_floats;      /* floats per vector register: 16, 8 or 4 */
} jit_host;

/* The host, detected once per process. */
byocl_status jit_host_get(const jit_host **host, byocl_error *err);

typedef struct jit jit;

/* A JIT with an empty module in a fresh context, ready for code generation. */
byocl_status jit_create(jit **out, byocl_error *err);
LLVMContextRef jit_context(jit *j);
LLVMModuleRef jit_module(jit *j);
/* Floats per vector the kernels of this JIT use: the host's, or fewer when the
 * environment says BYOCL_LLVM_VECTOR_BITS=128|256 (read by jit_create; it tests the
 * narrower schedules on a wide machine). */
int jit_vector_floats(const jit *j);
/* Sets the attributes every kernel function carries: target CPU and features, the
 * preferred vector width, nounwind. */
void jit_set_function_attrs(jit *j, LLVMValueRef fn);
/* Verifies and optimizes the module (opt_level 0..3 picks default<O0..O3>), hands it to
 * LLJIT and generates machine code for `n` symbols, storing their addresses. With
 * BYOCL_LLVM_DUMP=DIR set, writes DIR/<name>.ll before and DIR/<name>.opt.ll after
 * optimization. */
byocl_status jit_finish(jit *j, const char *name, int opt_level, const char *const *symbols,
                        int n, void **addresses, byocl_error *err);
void jit_free(jit *j); /* NULL is fine; frees the generated code too */

#endif
