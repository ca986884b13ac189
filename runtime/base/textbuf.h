/* Text that grows as it is appended to: the one growable buffer (byocl_strbuf, in strbuf.h,
 * is the fixed-size one that truncates).
 *
 * Start from {0}. An allocation failure sets `oom`, after which every append does nothing,
 * so that a writer appends freely and checks once, at the end (base_textbuf_take returns
 * NULL). The fields may be read, and data[len..cap) written after base_textbuf_reserve. */
#ifndef BYOCL_TEXTBUF_H
#define BYOCL_TEXTBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct byocl_textbuf {
    char *data; /* NUL-terminated once anything is appended or reserved; NULL before */
    size_t len; /* characters, without the NUL */
    size_t cap; /* bytes allocated */
    bool oom;   /* an allocation failed: the text is incomplete */
} byocl_textbuf;

#if defined(__GNUC__)
#define BYOCL_TEXTBUF_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define BYOCL_TEXTBUF_PRINTF(f, a)
#endif

/* Room for `extra` more bytes and the NUL after data[len]; false (oom set) when there is
 * none. The first allocation is the size asked for (at least a small minimum), later
 * ones at least double, so a known size costs one allocation and appends stay linear. */
bool base_textbuf_reserve(byocl_textbuf *b, size_t extra);

/* Appends n bytes (any bytes: a NUL among them is kept, len counts it). */
void base_textbuf_putn(byocl_textbuf *b, const void *s, size_t n);
void base_textbuf_puts(byocl_textbuf *b, const char *s);
void base_textbuf_putc(byocl_textbuf *b, char c);
void base_textbuf_printf(byocl_textbuf *b, const char *fmt, ...) BYOCL_TEXTBUF_PRINTF(2, 3);
void base_textbuf_vprintf(byocl_textbuf *b, const char *fmt, va_list ap)
    BYOCL_TEXTBUF_PRINTF(2, 0);

/* The text, malloc'ed ("" when nothing was appended), and the buffer left empty ({0});
 * NULL when an allocation failed (the buffer is freed then too). */
char *base_textbuf_take(byocl_textbuf *b);
void base_textbuf_free(byocl_textbuf *b);

#endif
