/* TVM's #[metadata] section and NDArray blobs (see metadata.h). */
#include "metadata.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "byocl/runtime.h"
#include "base/json.h"

#define NDARRAY_MAGIC 0xDD5E40F096B4A13FULL
#define DL_BOOL_CODE 6 /* kDLBool of newer DLPack headers */
#define CONSTANT_KIND "relay.Constant"

/* ------------------------------------------------------------ NDArray blobs */

typedef struct blob_reader {
    const unsigned char *p, *end;
    const unsigned char *start;
} blob_reader;

/* The next n bytes as a little-endian unsigned integer (n <= 8); false past the end. */
static bool blob_uint(blob_reader *b, int n, uint64_t *out)
{
    if (b->end - b->p < n)
        return false;
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | b->p[i];
    b->p += n;
    *out = v;
    return true;
}

/* "float64", "int4", "bfloat16": a DLPack type as TVM names it, for errors. */
static void dl_type_name(DLDataType t, char *buf, size_t len)
{
    static const char *const codes[] = {"int", "uint", "float", "handle", "bfloat", "complex",
                                        "bool"};
    if (t.code < sizeof codes / sizeof codes[0])
        snprintf(buf, len, "%s%u", codes[t.code], (unsigned)t.bits);
    else
        snprintf(buf, len, "type code %u with %u bits", (unsigned)t.code, (unsigned)t.bits);
}

static bool dtype_from_blob(DLDataType t, byocl_dtype *out)
{
    if (t.code == DL_BOOL_CODE && t.bits == 8 && t.lanes == 1) {
        *out = BYOCL_BOOL;
        return true;
    }
    return byocl_dtype_from_dlpack(t, out);
}

byocl_status text_metadata_decode_ndarray(const void *blob, size_t len, byocl_tensor **out,
                                          byocl_error *err)
{
    *out = NULL;
    blob_reader b = {blob, (const unsigned char *)blob + len, blob};
    uint64_t magic, reserved, dev_type, dev_id, ndim, code, bits, lanes;
    if (!blob_uint(&b, 8, &magic))
        return byocl_error_set(err, BYOCL_ERR_PARSE,
                               "%zu bytes, too short for a TVM NDArray (its header alone is 40 "
                               "bytes or more)",
                               len);
    if (magic != NDARRAY_MAGIC)
        return byocl_error_set(err, BYOCL_ERR_PARSE,
                               "wrong magic 0x%016llX (a TVM NDArray starts with "
                               "0x%016llX)",
                               (unsigned long long)magic, NDARRAY_MAGIC);
    if (!blob_uint(&b, 8, &reserved) || !blob_uint(&b, 4, &dev_type) ||
        !blob_uint(&b, 4, &dev_id) || !blob_uint(&b, 4, &ndim) || !blob_uint(&b, 1, &code) ||
        !blob_uint(&b, 1, &bits) || !blob_uint(&b, 2, &lanes))
        return byocl_error_set(err, BYOCL_ERR_PARSE,
                               "%zu bytes end inside the NDArray header", len);
    if ((int32_t)ndim < 0 || ndim > BYOCL_MAX_RANK)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "rank %d is not supported (0 to %d)", (int)(int32_t)ndim,
                               BYOCL_MAX_RANK);
    DLDataType dl = {(uint8_t)code, (uint8_t)bits, (uint16_t)lanes};
    byocl_dtype dtype;
    if (!dtype_from_blob(dl, &dtype)) {
        char name[48];
        dl_type_name(dl, name, sizeof name);
        if (lanes != 1)
            return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                                   "dtype %sx%u: vector dtypes are not supported", name,
                                   (unsigned)lanes);
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "dtype %s (code %u, bits %u) is not one byocl has "
                               "(" BYOCL_DTYPE_NAMES ")",
                               name, (unsigned)code, (unsigned)bits);
    }
    int64_t dims[BYOCL_MAX_RANK];
    for (int i = 0; i < (int)ndim; i++) {
        uint64_t d;
        if (!blob_uint(&b, 8, &d))
            return byocl_error_set(err, BYOCL_ERR_PARSE,
                                   "%zu bytes end inside the shape (rank %d)", len, (int)ndim);
        if ((int64_t)d < 0)
            return byocl_error_set(err, BYOCL_ERR_PARSE, "dimension %d is negative (%lld)", i,
                                   (long long)(int64_t)d);
        dims[i] = (int64_t)d;
    }
    uint64_t data_size;
    if (!blob_uint(&b, 8, &data_size))
        return byocl_error_set(err, BYOCL_ERR_PARSE, "%zu bytes end before the data size", len);
    byocl_shape shape = byocl_shape_make((int)ndim, dims);
    char shape_s[160];
    byocl_shape_str(&shape, shape_s, sizeof shape_s);
    int64_t numel = byocl_shape_numel(&shape);
    size_t esize = byocl_dtype_size(dtype);
    if (numel < 0 || (uint64_t)numel > UINT64_MAX / esize)
        return byocl_error_set(err, BYOCL_ERR_PARSE,
                               "shape %s has more elements than a 64-bit count holds", shape_s);
    uint64_t want = (uint64_t)numel * esize;
    if (data_size != want)
        return byocl_error_set(err, BYOCL_ERR_PARSE,
                               "data size %llu bytes disagrees with shape %s of %s (%llu bytes)",
                               (unsigned long long)data_size, shape_s, byocl_dtype_name(dtype),
                               (unsigned long long)want);
    size_t left = (size_t)(b.end - b.p);
    if (left != data_size)
        return byocl_error_set(err, BYOCL_ERR_PARSE,
                               "%zu bytes of data follow the header, which says %llu", left,
                               (unsigned long long)data_size);
    byocl_tensor *t = byocl_tensor_from_data(dtype, &shape, b.p, err);
    if (!t)
        return err ? err->status : BYOCL_ERR_NOMEM;
    *out = t;
    return BYOCL_OK;
}

static void put_le(unsigned char **p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        (*p)[i] = (unsigned char)(v >> (8 * i));
    *p += n;
}

void *text_metadata_encode_ndarray(const byocl_tensor *t, size_t *len)
{
    const byocl_shape *shape = byocl_tensor_shape(t);
    size_t nbytes = byocl_tensor_nbytes(t);
    size_t header = 40 + 8 * (size_t)shape->rank;
    unsigned char *blob = malloc(header + nbytes);
    if (!blob)
        return NULL;
    DLDataType dl = byocl_dtype_to_dlpack(byocl_tensor_dtype(t));
    unsigned char *p = blob;
    put_le(&p, NDARRAY_MAGIC, 8);
    put_le(&p, 0, 8);      /* reserved */
    put_le(&p, kDLCPU, 4); /* device type */
    put_le(&p, 0, 4);      /* device id */
    put_le(&p, (uint64_t)shape->rank, 4);
    put_le(&p, dl.code, 1);
    put_le(&p, dl.bits, 1);
    put_le(&p, dl.lanes, 2);
    for (int i = 0; i < shape->rank; i++)
        put_le(&p, (uint64_t)shape->dims[i], 8);
    put_le(&p, nbytes, 8);
    if (nbytes)
        memcpy(p, byocl_tensor_cdata(t), nbytes);
    *len = header + nbytes;
    return blob;
}

/* ---------------------------------------------------------- reading the JSON */

typedef struct md_reader {
    const char *filename;
    const byocl_json *nodes;       /* the "nodes" array */
    const byocl_json *b64ndarrays; /* the "b64ndarrays" array (NULL when absent) */
    byocl_error *err;
} md_reader;

static byocl_status md_fail(md_reader *r, const byocl_json *at, byocl_status status,
                            const char *path, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static byocl_status md_fail(md_reader *r, const byocl_json *at, byocl_status status,
                            const char *path, const char *fmt, ...)
{
    char msg[BYOCL_ERROR_MSG_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return byocl_error_set(r->err, status, "%s:%d:%d: error: #[metadata] %s: %s", r->filename,
                           at->line, at->col, path, msg);
}

/* "an object", "a string": a JSON kind with its article, for messages. */
static const char *kind_phrase(byocl_json_kind kind)
{
    switch (kind) {
    case BYOCL_JSON_NULL: return "null";
    case BYOCL_JSON_BOOL: return "true/false";
    case BYOCL_JSON_NUMBER: return "a number";
    case BYOCL_JSON_STRING: return "a string";
    case BYOCL_JSON_ARRAY: return "an array";
    case BYOCL_JSON_OBJECT: return "an object";
    }
    return "?";
}

/* A member of an object, which must be there with the given kind. */
static const byocl_json *md_member(md_reader *r, const byocl_json *obj, const char *path,
                                   const char *key, byocl_json_kind kind)
{
    const byocl_json *v = base_json_get(obj, key);
    if (!v)
        md_fail(r, obj, BYOCL_ERR_PARSE, path, "no \"%s\"", key);
    else if (v->kind != kind)
        md_fail(r, v, BYOCL_ERR_PARSE, path, "\"%s\" is %s, expected %s", key,
                kind_phrase(v->kind), kind_phrase(kind));
    else
        return v;
    return NULL;
}

/* An index into an array of n items: a JSON integer, or a string of digits as TVM writes
 * node references in "attrs" ("3"). */
static bool md_index(md_reader *r, const byocl_json *v, const char *path, const char *what,
                     int n, int *out)
{
    int64_t i = -1;
    bool ok = false;
    if (v->kind == BYOCL_JSON_NUMBER && v->is_int) {
        i = v->integer;
        ok = true;
    } else if (v->kind == BYOCL_JSON_STRING && v->string[0] && strlen(v->string) < 19 &&
               strspn(v->string, "0123456789") == strlen(v->string)) {
        i = strtoll(v->string, NULL, 10);
        ok = true;
    }
    if (!ok && v->kind == BYOCL_JSON_STRING) {
        md_fail(r, v, BYOCL_ERR_PARSE, path, "expected an index into %s, found \"%.40s\"",
                what, v->string);
        return false;
    }
    if (!ok) {
        md_fail(r, v, BYOCL_ERR_PARSE, path, "expected an index into %s, found %s", what,
                kind_phrase(v->kind));
        return false;
    }
    if (i < 0 || i >= n) {
        md_fail(r, v, BYOCL_ERR_PARSE, path, "index %lld is out of range: %s has %d item%s",
                (long long)i, what, n, n == 1 ? "" : "s");
        return false;
    }
    *out = (int)i;
    return true;
}

/* Node `index` (checked) with its "type_key". */
static const byocl_json *md_node(md_reader *r, int index, const char **type_key)
{
    char path[32];
    snprintf(path, sizeof path, "nodes[%d]", index);
    const byocl_json *node = &r->nodes->items[index];
    if (node->kind != BYOCL_JSON_OBJECT) {
        md_fail(r, node, BYOCL_ERR_PARSE, path, "is %s, expected an object",
                kind_phrase(node->kind));
        return NULL;
    }
    const byocl_json *key = md_member(r, node, path, "type_key", BYOCL_JSON_STRING);
    if (!key)
        return NULL;
    *type_key = key->string;
    return node;
}

/* Reads constant K (the node at `index`) into `consts` as "relay.Constant.K". */
static byocl_status md_constant(md_reader *r, int k, int index, byocl_params *consts)
{
    const char *type_key;
    const byocl_json *node = md_node(r, index, &type_key);
    if (!node)
        return r->err->status;
    char path[96];
    snprintf(path, sizeof path, "nodes[%d]", index);
    if (strcmp(type_key, CONSTANT_KIND) != 0)
        return md_fail(r, node, BYOCL_ERR_UNSUPPORTED, path,
                       "relay.Constant %d is a \"%.60s\" node, expected \"relay.Constant\"", k,
                       type_key);
    const byocl_json *attrs = md_member(r, node, path, "attrs", BYOCL_JSON_OBJECT);
    if (!attrs)
        return r->err->status;
    snprintf(path, sizeof path, "nodes[%d].attrs", index);
    const byocl_json *data = base_json_get(attrs, "data");
    if (!data)
        return md_fail(r, attrs, BYOCL_ERR_PARSE, path, "no \"data\" (the tensor's index)");
    snprintf(path, sizeof path, "nodes[%d].attrs.data", index);
    int n_arrays = r->b64ndarrays ? r->b64ndarrays->n : 0;
    int b;
    if (!md_index(r, data, path, "b64ndarrays", n_arrays, &b))
        return r->err->status;
    const byocl_json *b64 = &r->b64ndarrays->items[b];
    snprintf(path, sizeof path, "b64ndarrays[%d] (meta[relay.Constant][%d])", b, k);
    if (b64->kind != BYOCL_JSON_STRING)
        return md_fail(r, b64, BYOCL_ERR_PARSE, path, "is %s, expected a base64 string",
                       kind_phrase(b64->kind));
    void *blob;
    size_t blob_len;
    byocl_error e;
    byocl_status st = base_base64_decode(b64->string, strlen(b64->string), &blob, &blob_len, &e);
    if (st != BYOCL_OK)
        return md_fail(r, b64, st, path, "bad base64: %s", e.msg);
    byocl_tensor *t;
    st = text_metadata_decode_ndarray(blob, blob_len, &t, &e);
    free(blob);
    if (st != BYOCL_OK)
        return md_fail(r, b64, st, path, "%s", e.msg);
    char name[64];
    snprintf(name, sizeof name, CONSTANT_KIND ".%d", k);
    st = byocl_params_set(consts, name, t, r->err);
    byocl_tensor_unref(t);
    return st;
}

/* The Array of relay.Constant nodes at `index`. */
static byocl_status md_constants(md_reader *r, int index, byocl_params *consts)
{
    const char *type_key;
    const byocl_json *node = md_node(r, index, &type_key);
    if (!node)
        return r->err->status;
    char path[32];
    snprintf(path, sizeof path, "nodes[%d]", index);
    if (strcmp(type_key, "Array") != 0)
        return md_fail(r, node, BYOCL_ERR_PARSE, path,
                       "the relay.Constant entry is a \"%.60s\" node, expected an \"Array\"",
                       type_key);
    const byocl_json *data = base_json_get(node, "data");
    if (!data) /* an empty Array */
        return BYOCL_OK;
    if (data->kind != BYOCL_JSON_ARRAY)
        return md_fail(r, data, BYOCL_ERR_PARSE, path, "\"data\" is %s, expected an array",
                       kind_phrase(data->kind));
    for (int k = 0; k < data->n; k++) {
        char item_path[48];
        snprintf(item_path, sizeof item_path, "nodes[%d].data[%d]", index, k);
        int at;
        if (!md_index(r, &data->items[k], item_path, "nodes", r->nodes->n, &at))
            return r->err->status;
        byocl_status st = md_constant(r, k, at, consts);
        if (st != BYOCL_OK)
            return st;
    }
    return BYOCL_OK;
}

/* One kind of the root Map: its name (from "keys" or a runtime.String node) and the index
 * of its Array. */
static byocl_status md_kind(md_reader *r, const char *name, const byocl_json *name_at,
                            const char *path, int array_index, byocl_params *consts)
{
    if (strcmp(name, CONSTANT_KIND) != 0)
        return md_fail(r, name_at, BYOCL_ERR_UNSUPPORTED, path,
                       "kind \"%.60s\" is not supported (byocl reads relay.Constant only)", name);
    return md_constants(r, array_index, consts);
}

static byocl_status md_root(md_reader *r, int root, byocl_params *consts)
{
    const char *type_key;
    const byocl_json *node = md_node(r, root, &type_key);
    if (!node)
        return r->err->status;
    char path[64];
    snprintf(path, sizeof path, "nodes[%d]", root);
    if (strcmp(type_key, "Map") != 0 && strcmp(type_key, "StrMap") != 0)
        return md_fail(r, node, BYOCL_ERR_PARSE, path,
                       "the root is a \"%.60s\" node, expected a \"Map\"", type_key);
    const byocl_json *data = md_member(r, node, path, "data", BYOCL_JSON_ARRAY);
    if (!data)
        return r->err->status;
    const byocl_json *keys = base_json_get(node, "keys");
    if (keys) { /* string keys: "keys" and "data" side by side */
        if (keys->kind != BYOCL_JSON_ARRAY || keys->n != data->n)
            return md_fail(r, keys, BYOCL_ERR_PARSE, path,
                           "\"keys\" must be an array as long as \"data\" (%d)", data->n);
        for (int i = 0; i < keys->n; i++) {
            snprintf(path, sizeof path, "nodes[%d].keys[%d]", root, i);
            const byocl_json *key = &keys->items[i];
            if (key->kind != BYOCL_JSON_STRING)
                return md_fail(r, key, BYOCL_ERR_PARSE, path, "is %s, expected a string",
                               kind_phrase(key->kind));
            snprintf(path, sizeof path, "nodes[%d].data[%d]", root, i);
            int at;
            if (!md_index(r, &data->items[i], path, "nodes", r->nodes->n, &at))
                return r->err->status;
            snprintf(path, sizeof path, "nodes[%d].keys[%d]", root, i);
            byocl_status st = md_kind(r, key->string, key, path, at, consts);
            if (st != BYOCL_OK)
                return st;
        }
        return BYOCL_OK;
    }
    if (data->n % 2 != 0) /* key, value, key, value, ... */
        return md_fail(r, data, BYOCL_ERR_PARSE, path,
                       "\"data\" of a Map without \"keys\" must hold key, value pairs (it has "
                       "%d items)",
                       data->n);
    for (int i = 0; i < data->n; i += 2) {
        snprintf(path, sizeof path, "nodes[%d].data[%d]", root, i);
        int key_at, value_at;
        if (!md_index(r, &data->items[i], path, "nodes", r->nodes->n, &key_at))
            return r->err->status;
        const byocl_json *key = md_node(r, key_at, &type_key);
        if (!key)
            return r->err->status;
        snprintf(path, sizeof path, "nodes[%d]", key_at);
        const byocl_json *repr = md_member(r, key, path, "repr_str", BYOCL_JSON_STRING);
        if (!repr)
            return r->err->status;
        snprintf(path, sizeof path, "nodes[%d].data[%d]", root, i + 1);
        if (!md_index(r, &data->items[i + 1], path, "nodes", r->nodes->n, &value_at))
            return r->err->status;
        snprintf(path, sizeof path, "nodes[%d].repr_str", key_at);
        byocl_status st = md_kind(r, repr->string, repr, path, value_at, consts);
        if (st != BYOCL_OK)
            return st;
    }
    return BYOCL_OK;
}

/* The JSON reader's "FILE:L:C: error: MSG" as "FILE:L:C: error: #[metadata]: bad JSON: MSG". */
static void json_error_in_section(byocl_error *err, const char *filename)
{
    static const char marker[] = ": error: ";
    char *at = strstr(err->msg + strlen(filename), marker);
    if (!at)
        return;
    char rest[BYOCL_ERROR_MSG_MAX];
    snprintf(rest, sizeof rest, "%s", at + strlen(marker));
    size_t head = (size_t)(at - err->msg) + strlen(marker);
    snprintf(err->msg + head, sizeof err->msg - head, "#[metadata]: bad JSON: %s", rest);
}

byocl_status text_metadata_read(const char *json, size_t len, const char *filename, int line,
                                int col, byocl_params **out, byocl_error *err)
{
    *out = NULL;
    byocl_error local;
    if (!err)
        err = &local;
    byocl_json *doc;
    byocl_status st = base_json_parse_at(json, len, filename, line, col, &doc, err);
    if (st != BYOCL_OK) {
        if (st == BYOCL_ERR_PARSE)
            json_error_in_section(err, filename);
        return st;
    }
    md_reader r = {.filename = filename, .err = err};
    byocl_params *consts = byocl_params_new();
    const byocl_json *root = NULL;
    if (!consts)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory reading the #[metadata] section");
    else if (doc->kind != BYOCL_JSON_OBJECT)
        st = md_fail(&r, doc, BYOCL_ERR_PARSE, "section", "is %s, expected an object",
                     kind_phrase(doc->kind));
    else if (!(root = md_member(&r, doc, "section", "root", BYOCL_JSON_NUMBER)) ||
             !(r.nodes = md_member(&r, doc, "section", "nodes", BYOCL_JSON_ARRAY)))
        st = err->status;
    if (st == BYOCL_OK) {
        r.b64ndarrays = base_json_get(doc, "b64ndarrays");
        int root_index;
        if (r.b64ndarrays && r.b64ndarrays->kind != BYOCL_JSON_ARRAY)
            st = md_fail(&r, r.b64ndarrays, BYOCL_ERR_PARSE, "b64ndarrays",
                         "is %s, expected an array", kind_phrase(r.b64ndarrays->kind));
        else if (!md_index(&r, root, "root", "nodes", r.nodes->n, &root_index))
            st = err->status;
        else
            st = md_root(&r, root_index, consts);
    }
    base_json_free(doc);
    if (st != BYOCL_OK) {
        byocl_params_free(consts);
        return st;
    }
    *out = consts;
    return BYOCL_OK;
}

/* ---------------------------------------------------------- writing the JSON */

void text_metadata_print(byocl_textbuf *out, const byocl_tensor *const *consts, int n)
{
    base_textbuf_puts(out, "\n"
                            "#[metadata]\n"
                            "{\n"
                            "  \"root\": 1, \n"
                            "  \"nodes\": [\n"
                            "    {\n"
                            "      \"type_key\": \"\"\n"
                            "    }, \n"
                            "    {\n"
                            "      \"type_key\": \"Map\", \n"
                            "      \"keys\": [\n"
                            "        \"" CONSTANT_KIND "\"\n"
                            "      ], \n"
                            "      \"data\": [2]\n"
                            "    }, \n"
                            "    {\n"
                            "      \"type_key\": \"Array\", \n"
                            "      \"data\": [");
    for (int k = 0; k < n; k++)
        base_textbuf_printf(out, "%s%d", k ? ", " : "", 3 + k);
    base_textbuf_puts(out, "]\n"
                            "    }");
    for (int k = 0; k < n; k++)
        base_textbuf_printf(out,
                            ", \n"
                            "    {\n"
                            "      \"type_key\": \"" CONSTANT_KIND "\", \n"
                            "      \"attrs\": {\n"
                            "        \"_checked_type_\": \"0\", \n"
                            "        \"data\": \"%d\", \n"
                            "        \"span\": \"0\", \n"
                            "        \"virtual_device_\": \"0\"\n"
                            "      }\n"
                            "    }",
                            k);
    base_textbuf_puts(out, "\n"
                            "  ], \n"
                            "  \"b64ndarrays\": [");
    for (int k = 0; k < n && !out->oom; k++) {
        size_t blob_len;
        void *blob = text_metadata_encode_ndarray(consts[k], &blob_len);
        char *b64 = blob ? base_base64_encode(blob, blob_len) : NULL;
        if (b64)
            base_textbuf_printf(out, "%s\n    \"%s\"", k ? ", " : "", b64);
        else
            out->oom = true;
        free(b64);
        free(blob);
    }
    base_textbuf_puts(out, "\n"
                            "  ], \n"
                            "  \"attrs\": {\"tvm_version\": \"0.8.0\"}\n"
                            "}\n");
}
