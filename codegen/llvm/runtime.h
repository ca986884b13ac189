/* C functions that JIT-compiled host kernels call (registered with the JIT by name). */
#ifndef BYOCL_LLVM_RUNTIME_H
#define BYOCL_LLVM_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

/* byocl's float-to-integer conversion for values outside int64's range (cast, kernels
 * that store a double into an integer tensor): truncate toward zero, wrap modulo 2^64,
 * NaN gives 0. In-range values are converted inline. Same result as byocl_tensor_set. */
int64_t rt_f64_to_int(double v);
/* Scratch memory for a kernel call, 64-byte aligned; NULL when out of memory (the kernel
 * then fails with a message). */
void *rt_alloc(int64_t bytes);
void rt_free(void *p);

/* Packs an OIHW conv weight (float32, or float16 when is_f16) for the conv schedule: units
 * of `t` output channels of one group, [unit][i][tap][t] floats, zero past the group's
 * last channel; only units [u0, u1) are written, each at its place in dst. o: output
 * channels, ic: input channels per group, taps: kh * kw, og: output channels per group. */
void rt_pack_conv(float *dst, const void *src, int64_t is_f16, int64_t o, int64_t ic,
                  int64_t taps, int64_t og, int64_t t, int64_t u0, int64_t u1);
/* Packs a dense weight [u][k] into blocks of `ut` units: [block][k][ut] floats, zero past
 * the last unit. */
void rt_pack_dense(float *dst, const void *src, int64_t is_f16, int64_t u, int64_t k,
                   int64_t ut);

#endif
