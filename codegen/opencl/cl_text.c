/* Float literals and the embedded templates. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_impl.h"
#include "cl_templates.h"

void clg_float_literal(double v, char *buf, size_t len)
{
    float f = (float)v;
    if (isnan(f)) {
        snprintf(buf, len, "NAN");
        return;
    }
    if (isinf(f)) {
        snprintf(buf, len, f < 0 ? "(-INFINITY)" : "INFINITY");
        return;
    }
    /* The shortest %g spelling that reads back as the same float. */
    char digits[48];
    for (int precision = 6; precision <= 9; precision++) {
        snprintf(digits, sizeof digits, "%.*g", precision, (double)f);
        if (strtof(digits, NULL) == f)
            break;
    }
    bool plain_integer = strpbrk(digits, ".eE") == NULL;
    bool negative = signbit(f); /* -0.0f too */
    snprintf(buf, len, "%s%s%sf%s", negative ? "(" : "", digits, plain_integer ? ".0" : "",
             negative ? ")" : "");
}

const char *clg_template_text(const char *name)
{
    for (int i = 0; i < clg_templates_count; i++)
        if (strcmp(clg_templates[i].name, name) == 0)
            return clg_templates[i].text;
    return NULL;
}
