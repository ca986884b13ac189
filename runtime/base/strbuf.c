#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>

void base_strbuf_init(byocl_strbuf *sb, char *buf, size_t len)
{
    sb->buf = buf;
    sb->len = len;
    sb->at = 0;
    if (len)
        buf[0] = '\0';
}

void base_strbuf_printf(byocl_strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(sb->at < sb->len ? sb->buf + sb->at : NULL,
                      sb->at < sb->len ? sb->len - sb->at : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        sb->at += (size_t)n;
}

void base_char_describe(char c, char *buf, size_t len)
{
    unsigned char u = (unsigned char)c;
    if (u >= 0x20 && u < 0x7f)
        snprintf(buf, len, "'%c'", c);
    else
        snprintf(buf, len, "byte 0x%02x", u);
}

bool base_str_all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}
