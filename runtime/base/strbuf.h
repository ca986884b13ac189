/* Appending formatted text to a fixed buffer that truncates safely (messages, spellings). */
#ifndef BYOCL_STRBUF_H
#define BYOCL_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct byocl_strbuf {
    char *buf;
    size_t len; /* capacity, including the terminating NUL */
    size_t at;  /* characters wanted so far (may exceed len: the text was truncated) */
} byocl_strbuf;

/* Starts an empty string in buf[len] (len may be 0). */
void base_strbuf_init(byocl_strbuf *sb, char *buf, size_t len);
void base_strbuf_printf(byocl_strbuf *sb, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* How character c reads in a message: 'x' when printable, else byte 0x07. */
void base_char_describe(char c, char *buf, size_t len);

/* Whether s is one or more decimal digits and nothing else. */
bool base_str_all_digits(const char *s);

#endif
