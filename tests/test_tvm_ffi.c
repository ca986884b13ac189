/* The TVM bridge (include/byocl/tvm.h, libbyocl_tvm.so) called the way TVM calls it,
 * from C: `__tvm_ffi_<symbol>` functions defined with BYOCL_TVM_DEFINE_REGION, given
 * TVMFFIAny arguments (borrowed DLTensor pointers, and tensor objects: a TVMFFIObject
 * header followed by the DLTensor, as the Relax VM and Python pass them), the inputs then
 * the preallocated outputs. Results agree with byocl's reference executor on "host" and
 * "opencl" (PoCL); every error is raised through tvm-ffi with its exact kind and message,
 * read back with TVMFFIErrorMoveFromRaised. Also through tvm-ffi's own call path
 * (TVMFFIFunctionCreate, TVMFFIFunctionCall) and its module loader
 * (ffi.ModuleLoadFromFile on libtvm_demo_region.so, as tvm_ffi.load_module does). Links
 * the public libbyocl.so only, as a program inside TVM would. */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tvm/ffi/c_api.h>

#include "test_support.h"
#include "byocl/capture.h"
#include "byocl/tvm.h"
#include "plugins/tvm_demo_region.h"

/* snprintf into a fixed buffer, failing the test rather than truncating. */
#define FMT(buf, ...) assert_true(snprintf((buf), sizeof(buf), __VA_ARGS__) < (int)sizeof(buf))

/* conv2d with its weight an argument, a bias embedded as a meta constant (from the .npz),
 * relu, and a max-pool: two outputs. */
static const char region_text[] =
    "#[version = \"0.0.5\"]\n"
    "def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) {\n"
    "  %0 = nn.conv2d(%x, %w, padding=[1, 1]);\n"
    "  %1 = nn.bias_add(%0, meta[relay.Constant][0]);\n"
    "  %2 = nn.relu(%1);\n"
    "  (%2, nn.max_pool2d(%2, pool_size=[2, 2], strides=[2, 2]))\n"
    "}\n";

static const int64_t x_dims[4] = {1, 3, 8, 8}, w_dims[4] = {4, 3, 3, 3}, b_dims[1] = {4};
static const int64_t y_dims[4] = {1, 4, 8, 8}, p_dims[4] = {1, 4, 4, 4};

/* The weights: the bias as relay.Constant.0, and (for the region that binds it) "w". */
static byocl_tensor *bias, *weight;
static char *npz_bias, *npz_bias_w;
static size_t npz_bias_len, npz_bias_w_len;

static byocl_tensor *random_tensor(const int64_t *dims, int rank, uint64_t seed)
{
    byocl_shape shape = byocl_shape_make(rank, dims);
    byocl_tensor *t = byocl_tensor_new(BYOCL_FLOAT32, &shape, NULL);
    assert_non_null(t);
    byocl_tensor_fill_random(t, seed, -1, 1);
    return t;
}

/* An .npz in memory holding `n` named tensors. */
static char *npz_bytes(const char *const *names, byocl_tensor *const *values, int n, size_t *len)
{
    byocl_params *p = byocl_params_new();
    byocl_error err;
    for (int i = 0; i < n; i++)
        assert_int_equal(byocl_params_set(p, names[i], values[i], &err), BYOCL_OK);
    char path[4200];
    FMT(path, "%s/w.npz", ts_tmpdir("tvm_ffi"));
    assert_int_equal(byocl_npz_write(path, p, &err), BYOCL_OK);
    byocl_params_free(p);
    char *bytes = ts_read_file(path, len);
    remove(path);
    return bytes;
}

/* The reference outputs of region_text for x and w. */
static byocl_tensor **reference(byocl_tensor *x, byocl_tensor *w, int *n_out)
{
    byocl_params *meta = byocl_params_new();
    byocl_error err;
    assert_int_equal(byocl_params_set(meta, "relay.Constant.0", bias, &err), BYOCL_OK);
    byocl_module *m = NULL;
    if (byocl_text_parse(region_text, strlen(region_text), "region", meta, &m, &err) != BYOCL_OK ||
        byocl_infer_types(m, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    byocl_tensor *in[2] = {x, w}, **out = NULL;
    if (byocl_reference_run(m, "main", in, 2, &out, n_out, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    byocl_module_free(m);
    byocl_params_free(meta);
    return out;
}

/* ------------------------------------------------------------ arguments */

/* A tensor object as tvm-ffi lays it out: the object header, then the DLTensor. */
typedef struct fake_tensor_obj {
    TVMFFIObject header;
    DLTensor tensor;
} fake_tensor_obj;

/* A DLTensor on the CPU over `data` (C order, no strides). */
static DLTensor dl(void *data, const int64_t *dims, int rank)
{
    DLTensor t = {0};
    t.data = data;
    t.device = (DLDevice){kDLCPU, 0};
    t.ndim = rank;
    t.dtype = (DLDataType){kDLFloat, 32, 1};
    t.shape = (int64_t *)dims;
    return t;
}

static TVMFFIAny arg_ptr(DLTensor *t)
{
    TVMFFIAny a;
    memset(&a, 0, sizeof a);
    a.type_index = kTVMFFIDLTensorPtr;
    a.v_ptr = t;
    return a;
}

static TVMFFIAny arg_obj(fake_tensor_obj *o, DLTensor t)
{
    memset(&o->header, 0, sizeof o->header);
    o->header.combined_ref_count = 1;
    o->header.type_index = kTVMFFITensor;
    o->tensor = t;
    TVMFFIAny a;
    memset(&a, 0, sizeof a);
    a.type_index = kTVMFFITensor;
    a.v_obj = &o->header;
    return a;
}

static TVMFFIAny none(void)
{
    TVMFFIAny a;
    memset(&a, 0, sizeof a);
    a.type_index = kTVMFFINone;
    return a;
}

/* Asserts that no error is raised now. */
static void expect_no_error(void)
{
    TVMFFIObjectHandle e = NULL;
    TVMFFIErrorMoveFromRaised(&e);
    if (e) {
        const TVMFFIErrorCell *cell =
            (const TVMFFIErrorCell *)(const void *)((char *)e + sizeof(TVMFFIObject));
        fail_msg("unexpected error %.*s: %.*s", (int)cell->kind.size, cell->kind.data,
                 (int)cell->message.size, cell->message.data);
    }
}

/* Asserts that the call returned -1 and raised exactly `kind` with `message`. */
static void expect_error(int rc, const char *kind, const char *message)
{
    assert_int_equal(rc, -1);
    TVMFFIObjectHandle e = NULL;
    TVMFFIErrorMoveFromRaised(&e);
    assert_non_null(e);
    assert_int_equal(((TVMFFIObject *)e)->type_index, kTVMFFIError);
    const TVMFFIErrorCell *cell =
        (const TVMFFIErrorCell *)(const void *)((char *)e + sizeof(TVMFFIObject));
    char got_kind[64], got_msg[4096];
    FMT(got_kind, "%.*s", (int)cell->kind.size, cell->kind.data);
    FMT(got_msg, "%.*s", (int)cell->message.size, cell->message.data);
    assert_string_equal(got_msg, message);
    assert_string_equal(got_kind, kind);
    assert_int_equal(TVMFFIObjectDecRef(e), 0);
}

/* ------------------------------------------------------------ the regions */

static byocl_tvm_region_spec host_spec, opencl_spec, bound_spec, nosuch_spec, badopt_spec,
    badtext_spec, badnpz_spec, capture_spec;
/* A symbol as long as TVM makes them (it names a region after its ops). */
static char long_symbol[301];
static const byocl_tvm_region_spec bool_spec = {
    "byocl_bool_0",
    "def @main(%c: Tensor[(4), bool], %a: Tensor[(4), float32], %b: Tensor[(4), float32]) {\n"
    "  (where(%c, %a, %b), logical_not(%c))\n"
    "}\n",
    NULL, 0, "ref", NULL, 1,
};

BYOCL_TVM_DEFINE_REGION(byocl_main_0, &host_spec)
BYOCL_TVM_DEFINE_REGION(byocl_opencl_0, &opencl_spec)
BYOCL_TVM_DEFINE_REGION(byocl_bound_0, &bound_spec)
BYOCL_TVM_DEFINE_REGION(byocl_nosuch_0, &nosuch_spec)
BYOCL_TVM_DEFINE_REGION(byocl_badopt_0, &badopt_spec)
BYOCL_TVM_DEFINE_REGION(byocl_badtext_0, &badtext_spec)
BYOCL_TVM_DEFINE_REGION(byocl_bool_0, &bool_spec)
BYOCL_TVM_DEFINE_REGION(byocl_badnpz_0, &badnpz_spec)
BYOCL_TVM_DEFINE_REGION(byocl_capture_0, &capture_spec)

static int setup(void **state)
{
    (void)state;
    bias = random_tensor(b_dims, 1, 7);
    weight = random_tensor(w_dims, 4, 8);
    const char *names[2] = {"relay.Constant.0", "w"};
    byocl_tensor *values[2] = {bias, weight};
    npz_bias = npz_bytes(names, values, 1, &npz_bias_len);
    npz_bias_w = npz_bytes(names, values, 2, &npz_bias_w_len);
    byocl_tvm_region_spec s = {
        .symbol = "byocl_main_0",
        .relay_text = region_text,
        .weights_npz = npz_bias,
        .weights_npz_len = npz_bias_len,
        .target = "host",
        .threads = 1,
    };
    host_spec = s;
    opencl_spec = s;
    opencl_spec.symbol = "byocl_opencl_0";
    opencl_spec.target = "opencl";
    opencl_spec.target_options = " opencl.buffers=copy ,opencl.profile=off";
    bound_spec = s;
    bound_spec.symbol = "byocl_bound_0";
    bound_spec.weights_npz = npz_bias_w;
    bound_spec.weights_npz_len = npz_bias_w_len;
    nosuch_spec = s;
    nosuch_spec.symbol = "byocl_nosuch_0";
    nosuch_spec.target = "nosuch";
    badopt_spec = opencl_spec;
    badopt_spec.symbol = "byocl_badopt_0";
    badopt_spec.target_options = "opencl.profil=on";
    badtext_spec = s;
    badtext_spec.symbol = "byocl_badtext_0";
    badtext_spec.relay_text = "def @main(%x: Tensor[(2), float32]) {\n  nn.relu(%y)\n}\n";
    badnpz_spec = s;
    badnpz_spec.symbol = "byocl_badnpz_0";
    badnpz_spec.weights_npz = "not a zip";
    badnpz_spec.weights_npz_len = 9;
    memset(long_symbol, 'r', sizeof long_symbol - 1);
    memcpy(long_symbol, "fused_", 6);
    capture_spec = bound_spec;
    capture_spec.symbol = long_symbol;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    byocl_tvm_region_free(&byocl_tvm_slot_byocl_main_0);
    byocl_tvm_region_free(&byocl_tvm_slot_byocl_opencl_0);
    byocl_tvm_region_free(&byocl_tvm_slot_byocl_bound_0);
    byocl_tvm_region_free(&byocl_tvm_slot_byocl_nosuch_0);
    byocl_tvm_region_free(&byocl_tvm_slot_byocl_badopt_0);
    byocl_tvm_region_free(&byocl_tvm_slot_byocl_badtext_0);
    byocl_tvm_region_free(&byocl_tvm_slot_byocl_bool_0);
    byocl_tvm_region_free(&byocl_tvm_slot_byocl_badnpz_0);
    byocl_tvm_region_free(&byocl_tvm_slot_byocl_capture_0);
    byocl_tensor_unref(bias);
    byocl_tensor_unref(weight);
    free(npz_bias);
    free(npz_bias_w);
    byocl_target_registry_reset();
    return 0;
}

/* Compiles byocl_main_0 before its first call, as a caller that wants compile errors
 * early would. */
static void prepare_main(void)
{
    byocl_error err;
    if (byocl_tvm_region_prepare(&byocl_tvm_slot_byocl_main_0, &host_spec, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
}

/* One call of region_text: a random input, the weight, outputs filled with NaN (every
 * element must be written), the reference results, and the DLTensors over them. */
typedef struct call_case {
    byocl_tensor *x, **want;
    int n_want;
    float y[1 * 4 * 8 * 8], p[1 * 4 * 4 * 4];
    DLTensor t[4];
} call_case;

static void case_init(call_case *c, uint64_t seed)
{
    c->x = random_tensor(x_dims, 4, seed);
    c->want = reference(c->x, weight, &c->n_want);
    assert_int_equal(c->n_want, 2);
    memset(c->y, 0xff, sizeof c->y);
    memset(c->p, 0xff, sizeof c->p);
    c->t[0] = dl(byocl_tensor_data(c->x), x_dims, 4);
    c->t[1] = dl(byocl_tensor_data(weight), w_dims, 4);
    c->t[2] = dl(c->y, y_dims, 4);
    c->t[3] = dl(c->p, p_dims, 4);
}

/* The outputs at y and p agree with the reference within `tol`; frees the case. */
static void case_check(call_case *c, const float *y, const float *p, double tol)
{
    ts_assert_f32_close(c->want[0], y, 4 * 8 * 8, 0, tol);
    ts_assert_f32_close(c->want[1], p, 4 * 4 * 4, 0, tol);
    byocl_tensors_free(c->want, c->n_want);
    byocl_tensor_unref(c->x);
}

/* Calls `fn` with x, w (or x alone when `bound`) and two fresh outputs, each argument as a
 * DLTensor pointer or a tensor object, and checks the outputs against the reference. */
static void check_call(TVMFFISafeCallType fn, bool objects, bool bound, double tol, uint64_t seed)
{
    call_case c;
    case_init(&c, seed);
    fake_tensor_obj objs[4];
    TVMFFIAny args[4];
    int n = 0;
    for (int i = 0; i < 4; i++) {
        if (bound && i == 1)
            continue;
        args[n++] = objects ? arg_obj(&objs[i], c.t[i]) : arg_ptr(&c.t[i]);
    }
    TVMFFIAny result = none();
    result.type_index = kTVMFFIInt; /* overwritten with None */
    assert_int_equal(fn(NULL, args, n, &result), 0);
    expect_no_error();
    assert_int_equal(result.type_index, kTVMFFINone);
    case_check(&c, c.y, c.p, tol);
}

static void test_host_pointers(void **state)
{
    (void)state;
    prepare_main();
    for (uint64_t seed = 1; seed <= 3; seed++) /* the compiled region is reused */
        check_call(__tvm_ffi_byocl_main_0, false, false, 1e-6, seed);
}

static void test_host_objects(void **state)
{
    (void)state;
    prepare_main();
    check_call(__tvm_ffi_byocl_main_0, true, false, 1e-6, 4);
}

static void test_opencl(void **state)
{
    (void)state;
    check_call(__tvm_ffi_byocl_opencl_0, true, false, 1e-6, 5);
    check_call(__tvm_ffi_byocl_opencl_0, false, false, 1e-6, 6);
}

/* A member of the .npz that is not a meta constant binds @main's parameter of its name:
 * %w is then no argument. */
static void test_weights_bind_parameters(void **state)
{
    (void)state;
    check_call(__tvm_ffi_byocl_bound_0, false, true, 1e-6, 9);
    TVMFFIAny args[1] = {none()}, result = none();
    expect_error(__tvm_ffi_byocl_bound_0(NULL, args, 1, &result), "ValueError",
                 "byocl region byocl_bound_0: expected 3 arguments (1 input (%x), then 2 "
                 "outputs), got 1");
}

/* byte_offset is honoured, strides that are those of C order are accepted, and so is any
 * stride of a dimension of size 1. */
static void test_offsets_and_strides(void **state)
{
    (void)state;
    prepare_main();
    call_case c;
    case_init(&c, 11);
    float *xbuf = malloc(sizeof(float) * (3 * 64 + 5));
    assert_non_null(xbuf);
    memcpy(xbuf + 5, byocl_tensor_data(c.x), byocl_tensor_nbytes(c.x));
    float ybuf[256 + 3];
    int64_t x_strides[4] = {999, 64, 8, 1}, p_strides[4] = {64, 16, 4, 1};
    c.t[0].data = xbuf;
    c.t[0].byte_offset = 5 * sizeof(float);
    c.t[0].strides = x_strides;
    c.t[2].data = ybuf;
    c.t[2].byte_offset = 3 * sizeof(float);
    c.t[3].strides = p_strides;
    TVMFFIAny args[4] = {arg_ptr(&c.t[0]), arg_ptr(&c.t[1]), arg_ptr(&c.t[2]), arg_ptr(&c.t[3])};
    TVMFFIAny result = none();
    assert_int_equal(__tvm_ffi_byocl_main_0(NULL, args, 4, &result), 0);
    case_check(&c, ybuf + 3, c.p, 1e-6);
    free(xbuf);
}

/* bool tensors: byocl's {kDLUInt, 1} and DLPack 1.x's {kDLBool, 8}, one byte each. */
static void test_bool(void **state)
{
    (void)state;
    static const int64_t n4[1] = {4};
    uint8_t c[4] = {1, 0, 0, 1}, notc[4] = {9, 9, 9, 9};
    float a[4] = {1, 2, 3, 4}, b[4] = {-1, -2, -3, -4}, out[4] = {0};
    for (int kind = 0; kind < 2; kind++) {
        DLDataType bool_type = kind ? (DLDataType){kDLBool, 8, 1} : (DLDataType){kDLUInt, 1, 1};
        DLTensor t[5] = {dl(c, n4, 1), dl(a, n4, 1), dl(b, n4, 1), dl(out, n4, 1),
                         dl(notc, n4, 1)};
        t[0].dtype = bool_type;
        t[4].dtype = bool_type;
        TVMFFIAny args[5], result = none();
        for (int i = 0; i < 5; i++)
            args[i] = arg_ptr(&t[i]);
        assert_int_equal(__tvm_ffi_byocl_bool_0(NULL, args, 5, &result), 0);
        assert_memory_equal(out, ((float[]){1, -2, -3, 4}), sizeof out);
        assert_memory_equal(notc, ((uint8_t[]){0, 1, 1, 0}), sizeof notc);
        t[1].dtype = bool_type;
        expect_error(__tvm_ffi_byocl_bool_0(NULL, args, 5, &result), "TypeError",
                     "byocl region byocl_bool_0: argument 1 (%a): expected float32[4], got "
                     "bool[4]");
    }
}

/* tvm-ffi's own call path: a Function object around the symbol, called through the ABI. */
static void test_through_ffi_function(void **state)
{
    (void)state;
    prepare_main();
    TVMFFIObjectHandle fn = NULL;
    assert_int_equal(TVMFFIFunctionCreate(NULL, __tvm_ffi_byocl_main_0, NULL, &fn), 0);
    call_case c;
    case_init(&c, 12);
    fake_tensor_obj objs[4];
    TVMFFIAny args[4] = {arg_obj(&objs[0], c.t[0]), arg_ptr(&c.t[1]), arg_obj(&objs[2], c.t[2]),
                         arg_ptr(&c.t[3])};
    TVMFFIAny result = none();
    assert_int_equal(TVMFFIFunctionCall(fn, args, 4, &result), 0);
    assert_int_equal(result.type_index, kTVMFFINone);
    case_check(&c, c.y, c.p, 1e-6);
    /* An error comes back through the call as raised. */
    expect_error(TVMFFIFunctionCall(fn, args, 3, &result), "ValueError",
                 "byocl region byocl_main_0: expected 4 arguments (2 inputs (%x, %w), then 2 "
                 "outputs), got 3");
    /* An object that is no tensor (the function itself) is named by its type. */
    args[0].type_index = kTVMFFIFunction;
    args[0].v_obj = fn;
    expect_error(TVMFFIFunctionCall(fn, args, 4, &result), "TypeError",
                 "byocl region byocl_main_0: argument 0 (%x): expected a tensor float32[1, 3, 8, "
                 "8], got an object of type ffi.Function");
    assert_int_equal(TVMFFIObjectDecRef(fn), 0);
}

/* Calls byocl_main_0 with argument `which` replaced by `bad` and expects the error. */
static void expect_bad_arg(int which, TVMFFIAny bad, const char *kind, const char *message)
{
    static float x[192], w[108], y[256], p[64];
    DLTensor t[4] = {dl(x, x_dims, 4), dl(w, w_dims, 4), dl(y, y_dims, 4), dl(p, p_dims, 4)};
    TVMFFIAny args[4] = {arg_ptr(&t[0]), arg_ptr(&t[1]), arg_ptr(&t[2]), arg_ptr(&t[3])};
    args[which] = bad;
    TVMFFIAny result = none();
    expect_error(__tvm_ffi_byocl_main_0(NULL, args, 4, &result), kind, message);
    /* The same arguments without the bad one run. */
    args[which] = arg_ptr(&t[which]);
    assert_int_equal(__tvm_ffi_byocl_main_0(NULL, args, 4, &result), 0);
    expect_no_error();
}

static void test_argument_errors(void **state)
{
    (void)state;
    prepare_main();
    static float buf[256];
    /* The number of arguments. */
    DLTensor x = dl(buf, x_dims, 4);
    TVMFFIAny args[5] = {arg_ptr(&x), arg_ptr(&x), arg_ptr(&x), arg_ptr(&x), arg_ptr(&x)};
    TVMFFIAny result = none();
    const char *count = "byocl region byocl_main_0: expected 4 arguments (2 inputs (%%x, %%w), "
                        "then 2 outputs), got %d";
    char want[256];
    FMT(want, count, 3);
    expect_error(__tvm_ffi_byocl_main_0(NULL, args, 3, &result), "ValueError", want);
    FMT(want, count, 5);
    expect_error(__tvm_ffi_byocl_main_0(NULL, args, 5, &result), "ValueError", want);

    /* A dtype. */
    DLTensor w16 = dl(buf, w_dims, 4);
    w16.dtype = (DLDataType){kDLFloat, 16, 1};
    expect_bad_arg(1, arg_ptr(&w16), "TypeError",
                   "byocl region byocl_main_0: argument 1 (%w): expected float32[4, 3, 3, 3], "
                   "got float16[4, 3, 3, 3]");
    DLTensor x64 = dl(buf, x_dims, 4);
    x64.dtype = (DLDataType){kDLFloat, 64, 1};
    fake_tensor_obj obj;
    expect_bad_arg(0, arg_obj(&obj, x64), "TypeError",
                   "byocl region byocl_main_0: argument 0 (%x): expected float32[1, 3, 8, 8], "
                   "got float64[1, 3, 8, 8]");
    DLTensor y4 = dl(buf, (const int64_t[]){1, 4, 8, 2}, 4);
    y4.dtype = (DLDataType){kDLFloat, 32, 4};
    expect_bad_arg(2, arg_ptr(&y4), "TypeError",
                   "byocl region byocl_main_0: argument 2 (output 0): expected float32[1, 4, 8, "
                   "8], got float32x4[1, 4, 8, 2]");

    /* A shape. */
    DLTensor w3 = dl(buf, w_dims, 3);
    expect_bad_arg(1, arg_ptr(&w3), "ValueError",
                   "byocl region byocl_main_0: argument 1 (%w): expected float32[4, 3, 3, 3], "
                   "got float32[4, 3, 3]");
    DLTensor p5 = dl(buf, (const int64_t[]){1, 4, 4, 5}, 4);
    expect_bad_arg(3, arg_ptr(&p5), "ValueError",
                   "byocl region byocl_main_0: argument 3 (output 1): expected float32[1, 4, 4, "
                   "4], got float32[1, 4, 4, 5]");

    /* A device. */
    DLTensor xc = dl(buf, x_dims, 4);
    xc.device = (DLDevice){kDLCUDA, 1};
    expect_bad_arg(0, arg_obj(&obj, xc), "ValueError",
                   "byocl region byocl_main_0: argument 0 (%x): expected a tensor on the CPU "
                   "(kDLCPU), got one on cuda:1");

    /* Strides that are not C order (a transposed view). */
    DLTensor xt = dl(buf, x_dims, 4);
    xt.strides = (int64_t[]){192, 1, 24, 3};
    expect_bad_arg(0, arg_ptr(&xt), "ValueError",
                   "byocl region byocl_main_0: argument 0 (%x): expected a compact row-major "
                   "tensor (strides NULL or those of C order), got strides [192, 1, 24, 3] for "
                   "shape [1, 3, 8, 8]");

    /* Not a tensor. */
    TVMFFIAny seven = none();
    seven.type_index = kTVMFFIInt;
    seven.v_int64 = 7;
    expect_bad_arg(0, seven, "TypeError",
                   "byocl region byocl_main_0: argument 0 (%x): expected a tensor float32[1, 3, "
                   "8, 8], got int 7");
    expect_bad_arg(3, none(), "TypeError",
                   "byocl region byocl_main_0: argument 3 (output 1): expected a tensor "
                   "float32[1, 4, 4, 4], got None");
    TVMFFIAny str = none();
    str.type_index = kTVMFFIRawStr;
    str.v_c_str = "x";
    expect_bad_arg(1, str, "TypeError",
                   "byocl region byocl_main_0: argument 1 (%w): expected a tensor float32[4, 3, "
                   "3, 3], got a str");
    expect_bad_arg(1, arg_ptr(NULL), "ValueError",
                   "byocl region byocl_main_0: argument 1 (%w): expected a tensor float32[4, 3, "
                   "3, 3], got a null DLTensor pointer");
    DLTensor nodata = dl(NULL, w_dims, 4);
    expect_bad_arg(1, arg_ptr(&nodata), "ValueError",
                   "byocl region byocl_main_0: argument 1 (%w): expected float32[4, 3, 3, 3], "
                   "got a tensor without data (NULL)");
}

/* A region that does not compile raises RuntimeError on every call, the same each time. */
static void test_compile_errors(void **state)
{
    (void)state;
    TVMFFIAny args[4] = {none(), none(), none(), none()}, result = none();
    for (int call = 0; call < 2; call++) {
        expect_error(__tvm_ffi_byocl_nosuch_0(NULL, args, 4, &result), "RuntimeError",
                     "byocl region byocl_nosuch_0: compiling for target nosuch: annotate_target: "
                     "unknown target \"nosuch\" (registered targets: opencl)");
        expect_error(__tvm_ffi_byocl_badopt_0(NULL, args, 4, &result), "RuntimeError",
                     "byocl region byocl_badopt_0: compiling for target opencl: target option "
                     "opencl.profil: target opencl has no option 'profil' (options: device, "
                     "profile, cache_dir, buffers, keep_device)");
        expect_error(__tvm_ffi_byocl_badtext_0(NULL, args, 1, &result), "RuntimeError",
                     "byocl region byocl_badtext_0: byocl_badtext_0:2:11: error: unknown "
                     "variable '%y'");
        expect_error(__tvm_ffi_byocl_badnpz_0(NULL, args, 4, &result), "RuntimeError",
                     "byocl region byocl_badnpz_0: the weights (.npz): not a zip archive (an "
                     ".npz is what np.savez writes)");
    }
    byocl_error err;
    assert_int_equal(byocl_tvm_region_prepare(&byocl_tvm_slot_byocl_nosuch_0, &nosuch_spec, &err),
                     BYOCL_ERR_NOT_FOUND);
}

/* Several threads call one region at once: the calls are serialized, each gets its own
 * results, the same bits as a call alone. */
#define N_THREADS 4
#define N_CALLS 8
static call_case thread_case[N_THREADS];

static int call_main(DLTensor t[4])
{
    TVMFFIAny args[4] = {arg_ptr(&t[0]), arg_ptr(&t[1]), arg_ptr(&t[2]), arg_ptr(&t[3])};
    TVMFFIAny result = none();
    return __tvm_ffi_byocl_main_0(NULL, args, 4, &result);
}

static void *thread_main(void *arg)
{
    call_case *c = arg;
    for (int call = 0; call < N_CALLS; call++) {
        float y[256], p[64];
        DLTensor t[4] = {c->t[0], c->t[1], c->t[2], c->t[3]};
        t[2].data = y;
        t[3].data = p;
        if (call_main(t) != 0 || memcmp(y, c->y, sizeof y) != 0 || memcmp(p, c->p, sizeof p) != 0)
            return arg;
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    prepare_main();
    for (int k = 0; k < N_THREADS; k++) {
        case_init(&thread_case[k], 100 + (uint64_t)k);
        assert_int_equal(call_main(thread_case[k].t), 0); /* alone */
    }
    pthread_t threads[N_THREADS];
    for (int k = 0; k < N_THREADS; k++)
        assert_int_equal(pthread_create(&threads[k], NULL, thread_main, &thread_case[k]), 0);
    int failed = 0;
    for (int k = 0; k < N_THREADS; k++) {
        void *rc;
        pthread_join(threads[k], &rc);
        failed += rc != NULL;
    }
    assert_int_equal(failed, 0);
    for (int k = 0; k < N_THREADS; k++)
        case_check(&thread_case[k], thread_case[k].y, thread_case[k].p, 1e-6);
}

/* The demo shim (tests/plugins/tvm_demo_region.c) loaded by tvm-ffi's module loader, its function
 * found by name and called, as tvm_ffi.load_module(lib)["byocl_demo_0"](...) does. */
static TVMFFIAny call_global(const char *name, TVMFFIAny *args, int n)
{
    TVMFFIByteArray key = {name, strlen(name)};
    TVMFFIObjectHandle fn = NULL;
    assert_int_equal(TVMFFIFunctionGetGlobal(&key, &fn), 0);
    assert_non_null(fn);
    TVMFFIAny result = none();
    if (TVMFFIFunctionCall(fn, args, n, &result) != 0)
        expect_no_error();
    TVMFFIObjectDecRef(fn);
    return result;
}

static void test_module_loader(void **state)
{
    (void)state;
    TVMFFIAny path = none();
    path.type_index = kTVMFFIRawStr;
    path.v_c_str = BYOCL_TVM_DEMO_LIB;
    TVMFFIAny mod = call_global("ffi.ModuleLoadFromFile", &path, 1);
    assert_int_equal(mod.type_index, kTVMFFIModule);
    TVMFFIAny get[3] = {mod, none(), none()};
    get[1].type_index = kTVMFFIRawStr;
    get[1].v_c_str = "byocl_demo_0";
    get[2].type_index = kTVMFFIBool;
    get[2].v_int64 = 0;
    TVMFFIAny fn = call_global("ffi.ModuleGetFunction", get, 3);
    assert_int_equal(fn.type_index, kTVMFFIFunction);

    byocl_tensor *x = random_tensor(x_dims, 4, 21), *b = random_tensor(b_dims, 1, 22);
    byocl_module *m = ts_parse_typed(DEMO_REGION_TEXT);
    byocl_tensor *in[3] = {x, weight, b}, **want = NULL;
    int n_want;
    byocl_error err;
    if (byocl_reference_run(m, "main", in, 3, &want, &n_want, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    float y[256];
    DLTensor t[4] = {dl(byocl_tensor_data(x), x_dims, 4), dl(byocl_tensor_data(weight), w_dims, 4),
                     dl(byocl_tensor_data(b), b_dims, 1), dl(y, y_dims, 4)};
    fake_tensor_obj objs[4];
    TVMFFIAny args[4];
    for (int i = 0; i < 4; i++)
        args[i] = arg_obj(&objs[i], t[i]);
    TVMFFIAny result = none();
    assert_int_equal(TVMFFIFunctionCall(fn.v_obj, args, 4, &result), 0);
    ts_assert_f32_close(want[0], y, 256, 0, 1e-6);
    args[2] = arg_ptr(&t[0]);
    expect_error(TVMFFIFunctionCall(fn.v_obj, args, 4, &result), "ValueError",
                 "byocl region " DEMO_REGION_SYMBOL ": argument 2 (%b): expected float32[4], got "
                 "float32[1, 3, 8, 8]");
    TVMFFIObjectDecRef(fn.v_obj);
    TVMFFIObjectDecRef(mod.v_obj);
    byocl_tensors_free(want, n_want);
    byocl_module_free(m);
    byocl_tensor_unref(x);
    byocl_tensor_unref(b);
}

/* The one folder in `dir` (NULL when there is none); a second one fails the test. */
static char *only_entry(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char *name = NULL;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (name)
            fail_msg("%s holds %s and %s", dir, name, e->d_name);
        name = strdup(e->d_name);
    }
    closedir(d);
    return name;
}

/* BYOCL_CAPTURE_DIR: a region writes its calls as a capture folder that byocl_capture_read
 * (byocl replay) reads back; the last call's tensors, the calls counted while capturing;
 * BYOCL_CAPTURE_REGION naming another region stops it. */
static void test_capture(void **state)
{
    (void)state;
    char tmp[4096], dir[4200];
    FMT(tmp, "%s", ts_tmpdir("tvm_capture"));
    FMT(dir, "%s/captured", tmp); /* made by the first capturing call */
    check_call(__tvm_ffi_byocl_capture_0, false, true, 1e-6, 30); /* not captured */
    assert_int_equal(setenv("BYOCL_CAPTURE_DIR", dir, 1), 0);
    check_call(__tvm_ffi_byocl_capture_0, true, true, 1e-6, 31);
    check_call(__tvm_ffi_byocl_capture_0, false, true, 1e-6, 32);
    assert_int_equal(setenv("BYOCL_CAPTURE_REGION", "byocl_main_0", 1), 0);
    check_call(__tvm_ffi_byocl_capture_0, false, true, 1e-6, 33); /* another region named */
    unsetenv("BYOCL_CAPTURE_REGION");
    unsetenv("BYOCL_CAPTURE_DIR");

    /* The symbol is over 128 characters: its first 111, '-' and 16 hex digits name it. */
    char *name = only_entry(dir);
    assert_non_null(name);
    assert_int_equal(strlen(name), 128);
    assert_memory_equal(name, long_symbol, 111);
    assert_int_equal(name[111], '-');
    char path[4400];
    FMT(path, "%s/%s", dir, name);
    free(name);
    byocl_capture_folder *f = NULL;
    byocl_error err;
    if (byocl_capture_read(path, &f, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    const byocl_capture_manifest *m = f->manifest;
    assert_string_equal(m->symbol, long_symbol);
    assert_string_equal(m->target, "host");
    assert_string_equal(m->runner, "tvm/host");
    assert_int_equal(m->calls, 2);
    assert_true(m->min_ms > 0 && m->min_ms <= m->median_ms);
    /* %w is bound by the weights: the region takes %x alone. */
    assert_int_equal(m->n_inputs, 1);
    assert_string_equal(m->inputs[0].name, "x");
    assert_string_equal(m->inputs[0].node, "?");
    assert_int_equal(m->n_outputs, 2);
    byocl_tensor *x = random_tensor(x_dims, 4, 32);
    assert_true(byocl_tensor_equal(f->inputs[0], x));
    int n_want;
    byocl_tensor **want = reference(x, weight, &n_want);
    for (int i = 0; i < n_want; i++)
        ts_assert_f32_close(want[i], byocl_tensor_cdata(f->outputs[i]),
                            byocl_tensor_numel(want[i]), 0, 1e-6);
    byocl_tensors_free(want, n_want);
    byocl_tensor_unref(x);
    byocl_capture_folder_free(f);
    ts_remove_tree(tmp);
}

/* A capture folder that cannot be made fails the call, and says why. */
static void test_capture_errors(void **state)
{
    (void)state;
    char tmp[4096], file[4200], want[4600];
    FMT(tmp, "%s", ts_tmpdir("tvm_capture_errors"));
    FMT(file, "%s/a-file", tmp);
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    fclose(fp);
    assert_int_equal(setenv("BYOCL_CAPTURE_DIR", file, 1), 0);
    call_case c;
    case_init(&c, 40);
    TVMFFIAny args[3] = {arg_ptr(&c.t[0]), arg_ptr(&c.t[2]), arg_ptr(&c.t[3])};
    TVMFFIAny result = none();
    FMT(want, "byocl region byocl_bound_0: capturing into %s: cannot create a folder in %s: "
        "Not a directory", file, file);
    expect_error(__tvm_ffi_byocl_bound_0(NULL, args, 3, &result), "RuntimeError", want);
    unsetenv("BYOCL_CAPTURE_DIR");
    case_check(&c, c.y, c.p, 1e-6); /* the outputs were written before */
    ts_remove_tree(tmp);
}

/* The C ABI version libbyocl_tvm.so was built against is the one loaded (0.1.x). */
static void test_version(void **state)
{
    (void)state;
    TVMFFIVersion v;
    TVMFFIGetVersion(&v);
    char want[64];
    FMT(want, "%u.%u.%u", (unsigned)v.major, (unsigned)v.minor, (unsigned)v.patch);
    assert_string_equal(byocl_tvm_ffi_version(), want);
    assert_true(v.major == 0 && v.minor == 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_host_pointers),
        cmocka_unit_test(test_host_objects),
        cmocka_unit_test(test_opencl),
        cmocka_unit_test(test_weights_bind_parameters),
        cmocka_unit_test(test_offsets_and_strides),
        cmocka_unit_test(test_bool),
        cmocka_unit_test(test_through_ffi_function),
        cmocka_unit_test(test_argument_errors),
        cmocka_unit_test(test_compile_errors),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_module_loader),
        cmocka_unit_test(test_capture),
        cmocka_unit_test(test_capture_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
