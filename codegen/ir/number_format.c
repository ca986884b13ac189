/* Spelling real numbers the way TVM's text printer does, shortest first. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_impl.h"

static bool reads_back(const char *text, double v, int bits)
{
    double back = strtod(text, NULL);
    if (bits == 16)
        return byocl_f32_to_f16((float)back) == byocl_f32_to_f16((float)v);
    if (bits == 32)
        return (float)back == (float)v;
    return back == v;
}

void ir_format_real(double v, int bits, char *buf, size_t len)
{
    if (isnan(v)) {
        snprintf(buf, len, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, len, v < 0 ? "-inf" : "inf");
        return;
    }
    int precision = 1;
    while (precision < 17 && (snprintf(buf, len, "%.*g", precision, v), !reads_back(buf, v, bits)))
        precision++;
    snprintf(buf, len, "%.*g", precision, v);
    /* %g switches to an exponent once it has fewer digits than the integer part; TVM
     * writes numbers below 1e6 in full (1000f, not 1e+03f). */
    const char *e = strchr(buf, 'e');
    int exponent = e ? atoi(e + 1) : -1;
    if (exponent >= 0 && exponent < 6)
        snprintf(buf, len, "%.*g", exponent + 1 > precision ? exponent + 1 : precision, v);
}
