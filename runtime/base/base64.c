/* Base64 (see base64.h). */
#include "base64.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "strbuf.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *base_base64_encode(const void *data, size_t len)
{
    const unsigned char *in = data;
    if (len > (SIZE_MAX - 1) / 4 * 3 - 2)
        return NULL;
    char *out = malloc((len + 2) / 3 * 4 + 1);
    if (!out)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < len; i += 3) {
        size_t left = len - i;
        uint32_t v = (uint32_t)in[i] << 16;
        if (left > 1)
            v |= (uint32_t)in[i + 1] << 8;
        if (left > 2)
            v |= in[i + 2];
        out[n++] = alphabet[(v >> 18) & 63];
        out[n++] = alphabet[(v >> 12) & 63];
        out[n++] = left > 1 ? alphabet[(v >> 6) & 63] : '=';
        out[n++] = left > 2 ? alphabet[v & 63] : '=';
    }
    out[n] = '\0';
    return out;
}

/* The 6-bit value of a base64 character, or -1. */
static int sextet(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

byocl_status base_base64_decode(const char *text, size_t len, void **out, size_t *out_len,
                                byocl_error *err)
{
    *out = NULL;
    *out_len = 0;
    if (len % 4 != 0)
        return byocl_error_set(err, BYOCL_ERR_PARSE,
                               "%zu characters, not a multiple of 4 (base64 is cut short or "
                               "lacks its '=' padding)",
                               len);
    size_t pad = 0;
    if (len >= 4 && text[len - 1] == '=')
        pad = text[len - 2] == '=' ? 2 : 1;
    for (size_t i = 0; i < len - pad; i++) {
        if (sextet(text[i]) < 0) {
            char what[24];
            base_char_describe(text[i], what, sizeof what);
            return byocl_error_set(err, BYOCL_ERR_PARSE, "character %zu is %s, not base64%s", i,
                                   what, text[i] == '=' ? " (padding before the end)" : "");
        }
    }
    size_t n_out = len / 4 * 3 - pad;
    unsigned char *bytes = malloc(n_out ? n_out : 1);
    if (!bytes)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory decoding %zu bytes of base64",
                               n_out);
    size_t n = 0;
    for (size_t i = 0; i < len; i += 4) {
        uint32_t v = 0;
        for (size_t k = 0; k < 4; k++)
            v = v << 6 | (uint32_t)(i + k < len - pad ? sextet(text[i + k]) : 0);
        bytes[n++] = (unsigned char)(v >> 16);
        if (n < n_out)
            bytes[n++] = (unsigned char)(v >> 8);
        if (n < n_out)
            bytes[n++] = (unsigned char)v;
    }
    *out = bytes;
    *out_len = n_out;
    return BYOCL_OK;
}
