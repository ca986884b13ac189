/* C functions that JIT-compiled host kernels call; see runtime.h. */
#include "runtime.h"

#include <math.h>
#include <stdlib.h>

#include "byocl/tensor.h"

int64_t rt_f64_to_int(double v)
{
    if (isnan(v))
        return 0;
    v = trunc(v);
    if (fabs(v) < 9.2e18)
        return (int64_t)v;
    /* |v| >= 2^63 (or inf): its remainder modulo 2^64, as an unsigned value. */
    double m = fmod(v, 18446744073709551616.0);
    if (isnan(m))
        return 0;
    if (m < 0)
        m += 18446744073709551616.0;
    uint64_t u = m >= 9223372036854775808.0 ? (uint64_t)(m - 9223372036854775808.0) + (1ull << 63)
                                            : (uint64_t)m;
    return (int64_t)u;
}

void *rt_alloc(int64_t bytes)
{
    void *p = NULL;
    size_t n = bytes > 0 ? (size_t)bytes : 64;
    n = (n + 63) & ~(size_t)63;
    if (posix_memalign(&p, 64, n) != 0)
        return NULL;
    return p;
}

void rt_free(void *p)
{
    free(p);
}

static float weight_at(const void *src, int64_t is_f16, int64_t i)
{
    return is_f16 ? byocl_f16_to_f32(((const uint16_t *)src)[i]) : ((const float *)src)[i];
}

void rt_pack_conv(float *dst, const void *src, int64_t is_f16, int64_t o, int64_t ic,
                  int64_t taps, int64_t og, int64_t t, int64_t u0, int64_t u1)
{
    int64_t per_group = (og + t - 1) / t, units = per_group * (o / og), row = ic * taps;
    dst += u0 * row * t;
    for (int64_t u = u0; u < u1 && u < units; u++) {
        int64_t first = (u / per_group) * og + (u % per_group) * t;
        int64_t left = (u / per_group) * og + og - first; /* channels left in the group */
        int64_t n = left < t ? left : t;
        for (int64_t j = 0; j < row; j++, dst += t) {
            /* float32 weights (nearly all) without the per-element dtype test */
            if (is_f16)
                for (int64_t c = 0; c < n; c++)
                    dst[c] = byocl_f16_to_f32(((const uint16_t *)src)[(first + c) * row + j]);
            else
                for (int64_t c = 0; c < n; c++)
                    dst[c] = ((const float *)src)[(first + c) * row + j];
            for (int64_t c = n; c < t; c++)
                dst[c] = 0.0f;
        }
    }
}

void rt_pack_dense(float *dst, const void *src, int64_t is_f16, int64_t u, int64_t k,
                   int64_t ut)
{
    for (int64_t b = 0; b < (u + ut - 1) / ut; b++)
        for (int64_t j = 0; j < k; j++)
            for (int64_t c = 0; c < ut; c++)
                *dst++ = b * ut + c < u ? weight_at(src, is_f16, (b * ut + c) * k + j) : 0.0f;
}
