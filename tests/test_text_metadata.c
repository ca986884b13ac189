/* TVM's #[metadata] section (codegen/text/metadata.c, runtime/base/base64.c): base64, NDArray
 * blobs of every dtype, sections as TVM writes them (nested containers, both Map forms),
 * the parameter file winning over the section, round trips through --metadata inline, and
 * every error naming what and where. The fixtures are built here, by an encoder of the
 * test's own, and checked against a fact from TVM's saved files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "test_support.h"
#include "text/metadata.h"

/* ------------------------------------------- the test's own encoders */

/* Base64 written out the long way: each 6-bit group picked from a 24-bit window. */
static char *test_b64(const unsigned char *in, size_t n)
{
    const char *digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc(n / 3 * 4 + 8);
    assert_non_null(out);
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned long window = 0;
        int have = 0;
        for (int k = 0; k < 3; k++) {
            window <<= 8;
            if (i + (size_t)k < n) {
                window |= in[i + (size_t)k];
                have++;
            }
        }
        for (int k = 0; k < 4; k++)
            out[o++] = k <= have ? digits[(window >> (18 - 6 * k)) & 63] : '=';
    }
    out[o] = '\0';
    return out;
}

typedef struct test_blob {
    unsigned char bytes[4096];
    size_t len;
} test_blob;

static void blob_put(test_blob *b, unsigned long long v, int n)
{
    for (int i = 0; i < n; i++)
        b->bytes[b->len++] = (unsigned char)(v >> (8 * i));
}

/* A TVM NDArray as NDArray::Save writes it (little-endian). */
static test_blob test_ndarray(unsigned code, unsigned bits, unsigned lanes, int ndim,
                         const long long *dims, const void *data, size_t nbytes)
{
    test_blob b = {.len = 0};
    blob_put(&b, 0xDD5E40F096B4A13FULL, 8);
    blob_put(&b, 0, 8);
    blob_put(&b, 1, 4); /* kDLCPU */
    blob_put(&b, 0, 4);
    blob_put(&b, (unsigned long long)ndim, 4);
    blob_put(&b, code, 1);
    blob_put(&b, bits, 1);
    blob_put(&b, lanes, 2);
    for (int i = 0; i < ndim; i++)
        blob_put(&b, (unsigned long long)dims[i], 8);
    blob_put(&b, nbytes, 8);
    assert_true(b.len + nbytes <= sizeof b.bytes);
    memcpy(b.bytes + b.len, data, nbytes);
    b.len += nbytes;
    return b;
}

static char *test_ndarray_b64(unsigned code, unsigned bits, int ndim, const long long *dims,
                              const void *data, size_t nbytes)
{
    test_blob b = test_ndarray(code, bits, 1, ndim, dims, data, nbytes);
    return test_b64(b.bytes, b.len);
}

/* The constants of the fixtures. */
static const float F32_VALUES[6] = {1, 2, 3, 4, 5, 6};
static const long long F32_DIMS[2] = {2, 3};
static const long long I64_VALUES[2] = {-3, 9007199254740993LL}; /* 2^53 + 1: not a double */
static const long long I64_DIMS[2] = {1, 2};
static const long long F16_DIMS[1] = {2};

static void f16_values(unsigned short out[2])
{
    out[0] = byocl_f32_to_f16(0.5f);
    out[1] = byocl_f32_to_f16(-2.0f);
}

static char *b64_f32(void) { return test_ndarray_b64(2, 32, 2, F32_DIMS, F32_VALUES, sizeof F32_VALUES); }
static char *b64_i64(void) { return test_ndarray_b64(0, 64, 2, I64_DIMS, I64_VALUES, sizeof I64_VALUES); }
static char *b64_f16(void)
{
    unsigned short h[2];
    f16_values(h);
    return test_ndarray_b64(2, 16, 1, F16_DIMS, h, sizeof h);
}

/* ------------------------------------------------------------ fixtures */

/* A module as TVM's ONNX frontend and astext() print it: en_id comments, units=None, a
 * ty= comment after each meta constant. */
static const char *const MODULE_TEXT =
    "#[version = \"0.0.5\"]\n"
    "def @main(%Input3: Tensor[(1, 3), float32] /* ty=Tensor[(1, 3), float32] span=Input3:0:0 */) "
    "-> Tensor[(1, 2), float32] {\n"
    "  %0 = nn.dense(%Input3, meta[relay.Constant][0] /* ty=Tensor[(2, 3), float32] */, "
    "units=None) /* ty=Tensor[(1, 2), float32] */;\n"
    "  %1 = cast(meta[relay.Constant][1] /* ty=Tensor[(2), float16] */, dtype=\"float32\") "
    "/* ty=Tensor[(2), float32] */;\n"
    "  %2 = add(%0, %1) /* en_id=7 */;\n"
    "  %3 = cast(meta[relay.Constant][2] /* ty=Tensor[(1, 2), int64] */, dtype=\"float32\");\n"
    "  add(%2, %3) /* ty=Tensor[(1, 2), float32] */\n"
    "}\n"
    "\n";

/* The section, as TVM's SaveJSON writes it: constant K's tensor sits at b64ndarrays[(K + 2)
 * % 3], and each constant's _checked_type_ is a TensorType whose shape is an Array of
 * IntImm nodes (containers inside containers). */
static char *section_json(const char *b64_0, const char *b64_1, const char *b64_2)
{
    const char *fmt =
        "#[metadata]\n"
        "{\n"
        "  \"root\": 1, \n"
        "  \"nodes\": [\n"
        "    {\"type_key\": \"\"}, \n"
        "    {\"type_key\": \"Map\", \"keys\": [\"relay.Constant\"], \"data\": [2]}, \n"
        "    {\"type_key\": \"Array\", \"data\": [3, 9, 13]}, \n"
        "    {\"type_key\": \"relay.Constant\", \"attrs\": {\"_checked_type_\": \"4\", "
        "\"data\": \"1\", \"span\": \"0\", \"virtual_device_\": \"8\"}}, \n"
        "    {\"type_key\": \"relay.TensorType\", \"attrs\": {\"dtype\": \"float32\", "
        "\"shape\": \"5\", \"span\": \"0\"}}, \n"
        "    {\"type_key\": \"Array\", \"data\": [6, 7]}, \n"
        "    {\"type_key\": \"IntImm\", \"attrs\": {\"dtype\": \"int32\", \"span\": \"0\", "
        "\"value\": \"2\"}}, \n"
        "    {\"type_key\": \"IntImm\", \"attrs\": {\"dtype\": \"int32\", \"span\": \"0\", "
        "\"value\": \"3\"}}, \n"
        "    {\"type_key\": \"VirtualDevice\", \"attrs\": {\"device_type_int\": \"-1\", "
        "\"memory_scope\": \"\", \"target\": \"0\", \"virtual_device_id\": \"-1\"}}, \n"
        "    {\"type_key\": \"relay.Constant\", \"attrs\": {\"_checked_type_\": \"10\", "
        "\"data\": \"2\", \"span\": \"0\", \"virtual_device_\": \"8\"}}, \n"
        "    {\"type_key\": \"relay.TensorType\", \"attrs\": {\"dtype\": \"float16\", "
        "\"shape\": \"11\", \"span\": \"0\"}}, \n"
        "    {\"type_key\": \"Array\", \"data\": [6]}, \n"
        "    {\"type_key\": \"IntImm\", \"attrs\": {\"dtype\": \"int32\", \"span\": \"0\", "
        "\"value\": \"1\"}}, \n"
        "    {\"type_key\": \"relay.Constant\", \"attrs\": {\"_checked_type_\": \"0\", "
        "\"data\": \"0\", \"span\": \"0\", \"virtual_device_\": \"8\"}}\n"
        "  ], \n"
        "  \"b64ndarrays\": [\n"
        "    \"%s\", \n"
        "    \"%s\", \n"
        "    \"%s\"\n"
        "  ], \n"
        "  \"attrs\": {\"tvm_version\": \"0.9.0\"}\n"
        "}\n";
    size_t len = strlen(fmt) + strlen(b64_0) + strlen(b64_1) + strlen(b64_2) + 1;
    char *s = malloc(len);
    assert_non_null(s);
    snprintf(s, len, fmt, b64_0, b64_1, b64_2);
    return s;
}

/* MODULE_TEXT with its section: b64ndarrays holds int64, float32, float16 (constants 2,
 * 0, 1). */
static char *module_with_section(void)
{
    char *f32 = b64_f32(), *f16 = b64_f16(), *i64 = b64_i64();
    char *section = section_json(i64, f32, f16);
    size_t len = strlen(MODULE_TEXT) + strlen(section) + 1;
    char *text = malloc(len);
    assert_non_null(text);
    snprintf(text, len, "%s%s", MODULE_TEXT, section);
    free(f32);
    free(f16);
    free(i64);
    free(section);
    return text;
}

/* `text` with the first `from` replaced by `to` (malloc'ed). */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    if (!at)
        fail_msg("'%s' is not in the fixture", from);
    size_t len = strlen(text) - strlen(from) + strlen(to) + 1;
    char *s = malloc(len);
    assert_non_null(s);
    snprintf(s, len, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    return s;
}

static byocl_module *parse_with(const char *text, const byocl_params *params)
{
    byocl_module *m = NULL;
    byocl_error err;
    if (byocl_text_parse(text, strlen(text), "m.relay", params, &m, &err) != BYOCL_OK)
        fail_msg("parse failed: %s", err.msg);
    if (byocl_infer_types(m, &err) != BYOCL_OK)
        fail_msg("infer_types failed: %s", err.msg);
    return m;
}

/* The parse of `text` must fail with `status` and exactly `want`. */
static void expect_parse_error(const char *text, const byocl_params *params, byocl_status status,
                               const char *want)
{
    byocl_module *m = (byocl_module *)0x1;
    byocl_error err;
    byocl_status st = byocl_text_parse(text, strlen(text), "m.relay", params, &m, &err);
    if (st == BYOCL_OK) {
        byocl_module_free(m);
        fail_msg("the parse succeeded; want: %s", want);
    }
    assert_null(m);
    assert_string_equal(err.msg, want);
    assert_int_equal(st, status);
}

/* The constant nodes of @main, in node order. */
static const byocl_tensor *constant_at(const byocl_module *m, int which)
{
    const byocl_function *fn = byocl_module_find(m, "main");
    for (int id = 0; id < byocl_function_num_nodes(fn); id++)
        if (byocl_node_kind_of(fn, id) == BYOCL_NODE_CONSTANT && which-- == 0)
            return byocl_node_value(fn, id);
    fail_msg("no such constant");
    return NULL;
}

static void assert_bytes(const byocl_tensor *t, byocl_dtype dtype, const void *want, size_t n)
{
    assert_int_equal(byocl_tensor_dtype(t), dtype);
    assert_int_equal(byocl_tensor_nbytes(t), n);
    assert_memory_equal(byocl_tensor_cdata(t), want, n);
}

/* The three constants of MODULE_TEXT, bit for bit. */
static void assert_fixture_constants(const byocl_module *m)
{
    unsigned short h[2];
    f16_values(h);
    assert_bytes(constant_at(m, 0), BYOCL_FLOAT32, F32_VALUES, sizeof F32_VALUES);
    assert_bytes(constant_at(m, 1), BYOCL_FLOAT16, h, sizeof h);
    assert_bytes(constant_at(m, 2), BYOCL_INT64, I64_VALUES, sizeof I64_VALUES);
    char s[64];
    assert_string_equal(byocl_shape_str(byocl_tensor_shape(constant_at(m, 0)), s, sizeof s),
                        "(2, 3)");
    assert_string_equal(byocl_shape_str(byocl_tensor_shape(constant_at(m, 2)), s, sizeof s),
                        "(1, 2)");
}

/* ------------------------------------------------------------- base64 */

static void test_base64(void **state)
{
    (void)state;
    static const char *const vectors[][2] = {
        {"", ""},         {"f", "Zg=="},        {"fo", "Zm8="},
        {"foo", "Zm9v"},  {"foob", "Zm9vYg=="}, {"foobar", "Zm9vYmFy"},
    };
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
        char *enc = base_base64_encode(vectors[i][0], strlen(vectors[i][0]));
        assert_string_equal(enc, vectors[i][1]);
        char *mine = test_b64((const unsigned char *)vectors[i][0], strlen(vectors[i][0]));
        assert_string_equal(mine, vectors[i][1]);
        void *dec;
        size_t n;
        byocl_error err;
        assert_int_equal(base_base64_decode(enc, strlen(enc), &dec, &n, &err), BYOCL_OK);
        assert_int_equal(n, strlen(vectors[i][0]));
        assert_memory_equal(dec, vectors[i][0], n);
        free(dec);
        free(enc);
        free(mine);
    }
    /* Every byte value survives. */
    unsigned char all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)i;
    char *enc = base_base64_encode(all, sizeof all);
    char *mine = test_b64(all, sizeof all);
    assert_string_equal(enc, mine);
    void *dec;
    size_t n;
    assert_int_equal(base_base64_decode(enc, strlen(enc), &dec, &n, NULL), BYOCL_OK);
    assert_int_equal(n, sizeof all);
    assert_memory_equal(dec, all, n);
    free(dec);
    free(enc);
    free(mine);

    static const char *const bad[][2] = {
        {"Zm9", "3 characters, not a multiple of 4 (base64 is cut short or lacks its '=' "
                "padding)"},
        {"Zm!v", "character 2 is '!', not base64"},
        {"Z=9v", "character 1 is '=', not base64 (padding before the end)"},
        {"Zm9v\nZm9v", "9 characters, not a multiple of 4 (base64 is cut short or lacks its '=' "
                       "padding)"},
        {"Zm9v\tZm9", "character 4 is byte 0x09, not base64"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        byocl_error err;
        dec = (void *)0x1;
        assert_int_equal(base_base64_decode(bad[i][0], strlen(bad[i][0]), &dec, &n, &err),
                         BYOCL_ERR_PARSE);
        assert_null(dec);
        assert_string_equal(err.msg, bad[i][1]);
    }
}

/* -------------------------------------------------------- NDArray blobs */

/* A fact from TVM's saved files: a float32 2x3 tensor of 1..6 begins "P6G0lvBAXt0AAAAA". */
static void test_ndarray_tvm_fact(void **state)
{
    (void)state;
    char *mine = b64_f32();
    assert_true(strncmp(mine, "P6G0lvBAXt0AAAAA", 16) == 0);
    byocl_tensor *t = ts_tensor_f32(2, (const int64_t[]){2, 3}, F32_VALUES);
    size_t len;
    void *blob = text_metadata_encode_ndarray(t, &len);
    assert_non_null(blob);
    char *theirs = base_base64_encode(blob, len);
    assert_string_equal(theirs, mine);
    free(theirs);
    free(blob);
    byocl_tensor_unref(t);
    free(mine);
}

/* Every byocl dtype, decoded from the test's blob and encoded back to the same bytes. */
static void test_ndarray_every_dtype(void **state)
{
    (void)state;
    static const unsigned char raw[16] = {1, 0, 2, 0, 3, 0, 4, 0, 0, 1, 1, 0, 1, 1, 0, 1};
    static const struct {
        byocl_dtype dtype;
        unsigned code, bits;
        bool encodes_back; /* false: a spelling byocl reads but writes otherwise */
    } cases[] = {
        {BYOCL_FLOAT32, 2, 32, true}, {BYOCL_FLOAT16, 2, 16, true}, {BYOCL_INT32, 0, 32, true},
        {BYOCL_INT64, 0, 64, true},   {BYOCL_INT8, 0, 8, true},     {BYOCL_UINT8, 1, 8, true},
        {BYOCL_BOOL, 1, 1, true},     {BYOCL_BOOL, 6, 8, false},    {BYOCL_INT16, 0, 16, true},
        {BYOCL_UINT16, 1, 16, true},  {BYOCL_UINT32, 1, 32, true},  {BYOCL_UINT64, 1, 64, true},
        {BYOCL_BFLOAT16, 4, 16, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t esize = byocl_dtype_size(cases[i].dtype);
        long long dims[2] = {2, (long long)(sizeof raw / esize / 2)};
        const unsigned char *data = cases[i].dtype == BYOCL_BOOL ? raw + 8 : raw;
        size_t nbytes = (size_t)(dims[0] * dims[1]) * esize;
        if (cases[i].dtype == BYOCL_BOOL) {
            dims[1] = 4;
            nbytes = 8;
        }
        test_blob b = test_ndarray(cases[i].code, cases[i].bits, 1, 2, dims, data, nbytes);
        byocl_tensor *t = NULL;
        byocl_error err;
        if (text_metadata_decode_ndarray(b.bytes, b.len, &t, &err) != BYOCL_OK)
            fail_msg("%s: %s", byocl_dtype_name(cases[i].dtype), err.msg);
        assert_bytes(t, cases[i].dtype, data, nbytes);
        assert_int_equal(byocl_tensor_shape(t)->rank, 2);
        assert_int_equal(byocl_tensor_shape(t)->dims[1], dims[1]);
        size_t len;
        void *again = text_metadata_encode_ndarray(t, &len);
        if (cases[i].encodes_back) {
            assert_int_equal(len, b.len);
            assert_memory_equal(again, b.bytes, len);
        }
        free(again);
        byocl_tensor_unref(t);
    }
    /* Rank 0. */
    float one = 1.0f;
    test_blob b = test_ndarray(2, 32, 1, 0, NULL, &one, sizeof one);
    byocl_tensor *t;
    assert_int_equal(text_metadata_decode_ndarray(b.bytes, b.len, &t, NULL), BYOCL_OK);
    assert_int_equal(byocl_tensor_shape(t)->rank, 0);
    byocl_tensor_unref(t);
}

static void test_ndarray_errors(void **state)
{
    (void)state;
    long long dims[9] = {2, 3, 1, 1, 1, 1, 1, 1, 1};
    test_blob good = test_ndarray(2, 32, 1, 2, dims, F32_VALUES, sizeof F32_VALUES);
    struct {
        test_blob b;
        byocl_status status;
        const char *want;
    } cases[12];
    int n = 0;
    cases[n].b = good;
    cases[n].b.bytes[0] ^= 1;
    cases[n].status = BYOCL_ERR_PARSE;
    cases[n++].want = "wrong magic 0xDD5E40F096B4A13E (a TVM NDArray starts with 0xDD5E40F096B4A13F)";
    cases[n].b = good;
    cases[n].b.len = 5;
    cases[n].status = BYOCL_ERR_PARSE;
    cases[n++].want = "5 bytes, too short for a TVM NDArray (its header alone is 40 bytes or more)";
    cases[n].b = good;
    cases[n].b.len = 30;
    cases[n].status = BYOCL_ERR_PARSE;
    cases[n++].want = "30 bytes end inside the NDArray header";
    cases[n].b = good;
    cases[n].b.len = 40;
    cases[n].status = BYOCL_ERR_PARSE;
    cases[n++].want = "40 bytes end inside the shape (rank 2)";
    cases[n].b = good;
    cases[n].b.len = 52;
    cases[n].status = BYOCL_ERR_PARSE;
    cases[n++].want = "52 bytes end before the data size";
    cases[n].b = test_ndarray(2, 32, 1, 2, dims, F32_VALUES, 20);
    cases[n].status = BYOCL_ERR_PARSE;
    cases[n++].want = "data size 20 bytes disagrees with shape (2, 3) of float32 (24 bytes)";
    cases[n].b = good;
    cases[n].b.len -= 4;
    cases[n].status = BYOCL_ERR_PARSE;
    cases[n++].want = "20 bytes of data follow the header, which says 24";
    cases[n].b = test_ndarray(5, 64, 1, 1, (long long[]){3}, F32_VALUES, 24);
    cases[n].status = BYOCL_ERR_UNSUPPORTED;
    cases[n++].want = "dtype complex64 (code 5, bits 64) is not one byocl has (float32, float16, "
                      "int32, int64, int8, uint8, bool, float64, int16, uint16, uint32, uint64, "
                      "bfloat16)";
    cases[n].b = test_ndarray(2, 32, 4, 1, (long long[]){1}, F32_VALUES, 16);
    cases[n].status = BYOCL_ERR_UNSUPPORTED;
    cases[n++].want = "dtype float32x4: vector dtypes are not supported";
    cases[n].b = test_ndarray(2, 32, 1, 9, dims, F32_VALUES, 24);
    cases[n].status = BYOCL_ERR_UNSUPPORTED;
    cases[n++].want = "rank 9 is not supported (0 to 8)";
    cases[n].b = test_ndarray(2, 32, 1, 2, (long long[]){-1, 2}, F32_VALUES, 8);
    cases[n].status = BYOCL_ERR_PARSE;
    cases[n++].want = "dimension 0 is negative (-1)";
    cases[n].b = test_ndarray(2, 32, 1, 2, (long long[]){1LL << 62, 1LL << 62}, F32_VALUES, 8);
    cases[n].status = BYOCL_ERR_PARSE;
    cases[n++].want = "shape (4611686018427387904, 4611686018427387904) has more elements than a "
                      "64-bit count holds";
    for (int i = 0; i < n; i++) {
        byocl_tensor *t = (byocl_tensor *)0x1;
        byocl_error err;
        assert_int_equal(text_metadata_decode_ndarray(cases[i].b.bytes, cases[i].b.len, &t, &err),
                         cases[i].status);
        assert_null(t);
        assert_string_equal(err.msg, cases[i].want);
    }
}

/* ------------------------------------------------- sections TVM wrote */

static void test_section_as_tvm_writes(void **state)
{
    (void)state;
    char *text = module_with_section();
    byocl_module *m = parse_with(text, NULL);
    assert_fixture_constants(m);
    /* It runs on the reference executor. */
    byocl_tensor *x = ts_tensor_f32(2, (const int64_t[]){1, 3}, (const float[]){1, 0, -1});
    byocl_tensor **out = NULL;
    int n_out = 0;
    byocl_error err;
    byocl_tensor *inputs[1] = {x};
    if (byocl_reference_run(m, "main", inputs, 1, &out, &n_out, &err) != BYOCL_OK)
        fail_msg("run failed: %s", err.msg);
    /* dense: (1 - 3, 4 - 6) = (-2, -2); + (0.5, -2) + (-3, 2^53 + 1 as float32) */
    assert_int_equal(n_out, 1);
    ts_assert_f32_close(out[0], (const float[]){-4.5f, 9007199254740992.0f}, 2, 1e-6, 0);
    byocl_tensors_free(out, n_out);
    byocl_tensor_unref(x);
    byocl_module_free(m);
    free(text);
}

/* Older and newer TVM spell the root Map otherwise: "StrMap", or key nodes of type
 * runtime.String in "data" (key, value, ...). */
static void test_section_map_forms(void **state)
{
    (void)state;
    char *text = module_with_section();
    char *strmap = replace(text, "\"type_key\": \"Map\"", "\"type_key\": \"StrMap\"");
    byocl_module *m = parse_with(strmap, NULL);
    assert_fixture_constants(m);
    byocl_module_free(m);

    /* Node 1 becomes a Map of node pairs; node 0 (null) turns into the key string. */
    char *pairs = replace(text, "{\"type_key\": \"Map\", \"keys\": [\"relay.Constant\"], \"data\": [2]}",
                          "{\"type_key\": \"Map\", \"data\": [0, 2]}");
    char *keyed = replace(pairs, "{\"type_key\": \"\"}",
                          "{\"type_key\": \"runtime.String\", \"repr_str\": \"relay.Constant\"}");
    m = parse_with(keyed, NULL);
    assert_fixture_constants(m);
    byocl_module_free(m);
    free(keyed);
    free(pairs);
    free(strmap);
    free(text);
}

/* Where the parameter file and the section both give a constant, the parameter file wins;
 * the section fills in the rest. */
static void test_params_win(void **state)
{
    (void)state;
    char *text = module_with_section();
    byocl_params *params = byocl_params_new();
    byocl_tensor *w = ts_tensor_f32(2, (const int64_t[]){2, 3}, (const float[]){9, 9, 9, 9, 9, 9});
    assert_int_equal(byocl_params_set(params, "relay.Constant.0", w, NULL), BYOCL_OK);
    byocl_module *m = parse_with(text, params);
    assert_ptr_equal(constant_at(m, 0), w);
    unsigned short h[2];
    f16_values(h);
    assert_bytes(constant_at(m, 1), BYOCL_FLOAT16, h, sizeof h);
    assert_bytes(constant_at(m, 2), BYOCL_INT64, I64_VALUES, sizeof I64_VALUES);
    byocl_module_free(m);

    /* Through byocl_load_model (`--params`), the same. */
    const char *dir = ts_tmpdir("metadata_params");
    char path[4200];
    snprintf(path, sizeof path, "%s/m.relay", dir);
    ts_write_text(path, text);
    byocl_error err;
    if (byocl_load_model(path, params, &m, &err) != BYOCL_OK)
        fail_msg("load failed: %s", err.msg);
    assert_ptr_equal(constant_at(m, 0), w);
    byocl_module_free(m);

    /* A parameter file constant the section lacks. */
    char *four = replace(text, "  add(%2, %3)", "  %4 = add(%2, %3);\n  add(%4, meta[relay.Constant][3])");
    byocl_tensor *b = ts_tensor_f32(2, (const int64_t[]){1, 2}, (const float[]){7, 8});
    assert_int_equal(byocl_params_set(params, "relay.Constant.3", b, NULL), BYOCL_OK);
    m = parse_with(four, params);
    assert_ptr_equal(constant_at(m, 3), b);
    byocl_module_free(m);
    byocl_tensor_unref(b);
    byocl_tensor_unref(w);
    byocl_params_free(params);
    free(four);
    free(text);
}

/* ------------------------------------------------- writing the section */

static char *print_inline(const byocl_module *m)
{
    byocl_print_options opt = {.show_types = true, .metadata = BYOCL_METADATA_INLINE};
    byocl_error err;
    char *text = byocl_text_print(m, &opt, NULL, &err);
    if (!text)
        fail_msg("print failed: %s", err.msg);
    return text;
}

/* Print with the section, parse that alone, print again: the same text, the same bits. */
static void test_round_trip_inline(void **state)
{
    (void)state;
    char *text = module_with_section();
    byocl_module *m = parse_with(text, NULL);
    char *first = print_inline(m);
    ts_assert_contains(first, "#[metadata]\n{\n  \"root\": 1, \n");
    ts_assert_contains(first, "\"b64ndarrays\": [\n    \"P6G0lvBAXt0AAAAA");
    byocl_module *again = parse_with(first, NULL);
    assert_fixture_constants(again);
    for (int k = 0; k < 3; k++)
        assert_true(byocl_tensor_equal(constant_at(again, k), constant_at(m, k)));
    char *second = print_inline(again);
    assert_string_equal(first, second);

    /* Without the section, the text is as before and the constants go to meta_out. */
    byocl_print_options plain = {.show_types = true};
    byocl_params *meta = byocl_params_new();
    char *npz_text = byocl_text_print(m, &plain, meta, NULL);
    assert_null(strstr(npz_text, "#[metadata]"));
    assert_int_equal(byocl_params_count(meta), 3);
    assert_true(strncmp(first, npz_text, strlen(npz_text)) == 0);
    free(npz_text);
    byocl_params_free(meta);

    free(second);
    byocl_module_free(again);
    free(first);
    byocl_module_free(m);
    free(text);
}

/* A module without tensor constants prints no section. */
static void test_no_constants_no_section(void **state)
{
    (void)state;
    byocl_module *m = parse_with("def @main(%x: Tensor[(2), float32]) { add(%x, 1f) }", NULL);
    char *text = print_inline(m);
    assert_null(strstr(text, "#[metadata]"));
    free(text);
    byocl_module_free(m);
}

/* ----------------------------------------------------------- errors */

typedef struct section_error {
    const char *from, *to; /* the change to the fixture */
    byocl_status status;
    const char *want;
} section_error;

static void test_section_errors(void **state)
{
    (void)state;
    char *text = module_with_section();
    static const section_error cases[] = {
        {"\"root\": 1, ", "\"root\": 1 ", BYOCL_ERR_PARSE,
         "m.relay:13:3: error: #[metadata]: bad JSON: expected ',' or '}'"},
        {"\"b64ndarrays\": [\n    \"", "\"b64ndarrays\": [\n    \"!", BYOCL_ERR_PARSE,
         "m.relay:30:5: error: #[metadata] b64ndarrays[0] (meta[relay.Constant][2]): bad base64: "
         "97 characters, not a multiple of 4 (base64 is cut short or lacks its '=' padding)"},
        {"\"b64ndarrays\": [\n    \"P6G0", "\"b64ndarrays\": [\n    \"P6G!", BYOCL_ERR_PARSE,
         "m.relay:30:5: error: #[metadata] b64ndarrays[0] (meta[relay.Constant][2]): bad base64: "
         "character 3 is '!', not base64"},
        {"\"b64ndarrays\": [\n    \"P6G0", "\"b64ndarrays\": [\n    \"Q6G0", BYOCL_ERR_PARSE,
         "m.relay:30:5: error: #[metadata] b64ndarrays[0] (meta[relay.Constant][2]): wrong magic "
         "0xDD5E40F096B4A143 (a TVM NDArray starts with 0xDD5E40F096B4A13F)"},
        {"\"data\": \"2\", \"span\"", "\"data\": \"7\", \"span\"", BYOCL_ERR_PARSE,
         "m.relay:23:78: error: #[metadata] nodes[9].attrs.data: index 7 is out of range: "
         "b64ndarrays has 3 items"},
        {"\"data\": [3, 9, 13]", "\"data\": [3, 99, 13]", BYOCL_ERR_PARSE,
         "m.relay:16:39: error: #[metadata] nodes[2].data[1]: index 99 is out of range: nodes "
         "has 14 items"},
        {"\"root\": 1", "\"root\": 14", BYOCL_ERR_PARSE,
         "m.relay:12:11: error: #[metadata] root: index 14 is out of range: nodes has 14 items"},
        {"\"keys\": [\"relay.Constant\"]", "\"keys\": [\"relay.Function\"]", BYOCL_ERR_UNSUPPORTED,
         "m.relay:15:34: error: #[metadata] nodes[1].keys[0]: kind \"relay.Function\" is not "
         "supported (byocl reads relay.Constant only)"},
        {"\"data\": [3, 9, 13]", "\"data\": [3, 4, 13]", BYOCL_ERR_UNSUPPORTED,
         "m.relay:18:5: error: #[metadata] nodes[4]: relay.Constant 1 is a \"relay.TensorType\" "
         "node, expected \"relay.Constant\""},
        {"\"data\": [2]}", "\"data\": [4]}", BYOCL_ERR_PARSE,
         "m.relay:18:5: error: #[metadata] nodes[4]: the relay.Constant entry is a "
         "\"relay.TensorType\" node, expected an \"Array\""},
        {"\"nodes\": [", "\"nodes\": 3, \"x\": [", BYOCL_ERR_PARSE,
         "m.relay:13:12: error: #[metadata] section: \"nodes\" is a number, expected an array"},
        {"\"data\": \"1\", \"span\"", "\"span\"", BYOCL_ERR_PARSE,
         "m.relay:17:45: error: #[metadata] nodes[3].attrs: no \"data\" (the tensor's index)"},
        {"\"data\": \"1\", \"span\"", "\"data\": \"x1\", \"span\"", BYOCL_ERR_PARSE,
         "m.relay:17:77: error: #[metadata] nodes[3].attrs.data: expected an index into "
         "b64ndarrays, found \"x1\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *bad = replace(text, cases[i].from, cases[i].to);
        expect_parse_error(bad, NULL, cases[i].status, cases[i].want);
        free(bad);
    }
    free(text);
}

/* The section's size must agree with the shape; the blob is rebuilt with a lying size. */
static void test_section_size_disagrees(void **state)
{
    (void)state;
    char *f32 = b64_f32(), *f16 = b64_f16();
    test_blob b = test_ndarray(0, 64, 1, 2, I64_DIMS, I64_VALUES, sizeof I64_VALUES);
    b.bytes[32 + 16] = 8; /* the data size after the two dims: 8, not 16 */
    char *i64 = test_b64(b.bytes, b.len);
    char *section = section_json(i64, f32, f16);
    char text[8192];
    snprintf(text, sizeof text, "%s%s", MODULE_TEXT, section);
    expect_parse_error(text, NULL, BYOCL_ERR_PARSE,
                       "m.relay:30:5: error: #[metadata] b64ndarrays[0] (meta[relay.Constant][2]): "
                       "data size 8 bytes disagrees with shape (1, 2) of int64 (16 bytes)");
    /* The parameter file does not save a broken section: it is read all the same. */
    free(section);
    free(i64);
    free(f16);
    free(f32);
}

/* The ty= comment after a meta constant and the tensor must agree; meta indices beyond
 * the section are named with the section's place. */
static void test_use_errors(void **state)
{
    (void)state;
    char *text = module_with_section();
    char *shape = replace(text, "/* ty=Tensor[(2, 3), float32] */", "/* ty=Tensor[(3, 2), float32] */");
    expect_parse_error(shape, NULL, BYOCL_ERR_TYPE,
                       "m.relay:3:26: error: meta[relay.Constant][0] is Tensor[(2, 3), float32] in "
                       "the #[metadata] section, but its annotation at 3:56 says Tensor[(3, 2), "
                       "float32]");
    char *dtype = replace(text, "/* ty=Tensor[(1, 2), int64] */", "/* ty=Tensor[(1, 2), int32] */");
    expect_parse_error(dtype, NULL, BYOCL_ERR_TYPE,
                       "m.relay:6:13: error: meta[relay.Constant][2] is Tensor[(1, 2), int64] in the "
                       "#[metadata] section, but its annotation at 6:43 says Tensor[(1, 2), int32]");
    /* The parameter file's tensor is checked against the annotation too. */
    byocl_params *params = byocl_params_new();
    byocl_tensor *w = ts_tensor_f32(2, (const int64_t[]){3, 2}, NULL);
    assert_int_equal(byocl_params_set(params, "relay.Constant.0", w, NULL), BYOCL_OK);
    expect_parse_error(text, params, BYOCL_ERR_TYPE,
                       "m.relay:3:26: error: meta[relay.Constant][0] is Tensor[(3, 2), float32] in "
                       "the parameter file, but its annotation at 3:56 says Tensor[(2, 3), "
                       "float32]");
    /* A comment that is not a type is not read. */
    char *odd = replace(text, "/* ty=Tensor[(2, 3), float32] */", "/* ty=Tensor[(?, 3), float32] */");
    byocl_module *m = parse_with(odd, NULL);
    byocl_module_free(m);

    char *beyond = replace(text, "meta[relay.Constant][2]", "meta[relay.Constant][3]");
    expect_parse_error(beyond, NULL, BYOCL_ERR_NOT_FOUND,
                       "m.relay:6:13: error: meta[relay.Constant][3] is out of range: the "
                       "#[metadata] section at 10:1 has 3 constants");
    byocl_params *other = byocl_params_new();
    assert_int_equal(byocl_params_set(other, "relay.Constant.7", w, NULL), BYOCL_OK);
    expect_parse_error(beyond, other, BYOCL_ERR_NOT_FOUND,
                       "m.relay:6:13: error: meta[relay.Constant][3] is missing: the parameter file "
                       "has no 'relay.Constant.3' and the #[metadata] section at 10:1 has 3 "
                       "constants");
    byocl_params_free(other);
    byocl_tensor_unref(w);
    byocl_params_free(params);
    free(beyond);
    free(odd);
    free(dtype);
    free(shape);
    free(text);
}

/* ---------------------------------------------------------------- CLI */

static void test_cli_metadata(void **state)
{
    (void)state;
    const char *dir = ts_tmpdir("metadata_cli");
    char src[4200], args[9000], want[9000];
    snprintf(src, sizeof src, "%s/tvm.relay", dir);
    char *text = module_with_section();
    ts_write_text(src, text);

    /* print --metadata inline -o: the text alone, no .npz. */
    snprintf(args, sizeof args, "print '%s' --metadata inline -o '%s/a.relay'", src, dir);
    char *out = ts_cli_expect(args, 0, "");
    snprintf(want, sizeof want, "wrote %s/a.relay\n", dir);
    assert_string_equal(out, want);
    free(out);
    snprintf(want, sizeof want, "%s/a.npz", dir);
    assert_null(fopen(want, "rb"));
    /* and again from that file: the same text. */
    snprintf(args, sizeof args, "print '%s/a.relay' --metadata=inline -o '%s/b.relay'", dir, dir);
    free(ts_cli_expect(args, 0, ""));
    snprintf(want, sizeof want, "%s/a.relay", dir);
    char *a = ts_read_file(want, NULL);
    snprintf(want, sizeof want, "%s/b.relay", dir);
    char *b = ts_read_file(want, NULL);
    assert_string_equal(a, b);
    ts_assert_contains(a, "#[metadata]\n");

    /* The default is the .npz beside the text, and that reads back as well. */
    snprintf(args, sizeof args, "print '%s' -o '%s/c.relay'", src, dir);
    out = ts_cli_expect(args, 0, "");
    ts_assert_contains(out, "c.npz");
    free(out);
    snprintf(args, sizeof args, "print '%s/c.relay' --params '%s/c.npz' --metadata inline", dir,
             dir);
    out = ts_cli_expect(args, 0, "");
    assert_string_equal(out, a);
    free(out);

    /* partition -o and extract -o take it too. */
    snprintf(args, sizeof args, "partition '%s' --metadata inline -o '%s/p.relay'", src, dir);
    free(ts_cli_expect(args, 0, ""));
    snprintf(args, sizeof args, "run '%s/p.relay' --executor ref --random-inputs", dir);
    free(ts_cli_expect(args, 0, ""));

    /* A bad value is a usage error, before anything is loaded. */
    ts_cli_expect_usage("print builtin:seed --metadata json",
                        "byocl: error: bad --metadata 'json': expected inline or npz; see 'byocl "
                        "print --help'\n");
    ts_cli_expect_usage("partition builtin:seed --metadata Inline",
                        "byocl: error: bad --metadata 'Inline': expected inline or npz; see "
                        "'byocl partition --help'\n");
    ts_cli_expect_usage("extract builtin:seed --region 0 --metadata",
                        "byocl: error: flag '--metadata' needs a value (--metadata inline|npz); "
                        "see 'byocl extract --help'\n");
    out = ts_cli_expect("print --help", 0, "");
    ts_assert_contains(out, "--metadata inline|npz");
    free(out);

    /* byocl_save_model_opts: inline needs no parameter file path. */
    byocl_module *m = parse_with(text, NULL);
    byocl_print_options opt = {.show_types = true, .metadata = BYOCL_METADATA_INLINE};
    byocl_error err;
    snprintf(want, sizeof want, "%s/d.relay", dir);
    assert_int_equal(byocl_save_model_opts(m, want, NULL, &opt, &err), BYOCL_OK);
    char *d = ts_read_file(want, NULL);
    assert_string_equal(d, a);
    free(d);
    byocl_module_free(m);
    free(a);
    free(b);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_ndarray_tvm_fact),
        cmocka_unit_test(test_ndarray_every_dtype),
        cmocka_unit_test(test_ndarray_errors),
        cmocka_unit_test(test_section_as_tvm_writes),
        cmocka_unit_test(test_section_map_forms),
        cmocka_unit_test(test_params_win),
        cmocka_unit_test(test_round_trip_inline),
        cmocka_unit_test(test_no_constants_no_section),
        cmocka_unit_test(test_section_errors),
        cmocka_unit_test(test_section_size_disagrees),
        cmocka_unit_test(test_use_errors),
        cmocka_unit_test(test_cli_metadata),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
