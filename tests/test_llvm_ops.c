/* The LLVM host backend, op by op: every generated op case (tests/fixtures/ops, numpy's
 * values) and shapes that reach every tail of the conv/dense tiling, each compiled and
 * run through plan + compile + every task (tests/llvm_harness.h) and compared with the
 * reference executor; fusion groups against the unfused reference. */
#include <dirent.h>

#include "ops_case.h"

#include "llvm_harness.h"

/* Under valgrind every LLVM compile is ~40 times slower: run each case once (many tasks,
 * two threads, the vector width the host reports there) and skip the whole networks. */
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define QUICK (RUNNING_ON_VALGRIND != 0)
#else
#define QUICK 0
#endif

#include "fixtures/ops/annotation_cases.h"
#include "fixtures/ops/conv_cases.h"
#include "fixtures/ops/elemwise_cases.h"
#include "fixtures/ops/index_cases.h"
#include "fixtures/ops/image_cases.h"
#include "fixtures/ops/nn_cases.h"
#include "fixtures/ops/pool_cases.h"
#include "fixtures/ops/transform_cases.h"

/* ------------------------------------------------------------ comparisons */

/* `bound` 0: bit for bit (NaN payloads aside); else the relative L2 bound. */
static void assert_matches(const byocl_tensor *got, const byocl_tensor *want, double bound,
                           const char *what)
{
    assert_int_equal(byocl_tensor_dtype(got), byocl_tensor_dtype(want));
    assert_true(byocl_shape_equal(byocl_tensor_shape(got), byocl_tensor_shape(want)));
    if (bound > 0) {
        double e = ts_relative_l2(got, want);
        if (!(e <= bound))
            fail_msg("%s: relative L2 error %.3g exceeds %.3g", what, e, bound);
        return;
    }
    for (int64_t i = 0; i < byocl_tensor_numel(want); i++) {
        double g = byocl_tensor_get(got, i), w = byocl_tensor_get(want, i);
        if (isnan(g) && isnan(w))
            continue;
        if (memcmp(&g, &w, sizeof g) != 0 && !(g == 0 && w == 0 && signbit(g) == signbit(w)))
            fail_msg("%s: element %lld is %.17g, want %.17g", what, (long long)i, g, w);
    }
}

/* Runs @main of m on the reference executor and through the backend, and compares. */
static void check_module(const byocl_module *m, byocl_tensor **in, int n_in, double bound,
                         const lh_options *opt, const char *what)
{
    byocl_tensor **want = NULL, **got = NULL;
    int n_want = 0, n_got = 0;
    byocl_error err = {0};
    if (byocl_reference_run(m, "main", in, n_in, &want, &n_want, &err) != BYOCL_OK)
        fail_msg("%s: reference: %s", what, err.msg);
    if (lh_run(m, in, opt, &got, &n_got, &err) != BYOCL_OK)
        fail_msg("%s: llvm: %s", what, err.msg);
    assert_int_equal(n_got, n_want);
    for (int i = 0; i < n_want; i++) {
        char w[200];
        snprintf(w, sizeof w, "%s output %d", what, i);
        assert_matches(got[i], want[i], bound, w);
    }
    byocl_tensors_free(want, n_want);
    byocl_tensors_free(got, n_got);
}

/* ------------------------------------------------------------ generated cases */

/* float32 exp, sigmoid and erf compute in float, within 1, 2 and 8 ulp
 * (test_fast_exp_sigmoid_erf holds them to that), and float32 softmax with them; as a
 * relative L2 bound of a tensor, with room: */
#define FAST_EXP_BOUND 1e-6

/* float global_avg_pool2d over planes of 128 elements or more sums in double reordered:
 * each mean the reference's or one of its float neighbours (lower_pool.c). */
static double global_pool_bound(byocl_dtype dtype)
{
    return dtype == BYOCL_FLOAT32 ? 1e-7 : dtype == BYOCL_FLOAT16 ? 1e-3 : dtype == BYOCL_FLOAT64 ? 1e-15 : 0;
}

/* The documented bound of each op against the reference (0: exact). Ops computed in
 * float where the reference sums in double: conv2d, dense and batch_matmul; float32 exp,
 * sigmoid, erf and softmax. */
static double op_bound(const char *op, byocl_dtype dtype)
{
    if ((strcmp(op, "exp") == 0 || strcmp(op, "sigmoid") == 0 || strcmp(op, "erf") == 0 ||
         strcmp(op, "nn.softmax") == 0) &&
        dtype == BYOCL_FLOAT32)
        return FAST_EXP_BOUND;
    if (strcmp(op, "nn.conv2d") == 0 || strcmp(op, "nn.dense") == 0 ||
        strcmp(op, "nn.batch_matmul") == 0)
        return dtype == BYOCL_FLOAT16 ? 1e-3 : dtype == BYOCL_FLOAT64 ? 1e-12 : 1e-5;
    if (strcmp(op, "nn.global_avg_pool2d") == 0)
        return global_pool_bound(dtype);
    return 0;
}

static void gen_case_llvm(void **state)
{
    const gen_case *k = *state;
    byocl_type types[5];
    byocl_tensor *in[5];
    for (int i = 0; i < k->n_in; i++) {
        types[i] = gen_array_type(k->in[i]);
        in[i] = gen_array_tensor(k->in[i]);
    }
    op_case c;
    op_case_build_with(&c, k->op, types, k->const_args ? in : NULL, k->n_in, k->tuple_arg,
                       k->attrs);
    op_case_expect_ok(&c, k->name);
    int n_params = gen_case_n_params(k);
    const byocl_type *t = byocl_node_type(c.fn, c.call);
    byocl_dtype d = t->kind == BYOCL_TYPE_TUPLE ? t->fields[0]->dtype : t->dtype;
    lh_options opt = {0};
    if (!QUICK)
        check_module(c.m, in, n_params, op_bound(k->op, d), &opt, k->name);
    opt.concurrent = true;
    opt.threads = 8;
    check_module(c.m, in, n_params, op_bound(k->op, d), &opt, k->name);
    op_tensors_free(in, k->n_in);
    op_case_free(&c);
}

/* Cases whose reference kernel fails on purpose (integer division by zero): the
 * backend's kernel must fail too, with its message. */
static bool expect_runtime_error(const gen_case *k)
{
    return strstr(k->name, "by_zero") && k->out[0] && !byocl_dtype_is_float(k->out[0]->dtype);
}

static int run_generated(const char *group, const gen_case *cases, int n)
{
    struct CMUnitTest *tests = calloc((size_t)n, sizeof *tests);
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (expect_runtime_error(&cases[i]))
            continue;
        tests[m++] = (struct CMUnitTest){.name = cases[i].name, .test_func = gen_case_llvm,
                                         .initial_state = (void *)&cases[i]};
    }
    int failed = _cmocka_run_group_tests(group, tests, (size_t)m, NULL, NULL);
    free(tests);
    return failed;
}

/* ------------------------------------------------------------ module builder */

/* A module @main under construction with the builder API. */
typedef struct mb {
    byocl_module *m;
    byocl_function *fn;
    byocl_error err;
    int n_params;
    byocl_tensor *inputs[8];
    uint64_t seed;
} mb;

static void mb_begin(mb *b)
{
    memset(b, 0, sizeof *b);
    b->m = byocl_module_new();
    assert_non_null(b->m);
    b->fn = byocl_module_add_function(b->m, "main", &b->err);
    assert_non_null(b->fn);
    b->seed = 7;
}

static byocl_tensor *random_tensor(byocl_dtype d, int rank, const int64_t *dims, uint64_t seed,
                                   double lo, double hi)
{
    byocl_shape s = byocl_shape_make(rank, dims);
    byocl_tensor *t = byocl_tensor_new(d, &s, NULL);
    assert_non_null(t);
    byocl_tensor_fill_random(t, seed, lo, hi);
    return t;
}

/* A parameter with a random input value. */
static int mb_param(mb *b, byocl_dtype d, int rank, const int64_t *dims)
{
    char name[16];
    snprintf(name, sizeof name, "p%d", b->n_params);
    byocl_type t = byocl_type_tensor(d, rank, dims);
    int id = byocl_function_add_param(b->fn, name, &t, &b->err);
    assert_true(id >= 0);
    bool ints = !byocl_dtype_is_float(d);
    b->inputs[b->n_params++] = random_tensor(d, rank, dims, b->seed++, ints ? -9 : -1, ints ? 9 : 1);
    return id;
}

static int mb_const(mb *b, byocl_dtype d, int rank, const int64_t *dims, double lo, double hi)
{
    byocl_tensor *t = random_tensor(d, rank, dims, b->seed++, lo, hi);
    int id = byocl_function_add_constant(b->fn, t, &b->err);
    byocl_tensor_unref(t);
    assert_true(id >= 0);
    return id;
}

static int mb_call(mb *b, const char *op, const int *args, int n, const char *attrs)
{
    int id = byocl_function_add_call_str(b->fn, op, args, n, attrs ? attrs : "", &b->err);
    if (id < 0)
        fail_msg("%s(%s): %s", op, attrs ? attrs : "", b->err.msg);
    return id;
}

static int mb_call1(mb *b, const char *op, int a, const char *attrs)
{
    return mb_call(b, op, &a, 1, attrs);
}

static int mb_call2(mb *b, const char *op, int a, int c, const char *attrs)
{
    int args[2] = {a, c};
    return mb_call(b, op, args, 2, attrs);
}

static int mb_getitem(mb *b, int tuple, int index)
{
    int id = byocl_function_add_getitem(b->fn, tuple, index, &b->err);
    assert_true(id >= 0);
    return id;
}

static void mb_finish(mb *b, int body)
{
    if (byocl_function_set_body(b->fn, body, &b->err) != BYOCL_OK ||
        byocl_infer_types(b->m, &b->err) != BYOCL_OK)
        fail_msg("%s", b->err.msg);
}

static void mb_free(mb *b)
{
    op_tensors_free(b->inputs, b->n_params);
    byocl_module_free(b->m);
}

/* Checks the module against the reference at every vector width the host has, with one
 * and with several tasks run concurrently. */
static void mb_check(mb *b, double bound, const char *what)
{
    static const char *const widths[] = {NULL, "256", "128"};
    for (int i = 0; i < (QUICK ? 1 : 3); i++) {
        if (widths[i])
            setenv("BYOCL_LLVM_VECTOR_BITS", widths[i], 1);
        else
            unsetenv("BYOCL_LLVM_VECTOR_BITS");
        lh_options one = {.threads = 1}, many = {.threads = 8, .concurrent = true};
        char w[256];
        snprintf(w, sizeof w, "%s (%s-bit vectors)", what, widths[i] ? widths[i] : "host");
        if (!QUICK)
            check_module(b->m, b->inputs, b->n_params, bound, &one, w);
        check_module(b->m, b->inputs, b->n_params, bound, &many, w);
    }
    unsetenv("BYOCL_LLVM_VECTOR_BITS");
}

/* Groups the backend plans for @main. */
static int plan_groups(const byocl_module *m, byocl_host_group **groups)
{
    byocl_function *fn = byocl_module_find(m, "main");
    int *compute = NULL, n_groups = 0;
    int n = lh_compute_nodes(fn, &compute);
    byocl_error err = {0};
    if (byocl_host_backend_llvm.group(fn, compute, n, groups, &n_groups, &err) != BYOCL_OK)
        fail_msg("plan: %s", err.msg);
    free(compute);
    return n_groups;
}

/* ------------------------------------------------------------ conv2d tails */

typedef struct conv_case {
    const char *name;
    int64_t n, c, h, w, o, kh, kw;
    const char *attrs;      /* strides, padding, dilation, groups, out_dtype */
    byocl_dtype dtype;
    bool weight_param;      /* the weight is a parameter (packed by each call) */
} conv_case;

/* Shapes that reach each tail of the schedule: channels that fill no vector or register
 * tile, grids whose last tile is partial, every stride phase, dilations, asymmetric
 * padding, groups and depthwise, kernels larger than the input, several images, bands
 * and unit chunks (many tasks), the in-place path (stride 1, no padding), spans of
 * by-channel tiles that end inside a row and bands that end inside a span, depthwise rows
 * wide enough for a first, middle and last segment (float32 and float16) and depthwise
 * convs in lanes (small maps, lower_conv_depthwise_lanes). Each runs with both register
 * tile shapes (by position and by channel, lower_conv.c). */
static const conv_case conv_cases_tail[] = {
    {"c5_o13_3x3_pad1", 1, 5, 7, 9, 13, 3, 3, "padding=[1, 1]", BYOCL_FLOAT32, false},
    {"c3_o17_7x7_s2_pad3", 1, 3, 23, 19, 17, 7, 7, "strides=[2, 2], padding=[3, 3]", BYOCL_FLOAT32, false},
    {"s2_odd_3x3", 1, 6, 11, 13, 9, 3, 3, "strides=[2, 2], padding=[1, 1]", BYOCL_FLOAT32, false},
    {"dilation2", 1, 4, 12, 10, 8, 3, 3, "dilation=[2, 2], padding=[2, 2]", BYOCL_FLOAT32, false},
    {"asym_padding", 1, 3, 9, 8, 11, 3, 2, "padding=[1, 0, 2, 1]", BYOCL_FLOAT32, false},
    {"s2x1_d1x2", 1, 5, 13, 11, 7, 3, 3, "strides=[2, 1], dilation=[1, 2], padding=[1, 2]", BYOCL_FLOAT32, false},
    {"s3_k2", 1, 4, 14, 17, 6, 2, 2, "strides=[3, 3]", BYOCL_FLOAT32, false},
    {"1x1_direct", 1, 20, 7, 9, 20, 1, 1, "", BYOCL_FLOAT32, false},
    {"3x3_direct", 1, 8, 10, 21, 19, 3, 3, "", BYOCL_FLOAT32, false},
    {"1x1_s2", 1, 16, 9, 9, 33, 1, 1, "strides=[2, 2]", BYOCL_FLOAT32, false},
    {"groups2", 1, 6, 8, 7, 10, 3, 3, "padding=[1, 1], groups=2", BYOCL_FLOAT32, false},
    {"depthwise", 1, 7, 9, 11, 7, 3, 3, "padding=[1, 1], groups=7", BYOCL_FLOAT32, false},
    {"depthwise_s2_mult2", 1, 5, 10, 9, 10, 3, 3, "strides=[2, 2], padding=[1, 1], groups=5", BYOCL_FLOAT32, false},
    /* depthwise in lanes (rows of 16 or fewer outputs): channels past the last block of
     * lanes, images, stride 2, dilation, asymmetric padding, runs of 7 and 6 in a row */
    {"depthwise_lanes_5x5_c37", 1, 37, 7, 7, 37, 5, 5, "padding=[2, 2], groups=37", BYOCL_FLOAT32, false},
    {"depthwise_lanes_batch2_13x13", 2, 20, 13, 13, 20, 3, 3, "padding=[1, 1], groups=20", BYOCL_FLOAT32, false},
    {"depthwise_lanes_5x5_s2", 1, 24, 14, 14, 24, 5, 5, "strides=[2, 2], padding=[2, 2], groups=24", BYOCL_FLOAT32, false},
    {"depthwise_lanes_dilated", 1, 9, 9, 9, 9, 3, 3, "dilation=[2, 2], padding=[2, 2], groups=9", BYOCL_FLOAT32, false},
    {"depthwise_lanes_3x3_s2_to_7", 1, 21, 13, 13, 21, 3, 3, "strides=[2, 2], padding=[1, 1], groups=21", BYOCL_FLOAT32, false},
    {"depthwise_lanes_asym", 1, 17, 6, 11, 17, 3, 4, "padding=[0, 2, 1, 1], groups=17", BYOCL_FLOAT32, false},
    {"depthwise_wide_rows", 1, 3, 5, 101, 3, 3, 3, "padding=[1, 1], groups=3", BYOCL_FLOAT32, false},
    {"depthwise_s2_wide_rows", 1, 2, 5, 140, 2, 3, 3, "strides=[2, 2], padding=[1, 1], groups=2", BYOCL_FLOAT32, false},
    {"depthwise_5x5_two_segments", 1, 2, 6, 68, 4, 5, 5, "groups=2", BYOCL_FLOAT32, false},
    {"depthwise_float16_wide_rows", 1, 3, 5, 70, 3, 3, 3, "padding=[1, 1], groups=3", BYOCL_FLOAT16, false},
    {"kernel_over_input", 1, 2, 3, 3, 5, 5, 5, "padding=[2, 2]", BYOCL_FLOAT32, false},
    /* kernels of more than 16 taps loop over their rows (tap_rows): stride 3 (three
     * phases of rows in X'), read in place, 7x3 with stride 2 down the rows; dilated
     * through X', unrolled */
    {"5x5_s3_rows", 1, 4, 17, 16, 9, 5, 5, "strides=[3, 3], padding=[2, 2]", BYOCL_FLOAT32, false},
    {"5x5_direct_rows", 1, 3, 12, 14, 10, 5, 5, "", BYOCL_FLOAT32, false},
    {"7x3_s2x1_rows", 1, 3, 15, 11, 9, 7, 3, "strides=[2, 1], padding=[3, 1]", BYOCL_FLOAT32, false},
    {"5x5_dilation2", 1, 3, 13, 12, 6, 5, 5, "dilation=[2, 2], padding=[4, 4]", BYOCL_FLOAT32, false},
    {"batch3", 3, 4, 6, 5, 9, 3, 3, "padding=[1, 1]", BYOCL_FLOAT32, false},
    {"bands_and_chunks", 1, 24, 40, 37, 40, 3, 3, "padding=[1, 1]", BYOCL_FLOAT32, false},
    /* 3 tasks (by work) for 1 by-channel unit of 48 channels with AVX-512: bands of 5 rows */
    {"one_unit_in_bands", 1, 384, 14, 14, 48, 1, 1, "", BYOCL_FLOAT32, false},
    /* three by-channel units with AVX-512 on 13 rows: more bands than 8-row ones balance
     * the threads (balance_tasks) */
    {"few_units_in_bands", 1, 48, 13, 13, 192, 3, 3, "padding=[1, 1]", BYOCL_FLOAT32, false},
    /* by channel with AVX-512: the 3 x 7 tile (48 channels, a whole row a tile) */
    {"o40_7x7_pad1", 1, 24, 7, 7, 40, 3, 3, "padding=[1, 1]", BYOCL_FLOAT32, false},
    {"groups3_og12", 2, 9, 5, 6, 36, 3, 3, "padding=[1, 1], groups=3", BYOCL_FLOAT32, false},
    {"s2_spans_past_rows", 1, 8, 23, 27, 19, 3, 3, "strides=[2, 2], padding=[1, 1]", BYOCL_FLOAT32, false},
    {"1x1_direct_spans", 1, 16, 13, 29, 33, 1, 1, "", BYOCL_FLOAT32, false},
    /* 1344 positions: whole tiles of 6, 7, 8, 12 (by channel) or 16 to 64 (by position) */
    {"1x1_whole_tiles", 1, 8, 32, 42, 24, 1, 1, "", BYOCL_FLOAT32, false},
    /* 134 positions: by channel a last span of 1 to 6 outputs past spans of 128 to 133
     * (tiles of 6, 7, 8, 12), shorter than a tile, so that the last tile, which starts a
     * tile before the band's end, starts in the span before (tile_start) */
    {"1x1_last_span_short", 1, 24, 2, 67, 40, 1, 1, "", BYOCL_FLOAT32, false},
    /* 3 positions: fewer than any tile, so the last tile is a partial one */
    {"1x1_map_1x3", 1, 20, 1, 3, 36, 1, 1, "", BYOCL_FLOAT32, false},
    /* 1x1 and 7x1 convs: no halo columns, so by position too stores a tile channel by
     * channel along the plane; in 8 bands of 8 rows with 8 threads, with stride 2 */
    {"1x1_flat_in_bands", 1, 64, 64, 37, 48, 1, 1, "", BYOCL_FLOAT32, false},
    {"1x1_s2_flat", 1, 24, 21, 19, 40, 1, 1, "strides=[2, 2]", BYOCL_FLOAT32, false},
    {"7x1_flat", 1, 8, 12, 9, 20, 7, 1, "padding=[3, 0]", BYOCL_FLOAT32, false},
    /* one thread, by position: an input of 1.6 MB read in place, in bands for L2 */
    {"1x1_direct_l2_bands", 1, 64, 100, 64, 40, 1, 1, "", BYOCL_FLOAT32, false},
    /* one thread: X' of 1.6 MB in bands for L2 (5 bands with 512 KiB of L2, 2 with 2 MiB) */
    {"l2_bands", 1, 256, 48, 30, 64, 3, 3, "padding=[1, 1]", BYOCL_FLOAT32, false},
    {"weight_param", 2, 6, 9, 10, 12, 3, 3, "strides=[2, 2], padding=[1, 1], groups=2", BYOCL_FLOAT32, true},
    {"float16", 1, 5, 9, 10, 12, 3, 3, "padding=[1, 1]", BYOCL_FLOAT16, false},
    {"float16_to_float32", 1, 5, 9, 10, 12, 3, 3, "padding=[1, 1], out_dtype=\"float32\"", BYOCL_FLOAT16, false},
    {"stride17_direct", 1, 3, 40, 37, 4, 3, 2, "strides=[17, 18], padding=[1, 1]", BYOCL_FLOAT32, false},
    /* one output position, the kernel the size of the map: a GEMV (lower_dense_conv) of
     * units that fill no whole vector, two images, a 7x7 kernel, stride 2 over a 1x1 map,
     * weights packed by the call, float16 */
    {"dot_1x1_map", 1, 1152, 1, 1, 40, 1, 1, "", BYOCL_FLOAT32, false},
    {"dot_1x1_map_batch2", 2, 48, 1, 1, 1000, 1, 1, "", BYOCL_FLOAT32, false},
    {"dot_7x7_kernel", 1, 20, 7, 7, 10, 7, 7, "", BYOCL_FLOAT32, false},
    {"dot_1x1_s2", 1, 30, 1, 1, 17, 1, 1, "strides=[2, 2]", BYOCL_FLOAT32, false},
    {"dot_weight_param", 3, 40, 1, 1, 24, 1, 1, "", BYOCL_FLOAT32, true},
    {"dot_float16", 1, 40, 2, 2, 24, 2, 2, "", BYOCL_FLOAT16, false},
    {"one_position_3x3_of_5x5", 1, 4, 5, 5, 6, 3, 3, "strides=[3, 3]", BYOCL_FLOAT32, false},
    {"int32", 1, 3, 6, 7, 5, 3, 3, "padding=[1, 1], strides=[2, 1]", BYOCL_INT32, false},
    {"int8_to_int32", 1, 4, 5, 6, 3, 3, 3, "padding=[1, 1], groups=1, out_dtype=\"int32\"", BYOCL_INT8, true},
};

/* Reductions in blocks of input channels whose last block is shorter (by channel; in
 * place, through X', with packed parameter weights and in float16), built for caches of
 * 8 KiB (L1) and 64 KiB (L2) so that every vector width on any machine takes blocks: of 4
 * KiB of weights (3 channels of the 3x3 convs' 32-channel units with AVX-512, 32 of the
 * 1x1 conv's). The host's own caches take blocks for units over a quarter of its L2, or
 * over L1 where the conv reads its input in place or its map is one span (by_channel_block;
 * test_conv_tails checks which). */
static const conv_case conv_cases_blocks[] = {
    {"channel_blocks_3x3", 1, 203, 6, 7, 20, 3, 3, "padding=[1, 1]", BYOCL_FLOAT32, false},
    {"channel_blocks_1x1_spans", 1, 1100, 13, 11, 17, 1, 1, "", BYOCL_FLOAT32, false},
    {"channel_blocks_weight_param_s2", 2, 150, 9, 8, 16, 3, 3, "strides=[2, 2], padding=[1, 1]", BYOCL_FLOAT32, true},
    {"channel_blocks_float16", 1, 150, 6, 5, 16, 3, 3, "padding=[1, 1]", BYOCL_FLOAT16, false},
    {"channel_blocks_3x3_spans", 1, 203, 13, 13, 20, 3, 3, "padding=[1, 1]", BYOCL_FLOAT32, false},
    {"channel_blocks_1x1_last_span_short", 1, 1100, 2, 67, 17, 1, 1, "", BYOCL_FLOAT32, false},
    /* 3.7 MB of weights: with several threads the build packs them in three parts (one
     * per MiB), units split unevenly, the last unit partial (400 channels) */
    {"weights_packed_in_parts", 1, 256, 5, 5, 400, 3, 3, "padding=[1, 1]", BYOCL_FLOAT32, false},
};

/* The conv of case `k` as the module of `b` (mb_begin'ed). */
static void conv_case_module(mb *b, const conv_case *k)
{
    int64_t groups = 1;
    const char *g = strstr(k->attrs, "groups=");
    if (g)
        groups = atoll(g + 7);
    int64_t xd[4] = {k->n, k->c, k->h, k->w}, wd[4] = {k->o, k->c / groups, k->kh, k->kw};
    int x = mb_param(b, k->dtype, 4, xd);
    bool ints = !byocl_dtype_is_float(k->dtype);
    int w = k->weight_param ? mb_param(b, k->dtype, 4, wd)
                            : mb_const(b, k->dtype, 4, wd, ints ? -5 : -1, ints ? 5 : 1);
    mb_finish(b, mb_call2(b, "nn.conv2d", x, w, k->attrs));
}

static void check_conv_cases(const conv_case *cases, int n_cases)
{
    static const char *const tiles[] = {"position", "channel"};
    for (int i = 0; i < n_cases * 2; i++) {
        const conv_case *k = &cases[i / 2];
        setenv("BYOCL_LLVM_CONV_TILES", tiles[i % 2], 1);
        char what[96];
        snprintf(what, sizeof what, "%s, tiles by %s", k->name, tiles[i % 2]);
        mb b;
        mb_begin(&b);
        conv_case_module(&b, k);
        double bound = k->dtype == BYOCL_FLOAT16 ? 1e-3 : !byocl_dtype_is_float(k->dtype) ? 0 : 1e-5;
        if (strstr(k->attrs, "float32"))
            bound = 1e-5;
        mb_check(&b, bound, what);
        mb_free(&b);
    }
    unsetenv("BYOCL_LLVM_CONV_TILES");
}

static char *dumped_modules(const char *dir);

/* Whether the kernel of case `k` with `tiles` (BYOCL_LLVM_CONV_TILES), built for caches
 * of `kib` ("L1D,L2" KiB; NULL: the host's) and `threads` threads, has `needle` in its IR;
 * its results are checked against the reference first, the tasks run concurrently with
 * several threads. */
static bool conv_case_tiles_ir_has(const conv_case *k, const char *tiles, const char *kib,
                                   int threads, const char *needle)
{
    const char *dir = ts_tmpdir("conv_ir");
    setenv("BYOCL_LLVM_DUMP", dir, 1);
    if (kib)
        setenv("BYOCL_LLVM_CACHE_KIB", kib, 1);
    setenv("BYOCL_LLVM_CONV_TILES", tiles, 1);
    mb b;
    mb_begin(&b);
    conv_case_module(&b, k);
    lh_options opt = {.threads = threads, .concurrent = threads > 1};
    check_module(b.m, b.inputs, b.n_params, k->dtype == BYOCL_FLOAT16 ? 1e-3 : 1e-5, &opt, k->name);
    mb_free(&b);
    unsetenv("BYOCL_LLVM_CONV_TILES");
    unsetenv("BYOCL_LLVM_CACHE_KIB");
    unsetenv("BYOCL_LLVM_DUMP");
    char *ir = dumped_modules(dir);
    bool found = strstr(ir, needle) != NULL;
    free(ir);
    ts_remove_tree(dir);
    return found;
}

/* The same for by-channel tiles. */
static bool conv_case_ir_has(const conv_case *k, const char *kib, int threads, const char *needle)
{
    return conv_case_tiles_ir_has(k, "channel", kib, threads, needle);
}

/* Whether the by-channel kernel of case `k` reduces in blocks of input channels: it keeps
 * the blocks' partial sums in `part`. */
static bool conv_case_in_blocks(const conv_case *k, const char *kib)
{
    return conv_case_ir_has(k, kib, 1, "%part = alloca");
}

/* Nine by-channel units (whatever the channels of a unit are at this vector width, one of
 * these counts of output channels makes nine) on two threads: each task takes four and a
 * half units, the middle one split at a tile (q_first, where a task's share of the unit
 * starts), in place (1x1), through X' (3x3, weights packed per call) and in blocks of
 * input channels (small caches); every result the reference's. */
static void test_conv_split_units(void **state)
{
    (void)state;
    static const int64_t outs[] = {72, 108, 144, 216, 288, 432, 576};
    int split = 0, split_in_blocks = 0;
    for (int i = 0; i < N_ITEMS(outs); i++) {
        char name[3][48];
        snprintf(name[0], sizeof name[0], "1x1 256 -> %lld on 14x14", (long long)outs[i]);
        snprintf(name[1], sizeof name[1], "3x3 64 -> %lld on 13x13", (long long)outs[i]);
        snprintf(name[2], sizeof name[2], "1x1 256 -> %lld, blocks", (long long)outs[i]);
        const conv_case pointwise = {name[0], 1, 256, 14, 14, outs[i], 1, 1, "",
                                     BYOCL_FLOAT32, false};
        const conv_case padded = {name[1], 1, 64, 13, 13, outs[i], 3, 3, "padding=[1, 1]",
                                  BYOCL_FLOAT32, true};
        split += conv_case_ir_has(&pointwise, NULL, 2, "%q_first");
        split += conv_case_ir_has(&padded, NULL, 2, "%q_first");
        const conv_case blocked = {name[2], 1, 256, 14, 14, outs[i], 1, 1, "", BYOCL_FLOAT32,
                                   false};
        split_in_blocks += conv_case_ir_has(&blocked, "8,64", 2, "%q_first");
    }
    if (split < 2 || split_in_blocks < 1)
        fail_msg("units split in %d of %d convs, in %d of %d in blocks", split,
                 2 * N_ITEMS(outs), split_in_blocks, N_ITEMS(outs));
}

/* The case of conv_cases_tail named `name`. */
static const conv_case *tail_case(const char *name)
{
    for (int c = 0; c < N_ITEMS(conv_cases_tail); c++)
        if (strcmp(conv_cases_tail[c].name, name) == 0)
            return &conv_cases_tail[c];
    fail_msg("no conv case %s", name);
    return NULL;
}

static void test_conv_tails(void **state)
{
    (void)state;
    check_conv_cases(conv_cases_tail, N_ITEMS(conv_cases_tail));
    setenv("BYOCL_LLVM_CACHE_KIB", "8,64", 1);
    check_conv_cases(conv_cases_blocks, N_ITEMS(conv_cases_blocks));
    unsetenv("BYOCL_LLVM_CACHE_KIB");
    /* Units of 18 to 468 KiB (the 1x1 conv's and the 3x3 convs', at any vector width) go
     * in blocks with the small caches. With an L1 of 16 KiB and an L2 of 2 MiB (a quarter
     * of it holds any of them) they outgrow L1 only: in blocks where the conv reads its
     * input in place (1x1) or its map is one span (6x7), in one block where it reads X' of
     * a map of several spans (13x13). */
    static const struct {
        int k;
        const char *kib;
        bool blocks;
    } expect[] = {{0, "8,64", true}, {0, "16,2048", true}, {1, "16,2048", true},
                  {4, "8,64", true}, {4, "16,2048", false}};
    for (int i = 0; i < N_ITEMS(expect); i++) {
        const conv_case *k = &conv_cases_blocks[expect[i].k];
        if (conv_case_in_blocks(k, expect[i].kib) != expect[i].blocks)
            fail_msg("%s: %s with caches of %s KiB", k->name,
                     expect[i].blocks ? "no blocks" : "blocks", expect[i].kib);
    }
    /* Kernels of more than 16 taps loop over their rows (a loop named kh) with both tile
     * kinds, where the rows' offsets are regular: not a dilated kernel through X', nor a
     * 3x3 one (unrolled). */
    static const struct {
        const char *name;
        bool rows;
    } rows[] = {{"c3_o17_7x7_s2_pad3", true}, {"5x5_s3_rows", true}, {"5x5_direct_rows", true},
                {"7x3_s2x1_rows", true},      {"5x5_dilation2", false}, {"c5_o13_3x3_pad1", false}};
    static const char *const tiles[] = {"position", "channel"};
    for (int i = 0; i < N_ITEMS(rows) * 2; i++) {
        const conv_case *k = tail_case(rows[i / 2].name);
        if (conv_case_tiles_ir_has(k, tiles[i % 2], NULL, 1, "%kh = alloca") != rows[i / 2].rows)
            fail_msg("%s, tiles by %s: %s over the kernel rows", k->name, tiles[i % 2],
                     rows[i / 2].rows ? "no loop" : "a loop");
    }
    /* A partial last tile (by position a masked one, by channel on a grid without halo
     * columns one of clamped positions) is emitted only where some band holds no whole
     * tile: not where every band's positions fill whole tiles, nor where the last tile
     * can start a tile before the band's end (in place, through X' with halo columns, a
     * last span shorter than a tile); one thread. */
    static const struct {
        const char *name;
        bool partial;
    } lasts[] = {{"1x1_whole_tiles", false},    {"1x1_direct_spans", false},
                 {"c5_o13_3x3_pad1", false},    {"1x1_last_span_short", false},
                 {"7x1_flat", false},           {"1x1_map_1x3", true}};
    for (int i = 0; i < N_ITEMS(lasts) * 2; i++) {
        const conv_case *k = tail_case(lasts[i / 2].name);
        const char *last = i % 2 ? "tile.last" : "tile.masked";
        if (conv_case_tiles_ir_has(k, tiles[i % 2], NULL, 1, last) != lasts[i / 2].partial)
            fail_msg("%s, tiles by %s: %s %s", k->name, tiles[i % 2],
                     lasts[i / 2].partial ? "no partial tile," : "a partial tile,", last);
    }
    /* Convs of one output position whose kernel covers the map are GEMVs, whichever
     * tiles convs take: float32 of 256 or more input values over the weight as it is (its
     * loop over the reduction's tail, k_tail), shorter ones, two images and float16 packed
     * (the dense's loop over tiles of rows, rtile); not a padded kernel over a larger map,
     * nor one output position of a kernel that covers part of it. */
    static const char *const unpacked = "%k_tail = alloca", *const packed = "%rtile = alloca";
    static const struct {
        const char *name;
        const char *gemv; /* what the GEMV's IR has, or NULL: no GEMV */
    } dots[] = {{"dot_1x1_map", unpacked},      {"dot_7x7_kernel", unpacked},
                {"dot_1x1_s2", packed},         {"dot_1x1_map_batch2", packed},
                {"dot_float16", packed},
                {"kernel_over_input", NULL},    {"one_position_3x3_of_5x5", NULL},
                {"1x1_direct", NULL}};
    for (int i = 0; i < N_ITEMS(dots) * 2; i++) {
        const conv_case *k = tail_case(dots[i / 2].name);
        const char *gemv = dots[i / 2].gemv;
        bool ok = gemv ? conv_case_tiles_ir_has(k, tiles[i % 2], NULL, 1, gemv)
                       : !conv_case_tiles_ir_has(k, tiles[i % 2], NULL, 1, unpacked) &&
                             !conv_case_tiles_ir_has(k, tiles[i % 2], NULL, 1, packed);
        if (!ok)
            fail_msg("%s, tiles by %s: %s", k->name, tiles[i % 2], gemv ? "not a GEMV" : "a GEMV");
    }
}

/* The text of every module the backend dumped into dir (BYOCL_LLVM_DUMP): as generated,
 * and optimized where it was compiled (not found in the host code cache). */
static char *dumped_modules(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    char *all = calloc(1, 1);
    size_t n_all = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 3 || strcmp(e->d_name + len - 3, ".ll") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t n = 0;
        char *text = ts_read_file(path, &n);
        all = realloc(all, n_all + n + 1);
        assert_non_null(all);
        memcpy(all + n_all, text, n + 1);
        n_all += n;
        free(text);
    }
    closedir(d);
    return all;
}

/* Two kinds of prefetch in by-channel convs (docs/host-codegen.md). A 1x1 conv that reads
 * its input in place prefetches the rows its tiles read next when built for several
 * threads (their input is mostly in the other cores' caches); built for one thread it
 * does not, nor does a padded 3x3 conv, which copies its rows into X' first. And a unit
 * (or a block of one) of 8 KiB of packed weights or more has its first tile prefetch them
 * ahead, with any number of threads: the 160-channel convs (units of 24 channels with
 * 8-float vectors: 15 KiB in the 1x1 conv; the 3x3 conv's 135 KiB units go in blocks of
 * half of L1 where a quarter of L2 is smaller), not the small ones (24 or 3 input channels: at most 7 KiB a unit even in
 * the widest tiles); those units' first tiles of a span prefetch the next block's weights
 * too, into L2. Every build still computes the reference's results, the prefetches
 * reaching past the input's and the weights' ends in the last tiles. */
static void test_conv_prefetch(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int64_t c, k;
        const char *attrs;
        int threads;
        bool prefetches, next_weights; /* any prefetch; the next block's weights, into L2 */
    } cases[] = {
        {"1x1, two threads", 24, 1, "", 2, true, false},
        {"1x1, one thread", 24, 1, "", 1, false, false},
        {"3x3 padded, two threads", 3, 3, "padding=[1, 1]", 2, false, false},
        {"1x1 of 160 channels, one thread", 160, 1, "", 1, true, true},
        {"3x3 padded of 160 channels, one thread", 160, 3, "padding=[1, 1]", 1, true, true},
    };
    setenv("BYOCL_LLVM_CONV_TILES", "channel", 1);
    setenv("BYOCL_LLVM_VECTOR_BITS", "256", 1);
    for (int i = 0; i < N_ITEMS(cases); i++) {
        const char *dir = ts_tmpdir("conv_prefetch");
        setenv("BYOCL_LLVM_DUMP", dir, 1);
        mb b;
        mb_begin(&b);
        int64_t xd[4] = {1, cases[i].c, 13, 29}, wd[4] = {48, cases[i].c, cases[i].k, cases[i].k};
        int x = mb_param(&b, BYOCL_FLOAT32, 4, xd);
        int w = mb_const(&b, BYOCL_FLOAT32, 4, wd, -1, 1);
        mb_finish(&b, mb_call2(&b, "nn.conv2d", x, w, cases[i].attrs));
        lh_options opt = {.threads = cases[i].threads, .concurrent = cases[i].threads > 1};
        check_module(b.m, b.inputs, b.n_params, 1e-5, &opt, cases[i].name);
        unsetenv("BYOCL_LLVM_DUMP");
        char *ir = dumped_modules(dir);
        if ((strstr(ir, "@llvm.prefetch") != NULL) != cases[i].prefetches)
            fail_msg("%s: the kernel %s", cases[i].name,
                     cases[i].prefetches ? "prefetches nothing" : "prefetches");
        /* locality 2: prefetcht1, into L2 */
        if ((strstr(ir, "i32 0, i32 2, i32 1)") != NULL) != cases[i].next_weights)
            fail_msg("%s: the kernel %s the next block's weights", cases[i].name,
                     cases[i].next_weights ? "does not prefetch" : "prefetches");
        free(ir);
        mb_free(&b);
        ts_remove_tree(dir);
    }
    unsetenv("BYOCL_LLVM_VECTOR_BITS");
    unsetenv("BYOCL_LLVM_CONV_TILES");
}

/* ------------------------------------------------------------ dense tails */

/* Rows that fill no register tile (1, 2, 3, 7, 13, 37, 100 rows), units that fill no block,
 * K of 1, batches of rows (rank 3), weights packed by each call (parameters), float16 and
 * integers; unit blocks outside the row tiles (the weight larger than x) and inside them
 * (37 rows of 19 by 5 units, 100 rows by 50 units: x the larger). */
static void test_dense_tails(void **state)
{
    (void)state;
    static const struct {
        int rank;
        int64_t lead[2], k, u;
        byocl_dtype dtype;
        bool weight_param;
    } cases[] = {
        {2, {1, 0}, 512, 1000, BYOCL_FLOAT32, false}, /* the classifier */
        {2, {1, 0}, 5, 1, BYOCL_FLOAT32, false},
        {2, {1, 0}, 300, 40, BYOCL_FLOAT32, false}, /* a GEMV of fewer units than 8 vectors */
        /* GEMVs over the weight as it is: units past the last group of 8, a reduction
         * past the last vector, a weight that is a parameter */
        {2, {1, 0}, 257, 13, BYOCL_FLOAT32, false},
        {2, {1, 0}, 260, 19, BYOCL_FLOAT32, true},
        {2, {3, 0}, 17, 130, BYOCL_FLOAT32, false},
        {2, {7, 0}, 1, 33, BYOCL_FLOAT32, false},
        {2, {13, 0}, 300, 70, BYOCL_FLOAT32, false},
        {2, {37, 0}, 19, 5, BYOCL_FLOAT32, false},
        {2, {100, 0}, 19, 50, BYOCL_FLOAT32, true},
        {3, {2, 3}, 9, 20, BYOCL_FLOAT32, true},
        {2, {4, 0}, 31, 18, BYOCL_FLOAT16, false},
        {2, {5, 0}, 12, 7, BYOCL_INT32, false},
        {2, {2, 0}, 6, 5, BYOCL_INT8, true},
    };
    for (int i = 0; i < N_ITEMS(cases); i++) {
        mb b;
        mb_begin(&b);
        int64_t xd[3] = {cases[i].lead[0], cases[i].lead[1], cases[i].k};
        if (cases[i].rank == 2)
            xd[1] = cases[i].k;
        int64_t wd[2] = {cases[i].u, cases[i].k};
        bool ints = !byocl_dtype_is_float(cases[i].dtype);
        int x = mb_param(&b, cases[i].dtype, cases[i].rank, xd);
        int w = cases[i].weight_param ? mb_param(&b, cases[i].dtype, 2, wd)
                                      : mb_const(&b, cases[i].dtype, 2, wd, ints ? -5 : -1, ints ? 5 : 1);
        mb_finish(&b, mb_call2(&b, "nn.dense", x, w, NULL));
        char what[64];
        snprintf(what, sizeof what, "dense case %d", i);
        mb_check(&b, cases[i].dtype == BYOCL_FLOAT16 ? 1e-3 : ints ? 0 : 1e-5, what);
        mb_free(&b);
    }
}

/* ------------------------------------------------------------ fusion */

/* Asserts the plan has `n` groups whose names are `names` (in order). */
static void expect_groups(const byocl_module *m, const char *const *names, int n)
{
    byocl_host_group *groups = NULL;
    int got = plan_groups(m, &groups);
    for (int i = 0; i < got && i < n; i++)
        assert_string_equal(groups[i].name, names[i]);
    assert_int_equal(got, n);
    host_groups_free(groups, got);
}

/* relu(batch_norm(conv(x)) + residual) with the residual from another conv: ResNet's
 * block, as two kernels; the fused results equal the unfused reference. */
static void test_fusion_conv_block(void **state)
{
    (void)state;
    mb b;
    mb_begin(&b);
    int64_t xd[4] = {1, 6, 10, 9}, wd[4] = {12, 6, 3, 3}, w1[4] = {12, 6, 1, 1}, cd[1] = {12};
    int x = mb_param(&b, BYOCL_FLOAT32, 4, xd);
    int c1 = mb_call2(&b, "nn.conv2d", x, mb_const(&b, BYOCL_FLOAT32, 4, wd, -1, 1),
                      "padding=[1, 1]");
    int bn_args[5] = {c1, mb_const(&b, BYOCL_FLOAT32, 1, cd, 0.5, 1.5),
                      mb_const(&b, BYOCL_FLOAT32, 1, cd, -0.1, 0.1),
                      mb_const(&b, BYOCL_FLOAT32, 1, cd, -0.1, 0.1),
                      mb_const(&b, BYOCL_FLOAT32, 1, cd, 0.5, 1.5)};
    int bn = mb_getitem(&b, mb_call(&b, "nn.batch_norm", bn_args, 5, NULL), 0);
    int ds = mb_call2(&b, "nn.conv2d", x, mb_const(&b, BYOCL_FLOAT32, 4, w1, -1, 1), "");
    int body = mb_call1(&b, "nn.relu", mb_call2(&b, "add", bn, ds, NULL), NULL);
    mb_finish(&b, body);
    const char *names[] = {"nn_conv2d_0", "fused_nn_conv2d_nn_batch_norm_add_nn_relu_1"};
    expect_groups(b.m, names, 2);
    mb_check(&b, 1e-5, "conv block");
    mb_free(&b);
}

/* A conv's epilogue adding operands of every broadcast shape (per channel, in full, along
 * the rows or the columns alone, channels and columns, one value), for two images, with
 * both register tile shapes. */
static void test_fusion_conv_epilogue_operands(void **state)
{
    (void)state;
    static const struct {
        int rank;
        int64_t dims[4];
    } operands[] = {
        {3, {19, 1, 1}}, {4, {2, 19, 9, 11}}, {4, {1, 1, 9, 1}}, {3, {19, 1, 11}}, {1, {11}}, {1, {1}},
    };
    static const char *const tiles[] = {"position", "channel"};
    for (int i = 0; i < N_ITEMS(operands) * 2; i++) {
        setenv("BYOCL_LLVM_CONV_TILES", tiles[i % 2], 1);
        mb b;
        mb_begin(&b);
        int64_t xd[4] = {2, 20, 9, 11}, wd[4] = {19, 20, 3, 3};
        int x = mb_param(&b, BYOCL_FLOAT32, 4, xd);
        int conv = mb_call2(&b, "nn.conv2d", x, mb_const(&b, BYOCL_FLOAT32, 4, wd, -1, 1), "padding=[1, 1]");
        int sum = mb_call2(&b, "add", conv,
                           mb_const(&b, BYOCL_FLOAT32, operands[i / 2].rank, operands[i / 2].dims, -1, 1), NULL);
        mb_finish(&b, mb_call1(&b, "nn.relu", sum, NULL));
        const char *names[] = {"fused_nn_conv2d_add_nn_relu_0"};
        expect_groups(b.m, names, 1);
        char what[96];
        snprintf(what, sizeof what, "conv + add of operand %d, tiles by %s", i / 2, tiles[i % 2]);
        mb_check(&b, 1e-5, what);
        mb_free(&b);
    }
    unsetenv("BYOCL_LLVM_CONV_TILES");
}

/* A squeeze-and-excitation block of two images: the average of each channel, two 1x1
 * convs on the 1x1 map (GEMVs, lower_dense_conv) with their biases, SiLU and a sigmoid
 * as epilogues, and the gate applied to the map; the fused results equal the reference. */
static void test_fusion_conv_dot_product(void **state)
{
    (void)state;
    mb b;
    mb_begin(&b);
    int64_t xd[4] = {2, 72, 5, 6}, sd[4] = {20, 72, 1, 1}, ed[4] = {72, 20, 1, 1};
    int64_t sb[3] = {20, 1, 1}, eb[3] = {72, 1, 1};
    int x = mb_param(&b, BYOCL_FLOAT32, 4, xd);
    int pooled = mb_call1(&b, "nn.global_avg_pool2d", x, NULL);
    int sq = mb_call2(&b, "nn.conv2d", pooled, mb_const(&b, BYOCL_FLOAT32, 4, sd, -1, 1), "");
    sq = mb_call2(&b, "add", sq, mb_const(&b, BYOCL_FLOAT32, 3, sb, -1, 1), NULL);
    sq = mb_call2(&b, "multiply", sq, mb_call1(&b, "sigmoid", sq, NULL), NULL);
    int ex = mb_call2(&b, "nn.conv2d", sq, mb_const(&b, BYOCL_FLOAT32, 4, ed, -1, 1), "");
    ex = mb_call2(&b, "add", ex, mb_const(&b, BYOCL_FLOAT32, 3, eb, -1, 1), NULL);
    ex = mb_call1(&b, "sigmoid", ex, NULL);
    mb_finish(&b, mb_call2(&b, "multiply", x, ex, NULL));
    mb_check(&b, 1e-5, "squeeze and excitation");
    mb_free(&b);
}

/* batch_norm whose statistics are parameters: scale and shift are computed in the
 * kernel; its moving statistics leave @main too (pass-through outputs). */
static void test_fusion_bn_params(void **state)
{
    (void)state;
    mb b;
    mb_begin(&b);
    int64_t xd[4] = {2, 5, 4, 7}, wd[4] = {5, 5, 3, 3}, cd[1] = {5};
    int x = mb_param(&b, BYOCL_FLOAT32, 4, xd);
    int conv = mb_call2(&b, "nn.conv2d", x, mb_const(&b, BYOCL_FLOAT32, 4, wd, -1, 1),
                        "padding=[1, 1]");
    int bn_args[5] = {conv, mb_param(&b, BYOCL_FLOAT32, 1, cd), mb_param(&b, BYOCL_FLOAT32, 1, cd),
                      mb_param(&b, BYOCL_FLOAT32, 1, cd), mb_param(&b, BYOCL_FLOAT32, 1, cd)};
    byocl_tensor_fill_random(b.inputs[4], 5, 0.5, 1.5); /* variances > 0 */
    int bn = mb_call(&b, "nn.batch_norm", bn_args, 5, "epsilon=0.001f, center=False");
    int relu = mb_call1(&b, "clip", mb_getitem(&b, bn, 0), "a_min=0f, a_max=0.3f");
    int fields[3] = {relu, mb_getitem(&b, bn, 1), mb_getitem(&b, bn, 2)};
    int tuple = byocl_function_add_tuple(b.fn, fields, 3, &b.err);
    mb_finish(&b, tuple);
    const char *names[] = {"fused_nn_conv2d_nn_batch_norm_clip_0"};
    expect_groups(b.m, names, 1);
    mb_check(&b, 1e-5, "conv + batch_norm of parameters");
    mb_free(&b);

    /* Only the statistics leave: the kernel copies them and computes nothing else. */
    mb_begin(&b);
    x = mb_param(&b, BYOCL_FLOAT32, 4, xd);
    conv = mb_call2(&b, "nn.conv2d", x, mb_const(&b, BYOCL_FLOAT32, 4, wd, -1, 1), "");
    int stats[5] = {conv, mb_const(&b, BYOCL_FLOAT32, 1, cd, 0.5, 1.5),
                    mb_const(&b, BYOCL_FLOAT32, 1, cd, -1, 1), mb_param(&b, BYOCL_FLOAT32, 1, cd),
                    mb_const(&b, BYOCL_FLOAT32, 1, cd, 0.5, 1.5)};
    bn = mb_call(&b, "nn.batch_norm", stats, 5, NULL);
    int both[2] = {mb_getitem(&b, bn, 2), mb_getitem(&b, bn, 1)};
    mb_finish(&b, byocl_function_add_tuple(b.fn, both, 2, &b.err));
    mb_check(&b, 0, "batch_norm statistics only");
    mb_free(&b);
}

/* conv2d_transpose + bias_add + relu: one kernel (the transposed conv anchors its
 * epilogue as conv2d does), many tasks, bit for bit with the reference (both sum in
 * double in the same order). A weight that is a parameter works too. */
static void test_fusion_conv_transpose(void **state)
{
    (void)state;
    mb b;
    mb_begin(&b);
    int64_t xd[4] = {2, 4, 5, 6}, wd[4] = {4, 3, 3, 2}, bd[1] = {6};
    int x = mb_param(&b, BYOCL_FLOAT32, 4, xd);
    int conv = mb_call2(&b, "nn.conv2d_transpose", x, mb_const(&b, BYOCL_FLOAT32, 4, wd, -1, 1),
                        "strides=[2, 3], padding=[1, 0, 0, 1], groups=2, output_padding=[1, 2]");
    int biased = mb_call2(&b, "nn.bias_add", conv, mb_const(&b, BYOCL_FLOAT32, 1, bd, -1, 1),
                          "axis=1");
    mb_finish(&b, mb_call1(&b, "nn.relu", biased, NULL));
    const char *names[] = {"fused_nn_conv2d_transpose_nn_bias_add_nn_relu_0"};
    expect_groups(b.m, names, 1);
    mb_check(&b, 0, "conv2d_transpose + bias_add + relu");
    mb_free(&b);

    mb_begin(&b);
    x = mb_param(&b, BYOCL_FLOAT32, 4, xd);
    int w = mb_param(&b, BYOCL_FLOAT32, 4, wd);
    mb_finish(&b, mb_call2(&b, "nn.conv2d_transpose", x, w, "dilation=[2, 1]"));
    mb_check(&b, 0, "conv2d_transpose of a weight parameter");
    mb_free(&b);
}

/* dense + bias_add + leaky_relu, then a cast to float16: one kernel. */
static void test_fusion_dense(void **state)
{
    (void)state;
    mb b;
    mb_begin(&b);
    int64_t xd[2] = {3, 40}, wd[2] = {35, 40}, bd[1] = {35};
    int x = mb_param(&b, BYOCL_FLOAT32, 2, xd);
    int d = mb_call2(&b, "nn.dense", x, mb_const(&b, BYOCL_FLOAT32, 2, wd, -1, 1), NULL);
    d = mb_call2(&b, "nn.bias_add", d, mb_const(&b, BYOCL_FLOAT32, 1, bd, -1, 1), "axis=-1");
    d = mb_call1(&b, "nn.leaky_relu", d, "alpha=0.1f");
    mb_finish(&b, mb_call1(&b, "cast", d, "dtype=\"float16\""));
    const char *names[] = {"fused_nn_dense_nn_bias_add_nn_leaky_relu_cast_0"};
    expect_groups(b.m, names, 1);
    mb_check(&b, 1e-3, "dense epilogue");
    mb_free(&b);
    /* one row: a GEMV over the weight as it is, its units through the epilogue one by one */
    mb_begin(&b);
    int64_t x1[2] = {1, 300}, w1[2] = {37, 300}, b1[1] = {37};
    x = mb_param(&b, BYOCL_FLOAT32, 2, x1);
    d = mb_call2(&b, "nn.dense", x, mb_const(&b, BYOCL_FLOAT32, 2, w1, -1, 1), NULL);
    d = mb_call2(&b, "nn.bias_add", d, mb_const(&b, BYOCL_FLOAT32, 1, b1, -1, 1), "axis=-1");
    mb_finish(&b, mb_call1(&b, "sigmoid", d, NULL));
    mb_check(&b, 1e-5, "GEMV epilogue");
    mb_free(&b);
}

/* An elementwise tree (two single-use producers of one add) is one kernel, and so is a
 * value read twice once both readers are in the group; a value also read outside the
 * group (by a softmax) ends it. */
static void test_fusion_elemwise(void **state)
{
    (void)state;
    mb b;
    mb_begin(&b);
    int64_t d3[3] = {4, 6, 33}, d1[1] = {33};
    int x = mb_param(&b, BYOCL_FLOAT32, 3, d3), y = mb_param(&b, BYOCL_FLOAT32, 3, d3);
    int z = mb_param(&b, BYOCL_FLOAT32, 1, d1);
    int e = mb_call1(&b, "exp", x, NULL);
    int t = mb_call1(&b, "tanh", mb_call2(&b, "multiply", y, z, NULL), NULL);
    int s = mb_call2(&b, "add", e, t, NULL);        /* tree: exp and tanh(y*z) */
    int shared = mb_call1(&b, "sigmoid", s, NULL);  /* read twice below */
    int u = mb_call2(&b, "subtract", shared, mb_call1(&b, "abs", shared, NULL), NULL);
    mb_finish(&b, mb_call2(&b, "divide", u, z, NULL));
    const char *names[] = {"fused_exp_multiply_tanh_add_sigmoid_abs_subtract_divide_0"};
    expect_groups(b.m, names, 1);
    mb_check(&b, FAST_EXP_BOUND, "elementwise tree"); /* exp and sigmoid in float */
    mb_free(&b);

    mb_begin(&b);
    x = mb_param(&b, BYOCL_FLOAT32, 3, d3);
    shared = mb_call1(&b, "sigmoid", mb_call1(&b, "exp", x, NULL), NULL);
    int sm = mb_call1(&b, "nn.softmax", shared, "axis=-1");
    mb_finish(&b, mb_call2(&b, "add", sm, mb_call1(&b, "abs", shared, NULL), NULL));
    const char *outside[] = {"fused_exp_sigmoid_0", "nn_softmax_1", "fused_abs_add_2"};
    expect_groups(b.m, outside, 3);
    mb_check(&b, FAST_EXP_BOUND, "a value read outside its group");
    mb_free(&b);
}

/* SiLU, x * sigmoid(x), after a dense: one kernel; after a conv: the conv, then the SiLU
 * (docs/host-codegen.md, Fusion). */
static void test_fusion_silu(void **state)
{
    (void)state;
    mb b;
    mb_begin(&b);
    int64_t xd[2] = {3, 40}, wd[2] = {35, 40};
    int x = mb_param(&b, BYOCL_FLOAT32, 2, xd);
    int d = mb_call2(&b, "nn.dense", x, mb_const(&b, BYOCL_FLOAT32, 2, wd, -1, 1), NULL);
    mb_finish(&b, mb_call2(&b, "multiply", d, mb_call1(&b, "sigmoid", d, NULL), NULL));
    const char *dense[] = {"fused_nn_dense_sigmoid_multiply_0"};
    expect_groups(b.m, dense, 1);
    mb_check(&b, FAST_EXP_BOUND, "dense + SiLU");
    mb_free(&b);

    mb_begin(&b);
    int64_t cd[4] = {1, 5, 9, 8}, cw[4] = {7, 5, 3, 3};
    x = mb_param(&b, BYOCL_FLOAT32, 4, cd);
    int c = mb_call2(&b, "nn.conv2d", x, mb_const(&b, BYOCL_FLOAT32, 4, cw, -1, 1), "padding=[1, 1]");
    mb_finish(&b, mb_call2(&b, "multiply", c, mb_call1(&b, "sigmoid", c, NULL), NULL));
    const char *conv[] = {"nn_conv2d_0", "fused_sigmoid_multiply_1"};
    expect_groups(b.m, conv, 2);
    mb_check(&b, FAST_EXP_BOUND, "conv + SiLU");
    mb_free(&b);
}

/* Comparisons, logical ops and where in one tree with the float functions: bool values
 * inside a kernel, a broadcast condition; and HardSwish as the ONNX importer writes it
 * (x * clip(x * 1/6 + 0.5, 0, 1)), one kernel with the conv2d-free chain. */
static void test_fusion_compare_where(void **state)
{
    (void)state;
    mb b;
    mb_begin(&b);
    int64_t d3[3] = {4, 6, 33}, dc[3] = {4, 1, 33};
    int x = mb_param(&b, BYOCL_FLOAT32, 3, d3), y = mb_param(&b, BYOCL_FLOAT32, 3, d3);
    int c = mb_param(&b, BYOCL_BOOL, 3, dc);
    int lt = mb_call2(&b, "less", x, y, NULL);
    int both = mb_call2(&b, "logical_and", lt, c, NULL);
    int ge = mb_call2(&b, "greater_equal", y, mb_const(&b, BYOCL_FLOAT32, 0, NULL, 0.1, 0.2), NULL);
    int odd = mb_call2(&b, "logical_xor", both, mb_call1(&b, "logical_not", ge, NULL), NULL);
    int r = mb_call1(&b, "rsqrt", mb_call1(&b, "abs", x, NULL), NULL);
    int e = mb_call1(&b, "erf", y, NULL);
    int p = mb_call2(&b, "power", e, mb_const(&b, BYOCL_FLOAT32, 1, d3 + 2, 1, 3), NULL);
    int args[3] = {odd, r, mb_call1(&b, "negative", p, NULL)};
    int w = mb_call(&b, "where", args, 3, NULL);
    int root = mb_call1(&b, "sqrt", mb_call1(&b, "exp", x, NULL), NULL);
    int fields[2] = {w, mb_call1(&b, "log", root, NULL)};
    mb_finish(&b, byocl_function_add_tuple(b.fn, fields, 2, &b.err));
    const char *names[] = {/* the eleven ops of the tree; a long name is cut, keeping its index */
                           "fused_less_logical_and_greater_equal_logical_not_logical_xor__0",
                           "fused_exp_sqrt_log_1"};
    expect_groups(b.m, names, 2);
    mb_check(&b, FAST_EXP_BOUND, "compare and where"); /* exp and erf in float */
    mb_free(&b);

    mb_begin(&b); /* HardSwish, float16 */
    int64_t d4[4] = {1, 8, 7, 9};
    int h = mb_param(&b, BYOCL_FLOAT16, 4, d4);
    int t = mb_call2(&b, "multiply", h, mb_const(&b, BYOCL_FLOAT16, 0, NULL, 0.166, 0.167), NULL);
    t = mb_call2(&b, "add", t, mb_const(&b, BYOCL_FLOAT16, 0, NULL, 0.5, 0.5), NULL);
    t = mb_call1(&b, "clip", t, "a_min=0f, a_max=1f");
    mb_finish(&b, mb_call2(&b, "multiply", h, t, NULL));
    mb_check(&b, 0, "hardswish");
    mb_free(&b);
}

/* Integer and bool chains wrap and normalize after every op, as the reference stores
 * each op's result; a rank-0 result. */
static void test_integer_chains(void **state)
{
    (void)state;
    mb b;
    mb_begin(&b);
    int64_t d[2] = {5, 67}, one[1] = {67};
    int x = mb_param(&b, BYOCL_INT8, 2, d), y = mb_param(&b, BYOCL_INT8, 2, d);
    byocl_tensor_fill_random(b.inputs[0], 3, -128, 128);
    byocl_tensor_fill_random(b.inputs[1], 4, -128, 128);
    int t = mb_call2(&b, "multiply", mb_call2(&b, "add", x, y, NULL), x, NULL); /* wraps */
    int u = mb_call1(&b, "cast", t, "dtype=\"uint8\"");
    u = mb_call2(&b, "maximum", u, mb_const(&b, BYOCL_UINT8, 1, one, 0, 200), NULL);
    int flag = mb_call1(&b, "cast", mb_call2(&b, "subtract", u, mb_call1(&b, "cast", y, "dtype=\"uint8\""), NULL),
                        "dtype=\"bool\"");
    flag = mb_call2(&b, "add", flag, mb_call1(&b, "cast", x, "dtype=\"bool\""), NULL);
    int wide = mb_call1(&b, "cast", flag, "dtype=\"int64\"");
    wide = mb_call1(&b, "clip", mb_call1(&b, "nn.leaky_relu", mb_call2(&b, "subtract", wide, mb_call1(&b, "cast", y, "dtype=\"int64\""), NULL), "alpha=0.3f"), "a_min=-20.5f, a_max=1e30f");
    int fields[2] = {wide, mb_call1(&b, "mean", mb_call1(&b, "cast", t, "dtype=\"float16\""), NULL)};
    mb_finish(&b, byocl_function_add_tuple(b.fn, fields, 2, &b.err));
    mb_check(&b, 0, "integer chains");
    mb_free(&b);

    mb_begin(&b); /* scalars */
    int s0 = mb_param(&b, BYOCL_FLOAT32, 0, NULL), s1 = mb_param(&b, BYOCL_FLOAT32, 0, NULL);
    mb_finish(&b, mb_call1(&b, "sigmoid", mb_call2(&b, "divide", s0, s1, NULL), NULL));
    mb_check(&b, FAST_EXP_BOUND, "rank 0"); /* sigmoid in float */
    mb_free(&b);
}

/* The forum thread's float16 VGG block: float32 weights cast to float16 on the host (so
 * the conv packs its weights per call), conv2d with out_dtype float16, bias_add, relu,
 * max pooling; everything stored as half and computed in float. */
static void test_vgg_block_float16(void **state)
{
    (void)state;
    if (QUICK) /* the reference conv alone takes minutes there */
        skip();
    char *text = ts_read_file(ts_fixture("annotate/vgg_block_plain.relay"), NULL);
    byocl_module *m = op_parse_typed(text, "vgg_block_plain.relay");
    free(text);
    byocl_function *fn = byocl_module_find(m, "main");
    byocl_tensor *in[3];
    static const double range[3] = {1.0, 0.03, 0.5};
    for (int k = 0; k < 3; k++) {
        const byocl_type *t = byocl_node_type(fn, byocl_function_param(fn, k));
        in[k] = random_tensor(t->dtype, t->shape.rank, t->shape.dims, 40 + (uint64_t)k,
                              -range[k], range[k]);
    }
    const char *names[] = {"nn_relu_0", "cast_1", "cast_2",
                           "fused_nn_conv2d_nn_bias_add_nn_relu_3", "nn_max_pool2d_4"};
    expect_groups(m, names, 5);
    lh_options opt = {.threads = 2, .concurrent = true};
    check_module(m, in, 3, 1e-3, &opt, "float16 VGG block");
    op_tensors_free(in, 3);
    byocl_module_free(m);
}

/* Kernels split into a multiple of the threads' count of tasks once they split at all
 * (the thread pool gives each thread an equal share of consecutive tasks): a depthwise
 * conv of 576 channels onto 7x7 (in lanes with AVX-512, in rows with narrower vectors)
 * and the global pool after it, whose work is just over a task's grain, take as many
 * tasks as threads, not one; the results are the reference's with the tasks run
 * concurrently. */
static void test_tasks_per_thread(void **state)
{
    (void)state;
    for (int threads = 2; threads <= 3; threads++) {
        mb b;
        mb_begin(&b);
        int64_t xd[4] = {1, 576, 14, 14}, wd[4] = {576, 1, 3, 3};
        int x = mb_param(&b, BYOCL_FLOAT32, 4, xd);
        int w = mb_const(&b, BYOCL_FLOAT32, 4, wd, -1, 1);
        int c = mb_call2(&b, "nn.conv2d", x, w, "strides=[2, 2], padding=[1, 1], groups=576");
        mb_finish(&b, mb_call1(&b, "nn.global_avg_pool2d", c, ""));
        int64_t tasks[4] = {0};
        lh_options opt = {.threads = threads, .concurrent = true, .tasks = tasks, .max_tasks = 4};
        check_module(b.m, b.inputs, b.n_params, 1e-5, &opt, "depthwise conv and global pool");
        assert_int_equal(tasks[0], threads);
        assert_int_equal(tasks[1], threads);
        mb_free(&b);
    }
}

/* The built-in networks end to end (every kernel fused as the planner groups them). */
static void test_builtin_models(void **state)
{
    (void)state;
    if (QUICK)
        skip();
    static const char *const models[] = {"mobilenet_v2", "resnet18"};
    for (int i = 0; i < N_ITEMS(models); i++) {
        byocl_module *m = NULL;
        byocl_error err = {0};
        if (byocl_builtin_build(models[i], &m, &err) != BYOCL_OK)
            fail_msg("%s", err.msg);
        byocl_function *fn = byocl_module_find(m, "main");
        const byocl_type *t = byocl_node_type(fn, byocl_function_param(fn, 0));
        byocl_tensor *x = random_tensor(t->dtype, t->shape.rank, t->shape.dims, 11, -1, 1);
        lh_options opt = {.threads = 2, .concurrent = true};
        check_module(m, &x, 1, 1e-5, &opt, models[i]);
        byocl_tensor_unref(x);
        byocl_module_free(m);
    }
}

/* ------------------------------------------------------------ failures */

static void expect_kernel_failure(const byocl_module *m, byocl_tensor **in, const char *msg)
{
    byocl_tensor **out = NULL;
    int n_out = 0;
    byocl_error err = {0};
    lh_options opt = {.threads = 4};
    assert_int_equal(lh_run(m, in, &opt, &out, &n_out, &err), BYOCL_ERR_RUNTIME);
    assert_string_equal(err.msg, msg);
}

static void test_integer_division_by_zero(void **state)
{
    (void)state;
    mb b;
    mb_begin(&b);
    int64_t d[1] = {300};
    int x = mb_param(&b, BYOCL_INT32, 1, d), y = mb_param(&b, BYOCL_INT32, 1, d);
    mb_finish(&b, mb_call1(&b, "abs", mb_call2(&b, "divide", x, y, NULL), NULL));
    byocl_tensor_fill_random(b.inputs[1], 3, 1, 9); /* no zero: runs */
    ((int32_t *)byocl_tensor_data(b.inputs[1]))[7] = -1;
    ((int32_t *)byocl_tensor_data(b.inputs[0]))[7] = INT32_MIN; /* wraps, as in the reference */
    mb_check(&b, 0, "integer division");
    ((int32_t *)byocl_tensor_data(b.inputs[1]))[299] = 0;
    expect_kernel_failure(b.m, b.inputs, "host kernel fused_divide_abs_0: integer division by zero");
    mb_free(&b);
}

static void test_integer_mean_of_nothing(void **state)
{
    (void)state;
    mb b;
    mb_begin(&b);
    int64_t d[2] = {3, 0};
    int x = mb_param(&b, BYOCL_INT8, 2, d);
    mb_finish(&b, mb_call1(&b, "mean", x, "axis=[1]"));
    expect_kernel_failure(b.m, b.inputs, "host kernel mean_0: integer mean over zero elements");
    mb_free(&b);
}

/* max, min, argmax and argmin over no elements fail as the reference does. */
static void test_max_of_nothing(void **state)
{
    (void)state;
    static const char *const ops[] = {"max", "argmin"};
    for (int k = 0; k < 2; k++) {
        mb b;
        mb_begin(&b);
        int64_t d[2] = {3, 0};
        int x = mb_param(&b, k ? BYOCL_INT32 : BYOCL_FLOAT32, 2, d);
        mb_finish(&b, mb_call1(&b, ops[k], x, "axis=[1]"));
        char msg[160];
        snprintf(msg, sizeof msg,
                 "host kernel %s_0: max, min, argmax or argmin over zero elements has no result",
                 ops[k]);
        expect_kernel_failure(b.m, b.inputs, msg);
        mb_free(&b);
    }
}

/* NaN wins max and min and its position argmax/argmin, exactly as in the reference; rows
 * long enough to vectorize, with NaN first, in the middle, last or absent. */
static void test_reductions_with_nan(void **state)
{
    (void)state;
    static const char *const calls[][2] = {
        {"max", "axis=[1]"}, {"min", "axis=[1], keepdims=True"}, {"argmax", "axis=[1]"},
        {"argmin", "axis=[1], select_last_index=True"}, {"argmax", "axis=[0], exclude=True"},
    };
    for (size_t k = 0; k < sizeof calls / sizeof calls[0]; k++) {
        mb b;
        mb_begin(&b);
        int64_t d[2] = {4, 37};
        int x = mb_param(&b, BYOCL_FLOAT32, 2, d);
        float *v = byocl_tensor_data(b.inputs[0]);
        v[0] = v[37 + 18] = v[2 * 37 + 36] = v[2 * 37 + 5] = NAN;
        mb_finish(&b, mb_call1(&b, calls[k][0], x, calls[k][1]));
        mb_check(&b, 0, calls[k][0]);
        mb_free(&b);
    }
}

/* Pools over rows wide enough for each path of lower_pool.c's row segments: the first
 * and the last segment (the padding's), those between in a loop (plain loads) and a last
 * one partly past the row; with NaNs (a row's first column, mid-row, its last column),
 * a plane of zeros whose -0.0 and 0.0 meet in every window in both orders (the first of
 * equal values stays, as in the reference), float16, and averages over the same rows. */
static void test_pool_wide_rows(void **state)
{
    (void)state;
    static const struct {
        const char *op, *attrs;
        byocl_dtype dtype;
    } calls[] = {
        {"nn.max_pool2d", "pool_size=[3, 3], strides=[2, 2], padding=[1, 1]", BYOCL_FLOAT32},
        {"nn.max_pool2d", "pool_size=[3, 3], strides=[2, 2], ceil_mode=True", BYOCL_FLOAT32},
        {"nn.max_pool2d", "pool_size=[2, 3], padding=[0, 2, 1, 1]", BYOCL_FLOAT32},
        {"nn.max_pool2d", "pool_size=[3, 3], strides=[2, 2], padding=[1, 1]", BYOCL_FLOAT16},
        {"nn.avg_pool2d", "pool_size=[3, 3], strides=[2, 2], padding=[1, 1], count_include_pad=True",
         BYOCL_FLOAT32},
        {"nn.avg_pool2d", "pool_size=[3, 2], strides=[1, 3], padding=[1, 1]", BYOCL_FLOAT32},
    };
    for (size_t k = 0; k < sizeof calls / sizeof calls[0]; k++) {
        mb b;
        mb_begin(&b);
        int64_t d[4] = {1, 3, 6, 101}, plane = 6 * 101;
        int x = mb_param(&b, calls[k].dtype, 4, d);
        byocl_tensor *in = b.inputs[0];
        byocl_tensor_set(in, 0, NAN);
        byocl_tensor_set(in, 2 * 101 + 50, NAN);
        byocl_tensor_set(in, plane - 1, NAN);
        for (int64_t i = 0; i < plane; i++)
            byocl_tensor_set(in, plane + i, (i * 7 + i / 101) % 3 == 0 ? -0.0 : 0.0);
        mb_finish(&b, mb_call1(&b, calls[k].op, x, calls[k].attrs));
        char what[160];
        snprintf(what, sizeof what, "%s(%s)%s", calls[k].op, calls[k].attrs,
                 calls[k].dtype == BYOCL_FLOAT16 ? " float16" : "");
        mb_check(&b, 0, what);
        mb_free(&b);
    }
}

/* Global average pools over planes large enough for lower_pool.c's reordered sums (in
 * one task and several, a NaN in one plane, float16) and small planes and integers, in
 * the reference's order: the reordered means within global_pool_bound of the
 * reference's, the others bit for bit. */
static void test_global_pool_planes(void **state)
{
    (void)state;
    static const struct {
        byocl_dtype dtype;
        int64_t dims[4];
    } calls[] = {
        {BYOCL_FLOAT32, {1, 1003, 13, 13}},
        {BYOCL_FLOAT32, {2, 13, 16, 9}},
        {BYOCL_FLOAT32, {2, 13, 3, 5}},
        {BYOCL_FLOAT16, {1, 19, 12, 11}},
        {BYOCL_INT32, {1, 10, 3, 3}},
    };
    for (size_t k = 0; k < sizeof calls / sizeof calls[0]; k++) {
        mb b;
        mb_begin(&b);
        int x = mb_param(&b, calls[k].dtype, 4, calls[k].dims);
        if (calls[k].dtype != BYOCL_INT32)
            byocl_tensor_set(b.inputs[0], 5 * calls[k].dims[2] * calls[k].dims[3] + 1, NAN);
        mb_finish(&b, mb_call1(&b, "nn.global_avg_pool2d", x, ""));
        char what[96];
        snprintf(what, sizeof what, "global_avg_pool2d over (%lld, %lld, %lld, %lld) %s",
                 (long long)calls[k].dims[0], (long long)calls[k].dims[1],
                 (long long)calls[k].dims[2], (long long)calls[k].dims[3],
                 byocl_dtype_name(calls[k].dtype));
        bool reordered = calls[k].dims[2] * calls[k].dims[3] >= 128;
        mb_check(&b, reordered ? global_pool_bound(calls[k].dtype) : 0, what);
        mb_free(&b);
    }
}

/* float32 batch_matmul in register tiles: rows past a tile of 4, whole blocks of output
 * columns and the columns past them, each operand transposed or not, a batch of 1
 * broadcast, one output column (all tail), against the reference. */
static void test_batch_matmul_tiles(void **state)
{
    (void)state;
    static const struct {
        int64_t batch_a, batch_b, m, k, n;
    } shapes[] = {{3, 3, 7, 19, 37}, {1, 3, 9, 5, 64}, {2, 1, 4, 33, 16}, {3, 3, 5, 8, 1}};
    for (size_t k = 0; k < N_ITEMS(shapes); k++) {
        for (int tr = 0; tr < 4; tr++) {
            bool ta = tr & 1, tb = tr & 2;
            int64_t m = shapes[k].m, kk = shapes[k].k, n = shapes[k].n;
            int64_t ad[3] = {shapes[k].batch_a, ta ? kk : m, ta ? m : kk};
            int64_t bd[3] = {shapes[k].batch_b, tb ? n : kk, tb ? kk : n};
            mb b;
            mb_begin(&b);
            int x = mb_param(&b, BYOCL_FLOAT32, 3, ad), y = mb_param(&b, BYOCL_FLOAT32, 3, bd);
            char attrs[64];
            snprintf(attrs, sizeof attrs, "transpose_a=%s, transpose_b=%s", ta ? "True" : "False",
                     tb ? "True" : "False");
            mb_finish(&b, mb_call2(&b, "nn.batch_matmul", x, y, attrs));
            char what[128];
            snprintf(what, sizeof what, "batch_matmul %lldx%lldx%lld (batches %lld, %lld), %s",
                     (long long)m, (long long)kk, (long long)n, (long long)shapes[k].batch_a,
                     (long long)shapes[k].batch_b, attrs);
            mb_check(&b, 1e-5, what);
            mb_free(&b);
        }
    }
}

/* Distance in float32 ulps between a and b (both not NaN): their places in the ordered
 * sequence of floats, -0.0 and 0.0 one place. */
static int64_t ulps_apart(float a, float b)
{
    int32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    int64_t oa = ia < 0 ? -(int64_t)(ia & 0x7fffffff) - 1 : ia;
    int64_t ob = ib < 0 ? -(int64_t)(ib & 0x7fffffff) - 1 : ib;
    return oa > ob ? oa - ob : ob - oa;
}

/* Runs b's module with vector registers of `width` bits (NULL: the host's), 4 threads;
 * returns the outputs (*n_got of them), failing the test with `what` on an error. */
static byocl_tensor **run_at_width(mb *b, const char *width, int *n_got, const char *what)
{
    if (width)
        setenv("BYOCL_LLVM_VECTOR_BITS", width, 1);
    else
        unsetenv("BYOCL_LLVM_VECTOR_BITS");
    lh_options opt = {.threads = 4, .concurrent = true};
    byocl_tensor **got = NULL;
    byocl_error err = {0};
    if (lh_run(b->m, b->inputs, &opt, &got, n_got, &err) != BYOCL_OK)
        fail_msg("%s: %s", what, err.msg);
    return got;
}

/* float32 exp, sigmoid and erf compute in float (vectorized), not through the
 * reference's double libm calls: against the double results rounded to float, over every
 * 4099th float (all magnitudes, both signs, NaNs) and the edges (overflow, underflow into
 * and out of the denormals, infinities, zeros), at every vector width: exp within 1 ulp,
 * sigmoid within 2, erf within 8, infinities, zeros and NaN where the reference has them. */
static void test_fast_exp_sigmoid_erf(void **state)
{
    (void)state;
    static const char *const ops[3] = {"exp", "sigmoid", "erf"};
    static const int64_t max_ulps[3] = {1, 2, 8};
    static const float edges[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f, -1e-45f,
                                  88.72283172607421875f, 88.72283935546875f, 88.7f, 89.0f,
                                  -87.33654f, -87.5f, -100.0f, -103.2789f, -103.972084f,
                                  -103.97209f, -104.0f, 3.4028235e38f, -3.4028235e38f, 1e-30f,
                                  3.9f, -3.92f, 4.0f, 1e-40f};
    int64_t n_edges = (int64_t)(sizeof edges / sizeof edges[0]), step = 4099;
    int64_t n = n_edges + (int64_t)(UINT32_MAX / step) + 1;
    mb b;
    mb_begin(&b);
    int x = mb_param(&b, BYOCL_FLOAT32, 1, &n);
    float *v = byocl_tensor_data(b.inputs[0]);
    memcpy(v, edges, sizeof edges);
    for (int64_t i = n_edges; i < n; i++) {
        uint32_t bits = (uint32_t)((i - n_edges) * step);
        memcpy(&v[i], &bits, 4);
    }
    int fields[3];
    for (int f = 0; f < 3; f++)
        fields[f] = mb_call1(&b, ops[f], x, NULL);
    mb_finish(&b, byocl_function_add_tuple(b.fn, fields, 3, &b.err));
    static const char *const widths[] = {NULL, "256", "128"};
    for (int k = 0; k < 3; k++) {
        const char *width = widths[k] ? widths[k] : "host";
        int n_got = 0;
        byocl_tensor **got = run_at_width(&b, widths[k], &n_got, "exp, sigmoid and erf");
        assert_int_equal(n_got, 3);
        int64_t worst[3] = {0, 0, 0};
        for (int f = 0; f < 3; f++) {
            const float *have = byocl_tensor_data(got[f]);
            for (int64_t i = 0; i < n; i++) {
                double xd = v[i];
                float want = (float)(f == 0 ? exp(xd) : f == 1 ? 1.0 / (1.0 + exp(-xd)) : erf(xd));
                if (isnan(want) || isnan(have[i]) || isinf(want) || want == 0.0f) {
                    if (!(isnan(want) && isnan(have[i])) && memcmp(&want, &have[i], 4) != 0)
                        fail_msg("%s(%.9g) is %.9g, want %.9g (%s-bit vectors)", ops[f], xd,
                                 have[i], want, width);
                    continue;
                }
                int64_t d = ulps_apart(have[i], want);
                if (d > worst[f])
                    worst[f] = d;
                if (d > max_ulps[f])
                    fail_msg("%s(%.9g) is %.9g, want %.9g: %lld ulp (%s-bit vectors)", ops[f],
                             xd, have[i], want, (long long)d, width);
            }
        }
        print_message("exp, sigmoid, erf (%s-bit vectors): %lld values, worst %lld, %lld, %lld ulp\n",
                      width, (long long)n, (long long)worst[0], (long long)worst[1],
                      (long long)worst[2]);
        byocl_tensors_free(got, n_got);
    }
    unsetenv("BYOCL_LLVM_VECTOR_BITS");
    mb_free(&b);
}

/* float32 softmax in float (lower_pool.c softmax_f32): each element within
 * (4 + |x - top|) * 2^-24 of the exact softmax relative (the exponential's ulp, and the
 * rounding of x - top in float), along the last axis and along axis 1 (slices strided),
 * at each vector width; a slice with a NaN, one of -inf only and one with +inf give NaN
 * everywhere, as the reference's do. */
static void test_fast_softmax(void **state)
{
    (void)state;
    static const struct {
        int rank;
        int64_t dims[4];
        const char *attrs;
    } cases[] = {{3, {2, 3, 197}, "axis=-1"}, {4, {2, 7, 5, 6}, "axis=1"}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        mb b;
        mb_begin(&b);
        int x = mb_param(&b, BYOCL_FLOAT32, cases[k].rank, cases[k].dims);
        float *v = byocl_tensor_data(b.inputs[0]);
        int64_t n = byocl_tensor_numel(b.inputs[0]);
        int64_t axis = k == 0 ? 2 : 1, len = cases[k].dims[axis], inner = k == 0 ? 1 : 30;
        for (int64_t i = 0; i < n; i++)
            v[i] *= 20.0f;
        /* slices 0, 1 and 2 (outer block 0, inner 0..2 or outer 0..2) */
        int64_t first[3];
        for (int j = 0; j < 3; j++)
            first[j] = k == 0 ? j * len : j;
        v[first[0] + 5 * inner] = NAN;
        for (int64_t c = 0; c < len; c++)
            v[first[1] + c * inner] = -INFINITY;
        v[first[2] + 3 * inner] = INFINITY;
        mb_finish(&b, mb_call1(&b, "nn.softmax", x, cases[k].attrs));
        static const char *const widths[] = {NULL, "256", "128"};
        for (int wi = 0; wi < 3; wi++) {
            int n_got = 0;
            byocl_tensor **got = run_at_width(&b, widths[wi], &n_got, "softmax");
            const float *have = byocl_tensor_data(got[0]);
            double worst = 0;
            for (int64_t o = 0; o < n / (len * inner); o++) {
                for (int64_t q = 0; q < inner; q++) {
                    const int64_t at0 = o * len * inner + q;
                    double top = -INFINITY, sum = 0;
                    for (int64_t c = 0; c < len; c++)
                        top = fmax(top, v[at0 + c * inner]);
                    for (int64_t c = 0; c < len; c++)
                        sum += exp(v[at0 + c * inner] - top);
                    for (int64_t c = 0; c < len; c++) {
                        int64_t at = at0 + c * inner;
                        double d = v[at] - top, want = exp(d) / sum;
                        if (isnan(want) || want == 0) {
                            if (isnan(want) != isnan(have[at]) || (!isnan(want) && have[at] != 0))
                                fail_msg("softmax %s element %lld is %.9g, want %.9g",
                                         cases[k].attrs, (long long)at, have[at], want);
                            continue;
                        }
                        double rel = fabs(have[at] - want) / want;
                        worst = rel > worst ? rel : worst;
                        if (rel > (4 + fabs(d)) * 0x1p-24)
                            fail_msg("softmax %s element %lld (x - top %.9g) is %.9g, want "
                                     "%.9g: relative error %.3g (%s-bit vectors)",
                                     cases[k].attrs, (long long)at, d, have[at], want, rel,
                                     widths[wi] ? widths[wi] : "host");
                    }
                }
            }
            print_message("softmax %s (%s-bit vectors): worst relative error %.3g\n",
                          cases[k].attrs, widths[wi] ? widths[wi] : "host", worst);
            byocl_tensors_free(got, n_got);
        }
        unsetenv("BYOCL_LLVM_VECTOR_BITS");
        mb_free(&b);
    }
}

/* topk over lines long enough to split into tasks, with ties (int8 values in [-9, 9]) and
 * NaN, each ret_type, as the reference sorts them. */
static void test_topk_many_lines(void **state)
{
    (void)state;
    static const struct {
        byocl_dtype dtype;
        const char *attrs;
    } calls[] = {
        {BYOCL_FLOAT32, "k=7, axis=1, ret_type=\"values\""},
        {BYOCL_INT8, "k=0, axis=1, ret_type=\"indices\", is_ascend=True"},
        {BYOCL_FLOAT32, "k=5, axis=-1, ret_type=\"indices\", is_ascend=True, dtype=\"int32\""},
    };
    for (size_t k = 0; k < sizeof calls / sizeof calls[0]; k++) {
        mb b;
        mb_begin(&b);
        int64_t d[3] = {64, 37, 9};
        int x = mb_param(&b, calls[k].dtype, 3, d);
        if (calls[k].dtype == BYOCL_FLOAT32) {
            float *v = byocl_tensor_data(b.inputs[0]);
            v[0] = v[9 * 5] = v[9 * 37 + 8] = NAN;
            v[1] = v[10] = v[19] = 0.5f;
        }
        mb_finish(&b, mb_call1(&b, "topk", x, calls[k].attrs));
        mb_check(&b, 0, calls[k].attrs);
        mb_free(&b);
    }
}

/* gather_nd, scatter_nd and scatter_elements fail on an index out of range as the
 * reference does, and run when it is in range (negative counts from the end). */
static void test_index_out_of_range(void **state)
{
    (void)state;
    static const struct {
        const char *op;
        int n_args;
        int64_t idx_dims[2], upd_dims[2];
        const char *msg;
    } calls[] = {
        {"gather_nd", 2, {2, 3}, {0, 0}, "host kernel gather_nd_0: an index is out of range"},
        {"scatter_nd", 3, {1, 3}, {3, 5}, "host kernel scatter_nd_0: an index is out of range"},
        {"scatter_elements", 3, {2, 5}, {2, 5},
         "host kernel scatter_elements_0: an index is out of range"},
    };
    for (size_t k = 0; k < sizeof calls / sizeof calls[0]; k++) {
        mb b;
        mb_begin(&b);
        int64_t d[2] = {4, 5};
        int args[3] = {mb_param(&b, BYOCL_FLOAT32, 2, d),
                       mb_param(&b, BYOCL_INT64, 2, calls[k].idx_dims), 0};
        if (calls[k].n_args == 3)
            args[2] = mb_param(&b, BYOCL_FLOAT32, 2, calls[k].upd_dims);
        mb_finish(&b, mb_call(&b, calls[k].op, args, calls[k].n_args, NULL));
        int64_t *idx = byocl_tensor_data(b.inputs[1]);
        int64_t n = byocl_tensor_numel(b.inputs[1]);
        for (int64_t i = 0; i < n; i++)
            idx[i] = i % 2 ? -4 : 3; /* in range for both axes */
        mb_check(&b, 0, calls[k].op);
        idx[n - 1] = k == 2 ? 5 : -6;
        expect_kernel_failure(b.m, b.inputs, calls[k].msg);
        mb_free(&b);
    }
}

/* ------------------------------------------------------------ coverage */

/* Every op of the registry is exercised by a generated case above (so lowered and
 * checked): a new op without a lowering fails here. */
static void test_every_op_covered(void **state)
{
    (void)state;
    const gen_case *all[] = {elemwise_cases, nn_cases, pool_cases, transform_cases,
                             annotation_cases, conv_cases, index_cases, image_cases};
    const int counts[] = {N_ITEMS(elemwise_cases), N_ITEMS(nn_cases), N_ITEMS(pool_cases),
                          N_ITEMS(transform_cases), N_ITEMS(annotation_cases), N_ITEMS(conv_cases),
                          N_ITEMS(index_cases), N_ITEMS(image_cases)};
    for (int k = 0; k < byocl_op_count(); k++) {
        const char *name = byocl_op_name(byocl_op_at(k));
        bool found = false;
        for (int g = 0; g < N_ITEMS(all) && !found; g++)
            for (int c = 0; c < counts[g] && !found; c++)
                found = strcmp(all[g][c].op, name) == 0;
        if (!found)
            fail_msg("op %s has no case in tests/fixtures/ops run through the LLVM backend", name);
    }
}

int main(void)
{
    int failed = 0;
    failed += run_generated("llvm_elemwise", elemwise_cases, N_ITEMS(elemwise_cases));
    failed += run_generated("llvm_nn", nn_cases, N_ITEMS(nn_cases));
    failed += run_generated("llvm_pool", pool_cases, N_ITEMS(pool_cases));
    failed += run_generated("llvm_transform", transform_cases, N_ITEMS(transform_cases));
    failed += run_generated("llvm_annotation", annotation_cases, N_ITEMS(annotation_cases));
    failed += run_generated("llvm_conv", conv_cases, N_ITEMS(conv_cases));
    failed += run_generated("llvm_index", index_cases, N_ITEMS(index_cases));
    failed += run_generated("llvm_image", image_cases, N_ITEMS(image_cases));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_tails),
        cmocka_unit_test(test_conv_split_units),
        cmocka_unit_test(test_conv_prefetch),
        cmocka_unit_test(test_dense_tails),
        cmocka_unit_test(test_fusion_conv_block),
        cmocka_unit_test(test_fusion_conv_epilogue_operands),
        cmocka_unit_test(test_fusion_conv_dot_product),
        cmocka_unit_test(test_fusion_bn_params),
        cmocka_unit_test(test_fusion_conv_transpose),
        cmocka_unit_test(test_fusion_dense),
        cmocka_unit_test(test_fusion_elemwise),
        cmocka_unit_test(test_fusion_silu),
        cmocka_unit_test(test_fusion_compare_where),
        cmocka_unit_test(test_integer_chains),
        cmocka_unit_test(test_vgg_block_float16),
        cmocka_unit_test(test_tasks_per_thread),
        cmocka_unit_test(test_builtin_models),
        cmocka_unit_test(test_integer_division_by_zero),
        cmocka_unit_test(test_topk_many_lines),
        cmocka_unit_test(test_index_out_of_range),
        cmocka_unit_test(test_integer_mean_of_nothing),
        cmocka_unit_test(test_max_of_nothing),
        cmocka_unit_test(test_reductions_with_nan),
        cmocka_unit_test(test_pool_wide_rows),
        cmocka_unit_test(test_global_pool_planes),
        cmocka_unit_test(test_fast_exp_sigmoid_erf),
        cmocka_unit_test(test_fast_softmax),
        cmocka_unit_test(test_batch_matmul_tiles),
        cmocka_unit_test(test_every_op_covered),
    };
    failed += cmocka_run_group_tests_name("llvm", tests, NULL, NULL);
    return failed;
}
