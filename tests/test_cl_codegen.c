/* The OpenCL code generator (codegen/opencl/): regions written in Relay text become
 * programs that run on the first OpenCL device (PoCL in CI) and agree with the reference
 * kernels; the launch plan and a specialized kernel are checked as exact text; supports
 * explains its refusals; --emit files are written.
 *
 * Until the OpenCL runtime module runs plans, a small runner below does: one context and
 * queue on the first device, the program built from plan->source, buffers for inputs,
 * outputs, scratch and constants, the launches in order, outputs read back. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl.h>

#include "test_support.h"
#include "ops_case.h"
#include "byocl/pipeline.h"
#include "byocl/target.h"
#include "fixtures/ops/conv_cases.h"
#include "fixtures/ops/elemwise_cases.h"
#include "fixtures/ops/image_cases.h"
#include "fixtures/ops/index_cases.h"
#include "fixtures/ops/nn_cases.h"
#include "fixtures/ops/transform_cases.h"
#include "ir/ir_impl.h"
#include "opencl/cl_codegen.h"
#include "opencl/cl_impl.h"
#include "ops/reduce.h"

/* ------------------------------------------------------------ the runner */

static struct {
    cl_context ctx;
    cl_command_queue queue;
    cl_device_id device;
    char cache_dir[512];
    bool keep_cache;
} cl;

static int setup_cl(void **state)
{
    (void)state;
    /* A fresh kernel cache: a warm one would hide build problems (PLATFORM_NOTES.md).
     * BYOCL_TEST_POCL_CACHE names a cache to keep instead: a run under valgrind, where
     * PoCL's compiler would take an hour, reuses what a plain run compiled. */
    const char *keep = getenv("BYOCL_TEST_POCL_CACHE");
    cl.keep_cache = keep && keep[0];
    snprintf(cl.cache_dir, sizeof cl.cache_dir, "%s",
             cl.keep_cache ? keep : ts_tmpdir("cl_codegen_pocl_cache"));
    setenv("POCL_CACHE_DIR", cl.cache_dir, 1);
    cl_platform_id platform;
    cl_uint n = 0;
    if (clGetPlatformIDs(1, &platform, &n) != CL_SUCCESS || n == 0) {
        fprintf(stderr, "no OpenCL platform (install pocl-opencl-icd)\n");
        return -1;
    }
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &cl.device, &n) != CL_SUCCESS || n == 0)
        return -1;
    cl_int e;
    cl.ctx = clCreateContext(NULL, 1, &cl.device, NULL, NULL, &e);
    if (e != CL_SUCCESS)
        return -1;
    cl.queue = clCreateCommandQueue(cl.ctx, cl.device, 0, &e);
    return e == CL_SUCCESS ? 0 : -1;
}

static int teardown_cl(void **state)
{
    (void)state;
    if (cl.queue)
        clReleaseCommandQueue(cl.queue);
    if (cl.ctx)
        clReleaseContext(cl.ctx);
    if (!cl.keep_cache)
        ts_remove_tree(cl.cache_dir);
    return 0;
}

static cl_mem make_buffer(size_t bytes, const void *data)
{
    cl_int e;
    cl_mem m = clCreateBuffer(cl.ctx, data ? CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR
                                           : CL_MEM_READ_WRITE,
                              bytes ? bytes : 1, (void *)data, &e);
    assert_int_equal(e, CL_SUCCESS);
    return m;
}

/* Runs the plan on inputs (in parameter order) into outputs (allocated by the caller). */
static void run_plan(const byocl_cl_plan *plan, byocl_tensor *const *in, byocl_tensor *const *out)
{
    cl_int e;
    const char *src = plan->source;
    cl_program program = clCreateProgramWithSource(cl.ctx, 1, &src, NULL, &e);
    assert_int_equal(e, CL_SUCCESS);
    e = clBuildProgram(program, 1, &cl.device, plan->build_options, NULL, NULL);
    if (e != CL_SUCCESS || getenv("CL_TEST_VERBOSE")) {
        size_t len = 0;
        clGetProgramBuildInfo(program, cl.device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len);
        char *log = malloc(len + 1);
        clGetProgramBuildInfo(program, cl.device, CL_PROGRAM_BUILD_LOG, len, log, NULL);
        log[len] = '\0';
        if (e != CL_SUCCESS)
            fail_msg("build failed (%d):\n%s", e, log);
        if (strstr(log, "warning"))
            fprintf(stderr, "build log:\n%s\n", log);
        free(log);
    }
    cl_mem *inputs = calloc((size_t)plan->n_inputs + 1, sizeof(cl_mem));
    cl_mem *outputs = calloc((size_t)plan->n_outputs + 1, sizeof(cl_mem));
    cl_mem *scratch = calloc((size_t)plan->n_scratch + 1, sizeof(cl_mem));
    cl_mem *consts = calloc((size_t)plan->n_constants + 1, sizeof(cl_mem));
    for (int i = 0; i < plan->n_inputs; i++)
        inputs[i] = make_buffer(byocl_tensor_nbytes(in[i]), byocl_tensor_cdata(in[i]));
    for (int i = 0; i < plan->n_outputs; i++)
        outputs[i] = make_buffer(byocl_tensor_nbytes(out[i]), NULL);
    for (int i = 0; i < plan->n_scratch; i++)
        scratch[i] = make_buffer(plan->scratch_bytes[i], NULL);
    for (int i = 0; i < plan->n_constants; i++)
        consts[i] = make_buffer(byocl_tensor_nbytes(plan->constants[i]),
                                byocl_tensor_cdata(plan->constants[i]));
    cl_mem *slices = calloc((size_t)plan->n_slices + 1, sizeof(cl_mem));
    for (int i = 0; i < plan->n_slices; i++) {
        const byocl_cl_slice *sl = &plan->slices[i];
        assert_true(sl->offset + sl->bytes <= plan->scratch_bytes[sl->scratch]);
        cl_buffer_region region = {.origin = sl->offset, .size = sl->bytes};
        slices[i] = clCreateSubBuffer(scratch[sl->scratch], CL_MEM_READ_WRITE,
                                      CL_BUFFER_CREATE_TYPE_REGION, &region, &e);
        assert_int_equal(e, CL_SUCCESS);
    }
    cl_mem *by_kind[] = {inputs, outputs, scratch, consts, slices};
    for (int l = 0; l < plan->n_launches; l++) {
        const byocl_cl_launch *launch = &plan->launches[l];
        cl_kernel kernel = clCreateKernel(program, launch->kernel, &e);
        assert_int_equal(e, CL_SUCCESS);
        for (int a = 0; a < launch->n_args; a++) {
            const byocl_cl_arg *arg = &launch->args[a];
            if (arg->kind == BYOCL_CL_ARG_BUFFER)
                e = clSetKernelArg(kernel, (cl_uint)a, sizeof(cl_mem),
                                   &by_kind[arg->buffer.kind][arg->buffer.index]);
            else if (arg->kind == BYOCL_CL_ARG_INT)
                e = clSetKernelArg(kernel, (cl_uint)a, sizeof(cl_int), &arg->i);
            else
                e = clSetKernelArg(kernel, (cl_uint)a, sizeof(cl_float), &arg->f);
            assert_int_equal(e, CL_SUCCESS);
        }
        e = clEnqueueNDRangeKernel(cl.queue, kernel, (cl_uint)launch->work_dim, NULL,
                                   launch->global, launch->local[0] ? launch->local : NULL, 0,
                                   NULL, NULL);
        assert_int_equal(e, CL_SUCCESS);
        clReleaseKernel(kernel);
    }
    for (int i = 0; i < plan->n_outputs; i++)
        assert_int_equal(clEnqueueReadBuffer(cl.queue, outputs[i], CL_TRUE, 0,
                                             byocl_tensor_nbytes(out[i]),
                                             byocl_tensor_data(out[i]), 0, NULL, NULL),
                         CL_SUCCESS);
    cl_mem *lists[] = {slices, inputs, outputs, scratch, consts}; /* slices first */
    int counts[] = {plan->n_slices, plan->n_inputs, plan->n_outputs, plan->n_scratch,
                    plan->n_constants};
    for (int k = 0; k < 5; k++) {
        for (int i = 0; i < counts[k]; i++)
            clReleaseMemObject(lists[k][i]);
        free(lists[k]);
    }
    clReleaseProgram(program);
}

/* ------------------------------------------------------------ regions */

static byocl_module *parse(const char *text)
{
    byocl_error err = {0};
    byocl_module *m = NULL;
    if (byocl_text_parse(text, strlen(text), "region.relay", NULL, &m, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    if (byocl_infer_types(m, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return m;
}

/* Parameters of @main whose names start with "c_" become constants (weights, batch_norm
 * statistics) with values from `seed`; variances stay positive. */
static void bind_constants(byocl_module *m, uint64_t seed)
{
    byocl_function *fn = byocl_module_find(m, "main");
    const char *names[32];
    byocl_tensor *values[32];
    int n = 0;
    for (int k = 0; k < byocl_function_num_params(fn) && n < 32; k++) {
        int p = byocl_function_param(fn, k);
        const char *name = byocl_node_name(fn, p);
        if (strncmp(name, "c_", 2) != 0)
            continue;
        const byocl_type *t = byocl_node_type(fn, p);
        values[n] = byocl_tensor_new(t->dtype, &t->shape, NULL);
        bool positive = strstr(name, "var") != NULL;
        byocl_tensor_fill_random(values[n], seed + (uint64_t)k, positive ? 0.5 : -1.0, 1.0);
        names[n++] = name;
    }
    byocl_error err = {0};
    if (n && byocl_bind_params(m, names, values, n, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    for (int i = 0; i < n; i++)
        byocl_tensor_unref(values[i]);
    if (byocl_infer_types(m, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
}

/* Bounds of the relative L2 error against the reference (docs/opencl-codegen.md):
 * float32 computes in float instead of double; float16 results also round where the
 * reference rounds, and a result within a rounding of a half-way point may go the other
 * way. */
#define TOL_F32 1e-5
#define TOL_F16 1e-3

typedef struct run_opts {
    bool no_fusion;
    uint64_t seed;
    double lo, hi;          /* input value range (default [-1, 1)) */
    int expect_launches;    /* when > 0 */
    int vector_width;       /* the device's float vector width (0: the default, 16) */
    int mem_base_align;     /* the device's base address alignment (0: the default, 128) */
    int conv_tiles;         /* byocl_cl_codegen_options.conv_tiles (0: by cost) */
    int depthwise_tiles;    /* byocl_cl_codegen_options.depthwise_tiles (0: by size) */
    bool not_cpu;           /* a device other than a CPU (byocl_cl_codegen_options.cpu) */
    int pool_tiles;         /* byocl_cl_codegen_options.pool_tiles (0: by size) */
    const char *expect_text; /* when set: text the program must contain */
    const char *expect_text_too; /* when set: more text the program must contain */
    const char *reject_text; /* when set: text the program must not contain */
    bool exact;             /* outputs must equal the reference's bit for bit (NaN: any NaN) */
    byocl_tensor *const *inputs; /* when set: the inputs, instead of random ones */
} run_opts;

/* Generates @main of `text` (after binding "c_" parameters), runs it on random inputs and
 * compares every output with the reference executor. Returns the worst error. */
static double check_region_opts(const char *text, const run_opts *o)
{
    byocl_module *m = parse(text);
    bind_constants(m, o->seed + 100);
    byocl_function *fn = byocl_module_find(m, "main");
    byocl_error err = {0};
    byocl_cl_codegen_options opt = {.compute_units = 2, .max_work_group_size = 4096,
                                    .no_fusion = o->no_fusion, .vector_width = o->vector_width,
                                    .mem_base_align = o->mem_base_align,
                                    .conv_tiles = o->conv_tiles,
                                    .depthwise_tiles = o->depthwise_tiles,
                                    .pool_tiles = o->pool_tiles,
                                    .cpu = !o->not_cpu};
    byocl_cl_plan *plan = NULL;
    if (clg_codegen(fn, &opt, &plan, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    if (o->expect_text)
        ts_assert_contains(plan->source, o->expect_text);
    if (o->expect_text_too)
        ts_assert_contains(plan->source, o->expect_text_too);
    if (o->reject_text && strstr(plan->source, o->reject_text))
        fail_msg("the program contains \"%s\":\n%s", o->reject_text, plan->source);
    if (o->expect_launches > 0 && plan->n_launches != o->expect_launches)
        fail_msg("%d launches, expected %d:\n%s", plan->n_launches, o->expect_launches,
                 clg_plan_text(plan, "main"));
    if (getenv("BYOCL_TEST_CL_GENERATE_ONLY")) {
        /* Under valgrind: every generator path, without PoCL's compiler (hours there). */
        char *launches = clg_plan_text(plan, "main");
        assert_non_null(launches);
        free(launches);
        clg_plan_free(plan);
        byocl_module_free(m);
        return 0;
    }
    int n_in = byocl_function_num_params(fn);
    byocl_tensor **in = calloc((size_t)n_in + 1, sizeof *in);
    for (int k = 0; k < n_in; k++) {
        const byocl_type *t = byocl_node_type(fn, byocl_function_param(fn, k));
        if (o->inputs) {
            in[k] = byocl_tensor_ref(o->inputs[k]);
            continue;
        }
        in[k] = byocl_tensor_new(t->dtype, &t->shape, NULL);
        double lo = o->lo != o->hi ? o->lo : -1.0, hi = o->lo != o->hi ? o->hi : 1.0;
        byocl_tensor_fill_random(in[k], o->seed + (uint64_t)k, lo, hi);
    }
    byocl_tensor **want = NULL;
    int n_want = 0;
    if (byocl_reference_run(m, "main", in, n_in, &want, &n_want, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(n_want, plan->n_outputs);
    byocl_tensor **got = calloc((size_t)n_want + 1, sizeof *got);
    for (int i = 0; i < n_want; i++)
        got[i] = byocl_tensor_new(byocl_tensor_dtype(want[i]), byocl_tensor_shape(want[i]), NULL);
    run_plan(plan, in, got);
    double worst = 0;
    for (int i = 0; i < n_want; i++) {
        if (o->exact)
            assert_tensor_values_equal(got[i], want[i], text);
        double e = ts_relative_l2(got[i], want[i]);
        double tol = byocl_tensor_dtype(want[i]) == BYOCL_FLOAT16 ? TOL_F16 : TOL_F32;
        if (!(e <= tol))
            fail_msg("output %d: relative L2 error %g > %g\n%s", i, e, tol, text);
        worst = e > worst ? e : worst;
        if (getenv("CL_TEST_VERBOSE"))
            fprintf(stderr, "  output %d (%s): relative L2 %.3g\n", i, byocl_dtype_name(byocl_tensor_dtype(want[i])), e);
    }
    byocl_tensors_free(got, n_want);
    byocl_tensors_free(want, n_want);
    byocl_tensors_free(in, n_in);
    clg_plan_free(plan);
    byocl_module_free(m);
    return worst;
}

/* Whether fusion changes the program of `text` (binding "c_" parameters first). */
static bool fusion_matters(const char *text)
{
    byocl_module *m = parse(text);
    bind_constants(m, 0);
    byocl_function *fn = byocl_module_find(m, "main");
    byocl_cl_plan *plans[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        byocl_cl_codegen_options opt = {.compute_units = 2, .max_work_group_size = 4096,
                                        .no_fusion = k == 1};
        byocl_error err = {0};
        if (clg_codegen(fn, &opt, &plans[k], &err) != BYOCL_OK)
            fail_msg("%s", err.msg);
    }
    bool differ = strcmp(plans[0]->source, plans[1]->source) != 0;
    clg_plan_free(plans[0]);
    clg_plan_free(plans[1]);
    byocl_module_free(m);
    return differ;
}

/* Fused, and unfused where that is another program. */
static void check_region(const char *text)
{
    run_opts o = {.seed = 7};
    check_region_opts(text, &o);
    o.no_fusion = true;
    if (fusion_matters(text))
        check_region_opts(text, &o);
}

/* `text` with every "float32" replaced by "float16" (malloc'ed). */
static char *float16_text(const char *text)
{
    size_t len = strlen(text);
    char *t16 = malloc(len + 1);
    memcpy(t16, text, len + 1);
    for (char *p = t16; (p = strstr(p, "float32")) != NULL; p += 7)
        memcpy(p, "float16", 7);
    return t16;
}

/* The same text with every "float32" replaced by "float16". */
static void check_region_f16(const char *text)
{
    char *t16 = float16_text(text);
    check_region(t16);
    free(t16);
}

/* The same, depthwise convs in row tiles (conv2d_depthwise.cl) where they would take
 * planes. */
static void check_region_f16_rows(const char *text)
{
    char *t16 = float16_text(text);
    run_opts o = {.seed = 7, .depthwise_tiles = BYOCL_CL_DEPTHWISE_ROWS};
    check_region_opts(t16, &o);
    free(t16);
}

#define MAIN(params) "#[version = \"0.0.5\"]\ndef @main(" params ") {\n"

/* Regions that must each contain a text: case i checked with seed `seed` + i. */
typedef struct text_case {
    const char *text, *expect;
} text_case;

static void check_text_cases(const text_case *cases, size_t n, uint64_t seed, int vector_width,
                             int expect_launches)
{
    for (size_t i = 0; i < n; i++) {
        run_opts o = {.seed = seed + i, .vector_width = vector_width,
                      .expect_launches = expect_launches, .expect_text = cases[i].expect};
        check_region_opts(cases[i].text, &o);
    }
}

/* ------------------------------------------------------------ conv2d */

static void test_conv2d_padded(void **state)
{
    (void)state;
    /* 11 output channels: one full block of 8 and a tail of 3; 9x9 grid positions over
     * 11-wide phase planes. */
    static const char text[] = MAIN("%x: Tensor[(1, 5, 9, 9), float32], "
                                    "%w: Tensor[(11, 5, 3, 3), float32]")
        "  nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=11, kernel_size=[3, 3])\n}\n";
    check_region(text);
    check_region_f16(text);
    /* AVX2's 8 floats get 16 positions (two vectors) x 4 channels here (5 would compute
     * 15 for 11, no better than 4's 12), SSE's 4 floats 4 x 8; a width the schedule does
     * not use gets the default 16 x 8. */
    const struct { int width; const char *vec; } widths[] = {
        {8, "#define VEC float16\n#define VLOAD_X(p) vload16(0, (p))\n#define PT 16\n"
            "#define OCT 4\n"},
        {4, "#define VEC float4\n#define VLOAD_X(p) vload4(0, (p))\n#define PT 4\n"},
        {1, "#define VEC float16\n#define VLOAD_X(p) vload16(0, (p))\n#define PT 16\n"},
    };
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
        run_opts o = {.seed = 7, .vector_width = widths[i].width, .expect_text = widths[i].vec};
        check_region_opts(text, &o);
    }
    /* With AVX2, 16 x 5 where the channels fill blocks of 5 well enough: 13 channels in 3
     * blocks, the last with 3 and 2 past the end; two groups of 24 channels, 5 blocks
     * each, with an epilogue on the edge tiles (9x9 grid positions over 11-wide planes).
     * 16 channels keep 16 x 4 (5 would compute 20). */
    static const text_case by_five[] = {
        {MAIN("%x: Tensor[(1, 5, 9, 9), float32], %w: Tensor[(13, 5, 3, 3), float32]")
         "  nn.conv2d(%x, %w, padding=[1, 1, 1, 1])\n}\n",
         "#define OCT 5\n#define G 1\n#define OB 3\n"},
        {MAIN("%x: Tensor[(1, 6, 9, 9), float32], %w: Tensor[(48, 3, 3, 3), float32]")
         "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=2);\n"
         "  nn.relu(%0)\n}\n",
         "#define OCT 5\n#define G 2\n#define OB 5\n"},
        {MAIN("%x: Tensor[(1, 5, 9, 9), float32], %w: Tensor[(16, 5, 3, 3), float32]")
         "  nn.conv2d(%x, %w, padding=[1, 1, 1, 1])\n}\n",
         "#define OCT 4\n#define G 1\n#define OB 4\n"},
    };
    check_text_cases(by_five, sizeof by_five / sizeof by_five[0], 9, 8, 0);
    /* With AVX-512, 16 x 16 where 16 pads little (48 channels: 3 blocks, and two groups
     * of 48 with an epilogue on the edge tiles), 16 x 12 where 16 would pad more (36
     * channels; two groups of 33: 3 blocks each, the last with 9 channels and 3 past the
     * end), 16 x 8 for at most 32 channels and where 8 pads least (40 channels: 5
     * blocks). */
    static const text_case by_sixteen[] = {
        {MAIN("%x: Tensor[(1, 5, 9, 9), float32], %w: Tensor[(48, 5, 3, 3), float32]")
         "  nn.conv2d(%x, %w, padding=[1, 1, 1, 1])\n}\n",
         "#define OCT 16\n#define G 1\n#define OB 3\n"},
        {MAIN("%x: Tensor[(1, 6, 9, 9), float32], %w: Tensor[(96, 3, 3, 3), float32]")
         "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=2);\n"
         "  nn.relu(%0)\n}\n",
         "#define OCT 16\n#define G 2\n#define OB 3\n"},
        {MAIN("%x: Tensor[(1, 6, 9, 9), float32], %w: Tensor[(66, 3, 3, 3), float32]")
         "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=2);\n"
         "  nn.relu(%0)\n}\n",
         "#define OCT 12\n#define G 2\n#define OB 3\n"},
        {MAIN("%x: Tensor[(1, 5, 9, 9), float32], %w: Tensor[(36, 5, 3, 3), float32]")
         "  nn.conv2d(%x, %w, padding=[1, 1, 1, 1])\n}\n",
         "#define OCT 12\n#define G 1\n#define OB 3\n"},
        {MAIN("%x: Tensor[(1, 5, 9, 9), float32], %w: Tensor[(40, 5, 3, 3), float32]")
         "  nn.conv2d(%x, %w, padding=[1, 1, 1, 1])\n}\n",
         "#define OCT 8\n#define G 1\n#define OB 5\n"},
        {MAIN("%x: Tensor[(1, 5, 9, 9), float32], %w: Tensor[(32, 5, 1, 1), float32]")
         "  nn.conv2d(%x, %w)\n}\n",
         "#define OCT 8\n#define G 1\n#define OB 4\n"},
    };
    check_text_cases(by_sixteen, sizeof by_sixteen / sizeof by_sixteen[0], 21, 16, 0);
}

/* conv2d_channels.cl: output channels along the vector, tiles of whole output rows. */
static void test_conv2d_channels(void **state)
{
    (void)state;
    /* By cost with AVX-512: 7x7 outputs of a padded 3x3 conv (position tiles: 64 grid
     * positions for 49) take 2 x 7 tiles, the last row tile half outside, which span the
     * rows and so read the input in place (one launch, no layout); 48 channels, 3 blocks,
     * a residual add and relu in the epilogue. */
    static const char rows7[] =
        MAIN("%x: Tensor[(1, 6, 7, 7), float32], %c_w: Tensor[(48, 6, 3, 3), float32], "
             "%c_b: Tensor[(48), float32], %r: Tensor[(1, 48, 7, 7), float32]")
        "  %0 = nn.conv2d(%x, %c_w, padding=[1, 1, 1, 1]);\n"
        "  %1 = nn.bias_add(%0, %c_b);\n"
        "  %2 = add(%1, %r);\n"
        "  nn.relu(%2)\n}\n";
    run_opts o = {.seed = 3, .vector_width = 16, .expect_launches = 1,
                  .expect_text = "#define RT 2\n#define CT 7\n#define NCT 1\n",
                  .expect_text_too = "#define IN_PLACE 1\n"};
    check_region_opts(rows7, &o);
    /* 14x14 outputs: 2 x 7 and 1 x 14 cost the same; 1 x 14 spans the rows. */
    run_opts rows14 = {.seed = 5, .vector_width = 16, .expect_launches = 1,
                       .expect_text = "#define RT 1\n#define CT 14\n#define NCT 1\n"};
    check_region_opts(MAIN("%x: Tensor[(1, 3, 14, 14), float32], "
                           "%c_w: Tensor[(32, 3, 3, 3), float32]")
                      "  nn.conv2d(%x, %c_w, padding=[1, 1, 1, 1])\n}\n", &rows14);
    /* The position tiles where their grid is the output: a 1x1 conv over 8x8. */
    run_opts positions = {.seed = 4, .vector_width = 16, .expect_text = "#define PT 16\n",
                          .reject_text = "conv2d_channels"};
    check_region_opts(MAIN("%x: Tensor[(1, 6, 8, 8), float32], %w: Tensor[(48, 6, 1, 1), float32]")
                      "  nn.conv2d(%x, %w)\n}\n", &positions);
    /* Forced onto the edge cases, in place: 20 channels (a block of 16 and 4 of the next),
     * rows and columns that the tile does not divide (9 x 11 in 1 x 14 tiles), float16
     * too; strides, asymmetric padding and dilation (rows and columns outside the input
     * on both sides); two groups of 24 channels over two images; a 1x1 conv. Through the
     * laid-out input: rows of 27 in 4 tiles of 2 x 7, the last one 6 wide. Reading a 1x1
     * conv's input as it is in 3 tiles of 2 x 7 a row (a relu's result: the last tile may
     * read its slack). */
    static const struct {
        const char *text, *expect;
        bool in_place;
        int launches;
    } forced[] = {
        {MAIN("%x: Tensor[(1, 5, 9, 11), float32], %c_w: Tensor[(20, 5, 3, 3), float32], "
              "%c_b: Tensor[(20), float32]")
         "  %0 = nn.conv2d(%x, %c_w, padding=[1, 1, 1, 1]);\n"
         "  %1 = nn.bias_add(%0, %c_b);\n"
         "  nn.relu(%1)\n}\n",
         "#define RT 1\n#define CT 14\n#define NCT 1\n", true, 1},
        {MAIN("%x: Tensor[(1, 3, 15, 13), float32], %c_w: Tensor[(17, 3, 3, 3), float32]")
         "  nn.conv2d(%x, %c_w, strides=[2, 2], padding=[1, 0, 2, 1], dilation=[2, 1])\n}\n",
         "#define OB 2\n", true, 1},
        {MAIN("%x: Tensor[(2, 6, 7, 7), float32], %c_w: Tensor[(48, 3, 3, 3), float32]")
         "  %0 = nn.conv2d(%x, %c_w, padding=[1, 1, 1, 1], groups=2);\n"
         "  nn.relu(%0)\n}\n",
         "#define G 2\n#define OB 2\n", true, 1},
        {MAIN("%x: Tensor[(1, 8, 7, 7), float32], %c_w: Tensor[(16, 8, 1, 1), float32]")
         "  nn.conv2d(%x, %c_w)\n}\n",
         "#define WPH 7\n#define XC_STRIDE 49\n", true, 1},
        {MAIN("%x: Tensor[(1, 4, 4, 27), float32], %c_w: Tensor[(20, 4, 3, 3), float32]")
         "  nn.conv2d(%x, %c_w, padding=[1, 1, 1, 1])\n}\n",
         "#define RT 2\n#define CT 7\n#define NCT 4\n", false, 2}, /* the layout, the conv */
        {MAIN("%x: Tensor[(1, 8, 4, 21), float32], %c_w: Tensor[(16, 8, 1, 1), float32]")
         "  %0 = nn.relu(%x);\n"
         "  nn.conv2d(%0, %c_w)\n}\n",
         "#define RT 2\n#define CT 7\n#define NCT 3\n", false, 2}, /* the relu, the conv */
    };
    for (size_t i = 0; i < sizeof forced / sizeof forced[0]; i++) {
        run_opts f = {.seed = 30 + i, .vector_width = 16,
                      .conv_tiles = BYOCL_CL_CONV_TILES_CHANNELS,
                      .expect_text = forced[i].expect, .expect_launches = forced[i].launches,
                      .expect_text_too = forced[i].in_place ? "#define IN_PLACE 1\n"
                                                            : "conv2d_channels",
                      .reject_text = forced[i].in_place ? NULL : "#define IN_PLACE"};
        check_region_opts(forced[i].text, &f);
        if (i == 0) {
            char *t16 = float16_text(forced[i].text);
            check_region_opts(t16, &f);
            free(t16);
        }
    }
    /* The epilogue across channels (EPILOGUE_VC): 40 channels over two images, forced
     * onto channel tiles, two whole blocks of 16 (a per-channel add as one vector load, a
     * residual as 16 loads 49 apart, a scalar constant, clip; stored 49 apart) and a
     * block of 8 through the scalar epilogue. With erf, which has no vector form, and
     * with a float16 result, every block takes the scalar one. */
    static const char across[] =
        MAIN("%x: Tensor[(2, 6, 7, 7), float32], %c_w: Tensor[(40, 6, 3, 3), float32], "
             "%c_b: Tensor[(40, 1, 1), float32], %r: Tensor[(2, 40, 7, 7), float32], "
             "%c_s: Tensor[(1), float32]")
        "  %0 = nn.conv2d(%x, %c_w, padding=[1, 1, 1, 1]);\n"
        "  %1 = add(%0, %c_b);\n"
        "  %2 = add(%1, %r);\n"
        "  %3 = multiply(%2, %c_s);\n"
        "  clip(%3, a_min=-0.5f, a_max=0.75f)\n}\n";
    run_opts vc = {.seed = 40, .vector_width = 16, .conv_tiles = BYOCL_CL_CONV_TILES_CHANNELS,
                   .expect_launches = 1,
                   .expect_text = "    v = v + vload16(0, e0 + ((fi) / 49 % 40)); \\\n"
                                  "    /* %2 (add) */ \\\n"
                                  "    v = v + BYOCL_GATHER16(LD_e1, (fi), 49); \\\n",
                   .expect_text_too = "#define SCATTER_Y(fi, v) BYOCL_SCATTER16(ST_Y, (fi), 49, v)\n"};
    check_region_opts(across, &vc);
    run_opts scalar = {.seed = 41, .vector_width = 16,
                       .conv_tiles = BYOCL_CL_CONV_TILES_CHANNELS,
                       .expect_text = "conv2d_channels",
                       .reject_text = "#define EPILOGUE_VC"};
    check_region_opts(MAIN("%x: Tensor[(2, 6, 7, 7), float32], %c_w: Tensor[(32, 6, 3, 3), float32], "
                           "%r: Tensor[(2, 32, 7, 7), float32]")
                      "  %0 = nn.conv2d(%x, %c_w, padding=[1, 1, 1, 1]);\n"
                      "  %1 = add(%0, %r);\n"
                      "  erf(%1)\n}\n", &scalar);
    char *across16 = float16_text(across);
    check_region_opts(across16, &scalar);
    free(across16);
    /* Forced the other way, the 7x7 conv above takes the position tiles. */
    run_opts back = {.seed = 3, .vector_width = 16, .conv_tiles = BYOCL_CL_CONV_TILES_POSITIONS,
                     .expect_text = "#define PT 16\n", .reject_text = "conv2d_channels"};
    check_region_opts(rows7, &back);
}

static void test_conv2d_strided(void **state)
{
    (void)state;
    check_region(MAIN("%x: Tensor[(2, 3, 10, 11), float32], %w: Tensor[(4, 3, 3, 3), float32]")
                 "  nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1])\n}\n");
    /* The stem of resnet18, small: 7x7, stride 2, padding 3. */
    static const char stem[] =
        MAIN("%x: Tensor[(1, 3, 20, 20), float32], %c_w: Tensor[(8, 3, 7, 7), float32]")
        "  nn.conv2d(%x, %c_w, strides=[2, 2], padding=[3, 3, 3, 3])\n}\n";
    check_region(stem);
    run_opts narrow = {.seed = 7, .vector_width = 4, .expect_text = "#define PT 4\n"};
    check_region_opts(stem, &narrow);
    /* Its 49 taps loop over the kernel's rows, by position and by channel (rows of the two
     * stride phases; outputs 20 wide, so the channel tiles read the laid-out input); a
     * 5x5 kernel with stride 3 (three phases) too; 3x3 taps and those of a 5x5 kernel
     * dilated by 2 with stride 3 (rows 1 and 2 in phases 2 and 1, the second a row down:
     * not (kh % 3) * a + (kh / 3) * b) stay unrolled. */
    static const char *const row_taps[][2] = {
        {MAIN("%x: Tensor[(1, 3, 40, 40), float32], %c_w: Tensor[(8, 3, 7, 7), float32]")
         "  nn.conv2d(%x, %c_w, strides=[2, 2], padding=[3, 3, 3, 3])\n}\n",
         "#define CONV_TAPS(T) _Pragma(\"unroll 1\") for (int kh = 0; kh < 7; kh++) { "
         "const __global XT *xr = xp + (kh % 2 * "},
        {MAIN("%x: Tensor[(1, 4, 47, 46), float32], %c_w: Tensor[(9, 4, 5, 5), float32]")
         "  nn.conv2d(%x, %c_w, strides=[3, 3], padding=[2, 2, 2, 2])\n}\n",
         "#define CONV_TAPS(T) _Pragma(\"unroll 1\") for (int kh = 0; kh < 5; kh++) { "
         "const __global XT *xr = xp + (kh % 3 * "},
        {MAIN("%x: Tensor[(1, 3, 25, 52), float32], %c_w: Tensor[(6, 3, 5, 5), float32]")
         "  nn.conv2d(%x, %c_w, strides=[3, 3], dilation=[2, 2], padding=[4, 4, 4, 4])\n}\n",
         NULL},
        {MAIN("%x: Tensor[(1, 5, 9, 31), float32], %c_w: Tensor[(13, 5, 3, 3), float32]")
         "  nn.conv2d(%x, %c_w, padding=[1, 1, 1, 1])\n}\n",
         NULL},
    };
    for (size_t i = 0; i < sizeof row_taps / sizeof row_taps[0]; i++) {
        for (int tiles = 0; tiles < 2; tiles++) {
            run_opts o = {.seed = 11, .vector_width = 16,
                          .conv_tiles = tiles ? BYOCL_CL_CONV_TILES_CHANNELS
                                              : BYOCL_CL_CONV_TILES_POSITIONS};
            if (row_taps[i][1]) {
                o.expect_text = row_taps[i][1];
            } else {
                o.expect_text = "#define CONV_TAPS(T) { const __global XT *xr = xp; T(0) T(";
                o.reject_text = "_Pragma(\"unroll 1\") for (int kh";
            }
            check_region_opts(row_taps[i][0], &o);
        }
    }
    /* The laid-out input of a stride-2 conv, rows of 70: each row of a stride phase in
     * tiles of 16 whose taps are the even lanes of two loads. */
    run_opts phases = {.seed = 9, .vector_width = 16, .expect_launches = 2,
                       .expect_text = "#define TAP_IN(at) shuffle2(as_float16(as_uint16(vload16(",
                       .expect_text_too = "k0_conv2d_input(__global const float *restrict x, "
                                          "__global float *restrict y, const int opaque_zero)"};
    static const char wide[] = MAIN("%x: Tensor[(1, 4, 9, 70), float32], "
                                    "%c_w: Tensor[(8, 4, 3, 3), float32]")
        "  nn.conv2d(%x, %c_w, strides=[2, 2], padding=[1, 1, 1, 1])\n}\n";
    check_region_opts(wide, &phases);
    check_region_f16(wide);
    /* Uneven strides and asymmetric padding. */
    check_region(MAIN("%x: Tensor[(1, 2, 9, 13), float32], %w: Tensor[(3, 2, 2, 3), float32]")
                 "  nn.conv2d(%x, %w, strides=[3, 2], padding=[0, 1, 2, 0])\n}\n");
    /* ViT's patch embedding, small: 16x16 patches that do not overlap (stride 16, each of
     * the 256 stride phases a plane of one pixel per patch), bias fused. */
    static const char patch[] = MAIN("%x: Tensor[(2, 3, 32, 48), float32], "
                                     "%c_w: Tensor[(8, 3, 16, 16), float32], "
                                     "%c_b: Tensor[(8), float32]")
        "  %0 = nn.conv2d(%x, %c_w, strides=[16, 16]);\n"
        "  nn.bias_add(%0, %c_b)\n}\n";
    check_region(patch);
    check_region_f16(patch);
    /* A stride of 16 whose 2x3 kernel reads 2 and 3 of the phases, padded. */
    check_region(MAIN("%x: Tensor[(1, 2, 40, 40), float32], %w: Tensor[(3, 2, 2, 3), float32]")
                 "  nn.conv2d(%x, %w, strides=[16, 16], padding=[1, 1, 1, 1])\n}\n");
}

static void test_conv2d_dilated(void **state)
{
    (void)state;
    check_region(MAIN("%x: Tensor[(1, 4, 12, 12), float32], %w: Tensor[(6, 4, 3, 3), float32]")
                 "  nn.conv2d(%x, %w, padding=[2, 2, 2, 2], dilation=[2, 2])\n}\n");
    /* Dilation and stride together: taps use only some stride phases. */
    check_region(MAIN("%x: Tensor[(1, 2, 13, 13), float32], %w: Tensor[(3, 2, 3, 2), float32]")
                 "  nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1], dilation=[2, 3])\n}\n");
}

static void test_conv2d_1x1(void **state)
{
    (void)state;
    /* 4x4 = 16 positions: read in place. */
    check_region(MAIN("%x: Tensor[(2, 16, 4, 4), float32], %c_w: Tensor[(24, 16, 1, 1), float32]")
                 "  nn.conv2d(%x, %c_w)\n}\n");
    /* 7x7: not a multiple of the tile, so a region input is copied with slack; a value
     * computed in the region has slack already and is read in place (two launches). */
    check_region(MAIN("%x: Tensor[(1, 9, 7, 7), float32], %w: Tensor[(10, 9, 1, 1), float32]")
                 "  nn.conv2d(%x, %w)\n}\n");
    static const char computed[] = MAIN("%x: Tensor[(1, 9, 7, 7), float32], "
                                        "%c_w: Tensor[(10, 9, 1, 1), float32]")
        "  %0 = nn.relu(%x);\n  nn.conv2d(%0, %c_w)\n}\n";
    run_opts o = {.seed = 8, .expect_launches = 2};
    check_region_opts(computed, &o);
    check_region_f16(computed);
    /* resnet18's downsample: 1x1 with stride 2 reads one stride phase. */
    check_region(MAIN("%x: Tensor[(1, 8, 14, 14), float32], %w: Tensor[(16, 8, 1, 1), float32]")
                 "  nn.conv2d(%x, %w, strides=[2, 2])\n}\n");
}

/* On a CPU device every conv2d work-item prefetches the cache lines it will read some
 * input channels ahead: one element of each line of its reads' spans, merged. */
static void test_conv2d_prefetch(void **state)
{
    (void)state;
    /* A 1x1 conv read in place on 14x14 (a relu's result), 16 x 16 position tiles: 16
     * multiply-adds a channel, so 8 channels (8 * 196) ahead; a tile's 16 floats. */
    static const char one[] = MAIN("%x: Tensor[(1, 48, 14, 14), float32], "
                                   "%c_w: Tensor[(64, 48, 1, 1), float32]")
        "  %0 = nn.relu(%x);\n  nn.conv2d(%0, %c_w)\n}\n";
    run_opts o = {.seed = 60, .expect_launches = 2, .vector_width = 16,
                  .conv_tiles = BYOCL_CL_CONV_TILES_POSITIONS,
                  .expect_text = "#define PREFETCH_X(p) BYOCL_PREFETCH((p) + 1568); "
                                 "BYOCL_PREFETCH((p) + 1583)\n",
                  .expect_text_too = "#define PT 16\n#define OCT 16\n"};
    check_region_opts(one, &o);
    check_region_f16(one);
    /* A padded 3x3 conv on 10x10 through its laid-out input (planes of 12 x 12): its three
     * rows of taps span offsets 0 to 41, lines from 0, 16 and 32 and the span's end; 144
     * multiply-adds a channel, so one channel ahead. */
    run_opts three = {.seed = 61, .expect_launches = 2, .vector_width = 16,
                      .conv_tiles = BYOCL_CL_CONV_TILES_POSITIONS,
                      .expect_text = "#define PREFETCH_X(p) BYOCL_PREFETCH((p) + 144); "
                                     "BYOCL_PREFETCH((p) + 160); BYOCL_PREFETCH((p) + 176); "
                                     "BYOCL_PREFETCH((p) + 185)\n"};
    check_region_opts(MAIN("%x: Tensor[(1, 5, 10, 10), float32], "
                           "%c_w: Tensor[(48, 5, 3, 3), float32]")
                      "  nn.conv2d(%x, %c_w, padding=[1, 1, 1, 1])\n}\n", &three);
    /* Channel tiles of 2 x 7 reading a 7x7 input in place: input rows -1 to 2 (offsets -7
     * to 20), 9 x 14 multiply-adds a channel, so two channels (98) ahead. */
    run_opts rows = {.seed = 62, .expect_launches = 1, .vector_width = 16,
                     .conv_tiles = BYOCL_CL_CONV_TILES_CHANNELS,
                     .expect_text = "#define PREFETCH_X(p) BYOCL_PREFETCH((p) + 91); "
                                    "BYOCL_PREFETCH((p) + 107); BYOCL_PREFETCH((p) + 118)\n",
                     .expect_text_too = "#define IN_PLACE 1\n"};
    check_region_opts(MAIN("%x: Tensor[(1, 6, 7, 7), float32], "
                           "%c_w: Tensor[(32, 6, 3, 3), float32]")
                      "  nn.conv2d(%x, %c_w, padding=[1, 1, 1, 1])\n}\n", &rows);
    /* None on a device other than a CPU, nor for a 7x7 stem over four stride phases (32
     * lines a channel). */
    run_opts gpu = {.seed = 60, .not_cpu = true, .conv_tiles = BYOCL_CL_CONV_TILES_POSITIONS,
                    .expect_text = "#define PREFETCH_X(p) \n",
                    .reject_text = "BYOCL_PREFETCH((p)"};
    check_region_opts(one, &gpu);
    run_opts stem = {.seed = 63, .expect_text = "#define PREFETCH_X(p) \n",
                     .reject_text = "BYOCL_PREFETCH((p)"};
    check_region_opts(MAIN("%x: Tensor[(1, 3, 20, 20), float32], "
                           "%c_w: Tensor[(32, 3, 7, 7), float32]")
                      "  nn.conv2d(%x, %c_w, strides=[2, 2], padding=[3, 3, 3, 3])\n}\n", &stem);
}

static void test_conv2d_grouped(void **state)
{
    (void)state;
    check_region(MAIN("%x: Tensor[(1, 6, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]")
                 "  nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=2)\n}\n");
    /* Depthwise, and depthwise with a channel multiplier of 2. */
    static const char dw[] = MAIN("%x: Tensor[(1, 8, 9, 9), float32], "
                                  "%c_w: Tensor[(8, 1, 3, 3), float32]")
        "  nn.conv2d(%x, %c_w, strides=[2, 2], padding=[1, 1, 1, 1], groups=8)\n}\n";
    check_region(dw);
    check_region_f16(dw);
    check_region(MAIN("%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 1, 3, 3), float32]")
                 "  nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=4)\n}\n");
    /* Two images of two groups. */
    check_region(MAIN("%x: Tensor[(2, 4, 5, 5), float32], %w: Tensor[(6, 2, 3, 3), float32]")
                 "  nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=2)\n}\n");
}

/* Depthwise convs over wide rows run conv2d_depthwise.cl in one launch, reading input and
 * weight in place: stride 1 (vector loads inside, lane by lane at the edges), stride 2
 * (the even lanes of a double-width load), stride 3 (lane by lane), dilation, uneven
 * padding, 5x5 filters, two images, float16, a fused epilogue; tiles of 8 (this machine's
 * PoCL) and of 16 (the default: float16). Narrow rows (7x7 filters on rows of 5, a 1x1
 * filter on rows of 6) stay with conv2d.cl. */
static void test_conv2d_depthwise(void **state)
{
    (void)state;
    static const char dw[] = MAIN("%x: Tensor[(2, 6, 13, 69), float32], "
                                  "%w: Tensor[(6, 1, 3, 3), float32], %b: Tensor[(6), float32]")
        "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=6);\n"
        "  %1 = nn.bias_add(%0, %b);\n"
        "  clip(%1, a_min=0f, a_max=6f)\n}\n";
    /* 4 output rows a work-item at stride 1 (13 rows: the last block computes 3 rows
     * past the output and drops them), in 9 tiles of 8 (69 columns: more than a
     * work-item walks, so a tile a work-item), 2 at stride 2 (9 rows). */
    run_opts o = {.seed = 11, .expect_launches = 1, .vector_width = 8,
                  .depthwise_tiles = BYOCL_CL_DEPTHWISE_ROWS,
                  .expect_text = "#define TAP_IN(at) vload8(0, x + (at))\n",
                  .expect_text_too = "#define TILES 9\n#define RY 4\n#define ROWS_IN 6\n",
                  .reject_text = "#define TX_FIRST 0\n"};
    check_region_opts(dw, &o);
    check_region_f16_rows(dw);
    static const char s2[] = MAIN("%x: Tensor[(1, 5, 17, 128), float32], "
                                  "%c_w: Tensor[(5, 1, 3, 3), float32]")
        "  nn.conv2d(%x, %c_w, strides=[2, 2], padding=[0, 1, 1, 0], groups=5)\n}\n";
    run_opts o2 = {.seed = 12, .expect_launches = 1, .vector_width = 8,
                   .expect_text = "#define TAP_IN(at) vload16(0, x + (at)).even\n",
                   .expect_text_too = "#define RY 2\n#define ROWS_IN 5\n"};
    check_region_opts(s2, &o2);
    check_region_f16_rows(s2);
    run_opts o3 = {.seed = 13, .expect_launches = 1, .vector_width = 8,
                   .expect_text = "#define TAP_IN(at) ((float8)(LD_x((at) + 0), "
                                  "LD_x((at) + 3), "};
    check_region_opts(MAIN("%x: Tensor[(1, 3, 11, 100), float32], "
                           "%w: Tensor[(3, 1, 5, 5), float32]")
                      "  nn.conv2d(%x, %w, strides=[3, 3], padding=[2, 2, 2, 2], "
                      "dilation=[1, 2], groups=3)\n}\n",
                      &o3);
    /* Rows narrower than an 8-wide load take 4-wide tiles; narrower than 4, conv2d.cl. */
    run_opts narrow = {.seed = 14, .vector_width = 8, .expect_launches = 1,
                       .depthwise_tiles = BYOCL_CL_DEPTHWISE_ROWS,
                       .expect_text = "#define VEC float4\n"};
    static const char five[] = MAIN("%x: Tensor[(2, 4, 9, 5), float32], "
                                    "%w: Tensor[(4, 1, 7, 7), float32]")
        "  nn.conv2d(%x, %w, padding=[3, 3, 3, 3], groups=4)\n}\n";
    check_region_opts(five, &narrow);
    check_region_f16_rows(five);
    narrow.expect_launches = 0;
    narrow.expect_text = "k2_conv2d(";
    check_region_opts(MAIN("%x: Tensor[(2, 4, 9, 3), float32], "
                           "%w: Tensor[(4, 1, 7, 7), float32]")
                      "  nn.conv2d(%x, %w, padding=[3, 3, 3, 3], groups=4)\n}\n",
                      &narrow);
    run_opts one = {.seed = 7, .depthwise_tiles = BYOCL_CL_DEPTHWISE_ROWS};
    check_region_opts(MAIN("%x: Tensor[(1, 3, 6, 6), float32], %w: Tensor[(3, 1, 1, 1), float32]")
                      "  nn.conv2d(%x, %w, groups=3)\n}\n",
                      &one);
    /* Edge tiles read each tap with one load inside the row and a constant shuffle: 14
     * columns (both tiles at an edge; the second covers outputs 6..13, TILE_X0, its first
     * two taps inside, its last one past the row), a dilated 5x5 on 11 columns (one tile
     * of 7 outputs, both edges), and stride 2 (17 outputs: the third tile covers outputs
     * 9..16, its last tap reaching past the row). Where all tiles are edge tiles, the
     * chain of tests of tx ends with TAP_EDGE; where one is inside (the stride-2 row),
     * the last edge tile is not tested and TAP_EDGE is not in the chain. */
    static const char *const edges[] = {
        MAIN("%x: Tensor[(1, 3, 14, 14), float32], %w: Tensor[(3, 1, 3, 3), float32]")
        "  nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=3)\n}\n",
        MAIN("%x: Tensor[(1, 2, 12, 11), float32], %w: Tensor[(2, 1, 5, 5), float32]")
        "  nn.conv2d(%x, %w, padding=[2, 2, 2, 2], dilation=[2, 2], groups=2)\n}\n",
        MAIN("%x: Tensor[(1, 2, 20, 33), float32], %w: Tensor[(2, 1, 3, 3), float32]")
        "  nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1], groups=2)\n}\n",
    };
    const char *const edge_text[] = {
        "(tx) == 1 ? ((kw) == 0 ? shuffle2(vload8(0, x + (row) + 5), (float8)(0.0f), "
        "(uint8)(0, 1, 2, 3, 4, 5, 6, 7)) : (kw) == 1 ? shuffle2(vload8(0, x + (row) + 6), "
        "(float8)(0.0f), (uint8)(0, 1, 2, 3, 4, 5, 6, 7)) : shuffle2(vload8(0, x + (row) + 6), "
        "(float8)(0.0f), (uint8)(1, 2, 3, 4, 5, 6, 7, 8)))",
        "(tx) == 0 ? ((kw) == 0 ? shuffle2(vload8(0, x + (row) + 0), (float8)(0.0f), "
        "(uint8)(8, 8, 0, 1, 2, 3, 4, 5))",
        ": ((kw) == 0 ? shuffle2(vload16(0, x + (row) + 17), (float16)(0.0f), "
        "(uint8)(0, 2, 4, 6, 8, 10, 12, 14))"};
    const char *const chain_end[] = {"TAP_EDGE(row, col))\n", "TAP_EDGE(row, col))\n",
                                     "(uint8)(2, 4, 6, 8, 10, 12, 14, 16))))\n"};
    for (int i = 0; i < 3; i++) {
        run_opts oe = {.seed = 15 + (uint64_t)i, .expect_launches = 1, .vector_width = 8,
                       .depthwise_tiles = BYOCL_CL_DEPTHWISE_ROWS,
                       .expect_text = edge_text[i], .expect_text_too = chain_end[i],
                       /* 14 columns: edge tiles only, so 2 rows a work-item, not 4 */
                       .reject_text = i == 2 ? "TAP_EDGE(row, col))\n"
                                      : i == 0 ? "#define RY 4\n"
                                               : NULL};
        check_region_opts(edges[i], &oe);
        check_region_f16_rows(edges[i]);
    }
    /* Stride 2 with 16-wide vectors: rows of 100 (50 outputs in tiles from 0, 16, 32 and
     * 34, the middle two inside the row) take tiles of 16, each tap the even lanes of two
     * 16-wide loads XORed with the argument opaque_zero (0), which LLVM cannot see
     * through; the first tile's first tap reads column -1, set to 0 by a select. */
    static const char s2_wide[] = MAIN("%x: Tensor[(1, 3, 7, 100), float32], "
                                       "%w: Tensor[(3, 1, 3, 3), float32]")
        "  nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1], groups=3)\n}\n";
    run_opts two = {.seed = 40, .expect_launches = 1, .vector_width = 16,
                    .expect_text = "#define TAP_IN(at) shuffle2(as_float16(as_uint16(vload16("
                                   "0, x + (at))) ^ (uint16)(opaque_zero)), as_float16(as_uint16("
                                   "vload16(0, x + (at) + 16)) ^ (uint16)(opaque_zero)), "
                                   "(uint16)(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, "
                                   "28, 30))\n",
                    .expect_text_too = "(tx) == 0 ? ((kw) == 0 ? select(shuffle2(as_float16("
                                       "as_uint16(vload16(0, x + (row) + 0)) ^ (uint16)("
                                       "opaque_zero)), as_float16(as_uint16(vload16(0, x + "
                                       "(row) + 16)) ^ (uint16)(opaque_zero)), (uint16)(0, 1, "
                                       "3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29)), "
                                       "(float16)(0.0f), (int16)(-1, 0, 0, 0, 0, 0, 0, 0, 0, "
                                       "0, 0, 0, 0, 0, 0, 0))"};
    check_region_opts(s2_wide, &two);
    check_region_f16(s2_wide);
    /* With 16-wide vectors: rows of 56 in 16-wide tiles (two of four inside the row);
     * rows of 28 in 8-wide ones (16-wide, both tiles would be edge tiles; 8-wide, two of
     * four are inside); rows of 14 in 8-wide ones although neither tile is inside
     * (4-wide tiles were slower); rows of 7 in 4-wide ones (the only width that
     * shuffles); stride 2 over rows of 56 in 16-wide edge tiles. */
    static const text_case widths16[] = {
        {MAIN("%x: Tensor[(1, 3, 5, 56), float32], %w: Tensor[(3, 1, 3, 3), float32]")
         "  nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=3)\n}\n",
         "#define VEC float16\n"},
        {MAIN("%x: Tensor[(1, 3, 5, 28), float32], %w: Tensor[(3, 1, 3, 3), float32]")
         "  nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=3)\n}\n",
         "#define VEC float8\n"},
        {MAIN("%x: Tensor[(1, 3, 5, 14), float32], %w: Tensor[(3, 1, 3, 3), float32]")
         "  nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=3)\n}\n",
         "#define VEC float8\n"},
        {MAIN("%x: Tensor[(1, 3, 5, 7), float32], %w: Tensor[(3, 1, 3, 3), float32]")
         "  nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=3)\n}\n",
         "#define VEC float4\n"},
        /* stride 2, 56 -> 28: two 16-wide edge tiles a row, whose taps are two loads */
        {MAIN("%x: Tensor[(1, 3, 5, 56), float32], %w: Tensor[(3, 1, 3, 3), float32]")
         "  nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1], groups=3)\n}\n",
         "#define VEC float16\n"},
    };
    for (size_t i = 0; i < sizeof widths16 / sizeof widths16[0]; i++) {
        run_opts ow = {.seed = 31 + i, .vector_width = 16, .expect_launches = 1,
                       .expect_text = widths16[i].expect,
                       .depthwise_tiles = BYOCL_CL_DEPTHWISE_ROWS}; /* planes by choice */
        check_region_opts(widths16[i].text, &ow);
    }
}

/* Depthwise convs of stride 1 over small planes whose output rows are as long as the
 * input rows run conv2d_depthwise_plane.cl: a plane per work-item in vectors of the
 * flattened plane, each tap one load at its offset with the padding's lanes masked off;
 * the first and the last plane of the tensor, or a looped vector whose loads would leave
 * it, output by output. */
static void test_conv2d_depthwise_plane(void **state)
{
    (void)state;
    /* 7x7 maps: 4 vectors of 16 (the last from output 33, overlapping the third); the
     * first vector's first tap reads from 8 before its plane, the row above (lanes 0-7)
     * and the left neighbour of column 0 (lane 14) masked off; its middle tap reads the
     * plane as it is. */
    static const char small[] = MAIN("%x: Tensor[(1, 24, 7, 7), float32], "
                                     "%w: Tensor[(24, 1, 3, 3), float32], "
                                     "%b: Tensor[(24), float32]")
        "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=24);\n"
        "  %1 = nn.bias_add(%0, %b);\n"
        "  clip(%1, a_min=0f, a_max=6f)\n}\n";
    run_opts o = {.seed = 41, .expect_launches = 1,
                  .expect_text = "TAPS_0(TAP, TAP_MASKED)  \\\n"
                                 "    TAP_MASKED(0, VLOAD_X(x + plane - 8), (int16)(0, 0, 0, "
                                 "0, 0, 0, 0, 0, -1, -1, -1, -1, -1, -1, 0, -1)) \\\n",
                  .expect_text_too = "    TAP(4, VLOAD_X(x + plane + 0)) \\\n"};
    check_region_opts(small, &o);
    run_opts last = {.seed = 42, .expect_launches = 1,
                     .expect_text = "#define PLANE_VECTORS(VECTOR) VECTOR(0, 0) VECTOR(1, 16) "
                                    "VECTOR(2, 32) VECTOR(3, 33)\n"};
    check_region_opts(small, &last);
    check_region_f16(small); /* half loads; the scalar epilogue */
    /* Two images; 5x5 filters; asymmetric padding; output rows dropped (no vertical
     * padding); dilation; a residual add (a vector operand along the flattened plane);
     * 8-wide vectors; a single plane (the rolled loop only). */
    static const text_case cases[] = {
        {MAIN("%x: Tensor[(2, 3, 6, 9), float32], %w: Tensor[(3, 1, 5, 5), float32]")
         "  nn.conv2d(%x, %w, padding=[2, 2, 2, 2], groups=3)\n}\n",
         "TAPS_0(TAP, TAP_MASKED)  \\\n" /* its first 5 taps read only the padding */
         "    TAP_MASKED(5, VLOAD_X(x + plane - 11), "},
        {MAIN("%x: Tensor[(1, 5, 8, 10), float32], %w: Tensor[(5, 1, 3, 3), float32]")
         "  nn.conv2d(%x, %w, padding=[0, 2, 2, 0], groups=5)\n}\n",
         "TAP_MASKED(0, VLOAD_X(x + plane - 2), "},
        {MAIN("%x: Tensor[(1, 6, 9, 12), float32], %w: Tensor[(6, 1, 3, 3), float32]")
         "  nn.conv2d(%x, %w, padding=[0, 1, 0, 1], groups=6)\n}\n",
         "VECTOR(5, 68)\n"},
        {MAIN("%x: Tensor[(1, 4, 8, 8), float32], %w: Tensor[(4, 1, 3, 3), float32]")
         "  nn.conv2d(%x, %w, padding=[2, 2, 2, 2], dilation=[2, 2], groups=4)\n}\n",
         "TAPS_1(TAP, TAP_MASKED)  \\\n"
         "    TAP_MASKED(0, VLOAD_X(x + plane - 2), (int16)(0, 0, -1, -1, -1, -1, -1, -1, 0, "
         "0, -1, -1, -1, -1, -1, -1)) \\\n"},
        {MAIN("%x: Tensor[(1, 16, 5, 5), float32], %w: Tensor[(16, 1, 3, 3), float32]")
         "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=16);\n"
         "  add(%0, %x)\n}\n",
         "#define VSTORE_Y(fi, v) "},
        {MAIN("%x: Tensor[(1, 1, 7, 7), float32], %w: Tensor[(1, 1, 3, 3), float32]")
         "  nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=1)\n}\n",
         "k0_conv2d_depthwise_plane("},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_opts oc = {.seed = 43 + i, .expect_launches = 1, .expect_text = cases[i].expect,
                       .expect_text_too = "k0_conv2d_depthwise_plane("};
        check_region_opts(cases[i].text, &oc);
        check_region_f16(cases[i].text);
    }
    run_opts eight = {.seed = 50, .expect_launches = 1, .vector_width = 8,
                      .expect_text = "    TAP(4, VLOAD_X(x + plane + 0)) \\\n"};
    check_region_opts(MAIN("%x: Tensor[(1, 10, 9, 9), float32], %w: Tensor[(10, 1, 3, 3), float32]")
                      "  nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=10)\n}\n",
                      &eight);
    /* Planes of more vectors times taps than are listed (13 x 25 here) loop over their
     * vectors: the masks computed, a vector whose loads would leave the tensor (the
     * first and the last plane's first and last vectors) output by output. Two images,
     * asymmetric padding, dilation, a residual add, 8-wide vectors, float16. */
    static const char wide[] = MAIN("%x: Tensor[(1, 6, 14, 14), float32], "
                                    "%w: Tensor[(6, 1, 5, 5), float32]")
        "  nn.conv2d(%x, %w, padding=[2, 2, 2, 2], groups=6)\n}\n";
    run_opts rolled = {.seed = 51, .expect_launches = 1, .expect_text = "#define NV 13\n",
                       .expect_text_too = "k0_conv2d_depthwise_plane(",
                       .reject_text = "#define PLANE_VECTORS"};
    check_region_opts(wide, &rolled);
    check_region_f16(wide);
    static const text_case loops[] = {
        {MAIN("%x: Tensor[(2, 3, 20, 23), float32], %w: Tensor[(3, 1, 3, 3), float32]")
         "  nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=3)\n}\n",
         "#define NV 29\n"},
        {MAIN("%x: Tensor[(1, 5, 17, 30), float32], %w: Tensor[(5, 1, 3, 3), float32]")
         "  nn.conv2d(%x, %w, padding=[0, 2, 2, 0], groups=5)\n}\n",
         "#define MIN_OFF -2\n#define MAX_OFF 60\n"},
        {MAIN("%x: Tensor[(1, 4, 18, 18), float32], %w: Tensor[(4, 1, 3, 3), float32]")
         "  nn.conv2d(%x, %w, padding=[2, 2, 2, 2], dilation=[2, 2], groups=4)\n}\n",
         "#define MIN_OFF -38\n"},
        {MAIN("%x: Tensor[(1, 16, 16, 16), float32], %w: Tensor[(16, 1, 3, 3), float32]")
         "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=16);\n"
         "  add(%0, %x)\n}\n",
         "#define VSTORE_Y(fi, v) "},
        /* Rows of three and four vectors: those whose taps all stay inside their row (the
         * middle ones) load without masks. */
        {MAIN("%x: Tensor[(2, 3, 12, 48), float32], %w: Tensor[(3, 1, 3, 3), float32]")
         "  nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=3)\n}\n",
         "#define NV 36\n"},
        {MAIN("%x: Tensor[(1, 2, 10, 64), float32], %w: Tensor[(2, 1, 5, 5), float32]")
         "  nn.conv2d(%x, %w, padding=[4, 4, 4, 4], dilation=[2, 2], groups=2)\n}\n",
         "#define NV 40\n"},
    };
    for (size_t i = 0; i < sizeof loops / sizeof loops[0]; i++) {
        run_opts ol = {.seed = 60 + i, .expect_launches = 1, .expect_text = loops[i].expect,
                       .expect_text_too = "k0_conv2d_depthwise_plane(",
                       .reject_text = "#define PLANE_VECTORS"};
        check_region_opts(loops[i].text, &ol);
        check_region_f16(loops[i].text);
    }
    run_opts eight_rolled = {.seed = 65, .expect_launches = 1, .vector_width = 8,
                             .expect_text = "#define VLOAD_X(p) vload8(0, (p))\n",
                             .reject_text = "#define PLANE_VECTORS"};
    check_region_opts(loops[0].text, &eight_rolled);
    /* Row tiles when asked for; never planes for stride 2 or output rows shorter than
     * the input's. */
    run_opts rows = {.seed = 53, .expect_launches = 1, .expect_text = "k0_conv2d_depthwise(",
                     .reject_text = "_plane(", .depthwise_tiles = BYOCL_CL_DEPTHWISE_ROWS};
    check_region_opts(small, &rows);
    static const char *const not_planes[] = {
        MAIN("%x: Tensor[(1, 6, 14, 14), float32], %w: Tensor[(6, 1, 3, 3), float32]")
        "  nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1], groups=6)\n}\n",
        MAIN("%x: Tensor[(1, 6, 12, 12), float32], %w: Tensor[(6, 1, 3, 3), float32]")
        "  nn.conv2d(%x, %w, groups=6)\n}\n",
    };
    for (int i = 0; i < 2; i++) {
        run_opts on = {.seed = 54 + (uint64_t)i, .reject_text = "_plane("};
        check_region_opts(not_planes[i], &on);
    }
}

/* Vector epilogues (EPILOGUE_V): a tile of 8 outputs inside one row, or inside one plane
 * for a 1x1 conv read in place, runs the steps on vectors, each operand one vector load
 * (contiguous along the tile) or one element broadcast (constant along it); the tile at
 * the end of a row or plane takes the scalar epilogue. */
static void test_vector_epilogue(void **state)
{
    (void)state;
    /* A 1x1 conv read in place: 60 positions, tiles of 16 across rows; the last tile
     * (48..63) is scalar. The residual is contiguous across rows; bias, batch_norm per channel. */
    static const char pointwise[] =
        MAIN("%x: Tensor[(1, 6, 5, 12), float32], %c_w: Tensor[(10, 6, 1, 1), float32], "
             "%b: Tensor[(10), float32], %c_gamma: Tensor[(10), float32], "
             "%c_beta: Tensor[(10), float32], %c_mean: Tensor[(10), float32], "
             "%c_var: Tensor[(10), float32], %r: Tensor[(1, 10, 5, 12), float32], "
             "%c_half: Tensor[(1), float32]")
        "  %0 = nn.relu(%x);\n"
        "  %1 = nn.conv2d(%0, %c_w);\n"
        "  %2 = nn.bias_add(%1, %b);\n"
        "  %3 = nn.batch_norm(%2, %c_gamma, %c_beta, %c_mean, %c_var);\n"
        "  %4 = add(%3.0, %r);\n"
        "  %5 = sigmoid(%4);\n"
        "  %6 = subtract(%5, %c_half);\n"
        "  nn.leaky_relu(%6, alpha=0.1f)\n}\n";
    run_opts o = {.seed = 21, .vector_width = 8, .expect_launches = 2,
                  .expect_text = "    v = v + vload16(0, e3 + ((fi)));"};
    check_region_opts(pointwise, &o);
    o.expect_text = "    v = BYOCL_SIGMOID_V(v);";
    check_region_opts(pointwise, &o);
    check_region_f16(pointwise);
    /* A padded 3x3 conv (grid rows 21 wide, 19 outputs): tiles inside a row are vectors;
     * an operand varying along the rows only is constant along a tile. */
    static const char padded[] =
        MAIN("%x: Tensor[(1, 4, 6, 19), float32], %c_w: Tensor[(5, 4, 3, 3), float32], "
             "%r: Tensor[(1, 5, 6, 19), float32], %h: Tensor[(6, 1), float32]")
        "  %0 = nn.conv2d(%x, %c_w, padding=[1, 1, 1, 1]);\n"
        "  %1 = add(%0, %r);\n"
        "  %2 = multiply(%h, %1);\n"
        "  maximum(%2, 0.25f)\n}\n";
    run_opts op = {.seed = 22, .vector_width = 8,
                   .expect_text = "    v = ((VEC)(LD_e1((fi) / 19 % 6))) * v;"};
    check_region_opts(padded, &op);
    /* Across rows, an operand varying along them is neither: no vector form (nor with a
     * step that has none, erf). */
    static const char across[] =
        MAIN("%x: Tensor[(1, 6, 5, 12), float32], %c_w: Tensor[(4, 6, 1, 1), float32], "
             "%h: Tensor[(5, 1), float32]")
        "  %0 = erf(%x);\n"
        "  %1 = nn.conv2d(%0, %c_w);\n"
        "  add(%1, %h)\n}\n";
    run_opts oa = {.seed = 23, .vector_width = 8, .reject_text = "#define EPILOGUE_V"};
    check_region_opts(across, &oa);
    check_region_opts(MAIN("%x: Tensor[(1, 2, 3, 30), float32], %w: Tensor[(3, 2, 1, 1), float32]")
                      "  %0 = nn.conv2d(%x, %w);\n  erf(%0)\n}\n",
                      &oa);
    /* A chain no producer absorbs takes tiles of 16, 8 or 4 elements in one plane of the
     * last two axes: a per-channel operand is one broadcast, one along the plane one
     * vector load. Planes of 35 and 49 (2 images of 4 channels, a residual along the
     * plane) are a work-item each, in tiles of 16 whose last ends at the plane's end; a
     * plane of 10 takes one element a work-item. */
    static const text_case chains[] = {
        {MAIN("%x: Tensor[(2, 3, 4, 8), float32], %s: Tensor[(3, 1, 1), float32], "
              "%h: Tensor[(4, 8), float32]")
         "  %0 = multiply(%x, %s);\n  %1 = add(%0, %h);\n  nn.relu(%1)\n}\n",
         "#define LD_FIRST_V(fi) vload16(0, e0 + ((fi)))\n"},
        {MAIN("%x: Tensor[(1, 3, 3, 4), float32], %s: Tensor[(3, 1, 1), float32]")
         "  %0 = multiply(%x, %s);\n  nn.relu(%0)\n}\n",
         "#define PT 4\n"},
        {MAIN("%x: Tensor[(24), float32], %s: Tensor[(24), float32]")
         "  %0 = add(%x, %s);\n  sigmoid(%0)\n}\n",
         "#define PT 8\n"},
        {MAIN("%x: Tensor[(1, 3, 5, 7), float32], %s: Tensor[(3, 1, 1), float32]")
         "  %0 = multiply(%x, %s);\n  nn.relu(%0)\n}\n",
         "#define PLANE 35\n#define NV 3\n"},
        {MAIN("%x: Tensor[(2, 4, 7, 7), float32], %s: Tensor[(4, 1, 1), float32], "
              "%r: Tensor[(2, 4, 7, 7), float32]")
         "  %0 = multiply(%x, %s);\n  %1 = add(%0, %r);\n  nn.relu(%1)\n}\n",
         "#define PLANE 49\n#define NV 4\n"},
    };
    check_text_cases(chains, sizeof chains / sizeof chains[0], 24, 0, 1);
    run_opts os = {.seed = 27, .expect_launches = 1, .reject_text = "#define LD_FIRST_V"};
    check_region_opts(MAIN("%x: Tensor[(1, 3, 2, 5), float32], %s: Tensor[(3, 1, 1), float32]")
                      "  %0 = multiply(%x, %s);\n  nn.relu(%0)\n}\n",
                      &os);
    /* Max pooling in row tiles, NaN included: maximum and minimum keep NaN in both forms,
     * bit for bit the reference's. 61 columns: 8 tiles, the last one scalar. */
    static const char pool[] =
        MAIN("%x: Tensor[(1, 3, 5, 61), float32], %y: Tensor[(1, 3, 5, 61), float32], "
             "%z: Tensor[(3, 1, 1), float32], %s: Tensor[(61), float32]")
        "  %0 = nn.max_pool2d(%x, pool_size=[3, 3], padding=[1, 1, 1, 1]);\n"
        "  %1 = maximum(%0, %y);\n"
        "  %2 = minimum(%1, %z);\n"
        "  %3 = multiply(%2, %s);\n"
        "  clip(%3, a_min=-0.5f, a_max=0.5f)\n}\n";
    byocl_shape sx = byocl_shape_make(4, (int64_t[]){1, 3, 5, 61});
    byocl_shape sz = byocl_shape_make(3, (int64_t[]){3, 1, 1});
    byocl_shape ss = byocl_shape_make(1, (int64_t[]){61});
    byocl_tensor *in[4] = {byocl_tensor_new(BYOCL_FLOAT32, &sx, NULL),
                           byocl_tensor_new(BYOCL_FLOAT32, &sx, NULL),
                           byocl_tensor_new(BYOCL_FLOAT32, &sz, NULL),
                           byocl_tensor_new(BYOCL_FLOAT32, &ss, NULL)};
    for (int k = 0; k < 4; k++)
        byocl_tensor_fill_random(in[k], 30 + (uint64_t)k, -1.0, 1.0);
    float *x = byocl_tensor_data(in[0]), *y = byocl_tensor_data(in[1]);
    for (int i = 5; i < 3 * 5 * 61; i += 37)
        x[i] = NAN;
    for (int i = 11; i < 3 * 5 * 61; i += 29)
        y[i] = NAN;
    ((float *)byocl_tensor_data(in[2]))[1] = NAN;
    run_opts ox = {.exact = true, .inputs = in, .vector_width = 8,
                   .expect_text = "    v = BYOCL_MIN_V(v, ((VEC)(LD_e1((fi) / 305))));"};
    check_region_opts(pool, &ox);
    op_tensors_free(in, 4);
    /* dense: 16 units a tile along the row; 37 units, the third tile scalar. The bias
     * is contiguous along the tile, a per-row operand constant along it. */
    static const char dense[] =
        MAIN("%x: Tensor[(5, 20), float32], %c_w: Tensor[(37, 20), float32], "
             "%b: Tensor[(37), float32], %r: Tensor[(5, 1), float32]")
        "  %0 = nn.dense(%x, %c_w);\n"
        "  %1 = nn.bias_add(%0, %b, axis=-1);\n"
        "  %2 = divide(%1, %r);\n"
        "  tanh(%2)\n}\n";
    run_opts od = {.seed = 24, .lo = 0.5, .hi = 1.5,
                   .expect_text = "    v = v / ((VEC)(LD_e1((fi) / 37)));"};
    check_region_opts(dense, &od);
    od.expect_text = "    v = v + vload16(0, e0 + ((fi) % 37));";
    check_region_opts(dense, &od);
}

/* A dense of at most 4 rows over a float32 weight with rows of 256 or more reads the weight
 * as it is (dense_gemv.cl): one row of 300 (a tail of 12 past the vectors of 16) to 37
 * units (the last work-item's 4 units past them) with a bias and relu, a constant weight;
 * three rows of 256 over a weight that is a parameter; against the reference. Five rows,
 * rows of 255 and a float16 weight take the packed weight (dense.cl). */
static void test_dense_gemv(void **state)
{
    (void)state;
    static const char *const gemv = "const float16 wv = vload16(0, w + rows[t] + k);";
    static const char one_row[] =
        MAIN("%x: Tensor[(1, 300), float32], %c_w: Tensor[(37, 300), float32], "
             "%c_b: Tensor[(37), float32]")
        "  %0 = nn.dense(%x, %c_w);\n"
        "  %1 = nn.bias_add(%0, %c_b, axis=-1);\n"
        "  nn.relu(%1)\n}\n";
    run_opts o = {.seed = 41, .expect_text = gemv, .expect_launches = 1};
    check_region_opts(one_row, &o);
    static const char three_rows[] =
        MAIN("%x: Tensor[(3, 256), float32], %w: Tensor[(10, 256), float32]")
        "  nn.dense(%x, %w)\n}\n";
    o.seed = 42;
    check_region_opts(three_rows, &o);
    static const char *const packed[] = {
        MAIN("%x: Tensor[(5, 300), float32], %c_w: Tensor[(37, 300), float32]")
        "  nn.dense(%x, %c_w)\n}\n",
        MAIN("%x: Tensor[(1, 255), float32], %c_w: Tensor[(37, 255), float32]")
        "  nn.dense(%x, %c_w)\n}\n",
        MAIN("%x: Tensor[(1, 300), float16], %c_w: Tensor[(37, 300), float16]")
        "  nn.dense(%x, %c_w)\n}\n"};
    for (int i = 0; i < 3; i++) {
        run_opts p = {.seed = 43 + (uint64_t)i, .reject_text = gemv};
        check_region_opts(packed[i], &p);
    }
}

/* out_dtype: float16 data and weights, a float32 result (no rounding in between). */
static void test_out_dtype(void **state)
{
    (void)state;
    check_region(MAIN("%x: Tensor[(1, 3, 6, 6), float16], %w: Tensor[(5, 3, 3, 3), float16]")
                 "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], out_dtype=\"float32\");\n"
                 "  nn.relu(%0)\n}\n");
    check_region(MAIN("%x: Tensor[(3, 20), float16], %c_w: Tensor[(7, 20), float16]")
                 "  nn.dense(%x, %c_w, out_dtype=\"float32\")\n}\n");
}

/* conv2d + batch_norm + relu + residual add + relu: one kernel after the input layout. */
static void test_conv2d_fused(void **state)
{
    (void)state;
    static const char text[] =
        MAIN("%x: Tensor[(1, 8, 6, 6), float32], %c_w: Tensor[(8, 8, 3, 3), float32], "
             "%c_gamma: Tensor[(8), float32], %c_beta: Tensor[(8), float32], "
             "%c_mean: Tensor[(8), float32], %c_var: Tensor[(8), float32]")
        "  %0 = nn.conv2d(%x, %c_w, padding=[1, 1, 1, 1]);\n"
        "  %1 = nn.batch_norm(%0, %c_gamma, %c_beta, %c_mean, %c_var);\n"
        "  %2 = add(%1.0, %x);\n"
        "  nn.relu(%2)\n}\n";
    /* The residual differs along the plane: tiles that cross rows take the scalar
     * epilogue (no EPILOGUE_V_PLANE). */
    run_opts o = {.seed = 3, .expect_launches = 2, .expect_text = "#define EPILOGUE_V(v, fi)",
                  .reject_text = "#define EPILOGUE_V_PLANE"};
    check_region_opts(text, &o);
    o.expect_text = NULL;
    o.reject_text = NULL;
    o.no_fusion = true;
    o.expect_launches = 5;
    check_region_opts(text, &o);
    check_region_f16(text);
}

/* A conv's prologue (cl_graph.c's attach_prologues): densenet's batch_norm + relu before a
 * 1x1 conv run as the conv reads its input, without a launch of their own. */
static void test_conv2d_prologue(void **state)
{
    (void)state;
    /* The input as it is (a conv's result, with slack after it): the prologue in conv2d.cl,
     * on each vector of x. Two images, two groups, batch_norm with constant statistics
     * (one fma) and relu; the first conv's result is read twice (by the batch_norm and the
     * concatenation), so the batch_norm is not its epilogue. Five launches: the first
     * conv's layout, the first conv, the second, the concatenation's two copies. */
    static const char dense[] =
        MAIN("%x: Tensor[(2, 6, 8, 8), float32], %c_w0: Tensor[(16, 6, 3, 3), float32], "
             "%c_gamma: Tensor[(16), float32], %c_beta: Tensor[(16), float32], "
             "%c_mean: Tensor[(16), float32], %c_var: Tensor[(16), float32], "
             "%c_w1: Tensor[(12, 8, 1, 1), float32]")
        "  %0 = nn.conv2d(%x, %c_w0, padding=[1, 1, 1, 1]);\n"
        "  %1 = nn.batch_norm(%0, %c_gamma, %c_beta, %c_mean, %c_var);\n"
        "  %2 = nn.relu(%1.0);\n"
        "  %3 = nn.conv2d(%2, %c_w1, groups=2);\n"
        "  concatenate((%0, %3), axis=1)\n}\n";
    run_opts direct = {.seed = 50, .vector_width = 16, .expect_launches = 5,
                       .conv_tiles = BYOCL_CL_CONV_TILES_POSITIONS,
                       .expect_text = "#define PROLOGUE_V(v, fi) do { \\\n"
                                      "    /* %1 (nn.batch_norm) */ \\\n"
                                      "    v = fma(v, ((VEC)(LD_e0((fi) % 16))), "
                                      "((VEC)(LD_e1((fi) % 16)))); \\\n",
                       .expect_text_too = "nn.batch_norm+nn.relu+nn.conv2d (%1 to %4)"};
    check_region_opts(dense, &direct);
    /* Channel tiles (both convs in place, no layout) take no prologue: the batch_norm and
     * relu are a launch of their own, between the convs. */
    run_opts channels = {.seed = 51, .vector_width = 16, .expect_launches = 5,
                         .conv_tiles = BYOCL_CL_CONV_TILES_CHANNELS,
                         .expect_text = "nn.batch_norm+nn.relu (%1 to %3)",
                         .expect_text_too = "#define IN_PLACE 1\n",
                         .reject_text = "#define PROLOGUE"};
    check_region_opts(dense, &channels);
    /* Without fusion, and with float16 (no prologue: float32 only), it is computed apart. */
    run_opts apart = {.seed = 52, .no_fusion = true, .reject_text = "#define PROLOGUE"};
    check_region_opts(dense, &apart);
    char *dense16 = float16_text(dense);
    run_opts apart16 = {.seed = 53, .reject_text = "#define PROLOGUE"};
    check_region_opts(dense16, &apart16);
    free(dense16);
    /* A region input read through the laid-out input (no slack after it): the layout applies
     * the prologue (a per-channel multiply and subtract, a literal, clip); rows of 21 in
     * tiles of 16, the last ending at the row's end. Two launches: the layout, the conv. */
    static const char laid[] =
        MAIN("%x: Tensor[(1, 5, 3, 21), float32], %c_s: Tensor[(5, 1, 1), float32], "
             "%c_t: Tensor[(1, 5, 1, 1), float32], %c_w: Tensor[(7, 5, 1, 1), float32]")
        "  %0 = multiply(%x, %c_s);\n"
        "  %1 = subtract(%0, %c_t);\n"
        "  %2 = clip(%1, a_min=-0.25f, a_max=0.5f);\n"
        "  nn.conv2d(%2, %c_w)\n}\n";
    run_opts layout = {.seed = 54, .vector_width = 16, .expect_launches = 2,
                       .conv_tiles = BYOCL_CL_CONV_TILES_POSITIONS,
                       .expect_text = "#define PROLOGUE_V(v, fi)",
                       .expect_text_too = "laid-out input"};
    check_region_opts(laid, &layout);
    /* Squeeze-and-excitation's Mul(scale, x): the chain in the second argument of the first
     * step, the scale one per image and channel ([2, C, 1, 1]: read at the plane's index
     * n * C + c), then a subtraction from a per-channel constant (the chain on the right). */
    run_opts excite = {.seed = 56, .vector_width = 16, .expect_launches = 2,
                       .conv_tiles = BYOCL_CL_CONV_TILES_POSITIONS,
                       .expect_text = "    v = ((VEC)(LD_e0((fi)))) * v; \\\n",
                       .expect_text_too = "    v = ((VEC)(LD_e1((fi) % 8))) - v; \\\n"};
    check_region_opts(MAIN("%x: Tensor[(2, 8, 5, 9), float32], %s: Tensor[(2, 8, 1, 1), float32], "
                           "%c_t: Tensor[(8, 1, 1), float32], %c_w: Tensor[(12, 8, 1, 1), float32]")
                      "  %0 = multiply(%s, %x);\n"
                      "  %1 = subtract(%c_t, %0);\n"
                      "  nn.conv2d(%1, %c_w)\n}\n", &excite);
    /* batch_norm with its statistics region inputs (read, not folded: the operands at the
     * plane's index along axis 1), then bias_add, relu and a [1, C, 1, 1] multiply, over two
     * images; inputs in [0.5, 1) keep the variance positive. */
    run_opts stats = {.seed = 57, .vector_width = 16, .lo = 0.5, .hi = 1.0, .expect_launches = 2,
                      .conv_tiles = BYOCL_CL_CONV_TILES_POSITIONS,
                      .expect_text = "#define PROLOGUE_V(v, fi)",
                      .expect_text_too = "LD_e0((fi) % 6)"};
    check_region_opts(MAIN("%x: Tensor[(2, 6, 4, 10), float32], %g: Tensor[(6), float32], "
                           "%b: Tensor[(6), float32], %m: Tensor[(6), float32], "
                           "%v: Tensor[(6), float32], %c_bias: Tensor[(6), float32], "
                           "%c_k: Tensor[(1, 6, 1, 1), float32], "
                           "%c_w: Tensor[(5, 6, 1, 1), float32]")
                      "  %0 = nn.batch_norm(%x, %g, %b, %m, %v);\n"
                      "  %1 = nn.bias_add(%0.0, %c_bias);\n"
                      "  %2 = nn.relu(%1);\n"
                      "  %3 = multiply(%2, %c_k);\n"
                      "  nn.conv2d(%3, %c_w)\n}\n", &stats);
    /* A 1x1 conv on 14x14 maps (its last tile of 16 positions reads 12 past the end) whose
     * input is the first slice of a concatenation in place reads it as it is, up to the
     * next slice: five launches (the relu, the 3x3 conv's layout and the conv, the two 1x1
     * convs), where a layout of the slice would make six. */
    run_opts slice = {.seed = 55, .vector_width = 16, .expect_launches = 5,
                      .conv_tiles = BYOCL_CL_CONV_TILES_POSITIONS};
    check_region_opts(MAIN("%x: Tensor[(1, 8, 14, 14), float32], "
                           "%c_w1: Tensor[(8, 8, 3, 3), float32], "
                           "%c_w2: Tensor[(6, 8, 1, 1), float32], "
                           "%c_w3: Tensor[(6, 16, 1, 1), float32]")
                      "  %0 = nn.relu(%x);\n"
                      "  %1 = nn.conv2d(%0, %c_w1, padding=[1, 1, 1, 1]);\n"
                      "  %2 = concatenate((%0, %1), axis=1);\n"
                      "  %3 = nn.conv2d(%0, %c_w2);\n"
                      "  %4 = nn.conv2d(%2, %c_w3);\n"
                      "  add(%3, %4)\n}\n", &slice);
    /* Where the steps could not run as the conv reads: a padded conv (padding must stay
     * zero), a strided one, a depthwise one, an operand that differs along the plane (a
     * residual, or one along the last axis), erf (no vector form), and a result read twice.
     * Each runs the elementwise chain as a launch of its own. */
    static const char *const apart_cases[] = {
        MAIN("%x: Tensor[(1, 4, 6, 6), float32], %c_w: Tensor[(4, 4, 3, 3), float32]")
        "  %0 = nn.relu(%x);\n  nn.conv2d(%0, %c_w, padding=[1, 1, 1, 1])\n}\n",
        MAIN("%x: Tensor[(1, 4, 6, 6), float32], %c_w: Tensor[(4, 4, 1, 1), float32]")
        "  %0 = nn.relu(%x);\n  nn.conv2d(%0, %c_w, strides=[2, 2])\n}\n",
        MAIN("%x: Tensor[(1, 4, 6, 6), float32], %c_w: Tensor[(4, 1, 1, 1), float32]")
        "  %0 = nn.relu(%x);\n  nn.conv2d(%0, %c_w, groups=4)\n}\n",
        MAIN("%x: Tensor[(1, 4, 6, 6), float32], %r: Tensor[(1, 4, 6, 6), float32], "
             "%c_w: Tensor[(4, 4, 1, 1), float32]")
        "  %0 = add(%x, %r);\n  nn.conv2d(%0, %c_w)\n}\n",
        MAIN("%x: Tensor[(1, 4, 6, 6), float32], %c_r: Tensor[(6), float32], "
             "%c_w: Tensor[(4, 4, 1, 1), float32]")
        "  %0 = multiply(%x, %c_r);\n  nn.conv2d(%0, %c_w)\n}\n",
        MAIN("%x: Tensor[(1, 4, 6, 6), float32], %c_w: Tensor[(4, 4, 1, 1), float32]")
        "  %0 = erf(%x);\n  nn.conv2d(%0, %c_w)\n}\n",
        MAIN("%x: Tensor[(1, 4, 6, 6), float32], %c_w: Tensor[(4, 4, 1, 1), float32]")
        "  %0 = nn.relu(%x);\n  %1 = nn.conv2d(%0, %c_w);\n  (%0, %1)\n}\n",
    };
    for (size_t i = 0; i < sizeof apart_cases / sizeof apart_cases[0]; i++) {
        run_opts o = {.seed = 60 + i, .reject_text = "#define PROLOGUE"};
        check_region_opts(apart_cases[i], &o);
    }
}

/* ------------------------------------------------------------ dense */

static void test_dense(void **state)
{
    (void)state;
    /* 19 units: a tile of 16 and a tail; one row. */
    static const char text[] = MAIN("%x: Tensor[(1, 37), float32], %c_w: Tensor[(19, 37), float32], "
                                    "%c_b: Tensor[(19), float32]")
        "  %0 = nn.dense(%x, %c_w, units=19);\n"
        "  %1 = nn.bias_add(%0, %c_b, axis=-1);\n"
        "  nn.relu(%1)\n}\n";
    run_opts o = {.seed = 5, .expect_launches = 1};
    check_region_opts(text, &o);
    check_region(text);
    check_region_f16(text);
    /* 6 rows (a block of 4 and a tail), 3 units, the weight a region input. */
    check_region(MAIN("%x: Tensor[(2, 3, 10), float32], %w: Tensor[(3, 10), float32]")
                 "  nn.dense(%x, %w)\n}\n");
    check_region(MAIN("%x: Tensor[(5, 40), float32], %w: Tensor[(1, 40), float32]")
                 "  nn.dense(%x, %w)\n}\n");
}

/* ------------------------------------------------------------ batch_matmul */

static void test_batch_matmul(void **state)
{
    (void)state;
    /* Both operands region inputs (attention's), the fused epilogue in the kernel: the
     * packing of tensor_b and one kernel. 7 x 13 times 13 x 5 leaves tails of both
     * tiles; the residual add broadcasts over the batch. */
    static const char fused[] = MAIN("%a: Tensor[(3, 7, 13), float32], "
                                     "%b: Tensor[(3, 5, 13), float32], "
                                     "%r: Tensor[(7, 5), float32]")
        "  %0 = nn.batch_matmul(%a, %b);\n"
        "  %1 = add(%0, %r);\n"
        "  nn.relu(%1)\n}\n";
    run_opts o = {.seed = 11, .expect_launches = 2};
    check_region_opts(fused, &o);
    check_region(fused);
    check_region_f16(fused);
    /* Each combination of transposes, with a batch of 1 broadcast on either side. */
    static const char *const calls[] = {
        "nn.batch_matmul(%a, %b, transpose_a=True, transpose_b=False)",
        "nn.batch_matmul(%a, %c, transpose_a=True)",
        "nn.batch_matmul(%d, %b, transpose_b=False)",
        "nn.batch_matmul(%d, %c)",
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 MAIN("%%a: Tensor[(1, 9, 6), float32], %%b: Tensor[(4, 9, 21), float32], "
                      "%%c: Tensor[(4, 21, 9), float32], %%d: Tensor[(1, 6, 9), float32]")
                 "  %s\n}\n", calls[i]);
        check_region(text);
        check_region_f16(text);
    }
    /* Constant operands: tensor_b packed at generation time (one launch), tensor_a read
     * from its constant buffer. */
    run_opts one = {.seed = 12, .expect_launches = 1};
    check_region_opts(MAIN("%a: Tensor[(2, 5, 8), float32], %c_b: Tensor[(2, 8, 17), float32]")
                      "  nn.batch_matmul(%a, %c_b, transpose_b=False)\n}\n", &one);
    check_region(MAIN("%c_a: Tensor[(1, 5, 8), float32], %b: Tensor[(2, 3, 8), float32]")
                 "  nn.batch_matmul(%c_a, %b)\n}\n");
    /* Attention as the ONNX importer writes it: scores, scaled softmax, weighted values. */
    check_region(MAIN("%q: Tensor[(4, 10, 8), float32], %k: Tensor[(4, 10, 8), float32], "
                      "%v: Tensor[(4, 10, 8), float32]")
                 "  %0 = nn.batch_matmul(%q, %k);\n"
                 "  %1 = multiply(%0, 0.353553f);\n"
                 "  %2 = nn.softmax(%1);\n"
                 "  nn.batch_matmul(%2, %v, transpose_b=False)\n}\n");
}

/* ------------------------------------------------------------ pooling */

static void test_max_pool(void **state)
{
    (void)state;
    static const char text[] = MAIN("%x: Tensor[(1, 3, 11, 11), float32]")
        "  nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])\n}\n";
    check_region(text);
    check_region_f16(text);
    /* ceil_mode lets the last window hang over the edge. */
    check_region(MAIN("%x: Tensor[(2, 2, 10, 9), float32]")
                 "  nn.max_pool2d(%x, pool_size=[3, 2], strides=[2, 2], ceil_mode=True)\n}\n");
    check_region(MAIN("%x: Tensor[(1, 2, 9, 9), float32]")
                 "  nn.max_pool2d(%x, pool_size=[2, 2], dilation=[2, 2], padding=[1, 0, 1, 2])\n}\n");
    /* Row tiles whose edge tiles shuffle, the last window hanging over the edge: the first
     * tile is inside, so the second, the only edge tile, is not tested for (no TAP_EDGE);
     * it covers outputs 3..10 (TILE_X0), the last of which reads column 22, outside. */
    run_opts ceil = {.seed = 19, .vector_width = 8,
                     .expect_text = "#define TAP_EDGE_TILE(row, col, kw) (((kw) == 0 ? "
                                    "shuffle2(vload16(0, x + (row) + 6), "
                                    "(float16)(-INFINITY), (uint8)(0, 2, 4, 6, 8, 10, 12, 14)) : "
                                    "(kw) == 1 ? shuffle2(vload16(0, x + (row) + 6), "
                                    "(float16)(-INFINITY), (uint8)(1, 3, 5, 7, 9, 11, 13, 15)) : "
                                    "shuffle2(vload16(0, x + (row) + 6), (float16)(-INFINITY), "
                                    "(uint8)(2, 4, 6, 8, 10, 12, 14, 16))))\n",
                     .expect_text_too = "#define TILE_X0(t) min((t) * 8, 3)\n",
                     .reject_text = "TAP_EDGE(row, col))\n"};
    check_region_opts(MAIN("%x: Tensor[(1, 2, 9, 22), float32]")
                      "  nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], ceil_mode=True)\n}\n",
                      &ceil);
    /* Rows of 72 to 128 and 8-wide tiles (this machine's PoCL): interior tiles load each
     * tap as one vector (stride 1), the even lanes of a double-width one (stride 2), or
     * lane by lane (stride 3); an epilogue fused after. (The pools above, on rows of 9 to
     * 11, are pool2d.cl's.) */
    static const char *const wide[] = {
        MAIN("%x: Tensor[(1, 3, 6, 72), float32], %b: Tensor[(3, 1, 1), float32]")
        "  %0 = nn.max_pool2d(%x, pool_size=[3, 3], padding=[1, 1, 1, 1]);\n"
        "  add(%0, %b)\n}\n",
        MAIN("%x: Tensor[(2, 2, 17, 128), float32]")
        "  nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])\n}\n",
        MAIN("%x: Tensor[(1, 2, 7, 100), float32]")
        "  nn.max_pool2d(%x, pool_size=[2, 3], strides=[1, 3], ceil_mode=True)\n}\n",
    };
    const char *const taps[] = {"#define TAP_IN(at) vload8(0, x + (at))\n",
                                "#define TAP_IN(at) vload16(0, x + (at)).even\n",
                                "#define TAP_IN(at) ((float8)(LD_x((at) + 0), LD_x((at) + 3), "};
    /* Work-items of 4 output rows at stride 1 (6 rows in 2 blocks, the last half outside;
     * 2-row windows: 6 rows in 2 blocks) and of 2 at stride 2 (9 rows in 5 blocks). */
    const char *const rows[] = {"#define RY 4\n#define ROWS_IN 6\n",
                                "#define RY 2\n#define ROWS_IN 5\n",
                                "#define RY 4\n#define ROWS_IN 5\n"};
    for (int i = 0; i < 3; i++) {
        run_opts o = {.seed = 20 + (uint64_t)i, .vector_width = 8, .expect_launches = 1,
                      .expect_text = taps[i], .expect_text_too = rows[i]};
        check_region_opts(wide[i], &o);
    }
    check_region_f16(wide[1]);
    /* 16-wide tiles at stride 2 (two loads a tap, as the depthwise conv's): the first
     * tile's first tap reads column -1 as -INFINITY. */
    run_opts sixteen = {.seed = 24, .vector_width = 16, .expect_launches = 1,
                        .expect_text = "(float16)(-INFINITY), (int16)(-1, 0, 0, 0, 0, 0, 0, 0, "
                                       "0, 0, 0, 0, 0, 0, 0, 0))",
                        .expect_text_too = "const int opaque_zero"};
    check_region_opts(MAIN("%x: Tensor[(1, 2, 9, 100), float32]")
                      "  nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], "
                      "padding=[1, 1, 1, 1])\n}\n", &sixteen);
    /* A work-item walks every tile of its rows (here 8 tiles of 8 outputs), the loop over
     * them unrolled: a grid of (row blocks, 1, planes). */
    byocl_module *pool = parse(wide[1]);
    byocl_cl_codegen_options pool_opt = {.compute_units = 2, .max_work_group_size = 4096,
                                         .vector_width = 8};
    byocl_cl_plan *pool_plan = NULL;
    byocl_error pool_err = {0};
    if (clg_codegen(byocl_module_find(pool, "main"), &pool_opt, &pool_plan, &pool_err) !=
        BYOCL_OK)
        fail_msg("%s", pool_err.msg);
    assert_int_equal(pool_plan->n_launches, 1);
    ts_assert_contains(pool_plan->source,
                       "#define PT 8\n#define TILES 8\n#define RY 2\n");
    ts_assert_contains(pool_plan->source, "#define TX_FIRST 0\n#define TX_END TILES\n");
    ts_assert_contains(pool_plan->source, "#pragma unroll\n    for (int tx = TX_FIRST; tx < TX_END; tx++)");
    const byocl_cl_launch *pl = &pool_plan->launches[0];
    assert_int_equal(pl->global[0], 5);
    assert_int_equal(pl->global[1], 1);
    assert_int_equal(pl->global[2], 4);
    assert_int_equal(pl->global[0] % pl->local[0], 0);
    assert_int_equal(pl->global[2] % pl->local[2], 0);
    clg_plan_free(pool_plan);
    byocl_module_free(pool);
    /* Rows of more tiles (150 outputs: 19 tiles of 8) take a tile per work-item along
     * dimension 1; random data against the reference, and float16. */
    static const char long_rows[] = MAIN("%x: Tensor[(1, 2, 9, 300), float32]")
        "  nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])\n}\n";
    run_opts o_long = {.seed = 25, .vector_width = 8, .expect_launches = 1,
                       .expect_text = "#define TILES 19\n",
                       .expect_text_too = "#define TX_FIRST (int)get_global_id(1)\n"
                                          "#define TX_END (TX_FIRST + 1)\n"};
    check_region_opts(long_rows, &o_long);
    check_region_f16(long_rows);
    pool = parse(long_rows);
    if (clg_codegen(byocl_module_find(pool, "main"), &pool_opt, &pool_plan, &pool_err) !=
        BYOCL_OK)
        fail_msg("%s", pool_err.msg);
    pl = &pool_plan->launches[0];
    assert_int_equal(pl->global[1], 19);
    assert_int_equal(pl->global[1] % pl->local[1], 0);
    clg_plan_free(pool_plan);
    byocl_module_free(pool);
    /* A NaN makes its windows NaN, inside a tile and at its edge; -inf stays. */
    byocl_module *m = parse(MAIN("%x: Tensor[(1, 1, 2, 52), float32]")
                            "  nn.max_pool2d(%x, pool_size=[2, 2], strides=[1, 2])\n}\n");
    float xv[104];
    for (int i = 0; i < 104; i++)
        xv[i] = (float)(i % 7) - 3.0f;
    xv[5] = NAN;
    xv[103] = NAN;
    xv[54] = xv[55] = xv[2] = xv[3] = -INFINITY;
    byocl_shape xs = byocl_shape_make(4, (int64_t[]){1, 1, 2, 52});
    byocl_tensor *in = byocl_tensor_from_data(BYOCL_FLOAT32, &xs, xv, NULL);
    if (!getenv("BYOCL_TEST_CL_GENERATE_ONLY")) {
        byocl_cl_codegen_options opt = {.compute_units = 2, .max_work_group_size = 4096,
                                        .vector_width = 8};
        byocl_cl_plan *plan = NULL;
        byocl_error err = {0};
        if (clg_codegen(byocl_module_find(m, "main"), &opt, &plan, &err) != BYOCL_OK)
            fail_msg("%s", err.msg);
        byocl_shape ys = byocl_shape_make(4, (int64_t[]){1, 1, 1, 26});
        byocl_tensor *got = byocl_tensor_new(BYOCL_FLOAT32, &ys, NULL);
        run_plan(plan, &in, &got);
        ts_assert_contains(plan->source, "k0_max_pool2d");
        for (int j = 0; j < 26; j++) {
            float want = -INFINITY;
            bool nan = false;
            for (int r = 0; r < 2; r++)
                for (int c = 2 * j; c < 2 * j + 2; c++) {
                    float v = xv[r * 52 + c];
                    nan = nan || isnan(v);
                    want = v > want ? v : want;
                }
            double v = byocl_tensor_get(got, j);
            if (nan ? !isnan(v) : v != want)
                fail_msg("window %d: %g, expected %g", j, v, nan ? NAN : (double)want);
        }
        assert_true(isnan(byocl_tensor_get(got, 2)) && isnan(byocl_tensor_get(got, 25)));
        assert_true(isinf(byocl_tensor_get(got, 1)));
        byocl_tensor_unref(got);
        clg_plan_free(plan);
    }
    byocl_tensor_unref(in);
    byocl_module_free(m);
}

/* pool2d_plane.cl: pools of stride 1 whose output rows are as long as their input rows,
 * a channel's whole plane per work-item (the first and the last plane output by output). */
static void test_pool_plane(void **state)
{
    (void)state;
    /* googlenet's branch pool, small: 3x3/1 padded by 1 on 7x7 (4 vectors of 16, the last
     * from output 33), two images, a relu fused (the vector epilogue). */
    static const char max7[] = MAIN("%x: Tensor[(2, 3, 7, 7), float32]")
        "  %0 = nn.max_pool2d(%x, pool_size=[3, 3], padding=[1, 1, 1, 1], ceil_mode=True);\n"
        "  nn.relu(%0)\n}\n";
    run_opts o = {.seed = 70, .vector_width = 16, .expect_launches = 1,
                  .expect_text = "k0_pool2d_plane(",
                  .expect_text_too = "#define NV 4\n#define MIN_OFF -8\n#define MAX_OFF 8\n"};
    check_region_opts(max7, &o);
    check_region_f16(max7);
    /* Forced onto row tiles. */
    run_opts rows = {.seed = 70, .vector_width = 16, .pool_tiles = BYOCL_CL_POOL_ROWS,
                     .expect_text = "k0_max_pool2d(", .reject_text = "_plane("};
    check_region_opts(max7, &rows);
    /* Averages with and without the padding counted (a bias added after); 5x5 windows
     * reaching two rows out; asymmetric padding, rows that shrink (no padding below);
     * dilation; 8-wide vectors; a single plane (output by output only). */
    static const char *const cases[] = {
        MAIN("%x: Tensor[(1, 4, 14, 14), float32], %b: Tensor[(4, 1, 1), float32]")
        "  %0 = nn.avg_pool2d(%x, pool_size=[3, 3], padding=[1, 1, 1, 1]);\n"
        "  add(%0, %b)\n}\n",
        MAIN("%x: Tensor[(1, 4, 14, 14), float32]")
        "  nn.avg_pool2d(%x, pool_size=[3, 3], padding=[1, 1, 1, 1], count_include_pad=True)\n}\n",
        MAIN("%x: Tensor[(1, 3, 9, 9), float32]")
        "  nn.max_pool2d(%x, pool_size=[5, 5], padding=[2, 2, 2, 2])\n}\n",
        MAIN("%x: Tensor[(1, 3, 9, 12), float32]")
        "  nn.avg_pool2d(%x, pool_size=[3, 3], padding=[0, 2, 0, 0])\n}\n",
        MAIN("%x: Tensor[(1, 3, 8, 8), float32]")
        "  nn.max_pool2d(%x, pool_size=[3, 3], padding=[2, 2, 2, 2], dilation=[2, 2])\n}\n",
        MAIN("%x: Tensor[(1, 1, 7, 7), float32]")
        "  nn.max_pool2d(%x, pool_size=[3, 3], padding=[1, 1, 1, 1])\n}\n",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_opts oc = {.seed = 71 + i, .vector_width = 16, .expect_launches = 1,
                       .expect_text = "k0_pool2d_plane("};
        check_region_opts(cases[i], &oc);
        check_region_f16(cases[i]);
    }
    run_opts eight = {.seed = 78, .vector_width = 8, .expect_launches = 1,
                      .expect_text = "#define VEC float8\n"};
    check_region_opts(cases[0], &eight);
    /* Planes of more than 24 vectors keep row tiles (28x28: 49). */
    run_opts big = {.seed = 79, .vector_width = 16, .expect_launches = 1,
                    .expect_text = "k0_max_pool2d(", .reject_text = "_plane("};
    check_region_opts(MAIN("%x: Tensor[(1, 2, 28, 28), float32]")
                      "  nn.max_pool2d(%x, pool_size=[3, 3], padding=[1, 1, 1, 1])\n}\n", &big);
    /* A NaN makes its windows NaN and -inf stays, in a plane of vectors (the middle one
     * of three) and in the first (output by output): exact against the reference. */
    byocl_shape xs = byocl_shape_make(4, (int64_t[]){1, 3, 7, 7});
    byocl_tensor *x = byocl_tensor_new(BYOCL_FLOAT32, &xs, NULL);
    float *xv = byocl_tensor_data(x);
    for (int i = 0; i < 147; i++)
        xv[i] = (float)(i % 11) - 5.0f;
    xv[49 + 24] = NAN;          /* the middle plane's centre */
    xv[49 + 6] = NAN;           /* its top right corner */
    xv[49 + 40] = xv[49 + 41] = xv[49 + 47] = xv[49 + 48] = -INFINITY;
    xv[10] = NAN;               /* the first plane */
    byocl_tensor *inputs[] = {x};
    run_opts nan = {.vector_width = 16, .expect_launches = 1, .exact = true,
                    .inputs = inputs, .expect_text = "k0_pool2d_plane("};
    check_region_opts(MAIN("%x: Tensor[(1, 3, 7, 7), float32]")
                      "  nn.max_pool2d(%x, pool_size=[3, 3], padding=[1, 1, 1, 1])\n}\n", &nan);
    byocl_tensor_unref(x);
}

static void test_avg_pool(void **state)
{
    (void)state;
    static const char text[] = MAIN("%x: Tensor[(1, 3, 10, 10), float32]")
        "  nn.avg_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1], "
        "ceil_mode=True)\n}\n";
    check_region(text);
    check_region_f16(text);
    check_region(MAIN("%x: Tensor[(1, 3, 10, 10), float32]")
                 "  nn.avg_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1], "
                 "ceil_mode=True, count_include_pad=True)\n}\n");
    /* Rows wide enough for 8-wide tiles take pool2d_rows.cl, as max pooling does, each
     * lane's divisor its window's rows times its columns: inception's 3x3/1 average of
     * 35-wide rows (without the padding in the count), with an epilogue; padding counted,
     * stride 2 and ceil_mode (the last window past the padded image); stride 3, lane by
     * lane, and dilation. */
    static const char *const rows[] = {
        MAIN("%x: Tensor[(1, 3, 6, 35), float32], %b: Tensor[(3, 1, 1), float32]")
        "  %0 = nn.avg_pool2d(%x, pool_size=[3, 3], padding=[1, 1, 1, 1]);\n"
        "  add(%0, %b)\n}\n",
        MAIN("%x: Tensor[(2, 2, 9, 72), float32]")
        "  nn.avg_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1], "
        "ceil_mode=True, count_include_pad=True)\n}\n",
        MAIN("%x: Tensor[(1, 2, 8, 100), float32]")
        "  nn.avg_pool2d(%x, pool_size=[2, 3], strides=[1, 3], dilation=[2, 1], "
        "padding=[1, 0, 0, 1], count_include_pad=True)\n}\n",
    };
    for (int i = 0; i < 3; i++) {
        run_opts o = {.seed = 40 + (uint64_t)i, .vector_width = 8, .expect_launches = 1,
                      .expect_text = "k0_avg_pool2d", .expect_text_too = "#define POOL_MAX 0\n"};
        check_region_opts(rows[i], &o);
    }
    check_region_f16(rows[0]);
}

/* Global average pooling, a plane per work-item (global_pool2d.cl): planes of 42 (two
 * vectors of 16 and 10 left), 9 (under one vector), 32 (whole vectors of 8 and 16; 4-wide
 * vectors), with epilogues (relu; a per-channel add indexed by the plane) and float16. */
static void test_global_pool(void **state)
{
    (void)state;
    static const char relu[] = MAIN("%x: Tensor[(2, 5, 7, 6), float32]")
        "  %0 = nn.global_avg_pool2d(%x);\n  nn.relu(%0)\n}\n";
    run_opts o = {.seed = 50, .expect_launches = 1, .expect_text = "k0_global_pool2d(",
                  .expect_text_too = "#define NC 10\n#define HW 42\n#define PT 16\n"};
    check_region_opts(relu, &o);
    check_region_f16(relu);
    static const char small[] = MAIN("%x: Tensor[(1, 3, 3, 3), float32]")
        "  nn.global_avg_pool2d(%x)\n}\n";
    run_opts o_small = {.seed = 51, .expect_launches = 1,
                        .expect_text = "#define NC 3\n#define HW 9\n#define PT 16\n"};
    check_region_opts(small, &o_small);
    check_region_f16(small);
    static const char bias[] = MAIN("%x: Tensor[(2, 4, 4, 8), float32], "
                                    "%b: Tensor[(4, 1, 1), float32]")
        "  %0 = nn.global_avg_pool2d(%x);\n  add(%0, %b)\n}\n";
    for (int vf = 4; vf <= 16; vf *= 2) {
        char defines[64];
        snprintf(defines, sizeof defines, "#define NC 8\n#define HW 32\n#define PT %d\n", vf);
        run_opts ob = {.seed = 52 + (uint64_t)vf, .expect_launches = 1, .vector_width = vf,
                       .expect_text = defines, .expect_text_too = "LD_e0("};
        check_region_opts(bias, &ob);
    }
}

/* ------------------------------------------------------------ elementwise */

/* Every unary op on the same input: one region, one output each. */
static void test_unary(void **state)
{
    (void)state;
    static const char text[] = MAIN("%x: Tensor[(3, 7, 5), float32]")
        "  %0 = nn.relu(%x);\n"
        "  %1 = nn.leaky_relu(%x, alpha=0.1f);\n"
        "  %2 = clip(%x, a_min=-0.5f, a_max=0.7f);\n"
        "  %3 = sigmoid(%x);\n"
        "  %4 = tanh(%x);\n"
        "  %5 = abs(%x);\n"
        "  %6 = exp(%x);\n"
        "  (%0, %1, %2, %3, %4, %5, %6)\n}\n";
    check_region(text);
    check_region_f16(text);
}

/* The float functions (inputs of sqrt, rsqrt, log and power's base kept positive through
 * exp), power with the chain value on either side, and HardSwish as the ONNX importer
 * writes it: one kernel. */
static void test_float_functions(void **state)
{
    (void)state;
    static const char text[] = MAIN("%x: Tensor[(3, 7, 5), float32], %y: Tensor[(7, 1), float32]")
        "  %0 = exp(%x);\n"
        "  %1 = sqrt(%0);\n"
        "  %2 = rsqrt(%0);\n"
        "  %3 = log(%0);\n"
        "  %4 = erf(%x);\n"
        "  %5 = negative(%x);\n"
        "  %6 = power(%0, %y);\n"
        "  %7 = power(%1, %6);\n"
        "  (%2, %3, %4, %5, %7)\n}\n";
    check_region(text);
    check_region_f16(text);
    static const char hard_swish[] = MAIN("%x: Tensor[(2, 8, 5, 5), float32]")
        "  %0 = multiply(%x, 0.166667f);\n  %1 = add(%0, 0.5f);\n"
        "  %2 = clip(%1, a_min=0f, a_max=1f);\n  multiply(%x, %2)\n}\n";
    run_opts o = {.seed = 4, .lo = -4, .hi = 4, .expect_launches = 1};
    check_region_opts(hard_swish, &o);
}

/* erf is byocl_erf (kernels_cl/prelude.cl), a rational approximation: each element within
 * 8 ulp of the reference's double erf over a sweep of [-5, 5] and tiny arguments, and the
 * special values exact: NaN stays NaN, +-inf and large arguments give +-1, +-0 keep their
 * sign. */
static void test_erf(void **state)
{
    (void)state;
    enum { N = 4096 };
    static const float special[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-30f, -1e-30f,
                                    4.0f, -4.0f, 10.0f, -10.0f, 3.28478f, 0.5f, 1e-8f};
    enum { N_SPECIAL = sizeof special / sizeof special[0] };
    float values[N];
    for (int i = 0; i < N; i++)
        values[i] = i < N_SPECIAL ? special[i] : -5.0f + 10.0f * (float)i / N;
    int64_t dims[1] = {N};
    byocl_module *m = parse(MAIN("%x: Tensor[(4096), float32]") "  erf(%x)\n}\n");
    byocl_cl_plan *plan = NULL;
    byocl_error err = {0};
    byocl_cl_codegen_options opt = {.compute_units = 2, .max_work_group_size = 4096};
    if (clg_codegen(byocl_module_find(m, "main"), &opt, &plan, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    ts_assert_contains(plan->source, "v = byocl_erf(v);");
    if (getenv("BYOCL_TEST_CL_GENERATE_ONLY")) {
        clg_plan_free(plan);
        byocl_module_free(m);
        return;
    }
    byocl_tensor *x = ts_tensor_f32(1, dims, values), *y = ts_tensor_f32(1, dims, NULL);
    run_plan(plan, &x, &y);
    const float *got = byocl_tensor_data(y);
    for (int i = 0; i < N; i++) {
        double want = erf((double)values[i]);
        if (isnan(values[i])) {
            assert_true(isnan(got[i]));
            continue;
        }
        double ulp = nextafterf((float)fabs(want), INFINITY) - (float)fabs(want);
        if (!(fabs(got[i] - want) <= 8 * ulp) || !signbit(got[i]) != !signbit(want))
            fail_msg("erf(%.9g): %.9g, want %.9g", values[i], got[i], want);
    }
    byocl_tensor_unref(x);
    byocl_tensor_unref(y);
    clg_plan_free(plan);
    byocl_module_free(m);
}

/* The trigonometric and hyperbolic functions (inverse sine, cosine and tanh of tanh(x),
 * inside [-1, 1]; acosh of cosh(x), at least 1), round (half to even), sign, mod and
 * floor_mod with a broadcast divisor: one kernel. */
static void test_math_functions(void **state)
{
    (void)state;
    static const char text[] = MAIN("%x: Tensor[(3, 7, 5), float32], %y: Tensor[(7, 1), float32]")
        "  %0 = sin(%x);\n  %1 = cos(%0);\n  %2 = tan(%1);\n  %3 = atan(%2);\n"
        "  %4 = tanh(%x);\n  %5 = asin(%4);\n  %6 = acos(%4);\n  %7 = atanh(%4);\n"
        "  %8 = sinh(%x);\n  %9 = cosh(%x);\n  %10 = asinh(%8);\n"
        "  %11 = acosh(%9);\n"
        "  %12 = add(%x, %x);\n  %13 = round(%12);\n  %14 = sign(%13);\n"
        "  %15 = mod(%12, %y);\n  %16 = floor_mod(%12, %y);\n"
        "  (%3, %5, %6, %7, %10, %11, %14, %15, %16)\n}\n";
    check_region(text);
    check_region_f16(text);
}

/* Every binary op with a channel vector, with both sides broadcast, and with a scalar. */
static void test_binary_broadcast(void **state)
{
    (void)state;
    static const char *const ops[] = {"add", "subtract", "multiply", "divide", "maximum",
                                      "minimum"};
    char text[4096];
    size_t at = (size_t)snprintf(text, sizeof text, "%s",
                                 MAIN("%a: Tensor[(2, 3, 4, 5), float32], "
                                      "%b: Tensor[(3, 1, 1), float32], "
                                      "%c: Tensor[(4, 1), float32], %d: Tensor[(1, 5), float32], "
                                      "%s: Tensor[(), float32]"));
    for (int i = 0; i < 6; i++)
        at += (size_t)snprintf(text + at, sizeof text - at,
                               "  %%%d = %s(%%a, %%b);\n  %%%d = %s(%%c, %%d);\n"
                               "  %%%d = %s(%%%d, %%s);\n",
                               3 * i, ops[i], 3 * i + 1, ops[i], 3 * i + 2, ops[i], 3 * i + 1);
    at += (size_t)snprintf(text + at, sizeof text - at, "  (");
    for (int i = 0; i < 6; i++)
        at += (size_t)snprintf(text + at, sizeof text - at, "%s%%%d, %%%d", i ? ", " : "", 3 * i,
                               3 * i + 2);
    snprintf(text + at, sizeof text - at, ")\n}\n");
    check_region(text);
    check_region_f16(text);
}

/* A float constant of one element is a literal in the kernel, not a load from a buffer;
 * power by 2 is v * v, exact as the reference's pow in double rounded once is. */
static void test_scalar_constants(void **state)
{
    (void)state;
    static const char text[] = MAIN("%x: Tensor[(3, 50), float32]")
        "  %0 = power(%x, 2f);\n"
        "  %1 = add(%0, 0.5f);\n"
        "  %2 = divide(3f, %1);\n"
        "  %3 = power(%x, 3f);\n"
        "  %4 = power(2f, %x);\n"
        "  %5 = reshape(-0.25f, newshape=[1, 1]);\n"
        "  %6 = multiply(%x, %5);\n"
        "  (%2, %3, %4, %6)\n"
        "}\n";
    run_opts o = {.seed = 3,
                  .expect_text = "    v = v * v; \\\n"
                                 "    /* %1 (add) */ \\\n"
                                 "    v = v + 0.5f; \\\n"
                                 "    /* %2 (divide) */ \\\n"
                                 "    v = 3.0f / v; \\\n"};
    check_region_opts(text, &o);
    o.expect_text = "#define LD_FIRST(fi) 2.0f\n"; /* 2 to the power of x */
    check_region_opts(text, &o);
    o.expect_text = "    v = v * (-0.25f); \\\n"; /* through the reshape */
    check_region_opts(text, &o);
    o.expect_text = "    v = pow(v, 3.0f); \\\n";
    check_region_opts(text, &o);
    check_region(MAIN("%x: Tensor[(3, 50), float16]") "  %0 = power(%x, 2f16);\n"
                 "  %1 = add(%0, 0.5f16);\n  divide(3f16, %1)\n}\n");
    o = (run_opts){.seed = 5, .lo = -1e4, .hi = 1e4};
    assert_true(check_region_opts(MAIN("%x: Tensor[(4, 1000), float32]") "  power(%x, 2f)\n}\n",
                                  &o) == 0.0);
}

static void test_bias_add_batch_norm(void **state)
{
    (void)state;
    /* Statistics as region inputs (computed in the kernel), on axis 1 and axis -1. */
    check_region(MAIN("%x: Tensor[(2, 4, 3, 3), float32], %g: Tensor[(4), float32], "
                      "%b: Tensor[(4), float32], %m: Tensor[(4), float32], %v: Tensor[(4), float32]")
                 "  %0 = nn.batch_norm(%x, %g, %b, %m, abs(%v), epsilon=0.001f);\n"
                 "  %0.0\n}\n");
    check_region(MAIN("%x: Tensor[(6, 5), float32], %g: Tensor[(5), float32], "
                      "%b: Tensor[(5), float32], %m: Tensor[(5), float32], %v: Tensor[(5), float32]")
                 "  %0 = nn.batch_norm(%x, %g, %b, %m, exp(%v), axis=-1, center=False, scale=False);\n"
                 "  %0.0\n}\n");
    /* Constant statistics become a scale and a shift. */
    static const char bn[] = MAIN("%x: Tensor[(1, 6, 5, 3), float32], %c_g: Tensor[(6), float32], "
                                  "%c_b: Tensor[(6), float32], %c_m: Tensor[(6), float32], "
                                  "%c_var: Tensor[(6), float32]")
        "  %0 = nn.batch_norm(%x, %c_g, %c_b, %c_m, %c_var);\n  %0.0\n}\n";
    check_region(bn);
    check_region_f16(bn);
    check_region(MAIN("%x: Tensor[(2, 3, 4), float32], %b: Tensor[(4), float32]")
                 "  nn.bias_add(%x, %b, axis=-1)\n}\n");
    check_region(MAIN("%x: Tensor[(2, 3, 4), float32], %c_b: Tensor[(3), float32]")
                 "  nn.bias_add(%x, %c_b)\n}\n");
    /* A constant operand of a binary op, and a constant returned as it is. */
    check_region(MAIN("%x: Tensor[(2, 3, 4), float32], %c_k: Tensor[(3, 1), float32]")
                 "  (multiply(%x, %c_k), %c_k)\n}\n");
}

/* A chain of elementwise ops is one kernel; a value read twice ends a chain. */
static void test_elemwise_chain(void **state)
{
    (void)state;
    static const char text[] = MAIN("%a: Tensor[(4, 9), float32], %b: Tensor[(9), float32], "
                                    "%s: Tensor[(), float32]")
        "  %0 = add(%a, %b);\n  %1 = tanh(%0);\n  %2 = multiply(%s, %1);\n"
        "  %3 = subtract(%2, %0);\n  %4 = reshape(%3, newshape=[6, 6]);\n  nn.relu(%4)\n}\n";
    run_opts o = {.seed = 9, .expect_launches = 2};
    check_region_opts(text, &o);
    check_region(text);
    check_region_f16(text);
    /* cast between float32 and float16 rounds where the reference does. */
    check_region(MAIN("%a: Tensor[(3, 11), float32]")
                 "  %0 = multiply(%a, 3.3f);\n  %1 = cast(%0, dtype=\"float16\");\n"
                 "  %2 = exp(%1);\n  %3 = cast(%2, dtype=\"float32\");\n  add(%3, 1f)\n}\n");
}

/* ------------------------------------------------------------ softmax, moves */

static void test_softmax(void **state)
{
    (void)state;
    static const char text[] = MAIN("%x: Tensor[(2, 10), float32]") "  nn.softmax(%x)\n}\n";
    run_opts o = {.seed = 4, .lo = -30, .hi = 30};
    check_region_opts(text, &o);
    check_region_f16(text);
    check_region(MAIN("%x: Tensor[(2, 5, 3), float32]") "  nn.softmax(%x, axis=1)\n}\n");
}

/* ------------------------------------------------------------ reductions */

/* Each reduction over the last axes, a middle one, several apart, all, with exclude and
 * keepdims, across axes of 1; float32 and float16; means over the innermost axes. */
static void test_reduce(void **state)
{
    (void)state;
    static const char *const calls[] = {
        "mean(%x, axis=[-1], keepdims=True)",
        "sum(%x, axis=[1])",
        "max(%x, axis=[0, 2])",
        "min(%x, axis=[1], exclude=True, keepdims=True)",
        "prod(%x, axis=[-1])",
        "sum(%x)",
        "mean(%x, axis=[0, 3], keepdims=True)",
        "max(%x, axis=[2, 3])",
        "min(%x, axis=[])",
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, MAIN("%%x: Tensor[(2, 3, 4, 5), float32]") "  %s\n}\n",
                 calls[i]);
        check_region(text);
        check_region_f16(text);
    }
    /* Axes of 1 between the reduced ones: merged away. */
    check_region(MAIN("%x: Tensor[(3, 1, 4, 1, 6), float32]")
                 "  sum(%x, axis=[1, 2, 4])\n}\n");
    /* Large sums: compensated, within the float32 bound of the double reference. */
    run_opts big = {.seed = 3, .lo = 0, .hi = 1000};
    check_region_opts(MAIN("%x: Tensor[(3, 20000), float32]") "  sum(%x, axis=[1])\n}\n", &big);
    /* Means over the innermost axes are global_pool2d.cl's, with an epilogue too; longer
     * than CLG_PLANE_MEAN_MAX they stay reduce.cl's (compensated). */
    run_opts plane = {.seed = 6, .expect_launches = 1, .expect_text = "global_pool2d",
                      .expect_text_too = "#define HW 20\n"};
    check_region_opts(MAIN("%x: Tensor[(2, 3, 4, 5), float32]")
                      "  %0 = mean(%x, axis=[2, 3]);\n  %1 = add(%0, 1f);\n  nn.relu(%1)\n}\n",
                      &plane);
    check_region_f16(MAIN("%x: Tensor[(2, 3, 4, 5), float32]") "  mean(%x, axis=[2, 3])\n}\n");
    run_opts long_mean = {.seed = 7, .lo = 0, .hi = 1000, .expect_text = "#define COUNT 4097\n"};
    check_region_opts(MAIN("%x: Tensor[(3, 4097), float32]") "  mean(%x, axis=[1])\n}\n",
                      &long_mean);
    /* An epilogue: one launch. */
    run_opts fused = {.seed = 5, .expect_launches = 1};
    check_region_opts(MAIN("%x: Tensor[(2, 3, 4), float32]")
                      "  %0 = sum(%x, axis=[1]);\n  %1 = add(%0, 1f);\n  nn.relu(%1)\n}\n",
                      &fused);
    /* NaN (log of the negative inputs) propagates through max and min, as in the
     * reference; sums of it are NaN. */
    check_region(MAIN("%x: Tensor[(4, 6), float32]")
                 "  %0 = log(%x);\n  %1 = max(%0, axis=[1]);\n  %2 = min(%0, axis=[0]);\n"
                 "  %3 = sum(%0, axis=[1]);\n  (%1, %2, %3)\n}\n");
}

/* Partitioning `text` for the opencl target gives one region of `want_calls` calls:
 * nothing splits it. */
static void assert_one_region(const char *text, int want_calls)
{
    byocl_module *m = parse(text);
    const char *targets[1] = {"opencl"};
    byocl_pipeline_options opt = {.targets = targets, .n_targets = 1};
    byocl_error err = {0};
    assert_int_equal(byocl_target_register_builtins(&err), BYOCL_OK);
    if (byocl_pipeline_partition(m, &opt, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(byocl_module_num_functions(m), 2);
    const byocl_function *region = byocl_module_find(m, "opencl_main_0");
    assert_non_null(region);
    int calls = 0;
    for (int id = 0; id < byocl_function_num_nodes(region); id++)
        calls += byocl_node_op(region, id) != NULL;
    assert_int_equal(calls, want_calls);
    byocl_module_free(m);
    byocl_target_registry_reset();
}

/* LayerNormalization as the ONNX importer writes it: one opencl region that agrees with
 * the reference. */
static void test_layer_norm_region(void **state)
{
    (void)state;
    static const char text[] =
        MAIN("%x: Tensor[(2, 5, 16), float32], %g: Tensor[(16), float32], "
             "%b: Tensor[(16), float32]")
        "  %0 = mean(%x, axis=[-1], keepdims=True);\n"
        "  %1 = subtract(%x, %0);\n"
        "  %2 = multiply(%1, %1);\n"
        "  %3 = mean(%2, axis=[-1], keepdims=True);\n"
        "  %4 = add(%3, 1e-05f);\n"
        "  %5 = rsqrt(%4);\n"
        "  %6 = multiply(%1, %5);\n"
        "  %7 = multiply(%6, %g);\n"
        "  add(%7, %b)\n}\n";
    assert_one_region(text, 9);
    check_region(text);
    /* The fused ops as the importer writes them now, each with an epilogue (relu and the
     * add into layer_norm's kernel, the multiply into log_softmax's), one region. */
    check_region(MAIN("%x: Tensor[(2, 5, 16), float32], %g: Tensor[(16), float32], "
                      "%b: Tensor[(16), float32], %g5: Tensor[(5), float32]")
                 "  %0 = nn.layer_norm(%x, %g, %b, epsilon=0.001f);\n"
                 "  %1 = nn.relu(%0);\n"
                 "  %2 = add(%1, %x);\n"
                 "  %3 = nn.layer_norm(%2, %g5, %g5, axis=1, center=False);\n"
                 "  %4 = nn.log_softmax(%3, axis=1);\n"
                 "  multiply(%4, 2f)\n}\n");
}

/* Runs a generated case's plan and compares with numpy's result: bit for bit when
 * `exact`, else within the documented bound. */
static void check_generated(const gen_case *k, bool exact, const byocl_cl_plan *plan,
                            byocl_tensor *const *in)
{
    if (getenv("BYOCL_TEST_CL_GENERATE_ONLY"))
        return;
    byocl_tensor *want = gen_array_tensor(k->out[0]);
    byocl_dtype dtype = byocl_tensor_dtype(want);
    byocl_tensor *got = byocl_tensor_new(dtype, byocl_tensor_shape(want), NULL);
    run_plan(plan, in, &got);
    if (exact) {
        assert_tensor_bytes_equal(got, want, k->name);
    } else {
        double e = ts_relative_l2(got, want);
        double tol = dtype == BYOCL_FLOAT16 ? TOL_F16 : TOL_F32;
        if (!(e <= tol))
            fail_msg("%s: relative L2 error %g > %g", k->name, e, tol);
    }
    byocl_tensor_unref(got);
    byocl_tensor_unref(want);
}

/* Generates `fn` (a generated case's call, or that call with some inputs bound), runs it
 * on `in` and checks the result (check_generated). */
static void run_generated(const gen_case *k, const byocl_function *fn, byocl_tensor *const *in,
                          bool exact)
{
    byocl_cl_codegen_options opt = {.compute_units = 2, .max_work_group_size = 4096};
    byocl_cl_plan *plan = NULL;
    byocl_error err = {0};
    if (clg_codegen(fn, &opt, &plan, &err) != BYOCL_OK)
        fail_msg("%s: %s", k->name, err.msg);
    check_generated(k, exact, plan, in);
    clg_plan_free(plan);
}

/* A generated case on the opencl target: refused with a reason containing `want_why`
 * when that is not NULL, else run and checked (check_generated). Returns whether it
 * ran. */
static bool generated_on_opencl(const gen_case *k, const char *want_why, bool exact)
{
    byocl_tensor *in[5];
    op_case c;
    gen_case_build(k, &c, in);
    char why[256] = "";
    bool ok = clg_supports(c.fn, c.call, why, sizeof why);
    if (want_why) {
        if (ok)
            fail_msg("%s: accepted", k->name);
        ts_assert_contains(why, want_why);
    } else if (!ok) {
        fail_msg("%s: refused: %s", k->name, why);
    } else {
        run_generated(k, c.fn, in, exact);
    }
    op_tensors_free(in, k->n_in);
    op_case_free(&c);
    return ok;
}

static bool is_float(byocl_dtype dtype)
{
    return dtype == BYOCL_FLOAT32 || dtype == BYOCL_FLOAT16;
}

/* The reduction cases of tests/gen/gen_ops_transform.py on the opencl target: float32
 * and float16 ones (bool ones of all and any) run and agree with numpy (max, min, all,
 * any and the argmax/argmin positions, ties and NaN included, exactly; sums and variances
 * within the documented bound); the others are refused, saying why: other dtypes, empty
 * tensors, a variance whose mean is not of the keepdims shape. */
static void test_reduce_generated(void **state)
{
    (void)state;
    int ran = 0;
    for (int i = 0; i < N_ITEMS(transform_cases); i++) {
        const gen_case *k = &transform_cases[i];
        ops_reduce_kind kind = ops_reduce_kind_of(k->op);
        if (kind == OPS_REDUCE_NONE)
            continue;
        byocl_shape shape = byocl_shape_make(k->in[0]->rank, k->in[0]->dims);
        bool arg = kind == OPS_REDUCE_ARGMAX || kind == OPS_REDUCE_ARGMIN;
        bool logical = kind == OPS_REDUCE_ALL || kind == OPS_REDUCE_ANY;
        const char *want_why =
            !is_float(k->in[0]->dtype) && !logical ? "is not supported (the opencl target computes"
            : byocl_shape_numel(&shape) == 0       ? "empty tensors are not supported"
            : strcmp(k->name, "variance_mean_broadcast") == 0
                ? "variance's mean must be 1 along the reduced axes"
                : NULL;
        ran += generated_on_opencl(k, want_why,
                                   arg || logical || kind == OPS_REDUCE_MAX ||
                                       kind == OPS_REDUCE_MIN);
    }
    assert_int_equal(ran, 43);
}

/* The batch_matmul, log_softmax and layer_norm cases of tests/gen/gen_ops_nn.py (ranks,
 * axes, large magnitudes, center/scale off), the conv2d and conv2d_transpose
 * cases of tests/gen/gen_ops_conv.py (transposes, a broadcast batch, tile tails, float16,
 * strides of 12 and 16; the transposed convs' strides, groups, padding, output_padding,
 * dilation) and the resize2d cases of tests/gen/gen_ops_image.py (every method, rounding
 * and coordinate transformation, tf_crop_and_resize's crops, up and down, float16) on the
 * opencl target: float32 and
 * float16 ones run and agree with numpy within the documented bound (nearest resizing bit
 * for bit); integer and float64 ones are refused, saying why. */
static void test_ops_generated(void **state)
{
    (void)state;
    static const struct {
        const gen_case *cases;
        int n;
        const char *op;
        int want_ran;
    } sets[] = {
        {nn_cases, N_ITEMS(nn_cases), "nn.batch_matmul", 11},
        {nn_cases, N_ITEMS(nn_cases), "nn.log_softmax", 4},
        {nn_cases, N_ITEMS(nn_cases), "nn.layer_norm", 8},
        {conv_cases, N_ITEMS(conv_cases), "nn.conv2d", 12},
        {conv_cases, N_ITEMS(conv_cases), "nn.conv2d_transpose", 11},
        {image_cases, N_ITEMS(image_cases), "image.resize2d", 28},
    };
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        int ran = 0;
        for (int i = 0; i < sets[s].n; i++) {
            const gen_case *k = &sets[s].cases[i];
            if (strcmp(k->op, sets[s].op) != 0)
                continue;
            bool float_io = is_float(k->in[0]->dtype) && is_float(k->out[0]->dtype);
            bool copies = strstr(k->attrs, "nearest_neighbor") != NULL; /* resize2d's */
            ran += generated_on_opencl(
                k, float_io ? NULL : "is not supported (the opencl target computes", copies);
        }
        assert_int_equal(ran, sets[s].want_ran);
    }
}

/* ------------------------------------------------------------ strided_slice, broadcast_to, take */

static bool is_gather_op(const char *op)
{
    return strcmp(op, "strided_slice") == 0 || strcmp(op, "broadcast_to") == 0 ||
           strcmp(op, "take") == 0;
}

/* A generated case of take, gather or a scatter with its indices (input 1) bound as a
 * constant of the region: accepted, run and checked as check_generated does. */
static void indices_constant_on_opencl(const gen_case *k, bool exact)
{
    byocl_tensor *in[5];
    op_case c;
    gen_case_build(k, &c, in);
    const char *names[1] = {"p1"};
    byocl_error err = {0};
    if (byocl_bind_params(c.m, names, &in[1], 1, &err) != BYOCL_OK ||
        byocl_infer_types(c.m, &err) != BYOCL_OK)
        fail_msg("%s: %s", k->name, err.msg);
    const byocl_function *fn = byocl_module_find(c.m, "main");
    assert_int_equal(byocl_function_num_params(fn), k->n_in - 1);
    char why[256] = "";
    if (!clg_supports(fn, byocl_function_body(fn), why, sizeof why))
        fail_msg("%s: refused: %s", k->name, why);
    byocl_tensor *params[5] = {in[0]}; /* the inputs left: all but the indices */
    for (int i = 2; i < k->n_in; i++)
        params[i - 1] = in[i];
    run_generated(k, fn, params, exact);
    op_tensors_free(in, k->n_in);
    op_case_free(&c);
}

/* The strided_slice, broadcast_to and take cases of tests/gen/gen_ops_index.py on the
 * opencl target: float32 and float16 ones run and agree with numpy exactly (the kernel
 * moves elements), take's with the indices a region input and again a constant of the
 * region; the others (take with batch_dims among them) are refused, saying why. */
static void test_index_generated(void **state)
{
    (void)state;
    int ran = 0, constant = 0;
    for (int i = 0; i < N_ITEMS(index_cases); i++) {
        const gen_case *k = &index_cases[i];
        if (!is_gather_op(k->op))
            continue;
        byocl_shape out = byocl_shape_make(k->out[0]->rank, k->out[0]->dims);
        const char *want_why = !is_float(k->in[0]->dtype)
                                   ? "is not supported (the opencl target computes"
                               : byocl_shape_numel(&out) == 0 ? "empty tensors are not supported"
                               : strstr(k->attrs, "batch_dims") ? "take with batch_dims 1 is not "
                                                                  "supported (the opencl target "
                                                                  "takes batch_dims 0)"
                                                              : NULL;
        bool this_ran = generated_on_opencl(k, want_why, true);
        ran += this_ran;
        if (this_ran && strcmp(k->op, "take") == 0) {
            indices_constant_on_opencl(k, true);
            constant++;
        }
    }
    assert_int_equal(ran, 17);
    assert_int_equal(constant, 9);
}

/* Epilogues fuse after a slice and a take (one launch each), with the reference's
 * results unfused too; a slice's source offset merges the axes it walks as one. */
static void test_gather_fusion(void **state)
{
    (void)state;
    static const char slice[] = MAIN("%x: Tensor[(2, 3, 4, 5), float32], %b: Tensor[(5), float32]")
        "  %0 = strided_slice(%x, begin=[1], end=[3], axes=[1]);\n"
        "  %1 = add(%0, %b);\n  nn.relu(%1)\n}\n";
    run_opts fused = {.seed = 5, .expect_launches = 1};
    check_region_opts(slice, &fused);
    check_region(slice);
    check_region_f16(slice);
    byocl_module *m = parse(slice);
    byocl_cl_plan *plan = NULL;
    byocl_error err = {0};
    if (clg_codegen(byocl_module_find(m, "main"), NULL, &plan, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    /* (2, 2, 4, 5) from (2, 3, 4, 5): 20 + 40 contiguous elements per 60 */
    ts_assert_contains(plan->source, "#define GATHER_INDEX(fi, src, ok) "
                                     "{ src = 20 + (fi) % 40 + (fi) / 40 * 60; }\n");
    clg_plan_free(plan);
    byocl_module_free(m);

    /* Indices in [-6, 6) from a region input, int64 and int32, wrap and clip. */
    static const char take[] = MAIN("%x: Tensor[(3, 4, 5), float32], %i: Tensor[(2, 3), int64]")
        "  %0 = take(%x, %i, axis=1, mode=\"wrap\");\n  %1 = add(%0, 1f);\n  tanh(%1)\n}\n";
    run_opts wide = {.seed = 11, .lo = -6, .hi = 6, .expect_launches = 1};
    check_region_opts(take, &wide);
    wide.no_fusion = true;
    wide.expect_launches = 0;
    check_region_opts(take, &wide);
    static const char take_clip[] = MAIN("%x: Tensor[(4, 5), float16], %i: Tensor[(7), int32]")
        "  %0 = take(%x, %i, axis=0);\n  multiply(%0, 3f16)\n}\n";
    run_opts clip = {.seed = 12, .lo = -6, .hi = 6};
    check_region_opts(take_clip, &clip);
    static const char take_flat[] = MAIN("%x: Tensor[(3, 4), float32], %i: Tensor[(2, 2), int64]")
        "  take(%x, %i)\n}\n";
    check_region_opts(take_flat, &clip);
}

/* take(mode="fast"): the host fails on an index out of range; constant indices out of
 * range leave the call to the host, indices that arrive at run time give NaN there and
 * nothing is read out of bounds. */
/* gather (ONNX GatherElements) along each axis, int64 and int32 indices with negative
 * ones among them (-n..-1 count from the end), a fused epilogue; an index out of range
 * given at run time gives NaN and reads nothing outside the data, a constant one keeps
 * the call on the host. */
static void test_gather(void **state)
{
    (void)state;
    static const char text[] = MAIN("%x: Tensor[(3, 4, 5), float32], "
                                    "%i: Tensor[(2, 4, 5), int64], %j: Tensor[(3, 3, 5), int32], "
                                    "%k: Tensor[(3, 4, 2), int64]")
        "  %0 = gather(%x, %i, axis=0);\n"
        "  %1 = gather(%x, %j, axis=1);\n"
        "  %2 = gather(%x, %k, axis=-1);\n"
        "  %3 = nn.relu(%2);\n"
        "  (%0, %1, %3)\n}\n";
    run_opts o = {.seed = 9, .lo = -3, .hi = 3, .expect_launches = 3,
                  .expect_text = "    v_ = v_ < 0 ? v_ + 4 : v_; \\\n"
                                 "    ok = v_ >= 0 && v_ < 4; \\\n"
                                 "    src = (ok ? (int)v_ : 0) * 5 + (fi) % 5 + (fi) / 15 * 20; "
                                 "\\\n}\n"};
    check_region_opts(text, &o);
    check_region_f16(text);

    static const char one[] = MAIN("%x: Tensor[(2, 3), float32], %i: Tensor[(2, 2), int64]")
        "  gather(%x, %i, axis=1)\n}\n";
    byocl_module *m = parse(one);
    byocl_shape xs = byocl_shape_make(2, (int64_t[]){2, 3});
    byocl_shape is = byocl_shape_make(2, (int64_t[]){2, 2});
    float xv[6] = {0, 1, 2, 3, 4, 5};
    int64_t iv[4] = {-1, 3, 0, -4};
    byocl_tensor *in[2] = {byocl_tensor_from_data(BYOCL_FLOAT32, &xs, xv, NULL),
                           byocl_tensor_from_data(BYOCL_INT64, &is, iv, NULL)};
    if (!getenv("BYOCL_TEST_CL_GENERATE_ONLY")) {
        byocl_cl_plan *plan = NULL;
        byocl_error err = {0};
        if (clg_codegen(byocl_module_find(m, "main"), NULL, &plan, &err) != BYOCL_OK)
            fail_msg("%s", err.msg);
        byocl_tensor *got = byocl_tensor_new(BYOCL_FLOAT32, &is, NULL);
        run_plan(plan, in, &got);
        assert_true(byocl_tensor_get(got, 0) == 2 && byocl_tensor_get(got, 2) == 3);
        assert_true(isnan(byocl_tensor_get(got, 1)) && isnan(byocl_tensor_get(got, 3)));
        byocl_tensor_unref(got);
        clg_plan_free(plan);
    }
    /* The same indices as a constant: refused, naming the first out of range. */
    const char *names[1] = {"i"};
    byocl_error err = {0};
    if (byocl_bind_params(m, names, &in[1], 1, &err) != BYOCL_OK ||
        byocl_infer_types(m, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    byocl_function *fn = byocl_module_find(m, "main");
    char why[256] = "";
    assert_false(clg_supports(fn, byocl_function_body(fn), why, sizeof why));
    assert_string_equal(why, "gather: index 3 is out of range for an axis of 3 (the host "
                             "reports it)");
    op_tensors_free(in, 2);
    byocl_module_free(m);
}

/* ------------------------------------------------------------ bools */

static bool takes_bool(const char *op)
{
    static const char *const ops[] = {"equal",       "not_equal",   "less",        "greater",
                                      "less_equal",  "greater_equal", "logical_and", "logical_or",
                                      "logical_xor", "logical_not", "isnan",       "isinf",
                                      "where"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(op, ops[i]) == 0)
            return true;
    return false;
}

static bool float_or_bool(byocl_dtype dtype)
{
    return is_float(dtype) || dtype == BYOCL_BOOL;
}

/* The comparison, logical, isnan, isinf and where cases of tests/gen/gen_ops_elemwise.py
 * on the opencl target: those on float32, float16 and bool tensors run (bools as 0.0f and
 * 1.0f) and agree with numpy bit for bit (NaN compares false, but not_equal; broadcast
 * operands); integer and float64 ones are refused, saying why. */
static void test_bool_generated(void **state)
{
    (void)state;
    int ran = 0;
    for (int i = 0; i < N_ITEMS(elemwise_cases); i++) {
        const gen_case *k = &elemwise_cases[i];
        if (!takes_bool(k->op))
            continue;
        bool ok = float_or_bool(k->out[0]->dtype);
        for (int a = 0; a < k->n_in; a++)
            ok = ok && float_or_bool(k->in[a]->dtype);
        ran += generated_on_opencl(k, ok ? NULL : "is not supported (the opencl target computes",
                                   true);
    }
    assert_int_equal(ran, 19);
}

/* A comparison, a logical op and where fused after a relu (one kernel writing a float and
 * a bool output), isnan and logical_not, a comparison cast back to float; float16 too. */
static void test_bool_chains(void **state)
{
    (void)state;
    static const char text[] = MAIN("%x: Tensor[(2, 3, 8), float32], %y: Tensor[(8), float32], "
                                    "%m: Tensor[(3, 1), bool]")
        "  %0 = nn.relu(%x);\n  %1 = greater(%0, %y);\n  %2 = logical_and(%1, %m);\n"
        "  %3 = multiply(%x, %y);\n  %4 = where(%2, %x, %3);\n  %5 = isnan(%4);\n"
        "  %6 = logical_not(%5);\n  %7 = less_equal(%x, %y);\n"
        "  (%4, %6, %7, cast(%7, dtype=\"float32\"))\n}\n";
    run_opts o = {.seed = 5,
                  .expect_text = "    v = v > LD_e1((fi) % 8) ? 1.0f : 0.0f; \\\n"
                                 "    /* %2 (logical_and) */ \\\n"
                                 "    v = ((v) != 0.0f) && ((LD_e2((fi) / 8 % 3)) != 0.0f) ? "
                                 "1.0f : 0.0f; \\\n"};
    check_region_opts(text, &o);
    check_region(text);
    check_region_f16(text);
    byocl_module *m = parse(MAIN("%x: Tensor[(4), int32]") "  less(%x, %x)\n}\n");
    char why[256] = "";
    assert_false(clg_supports(byocl_module_find(m, "main"), 1, why, sizeof why));
    assert_string_equal(why, "dtype int32 is not supported (the opencl target computes float32 "
                             "and float16)");
    byocl_module_free(m);
}

/* ------------------------------------------------------------ one_hot */

/* The one_hot cases of tests/gen/gen_ops_index.py on the opencl target: float32 and float16
 * results from int32 or int64 indices (negative and too large ones matching nothing) run
 * and agree with numpy bit for bit; an integer result and float indices are refused. */
static void test_one_hot_generated(void **state)
{
    (void)state;
    int ran = 0;
    for (int i = 0; i < N_ITEMS(index_cases); i++) {
        const gen_case *k = &index_cases[i];
        if (strcmp(k->op, "one_hot") != 0)
            continue;
        const char *want_why =
            !is_float(k->out[0]->dtype) ? "dtype int32 is not supported (the opencl target"
            : is_float(k->in[0]->dtype) ? "one_hot's indices are float32 (the opencl target "
                                          "reads int32 and int64)"
                                        : NULL;
        ran += generated_on_opencl(k, want_why, true);
    }
    assert_int_equal(ran, 3);
}

/* one_hot on random indices (some out of range), with an epilogue fused after it, on and
 * off values as constants of the region; float16 too. */
static void test_one_hot(void **state)
{
    (void)state;
    static const char text[] = MAIN("%i: Tensor[(3, 4), int64], %x: Tensor[(3, 6, 4), float32], "
                                    "%c_on: float32, %c_off: float32")
        "  %0 = one_hot(%i, %c_on, %c_off, depth=6, axis=1, dtype=\"float32\");\n"
        "  multiply(%0, %x)\n}\n";
    run_opts o = {.seed = 4, .lo = -2, .hi = 8, .expect_launches = 1,
                  .expect_text = "const int j = fi % INNER, k = fi / INNER % DEPTH"};
    check_region_opts(text, &o);
    check_region_f16(text);
}

/* ------------------------------------------------------------ nn.pad */

/* The nn.pad cases of tests/gen/gen_ops_index.py on the opencl target: float32 and float16
 * data in the three modes run and agree with numpy bit for bit; other dtypes are refused. */
static void test_pad_generated(void **state)
{
    (void)state;
    int ran = 0;
    for (int i = 0; i < N_ITEMS(index_cases); i++) {
        const gen_case *k = &index_cases[i];
        if (strcmp(k->op, "nn.pad") != 0)
            continue;
        const char *want_why = is_float(k->in[0]->dtype) ? NULL : "is not supported (the opencl target";
        ran += generated_on_opencl(k, want_why, true);
    }
    assert_int_equal(ran, 9);
}

/* nn.pad in a region between ops: a reflect pad of an activation feeding a conv, a
 * constant pad of a region input with its value a region constant, then an epilogue
 * fused after the pad (one launch each for the pads). */
static void test_pad(void **state)
{
    (void)state;
    static const char text[] = MAIN("%x: Tensor[(1, 3, 6, 7), float32], %w: Tensor[(4, 3, 3, 3), "
                                    "float32]")
        "  %0 = nn.relu(%x);\n"
        "  %1 = nn.pad(%0, 0f, pad_width=[[0, 0], [0, 0], [2, 1], [1, 2]], pad_mode=\"reflect\");\n"
        "  %2 = nn.conv2d(%1, %w, padding=[0, 0, 0, 0]);\n"
        "  %3 = nn.pad(%2, 0.5f, pad_width=[[0, 0], [1, 0], [0, 1], [3, 3]]);\n"
        "  %4 = nn.pad(%3, 0f, pad_width=[[1, 1], [0, 0], [1, 2], [0, 1]], pad_mode=\"edge\");\n"
        "  sigmoid(%4)\n}\n";
    run_opts o = {.seed = 7, .lo = -2, .hi = 2, .expect_text = "c_ = c_ < 0 ? -c_ : c_ >= 6"};
    check_region_opts(text, &o);
    check_region_f16(text);
}

/* ------------------------------------------------------------ trilu and gather_nd */

/* The trilu and gather_nd cases of tests/gen/gen_ops_index.py on the opencl target:
 * float32 data (upper, lower, k of either sign and dtype; batch_dims, index_rank) runs
 * and agrees with numpy bit for bit, with k or the indices a region input and again a
 * constant of the region; integer data is refused. */
static void test_trilu_gather_nd_generated(void **state)
{
    (void)state;
    int ran = 0;
    for (int i = 0; i < N_ITEMS(index_cases); i++) {
        const gen_case *k = &index_cases[i];
        if (strcmp(k->op, "trilu") != 0 && strcmp(k->op, "gather_nd") != 0)
            continue;
        const char *want_why = is_float(k->in[0]->dtype) ? NULL : "is not supported (the opencl target";
        bool this_ran = generated_on_opencl(k, want_why, true);
        if (this_ran)
            indices_constant_on_opencl(k, true);
        ran += this_ran;
    }
    assert_int_equal(ran, 6);
}

/* trilu and gather_nd between other ops no longer split a region: one region, one
 * launch each with the epilogue fused after them, float32 and float16; k and the indices
 * are region inputs (the indices in -3..2, in range for axes of 3 and 4). */
static void test_trilu_gather_nd_region(void **state)
{
    (void)state;
    static const char text[] = MAIN("%x: Tensor[(2, 3, 4, 5), float32], %k: int64, "
                                    "%i: Tensor[(2, 2, 3), int64], %b: Tensor[(5), float32]")
        "  %0 = nn.relu(%x);\n"
        "  %1 = trilu(%0, %k, upper=False);\n"
        "  %2 = add(%1, %b);\n"
        "  %3 = gather_nd(%2, %i, batch_dims=1);\n"
        "  sigmoid(%3)\n}\n";
    assert_one_region(text, 5);
    run_opts o = {.seed = 3, .lo = -3, .hi = 3, .expect_launches = 3,
                  .expect_text = "ok = d_ <= (long)LD_ix(0)"};
    check_region_opts(text, &o);
    check_region(text);
    check_region_f16(text);
}

/* ------------------------------------------------------------ topk */

/* A generated topk case run with its fields taken by TupleGetItem (with both results), so
 * that the opencl target stores them apart: every result bit for bit. */
static void topk_items_on_opencl(const gen_case *k)
{
    byocl_type t = gen_array_type(k->in[0]);
    char type[96], text[512];
    byocl_type_str(&t, type, sizeof type);
    snprintf(text, sizeof text, MAIN("%%x: %s") "  %%0 = topk(%%x, %s);\n  %s\n}\n", type,
             k->attrs, k->n_out == 2 ? "(%0.0, %0.1)" : "%0");
    byocl_module *m = parse(text);
    byocl_function *fn = byocl_module_find(m, "main");
    char why[256] = "";
    if (!clg_supports(fn, 1, why, sizeof why))
        fail_msg("%s: refused: %s", k->name, why);
    byocl_cl_plan *plan = NULL;
    byocl_error err = {0};
    if (clg_codegen(fn, NULL, &plan, &err) != BYOCL_OK)
        fail_msg("%s: %s", k->name, err.msg);
    assert_int_equal(plan->n_launches, 1);
    if (!getenv("BYOCL_TEST_CL_GENERATE_ONLY")) {
        byocl_tensor *in = gen_array_tensor(k->in[0]), *want[2], *got[2];
        for (int i = 0; i < k->n_out; i++) {
            want[i] = gen_array_tensor(k->out[i]);
            got[i] = byocl_tensor_new(byocl_tensor_dtype(want[i]), byocl_tensor_shape(want[i]),
                                      NULL);
        }
        run_plan(plan, &in, got);
        for (int i = 0; i < k->n_out; i++) {
            assert_tensor_bytes_equal(got[i], want[i], k->name);
            byocl_tensor_unref(got[i]);
            byocl_tensor_unref(want[i]);
        }
        byocl_tensor_unref(in);
    }
    clg_plan_free(plan);
    byocl_module_free(m);
}

/* The topk cases of tests/gen/gen_ops_index.py on the opencl target: float32 and float16
 * ones run and agree with numpy bit for bit (ties by position, NaN above every number,
 * ascending and descending, values alone); a tuple returned whole is refused, as are
 * integer and float64 data. */
static void test_topk_generated(void **state)
{
    (void)state;
    int ran = 0;
    for (int i = 0; i < N_ITEMS(index_cases); i++) {
        const gen_case *k = &index_cases[i];
        if (strcmp(k->op, "topk") != 0)
            continue;
        bool float_data = is_float(k->in[0]->dtype);
        const char *want_why = !float_data ? "is not supported (the opencl target computes"
                               : k->tuple_result
                                   ? "topk: its (values, indices) tuple is returned whole; the "
                                     "opencl target needs each result taken by a TupleGetItem"
                                   : NULL;
        if (k->tuple_result || !float_data) {
            generated_on_opencl(k, want_why, true);
            if (!float_data)
                continue;
        }
        topk_items_on_opencl(k);
        ran++;
    }
    assert_int_equal(ran, 5);
}

/* topk on random data: both results, each with its readers (an epilogue after the values
 * in its own kernel; the indices as an output), float16 too; values alone; indices alone
 * (read back through the data); a region returning only the indices of both. Refused: a
 * tuple used whole, and a line too long for one work-item. */
static void test_topk(void **state)
{
    (void)state;
    static const char both[] = MAIN("%x: Tensor[(4, 50, 3), float32]")
        "  %0 = topk(%x, k=7, axis=1);\n"
        "  %1 = %0.0;\n  %2 = nn.relu(%1);\n"
        "  %3 = %0.1;\n  (%2, %3)\n}\n";
    run_opts o = {.seed = 3, .expect_launches = 2};
    check_region_opts(both, &o);
    check_region_f16(both);
    static const char one[] = MAIN("%x: Tensor[(2, 300), float32]")
        "  %0 = topk(%x, k=30, ret_type=\"values\", is_ascend=True);\n"
        "  %1 = topk(%x, k=300, ret_type=\"indices\", dtype=\"int32\");\n"
        "  %2 = topk(%x, k=1, axis=0);\n  %3 = %2.1;\n"
        "  (%0, %1, %3)\n}\n";
    check_region(one);

    static const char whole[] = MAIN("%x: Tensor[(4, 5), float32]")
        "  %0 = topk(%x, k=2);\n  %1 = (%0, %x);\n  %1.0\n}\n";
    byocl_module *m = parse(whole);
    char why[256] = "";
    assert_false(clg_supports(byocl_module_find(m, "main"), 1, why, sizeof why));
    assert_string_equal(why, "topk: its (values, indices) tuple is used whole; the opencl "
                             "target needs each result taken by a TupleGetItem");
    byocl_module_free(m);
    static const char longer[] = MAIN("%x: Tensor[(2, 100000), float32]")
        "  topk(%x, k=700, ret_type=\"values\")\n}\n";
    m = parse(longer);
    assert_false(clg_supports(byocl_module_find(m, "main"), 1, why, sizeof why));
    assert_string_equal(why, "topk: keeping 700 of 100000 elements per line takes up to "
                             "70000000 steps in one work-item (at most 2^26); the host sorts it");
    byocl_module_free(m);
}

static void test_take_fast(void **state)
{
    (void)state;
    static const char text[] = MAIN("%x: Tensor[(2, 5), float32], %i: Tensor[(3), int64]")
        "  take(%x, %i, axis=0, mode=\"fast\")\n}\n";
    byocl_module *m = parse(text);
    byocl_function *fn = byocl_module_find(m, "main");
    byocl_cl_plan *plan = NULL;
    byocl_error err = {0};
    if (clg_codegen(fn, NULL, &plan, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    ts_assert_contains(plan->source, "#define GATHER_INDEX(fi, src, ok) { \\\n"
                                     "    const long v_ = (long)LD_ix((fi) / 5); \\\n"
                                     "    ok = v_ >= 0 && v_ < 2; \\\n"
                                     "    const int at_ = ok ? (int)v_ : 0; \\\n"
                                     "    src = at_ * 5 + (fi) % 5; \\\n}\n");
    byocl_shape xs = byocl_shape_make(2, (int64_t[]){2, 5}), is = byocl_shape_make(1, (int64_t[]){3});
    float xv[10];
    for (int i = 0; i < 10; i++)
        xv[i] = (float)i;
    int64_t iv[3] = {1, 2, -1};
    byocl_tensor *in[2] = {byocl_tensor_from_data(BYOCL_FLOAT32, &xs, xv, NULL),
                           byocl_tensor_from_data(BYOCL_INT64, &is, iv, NULL)};
    if (!getenv("BYOCL_TEST_CL_GENERATE_ONLY")) {
        byocl_tensor *got = byocl_tensor_new(BYOCL_FLOAT32, &(byocl_shape){.rank = 2, .dims = {3, 5}}, NULL);
        run_plan(plan, in, &got);
        for (int e = 0; e < 15; e++) {
            double v = byocl_tensor_get(got, e);
            if (e < 5 ? v != 5 + e : !isnan(v))
                fail_msg("element %d is %g", e, v);
        }
        byocl_tensor_unref(got);
    }
    clg_plan_free(plan);

    /* The same indices as a constant: refused, naming the first out of range. */
    const char *names[1] = {"i"};
    if (byocl_bind_params(m, names, &in[1], 1, &err) != BYOCL_OK ||
        byocl_infer_types(m, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    fn = byocl_module_find(m, "main");
    char why[256] = "";
    assert_false(clg_supports(fn, byocl_function_body(fn), why, sizeof why));
    assert_string_equal(why, "take: index 2 is out of range for an axis of 2 (mode \"fast\" "
                             "fails there; the host reports it)");
    op_tensors_free(in, 2);
    byocl_module_free(m);
}

/* ------------------------------------------------------------ cumsum, scatter_elements, scatter_nd */

/* The cumsum, scatter_elements and scatter_nd cases of tests/gen/gen_ops_index.py on the
 * opencl target: float32 and float16 ones run and agree with numpy (the scatters bit for
 * bit, again with their indices a constant of the region; cumsum, which numpy sums in
 * float64, within the documented bound); the integer and float64 ones are refused, saying
 * why. */
static void test_scan_generated(void **state)
{
    (void)state;
    int ran = 0, constant = 0;
    for (int i = 0; i < N_ITEMS(index_cases); i++) {
        const gen_case *k = &index_cases[i];
        bool cumsum = strcmp(k->op, "cumsum") == 0;
        if (!cumsum && strcmp(k->op, "scatter_elements") != 0 &&
            strcmp(k->op, "scatter_nd") != 0)
            continue;
        const char *want_why =
            is_float(k->in[0]->dtype) ? NULL : "is not supported (the opencl target computes";
        bool this_ran = generated_on_opencl(k, want_why, !cumsum);
        ran += this_ran;
        if (this_ran && !cumsum) {
            indices_constant_on_opencl(k, true);
            constant++;
        }
    }
    assert_int_equal(ran, 15);
    assert_int_equal(constant, 11);
}

/* Generates @main of `text` (one output) and runs it on `in`; its output, of `dtype` and
 * `shape`, or NULL with BYOCL_TEST_CL_GENERATE_ONLY (generated only). */
static byocl_tensor *run_text(const char *text, byocl_tensor *const *in, byocl_dtype dtype,
                              const byocl_shape *shape)
{
    byocl_module *m = parse(text);
    byocl_cl_plan *plan = NULL;
    byocl_error err = {0};
    if (clg_codegen(byocl_module_find(m, "main"), NULL, &plan, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(plan->n_outputs, 1);
    byocl_tensor *got = NULL;
    if (!getenv("BYOCL_TEST_CL_GENERATE_ONLY")) {
        got = byocl_tensor_new(dtype, shape, NULL);
        run_plan(plan, in, &got);
    }
    clg_plan_free(plan);
    byocl_module_free(m);
    return got;
}

/* clg_supports refuses node `number` of @main of `text` (-1: the body), saying `why`. */
static void assert_refused(const char *text, int number, const char *why);

/* clg_supports refuses the body of @main of `text` once its parameter `name` is bound to
 * the constant `value`, saying `want_why`. */
static void assert_refused_bound(const char *text, const char *name, byocl_tensor *value,
                                 const char *want_why)
{
    byocl_module *m = parse(text);
    byocl_error err = {0};
    if (byocl_bind_params(m, &name, &value, 1, &err) != BYOCL_OK ||
        byocl_infer_types(m, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    const byocl_function *fn = byocl_module_find(m, "main");
    char why[256] = "";
    assert_false(clg_supports(fn, byocl_function_body(fn), why, sizeof why));
    assert_string_equal(why, want_why);
    byocl_module_free(m);
}

/* cumsum along an axis, reverse and exclusive, with a fused epilogue (one launch) and
 * unfused, float16 too; the axis None; float16 summed into float32 (the dtype attribute);
 * integer results are refused. */
static void test_cumsum(void **state)
{
    (void)state;
    static const char text[] = MAIN("%x: Tensor[(3, 7, 4), float32], %b: Tensor[(4), float32]")
        "  %0 = cumsum(%x, axis=1, exclusive=True, reverse=True);\n"
        "  %1 = add(%0, %b);\n  nn.relu(%1)\n}\n";
    run_opts o = {.seed = 3, .expect_launches = 1,
                  .expect_text = "#define LINES 12\n#define LEN 7\n#define INNER 4\n"
                                 "#define REVERSE 1\n#define EXCLUSIVE 1\n"};
    check_region_opts(text, &o);
    check_region(text);
    check_region_f16(text);
    static const char flat[] = MAIN("%x: Tensor[(5, 6), float32]") "  cumsum(%x)\n}\n";
    check_region(flat);
    check_region_f16(flat);
    static const char widen[] = MAIN("%x: Tensor[(4, 9), float16]")
        "  cumsum(%x, axis=0, dtype=\"float32\")\n}\n";
    check_region(widen);
    static const char ints[] = MAIN("%x: Tensor[(4), int32]") "  cumsum(%x)\n}\n";
    assert_refused(ints, -1,
                   "dtype int32 is not supported (the opencl target computes float32 and "
                   "float16)");
    static const char to_int[] = MAIN("%x: Tensor[(4), float32]")
        "  cumsum(%x, dtype=\"int64\")\n}\n";
    assert_refused(to_int, -1,
                   "dtype int64 is not supported (the opencl target computes float32 and "
                   "float16)");
}

/* One line of 100000 values in [0, 1000): every prefix of the compensated float sum is
 * within 2^-23 relative of the exact (double) running sum, where a plain float sum drifts
 * by far more. */
static void test_cumsum_long(void **state)
{
    (void)state;
    enum { N = 100000 };
    static const char text[] = MAIN("%x: Tensor[(100000), float32]") "  cumsum(%x)\n}\n";
    byocl_shape shape = byocl_shape_make(1, (int64_t[]){N});
    byocl_tensor *x = byocl_tensor_new(BYOCL_FLOAT32, &shape, NULL);
    byocl_tensor_fill_random(x, 41, 0.0, 1000.0);
    byocl_tensor *got = run_text(text, &x, BYOCL_FLOAT32, &shape);
    if (got) {
        const float *xv = byocl_tensor_cdata(x), *g = byocl_tensor_cdata(got);
        double exact = 0, worst = 0, worst_plain = 0;
        float plain = 0;
        for (int i = 0; i < N; i++) {
            exact += xv[i];
            plain += xv[i];
            double e = fabs(g[i] - exact) / exact, p = fabs(plain - exact) / exact;
            worst = e > worst ? e : worst;
            worst_plain = p > worst_plain ? p : worst_plain;
        }
        if (getenv("CL_TEST_VERBOSE"))
            fprintf(stderr, "  cumsum of %d: worst relative error %.3g (plain float sum %.3g)\n",
                    N, worst, worst_plain);
        assert_true(worst <= 0x1p-23);
        assert_true(worst_plain > 0x1p-20); /* the compensation is what keeps it close */
        byocl_tensor_unref(got);
    }
    byocl_tensor_unref(x);
}

/* scatter_elements and scatter_nd with every reduction, as many updates as rows and more,
 * so indices repeat (update keeps the last, in order) and run from -n (negative ones count
 * from the end): bit for bit the reference's, float16 too, with a fused epilogue; indices
 * narrower than the data off the axis leave the rest as it was. */
static void test_scatter(void **state)
{
    (void)state;
    static const char elements[] =
        MAIN("%x: Tensor[(4, 3), float32], %i: Tensor[(6, 3), int64], "
             "%u: Tensor[(6, 3), float32]")
        "  %0 = scatter_elements(%x, %i, %u);\n"
        "  %1 = scatter_elements(%x, %i, %u, reduction=\"add\");\n"
        "  %2 = scatter_elements(%x, %i, %u, reduction=\"mul\");\n"
        "  %3 = scatter_elements(%x, %i, %u, reduction=\"min\");\n"
        "  %4 = scatter_elements(%x, %i, %u, reduction=\"max\");\n"
        "  %5 = nn.relu(%4);\n"
        "  (%0, %1, %2, %3, %5)\n}\n";
    run_opts o = {.seed = 31, .lo = -4, .hi = 4, .exact = true, .expect_launches = 5,
                  .expect_text = "#define SCATTER_SETUP(fi, count) const int want_ = (fi) / 3; "
                                 "\\\nconst int first_ = (fi) % 3; \\\ncount = 6\n"
                                 "#define SCATTER_MATCH(t, from, hit) { \\\n"
                                 "    from = first_ + (t) * 3; \\\n"
                                 "    const long v_ = (long)LD_ix(from); \\\n"
                                 "    hit = (v_ < 0 ? v_ + 4 : v_) == want_; \\\n}\n"};
    char *elements16 = float16_text(elements);
    check_region_opts(elements, &o);
    check_region_opts(elements16, &o);
    free(elements16);

    static const char narrow[] =
        MAIN("%x: Tensor[(4, 5), float32], %i: Tensor[(2, 7), int32], "
             "%u: Tensor[(2, 7), float32]")
        "  scatter_elements(%x, %i, %u, axis=1, reduction=\"add\")\n}\n";
    run_opts o_narrow = {.seed = 32, .lo = -5, .hi = 5, .exact = true,
                         .expect_text = "count = (fi) / 5 < 2 ? 7 : 0\n"};
    check_region_opts(narrow, &o_narrow);

    static const char nd[] =
        MAIN("%x: Tensor[(3, 3, 2), float32], %i: Tensor[(2, 8), int32], "
             "%u: Tensor[(8, 2), float32]")
        "  %0 = scatter_nd(%x, %i, %u);\n"
        "  %1 = scatter_nd(%x, %i, %u, mode=\"add\");\n"
        "  %2 = scatter_nd(%x, %i, %u, mode=\"mul\");\n"
        "  %3 = scatter_nd(%x, %i, %u, mode=\"min\");\n"
        "  %4 = scatter_nd(%x, %i, %u, mode=\"max\");\n"
        "  (%0, %1, %2, %3, %4)\n}\n";
    run_opts o_nd = {.seed = 33, .lo = -3, .hi = 3, .exact = true, .expect_launches = 5,
                     .expect_text = "#define SCATTER_MATCH(t, from, hit) { \\\n"
                                    "    long v_; \\\n    hit = true; \\\n"
                                    "    v_ = (long)LD_ix((t)); \\\n"
                                    "    hit = hit && (v_ < 0 ? v_ + 3 : v_) == w0_; \\\n"
                                    "    v_ = (long)LD_ix(8 + (t)); \\\n"
                                    "    hit = hit && (v_ < 0 ? v_ + 3 : v_) == w1_; \\\n"
                                    "    from = (t) * 2 + s_; \\\n}\n"};
    char *nd16 = float16_text(nd);
    check_region_opts(nd, &o_nd);
    check_region_opts(nd16, &o_nd);
    free(nd16);
}

/* min and max propagate NaN as the reference does: a NaN in the data stays, a NaN update
 * replaces a number and then stays (bit for bit the reference's). */
static void test_scatter_nan(void **state)
{
    (void)state;
    static const char text[] =
        MAIN("%x: Tensor[(4), float32], %i: Tensor[(5), int64], %u: Tensor[(5), float32], "
             "%j: Tensor[(1, 5), int64]")
        "  %0 = scatter_elements(%x, %i, %u, reduction=\"min\");\n"
        "  %1 = scatter_nd(%x, %j, %u, mode=\"max\");\n"
        "  (%0, %1)\n}\n";
    byocl_shape s4 = byocl_shape_make(1, (int64_t[]){4}), s5 = byocl_shape_make(1, (int64_t[]){5});
    byocl_shape s15 = byocl_shape_make(2, (int64_t[]){1, 5});
    float xv[4] = {1, NAN, 3, 4}, uv[5] = {NAN, 5, NAN, 2, -7};
    int64_t iv[5] = {0, 1, 2, -2, 3};
    byocl_tensor *in[4] = {byocl_tensor_from_data(BYOCL_FLOAT32, &s4, xv, NULL),
                           byocl_tensor_from_data(BYOCL_INT64, &s5, iv, NULL),
                           byocl_tensor_from_data(BYOCL_FLOAT32, &s5, uv, NULL),
                           byocl_tensor_from_data(BYOCL_INT64, &s15, iv, NULL)};
    run_opts o = {.exact = true, .inputs = in};
    check_region_opts(text, &o);
    static const char min_only[] =
        MAIN("%x: Tensor[(4), float32], %i: Tensor[(5), int64], %u: Tensor[(5), float32]")
        "  scatter_elements(%x, %i, %u, reduction=\"min\")\n}\n";
    byocl_tensor *got = run_text(min_only, in, BYOCL_FLOAT32, &s4);
    if (got) { /* min: NaN, NaN, NaN (3, then NaN, then 2), min(4, -7) */
        assert_true(isnan(byocl_tensor_get(got, 0)) && isnan(byocl_tensor_get(got, 1)) &&
                    isnan(byocl_tensor_get(got, 2)) && byocl_tensor_get(got, 3) == -7);
        byocl_tensor_unref(got);
    }
    op_tensors_free(in, 4);
}

/* Indices out of range: at run time the update is skipped (the host would fail); constant
 * ones keep the call on the host, naming the first. */
static void test_scatter_out_of_range(void **state)
{
    (void)state;
    static const char elements[] =
        MAIN("%x: Tensor[(3), float32], %i: Tensor[(3), int64], %u: Tensor[(3), float32]")
        "  scatter_elements(%x, %i, %u)\n}\n";
    static const char nd[] =
        MAIN("%x: Tensor[(3), float32], %i: Tensor[(1, 3), int64], %u: Tensor[(3), float32]")
        "  scatter_nd(%x, %i, %u, mode=\"add\")\n}\n";
    byocl_shape s3 = byocl_shape_make(1, (int64_t[]){3});
    byocl_shape s13 = byocl_shape_make(2, (int64_t[]){1, 3});
    float xv[3] = {10, 20, 30}, uv[3] = {1, 2, 4};
    int64_t iv[3] = {5, -1, -4};
    byocl_tensor *in[3] = {byocl_tensor_from_data(BYOCL_FLOAT32, &s3, xv, NULL),
                           byocl_tensor_from_data(BYOCL_INT64, &s3, iv, NULL),
                           byocl_tensor_from_data(BYOCL_FLOAT32, &s3, uv, NULL)};
    byocl_tensor *in_nd[3] = {in[0], byocl_tensor_from_data(BYOCL_INT64, &s13, iv, NULL), in[2]};
    const double want[2][3] = {{10, 20, 2}, {10, 20, 32}}; /* only -1 (element 2) lands */
    for (int k = 0; k < 2; k++) {
        byocl_tensor *got = run_text(k ? nd : elements, k ? in_nd : in, BYOCL_FLOAT32, &s3);
        for (int e = 0; got && e < 3; e++)
            if (byocl_tensor_get(got, e) != want[k][e])
                fail_msg("%s: element %d is %g", k ? "scatter_nd" : "scatter_elements", e,
                         byocl_tensor_get(got, e));
        byocl_tensor_unref(got);
    }
    assert_refused_bound(elements, "i", in[1],
                   "scatter_elements: index 5 is out of range for an axis of 3 (the host "
                   "reports it)");
    assert_refused_bound(nd, "i", in_nd[1],
                   "scatter_nd: index 5 is out of range for an axis of 3 (the host reports it)");
    byocl_tensor_unref(in_nd[1]);
    op_tensors_free(in, 3);
}

/* The gather form's cost bound: numel(output) x candidates up to 2^24 is taken, above it
 * refused with the counts. */
static void test_scatter_cost_bound(void **state)
{
    (void)state;
    static const char at_bound[] =
        MAIN("%x: Tensor[(1024, 1024), float32], %i: Tensor[(16, 1024), int32], "
             "%u: Tensor[(16, 1024), float32]")
        "  scatter_elements(%x, %i, %u)\n}\n";
    byocl_module *m = parse(at_bound);
    const byocl_function *fn = byocl_module_find(m, "main");
    assert_true(clg_supports(fn, byocl_function_body(fn), NULL, 0));
    byocl_module_free(m);
    static const char over[] =
        MAIN("%x: Tensor[(1024, 1024), float32], %i: Tensor[(17, 1024), int32], "
             "%u: Tensor[(17, 1024), float32]")
        "  scatter_elements(%x, %i, %u)\n}\n";
    assert_refused(over, -1,
                   "scatter_elements: 1048576 output elements x 17 candidate updates each is "
                   "over 2^24 steps (the opencl target's gather form; the host applies the "
                   "updates in one pass)");
    static const char nd_over[] =
        MAIN("%x: Tensor[(64, 4096), float32], %i: Tensor[(1, 65), int64], "
             "%u: Tensor[(65, 4096), float32]")
        "  scatter_nd(%x, %i, %u)\n}\n";
    assert_refused(nd_over, -1,
                   "scatter_nd: 262144 output elements x 65 candidate updates each is over "
                   "2^24 steps (the opencl target's gather form; the host applies the updates "
                   "in one pass)");
}

/* A segmentation head as one region: conv2d_transpose + bias_add + relu, a bilinear
 * resize + add, and an argmax over the channels: three kernels, epilogues fused; the
 * int32 positions agree with the reference executor. */
static void test_decoder_region(void **state)
{
    (void)state;
    static const char text[] =
        MAIN("%x: Tensor[(1, 4, 6, 5), float32], %c_w: Tensor[(4, 8, 4, 4), float32], "
             "%c_b: Tensor[(8), float32]")
        "  %0 = nn.conv2d_transpose(%x, %c_w, strides=[2, 2], padding=[1, 1, 1, 1]);\n"
        "  %1 = nn.bias_add(%0, %c_b);\n"
        "  %2 = nn.relu(%1);\n"
        "  %3 = image.resize2d(%2, size=[23, 21], method=\"linear\", "
        "coordinate_transformation_mode=\"half_pixel\");\n"
        "  %4 = add(%3, 1f);\n"
        "  %5 = argmax(%4, axis=[1]);\n"
        "  (%4, %5)\n}\n";
    run_opts o = {.seed = 11, .expect_launches = 3};
    check_region_opts(text, &o);
}

static void test_transpose_concat(void **state)
{
    (void)state;
    static const char t[] = MAIN("%x: Tensor[(2, 3, 4, 5), float32]")
        "  %0 = transpose(%x, axes=[0, 2, 3, 1]);\n  %1 = transpose(%x);\n  (%0, %1)\n}\n";
    check_region(t);
    check_region_f16(t);
    static const char c[] = MAIN("%a: Tensor[(2, 3, 4), float32], %b: Tensor[(2, 1, 4), float32], "
                                 "%d: Tensor[(2, 5, 4), float32]")
        "  %0 = concatenate((%a, %b, %d), axis=1);\n"
        "  %1 = concatenate((%a, %a), axis=0);\n  (%0, %1)\n}\n";
    check_region(c);
    check_region_f16(c);
    check_region(MAIN("%a: Tensor[(2, 3), float32], %b: Tensor[(2, 2), float32]")
                 "  %0 = nn.relu(%a);\n  concatenate((%0, %b), axis=-1)\n}\n");
    /* Inputs that are contiguous blocks of the output (every dimension before the axis
     * 1): up to four in one launch (concatenate.cl), five in two (four, then one). float32
     * blocks move 16 elements a work-item: %d's first 16 as a vector, the rest (and the
     * shorter blocks) one by one. */
    static const char four[] =
        MAIN("%a: Tensor[(1, 3, 5), float32], %b: Tensor[(1, 1, 5), float32], "
             "%d: Tensor[(1, 4, 5), float32], %e: Tensor[(1, 2, 5), float32]")
        "  concatenate((%a, %b, %d, %e), axis=1)\n}\n";
    run_opts o4 = {.seed = 3, .expect_launches = 1,
                   .expect_text = "#define CONCAT_VEC 16\n#define VLOAD vload16\n"
                                  "#define CONCAT_COPY(i, f) switch (f) { case 0: CONCAT_MOVE(x0, L0, O0, i); "
                                  "break; case 1: CONCAT_MOVE(x1, L1, O1, i); break; case 2: "};
    check_region_opts(four, &o4);
    check_region_f16(four);
    run_opts o5 = {.seed = 4, .expect_launches = 2,
                   .expect_text = "#define CONCAT_COPY(i, f) switch (f) { case 0: "
                                  "CONCAT_MOVE(x0, L0, O0, i); break; }\n"};
    check_region_opts(MAIN("%a: Tensor[(1, 3, 5), float32], %b: Tensor[(1, 1, 5), float32], "
                           "%d: Tensor[(1, 4, 5), float32], %e: Tensor[(1, 2, 5), float32], "
                           "%g: Tensor[(1, 2, 5), float32]")
                      "  concatenate((%a, %b, %d, %e, %g), axis=1)\n}\n",
                      &o5);
}

/* Transposes that keep their last axes in place move those runs in vectors where the data
 * are float32 and a run holds a multiple of 4 elements: a channel shuffle's 4x8 planes in
 * vectors of 16 (float16: one element at a time), runs of 12 in vectors of 4; a run of 6
 * moves element by element. All against the reference. */
static void test_transpose_runs(void **state)
{
    (void)state;
    static const char shuffle[] = MAIN("%x: Tensor[(1, 2, 6, 4, 8), float32]")
        "  transpose(%x, axes=[0, 2, 1, 3, 4])\n}\n";
    run_opts o16 = {.seed = 5, .expect_launches = 1,
                    .expect_text = "#define MOVE_VEC 16\n#define VLOAD vload16\n"};
    check_region_opts(shuffle, &o16);
    check_region_f16(shuffle);
    run_opts o4 = {.seed = 6, .expect_launches = 1,
                   .expect_text = "    src = r_ % 3 * 4; \\\n    r_ /= 3; \\\n"
                                  "    src += r_ % 3 * 60; \\\n    r_ /= 3; \\\n"
                                  "    src += r_ % 5 * 12; \\\n    r_ /= 5; \\\n"
                                  "    src += r_ % 2 * 180; \\\n    r_ /= 2; \\\n"
                                  "    dst = (i) * 4; \\\n}\n#define MOVE_VEC 4\n"};
    check_region_opts(MAIN("%x: Tensor[(2, 3, 5, 12), float32]")
                      "  transpose(%x, axes=[0, 2, 1, 3])\n}\n", &o4);
    run_opts o1 = {.seed = 7, .expect_launches = 1, .expect_text = "    dst = (i) * 1; \\\n}\n"};
    check_region_opts(MAIN("%x: Tensor[(2, 3, 6), float32]")
                      "  transpose(%x, axes=[1, 0, 2])\n}\n", &o1);
}

/* The nn.depth_to_space and nn.space_to_depth cases of tests/gen/gen_ops_transform.py on
 * the opencl target: float32 and float16 ones run and agree with numpy bit for bit (a
 * `move` launch); integer ones are refused, saying why. A sub-pixel upsampler (conv2d,
 * relu, depth_to_space, space_to_depth back, an add) is one region, and its block moves
 * are `move` launches named after the ops. */
static void test_subpixel(void **state)
{
    (void)state;
    int ran = 0;
    for (int i = 0; i < N_ITEMS(transform_cases); i++) {
        const gen_case *k = &transform_cases[i];
        if (strcmp(k->op, "nn.depth_to_space") != 0 && strcmp(k->op, "nn.space_to_depth") != 0)
            continue;
        ran += generated_on_opencl(
            k, is_float(k->in[0]->dtype) ? NULL : "is not supported (the opencl target computes",
            true);
    }
    assert_int_equal(ran, 6);
    static const char text[] = MAIN("%x: Tensor[(1, 3, 6, 4), float32], "
                                    "%c_w: Tensor[(12, 3, 3, 3), float32]")
        "  %0 = nn.conv2d(%x, %c_w, padding=[1, 1, 1, 1], channels=12, kernel_size=[3, 3]);\n"
        "  %1 = nn.relu(%0);\n"
        "  %2 = nn.depth_to_space(%1, block_size=2, mode=\"CRD\");\n"
        "  %3 = nn.space_to_depth(%2, block_size=2);\n"
        "  %4 = nn.depth_to_space(%3, block_size=2);\n"
        "  multiply(%4, %4)\n}\n";
    byocl_module *m = parse(text);
    bind_constants(m, 0);
    const byocl_function *fn = byocl_module_find(m, "main");
    for (int node = 0; node < byocl_function_num_nodes(fn); node++) {
        char why[256] = "";
        if (fn->nodes[node].kind == BYOCL_NODE_CALL && !clg_supports(fn, node, why, sizeof why))
            fail_msg("node %d refused: %s", node, why);
    }
    byocl_module_free(m);
    run_opts o = {.seed = 3, .expect_text = "_space_to_depth(__global const float *restrict x, "
                                          "__global float *restrict y, const int N)"};
    check_region_opts(text, &o);
    check_region(text);
    check_region_f16(text);
}

/* Views name other storage; outputs that a group does not write get a copy. */
static void test_views_and_outputs(void **state)
{
    (void)state;
    static const char text[] =
        MAIN("%x: Tensor[(2, 3, 2, 2), float32], %g: Tensor[(3), float32], "
             "%b: Tensor[(3), float32], %m: Tensor[(3), float32], %v: Tensor[(3), float32]")
        "  %0 = nn.relu(%x);\n"
        "  %1 = nn.batch_flatten(%0);\n"
        "  %2 = reshape(%1, newshape=[4, -1]);\n"
        "  %3 = nn.batch_norm(%x, %g, %b, %m, %v);\n"
        "  (%2, %0, %x, %1, %3.1, %3.2, %2)\n}\n";
    /* relu writes output 0 in place; outputs 1 (relu again), 2, 3, 4, 5, 6 are copies;
     * batch_norm's result is not read, so it is not computed. */
    run_opts o = {.seed = 1, .expect_launches = 7};
    check_region_opts(text, &o);
}

/* ------------------------------------------------------------ exact text */

/* conv2d + bias_add + relu with the weight a region input: the weight is packed by a
 * launch, the input laid out by another, and the conv kernel applies the epilogue. */
static const char small_region[] =
    MAIN("%x: Tensor[(1, 2, 5, 5), float32], %w: Tensor[(3, 2, 3, 3), float32], "
         "%b: Tensor[(3), float32]")
    "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);\n"
    "  %1 = nn.bias_add(%0, %b);\n"
    "  nn.relu(%1)\n}\n";

static byocl_cl_plan *generate(byocl_module *m, const byocl_cl_codegen_options *opt)
{
    byocl_error err = {0};
    byocl_cl_plan *plan = NULL;
    if (clg_codegen(byocl_module_find(m, "main"), opt, &plan, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return plan;
}

static const byocl_cl_codegen_options pocl_options = {.compute_units = 2,
                                                      .max_work_group_size = 4096,
                                                      .cpu = true};

static void test_launch_plan_text(void **state)
{
    (void)state;
    byocl_module *m = parse(small_region);
    byocl_cl_plan *plan = generate(m, &pocl_options);
    char *text = clg_plan_text(plan, "opencl_main_0");
    /* Sizes: the packed weight is [1][1][2][9][4] floats (4 output channels, one of them
     * zeros); the laid-out input is 4 planes of 7 x 7 (the padded 5 x 5 input, then a
     * plane of zeros that the last 16-wide tile of the second channel reaches into, and
     * one more to a multiple of 4 planes). */
    assert_string_equal(
        text,
        "# byocl OpenCL launch plan of region @main (symbol opencl_main_0)\n"
        "program: opencl_main_0.cl, build options: -cl-std=CL1.2 -cl-mad-enable -w\n"
        "\n"
        "buffers: 3 inputs, 1 output, 0 constants, 2 scratch\n"
        "  input0  200 bytes  Tensor[(1, 2, 5, 5), float32]  %x\n"
        "  input1  216 bytes  Tensor[(3, 2, 3, 3), float32]  %w\n"
        "  input2  12 bytes  Tensor[(3), float32]  %b\n"
        "  output0  300 bytes  Tensor[(1, 3, 5, 5), float32]  the result (nn.relu)\n"
        "  scratch0  320 bytes\n"
        "    launches 0..2: packed weight of %0 (nn.conv2d) (288 bytes)\n"
        "  scratch1  832 bytes\n"
        "    launches 1..2: laid-out input of %0 (nn.conv2d) (784 bytes)\n"
        "\n"
        "launches, in order: 3 (2.85e-06 GFLOP in all)\n"
        "  0  k0_pack  global [72]  local [8]\n"
        "     computes: packed weight of %0 (nn.conv2d)\n"
        "     args: input1 scratch0 int 72\n"
        "  1  k1_conv2d_input  global [7, 1, 4]  local [1, 1, 1]\n"
        "     computes: laid-out input of %0 (nn.conv2d)\n"
        "     args: input0 scratch1\n"
        "  2  k2_conv2d  global [3, 1, 1]  local [1, 1, 1]\n"
        "     computes: nn.conv2d+nn.bias_add+nn.relu (%0 to the result) (2.85e-06 GFLOP)\n"
        "     args: scratch1 scratch0 output0 int 2 input2\n");
    free(text);
    clg_plan_free(plan);
    byocl_module_free(m);
}

/* The specialization of the conv kernel: its #defines and its epilogue. */
static void test_kernel_text(void **state)
{
    (void)state;
    byocl_module *m = parse(small_region);
    byocl_cl_plan *plan = generate(m, &pocl_options);
    const char *start = strstr(plan->source, "/* ---- k2_conv2d");
    assert_non_null(start);
    const char *end = strstr(start, "/* conv2d.cl:");
    assert_non_null(end);
    char *got = strndup(start, (size_t)(end - start));
    assert_string_equal(
        got,
        "/* ---- k2_conv2d: nn.conv2d+nn.bias_add+nn.relu (%0 to the result) ---- */\n"
        "__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void k2_conv2d("
        "__global const float *restrict x, __global const float *restrict w, "
        "__global float *restrict y, const int CIN_G, __global const float *restrict e0);\n"
        "#define KNAME k2_conv2d\n"
        "#define KPARAMS __global const float *restrict x, __global const float *restrict w, "
        "__global float *restrict y, const int CIN_G, __global const float *restrict e0\n"
        "#define LD_x(i) BYOCL_LD_F32(x, i)\n"
        "#define LD_w(i) BYOCL_LD_F32(w, i)\n"
        "#define ST_Y(i, v) BYOCL_ST_F32(y, i, v)\n"
        "#define XT float\n"
        "#define VEC float16\n"
        "#define VLOAD_X(p) vload16(0, (p))\n"
        "#define PT 16\n"
        "#define OCT 4\n"
        "#define G 1\n"
        "#define OB 1\n"
        "#define OC_G 3\n"
        "#define OC 3\n"
        "#define OH 5\n"
        "#define OW 5\n"
        "#define WPH 7\n"
        "#define XC_STRIDE 49\n"
        "#define XN_STRIDE (G * CIN_G * XC_STRIDE)\n"
        "#define NTAPS 9\n"
        /* Its taps span offsets 0 to 31 of a channel; 9 x 4 multiply-adds a channel, so
         * four channels (4 * 49) ahead. */
        "#define PREFETCH_X(p) BYOCL_PREFETCH((p) + 196); BYOCL_PREFETCH((p) + 212); "
        "BYOCL_PREFETCH((p) + 227)\n"
        "#define CONV_TAPS(T) { const __global XT *xr = xp; T(0) T(1) T(2) T(7) T(8) T(9) T(14) "
        "T(15) T(16) }\n"
        "#define LD_e0(i) BYOCL_LD_F32(e0, i)\n"
        "#define EPILOGUE(v, fi) do { \\\n"
        "    /* %1 (nn.bias_add) */ \\\n"
        "    v = v + LD_e0((fi) / 25); \\\n"
        "    /* the result (nn.relu) */ \\\n"
        "    v = v < 0.0f ? 0.0f : v; \\\n"
        "} while (0)\n"
        /* The same steps on a tile of 16 outputs in one row (WPH 7 > OW 5): the bias is
         * constant along the tile, one element broadcast; constant along the plane too,
         * so tiles that cross rows take the vector form as well (EPILOGUE_V_PLANE). */
        "#define EPILOGUE_V(v, fi) do { \\\n"
        "    /* %1 (nn.bias_add) */ \\\n"
        "    v = v + ((VEC)(LD_e0((fi) / 25))); \\\n"
        "    /* the result (nn.relu) */ \\\n"
        "    v = v < 0.0f ? 0.0f : v; \\\n"
        "} while (0)\n"
        "#define VSTORE_Y(fi, v) BYOCL_VSTORE_F32(16, (v), y + (fi))\n"
        "#define EPILOGUE_V_PLANE 1\n");
    free(got);
    /* Every #define of the instance is undone after it. */
    assert_non_null(strstr(end, "#undef CONV_TAPS\n#undef LD_e0\n#undef EPILOGUE\n"
                                "#undef EPILOGUE_V\n#undef VSTORE_Y\n#undef EPILOGUE_V_PLANE\n"));
    clg_plan_free(plan);
    byocl_module_free(m);
}

/* Layers of one shape and epilogue launch one kernel: the program holds it once (the
 * driver compiles it once), both launches name it, and the result is still right. Each
 * kernel declares the work-group size it is launched with. */
static void test_equal_kernels_once(void **state)
{
    (void)state;
    static const char text[] =
        MAIN("%x: Tensor[(1, 4, 6, 6), float32], %c_w1: Tensor[(4, 4, 3, 3), float32], "
             "%c_w2: Tensor[(4, 4, 3, 3), float32], %c_w3: Tensor[(4, 4, 3, 3), float32]")
        "  %0 = nn.conv2d(%x, %c_w1, padding=[1, 1, 1, 1]);\n"
        "  %1 = nn.relu(%0);\n"
        "  %2 = nn.conv2d(%1, %c_w2, padding=[1, 1, 1, 1]);\n"
        "  %3 = nn.relu(%2);\n"
        "  %4 = nn.conv2d(%3, %c_w3, padding=[1, 1, 1, 1]);\n"
        "  %5 = add(%4, %1);\n"
        "  nn.relu(%5)\n}\n";
    byocl_module *m = parse(text);
    bind_constants(m, 0);
    byocl_cl_plan *plan = generate(m, &pocl_options);
    /* Per conv: its input layout and the conv; the third conv's epilogue differs. */
    assert_int_equal(plan->n_launches, 6);
    const char *want[] = {"k0_conv2d_input", "k1_conv2d", "k0_conv2d_input",
                          "k1_conv2d",       "k0_conv2d_input", "k5_conv2d"};
    for (int l = 0; l < plan->n_launches; l++) {
        assert_string_equal(plan->launches[l].kernel, want[l]);
        char declared[160];
        const size_t *local = plan->launches[l].local;
        snprintf(declared, sizeof declared,
                 "__kernel __attribute__((reqd_work_group_size(%zu, %zu, %zu))) void %s(",
                 local[0], local[1], local[2] ? local[2] : 1, want[l]);
        ts_assert_contains(plan->source, declared);
    }
    assert_int_equal(ts_count_substrings(plan->source, "#define KNAME "), 3);
    clg_plan_free(plan);
    byocl_module_free(m);
    run_opts o = {.seed = 5, .expect_launches = 6};
    check_region_opts(text, &o);
    /* Input channels are an argument: 1x1 convs of 8 and 12 channels (densenet's
     * growing inputs) share one kernel, each launch passing its own count. */
    static const char growing[] =
        MAIN("%x: Tensor[(1, 8, 4, 4), float32], %c_w1: Tensor[(4, 8, 1, 1), float32], "
             "%c_w2: Tensor[(4, 12, 1, 1), float32]")
        "  %0 = nn.conv2d(%x, %c_w1);\n"
        "  %1 = concatenate((%x, %0), axis=1);\n"
        "  %2 = nn.conv2d(%1, %c_w2);\n"
        "  %3 = concatenate((%1, %2), axis=1);\n"
        "  nn.relu(%3)\n}\n";
    m = parse(growing);
    bind_constants(m, 0);
    plan = generate(m, &pocl_options);
    int convs = 0;
    for (int l = 0; l < plan->n_launches; l++) {
        const byocl_cl_launch *launch = &plan->launches[l];
        if (!strstr(launch->label, "nn.conv2d"))
            continue;
        assert_string_equal(launch->kernel, "k0_conv2d");
        assert_int_equal(launch->args[3].kind, BYOCL_CL_ARG_INT);
        assert_int_equal(launch->args[3].i, convs++ ? 12 : 8);
    }
    assert_int_equal(convs, 2);
    /* The first concatenation, of a parameter, is one launch (kernels_cl/concatenate.cl):
     * x0, x1, y, then each input's length and offset, (128, 0, 64, 128); it writes its
     * result into slice 0 of the second one, which the second conv writes slice 1 of
     * (cl_concat.c), so the second has no launch. */
    const int32_t want_args[4] = {128, 0, 64, 128};
    int concats = 0;
    convs = 0;
    for (int l = 0; l < plan->n_launches; l++) {
        const byocl_cl_launch *launch = &plan->launches[l];
        if (strstr(launch->label, "nn.conv2d") && convs++ == 1) {
            assert_int_equal(launch->args[2].buffer.kind, BYOCL_CL_BUF_SLICE);
            assert_int_equal(launch->args[2].buffer.index, 1);
        }
        if (!strstr(launch->label, "concatenate"))
            continue;
        assert_true(concats++ == 0);
        assert_non_null(strstr(launch->kernel, "_concatenate"));
        assert_int_equal(launch->n_args, 7);
        assert_int_equal(launch->args[2].buffer.kind, BYOCL_CL_BUF_SLICE);
        assert_int_equal(launch->args[2].buffer.index, 0);
        for (int a = 0; a < 4; a++) {
            assert_int_equal(launch->args[3 + a].kind, BYOCL_CL_ARG_INT);
            assert_int_equal(launch->args[3 + a].i, want_args[a]);
        }
    }
    assert_int_equal(concats, 1);
    /* Each slice's sub-buffer runs on to the end of the concatenation's buffer (16
     * channels of 16 floats, then 64 bytes of slack), which a kernel may read past it. */
    assert_int_equal(plan->n_slices, 2);
    assert_int_equal(plan->slices[0].offset, 0);
    assert_int_equal(plan->slices[0].bytes, 16 * 16 * 4 + 64);
    assert_int_equal(plan->slices[1].offset, 12 * 16 * 4);
    assert_int_equal(plan->slices[1].bytes, 4 * 16 * 4 + 64);
    assert_int_equal(plan->slices[0].scratch, plan->slices[1].scratch);
    clg_plan_free(plan);
    byocl_module_free(m);
    o.expect_launches = 0;
    check_region_opts(growing, &o);
}

/* Launches of a concatenation kernel in the plan of `text` for a device aligning buffers
 * to `align` bytes. */
static int concat_launches(const char *text, int align)
{
    byocl_module *m = parse(text);
    bind_constants(m, 0);
    byocl_cl_codegen_options opt = pocl_options;
    opt.mem_base_align = align;
    byocl_cl_plan *plan = generate(m, &opt);
    int n = 0;
    for (int l = 0; l < plan->n_launches; l++)
        n += strstr(plan->launches[l].kernel, "_concatenate") != NULL;
    clg_plan_free(plan);
    byocl_module_free(m);
    return n;
}

/* Concatenations in place (cl_concat.c): a dense block's ever longer concatenations have
 * no launch, each input computed into its slice of the last one, nested; where an input
 * cannot be placed the concatenation copies. The results are the reference's each way. */
static void test_concat_in_place(void **state)
{
    (void)state;
    static const char dense[] =
        MAIN("%x: Tensor[(1, 8, 4, 4), float32], %c_w1: Tensor[(4, 8, 3, 3), float32], "
             "%c_w2: Tensor[(4, 12, 3, 3), float32]")
        "  %0 = nn.relu(%x);\n"
        "  %1 = concatenate((%0,), axis=1);\n"
        "  %2 = nn.conv2d(%1, %c_w1, padding=[1, 1, 1, 1]);\n"
        "  %3 = concatenate((%0, %2), axis=1);\n"
        "  %4 = nn.conv2d(%3, %c_w2, padding=[1, 1, 1, 1]);\n"
        "  %5 = concatenate((%0, %2, %4), axis=1);\n"
        "  nn.relu(%5)\n}\n";
    byocl_module *m = parse(dense);
    bind_constants(m, 0);
    byocl_cl_plan *plan = generate(m, &pocl_options);
    char *text = clg_plan_text(plan, "main");
    ts_assert_contains(text, "2 scratch (5 slices: values written in place into concatenations)\n");
    ts_assert_contains(text, "  scratch0  1088 bytes\n"
                             "    launches 0..5: %8 (concatenate) (1088 bytes)\n"
                             "    slice2 at 0: launches 3..3: %5 (concatenate) (768 bytes)\n"
                             "    slice0 at 0: launches 1..1: %2 (concatenate) (512 bytes)\n"
                             "    slice1 at 0: launches 0..0: %0 (nn.relu) (512 bytes)\n"
                             "    slice3 at 512: launches 2..2: %3 (nn.conv2d) (256 bytes)\n"
                             "    slice4 at 768: launches 4..4: %6 (nn.conv2d) (256 bytes)\n");
    ts_assert_contains(text, "     computes: nn.relu (%0) (1.28e-07 GFLOP)\n"
                             "     args: slice1 input0\n");
    assert_null(strstr(text, "concatenate.cl"));
    free(text);
    clg_plan_free(plan);
    byocl_module_free(m);
    run_opts o = {.seed = 3, .expect_launches = 6, .reject_text = "_concatenate"};
    check_region_opts(dense, &o);
    check_region_f16(dense); /* slices of 2-byte elements: 256 and 384 bytes in */
    assert_int_equal(concat_launches(dense, 0), 0);
    /* Aligned to 512 bytes, the last input (at 768) cannot be placed: the last
     * concatenation copies, the two before it stay in place. */
    assert_int_equal(concat_launches(dense, 512), 1);
    o = (run_opts){.seed = 4, .mem_base_align = 512};
    check_region_opts(dense, &o);

    /* Each of these keeps its copy: the same tensor twice, a slice at byte 36 (one
     * channel of 3x3), two images, a concatenation that is the region's output, an input
     * that is one. */
    static const char *const copies[] = {
        MAIN("%x: Tensor[(1, 8, 4, 4), float32]")
        "  %0 = nn.relu(%x);\n  %1 = concatenate((%0, %0), axis=1);\n  exp(%1)\n}\n",
        MAIN("%x: Tensor[(1, 1, 3, 3), float32], %y: Tensor[(1, 2, 3, 3), float32]")
        "  %0 = nn.relu(%x);\n  %1 = exp(%y);\n  %2 = concatenate((%0, %1), axis=1);\n"
        "  negative(%2)\n}\n",
        MAIN("%x: Tensor[(2, 8, 4, 4), float32]")
        "  %0 = nn.relu(%x);\n  %1 = exp(%x);\n  %2 = concatenate((%0, %1), axis=1);\n"
        "  negative(%2)\n}\n",
        MAIN("%x: Tensor[(1, 8, 4, 4), float32]")
        "  %0 = nn.relu(%x);\n  %1 = exp(%x);\n  concatenate((%0, %1), axis=1)\n}\n",
        MAIN("%x: Tensor[(1, 8, 4, 4), float32]")
        "  %0 = nn.relu(%x);\n  %1 = exp(%x);\n  %2 = concatenate((%0, %1), axis=1);\n"
        "  %3 = negative(%2);\n  (%3, %1)\n}\n",
    };
    for (size_t i = 0; i < sizeof copies / sizeof *copies; i++) {
        if (concat_launches(copies[i], 0) < 1) /* two images: one launch per input */
            fail_msg("case %zu: expected the concatenation to copy:\n%s", i, copies[i]);
        o = (run_opts){.seed = 10 + i};
        check_region_opts(copies[i], &o);
    }
}

/* Float16 storage: ushort pointers read through vload_half, results stored rounded, a
 * float16 value entering a fused step rounded as the unfused graph would store it. */
static void test_float16_text(void **state)
{
    (void)state;
    byocl_module *m = parse(MAIN("%x: Tensor[(2, 8), float16], %y: Tensor[(8), float16]")
                            "  %0 = add(%x, %y);\n  %1 = exp(%0);\n  cast(%1, dtype=\"float32\")\n}\n");
    byocl_cl_plan *plan = generate(m, &pocl_options);
    assert_int_equal(plan->n_launches, 1);
    ts_assert_contains(plan->source,
                       "#define KPARAMS __global float *restrict y, "
                       "__global const ushort *restrict e0, __global const ushort *restrict e1\n"
                       "#define ST_Y(i, v) BYOCL_ST_F32(y, i, v)\n"
                       "#define NOUT 16\n"
                       "#define LD_e0(i) BYOCL_LD_F16(e0, i)\n"
                       "#define LD_FIRST(fi) LD_e0((fi))\n"
                       "#define LD_e1(i) BYOCL_LD_F16(e1, i)\n"
                       "#define EPILOGUE(v, fi) do { \\\n"
                       "    /* %0 (add) */ \\\n"
                       "    v = v + LD_e1((fi) % 8); \\\n"
                       "    v = byocl_round_f16(v); \\\n"
                       "    /* %1 (exp) */ \\\n"
                       "    v = exp(v); \\\n"
                       "    v = byocl_round_f16(v); \\\n"
                       "    /* the result (cast) */ \\\n"
                       "} while (0)\n");
    clg_plan_free(plan);
    byocl_module_free(m);
}

/* ------------------------------------------------------------ --emit files */

static void test_plan_write(void **state)
{
    (void)state;
    byocl_module *m = parse(small_region);
    byocl_cl_plan *plan = generate(m, &pocl_options);
    const char *dir = ts_tmpdir("cl_codegen_emit");
    byocl_error err = {0};
    assert_int_equal(clg_plan_write(plan, dir, "opencl_main_0", &err), BYOCL_OK);
    char path[1024];
    snprintf(path, sizeof path, "%s/opencl_main_0.cl", dir);
    char *source = ts_read_file(path, NULL);
    assert_string_equal(source, plan->source);
    snprintf(path, sizeof path, "%s/opencl_main_0.launch.txt", dir);
    char *launch = ts_read_file(path, NULL);
    char *want = clg_plan_text(plan, "opencl_main_0");
    assert_string_equal(launch, want);
    free(source);
    free(launch);
    free(want);
    /* A folder that does not exist is an I/O error naming the file. */
    snprintf(path, sizeof path, "%s/missing", dir);
    assert_int_equal(clg_plan_write(plan, path, "opencl_main_0", &err), BYOCL_ERR_IO);
    ts_assert_contains(err.msg, "missing/opencl_main_0.cl");
    assert_int_equal(clg_plan_write(plan, dir, "a/b", &err), BYOCL_ERR_INVALID);
    ts_remove_tree(dir);
    clg_plan_free(plan);
    byocl_module_free(m);
}

/* ------------------------------------------------------------ supports, errors */

static void assert_refused(const char *text, int number, const char *why)
{
    byocl_module *m = parse(text);
    byocl_function *fn = byocl_module_find(m, "main");
    int node = number >= 0 ? byocl_text_node_by_number(fn, number) : byocl_function_body(fn);
    char got[256] = "unchanged";
    assert_false(clg_supports(fn, node, got, sizeof got));
    assert_string_equal(got, why);
    byocl_module_free(m);
}

static void test_supports(void **state)
{
    (void)state;
    byocl_module *m = parse(small_region);
    byocl_function *fn = byocl_module_find(m, "main");
    char why[128] = "unchanged";
    for (int n = 0; n <= 1; n++)
        assert_true(clg_supports(fn, byocl_text_node_by_number(fn, n), why, sizeof why));
    assert_true(clg_supports(fn, byocl_function_body(fn), why, sizeof why));
    assert_string_equal(why, "");
    assert_false(clg_supports(fn, byocl_function_param(fn, 0), why, sizeof why));
    assert_string_equal(why, "only op calls run on the opencl target");
    assert_false(clg_supports(fn, 999, why, sizeof why));
    assert_string_equal(why, "no such node");
    byocl_module_free(m);

    assert_refused(MAIN("%x: Tensor[(4, 6), float32]")
                   "  %0 = split(%x, indices_or_sections=2);\n  %0.0\n}\n",
                   0, "op split is not supported by the opencl target");
    assert_refused(MAIN("%x: Tensor[(4, 6), int32]") "  add(%x, %x)\n}\n", -1,
                   "dtype int32 is not supported (the opencl target computes float32 and "
                   "float16)");
    assert_refused(MAIN("%x: Tensor[(4, 6), float32]") "  cast(%x, dtype=\"int64\")\n}\n", -1,
                   "dtype int64 is not supported (the opencl target computes float32 and "
                   "float16)");
    /* comparisons and where take float and bool tensors, not integer ones */
    assert_refused(MAIN("%x: Tensor[(4, 6), int32]") "  less(%x, %x)\n}\n", -1,
                   "dtype int32 is not supported (the opencl target computes float32 and "
                   "float16)");
    assert_refused(MAIN("%x: Tensor[(4, 6), int64], %c: Tensor[(6), bool]")
                   "  where(%c, %x, %x)\n}\n", -1,
                   "dtype int64 is not supported (the opencl target computes float32 and "
                   "float16)");
    assert_refused(MAIN("%x: Tensor[(4, 6), float32], %k: int8") "  trilu(%x, %k)\n}\n", -1,
                   "trilu's k is int8 (the opencl target reads int32 and int64)");
    assert_refused(MAIN("%x: Tensor[(4, 6), float32], %i: Tensor[(2), int8]")
                   "  take(%x, %i, axis=1)\n}\n", -1,
                   "take's indices are int8 (the opencl target reads int32 and int64)");
    assert_refused(MAIN("%x: Tensor[(0, 6), float32]") "  nn.relu(%x)\n}\n", -1,
                   "empty tensors are not supported");
    assert_refused(MAIN("%x: Tensor[(1, 1, 20, 20), float32], %w: Tensor[(1, 1, 17, 17), float32]")
                   "  nn.conv2d(%x, %w)\n}\n", -1,
                   "a kernel of 289 taps is not supported (at most 256)");
    assert_refused(MAIN("%x: Tensor[(1, 1, 20, 20), float32], %w: Tensor[(1, 1, 1, 1), float32]")
                   "  nn.conv2d(%x, %w, strides=[17, 1])\n}\n", -1,
                   "strides above 16 are not supported");
    assert_refused("#[version = \"0.0.5\"]\n"
                   "def @f(%a: Tensor[(2), float32]) { nn.relu(%a) }\n"
                   "def @main(%x: Tensor[(2), float32]) {\n  @f(%x)\n}\n",
                   -1, "calls of global functions (@f) are not supported by the opencl target");
}

static void test_codegen_errors(void **state)
{
    (void)state;
    byocl_error err = {0};
    byocl_cl_plan *plan = (byocl_cl_plan *)&err; /* must be reset to NULL on failure */
    byocl_module *m = parse(MAIN("%x: Tensor[(4, 6), float32]")
                            "  %0 = nn.relu(%x);\n  %1 = split(%0, indices_or_sections=2);\n"
                            "  %1.1\n}\n");
    assert_int_equal(clg_codegen(byocl_module_find(m, "main"), NULL, &plan, &err),
                     BYOCL_ERR_UNSUPPORTED);
    assert_null(plan);
    assert_string_equal(err.msg, "in @main, %1 (split) at 4:8: op split is not supported by the "
                                 "opencl target");
    byocl_module_free(m);

    /* Not type-checked yet. */
    m = NULL;
    static const char relu[] = MAIN("%x: Tensor[(4, 6), float32]") "  nn.relu(%x)\n}\n";
    assert_int_equal(byocl_text_parse(relu, strlen(relu), "r.relay", NULL, &m, &err), BYOCL_OK);
    assert_int_equal(clg_codegen(byocl_module_find(m, "main"), NULL, &plan, &err),
                     BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "@main is not type-checked (run byocl_infer_types first)");
    assert_int_equal(clg_codegen(NULL, NULL, &plan, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "clg_codegen: missing region");
    assert_int_equal(clg_codegen(byocl_module_find(m, "main"), NULL, NULL, NULL),
                     BYOCL_ERR_INVALID);
    clg_plan_free(NULL);
    byocl_module_free(m);
}

/* ------------------------------------------------------------ pieces */

/* The one-pass float32 packers give what packing element by element gives: grouped and
 * depthwise convs with a ragged last block of output channels, dense and batched weights
 * in both layouts with a ragged last block of units. */
static void expect_same_packing(int64_t n, int64_t weight_elems, const clg_packing *p,
                                const void *sched)
{
    float *w = malloc((size_t)weight_elems * sizeof *w), *bulk = malloc((size_t)n * sizeof *bulk);
    assert_true(w && bulk);
    for (int64_t i = 0; i < weight_elems; i++)
        w[i] = (float)(i + 1);
    p->pack_f32(sched, w, bulk);
    for (int64_t i = 0; i < n; i++) {
        int64_t from = p->source(sched, i);
        float want = from < 0 ? 0.0f : w[from];
        if (bulk[i] != want)
            fail_msg("packed element %lld: %g, want %g", (long long)i, bulk[i], want);
    }
    free(w);
    free(bulk);
}

static int64_t conv_src(const void *s, int64_t i) { return clg_conv_pack_source(s, i); }
static void conv_all(const void *s, const float *w, float *o) { clg_conv_pack_f32(s, w, o); }
static int64_t dense_src(const void *s, int64_t i) { return clg_dense_pack_source(s, i); }
static void dense_all(const void *s, const float *w, float *o) { clg_dense_pack_f32(s, w, o); }

static void test_weight_packing(void **state)
{
    (void)state;
    const clg_packing conv = {conv_src, NULL, conv_all}, dense = {dense_src, NULL, dense_all};
    const clg_conv_sched convs[] = {
        {.groups = 2, .cin_g = 3, .oc_g = 5, .oct = 4, .ob = 2, .ntaps = 9},
        {.groups = 3, .cin_g = 1, .oc_g = 1, .oct = 1, .ob = 1, .ntaps = 4},
        {.groups = 1, .cin_g = 7, .oc_g = 16, .oct = 8, .ob = 2, .ntaps = 1},
    };
    for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++) {
        const clg_conv_sched *c = &convs[i];
        expect_same_packing(c->groups * c->ob * c->cin_g * c->ntaps * c->oct,
                            c->groups * c->oc_g * c->cin_g * c->ntaps, &conv, c);
    }
    for (int ku = 0; ku < 2; ku++) {
        const clg_dense_sched denses[] = {
            {.k = 3, .u = 6, .w_matrices = 2, .w_ku = ku, .ut = 4, .ub = 2},
            {.k = 5, .u = 16, .w_matrices = 1, .w_ku = ku, .ut = 16, .ub = 1},
        };
        for (size_t i = 0; i < sizeof denses / sizeof denses[0]; i++) {
            const clg_dense_sched *d = &denses[i];
            expect_same_packing(d->w_matrices * d->ub * d->k * d->ut,
                                d->w_matrices * d->u * d->k, &dense, d);
        }
    }
}

static void test_float_literals(void **state)
{
    (void)state;
    static const struct {
        double v;
        const char *want;
    } cases[] = {
        {0.1, "0.1f"},          {2, "2.0f"},       {-1e-5, "(-1e-05f)"},
        {1e-5, "1e-05f"},       {0.25, "0.25f"},   {3.4028234663852886e38, "3.4028235e+38f"},
        {INFINITY, "INFINITY"}, {-INFINITY, "(-INFINITY)"}, {NAN, "NAN"},
        {-0.0, "(-0.0f)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[48];
        clg_float_literal(cases[i].v, buf, sizeof buf);
        assert_string_equal(buf, cases[i].want);
    }
}

static void test_broadcast_offsets(void **state)
{
    (void)state;
    static const int64_t out4[4] = {2, 3, 4, 5};
    byocl_shape out = byocl_shape_make(4, out4);
    static const struct {
        int rank;
        int64_t dims[4];
        int axis;
        const char *want;
    } cases[] = {
        {4, {2, 3, 4, 5}, -1, "(fi)"},                         /* same shape */
        {3, {3, 1, 1}, -1, "(fi) / 20 % 3"},                   /* a channel vector */
        {1, {3}, 1, "(fi) / 20 % 3"},                          /* bias_add along axis 1 */
        {1, {5}, -1, "(fi) % 5"},                              /* the last axis */
        {0, {0}, -1, "0"},                                     /* a scalar */
        {4, {2, 1, 4, 1}, -1, "(fi) / 5 % 4 + ((fi) / 60) * 4"}, /* two axes */
        {3, {3, 4, 5}, -1, "(fi) % 60"},                       /* all but the batch */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        byocl_shape operand = byocl_shape_make(cases[i].rank, cases[i].dims);
        char buf[256];
        clg_broadcast_offset(&out, &operand, cases[i].axis, "(fi)", buf, sizeof buf);
        assert_string_equal(buf, cases[i].want);
    }
}

/* Values whose lives do not overlap share scratch buffers. */
static void test_buffer_reuse(void **state)
{
    (void)state;
    static const char text[] = MAIN("%x: Tensor[(2, 3, 4), float32]")
        "  %0 = transpose(%x, axes=[1, 2, 0]);\n  %1 = transpose(%0, axes=[1, 2, 0]);\n"
        "  %2 = transpose(%1, axes=[1, 2, 0]);\n  %3 = transpose(%2, axes=[1, 2, 0]);\n"
        "  transpose(%3, axes=[1, 2, 0])\n}\n";
    byocl_module *m = parse(text);
    byocl_cl_plan *plan = generate(m, &pocl_options);
    /* %0 and %2 take turns in one buffer, %1 and %3 in the other: 96 bytes each, and
     * the 64 bytes of slack of a value's buffer. */
    assert_int_equal(plan->n_launches, 5);
    assert_int_equal(plan->n_scratch, 2);
    ts_assert_contains(plan->buffers_text,
                       "  scratch0  192 bytes\n"
                       "    launches 0..1: %0 (transpose) (160 bytes)\n"
                       "    launches 2..3: %2 (transpose) (160 bytes)\n"
                       "  scratch1  192 bytes\n"
                       "    launches 1..2: %1 (transpose) (160 bytes)\n"
                       "    launches 3..4: %3 (transpose) (160 bytes)\n");
    clg_plan_free(plan);
    byocl_module_free(m);
    check_region(text);
}

/* ------------------------------------------------------------ test list */

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv2d_padded),
        cmocka_unit_test(test_conv2d_channels),
        cmocka_unit_test(test_conv2d_prologue),
        cmocka_unit_test(test_conv2d_strided),
        cmocka_unit_test(test_conv2d_dilated),
        cmocka_unit_test(test_conv2d_1x1),
        cmocka_unit_test(test_conv2d_grouped),
        cmocka_unit_test(test_conv2d_depthwise),
        cmocka_unit_test(test_conv2d_depthwise_plane),
        cmocka_unit_test(test_conv2d_prefetch),
        cmocka_unit_test(test_conv2d_fused),
        cmocka_unit_test(test_dense_gemv),
        cmocka_unit_test(test_out_dtype),
        cmocka_unit_test(test_dense),
        cmocka_unit_test(test_batch_matmul),
        cmocka_unit_test(test_max_pool),
        cmocka_unit_test(test_avg_pool),
        cmocka_unit_test(test_global_pool),
        cmocka_unit_test(test_pool_plane),
        cmocka_unit_test(test_unary),
        cmocka_unit_test(test_binary_broadcast),
        cmocka_unit_test(test_scalar_constants),
        cmocka_unit_test(test_bias_add_batch_norm),
        cmocka_unit_test(test_float_functions),
        cmocka_unit_test(test_erf),
        cmocka_unit_test(test_math_functions),
        cmocka_unit_test(test_elemwise_chain),
        cmocka_unit_test(test_softmax),
        cmocka_unit_test(test_reduce),
        cmocka_unit_test(test_layer_norm_region),
        cmocka_unit_test(test_reduce_generated),
        cmocka_unit_test(test_ops_generated),
        cmocka_unit_test(test_decoder_region),
        cmocka_unit_test(test_index_generated),
        cmocka_unit_test(test_gather_fusion),
        cmocka_unit_test(test_take_fast),
        cmocka_unit_test(test_gather),
        cmocka_unit_test(test_bool_generated),
        cmocka_unit_test(test_bool_chains),
        cmocka_unit_test(test_one_hot_generated),
        cmocka_unit_test(test_one_hot),
        cmocka_unit_test(test_pad_generated),
        cmocka_unit_test(test_pad),
        cmocka_unit_test(test_trilu_gather_nd_generated),
        cmocka_unit_test(test_trilu_gather_nd_region),
        cmocka_unit_test(test_topk_generated),
        cmocka_unit_test(test_topk),
        cmocka_unit_test(test_scan_generated),
        cmocka_unit_test(test_cumsum),
        cmocka_unit_test(test_cumsum_long),
        cmocka_unit_test(test_scatter),
        cmocka_unit_test(test_scatter_nan),
        cmocka_unit_test(test_scatter_out_of_range),
        cmocka_unit_test(test_scatter_cost_bound),
        cmocka_unit_test(test_transpose_concat),
        cmocka_unit_test(test_transpose_runs),
        cmocka_unit_test(test_subpixel),
        cmocka_unit_test(test_views_and_outputs),
        cmocka_unit_test(test_launch_plan_text),
        cmocka_unit_test(test_kernel_text),
        cmocka_unit_test(test_vector_epilogue),
        cmocka_unit_test(test_float16_text),
        cmocka_unit_test(test_equal_kernels_once),
        cmocka_unit_test(test_concat_in_place),
        cmocka_unit_test(test_plan_write),
        cmocka_unit_test(test_supports),
        cmocka_unit_test(test_codegen_errors),
        cmocka_unit_test(test_float_literals),
        cmocka_unit_test(test_weight_packing),
        cmocka_unit_test(test_broadcast_offsets),
        cmocka_unit_test(test_buffer_reuse),
    };
    /* BYOCL_TEST_FILTER="test_conv2d_*" runs some of the tests (valgrind runs). */
    if (getenv("BYOCL_TEST_FILTER"))
        cmocka_set_test_filter(getenv("BYOCL_TEST_FILTER"));
    return cmocka_run_group_tests(tests, setup_cl, teardown_cl);
}
