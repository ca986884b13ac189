/* byocl_tensor_compare: the one tolerance check of replay, bisect, conformance, bench and
 * the tests. */
#include <math.h>

#include "byocl/tensor.h"

/* The error of one element (see byocl_compare_result). */
static double element_error(double a, double e)
{
    if (a == e || (isnan(a) && isnan(e)))
        return 0;
    if (isnan(a) || isnan(e))
        return NAN;
    return fabs(a - e);
}

/* Whether error `d` replaces `worst`: a NaN beats every number, the first NaN stays. */
static bool worse(double d, double worst)
{
    return isnan(d) ? !isnan(worst) : d > worst;
}

byocl_status byocl_tensor_compare(const byocl_tensor *actual, const byocl_tensor *expected,
                                  const byocl_compare_options *opt, byocl_compare_result *out,
                                  byocl_error *err)
{
    if (!actual || !expected || !out)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "byocl_tensor_compare: a tensor or the result is NULL");
    double rtol = opt ? opt->rtol : 0, atol = opt ? opt->atol : 0;
    if (!(rtol >= 0) || !(atol >= 0))
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "byocl_tensor_compare: rtol %g and atol %g must be numbers >= 0",
                               rtol, atol);
    *out = (byocl_compare_result){
        .same_dtype = byocl_tensor_dtype(actual) == byocl_tensor_dtype(expected),
        .same_shape = byocl_shape_equal(byocl_tensor_shape(actual), byocl_tensor_shape(expected)),
        .first_mismatch = -1,
        .worst_index = -1,
    };
    if (!out->same_dtype || !out->same_shape) {
        out->n_mismatches = byocl_tensor_numel(expected);
        out->first_mismatch = 0;
        out->max_abs_error = out->max_rel_error = out->sum_sq_error = INFINITY;
        return BYOCL_OK;
    }
    int64_t n = byocl_tensor_numel(expected);
    for (int64_t i = 0; i < n; i++) {
        double a = byocl_tensor_get(actual, i), e = byocl_tensor_get(expected, i);
        double d = element_error(a, e);
        bool close = d == 0 || (isfinite(d) && d <= atol + rtol * fabs(e));
        if (!close && out->n_mismatches++ == 0)
            out->first_mismatch = i;
        if (worse(d, out->max_abs_error)) {
            out->max_abs_error = d;
            out->worst_index = i;
        }
        double rel = d == 0 || !isfinite(d) ? d : e != 0 ? d / fabs(e) : INFINITY;
        if (worse(rel, out->max_rel_error))
            out->max_rel_error = rel;
        out->sum_sq_error += d * d;
        if (isfinite(e))
            out->sum_sq_expected += e * e;
    }
    out->ok = out->n_mismatches == 0;
    return BYOCL_OK;
}
