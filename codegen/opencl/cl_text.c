/* Growing text, float literals and the embedded templates. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl/cl_impl.h"
#include "opencl/cl_templates.h"

static bool text_reserve(clg_text *t, size_t extra)
{
    if (t->failed)
        return false;
    if (t->len + extra + 1 <= t->cap)
        return true;
    size_t cap = t->cap ? t->cap : 1024;
    while (cap < t->len + extra + 1)
        cap *= 2;
    char *s = realloc(t->s, cap);
    if (!s) {
        t->failed = true;
        return false;
    }
    t->s = s;
    t->cap = cap;
    return true;
}

void clg_text_puts(clg_text *t, const char *s)
{
    size_t n = strlen(s);
    if (!text_reserve(t, n))
        return;
    memcpy(t->s + t->len, s, n + 1);
    t->len += n;
}

void clg_text_printf(clg_text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !text_reserve(t, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

char *clg_text_take(clg_text *t)
{
    if (!t->failed && !t->s)
        text_reserve(t, 0);
    if (t->failed) {
        clg_text_free(t);
        return NULL;
    }
    t->s[t->len] = '\0';
    char *s = t->s;
    *t = (clg_text){0};
    return s;
}

void clg_text_free(clg_text *t)
{
    free(t->s);
    *t = (clg_text){0};
}

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

const char *byocl_cl_template_text(const char *name)
{
    for (int i = 0; i < byocl_cl_templates_count; i++)
        if (strcmp(byocl_cl_templates[i].name, name) == 0)
            return byocl_cl_templates[i].text;
    return NULL;
}
