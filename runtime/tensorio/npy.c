/* .npy files: numpy's array format. A magic string, a version, a header that is a Python
 * dict literal ({'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }) padded with
 * spaces to a multiple of 64 bytes, then the raw C-order data. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/tensor_io.h"
#include "base/file_util.h"

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};
#define NPY_PREFIX_V1 10 /* magic, major, minor, uint16 header length */
#define NPY_PREFIX_V2 12 /* magic, major, minor, uint32 header length */
#define NPY_ALIGN 64
/* numpy pads the header so that the first dimension can grow in place. */
#define NPY_GROWTH_AXIS_MAX_DIGITS 21

/* numpy's descr for each byocl dtype, in byocl_dtype order; NULL for bfloat16, which numpy
 * lacks (such tensors are refused, not written under another dtype's name). */
static const char *const npy_descr[BYOCL_DTYPE_COUNT] = {
    [BYOCL_FLOAT32] = "<f4", [BYOCL_FLOAT16] = "<f2", [BYOCL_INT32] = "<i4",
    [BYOCL_INT64] = "<i8",   [BYOCL_INT8] = "|i1",    [BYOCL_UINT8] = "|u1",
    [BYOCL_BOOL] = "|b1",    [BYOCL_FLOAT64] = "<f8",    [BYOCL_INT16] = "<i2",
    [BYOCL_UINT16] = "<u2",  [BYOCL_UINT32] = "<u4",    [BYOCL_UINT64] = "<u8",
};
#define NPY_SUPPORTED                                                                    \
    "'<f4', '<f2', '<i4', '<i8', '|i1', '|u1', '|b1', '<f8', '<i2', '<u2', '<u4', '<u8'"

static bool host_is_little_endian(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

/* ------------------------------------------------------- header parsing */

typedef struct header_scan {
    const char *p, *end;
    const char *what; /* file name for messages */
    byocl_error *err;
} header_scan;

static void skip_space(header_scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

static byocl_status header_error(header_scan *s, const char *expected)
{
    char found[16];
    if (s->p >= s->end)
        snprintf(found, sizeof found, "the end");
    else if (isprint((unsigned char)*s->p))
        snprintf(found, sizeof found, "'%c'", *s->p);
    else
        snprintf(found, sizeof found, "byte 0x%02x", (unsigned char)*s->p);
    return byocl_error_set(s->err, BYOCL_ERR_INVALID,
                           "%s: malformed .npy header: expected %s, found %s", s->what,
                           expected, found);
}

static bool accept(header_scan *s, char c)
{
    skip_space(s);
    if (s->p < s->end && *s->p == c) {
        s->p++;
        return true;
    }
    return false;
}

/* A Python string literal in ' or " quotes (numpy's headers need no escapes). */
static byocl_status scan_string(header_scan *s, char *buf, size_t len)
{
    skip_space(s);
    if (s->p >= s->end || (*s->p != '\'' && *s->p != '"'))
        return header_error(s, "a quoted string");
    char quote = *s->p++;
    const char *start = s->p;
    while (s->p < s->end && *s->p != quote)
        s->p++;
    if (s->p >= s->end)
        return header_error(s, "a closing quote");
    size_t n = (size_t)(s->p - start);
    s->p++;
    if (n >= len)
        n = len - 1; /* too long for any known key or descr: still reported by value */
    memcpy(buf, start, n);
    buf[n] = '\0';
    return BYOCL_OK;
}

static byocl_status scan_bool(header_scan *s, bool *out)
{
    skip_space(s);
    size_t left = (size_t)(s->end - s->p);
    if (left >= 4 && memcmp(s->p, "True", 4) == 0) {
        s->p += 4;
        *out = true;
        return BYOCL_OK;
    }
    if (left >= 5 && memcmp(s->p, "False", 5) == 0) {
        s->p += 5;
        *out = false;
        return BYOCL_OK;
    }
    return header_error(s, "True or False");
}

/* A tuple of non-negative integers: (), (5,), (2, 3). Python 2 files may write 3L. */
static byocl_status scan_shape(header_scan *s, byocl_shape *shape)
{
    shape->rank = 0;
    if (!accept(s, '('))
        return header_error(s, "'(' opening the shape");
    if (accept(s, ')'))
        return BYOCL_OK;
    for (;;) {
        skip_space(s);
        if (s->p >= s->end || !isdigit((unsigned char)*s->p))
            return header_error(s, "a non-negative dimension");
        int64_t d = 0;
        while (s->p < s->end && isdigit((unsigned char)*s->p)) {
            int digit = *s->p++ - '0';
            if (d > (INT64_MAX - digit) / 10)
                return byocl_error_set(s->err, BYOCL_ERR_INVALID,
                                       "%s: a dimension in the .npy header is too large",
                                       s->what);
            d = d * 10 + digit;
        }
        if (s->p < s->end && (*s->p == 'L' || *s->p == 'l'))
            s->p++;
        if (shape->rank == BYOCL_MAX_RANK)
            return byocl_error_set(s->err, BYOCL_ERR_UNSUPPORTED,
                                   "%s: rank exceeds byocl's maximum of %d", s->what,
                                   BYOCL_MAX_RANK);
        shape->dims[shape->rank++] = d;
        bool comma = accept(s, ',');
        if (accept(s, ')'))
            return BYOCL_OK;
        if (!comma)
            return header_error(s, "',' or ')' in the shape");
    }
}

typedef struct npy_header {
    char descr[64];
    bool fortran_order;
    byocl_shape shape;
} npy_header;

/* Parses the header dict: the three keys in any order, spaces anywhere, a trailing comma. */
static byocl_status parse_header_dict(const char *what, const char *text, size_t len,
                                      npy_header *h, byocl_error *err)
{
    header_scan s = {text, text + len, what, err};
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    byocl_status st;
    if (!accept(&s, '{'))
        return header_error(&s, "'{'");
    while (!accept(&s, '}')) {
        char key[32];
        if ((st = scan_string(&s, key, sizeof key)) != BYOCL_OK)
            return st;
        if (!accept(&s, ':'))
            return header_error(&s, "':'");
        bool *seen;
        if (strcmp(key, "descr") == 0) {
            seen = &seen_descr;
            st = scan_string(&s, h->descr, sizeof h->descr);
        } else if (strcmp(key, "fortran_order") == 0) {
            seen = &seen_fortran;
            st = scan_bool(&s, &h->fortran_order);
        } else if (strcmp(key, "shape") == 0) {
            seen = &seen_shape;
            st = scan_shape(&s, &h->shape);
        } else {
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "%s: malformed .npy header: unexpected key '%s'", what, key);
        }
        if (st != BYOCL_OK)
            return st;
        if (*seen)
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "%s: malformed .npy header: key '%s' appears twice", what, key);
        *seen = true;
        if (!accept(&s, ',')) {
            if (accept(&s, '}'))
                break;
            return header_error(&s, "',' or '}'");
        }
    }
    skip_space(&s);
    if (s.p != s.end)
        return header_error(&s, "only padding after '}'");
    const char *missing = !seen_descr ? "descr" : !seen_fortran ? "fortran_order"
                        : !seen_shape ? "shape" : NULL;
    if (missing)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "%s: malformed .npy header: no '%s' key", what, missing);
    return BYOCL_OK;
}

/* Maps a descr to a byocl dtype. Byte order: '<' little, '>' big, '=' native, '|' not
 * applicable (single bytes); one-byte types accept any. */
static byocl_status descr_to_dtype(const char *what, const char *descr, byocl_dtype *out,
                                   byocl_error *err)
{
    static const char *const codes[BYOCL_DTYPE_COUNT] = {
        [BYOCL_FLOAT32] = "f4", [BYOCL_FLOAT16] = "f2", [BYOCL_INT32] = "i4",
        [BYOCL_INT64] = "i8",   [BYOCL_INT8] = "i1",    [BYOCL_UINT8] = "u1",
        [BYOCL_BOOL] = "b1",    [BYOCL_FLOAT64] = "f8",    [BYOCL_INT16] = "i2",
        [BYOCL_UINT16] = "u2",  [BYOCL_UINT32] = "u4",    [BYOCL_UINT64] = "u8",
    };
    char order = strchr("<>=|", descr[0]) && descr[0] ? descr[0] : '=';
    const char *code = descr + (descr[0] == order);
    for (int d = 0; d < BYOCL_DTYPE_COUNT; d++) {
        if (!codes[d] || strcmp(code, codes[d]) != 0) /* bfloat16 has none */
            continue;
        bool one_byte = byocl_dtype_size((byocl_dtype)d) == 1;
        if (order == '=')
            order = host_is_little_endian() ? '<' : '>';
        if (!one_byte && order == '>')
            return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                                   "%s: big-endian data ('%s') is not supported; save it "
                                   "little-endian (e.g. a.astype('<%s'))",
                                   what, descr, code);
        if (one_byte || order == '<') {
            *out = (byocl_dtype)d;
            return BYOCL_OK;
        }
        break;
    }
    return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                           "%s: unsupported dtype '%s' (byocl reads " NPY_SUPPORTED ")", what,
                           descr);
}

static uint32_t read_le(const unsigned char *p, int n)
{
    uint32_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

byocl_status byocl_npy_read_mem(const void *data, size_t len, const char *what,
                                byocl_tensor **out, byocl_error *err)
{
    const unsigned char *bytes = data;
    *out = NULL;
    if (!what)
        what = "<memory>";
    if (len < NPY_PREFIX_V1 || memcmp(bytes, npy_magic, sizeof npy_magic) != 0)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "%s: not a .npy file (no \\x93NUMPY magic)",
                               what);
    int major = bytes[6], minor = bytes[7];
    if (major < 1 || major > 3 || minor != 0)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "%s: unsupported .npy format version %d.%d (byocl reads 1.0, "
                               "2.0 and 3.0)",
                               what, major, minor);
    size_t prefix = major == 1 ? NPY_PREFIX_V1 : NPY_PREFIX_V2;
    if (len < prefix)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "%s: truncated header: expected %zu bytes, found %zu", what,
                               prefix, len);
    size_t header_len = read_le(bytes + 8, major == 1 ? 2 : 4);
    if (header_len > len - prefix)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "%s: truncated header: expected %zu bytes, found %zu", what,
                               prefix + header_len, len);
    npy_header h;
    memset(&h, 0, sizeof h);
    byocl_status st = parse_header_dict(what, (const char *)bytes + prefix, header_len, &h, err);
    if (st != BYOCL_OK)
        return st;
    if (h.fortran_order)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "%s: Fortran-order arrays are not supported; save a C-order "
                               "array (np.ascontiguousarray)",
                               what);
    byocl_dtype dtype = BYOCL_FLOAT32;
    if ((st = descr_to_dtype(what, h.descr, &dtype, err)) != BYOCL_OK)
        return st;
    char shape_text[256];
    int64_t numel = byocl_shape_numel(&h.shape);
    size_t esize = byocl_dtype_size(dtype);
    if (numel < 0 || (uint64_t)numel > SIZE_MAX / esize)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "%s: shape %s is too large", what,
                               byocl_shape_str(&h.shape, shape_text, sizeof shape_text));
    size_t nbytes = (size_t)numel * esize;
    size_t avail = len - prefix - header_len;
    if (avail < nbytes)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "%s: truncated data: expected %zu bytes for %s %s, found %zu",
                               what, nbytes, byocl_dtype_name(dtype),
                               byocl_shape_str(&h.shape, shape_text, sizeof shape_text), avail);
    byocl_tensor *t = byocl_tensor_from_data(dtype, &h.shape, bytes + prefix + header_len, err);
    if (!t) {
        byocl_error_prefix(err, "%s: ", what);
        return err ? err->status : BYOCL_ERR_NOMEM;
    }
    if (dtype == BYOCL_BOOL) { /* any non-zero byte is True to numpy; byocl keeps 0/1 */
        uint8_t *b = byocl_tensor_data(t);
        for (size_t i = 0; i < nbytes; i++)
            b[i] = b[i] != 0;
    }
    *out = t;
    return BYOCL_OK;
}

byocl_status byocl_npy_read(const char *path, byocl_tensor **out, byocl_error *err)
{
    void *data;
    size_t len;
    *out = NULL;
    byocl_status st = base_file_read_all(path, &data, &len, err);
    if (st != BYOCL_OK)
        return st;
    st = byocl_npy_read_mem(data, len, path, out, err);
    free(data);
    return st;
}

/* ------------------------------------------------------------- writing */

/* The header exactly as numpy 1.x writes it (format version 1.0), so that byocl's files
 * are byte-identical to np.save's. Returns its length, or 0 when `buf` is too small. */
static size_t encode_header(const byocl_tensor *t, char *buf, size_t cap)
{
    const byocl_shape *s = byocl_tensor_shape(t);
    char dict[512];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                     npy_descr[byocl_tensor_dtype(t)]);
    for (int i = 0; i < s->rank; i++)
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%s%lld", i ? ", " : "",
                      (long long)s->dims[i]);
    n += snprintf(dict + n, sizeof dict - (size_t)n, "%s), }", s->rank == 1 ? "," : "");
    if (s->rank > 0) {
        int digits = snprintf(NULL, 0, "%lld", (long long)s->dims[0]);
        for (int i = digits; i < NPY_GROWTH_AXIS_MAX_DIGITS; i++)
            dict[n++] = ' ';
    }
    size_t hlen = (size_t)n + 1; /* the final '\n' */
    size_t pad = NPY_ALIGN - (NPY_PREFIX_V1 + hlen) % NPY_ALIGN;
    size_t total = NPY_PREFIX_V1 + hlen + pad;
    if (total > cap)
        return 0;
    memcpy(buf, npy_magic, sizeof npy_magic);
    buf[6] = 1;
    buf[7] = 0;
    buf[8] = (char)((hlen + pad) & 0xff);
    buf[9] = (char)((hlen + pad) >> 8);
    memcpy(buf + NPY_PREFIX_V1, dict, (size_t)n);
    memset(buf + NPY_PREFIX_V1 + n, ' ', pad);
    buf[total - 1] = '\n';
    return total;
}

#define NPY_HEADER_MAX 1024 /* rank <= 8 with 19-digit dims fits with room to spare */

static byocl_status check_writable(const byocl_tensor *t, byocl_error *err)
{
    if (!t)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "no tensor to write");
    if (!host_is_little_endian())
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               ".npy writing needs a little-endian host");
    if (!npy_descr[byocl_tensor_dtype(t)]) /* bfloat16 */
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "a %s tensor cannot be written as .npy: numpy has no %s "
                               "(cast it to float32 first)",
                               byocl_dtype_name(byocl_tensor_dtype(t)),
                               byocl_dtype_name(byocl_tensor_dtype(t)));
    return BYOCL_OK;
}

byocl_status byocl_npy_encode(const byocl_tensor *t, void **out, size_t *out_len,
                              byocl_error *err)
{
    *out = NULL;
    *out_len = 0;
    byocl_status st = check_writable(t, err);
    if (st != BYOCL_OK)
        return st;
    char header[NPY_HEADER_MAX];
    size_t hlen = encode_header(t, header, sizeof header);
    size_t nbytes = byocl_tensor_nbytes(t);
    char *buf = malloc(hlen + nbytes);
    if (!buf)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory encoding a .npy of %zu bytes",
                               hlen + nbytes);
    memcpy(buf, header, hlen);
    if (nbytes)
        memcpy(buf + hlen, byocl_tensor_cdata(t), nbytes);
    *out = buf;
    *out_len = hlen + nbytes;
    return BYOCL_OK;
}

byocl_status byocl_npy_write(const char *path, const byocl_tensor *t, byocl_error *err)
{
    byocl_status st = check_writable(t, err);
    if (st != BYOCL_OK)
        return st;
    char header[NPY_HEADER_MAX];
    byocl_file_part parts[2] = {
        {header, encode_header(t, header, sizeof header)},
        {byocl_tensor_cdata(t), byocl_tensor_nbytes(t)},
    };
    return base_file_write_atomic(path, parts, 2, err);
}
