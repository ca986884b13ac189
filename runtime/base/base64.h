/* Base64 (RFC 4648, the standard alphabet with '=' padding): the text form of binary
 * blobs inside JSON, such as the tensors of TVM's #[metadata] section. */
#ifndef BYOCL_BASE64_H
#define BYOCL_BASE64_H

#include <stddef.h>

#include "byocl/error.h"

/* `len` bytes as base64 text: a malloc'ed NUL-terminated string, or NULL when out of
 * memory. */
char *base_base64_encode(const void *data, size_t len);

/* Decodes `len` characters of base64 into a malloc'ed buffer (*out, *out_len bytes; the
 * caller frees). The text must be whole: a multiple of 4 characters, padding only at the
 * end. Errors say what is wrong and at which character (0-based), e.g. "character 17 is
 * '!', not base64"; the caller adds where the text came from. */
byocl_status base_base64_decode(const char *text, size_t len, void **out, size_t *out_len,
                                byocl_error *err);

#endif
