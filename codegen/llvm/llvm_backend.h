/* The LLVM host backend: every host op of a model lowered to LLVM IR specialized to its
 * static shapes, fused into kernels (conv2d/dense with their epilogues, chains of
 * elementwise ops), optimized at O2 (the default opt level) for this CPU and compiled
 * with ORC LLJIT.
 *
 * It lives in libbyocl_llvm.so, which links LLVM 19 statically and exports only the
 * names below (see cmake/llvm.cmake); docs/host-codegen.md explains the lowering. */
#ifndef BYOCL_LLVM_BACKEND_H
#define BYOCL_LLVM_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "base/cache.h"
#include "backend/host_backend.h"

extern const byocl_host_backend_i byocl_host_backend_llvm;

/* "LLVM 19.1.7, znver5, 512-bit vectors": what the JIT compiles for (for `byocl info`);
 * writes a message instead when LLVM cannot target this host. Returns buf. */
char *byocl_llvm_host_info(char *buf, size_t len);

/* What the host code cache (runtime/base/cache.h, entries DIR/<key>.o) did in this process,
 * counted since the last reset; `reset` zeroes the counts after reading them. */
byocl_cache_stats byocl_llvm_cache_stats(bool reset);

#endif
