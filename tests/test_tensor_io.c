/* Tensor files: .npy and .npz as numpy writes and reads them, params, dispatch by
 * extension. Fixtures under tests/fixtures/tensor_io/ come from tests/gen/gen_tensor_io.py
 * (numpy itself); the expected values below repeat that script's. */
#include "test_support.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ helpers */

static const char *fixture(const char *name)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s", ts_fixture("tensor_io"));
    size_t n = strlen(path);
    snprintf(path + n, sizeof path - n, "/%s", name);
    return path;
}

static byocl_tensor *make_tensor(byocl_dtype dtype, int rank, const int64_t *dims,
                                 const void *data)
{
    byocl_shape s = byocl_shape_make(rank, dims);
    byocl_tensor *t = data ? byocl_tensor_from_data(dtype, &s, data, NULL)
                           : byocl_tensor_new(dtype, &s, NULL);
    assert_non_null(t);
    return t;
}

static byocl_tensor *read_npy_ok(const char *path)
{
    byocl_error err = {0};
    byocl_tensor *t = NULL;
    if (byocl_npy_read(path, &t, &err) != BYOCL_OK)
        fail_msg("reading %s: %s", path, err.msg);
    return t;
}

/* Reads the numpy-written fixture, checks it equals `want`, and checks that byocl encodes
 * `want` into exactly the bytes np.save wrote. */
static void check_numpy_fixture(const char *name, const byocl_tensor *want)
{
    const char *path = fixture(name);
    byocl_tensor *got = read_npy_ok(path);
    assert_true(byocl_tensor_equal(got, want));
    byocl_tensor_unref(got);

    size_t file_len;
    char *file = ts_read_file(path, &file_len);
    void *enc;
    size_t enc_len;
    assert_int_equal(byocl_npy_encode(want, &enc, &enc_len, NULL), BYOCL_OK);
    assert_int_equal(enc_len, file_len);
    assert_memory_equal(enc, file, file_len);
    free(enc);
    free(file);
}

static void expect_npy_error(const char *path, byocl_status status, const char *msg)
{
    byocl_error err = {0};
    byocl_tensor *t = (byocl_tensor *)0x1;
    assert_int_equal(byocl_npy_read(path, &t, &err), status);
    assert_null(t);
    assert_int_equal(err.status, status);
    assert_string_equal(err.msg, msg);
}

/* A .npy image with a hand-written header dict (version 1.0) and `data` after it. */
static size_t make_npy(char *buf, size_t cap, int major, const char *dict, const void *data,
                       size_t data_len)
{
    size_t prefix = major == 1 ? 10 : 12;
    size_t hlen = strlen(dict);
    assert_true(prefix + hlen + data_len <= cap);
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (char)major;
    buf[7] = 0;
    memset(buf + 8, 0, prefix - 8);
    buf[8] = (char)(hlen & 0xff);
    buf[9] = (char)(hlen >> 8);
    memcpy(buf + prefix, dict, hlen);
    if (data_len)
        memcpy(buf + prefix + hlen, data, data_len);
    return prefix + hlen + data_len;
}

static byocl_status read_mem(const char *dict, const void *data, size_t data_len,
                             byocl_tensor **out, byocl_error *err)
{
    char buf[1024];
    size_t n = make_npy(buf, sizeof buf, 1, dict, data, data_len);
    return byocl_npy_read_mem(buf, n, "mem.npy", out, err);
}

static int count_dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

/* ------------------------------------------------ the fixtures' values */

static const float f32_values[] = {0.0f, -1.5f, 2.25f, 3.0e38f, -1.0e-30f, 7.0f};
static const uint16_t f16_bits[] = {0x0000, 0xbe00, 0x2e66, 0x7bff, 0x8001, 0x7c00};
static const int32_t i32_values[] = {0, -1, 2147483647, -2147483647 - 1, 42, -7};
static const int64_t i64_values[] = {INT64_MAX, INT64_MIN, 0, -1, 5};
static const int8_t i8_values[] = {0, -1, 127, -128, 42, -7};
static const uint8_t u8_values[] = {0, 1, 255, 128, 42, 7};
static const uint8_t bool_values[] = {1, 0, 1, 0, 0, 1};
static const double f64_values[] = {0.0, -1.5, 0.1, 1.0e300, -5.0e-324, -INFINITY};
static const int16_t i16_values[] = {0, -1, 32767, -32768, 42, -7};
static const uint16_t u16_values[] = {0, 1, 65535, 32768, 42, 7};
static const uint32_t u32_values[] = {0, 1, 4294967295u, 2147483648u, 42, 7};
static const uint64_t u64_values[] = {0, UINT64_MAX, 1ull << 63, (1ull << 53) + 1, 42, 7};
static const int64_t dims_2x3[] = {2, 3};

static byocl_tensor *fixture_f32(void)
{
    return make_tensor(BYOCL_FLOAT32, 2, dims_2x3, f32_values);
}
static byocl_tensor *fixture_i64(void)
{
    const int64_t d[] = {5};
    return make_tensor(BYOCL_INT64, 1, d, i64_values);
}
static byocl_tensor *fixture_bool(void)
{
    return make_tensor(BYOCL_BOOL, 2, dims_2x3, bool_values);
}

/* --------------------------------------------------------------- .npy */

static void test_numpy_writes_every_dtype(void **state)
{
    (void)state;
    struct {
        const char *file;
        byocl_tensor *want;
    } cases[] = {
        {"f32.npy", fixture_f32()},
        {"f16.npy", make_tensor(BYOCL_FLOAT16, 2, dims_2x3, f16_bits)},
        {"i32.npy", make_tensor(BYOCL_INT32, 2, dims_2x3, i32_values)},
        {"i64.npy", fixture_i64()},
        {"i8.npy", make_tensor(BYOCL_INT8, 2, dims_2x3, i8_values)},
        {"u8.npy", make_tensor(BYOCL_UINT8, 2, dims_2x3, u8_values)},
        {"bool.npy", fixture_bool()},
        {"f64.npy", make_tensor(BYOCL_FLOAT64, 2, dims_2x3, f64_values)},
        {"i16.npy", make_tensor(BYOCL_INT16, 2, dims_2x3, i16_values)},
        {"u16.npy", make_tensor(BYOCL_UINT16, 2, dims_2x3, u16_values)},
        {"u32.npy", make_tensor(BYOCL_UINT32, 2, dims_2x3, u32_values)},
        {"u64.npy", make_tensor(BYOCL_UINT64, 2, dims_2x3, u64_values)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_numpy_fixture(cases[i].file, cases[i].want);
        byocl_tensor_unref(cases[i].want);
    }
}

static void test_numpy_scalar_empty_rank4(void **state)
{
    (void)state;
    const float scalar = 3.5f;
    byocl_tensor *t = make_tensor(BYOCL_FLOAT32, 0, NULL, &scalar);
    check_numpy_fixture("scalar_f32.npy", t);
    byocl_tensor_unref(t);

    const int64_t empty_dims[] = {0, 3};
    t = make_tensor(BYOCL_FLOAT32, 2, empty_dims, NULL);
    check_numpy_fixture("empty_f32.npy", t);
    byocl_tensor_unref(t);

    const int64_t dims4[] = {2, 1, 3, 2};
    int32_t v[12];
    for (int i = 0; i < 12; i++)
        v[i] = i - 5;
    t = make_tensor(BYOCL_INT32, 4, dims4, v);
    check_numpy_fixture("rank4_i32.npy", t);
    byocl_tensor_unref(t);
}

static void test_numpy_format_versions_2_and_3(void **state)
{
    (void)state;
    byocl_tensor *want = fixture_f32();
    const char *files[] = {"v2_f32.npy", "v3_f32.npy"};
    for (int i = 0; i < 2; i++) {
        byocl_tensor *got = read_npy_ok(fixture(files[i]));
        assert_true(byocl_tensor_equal(got, want));
        byocl_tensor_unref(got);
    }
    byocl_tensor_unref(want);
}

static void test_header_dict_variants(void **state)
{
    (void)state;
    const int32_t v[3] = {1, -2, 3};
    const char *dicts[] = {
        "{'shape': (3,), 'fortran_order': False, 'descr': '<i4'}\n",
        "{\"descr\" : \"<i4\" , \"fortran_order\":False,\"shape\":( 3 , ) , }   \n",
        "{'fortran_order': False, 'shape': (3L,), 'descr': '=i4', }",
        "{ 'descr':'<i4','shape':(3),'fortran_order':False }",
    };
    for (size_t i = 0; i < sizeof dicts / sizeof dicts[0]; i++) {
        byocl_tensor *t = NULL;
        byocl_error err = {0};
        if (read_mem(dicts[i], v, sizeof v, &t, &err) != BYOCL_OK)
            fail_msg("dict %zu: %s", i, err.msg);
        assert_int_equal(byocl_tensor_dtype(t), BYOCL_INT32);
        assert_int_equal(byocl_tensor_shape(t)->rank, 1);
        assert_int_equal(byocl_tensor_shape(t)->dims[0], 3);
        assert_memory_equal(byocl_tensor_cdata(t), v, sizeof v);
        byocl_tensor_unref(t);
    }
    /* One-byte types take any byte-order mark numpy may write; bool bytes become 0/1. */
    const uint8_t bytes[2] = {0, 7};
    const struct {
        const char *descr;
        byocl_dtype dtype;
    } one_byte[] = {{"|b1", BYOCL_BOOL}, {"<b1", BYOCL_BOOL}, {"<i1", BYOCL_INT8},
                    {"<u1", BYOCL_UINT8}, {"|i1", BYOCL_INT8}, {">u1", BYOCL_UINT8}};
    for (size_t i = 0; i < sizeof one_byte / sizeof one_byte[0]; i++) {
        char dict[128];
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (2,), }",
                 one_byte[i].descr);
        byocl_tensor *t = NULL;
        assert_int_equal(read_mem(dict, bytes, 2, &t, NULL), BYOCL_OK);
        assert_int_equal(byocl_tensor_dtype(t), one_byte[i].dtype);
        const uint8_t *got = byocl_tensor_cdata(t);
        assert_int_equal(got[0], 0);
        assert_int_equal(got[1], one_byte[i].dtype == BYOCL_BOOL ? 1 : 7);
        byocl_tensor_unref(t);
    }
}

static void expect_mem_error(const char *dict, size_t data_len, byocl_status status,
                             const char *msg)
{
    static const char zeros[64];
    byocl_tensor *t = NULL;
    byocl_error err = {0};
    assert_int_equal(read_mem(dict, zeros, data_len, &t, &err), status);
    assert_null(t);
    assert_string_equal(err.msg, msg);
}

static void test_header_errors(void **state)
{
    (void)state;
    expect_mem_error("{'descr': '<f4', 'fortran_order': False}", 0, BYOCL_ERR_INVALID,
                     "mem.npy: malformed .npy header: no 'shape' key");
    expect_mem_error("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}", 4,
                     BYOCL_ERR_INVALID, "mem.npy: malformed .npy header: unexpected key 'x'");
    expect_mem_error("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}", 4,
                     BYOCL_ERR_INVALID,
                     "mem.npy: malformed .npy header: key 'descr' appears twice");
    expect_mem_error("{'descr': '<f4', 'fortran_order': Nope, 'shape': ()}", 4,
                     BYOCL_ERR_INVALID,
                     "mem.npy: malformed .npy header: expected True or False, found 'N'");
    expect_mem_error("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", 4,
                     BYOCL_ERR_INVALID,
                     "mem.npy: malformed .npy header: expected a non-negative dimension, "
                     "found '-'");
    expect_mem_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", 4,
                     BYOCL_ERR_INVALID,
                     "mem.npy: malformed .npy header: expected ',' or ')' in the shape, found '3'");
    expect_mem_error("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", 4,
                     BYOCL_ERR_INVALID,
                     "mem.npy: malformed .npy header: expected only padding after '}', found 'x'");
    expect_mem_error("{'descr': '<f4', 'fortran_order': False, 'shape': "
                     "(1, 1, 1, 1, 1, 1, 1, 1, 1)}",
                     4, BYOCL_ERR_UNSUPPORTED, "mem.npy: rank exceeds byocl's maximum of 8");
    expect_mem_error("{'descr': '<f4', 'fortran_order': False, 'shape': "
                     "(99999999999999999999,)}",
                     4, BYOCL_ERR_INVALID,
                     "mem.npy: a dimension in the .npy header is too large");
    expect_mem_error("{'descr': '<f4', 'fortran_order': False, 'shape': "
                     "(4294967296, 4294967296)}",
                     4, BYOCL_ERR_INVALID,
                     "mem.npy: shape (4294967296, 4294967296) is too large");
    expect_mem_error("{'descr': '<f4', 'fortran_order': False, 'shape': "
                     "(4611686018427387904,)}",
                     4, BYOCL_ERR_INVALID, "mem.npy: shape (4611686018427387904) is too large");
    /* Huge but representable: reported as missing data, nothing allocated. */
    expect_mem_error("{'descr': '<f4', 'fortran_order': False, 'shape': "
                     "(2305843009213693952,)}",
                     4, BYOCL_ERR_INVALID,
                     "mem.npy: truncated data: expected 9223372036854775808 bytes for float32 "
                     "(2305843009213693952), found 4");
    expect_mem_error("{'descr': '|f4', 'fortran_order': False, 'shape': ()}", 4,
                     BYOCL_ERR_UNSUPPORTED,
                     "mem.npy: unsupported dtype '|f4' (byocl reads '<f4', '<f2', '<i4', "
                     "'<i8', '|i1', '|u1', '|b1', '<f8', '<i2', '<u2', '<u4', '<u8')");
    expect_mem_error("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}", 4,
                     BYOCL_ERR_INVALID,
                     "mem.npy: malformed .npy header: expected a quoted string, found '['");

    /* Bad magic, unknown version, header longer than the file. */
    byocl_tensor *t = NULL;
    byocl_error err = {0};
    assert_int_equal(byocl_npy_read_mem("PK\3\4 something else", 20, "x.npy", &t, &err),
                     BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "x.npy: not a .npy file (no \\x93NUMPY magic)");
    char buf[64];
    size_t n = make_npy(buf, sizeof buf, 4, "{}", NULL, 0);
    assert_int_equal(byocl_npy_read_mem(buf, n, "x.npy", &t, &err), BYOCL_ERR_UNSUPPORTED);
    assert_string_equal(
        err.msg, "x.npy: unsupported .npy format version 4.0 (byocl reads 1.0, 2.0 and 3.0)");
    n = make_npy(buf, sizeof buf, 1, "{'descr': '<f4'", NULL, 0);
    assert_int_equal(byocl_npy_read_mem(buf, n - 3, "x.npy", &t, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "x.npy: truncated header: expected 25 bytes, found 22");
    assert_null(t);
}

static void test_numpy_file_errors(void **state)
{
    (void)state;
    char msg[8192];
    const char *p = fixture("fortran.npy");
    snprintf(msg, sizeof msg,
             "%s: Fortran-order arrays are not supported; save a C-order array "
             "(np.ascontiguousarray)",
             p);
    expect_npy_error(p, BYOCL_ERR_UNSUPPORTED, msg);

    p = fixture("bigendian.npy");
    snprintf(msg, sizeof msg,
             "%s: big-endian data ('>f4') is not supported; save it little-endian "
             "(e.g. a.astype('<f4'))",
             p);
    expect_npy_error(p, BYOCL_ERR_UNSUPPORTED, msg);

    p = fixture("complex64.npy");
    snprintf(msg, sizeof msg,
             "%s: unsupported dtype '<c8' (byocl reads '<f4', '<f2', '<i4', '<i8', '|i1', "
             "'|u1', '|b1', '<f8', '<i2', '<u2', '<u4', '<u8')",
             p);
    expect_npy_error(p, BYOCL_ERR_UNSUPPORTED, msg);

    p = fixture("truncated.npy");
    snprintf(msg, sizeof msg,
             "%s: truncated data: expected 24 bytes for float32 (2, 3), found 20", p);
    expect_npy_error(p, BYOCL_ERR_INVALID, msg);

    p = fixture("no_such_file.npy");
    snprintf(msg, sizeof msg, "cannot open %s: No such file or directory", p);
    expect_npy_error(p, BYOCL_ERR_IO, msg);
}

static void test_round_trip_every_dtype(void **state)
{
    (void)state;
    const char *dir = ts_tmpdir("npy-round-trip");
    const int64_t dims[] = {3, 1, 4};
    const int64_t empty[] = {2, 0};
    const int64_t rank8[] = {1, 2, 1, 2, 1, 2, 1, 2};
    for (int d = 0; d < BYOCL_DTYPE_COUNT; d++) {
        const struct {
            int rank;
            const int64_t *dims;
        } shapes[] = {{3, dims}, {0, NULL}, {2, empty}, {8, rank8}};
        for (int s = 0; s < 4; s++) {
            byocl_tensor *t = make_tensor((byocl_dtype)d, shapes[s].rank, shapes[s].dims, NULL);
            byocl_tensor_fill_random(t, (uint64_t)(d * 10 + s), -100, 100);
            char path[4200];
            snprintf(path, sizeof path, "%s/t_%d_%d.npy", dir, d, s);
            byocl_error err = {0};
            if (d == BYOCL_BFLOAT16) { /* numpy has none: refused, nothing written */
                assert_int_equal(byocl_npy_write(path, t, &err), BYOCL_ERR_UNSUPPORTED);
                assert_string_equal(err.msg, "a bfloat16 tensor cannot be written as .npy: "
                                             "numpy has no bfloat16 (cast it to float32 first)");
                byocl_tensor_unref(t);
                continue;
            }
            if (byocl_npy_write(path, t, &err) != BYOCL_OK)
                fail_msg("%s", err.msg);
            byocl_tensor *back = NULL;
            if (byocl_tensor_read_file(path, &back, &err) != BYOCL_OK)
                fail_msg("%s", err.msg);
            assert_true(byocl_tensor_equal(t, back));
            /* numpy aligns the data to 64 bytes: header length is a multiple of 64. */
            size_t len;
            char *file = ts_read_file(path, &len);
            assert_int_equal((len - byocl_tensor_nbytes(t)) % 64, 0);
            free(file);
            byocl_tensor_unref(back);
            byocl_tensor_unref(t);
        }
    }
    /* Only the written files remain: no temporaries. */
    assert_int_equal(count_dir_entries(dir), (BYOCL_DTYPE_COUNT - 1) * 4);
}

static void test_atomic_write_failures_leave_nothing(void **state)
{
    (void)state;
    const char *tmp = ts_tmpdir("npy-atomic");
    char dir[4200], path[4300], msg[8192];
    snprintf(dir, sizeof dir, "%s", tmp);
    byocl_tensor *t = fixture_f32();
    byocl_error err = {0};

    /* Into a directory that does not exist. */
    snprintf(path, sizeof path, "%s/missing/x.npy", dir);
    assert_int_equal(byocl_npy_write(path, t, &err), BYOCL_ERR_IO);
    snprintf(msg, sizeof msg, "cannot write %s: No such file or directory", path);
    assert_string_equal(err.msg, msg);
    assert_int_equal(count_dir_entries(dir), 0);

    /* Over a directory: the temporary is written, the rename fails, the temporary goes. */
    snprintf(path, sizeof path, "%s/taken.npy", dir);
    assert_int_equal(mkdir(path, 0777), 0);
    char inner[4400];
    snprintf(inner, sizeof inner, "%s/keep", path);
    FILE *f = fopen(inner, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(byocl_npy_write(path, t, &err), BYOCL_ERR_IO);
    snprintf(msg, sizeof msg, "cannot write %s: Is a directory", path);
    assert_string_equal(err.msg, msg);
    assert_int_equal(count_dir_entries(dir), 1);

    /* The same for .npz. */
    byocl_params *p = byocl_params_new();
    assert_int_equal(byocl_params_set(p, "w", t, NULL), BYOCL_OK);
    snprintf(path, sizeof path, "%s/missing/x.npz", dir);
    assert_int_equal(byocl_npz_write(path, p, &err), BYOCL_ERR_IO);
    snprintf(msg, sizeof msg, "cannot write %s: No such file or directory", path);
    assert_string_equal(err.msg, msg);
    snprintf(path, sizeof path, "%s/taken.npy", dir);
    assert_int_equal(byocl_npz_write(path, p, &err), BYOCL_ERR_IO);
    assert_int_equal(count_dir_entries(dir), 1);

    /* Overwriting an existing file replaces it whole. */
    snprintf(path, sizeof path, "%s/x.npy", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("old contents, much longer than nothing at all; much longer than the new file "
          "would be if it were only partly replaced ............................................"
          "..........................................................................",
          f);
    fclose(f);
    assert_int_equal(byocl_npy_write(path, t, &err), BYOCL_OK);
    byocl_tensor *back = read_npy_ok(path);
    assert_true(byocl_tensor_equal(back, t));
    assert_int_equal(count_dir_entries(dir), 2);
    byocl_tensor_unref(back);
    byocl_params_free(p);
    byocl_tensor_unref(t);
}

static void test_read_file_dispatch(void **state)
{
    (void)state;
    byocl_tensor *t = NULL;
    byocl_error err = {0};
    assert_int_equal(byocl_tensor_read_file(fixture("f32.npy"), &t, &err), BYOCL_OK);
    byocl_tensor *want = fixture_f32();
    assert_true(byocl_tensor_equal(t, want));
    byocl_tensor_unref(t);
    byocl_tensor_unref(want);

    t = (byocl_tensor *)0x1;
    assert_int_equal(byocl_tensor_read_file("inputs/x.txt", &t, &err), BYOCL_ERR_UNSUPPORTED);
    assert_null(t);
    assert_string_equal(err.msg, "inputs/x.txt: unsupported tensor file extension (supported: "
                                 ".npy, .npz, .pb)");
    /* .npz and .pb are read too (tests/test_tensor_pb.c covers them). */
    assert_int_equal(byocl_tensor_read_file("x.npz", &t, &err), BYOCL_ERR_IO);
    assert_string_equal(err.msg, "cannot open x.npz: No such file or directory");
    /* The extension is matched without regard to case. */
    assert_int_equal(byocl_tensor_read_file("missing.NPY", &t, &err), BYOCL_ERR_IO);
    assert_string_equal(err.msg, "cannot open missing.NPY: No such file or directory");
}

/* --------------------------------------------------------------- .npz */

static void check_savez_members(const byocl_params *p)
{
    assert_int_equal(byocl_params_count(p), 3);
    assert_string_equal(byocl_params_name(p, 0), "w");
    assert_string_equal(byocl_params_name(p, 1), "relay.Constant.0");
    assert_string_equal(byocl_params_name(p, 2), "flag");
    byocl_tensor *want[3] = {fixture_f32(), fixture_i64(), fixture_bool()};
    for (int i = 0; i < 3; i++) {
        assert_true(byocl_tensor_equal(byocl_params_tensor(p, i), want[i]));
        byocl_tensor_unref(want[i]);
    }
    assert_ptr_equal(byocl_params_find(p, "flag"), byocl_params_tensor(p, 2));
}

static void test_npz_from_numpy(void **state)
{
    (void)state;
    const char *files[] = {"savez.npz", "savez_compressed.npz"};
    for (int i = 0; i < 2; i++) {
        byocl_params *p = NULL;
        byocl_error err = {0};
        if (byocl_npz_read(fixture(files[i]), &p, &err) != BYOCL_OK)
            fail_msg("%s", err.msg);
        check_savez_members(p);
        byocl_params_free(p);
    }
}

static void test_npz_round_trip(void **state)
{
    (void)state;
    const char *tmp = ts_tmpdir("npz-round-trip");
    char path[4200];
    snprintf(path, sizeof path, "%s/params.npz", tmp);
    byocl_params *p = byocl_params_new();
    byocl_tensor *ts[3] = {fixture_f32(), fixture_i64(), fixture_bool()};
    const char *names[3] = {"w", "relay.Constant.0", "flag"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(byocl_params_set(p, names[i], ts[i], NULL), BYOCL_OK);
        byocl_tensor_unref(ts[i]);
    }
    byocl_error err = {0};
    if (byocl_npz_write(path, p, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    byocl_params *back = NULL;
    if (byocl_npz_read(path, &back, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    check_savez_members(back);
    assert_int_equal(count_dir_entries(tmp), 1);

    /* Deterministic bytes: the same params give the same file. */
    size_t len1, len2;
    char *first = ts_read_file(path, &len1);
    assert_int_equal(byocl_npz_write(path, back, &err), BYOCL_OK);
    char *second = ts_read_file(path, &len2);
    assert_int_equal(len1, len2);
    assert_memory_equal(first, second, len1);
    free(first);
    free(second);

    /* Members are stored .npy files byte-identical to np.save's: the stored archive
     * contains the numpy fixture's bytes verbatim. */
    size_t npy_len;
    char *npy = ts_read_file(fixture("f32.npy"), &npy_len);
    first = ts_read_file(path, &len1);
    bool found = false;
    for (size_t at = 0; !found && at + npy_len <= len1; at++)
        found = memcmp(first + at, npy, npy_len) == 0;
    assert_true(found);
    free(npy);
    free(first);

    /* numpy reads what byocl writes (checked only where python3 with numpy exists). */
    if (access("/usr/bin/python3", X_OK) == 0 &&
        system("/usr/bin/python3 -c 'import numpy' 2>/dev/null") == 0) {
        char cmd[8600];
        snprintf(cmd, sizeof cmd,
                 "/usr/bin/python3 -c \"import numpy as np, sys; z = np.load(sys.argv[1]); "
                 "assert list(z.keys()) == ['w', 'relay.Constant.0', 'flag'], z.keys(); "
                 "assert z['w'].dtype == np.float32 and z['w'].shape == (2, 3); "
                 "assert z['w'][1, 0] == np.float32(3e38) and z['w'][0, 1] == -1.5; "
                 "assert z['relay.Constant.0'].tolist() == [2**63 - 1, -2**63, 0, -1, 5]; "
                 "assert z['flag'].dtype == bool and z['flag'].tolist() == "
                 "[[True, False, True], [False, False, True]]\" '%s'",
                 path);
        assert_int_equal(system(cmd), 0);
    }

    /* An empty collection is an empty archive, as np.savez() writes it. */
    byocl_params *none = byocl_params_new();
    assert_int_equal(byocl_npz_write(path, none, &err), BYOCL_OK);
    byocl_params_free(none);
    none = NULL;
    assert_int_equal(byocl_npz_read(path, &none, &err), BYOCL_OK);
    assert_int_equal(byocl_params_count(none), 0);
    byocl_params_free(none);

    byocl_params_free(back);
    byocl_params_free(p);
}

static void expect_npz_error(const char *path, byocl_status status, const char *msg)
{
    byocl_params *p = (byocl_params *)0x1;
    byocl_error err = {0};
    assert_int_equal(byocl_npz_read(path, &p, &err), status);
    assert_null(p);
    assert_string_equal(err.msg, msg);
}

/* The same archives from memory (as a fuzzer or an embedding program hands them over);
 * errors name the buffer by `what`, and a cut archive is refused, not read past. */
static void test_npz_from_memory(void **state)
{
    (void)state;
    const char *files[] = {"savez.npz", "savez_compressed.npz"};
    for (int i = 0; i < 2; i++) {
        size_t len;
        char *data = ts_read_file(fixture(files[i]), &len);
        byocl_params *p = NULL;
        byocl_error err = {0};
        if (byocl_npz_read_mem(data, len, "the upload", &p, &err) != BYOCL_OK)
            fail_msg("%s", err.msg);
        check_savez_members(p);
        byocl_params_free(p);
        assert_int_equal(byocl_npz_read_mem(data, len / 2, "the upload", &p, &err),
                         BYOCL_ERR_INVALID);
        assert_null(p);
        assert_string_equal(err.msg,
                            "the upload: not a zip archive (an .npz is what np.savez writes)");
        free(data);
    }
}

static void test_npz_errors(void **state)
{
    (void)state;
    char msg[8192];
    char path[4200];
    snprintf(path, sizeof path, "%s", fixture("not_a_zip.npz"));
    snprintf(msg, sizeof msg, "%s: not a zip archive (an .npz is what np.savez writes)", path);
    expect_npz_error(path, BYOCL_ERR_INVALID, msg);

    snprintf(path, sizeof path, "%s", fixture("other_member.npz"));
    snprintf(msg, sizeof msg,
             "%s: member 'README.txt' is not a .npy array (an .npz holds only NAME.npy "
             "members)",
             path);
    expect_npz_error(path, BYOCL_ERR_INVALID, msg);

    snprintf(path, sizeof path, "%s", fixture("bad_crc.npz"));
    snprintf(msg, sizeof msg, "%s: corrupt member w.npy: CRC error", path);
    expect_npz_error(path, BYOCL_ERR_INVALID, msg);

    snprintf(path, sizeof path, "%s", fixture("missing.npz"));
    snprintf(msg, sizeof msg, "cannot open %s: No such file or directory", path);
    expect_npz_error(path, BYOCL_ERR_IO, msg);

    const char *tmp = ts_tmpdir("npz-errors");
    snprintf(path, sizeof path, "%s/empty.npz", tmp);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(msg, sizeof msg, "%s: not a zip archive (an .npz is what np.savez writes)", path);
    expect_npz_error(path, BYOCL_ERR_INVALID, msg);

    /* A member with a bad .npy inside names the archive and the member. */
    snprintf(path, sizeof path, "%s", fixture("complex64_member.npz"));
    snprintf(msg, sizeof msg,
             "%s (member w.npy): unsupported dtype '<c8' (byocl reads '<f4', '<f2', '<i4', "
             "'<i8', '|i1', '|u1', '|b1', '<f8', '<i2', '<u2', '<u4', '<u8')",
             path);
    expect_npz_error(path, BYOCL_ERR_UNSUPPORTED, msg);
}

/* -------------------------------------------------------------- params */

static void test_params_map(void **state)
{
    (void)state;
    byocl_params *p = byocl_params_new();
    assert_int_equal(byocl_params_count(p), 0);
    assert_null(byocl_params_find(p, "a"));
    byocl_tensor *a = fixture_f32(), *b = fixture_i64();
    assert_int_equal(byocl_params_set(p, "b", b, NULL), BYOCL_OK);
    assert_int_equal(byocl_params_set(p, "a", a, NULL), BYOCL_OK);
    assert_int_equal(byocl_params_count(p), 2);
    assert_string_equal(byocl_params_name(p, 0), "b"); /* insertion order */
    assert_ptr_equal(byocl_params_find(p, "a"), a);
    /* Replacing keeps the position; setting the same tensor again is safe. */
    assert_int_equal(byocl_params_set(p, "b", a, NULL), BYOCL_OK);
    assert_int_equal(byocl_params_set(p, "b", a, NULL), BYOCL_OK);
    assert_int_equal(byocl_params_count(p), 2);
    assert_ptr_equal(byocl_params_tensor(p, 0), a);
    assert_null(byocl_params_name(p, 2));
    assert_null(byocl_params_tensor(p, -1));
    byocl_error err = {0};
    assert_int_equal(byocl_params_set(p, "", a, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "a parameter needs a non-empty name");
    /* The params hold their own references. */
    byocl_tensor_unref(a);
    byocl_tensor_unref(b);
    byocl_tensor *want = fixture_f32();
    assert_true(byocl_tensor_equal(byocl_params_find(p, "a"), want));
    byocl_tensor_unref(want);
    byocl_params_free(p);
    byocl_params_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numpy_writes_every_dtype),
        cmocka_unit_test(test_numpy_scalar_empty_rank4),
        cmocka_unit_test(test_numpy_format_versions_2_and_3),
        cmocka_unit_test(test_header_dict_variants),
        cmocka_unit_test(test_header_errors),
        cmocka_unit_test(test_numpy_file_errors),
        cmocka_unit_test(test_round_trip_every_dtype),
        cmocka_unit_test(test_atomic_write_failures_leave_nothing),
        cmocka_unit_test(test_read_file_dispatch),
        cmocka_unit_test(test_npz_from_numpy),
        cmocka_unit_test(test_npz_round_trip),
        cmocka_unit_test(test_npz_from_memory),
        cmocka_unit_test(test_npz_errors),
        cmocka_unit_test(test_params_map),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
