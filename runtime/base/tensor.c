/* Host tensors: dtype, shape and contiguous C-order data, reference-counted. */
#define _DEFAULT_SOURCE /* madvise */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "byocl/tensor.h"
#include "limits_impl.h"
#include "strbuf.h"

struct byocl_tensor {
    byocl_dtype dtype;
    byocl_shape shape;
    int64_t numel;
    size_t nbytes;
    size_t counted; /* bytes counted against byocl_limits (0 for a wrapped view) */
    /* Gives them back: the release of the library that counted them (libbyocl_llvm.so
     * has its own copy of this file and may drop the last reference). */
    void (*release)(uint64_t bytes);
    int refcount;
    void *data;
    void *allocated; /* what tensor_alloc allocated for data (NULL for a view) */
};

static const struct {
    const char *name;
    size_t size;
} dtype_info[BYOCL_DTYPE_COUNT] = {
    [BYOCL_FLOAT32] = {"float32", 4}, [BYOCL_FLOAT16] = {"float16", 2},
    [BYOCL_INT32] = {"int32", 4},     [BYOCL_INT64] = {"int64", 8},
    [BYOCL_INT8] = {"int8", 1},       [BYOCL_UINT8] = {"uint8", 1},
    [BYOCL_BOOL] = {"bool", 1},       [BYOCL_FLOAT64] = {"float64", 8},
    [BYOCL_INT16] = {"int16", 2},     [BYOCL_UINT16] = {"uint16", 2},
    [BYOCL_UINT32] = {"uint32", 4},   [BYOCL_UINT64] = {"uint64", 8},
    [BYOCL_BFLOAT16] = {"bfloat16", 2},
};

const char *byocl_dtype_name(byocl_dtype dtype)
{
    return (unsigned)dtype < BYOCL_DTYPE_COUNT ? dtype_info[dtype].name : "?";
}

bool byocl_dtype_from_name(const char *name, byocl_dtype *out)
{
    for (int d = 0; d < BYOCL_DTYPE_COUNT; d++)
        if (name && strcmp(name, dtype_info[d].name) == 0) {
            *out = (byocl_dtype)d;
            return true;
        }
    return false;
}

size_t byocl_dtype_size(byocl_dtype dtype)
{
    return (unsigned)dtype < BYOCL_DTYPE_COUNT ? dtype_info[dtype].size : 0;
}

bool byocl_dtype_is_float(byocl_dtype dtype)
{
    return dtype == BYOCL_FLOAT32 || dtype == BYOCL_FLOAT16 || dtype == BYOCL_FLOAT64 ||
           dtype == BYOCL_BFLOAT16;
}

bool byocl_dtype_is_unsigned(byocl_dtype dtype)
{
    return dtype == BYOCL_UINT8 || dtype == BYOCL_UINT16 || dtype == BYOCL_UINT32 ||
           dtype == BYOCL_UINT64 || dtype == BYOCL_BOOL;
}

byocl_shape byocl_shape_make(int rank, const int64_t *dims)
{
    byocl_shape s;
    memset(&s, 0, sizeof s);
    s.rank = rank < 0 ? 0 : rank > BYOCL_MAX_RANK ? BYOCL_MAX_RANK : rank;
    for (int i = 0; i < s.rank; i++)
        s.dims[i] = dims[i];
    return s;
}

int64_t byocl_shape_numel(const byocl_shape *shape)
{
    int64_t n = 1;
    for (int i = 0; i < shape->rank; i++) {
        int64_t d = shape->dims[i];
        if (d < 0)
            return -1;
        if (d != 0 && n > INT64_MAX / d)
            return -1;
        n *= d;
    }
    return n;
}

bool byocl_shape_equal(const byocl_shape *a, const byocl_shape *b)
{
    if (a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

char *byocl_shape_str(const byocl_shape *shape, char *buf, size_t len)
{
    byocl_strbuf sb;
    base_strbuf_init(&sb, buf, len);
    base_strbuf_printf(&sb, "(");
    for (int i = 0; i < shape->rank; i++)
        base_strbuf_printf(&sb, "%s%lld", i ? ", " : "", (long long)shape->dims[i]);
    base_strbuf_printf(&sb, ")");
    return buf;
}

/* Bytes for `numel` elements of `dtype`, or 0 with err set when it does not fit. */
static bool tensor_size(byocl_dtype dtype, const byocl_shape *shape, int64_t *numel,
                        size_t *nbytes, byocl_error *err)
{
    char s[160];
    if ((unsigned)dtype >= BYOCL_DTYPE_COUNT) {
        byocl_error_set(err, BYOCL_ERR_INVALID, "invalid dtype %d", (int)dtype);
        return false;
    }
    if (shape->rank < 0 || shape->rank > BYOCL_MAX_RANK) {
        byocl_error_set(err, BYOCL_ERR_INVALID, "tensor rank %d is outside 0..%d", shape->rank,
                        BYOCL_MAX_RANK);
        return false;
    }
    int64_t n = byocl_shape_numel(shape);
    size_t es = dtype_info[dtype].size;
    if (n < 0 || (uint64_t)n > SIZE_MAX / es) {
        byocl_error_set(err, BYOCL_ERR_INVALID, "tensor shape %s is negative or too large",
                        byocl_shape_str(shape, s, sizeof s));
        return false;
    }
    *numel = n;
    *nbytes = (size_t)n * es;
    return true;
}

/* Tensors of a mebibyte or more (weights, mostly) come from calloc, which clears only
 * memory it reuses: fresh pages come zeroed from the kernel, so most weights skip a
 * memset pass. Their pages are then mapped in one call (MADV_POPULATE_WRITE, Linux 5.14;
 * a hint) instead of a page fault per 4 KiB at the first write. wide_resnet50_2 (275 MB
 * of weights) imports in 0.12 s instead of 0.18. Smaller ones are aligned_alloc's,
 * cleared. */
#define TENSOR_LARGE_BYTES ((size_t)1 << 20)

/* `bytes` (a multiple of 64) of zeroed memory, 64-byte aligned, in *data; the return is
 * what to free (NULL when there is no memory). */
static void *tensor_alloc(size_t bytes, void **data)
{
    *data = NULL;
    if (bytes < TENSOR_LARGE_BYTES) {
        void *p = bytes ? aligned_alloc(64, bytes) : NULL;
        if (p)
            memset(p, 0, bytes);
        return *data = p;
    }
    char *p = calloc(1, bytes + 64);
    if (!p)
        return NULL;
    *data = (void *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
#ifdef MADV_POPULATE_WRITE
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t first = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t end = ((uintptr_t)p + bytes + 64) & ~(page - 1);
    if (end > first)
        (void)madvise((void *)first, end - first, MADV_POPULATE_WRITE);
#endif
    return p;
}

byocl_tensor *byocl_tensor_new(byocl_dtype dtype, const byocl_shape *shape, byocl_error *err)
{
    int64_t numel;
    size_t nbytes;
    if (!tensor_size(dtype, shape, &numel, &nbytes, err))
        return NULL;
    char what[200], s[160];
    snprintf(what, sizeof what, "tensor %s %s", byocl_shape_str(shape, s, sizeof s),
             byocl_dtype_name(dtype));
    if (base_limits_reserve(nbytes, nbytes, what, err) != BYOCL_OK)
        return NULL;
    byocl_tensor *t = calloc(1, sizeof *t);
    /* 64-byte alignment suits vector loads of every later code path. */
    size_t alloc = (nbytes + 63) & ~(size_t)63;
    void *data = NULL, *allocated = t && alloc ? tensor_alloc(alloc, &data) : NULL;
    if (!t || (alloc && !allocated)) {
        free(t);
        base_limits_release(nbytes);
        byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory allocating a tensor of %zu bytes",
                        nbytes);
        return NULL;
    }
    t->allocated = allocated;
    t->dtype = dtype;
    t->shape = *shape;
    t->numel = numel;
    t->nbytes = nbytes;
    t->counted = nbytes;
    t->release = base_limits_release;
    t->refcount = 1;
    t->data = data;
    return t;
}

byocl_tensor *byocl_tensor_from_data(byocl_dtype dtype, const byocl_shape *shape,
                                     const void *data, byocl_error *err)
{
    byocl_tensor *t = byocl_tensor_new(dtype, shape, err);
    if (t && t->nbytes)
        memcpy(t->data, data, t->nbytes);
    return t;
}

byocl_tensor *byocl_tensor_clone(const byocl_tensor *t, byocl_error *err)
{
    return byocl_tensor_from_data(t->dtype, &t->shape, t->data, err);
}

byocl_tensor *byocl_tensor_ref(byocl_tensor *t)
{
    if (t)
        t->refcount++;
    return t;
}

void byocl_tensor_unref(byocl_tensor *t)
{
    if (t && --t->refcount == 0) {
        if (t->release)
            t->release(t->counted);
        free(t->allocated);
        free(t);
    }
}

byocl_dtype byocl_tensor_dtype(const byocl_tensor *t) { return t->dtype; }
const byocl_shape *byocl_tensor_shape(const byocl_tensor *t) { return &t->shape; }
int64_t byocl_tensor_numel(const byocl_tensor *t) { return t->numel; }
size_t byocl_tensor_nbytes(const byocl_tensor *t) { return t->nbytes; }
void *byocl_tensor_data(byocl_tensor *t) { return t->data; }
const void *byocl_tensor_cdata(const byocl_tensor *t) { return t->data; }

/* ------------------------------------------------------------- float16 */

uint16_t byocl_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t exp = (x >> 23) & 0xffu;
    uint32_t man = x & 0x7fffffu;
    if (exp == 0xffu) /* inf or NaN (keep NaN quiet and non-zero) */
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
    int32_t e = (int32_t)exp - 127 + 15;
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        /* subnormal half (or zero): shift the full mantissa, round to nearest even */
        if (e < -10)
            return sign;
        uint32_t m = man | 0x800000u;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t half_bits = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1u);
        uint32_t halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (half_bits & 1u)))
            half_bits++;
        return (uint16_t)(sign | half_bits);
    }
    uint32_t half_bits = ((uint32_t)e << 10) | (man >> 13);
    uint32_t rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half_bits & 1u)))
        half_bits++; /* may carry into the exponent, up to infinity: correct */
    return (uint16_t)(sign | half_bits);
}

float byocl_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t x;
    if (exp == 0) {
        if (man == 0) {
            x = sign;
        } else { /* subnormal: normalize */
            int e = -1;
            do {
                man <<= 1;
                e++;
            } while (!(man & 0x400u));
            x = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
        }
    } else if (exp == 31) {
        x = sign | 0x7f800000u | (man << 13);
    } else {
        x = sign | ((exp - 15 + 127) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* ------------------------------------------------------------ bfloat16 */

uint16_t byocl_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) /* NaN: truncation could leave infinity */
        return (uint16_t)((x >> 16) | 0x40u);
    return (uint16_t)(x >> 16);
}

float byocl_bf16_to_f32(uint16_t b)
{
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* ------------------------------------------------------ element access */

double byocl_tensor_get(const byocl_tensor *t, int64_t i)
{
    const void *p = t->data;
    switch (t->dtype) {
    case BYOCL_FLOAT32: return ((const float *)p)[i];
    case BYOCL_FLOAT16: return byocl_f16_to_f32(((const uint16_t *)p)[i]);
    case BYOCL_INT32: return ((const int32_t *)p)[i];
    case BYOCL_INT64: return (double)((const int64_t *)p)[i];
    case BYOCL_INT8: return ((const int8_t *)p)[i];
    case BYOCL_UINT8: return ((const uint8_t *)p)[i];
    case BYOCL_BOOL: return ((const uint8_t *)p)[i] != 0;
    case BYOCL_FLOAT64: return ((const double *)p)[i];
    case BYOCL_INT16: return ((const int16_t *)p)[i];
    case BYOCL_UINT16: return ((const uint16_t *)p)[i];
    case BYOCL_UINT32: return ((const uint32_t *)p)[i];
    case BYOCL_UINT64: return (double)((const uint64_t *)p)[i];
    case BYOCL_BFLOAT16: return byocl_bf16_to_f32(((const uint16_t *)p)[i]);
    case BYOCL_DTYPE_COUNT: break;
    }
    return 0.0;
}

/* Truncates toward zero and wraps to 64 bits (two's complement), NaN -> 0, so that
 * out-of-range conversions are defined instead of undefined behaviour. */
static uint64_t double_to_wrapped_int(double v)
{
    if (isnan(v))
        return 0;
    v = trunc(v);
    if (fabs(v) < 9.2e18)
        return (uint64_t)(int64_t)v;
    double m = fmod(v, 18446744073709551616.0); /* 2^64 */
    if (m < 0)
        m += 18446744073709551616.0;
    return m >= 9223372036854775808.0 ? (uint64_t)(m - 9223372036854775808.0) + (1ull << 63)
                                      : (uint64_t)m;
}

void byocl_tensor_set(byocl_tensor *t, int64_t i, double v)
{
    void *p = t->data;
    switch (t->dtype) {
    case BYOCL_FLOAT32: ((float *)p)[i] = (float)v; break;
    case BYOCL_FLOAT16: ((uint16_t *)p)[i] = byocl_f32_to_f16((float)v); break;
    case BYOCL_INT32: ((int32_t *)p)[i] = (int32_t)(uint32_t)double_to_wrapped_int(v); break;
    case BYOCL_INT64: ((int64_t *)p)[i] = (int64_t)double_to_wrapped_int(v); break;
    case BYOCL_INT8: ((int8_t *)p)[i] = (int8_t)(uint8_t)double_to_wrapped_int(v); break;
    case BYOCL_UINT8: ((uint8_t *)p)[i] = (uint8_t)double_to_wrapped_int(v); break;
    case BYOCL_BOOL: ((uint8_t *)p)[i] = v != 0.0; break;
    case BYOCL_FLOAT64: ((double *)p)[i] = v; break;
    case BYOCL_INT16: ((int16_t *)p)[i] = (int16_t)(uint16_t)double_to_wrapped_int(v); break;
    case BYOCL_UINT16: ((uint16_t *)p)[i] = (uint16_t)double_to_wrapped_int(v); break;
    case BYOCL_UINT32: ((uint32_t *)p)[i] = (uint32_t)double_to_wrapped_int(v); break;
    case BYOCL_UINT64: ((uint64_t *)p)[i] = double_to_wrapped_int(v); break;
    case BYOCL_BFLOAT16: ((uint16_t *)p)[i] = byocl_f32_to_bf16((float)v); break;
    case BYOCL_DTYPE_COUNT: break;
    }
}

bool byocl_tensor_equal(const byocl_tensor *a, const byocl_tensor *b)
{
    return a->dtype == b->dtype && byocl_shape_equal(&a->shape, &b->shape) &&
           (a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0);
}

/* splitmix64: tiny, portable and good enough for test data and weights. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void byocl_tensor_fill_random(byocl_tensor *t, uint64_t seed, double lo, double hi)
{
    uint64_t state = seed;
    for (int64_t i = 0; i < t->numel; i++) {
        double u = (double)(splitmix64(&state) >> 11) * 0x1.0p-53; /* [0, 1) */
        double v = lo + (hi - lo) * u;
        if (t->dtype == BYOCL_BOOL)
            v = u < 0.5 ? 0.0 : 1.0;
        else if (!byocl_dtype_is_float(t->dtype))
            v = floor(v);
        byocl_tensor_set(t, i, v);
    }
}

/* ------------------------------------------- views over foreign memory (tensor_impl.h) */

byocl_tensor *base_tensor_wrap(byocl_dtype dtype, const byocl_shape *shape, void *data,
                               byocl_error *err)
{
    int64_t numel;
    size_t nbytes;
    if (!tensor_size(dtype, shape, &numel, &nbytes, err))
        return NULL;
    byocl_tensor *t = calloc(1, sizeof *t);
    if (!t) {
        byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
        return NULL;
    }
    t->dtype = dtype;
    t->shape = *shape;
    t->numel = numel;
    t->nbytes = nbytes;
    t->refcount = 1;
    t->data = data;
    return t;
}

void base_tensor_wrap_free(byocl_tensor *t)
{
    if (t) {
        t->data = NULL; /* not ours: byocl_tensor_unref frees only the struct */
        byocl_tensor_unref(t);
    }
}
