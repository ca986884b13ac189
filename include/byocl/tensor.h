/* byocl: dtypes, shapes and host tensors (reference-counted, C order). */
#ifndef BYOCL_TENSOR_H
#define BYOCL_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "byocl/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum byocl_dtype {
    BYOCL_FLOAT32 = 0,
    BYOCL_FLOAT16,
    BYOCL_INT32,
    BYOCL_INT64,
    BYOCL_INT8,
    BYOCL_UINT8,
    BYOCL_BOOL,
    BYOCL_FLOAT64, /* appended so that the older dtypes keep their numbers */
    BYOCL_INT16,
    BYOCL_UINT16,
    BYOCL_UINT32,
    BYOCL_UINT64,
    BYOCL_BFLOAT16, /* the top 16 bits of a float32 (TVM's bfloat16) */
    BYOCL_DTYPE_COUNT
} byocl_dtype;

/* "float32", "float16", "int32", "int64", "int8", "uint8", "bool", "float64", "int16",
 * "uint16", "uint32", "uint64", "bfloat16". */
const char *byocl_dtype_name(byocl_dtype dtype);
/* Every dtype's name, in byocl_dtype order: what error messages list as supported. */
#define BYOCL_DTYPE_NAMES                                                                  \
    "float32, float16, int32, int64, int8, uint8, bool, float64, int16, uint16, uint32, "    \
    "uint64, bfloat16"
/* Parses a dtype name; returns false for an unknown name. */
bool byocl_dtype_from_name(const char *name, byocl_dtype *out);
size_t byocl_dtype_size(byocl_dtype dtype);
bool byocl_dtype_is_float(byocl_dtype dtype);
/* uint8, uint16, uint32, uint64 and bool: zero-extended, compared and divided unsigned. */
bool byocl_dtype_is_unsigned(byocl_dtype dtype);

#define BYOCL_MAX_RANK 8

typedef struct byocl_shape {
    int rank;
    int64_t dims[BYOCL_MAX_RANK];
} byocl_shape;

/* Builds a shape from `rank` dimensions. */
byocl_shape byocl_shape_make(int rank, const int64_t *dims);
/* Number of elements; -1 when a dimension is negative or the product overflows int64. */
int64_t byocl_shape_numel(const byocl_shape *shape);
bool byocl_shape_equal(const byocl_shape *a, const byocl_shape *b);
/* "(1, 3, 224, 224)" into buf; returns buf. */
char *byocl_shape_str(const byocl_shape *shape, char *buf, size_t len);

/* A host tensor: dtype, shape, contiguous C-order data. Reference-counted so that
 * constants can be shared between the modules that passes produce. */
typedef struct byocl_tensor byocl_tensor;

/* Zero-filled tensor. NULL (with err set) on a bad shape, an overflowing size or no memory. */
byocl_tensor *byocl_tensor_new(byocl_dtype dtype, const byocl_shape *shape, byocl_error *err);
/* A new tensor with a copy of `data` (nbytes = numel * dtype size). */
byocl_tensor *byocl_tensor_from_data(byocl_dtype dtype, const byocl_shape *shape,
                                     const void *data, byocl_error *err);
/* A deep copy. */
byocl_tensor *byocl_tensor_clone(const byocl_tensor *t, byocl_error *err);
byocl_tensor *byocl_tensor_ref(byocl_tensor *t);
void byocl_tensor_unref(byocl_tensor *t); /* NULL is fine */

byocl_dtype byocl_tensor_dtype(const byocl_tensor *t);
const byocl_shape *byocl_tensor_shape(const byocl_tensor *t);
int64_t byocl_tensor_numel(const byocl_tensor *t);
size_t byocl_tensor_nbytes(const byocl_tensor *t);
void *byocl_tensor_data(byocl_tensor *t);
const void *byocl_tensor_cdata(const byocl_tensor *t);

/* Element i (flat, C order) converted to double, whatever the dtype (float16 decoded). */
double byocl_tensor_get(const byocl_tensor *t, int64_t i);
/* Stores `v` at flat index i with the conversion `cast` uses: float16 round-to-nearest-even,
 * integers truncated toward zero and wrapped to the dtype's width, bool = (v != 0). */
void byocl_tensor_set(byocl_tensor *t, int64_t i, double v);

/* Fills the tensor with deterministic pseudo-random values uniform in [lo, hi) from `seed`
 * (the same seed gives the same values on every machine); integer dtypes get integers in
 * [lo, hi), bool gets 0/1. */
void byocl_tensor_fill_random(byocl_tensor *t, uint64_t seed, double lo, double hi);

/* True when both have the same dtype, shape and bytes. */
bool byocl_tensor_equal(const byocl_tensor *a, const byocl_tensor *b);

/* ------------------------------------------------------------ comparing */

/* The tolerance of byocl_tensor_compare: an element is close when
 * |actual - expected| <= atol + rtol * |expected|. Both 0: equal values only. */
typedef struct byocl_compare_options {
    double rtol, atol;
} byocl_compare_options;

/* How far `actual` is from `expected`. The error of one element is 0 where the two are
 * equal (also the same infinity) or both NaN; NaN where just one is NaN (never close);
 * else |actual - expected| (infinite where an infinity meets another value, never close). */
typedef struct byocl_compare_result {
    bool same_dtype, same_shape; /* when either is false, nothing was compared, and every
                                    element of `expected` counts as a mismatch */
    int64_t n_mismatches;   /* elements beyond the tolerance */
    int64_t first_mismatch; /* flat index of the first; -1: none (0 on a dtype/shape mismatch) */
    double max_abs_error;   /* the largest error; NaN when any is NaN; infinite on a
                               dtype/shape mismatch */
    int64_t worst_index;    /* the element of max_abs_error (the first NaN error, else the
                               first largest); -1 when every error is 0 */
    double max_rel_error;   /* the largest error / |expected| (infinite where expected is 0
                               and the error is not); NaN when any error is NaN */
    double sum_sq_error;    /* the sum of the squared errors (NaN when an error is NaN), and */
    double sum_sq_expected; /* of the squares of expected's finite elements: for L2 norms,
                               also over several tensors */
    bool ok;                /* same dtype and shape, and no mismatch */
} byocl_compare_result;

/* Compares the two tensors element by element, as doubles (byocl_tensor_get: float16
 * decoded, integers and bool as their values), with `opt` (NULL: both tolerances 0).
 * A dtype or shape mismatch is a result (not ok), not an error; errors: a NULL tensor or
 * result, a tolerance that is negative or NaN. */
byocl_status byocl_tensor_compare(const byocl_tensor *actual, const byocl_tensor *expected,
                                  const byocl_compare_options *opt, byocl_compare_result *out,
                                  byocl_error *err);

/* IEEE binary16 <-> binary32. float -> half rounds to nearest even; NaN stays NaN,
 * overflow goes to infinity. */
uint16_t byocl_f32_to_f16(float f);
float byocl_f16_to_f32(uint16_t h);
/* bfloat16 <-> binary32. float -> bfloat16 truncates (keeps the top 16 bits), as ONNX's
 * Cast test data expects; a NaN stays a quiet NaN (its payload may sit in the low bits). */
uint16_t byocl_f32_to_bf16(float f);
float byocl_bf16_to_f32(uint16_t b);

#ifdef __cplusplus
}
#endif
#endif
