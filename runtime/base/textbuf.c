#include "textbuf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TEXTBUF_MIN_CAP = 256 };

bool base_textbuf_reserve(byocl_textbuf *b, size_t extra)
{
    if (b->oom)
        return false;
    if (extra > SIZE_MAX - 1 - b->len) {
        b->oom = true;
        return false;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return true;
    size_t cap = b->cap <= SIZE_MAX / 2 ? b->cap * 2 : SIZE_MAX;
    if (cap < need)
        cap = need;
    if (cap < TEXTBUF_MIN_CAP)
        cap = TEXTBUF_MIN_CAP;
    char *grown = realloc(b->data, cap);
    if (!grown) {
        b->oom = true;
        return false;
    }
    if (!b->data)
        grown[0] = '\0';
    b->data = grown;
    b->cap = cap;
    return true;
}

void base_textbuf_putn(byocl_textbuf *b, const void *s, size_t n)
{
    if (!base_textbuf_reserve(b, n))
        return;
    if (n)
        memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void base_textbuf_puts(byocl_textbuf *b, const char *s) { base_textbuf_putn(b, s, strlen(s)); }

void base_textbuf_putc(byocl_textbuf *b, char c) { base_textbuf_putn(b, &c, 1); }

void base_textbuf_vprintf(byocl_textbuf *b, const char *fmt, va_list ap)
{
    if (b->oom)
        return;
    /* Formatted straight into the room there is; only text that does not fit is
     * formatted a second time, after growing. */
    va_list again;
    va_copy(again, ap);
    size_t room = b->cap - b->len; /* 0 before the first allocation */
    int n = vsnprintf(room ? b->data + b->len : NULL, room, fmt, ap);
    if (n >= 0 && (size_t)n >= room) {
        if (base_textbuf_reserve(b, (size_t)n))
            vsnprintf(b->data + b->len, (size_t)n + 1, fmt, again);
        else
            n = -1;
    }
    va_end(again);
    if (n < 0) {
        if (b->data) /* a partial write must not stay behind the NUL */
            b->data[b->len] = '\0';
        return;
    }
    b->len += (size_t)n;
}

void base_textbuf_printf(byocl_textbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    base_textbuf_vprintf(b, fmt, ap);
    va_end(ap);
}

char *base_textbuf_take(byocl_textbuf *b)
{
    base_textbuf_reserve(b, 0);
    if (b->oom) {
        base_textbuf_free(b);
        return NULL;
    }
    char *s = b->data;
    *b = (byocl_textbuf){0};
    return s;
}

void base_textbuf_free(byocl_textbuf *b)
{
    free(b->data);
    *b = (byocl_textbuf){0};
}
