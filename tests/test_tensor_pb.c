/* ONNX TensorProto .pb files: every byocl dtype from raw_data and from the typed fields,
 * byte-identical writing, and the files that must be refused (dtypes byocl lacks, fields
 * that contradict the dims, another message type, truncation). Fixtures under
 * tests/fixtures/tensor_pb/ come from tests/gen/gen_tensor_pb.py (onnx's own serializer);
 * the values below repeat that script's. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *fixture(const char *name)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", ts_fixture("tensor_pb"), name);
    return path;
}

static byocl_tensor *read_ok(const char *path, char **name)
{
    byocl_error err = {0};
    byocl_tensor *t = NULL;
    if (byocl_pb_read(path, &t, name, &err) != BYOCL_OK)
        fail_msg("reading %s: %s", path, err.msg);
    return t;
}

/* The script's VALUES = [-1.5, 0, 2.25, 3, -7, 100] as each dtype stores them. */
static void check_values(const byocl_tensor *t, byocl_dtype dtype)
{
    static const double floats[6] = {-1.5, 0, 2.25, 3, -7, 100};
    static const double ints[6] = {-1, 0, 2, 3, -7, 100};
    static const double u8[6] = {1, 0, 2, 3, 7, 100};
    static const double u16[6] = {1, 0, 65535, 3, 7, 100};
    static const double u32[6] = {1, 0, 4294967295.0, 3, 7, 100};
    static const double bools[6] = {1, 0, 1, 1, 0, 1};
    /* uint64 beyond 2^53 and above 2^63: compared as integers, a double would round */
    static const uint64_t u64[6] = {1, 0, UINT64_MAX, 1ull << 63, (1ull << 53) + 1, 100};
    const double *want = byocl_dtype_is_float(dtype) ? floats
                         : dtype == BYOCL_UINT8      ? u8
                         : dtype == BYOCL_UINT16     ? u16
                         : dtype == BYOCL_UINT32     ? u32
                         : dtype == BYOCL_BOOL       ? bools
                                                     : ints;
    assert_int_equal(byocl_tensor_dtype(t), dtype);
    const byocl_shape *s = byocl_tensor_shape(t);
    assert_int_equal(s->rank, 2);
    assert_int_equal(s->dims[0], 2);
    assert_int_equal(s->dims[1], 3);
    if (dtype == BYOCL_UINT64) {
        assert_memory_equal(byocl_tensor_cdata(t), u64, sizeof u64);
        return;
    }
    for (int i = 0; i < 6; i++)
        assert_true(byocl_tensor_get(t, i) == want[i]);
}

static const struct {
    const char *tag;
    byocl_dtype dtype;
} dtypes[] = {
    {"f32", BYOCL_FLOAT32}, {"f16", BYOCL_FLOAT16}, {"i32", BYOCL_INT32}, {"i64", BYOCL_INT64},
    {"i8", BYOCL_INT8},     {"u8", BYOCL_UINT8},    {"bool", BYOCL_BOOL},   {"f64", BYOCL_FLOAT64},
    {"i16", BYOCL_INT16},   {"u16", BYOCL_UINT16},  {"u32", BYOCL_UINT32},  {"u64", BYOCL_UINT64},
    {"bf16", BYOCL_BFLOAT16},
};

/* raw_data (named "x") and the typed fields (no name) give the same tensor. */
static void test_every_dtype(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++) {
        char file[64];
        char *name;
        snprintf(file, sizeof file, "%s_raw.pb", dtypes[i].tag);
        byocl_tensor *raw = read_ok(fixture(file), &name);
        check_values(raw, dtypes[i].dtype);
        assert_string_equal(name, "x");
        free(name);
        snprintf(file, sizeof file, "%s_typed.pb", dtypes[i].tag);
        byocl_tensor *typed = read_ok(fixture(file), &name);
        assert_string_equal(name, "");
        free(name);
        assert_true(byocl_tensor_equal(raw, typed));
        byocl_tensor_unref(raw);
        byocl_tensor_unref(typed);
    }
}

static void test_scalar_and_empty(void **state)
{
    (void)state;
    byocl_tensor *s = read_ok(fixture("scalar_f32.pb"), NULL);
    assert_int_equal(byocl_tensor_shape(s)->rank, 0);
    assert_true(byocl_tensor_get(s, 0) == 2.5);
    byocl_tensor_unref(s);
    byocl_tensor *e = read_ok(fixture("empty_f32.pb"), NULL);
    assert_int_equal(byocl_tensor_shape(e)->rank, 2);
    assert_int_equal(byocl_tensor_shape(e)->dims[0], 0);
    assert_int_equal(byocl_tensor_shape(e)->dims[1], 3);
    assert_int_equal(byocl_tensor_numel(e), 0);
    byocl_tensor_unref(e);
}

/* byocl writes what onnx's numpy_helper.from_array writes, byte for byte, and reads it
 * back; without a name, the name field is left out. */
static void test_write_matches_onnx(void **state)
{
    (void)state;
    const char *dir = ts_tmpdir("tensor_pb");
    char path[4096];
    snprintf(path, sizeof path, "%s/out.pb", dir);
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++) {
        char file[64];
        snprintf(file, sizeof file, "%s_raw.pb", dtypes[i].tag);
        byocl_tensor *t = read_ok(fixture(file), NULL);
        byocl_error err = {0};
        assert_int_equal(byocl_pb_write(path, t, "x", &err), BYOCL_OK);
        size_t want_len, got_len;
        char *want = ts_read_file(fixture(file), &want_len);
        char *got = ts_read_file(path, &got_len);
        assert_int_equal(got_len, want_len);
        assert_memory_equal(got, want, want_len);
        free(want);
        free(got);

        assert_int_equal(byocl_pb_write(path, t, NULL, &err), BYOCL_OK);
        char *name;
        byocl_tensor *back = read_ok(path, &name);
        assert_string_equal(name, "");
        assert_true(byocl_tensor_equal(back, t));
        free(name);
        byocl_tensor_unref(back);
        byocl_tensor_unref(t);
    }
    ts_remove_tree(dir);
}

static void expect_error(const char *file, byocl_status status, const char *msg_after_path)
{
    byocl_error err = {0};
    byocl_tensor *t = (byocl_tensor *)0x1;
    char *name = (char *)0x1;
    const char *path = fixture(file);
    assert_int_equal(byocl_pb_read(path, &t, &name, &err), status);
    assert_null(t);
    assert_null(name);
    char want[8192];
    snprintf(want, sizeof want, "%s: %s", path, msg_after_path);
    assert_string_equal(err.msg, want);
}

static void test_refused(void **state)
{
    (void)state;
    expect_error("complex64.pb", BYOCL_ERR_UNSUPPORTED,
                 "dtype complex64 is not supported (byocl has float32, float16, int32, int64, "
                 "int8, uint8, bool, float64, int16, uint16, uint32, uint64, bfloat16)");
    expect_error("external.pb", BYOCL_ERR_UNSUPPORTED,
                 "values stored in an external file are not supported");
    expect_error("unknown_dtype.pb", BYOCL_ERR_INVALID,
                 "not an ONNX TensorProto: unknown data type 99");
    expect_error("raw_short.pb", BYOCL_ERR_INVALID,
                 "raw_data has 20 bytes, but dims (2, 3) of float32 need 24");
    expect_error("both_fields.pb", BYOCL_ERR_INVALID,
                 "holds values in both raw_data and float_data (a tensor uses one)");
    expect_error("no_data.pb", BYOCL_ERR_INVALID, "has no values for its 4 elements (dims (2, 2))");
    expect_error("wrong_field.pb", BYOCL_ERR_INVALID,
                 "int64 values are stored in float_data, but ONNX keeps them in int64_data");
    expect_error("typed_short.pb", BYOCL_ERR_INVALID,
                 "int32_data has 2 values, but dims (3) need 3");
    /* Another message type parses as protobuf, but not as a tensor. */
    expect_error("model.pb", BYOCL_ERR_INVALID, "not an ONNX TensorProto: it has no data_type");
}

/* Every prefix of a valid file is refused (none crashes, none leaks). */
static void test_truncated(void **state)
{
    (void)state;
    size_t len;
    char *data = ts_read_file(fixture("f32_raw.pb"), &len);
    for (size_t n = 0; n < len; n++) {
        byocl_error err = {0};
        byocl_tensor *t = NULL;
        assert_int_not_equal(byocl_pb_read_mem(data, n, "cut.pb", &t, NULL, &err), BYOCL_OK);
        assert_null(t);
        assert_int_equal(strncmp(err.msg, "cut.pb: ", 8), 0);
    }
    byocl_error err = {0};
    byocl_tensor *t = NULL;
    assert_int_equal(byocl_pb_read_mem(data, 30, "cut.pb", &t, NULL, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "cut.pb: not an ONNX TensorProto (the protobuf data is "
                                 "truncated or malformed)");
    free(data);
}

static void test_missing_file(void **state)
{
    (void)state;
    byocl_error err = {0};
    byocl_tensor *t = NULL;
    assert_int_equal(byocl_pb_read("nope/x.pb", &t, NULL, &err), BYOCL_ERR_IO);
    assert_string_equal(err.msg, "cannot open nope/x.pb: No such file or directory");
}

/* byocl_tensor_read_file: .pb, and an .npz with exactly one member. */
static void test_read_file(void **state)
{
    (void)state;
    byocl_error err = {0};
    byocl_tensor *t = NULL;
    assert_int_equal(byocl_tensor_read_file(fixture("I64_RAW.PB") /* .PB is read as .pb: no such file */, &t, &err),
                     BYOCL_ERR_IO);
    assert_int_equal(byocl_tensor_read_file(fixture("i64_raw.pb"), &t, &err), BYOCL_OK);
    check_values(t, BYOCL_INT64);

    const char *dir = ts_tmpdir("tensor_pb_npz");
    char one[4096], two[4096];
    snprintf(one, sizeof one, "%s/one.npz", dir);
    snprintf(two, sizeof two, "%s/two.npz", dir);
    byocl_params *p = byocl_params_new();
    assert_int_equal(byocl_params_set(p, "only", t, &err), BYOCL_OK);
    assert_int_equal(byocl_npz_write(one, p, &err), BYOCL_OK);
    assert_int_equal(byocl_params_set(p, "second", t, &err), BYOCL_OK);
    assert_int_equal(byocl_npz_write(two, p, &err), BYOCL_OK);
    byocl_params_free(p);

    byocl_tensor *u = NULL;
    assert_int_equal(byocl_tensor_read_file(one, &u, &err), BYOCL_OK);
    assert_true(byocl_tensor_equal(t, u));
    byocl_tensor_unref(u);
    assert_int_equal(byocl_tensor_read_file(two, &u, &err), BYOCL_ERR_INVALID);
    assert_null(u);
    char want[4200];
    snprintf(want, sizeof want,
             "%s: the .npz has 2 members (only, second); a tensor file needs exactly one", two);
    assert_string_equal(err.msg, want);
    byocl_tensor_unref(t);
    ts_remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_dtype),   cmocka_unit_test(test_scalar_and_empty),
        cmocka_unit_test(test_write_matches_onnx), cmocka_unit_test(test_refused),
        cmocka_unit_test(test_truncated),     cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_read_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
