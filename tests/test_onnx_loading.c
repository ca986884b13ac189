/* Loading ONNX models, the memory it takes (docs/onnx.md, "Memory"): a model of 200 MB of
 * weights, generated here into the build tree, is printed by `byocl print` in a child
 * process whose peak resident memory (wait4's ru_maxrss) must stay near the file's size;
 * the same holds with the weights in an external data file; the same model with an op
 * byocl lacks is refused before any weight is read; a model from memory does not read
 * external data; and the
 * protobuf walk that sets the weights aside (onnx_wire.c) on hand-made bytes, with the
 * model it falls back on reading whole. */
#define _DEFAULT_SOURCE /* wait4 */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "frontend/onnx/onnx_frontend.h"
#include "frontend/onnx/onnx_wire.h"

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define UNDER_VALGRIND (RUNNING_ON_VALGRIND != 0)
#else
#define UNDER_VALGRIND 0
#endif

/* ------------------------------------------------ protobuf, written by hand */

typedef struct pb {
    uint8_t *d;
    size_t n, cap;
} pb;

enum { VARINT = 0, BYTES = 2 };

static void pb_bytes(pb *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = 2 * (b->n + n) + 64;
        b->d = realloc(b->d, b->cap);
        assert_non_null(b->d);
    }
    if (n)
        memcpy(b->d + b->n, p, n);
    b->n += n;
}

static void pb_varint(pb *b, uint64_t v)
{
    do {
        uint8_t c = (uint8_t)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
        pb_bytes(b, &c, 1);
        v >>= 7;
    } while (v);
}

static void pb_key(pb *b, int field, int wire) { pb_varint(b, (uint64_t)field << 3 | (uint64_t)wire); }

static void pb_int(pb *b, int field, uint64_t v)
{
    pb_key(b, field, VARINT);
    pb_varint(b, v);
}

static void pb_blob(pb *b, int field, const void *p, size_t n)
{
    pb_key(b, field, BYTES);
    pb_varint(b, n);
    pb_bytes(b, p, n);
}

static void pb_str(pb *b, int field, const char *s) { pb_blob(b, field, s, strlen(s)); }

/* Appends message m as field `field` and empties m. */
static void pb_msg(pb *b, int field, pb *m)
{
    pb_blob(b, field, m->d, m->n);
    free(m->d);
    *m = (pb){0};
}

static size_t varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >>= 7)
        n++;
    return n;
}

/* ONNX's field numbers (codegen/frontend/onnx/onnx.proto). */
enum {
    MODEL_IR_VERSION = 1, MODEL_GRAPH = 7, MODEL_OPSET = 8, OPSET_VERSION = 2,
    GRAPH_NODE = 1, GRAPH_NAME = 2, GRAPH_INITIALIZER = 5, GRAPH_INPUT = 11, GRAPH_OUTPUT = 12,
    NODE_INPUT = 1, NODE_OUTPUT = 2, NODE_OP_TYPE = 4, NODE_ATTRIBUTE = 5,
    ATTR_NAME = 1, ATTR_I = 3, ATTR_TYPE = 20, ATTR_TYPE_INT = 2,
    TENSOR_DIMS = 1, TENSOR_DATA_TYPE = 2, TENSOR_FLOAT_DATA = 4, TENSOR_NAME = 8,
    TENSOR_RAW_DATA = 9, TENSOR_EXTERNAL_DATA = 13, TENSOR_DATA_LOCATION = 14, EXTERNAL = 1,
    ENTRY_KEY = 1, ENTRY_VALUE = 2, FLOAT = 1,
    VI_NAME = 1, VI_TYPE = 2, TYPE_TENSOR = 1, TT_ELEM_TYPE = 1, TT_SHAPE = 2, SHAPE_DIM = 1,
    DIM_VALUE = 1,
};

static void model_header(pb *b, int opset)
{
    pb_int(b, MODEL_IR_VERSION, 7);
    pb o = {0};
    pb_int(&o, OPSET_VERSION, (uint64_t)opset);
    pb_msg(b, MODEL_OPSET, &o);
}

/* A float32 value: its name, and its dims when rank > 0. */
static void value_info(pb *g, int field, const char *name, int rank, const int64_t *dims)
{
    pb vi = {0}, ty = {0}, tt = {0}, shape = {0};
    pb_str(&vi, VI_NAME, name);
    pb_int(&tt, TT_ELEM_TYPE, FLOAT);
    for (int i = 0; i < rank; i++) {
        pb dim = {0};
        pb_int(&dim, DIM_VALUE, (uint64_t)dims[i]);
        pb_msg(&shape, SHAPE_DIM, &dim);
    }
    if (rank > 0)
        pb_msg(&tt, TT_SHAPE, &shape);
    pb_msg(&ty, TYPE_TENSOR, &tt);
    pb_msg(&vi, VI_TYPE, &ty);
    pb_msg(g, field, &vi);
}

static void node(pb *g, const char *op, const char *in0, const char *in1, const char *out,
                 const char *int_attr, int64_t value)
{
    pb n = {0};
    pb_str(&n, NODE_INPUT, in0);
    if (in1)
        pb_str(&n, NODE_INPUT, in1);
    pb_str(&n, NODE_OUTPUT, out);
    pb_str(&n, NODE_OP_TYPE, op);
    if (int_attr) {
        pb a = {0};
        pb_str(&a, ATTR_NAME, int_attr);
        pb_int(&a, ATTR_I, (uint64_t)value);
        pb_int(&a, ATTR_TYPE, ATTR_TYPE_INT);
        pb_msg(&n, NODE_ATTRIBUTE, &a);
    }
    pb_msg(g, GRAPH_NODE, &n);
}

/* An initializer's fields before its raw_data. */
static void tensor_header(pb *t, const char *name, int rank, const int64_t *dims)
{
    for (int i = 0; i < rank; i++)
        pb_int(t, TENSOR_DIMS, (uint64_t)dims[i]);
    pb_int(t, TENSOR_DATA_TYPE, FLOAT);
    pb_str(t, TENSOR_NAME, name);
}

/* ------------------------------------------------ the generated model */

enum { BIG_D = 1024, BIG_LAYERS = 50 }; /* 50 weights of 1024 x 1024 float32: 200 MiB */

/* An initializer's external_data entry. */
static void external_entry(pb *t, const char *key, const char *value)
{
    pb e = {0};
    pb_str(&e, ENTRY_KEY, key);
    pb_str(&e, ENTRY_VALUE, value);
    pb_msg(t, TENSOR_EXTERNAL_DATA, &e);
}

/* Writes x (1, D) -> Gemm(transB=1) x LAYERS -> [Frobnicate] -> y, each weight an
 * initializer whose raw_data is streamed to the file (the test itself stays small); with
 * `external`, the weights go to "<path>.data" instead, one after the other, as external
 * data. */
static void write_big_model(const char *path, bool unsupported_op, bool external)
{
    const int64_t x_dims[2] = {1, BIG_D}, w_dims[2] = {BIG_D, BIG_D};
    const size_t raw_len = (size_t)BIG_D * BIG_D * sizeof(float);
    pb g = {0};
    pb_str(&g, GRAPH_NAME, "big");
    char in[32], w[32], out[32];
    for (int i = 0; i < BIG_LAYERS; i++) {
        snprintf(in, sizeof in, i ? "y%d" : "x", i - 1);
        snprintf(w, sizeof w, "w%d", i);
        snprintf(out, sizeof out, "y%d", i);
        node(&g, "Gemm", in, w, out, "transB", 1);
    }
    if (unsupported_op)
        node(&g, "Frobnicate", out, NULL, "z", NULL, 0);
    value_info(&g, GRAPH_INPUT, "x", 2, x_dims);
    value_info(&g, GRAPH_OUTPUT, unsupported_op ? "z" : out, 0, NULL);

    /* Each initializer: its header, then raw_data's key, length and bytes, or where in
     * the data file its bytes are. */
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char location[4200], offset[32], length[32]; /* path (under 4096) + ".data" */
    snprintf(location, sizeof location, "%s.data", base);
    snprintf(length, sizeof length, "%zu", raw_len);
    pb headers[BIG_LAYERS];
    size_t graph_len = g.n;
    for (int i = 0; i < BIG_LAYERS; i++) {
        headers[i] = (pb){0};
        snprintf(w, sizeof w, "w%d", i);
        tensor_header(&headers[i], w, 2, w_dims);
        if (external) {
            snprintf(offset, sizeof offset, "%zu", (size_t)i * raw_len);
            external_entry(&headers[i], "location", location);
            external_entry(&headers[i], "offset", offset);
            external_entry(&headers[i], "length", length);
            pb_int(&headers[i], TENSOR_DATA_LOCATION, EXTERNAL);
        } else {
            pb_key(&headers[i], TENSOR_RAW_DATA, BYTES);
            pb_varint(&headers[i], raw_len);
        }
        size_t t_len = headers[i].n + (external ? 0 : raw_len);
        graph_len += varint_size((uint64_t)GRAPH_INITIALIZER << 3) + varint_size(t_len) + t_len;
    }
    pb m = {0};
    model_header(&m, 13);
    pb_key(&m, MODEL_GRAPH, BYTES);
    pb_varint(&m, graph_len);

    char data_path[4200];
    snprintf(data_path, sizeof data_path, "%s.data", path);
    FILE *f = fopen(path, "wb"), *data = external ? fopen(data_path, "wb") : f;
    assert_non_null(f);
    assert_non_null(data);
    assert_int_equal(fwrite(m.d, 1, m.n, f), m.n);
    assert_int_equal(fwrite(g.d, 1, g.n, f), g.n);
    float *values = malloc(raw_len);
    assert_non_null(values);
    for (int i = 0; i < BIG_LAYERS; i++) {
        for (size_t k = 0; k < raw_len / sizeof(float); k++)
            values[k] = (float)((k + (size_t)i) % 17) * 0.001f;
        pb key = {0};
        pb_key(&key, GRAPH_INITIALIZER, BYTES);
        pb_varint(&key, headers[i].n + (external ? 0 : raw_len));
        assert_int_equal(fwrite(key.d, 1, key.n, f), key.n);
        assert_int_equal(fwrite(headers[i].d, 1, headers[i].n, f), headers[i].n);
        assert_int_equal(fwrite(values, 1, raw_len, data), raw_len);
        free(key.d);
        free(headers[i].d);
    }
    free(values);
    free(m.d);
    free(g.d);
    if (external)
        assert_int_equal(fclose(data), 0);
    assert_int_equal(fclose(f), 0);
}

/* Runs `byocl ARGS...` with stdout to /dev/null and stderr to `err_path`; returns its exit
 * status and its peak resident memory in bytes. The child starts as a copy of this
 * process, whose own resident memory (a few MB) counts in that peak too. */
static int run_measured(const char *const *args, const char *err_path, long long *peak)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout) || !freopen(err_path, "w", stderr))
            _exit(126);
        char *argv[8] = {(char *)BYOCL_CLI_PATH};
        for (int i = 0; args[i] && i < 6; i++)
            argv[i + 1] = (char *)args[i];
        execv(BYOCL_CLI_PATH, argv);
        _exit(127);
    }
    int status;
    struct rusage ru;
    assert_int_equal(wait4(pid, &status, 0, &ru), pid);
    assert_true(WIFEXITED(status));
    *peak = (long long)ru.ru_maxrss * 1024; /* kilobytes on Linux */
    return WEXITSTATUS(status);
}

static long long file_size(const char *path)
{
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    return (long long)sb.st_size;
}

/* Sanitizers and valgrind change what memory a process takes: nothing to measure there. */
static bool measurable(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return false;
#endif
#endif
    return !UNDER_VALGRIND;
}

#define MB (1024.0 * 1024.0)
/* What `byocl print` of a tiny model takes (the program, its libraries, the op tables):
 * about 30 MB measured; the bound leaves room for other builds and libc versions. */
#define WORKING_SET (64LL << 20)

/* `byocl print` of a model of 200 MB of weights peaks near their size (it was 3.1x: the
 * file read into memory, protobuf-c's copy of each raw_data, the tensors), whether they
 * lie in the .onnx or in an external data file beside it. */
static void test_peak_memory_of_loading(void **state)
{
    (void)state;
    if (!measurable())
        skip();
    for (int external = 0; external < 2; external++) {
        char path[4096], data_path[4200], err_path[4200];
        const char *dir = ts_tmpdir("onnx_loading_big");
        snprintf(path, sizeof path, "%s/big.onnx", dir);
        snprintf(data_path, sizeof data_path, "%s.data", path);
        snprintf(err_path, sizeof err_path, "%s.err", path);
        write_big_model(path, false, external);
        long long size = file_size(path) + (external ? file_size(data_path) : 0), peak;
        int rc = run_measured((const char *const[]){"print", path, NULL}, err_path, &peak);
        size_t len;
        char *err = ts_read_file(err_path, &len);
        if (rc != 0)
            fail_msg("byocl print %s: exit %d: %s", path, rc, err);
        free(err);
        long long bound = size + size * 3 / 10 + WORKING_SET;
        print_message("byocl print of a %.1f MB model%s: peak %.1f MB (bound %.1f MB)\n",
                      size / MB, external ? " (external data)" : "", peak / MB, bound / MB);
        ts_remove_tree(dir); /* the model is 200 MB */
        assert_true(peak < bound);
    }
}

/* A model with an op byocl lacks is refused before any of its weights is read. */
static void test_unsupported_op_reads_no_weight(void **state)
{
    (void)state;
    if (!measurable())
        skip();
    char path[4096], err_path[4200], want[8400];
    const char *dir = ts_tmpdir("onnx_loading_bad");
    snprintf(path, sizeof path, "%s/big_frobnicate.onnx", dir);
    snprintf(err_path, sizeof err_path, "%s.err", path);
    write_big_model(path, true, false);
    long long size = file_size(path), peak;
    int rc = run_measured((const char *const[]){"print", path, NULL}, err_path, &peak);
    size_t len;
    char *err = ts_read_file(err_path, &len);
    snprintf(want, sizeof want,
             "byocl: error: %s: unsupported ONNX ops: Frobnicate x1 (opset 13)\n", path);
    assert_int_equal(rc, 1);
    assert_string_equal(err, want);
    free(err);
    print_message("refusing a %.1f MB model: peak %.1f MB\n", size / MB, peak / MB);
    ts_remove_tree(dir); /* the model is 200 MB */
    assert_true(peak < WORKING_SET); /* the weights are 200 MB */
}

/* ------------------------------------------------ the walk (onnx_wire.c) */

/* A model whose graph has an initializer with raw_data (given twice when `twice`: the
 * last counts) and one with float_data; with `raw`, without raw_data when NULL. */
static pb wire_model(const char *raw, bool twice, size_t *raw_at)
{
    const int64_t dims[1] = {2};
    const float typed[2] = {1.5f, -2.5f};
    pb g = {0}, t = {0}, m = {0};
    node(&g, "Add", "a", "b", "y", NULL, 0);
    tensor_header(&t, "a", 1, dims);
    if (raw && twice)
        pb_blob(&t, TENSOR_RAW_DATA, "stale!!!", 8);
    size_t raw_in_t = 0;
    if (raw) {
        pb_key(&t, TENSOR_RAW_DATA, BYTES);
        pb_varint(&t, 8);
        raw_in_t = t.n;
        pb_bytes(&t, raw, 8);
    }
    pb_key(&g, GRAPH_INITIALIZER, BYTES);
    pb_varint(&g, t.n);
    size_t t_in_g = g.n;
    pb_bytes(&g, t.d, t.n);
    free(t.d);
    t = (pb){0};
    tensor_header(&t, "b", 1, dims);
    pb_blob(&t, TENSOR_FLOAT_DATA, typed, sizeof typed);
    pb_msg(&g, GRAPH_INITIALIZER, &t);
    value_info(&g, GRAPH_OUTPUT, "y", 1, dims);
    model_header(&m, 13);
    pb_key(&m, MODEL_GRAPH, BYTES);
    pb_varint(&m, g.n);
    if (raw_at)
        *raw_at = m.n + t_in_g + raw_in_t;
    pb_bytes(&m, g.d, g.n);
    free(g.d);
    return m;
}

/* The model of wire_model, loaded from memory: its output is the sum of its two
 * initializers, (4.5, 1.5). */
static void expect_sum_of_initializers(const void *data, size_t size, const char *name)
{
    byocl_error err = {0};
    byocl_module *m = NULL;
    if (onnx_import_mem(data, size, name, NULL, &m, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(byocl_infer_types(m, &err), BYOCL_OK);
    byocl_tensor **y = NULL;
    int n = 0;
    assert_int_equal(byocl_reference_run(m, "main", NULL, 0, &y, &n, &err), BYOCL_OK);
    const float sum[2] = {4.5f, 1.5f};
    ts_assert_f32_close(y[0], sum, 2, 0, 0);
    byocl_tensors_free(y, n);
    byocl_module_free(m);
}

static void test_wire_strip(void **state)
{
    (void)state;
    const float a[2] = {3.0f, 4.0f};
    for (int twice = 0; twice < 2; twice++) {
        size_t raw_at;
        pb whole = wire_model((const char *)a, twice, &raw_at);
        pb want = wire_model(NULL, false, NULL);
        onnx_wire_skeleton s;
        assert_int_equal(onnx_wire_strip(whole.d, whole.n, &s), BYOCL_OK);
        /* The skeleton is the model written without raw_data, byte for byte. */
        assert_int_equal(s.len, want.n);
        assert_memory_equal(s.data, want.d, want.n);
        assert_int_equal(s.n_inits, 2);
        assert_true(s.inits[0].has_raw);
        assert_int_equal(s.inits[0].offset, raw_at);
        assert_int_equal(s.inits[0].len, 8);
        assert_memory_equal(whole.d + s.inits[0].offset, a, 8);
        assert_false(s.inits[1].has_raw);
        onnx_wire_skeleton_free(&s);

        /* Loaded from memory, the model adds the two initializers: raw and typed. */
        expect_sum_of_initializers(whole.d, whole.n, "wire.onnx");
        free(whole.d);
        free(want.d);
    }
}

/* What the walk does not handle is left to reading the model whole. */
static void test_wire_not_handled(void **state)
{
    (void)state;
    const float a[2] = {3.0f, 4.0f};
    pb whole = wire_model((const char *)a, false, NULL);
    onnx_wire_skeleton s;
    /* Cut inside raw_data, and at every other length: refused, none crashes. */
    for (size_t n = 0; n < whole.n; n++) {
        byocl_status st = onnx_wire_strip(whole.d, n, &s);
        if (st == BYOCL_OK)
            onnx_wire_skeleton_free(&s);
        else
            assert_int_equal(st, BYOCL_ERR_INVALID);
    }
    assert_int_equal(onnx_wire_strip(whole.d, whole.n - 3, &s), BYOCL_ERR_INVALID);
    /* A group (wire type 3). */
    const uint8_t group[] = {0x0b, 0x0c};
    assert_int_equal(onnx_wire_strip(group, sizeof group, &s), BYOCL_ERR_INVALID);

    /* A graph in two pieces, which protobuf merges: read whole, the weights still right. */
    pb two = {0};
    pb_bytes(&two, whole.d, whole.n);
    pb extra = {0}, t = {0};
    const int64_t dims[1] = {2};
    tensor_header(&t, "c", 1, dims);
    pb_blob(&t, TENSOR_RAW_DATA, a, sizeof a);
    pb_msg(&extra, GRAPH_INITIALIZER, &t);
    pb_msg(&two, MODEL_GRAPH, &extra);
    assert_int_equal(onnx_wire_strip(two.d, two.n, &s), BYOCL_ERR_INVALID);
    expect_sum_of_initializers(two.d, two.n, "two.onnx");
    free(two.d);
    free(whole.d);
}

/* A model given as bytes has no folder to find its external data in (and a fuzzer's input
 * must not make byocl read files): refused, naming the initializer. */
static void test_external_data_from_memory(void **state)
{
    (void)state;
    size_t len;
    char *data = ts_read_file(ts_fixture("onnx/external/test_external_weights/model.onnx"), &len);
    byocl_error err = {0};
    byocl_module *m = NULL;
    assert_int_equal(onnx_import_mem(data, len, "mem.onnx", NULL, &m, &err),
                     BYOCL_ERR_UNSUPPORTED);
    assert_null(m);
    assert_string_equal(err.msg, "mem.onnx: initializer 'w': values stored in an external file "
                                 "are only read for a model loaded from a file");
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wire_strip),
        cmocka_unit_test(test_wire_not_handled),
        cmocka_unit_test(test_peak_memory_of_loading),
        cmocka_unit_test(test_unsupported_op_reads_no_weight),
        cmocka_unit_test(test_external_data_from_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
