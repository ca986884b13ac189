/* The graph executor (runtime/): storage plans that never let live tensors share memory,
 * results bit for bit equal to the reference executor through the "ref" host backend,
 * outputs that stay valid until the next run, repeated and parallel runs, region calls
 * that receive DLTensors into the executor's own buffers, the thread pool, and the exact
 * messages of every error a user can cause. */
#include "test_support.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "byocl/runtime.h"
#include "executor/executor_impl.h"
#include "backend/storage_plan.h"
#include "base/thread_pool.h"
#include "module/dlpack.h"
#include "ir/ir_impl.h"

/* ----------------------------------------------------------------- helpers */

static byocl_build_options ref_options(void)
{
    byocl_build_options o = byocl_build_options_default();
    o.target = "ref";
    o.threads = 1;
    return o;
}

static byocl_compiled *build_ref(const byocl_module *m)
{
    byocl_build_options o = ref_options();
    byocl_compiled *c = NULL;
    byocl_error err;
    if (byocl_build(m, &o, &c, &err) != BYOCL_OK)
        fail_msg("byocl_build: %s", err.msg);
    return c;
}

static byocl_executor *new_executor(byocl_compiled *c)
{
    byocl_executor *ex = NULL;
    byocl_error err;
    if (byocl_executor_new(c, &ex, &err) != BYOCL_OK)
        fail_msg("byocl_executor_new: %s", err.msg);
    return ex;
}

/* One random tensor per parameter of @main (seeded by `seed` and the index): uniform in
 * [-1, 1), or in [0, 1) for models with batch_norm variances among their inputs (seed). */
static byocl_tensor **random_inputs_in(const byocl_module *m, uint64_t seed, double lo)
{
    const byocl_function *fn = byocl_module_find(m, "main");
    int n = byocl_function_num_params(fn);
    byocl_tensor **in = calloc((size_t)n + 1, sizeof *in);
    assert_non_null(in);
    for (int k = 0; k < n; k++) {
        const byocl_type *t = byocl_node_type(fn, byocl_function_param(fn, k));
        in[k] = byocl_tensor_new(t->dtype, &t->shape, NULL);
        assert_non_null(in[k]);
        byocl_tensor_fill_random(in[k], seed * 1000 + (uint64_t)k, lo, 1.0);
    }
    return in;
}

static byocl_tensor **random_inputs(const byocl_module *m, uint64_t seed)
{
    return random_inputs_in(m, seed, -1.0);
}

static void set_inputs(byocl_executor *ex, const byocl_module *m, byocl_tensor **in)
{
    const byocl_function *fn = byocl_module_find(m, "main");
    byocl_error err;
    for (int k = 0; k < byocl_function_num_params(fn); k++)
        if (byocl_executor_set_input(ex, byocl_node_name(fn, byocl_function_param(fn, k)), in[k],
                                     &err) != BYOCL_OK)
            fail_msg("set_input: %s", err.msg);
}

static void run(byocl_executor *ex)
{
    byocl_error err;
    if (byocl_executor_run(ex, &err) != BYOCL_OK)
        fail_msg("run: %s", err.msg);
}

/* Whether every output of the executor's last run equals `want` bit for bit. */
static bool outputs_equal(const byocl_executor *ex, byocl_tensor **want, int n_want)
{
    if (byocl_executor_num_outputs(ex) != n_want)
        return false;
    for (int i = 0; i < n_want; i++) {
        const byocl_tensor *got;
        if (byocl_executor_output(ex, i, &got, NULL) != BYOCL_OK || !byocl_tensor_equal(got, want[i]))
            return false;
    }
    return true;
}

static void reference(const byocl_module *m, byocl_tensor **in, byocl_tensor ***out, int *n_out)
{
    const byocl_function *fn = byocl_module_find(m, "main");
    byocl_error err;
    if (byocl_reference_run(m, "main", in, byocl_function_num_params(fn), out, n_out, &err) !=
        BYOCL_OK)
        fail_msg("reference: %s", err.msg);
}

static void free_inputs(const byocl_module *m, byocl_tensor **in)
{
    byocl_tensors_free(in, byocl_function_num_params(byocl_module_find(m, "main")));
}

/* Builds `m` for the ref target, runs it on seeded random inputs and checks the outputs
 * against the reference executor, bit for bit. */
static void check_equals_reference(const byocl_module *m, uint64_t seed)
{
    byocl_compiled *c = build_ref(m);
    byocl_executor *ex = new_executor(c);
    byocl_tensor **in = random_inputs_in(m, seed, 0.0);
    byocl_tensor **want;
    int n_want;
    reference(m, in, &want, &n_want);
    set_inputs(ex, m, in);
    run(ex);
    assert_true(outputs_equal(ex, want, n_want));
    byocl_tensors_free(want, n_want);
    free_inputs(m, in);
    byocl_executor_free(ex);
    byocl_compiled_free(c);
}

/* Whether root `inner` is a slice of root `outer`, directly or through other slices (an
 * input of a concatenation done in place). */
static bool holds(const byocl_compiled *c, int outer, int inner)
{
    for (int v = c->values[inner].within; v >= 0; v = c->values[v].within)
        if (v == outer)
            return true;
    return false;
}

/* The time a root value occupies its memory: inputs the whole run, outputs from their
 * step to the end, pool tensors from their step to their last reader, or from the first
 * step that writes a slice of them. */
static bool live_interval(const byocl_compiled *c, int v, int *first, int *last)
{
    const byocl_xvalue *x = &c->values[v];
    if (x->root != v)
        return false;
    switch (x->home) {
    case HOME_INPUT: *first = 0; *last = c->n_steps; return true;
    case HOME_OUTPUT: *first = x->producer; *last = c->n_steps; return true;
    case HOME_POOL:
        *first = x->producer;
        *last = x->last_use;
        for (int s = 0; s < c->n_values; s++)
            if (c->values[s].root == s && holds(c, v, s) && c->values[s].producer < *first)
                *first = c->values[s].producer;
        return x->producer >= 0;
    case HOME_CONSTANT: return false;
    }
    return false;
}

/* No two tensors that are live at the same time overlap in memory; returns how many pairs
 * were compared (so a test can tell the check saw something). */
static int check_no_live_overlap(const byocl_compiled *c, const byocl_executor *ex)
{
    int pairs = 0;
    for (int a = 0; a < c->n_values; a++) {
        int fa, la;
        if (!live_interval(c, a, &fa, &la) || c->values[a].nbytes == 0)
            continue;
        for (int b = a + 1; b < c->n_values; b++) {
            int fb, lb;
            if (!live_interval(c, b, &fb, &lb) || c->values[b].nbytes == 0 || lb < fa ||
                la < fb || holds(c, a, b) || holds(c, b, a))
                continue;
            const char *pa = exec_value_data(ex, a), *pb = exec_value_data(ex, b);
            assert_non_null(pa);
            assert_non_null(pb);
            if (pa < pb + c->values[b].nbytes && pb < pa + c->values[a].nbytes)
                fail_msg("values %d (node %d) and %d (node %d) are live together (steps %d..%d "
                         "and %d..%d) and share memory",
                         a, c->values[a].node, b, c->values[b].node, fa, la, fb, lb);
            pairs++;
        }
    }
    return pairs;
}

static void expect_build_error(const byocl_module *m, const byocl_build_options *o,
                               byocl_status want_st, const char *want_msg)
{
    byocl_compiled *c = (byocl_compiled *)1;
    byocl_error err;
    assert_int_equal(byocl_build(m, o, &c, &err), want_st);
    assert_null(c);
    assert_string_equal(err.msg, want_msg);
}

/* --------------------------------------------------------- the stress graph */

/* A deterministic graph with many branches and residuals: each new value mixes the last
 * one with an older one (so many values stay live), through elementwise ops, convs,
 * batch_norm (a tuple: only field 0 used), concatenate + split (tuple in and out),
 * reshapes (aliases) and a few outputs taken from the middle. */
static byocl_module *stress_graph(int n_layers)
{
    byocl_error err;
    byocl_module *m = byocl_module_new();
    byocl_function *fn = byocl_module_add_function(m, "main", &err);
    assert_non_null(fn);
    int64_t dims[4] = {1, 4, 6, 6};
    byocl_type t = byocl_type_tensor(BYOCL_FLOAT32, 4, dims);
    int vals[256], n = 0;
    vals[n++] = byocl_function_add_param(fn, "x", &t, &err);
    vals[n++] = byocl_function_add_param(fn, "y", &t, &err);
    byocl_tensor *w = byocl_tensor_new(BYOCL_FLOAT32, &(byocl_shape){4, {4, 4, 3, 3}}, &err);
    byocl_tensor *vec = byocl_tensor_new(BYOCL_FLOAT32, &(byocl_shape){1, {4}}, &err);
    byocl_tensor_fill_random(w, 11, -0.3, 0.3);
    byocl_tensor_fill_random(vec, 12, 0.5, 1.5);
    int weight = byocl_function_add_constant(fn, w, &err);
    int gamma = byocl_function_add_constant(fn, vec, &err);
    byocl_tensor_unref(w);
    byocl_tensor_unref(vec);
    int outs[8], n_outs = 0;
    uint64_t lcg = 42;
    for (int i = 0; i < n_layers; i++) {
        lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
        int last = vals[n - 1];
        int old = vals[(int)((lcg >> 33) % (uint64_t)n)];
        int v = -1;
        switch (i % 7) {
        case 0: v = byocl_function_add_call(fn, "add", (int[]){last, old}, 2, NULL, &err); break;
        case 1: v = byocl_function_add_call(fn, "nn.relu", &last, 1, NULL, &err); break;
        case 2:
            v = byocl_function_add_call(fn, "multiply", (int[]){last, old}, 2, NULL, &err);
            break;
        case 3: {
            int tup = byocl_function_add_tuple(fn, (int[]){last, old}, 2, &err);
            int cat = byocl_function_add_call_str(fn, "concatenate", &tup, 1, "axis=1", &err);
            int sp = byocl_function_add_call_str(fn, "split", &cat, 1,
                                                 "indices_or_sections=2, axis=1", &err);
            int a = byocl_function_add_getitem(fn, sp, 0, &err),
                b = byocl_function_add_getitem(fn, sp, 1, &err);
            v = byocl_function_add_call(fn, "subtract", (int[]){b, a}, 2, NULL, &err);
            break;
        }
        case 4: {
            int bn = byocl_function_add_call(
                fn, "nn.batch_norm", (int[]){last, gamma, gamma, gamma, gamma}, 5, NULL, &err);
            v = byocl_function_add_getitem(fn, bn, 0, &err);
            break;
        }
        case 5: {
            int r =
                byocl_function_add_call_str(fn, "reshape", &last, 1, "newshape=[1, 4, 36]", &err);
            int s = byocl_function_add_call(fn, "sigmoid", &r, 1, NULL, &err);
            v = byocl_function_add_call_str(fn, "reshape", &s, 1, "newshape=[1, 4, 6, 6]", &err);
            break;
        }
        case 6:
            v = byocl_function_add_call_str(fn, "nn.conv2d", (int[]){last, weight}, 2,
                                            "padding=[1, 1]", &err);
            break;
        }
        if (v < 0)
            fail_msg("stress graph layer %d: %s", i, err.msg);
        vals[n++] = v;
        if (i % 9 == 4 && n_outs < 7)
            outs[n_outs++] = v;
    }
    outs[n_outs++] = vals[n - 1];
    int body = byocl_function_add_tuple(fn, outs, n_outs, &err);
    assert_int_equal(byocl_function_set_body(fn, body, &err), BYOCL_OK);
    if (byocl_infer_types(m, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return m;
}

/* --------------------------------------------------------------- storage plan */

static void test_storage_plan_reuse(void **state)
{
    (void)state;
    byocl_error err;
    int buf[8];
    size_t *sizes;
    int n_buf;
    /* A chain: each tensor is read by the next step only; two buffers take turns. */
    byocl_live_range chain[4] = {{100, 0, 1}, {100, 1, 2}, {100, 2, 3}, {100, 3, 4}};
    assert_int_equal(storage_plan(chain, 4, 64, buf, &sizes, &n_buf, &err), BYOCL_OK);
    assert_int_equal(n_buf, 2);
    assert_int_equal(sizes[0], 128);
    assert_int_equal(sizes[1], 128);
    assert_int_equal(buf[0], buf[2]);
    assert_int_equal(buf[1], buf[3]);
    assert_int_not_equal(buf[0], buf[1]);
    free(sizes);

    /* Best fit: with 64 and 256 free, 200 bytes take the 256 one and 50 the 64 one. */
    byocl_live_range fit[4] = {{64, 0, 0}, {256, 0, 0}, {200, 1, 1}, {50, 1, 1}};
    assert_int_equal(storage_plan(fit, 4, 1, buf, &sizes, &n_buf, &err), BYOCL_OK);
    assert_int_equal(n_buf, 2);
    assert_int_equal(buf[2], buf[1]);
    assert_int_equal(buf[3], buf[0]);
    assert_int_equal(sizes[buf[1]], 256);
    free(sizes);

    /* Nothing fits: the largest free buffer grows instead of a new one appearing. */
    byocl_live_range grow[3] = {{100, 0, 0}, {40, 0, 0}, {300, 1, 1}};
    assert_int_equal(storage_plan(grow, 3, 1, buf, &sizes, &n_buf, &err), BYOCL_OK);
    assert_int_equal(n_buf, 2);
    assert_int_equal(buf[2], buf[0]);
    assert_int_equal(sizes[buf[0]], 300);
    free(sizes);

    /* No ranges, no buffers. */
    assert_int_equal(storage_plan(NULL, 0, 64, buf, &sizes, &n_buf, &err), BYOCL_OK);
    assert_int_equal(n_buf, 0);
    free(sizes);
}

/* n live ranges of steps 0..110 and up to 5000 bytes, the same on every run. */
static void random_ranges(byocl_live_range *r, int n)
{
    uint64_t s = 7;
    for (int i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1;
        int first = (int)((s >> 40) % 100);
        int len = (int)((s >> 20) % 12);
        r[i] = (byocl_live_range){(size_t)((s >> 8) % 5000), first, first + len};
    }
}

/* Random ranges: overlapping ones never share a buffer; every buffer holds its tensors. */
static void test_storage_plan_random(void **state)
{
    (void)state;
    enum { N = 300 };
    byocl_live_range r[N];
    int buf[N];
    random_ranges(r, N);
    size_t *sizes;
    int n_buf;
    byocl_error err;
    assert_int_equal(storage_plan(r, N, 64, buf, &sizes, &n_buf, &err), BYOCL_OK);
    size_t total = 0, naive = 0;
    for (int b = 0; b < n_buf; b++) {
        assert_int_equal(sizes[b] % 64, 0);
        total += sizes[b];
    }
    for (int i = 0; i < N; i++) {
        naive += r[i].bytes;
        assert_true(buf[i] >= 0 && buf[i] < n_buf);
        assert_true(sizes[buf[i]] >= r[i].bytes);
        for (int j = i + 1; j < N; j++)
            if (buf[i] == buf[j] && !(r[i].last < r[j].first || r[j].last < r[i].first))
                fail_msg("ranges %d and %d overlap and share buffer %d", i, j, buf[i]);
    }
    assert_true(total < naive / 2); /* reuse pays */
    free(sizes);
}

/* The arena plan on the same random ranges: ranges that overlap in time never overlap in
 * memory, offsets are aligned, the arena holds every range, the live peak is its lower
 * bound and the plan stays close to it. */
static void test_storage_plan_offsets_random(void **state)
{
    (void)state;
    enum { N = 300 };
    byocl_live_range r[N];
    size_t at[N];
    random_ranges(r, N);
    size_t arena = 0;
    byocl_error err;
    assert_int_equal(storage_plan_offsets(r, N, 64, at, &arena, &err), BYOCL_OK);
    for (int i = 0; i < N; i++) {
        size_t bi = (r[i].bytes + 63) / 64 * 64;
        assert_int_equal(at[i] % 64, 0);
        assert_true(at[i] + r[i].bytes <= arena);
        for (int j = i + 1; j < N; j++) {
            size_t bj = (r[j].bytes + 63) / 64 * 64;
            bool in_time = !(r[i].last < r[j].first || r[j].last < r[i].first);
            bool in_memory = at[i] < at[j] + bj && at[j] < at[i] + bi;
            if (in_time && in_memory)
                fail_msg("ranges %d and %d are live together and overlap in memory", i, j);
        }
    }
    size_t peak = storage_plan_live_peak(r, N, 64);
    assert_true(peak <= arena);
    assert_true((double)arena <= 1.25 * (double)peak);

    /* A chain of equal tensors needs two at a time; none, nothing. */
    byocl_live_range chain[4] = {{100, 0, 1}, {100, 1, 2}, {100, 2, 3}, {100, 3, 4}};
    assert_int_equal(storage_plan_offsets(chain, 4, 64, at, &arena, &err), BYOCL_OK);
    assert_int_equal(arena, 256);
    assert_int_equal(storage_plan_live_peak(chain, 4, 64), 256);
    assert_int_equal(storage_plan_offsets(NULL, 0, 64, at, &arena, &err), BYOCL_OK);
    assert_int_equal(arena, 0);
}

/* ------------------------------------------------------------- the executor */

static void test_stress_graph_matches_reference(void **state)
{
    (void)state;
    byocl_module *m = stress_graph(60);
    byocl_compiled *c = build_ref(m);
    byocl_executor *ex = new_executor(c);
    /* Reshapes alias: 60 layers make fewer kernels than nodes. */
    byocl_plan_stats st;
    byocl_compiled_stats(c, &st);
    assert_int_equal(st.n_regions, 0);
    assert_int_equal(st.n_kernels, st.n_steps);
    assert_true(st.planned_bytes < st.intermediate_bytes / 2);
    assert_true(check_no_live_overlap(c, ex) > 100);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        byocl_tensor **in = random_inputs(m, seed), **want;
        int n_want;
        reference(m, in, &want, &n_want);
        set_inputs(ex, m, in);
        run(ex);
        assert_true(outputs_equal(ex, want, n_want));
        byocl_tensors_free(want, n_want);
        free_inputs(m, in);
    }
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    byocl_module_free(m);
}

/* A chain of four relus: exact statistics and the values that alias. */
static void test_stats_and_aliases(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed("#[version = \"0.0.5\"]\n"
                            "def @main(%x: Tensor[(1, 1024), float32]) {\n"
                            "  %0 = nn.relu(%x);\n"
                            "  %1 = reshape(%0, newshape=[32, 32]);\n"
                            "  %2 = nn.relu(%1);\n"
                            "  %3 = annotation.compiler_begin(%2, compiler=\"none\");\n"
                            "  %4 = nn.relu(%3);\n"
                            "  %5 = nn.relu(%4);\n"
                            "  nn.relu(%5)\n"
                            "}\n");
    byocl_compiled *c = build_ref(m);
    byocl_plan_stats st;
    byocl_compiled_stats(c, &st);
    assert_int_equal(st.n_steps, 5);
    assert_int_equal(st.n_kernels, 5);
    assert_int_equal(st.n_regions, 0);
    assert_int_equal(st.n_intermediates, 4);
    assert_int_equal(st.intermediate_bytes, 4 * 4096);
    assert_int_equal(st.n_buffers, 2);
    assert_int_equal(st.planned_bytes, 2 * 4096);
    assert_int_equal(st.input_bytes, 4096);
    assert_int_equal(st.output_bytes, 4096);
    assert_int_equal(st.constant_bytes, 0);
    byocl_executor *ex = new_executor(c);
    const byocl_function *fn = c->fn;
    int relu0 = driver_compiled_value_of(c, byocl_text_node_by_number(fn, 0), -1);
    int resh = driver_compiled_value_of(c, byocl_text_node_by_number(fn, 1), -1);
    int relu2 = driver_compiled_value_of(c, byocl_text_node_by_number(fn, 2), -1);
    int begin = driver_compiled_value_of(c, byocl_text_node_by_number(fn, 3), -1);
    assert_ptr_equal(exec_value_data(ex, relu0), exec_value_data(ex, resh));
    assert_ptr_equal(exec_value_data(ex, relu2), exec_value_data(ex, begin));
    assert_ptr_not_equal(exec_value_data(ex, relu0),
                         exec_value_data(ex, relu2));
    /* The reshape's value has its own type over the same bytes. */
    assert_int_equal(c->values[resh].type->shape.rank, 2);
    assert_int_equal(c->values[resh].root, relu0);
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    byocl_module_free(m);
}

/* Concatenations into one contiguous block whose inputs are pool tensors that steps
 * write are done in place, nested ones too: no step, each input in its slice. The others
 * copy: a parameter among the inputs, the same tensor twice, a batch of 2 (not one block),
 * a slice that would start off the 64-byte alignment, and an output of @main. */
static const char concatenations[] =
    "#[version = \"0.0.5\"]\n"
    "def @main(%x: Tensor[(1, 16, 4, 4), float32], %y: Tensor[(2, 16, 4, 4), float32],\n"
    "          %z: Tensor[(1, 3), float32]) {\n"
    "  %0 = nn.relu(%x);\n"
    "  %1 = negative(%x);\n"
    "  %2 = (%0, %1);\n"
    "  %3 = concatenate(%2, axis=1);\n"   /* in place */
    "  %4 = add(%0, 1f);\n"
    "  %5 = (%3, %4);\n"
    "  %6 = concatenate(%5, axis=-3);\n"  /* in place, holding %3 */
    "  %7 = nn.max_pool2d(%6, pool_size=[2, 2], strides=[2, 2]);\n"
    "  %8 = (%0, %x);\n"
    "  %9 = concatenate(%8, axis=1);\n"   /* a parameter */
    "  %10 = (%1, %1);\n"
    "  %11 = concatenate(%10, axis=1);\n" /* twice */
    "  %12 = nn.relu(%y);\n"
    "  %13 = negative(%y);\n"
    "  %14 = (%12, %13);\n"
    "  %15 = concatenate(%14, axis=1);\n" /* batch 2 */
    "  %16 = nn.relu(%z);\n"
    "  %17 = negative(%z);\n"
    "  %18 = (%16, %17);\n"
    "  %19 = concatenate(%18, axis=1);\n" /* 12 bytes: off the alignment */
    "  %20 = nn.relu(%0);\n"
    "  %21 = negative(%0);\n"
    "  %22 = (%20, %21);\n"
    "  %23 = concatenate(%22, axis=1);\n" /* an output */
    "  %24 = add(%6, 1f);\n"
    "  (%7, %9, %11, %15, %19, %23, %24)\n"
    "}\n";

/* A dense block: each concatenation takes every tensor so far, so each holds the one
 * before it and the last holds them all, from its start; one that starts inside it
 * (%10: x1, x2) copies. */
static const char dense_block[] =
    "#[version = \"0.0.5\"]\n"
    "def @main(%x: Tensor[(1, 16, 4, 4), float32], %w: Tensor[(16, 32, 1, 1), float32]) {\n"
    "  %0 = nn.relu(%x);\n"
    "  %1 = (%0,);\n"
    "  %2 = concatenate(%1, axis=1);\n"
    "  %3 = negative(%2);\n"
    "  %4 = (%0, %3);\n"
    "  %5 = concatenate(%4, axis=1);\n"
    "  %6 = nn.conv2d(%5, %w, padding=[0, 0, 0, 0]);\n"
    "  %7 = (%0, %3, %6);\n"
    "  %8 = concatenate(%7, axis=1);\n"
    "  %9 = (%3, %6);\n"
    "  %10 = concatenate(%9, axis=1);\n"
    "  %11 = add(%8, 1f);\n"
    "  (%11, %10)\n"
    "}\n";

static int value_of_number(const byocl_compiled *c, int number)
{
    return driver_compiled_value_of(c, byocl_text_node_by_number(c->fn, number), -1);
}

/* Whether some step computes node %number of c's function. */
static bool has_step(const byocl_compiled *c, int number)
{
    int node = byocl_text_node_by_number(c->fn, number);
    for (int s = 0; s < c->n_steps; s++) {
        const int *nodes;
        int n = byocl_compiled_step_nodes(c, s, NULL, &nodes);
        for (int k = 0; k < n; k++)
            if (nodes[k] == node)
                return true;
    }
    return false;
}

typedef struct slice_at {
    int number;    /* %number */
    size_t offset; /* its first byte in the concatenation holding it */
} slice_at;

/* Each slice's data start its offset into %whole's, in the executor's buffers. */
static void assert_slices(const byocl_compiled *c, const byocl_executor *ex, int whole,
                          const slice_at *slices, size_t n)
{
    const char *base = exec_value_data(ex, value_of_number(c, whole));
    for (size_t i = 0; i < n; i++)
        assert_ptr_equal(exec_value_data(ex, value_of_number(c, slices[i].number)),
                         base + slices[i].offset);
}

/* Roots that are no slice: each %number keeps memory of its own. */
static void assert_not_slices(const byocl_compiled *c, const int *numbers, size_t n)
{
    for (size_t i = 0; i < n; i++)
        assert_int_equal(c->values[c->values[value_of_number(c, numbers[i])].root].within, -1);
}

static void test_concat_in_place(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed(concatenations);
    byocl_compiled *c = build_ref(m);
    byocl_plan_stats st;
    byocl_compiled_stats(c, &st);
    assert_int_equal(st.n_concats_in_place, 2);
    assert_int_equal(st.n_steps, 16); /* 18 op calls */
    assert_false(has_step(c, 3));
    assert_false(has_step(c, 6));
    byocl_executor *ex = new_executor(c);
    static const slice_at slices[] = {{0, 0}, {1, 1024}, {3, 0}, {4, 2048}};
    assert_slices(c, ex, 6, slices, sizeof slices / sizeof slices[0]);
    /* The copies keep their steps, and the inputs they copy their own memory. */
    static const int copies[] = {9, 11, 15, 19, 23}, copied[] = {12, 13, 16, 17, 20, 21};
    for (size_t i = 0; i < sizeof copies / sizeof copies[0]; i++)
        assert_true(has_step(c, copies[i]));
    assert_not_slices(c, copies, sizeof copies / sizeof copies[0]);
    assert_not_slices(c, copied, sizeof copied / sizeof copied[0]);
    assert_true(check_no_live_overlap(c, ex) > 10);
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    for (uint64_t seed = 1; seed <= 2; seed++)
        check_equals_reference(m, seed);
    byocl_module_free(m);

    m = ts_parse_typed(dense_block);
    c = build_ref(m);
    byocl_compiled_stats(c, &st);
    assert_int_equal(st.n_concats_in_place, 3);
    assert_true(has_step(c, 10));
    ex = new_executor(c);
    static const slice_at nested[] = {{0, 0}, {2, 0}, {3, 1024}, {5, 0}, {6, 2048}};
    assert_slices(c, ex, 8, nested, sizeof nested / sizeof nested[0]);
    assert_not_slices(c, (const int[]){10}, 1);
    assert_true(check_no_live_overlap(c, ex) > 0);
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    check_equals_reference(m, 3);
    byocl_module_free(m);
}

/* `copy` is a kernel of its own (it must copy), unlike the views around it. */
static void test_copy_copies(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed("#[version = \"0.0.5\"]\n"
                            "def @main(%x: Tensor[(2, 3), float32]) {\n"
                            "  %0 = exp(%x);\n"
                            "  %1 = copy(%0);\n"
                            "  %2 = reshape(%1, newshape=[3, 2]);\n"
                            "  (%2, %0)\n"
                            "}\n");
    byocl_compiled *c = build_ref(m);
    byocl_executor *ex = new_executor(c);
    const byocl_function *fn = c->fn;
    void *exp_data = exec_value_data(
        ex, driver_compiled_value_of(c, byocl_text_node_by_number(fn, 0), -1));
    void *copy_data = exec_value_data(
        ex, driver_compiled_value_of(c, byocl_text_node_by_number(fn, 1), -1));
    void *reshape_data = exec_value_data(
        ex, driver_compiled_value_of(c, byocl_text_node_by_number(fn, 2), -1));
    assert_ptr_not_equal(exp_data, copy_data);
    assert_ptr_equal(copy_data, reshape_data);
    assert_int_equal(byocl_executor_num_steps(ex), 2);
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    check_equals_reference(m, 6);
    byocl_module_free(m);
}

/* Output views keep their data until the next run; copies keep theirs for good; an
 * output that is an input is copied, so setting the input does not change it. */
static void test_outputs_valid_until_next_run(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed("#[version = \"0.0.5\"]\n"
                            "def @main(%x: Tensor[(2, 3), float32]) {\n"
                            "  %0 = exp(%x);\n"
                            "  (%0, %x, %0)\n"
                            "}\n");
    byocl_compiled *c = build_ref(m);
    byocl_executor *ex = new_executor(c);
    byocl_tensor **a = random_inputs(m, 1), **b = random_inputs(m, 2), **want_a, **want_b;
    int n_a, n_b;
    reference(m, a, &want_a, &n_a);
    reference(m, b, &want_b, &n_b);
    assert_int_equal(n_a, 3);
    set_inputs(ex, m, a);
    run(ex);
    const byocl_tensor *v0, *v1, *v2;
    byocl_tensor *copy0;
    byocl_error err;
    assert_int_equal(byocl_executor_output(ex, 0, &v0, &err), BYOCL_OK);
    assert_int_equal(byocl_executor_output(ex, 1, &v1, &err), BYOCL_OK);
    assert_int_equal(byocl_executor_output(ex, 2, &v2, &err), BYOCL_OK);
    assert_int_equal(byocl_executor_copy_output(ex, 0, &copy0, &err), BYOCL_OK);
    assert_true(byocl_tensor_equal(v0, want_a[0]));
    assert_true(byocl_tensor_equal(v1, a[0]));
    assert_ptr_equal(byocl_tensor_cdata(v0), byocl_tensor_cdata(v2)); /* one value, one buffer */
    set_inputs(ex, m, b);
    assert_true(byocl_tensor_equal(v0, want_a[0]));
    assert_true(byocl_tensor_equal(v1, a[0]));
    run(ex);
    const byocl_tensor *again;
    assert_int_equal(byocl_executor_output(ex, 0, &again, &err), BYOCL_OK);
    assert_ptr_equal(again, v0);
    assert_true(byocl_tensor_equal(v0, want_b[0]));
    assert_true(byocl_tensor_equal(v1, b[0]));
    assert_true(byocl_tensor_equal(copy0, want_a[0]));
    byocl_tensor_unref(copy0);
    byocl_tensors_free(want_a, n_a);
    byocl_tensors_free(want_b, n_b);
    free_inputs(m, a);
    free_inputs(m, b);
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    byocl_module_free(m);
}

/* Ten runs of one executor give the same bytes; the profile counts them. */
static void test_repeated_runs_identical(void **state)
{
    (void)state;
    byocl_module *m = stress_graph(30);
    byocl_compiled *c = build_ref(m);
    byocl_executor *ex = new_executor(c);
    byocl_tensor **in = random_inputs(m, 5);
    set_inputs(ex, m, in);
    run(ex);
    int n = byocl_executor_num_outputs(ex);
    byocl_tensor **first = calloc((size_t)n, sizeof *first);
    for (int i = 0; i < n; i++)
        assert_int_equal(byocl_executor_copy_output(ex, i, &first[i], NULL), BYOCL_OK);
    for (int r = 0; r < 9; r++) {
        run(ex);
        assert_true(outputs_equal(ex, first, n));
    }
    byocl_step_info info;
    byocl_error err;
    assert_true(byocl_executor_num_steps(ex) > 10);
    assert_int_equal(byocl_executor_step(ex, 0, &info, &err), BYOCL_OK);
    assert_int_equal(info.runs, 10);
    assert_int_equal(info.kind, BYOCL_STEP_KERNEL);
    assert_string_equal(info.runner, "ref");
    assert_true(info.min_ms <= info.last_ms && info.last_ms <= info.total_ms);
    byocl_executor_reset_profile(ex);
    assert_int_equal(byocl_executor_step(ex, 0, &info, &err), BYOCL_OK);
    assert_int_equal(info.runs, 0);
    assert_int_equal(byocl_executor_step(ex, byocl_executor_num_steps(ex), &info, &err),
                     BYOCL_ERR_INVALID);
    char want[128];
    snprintf(want, sizeof want, "step index %d is out of range: @main has %d steps",
             byocl_executor_num_steps(ex), byocl_executor_num_steps(ex));
    assert_string_equal(err.msg, want);
    byocl_tensors_free(first, n);
    free_inputs(m, in);
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    byocl_module_free(m);
}

/* The step names and flops the profile shows: op and %N, 2 per multiply-add. */
static void test_step_info(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed("#[version = \"0.0.5\"]\n"
                            "def @main(%x: Tensor[(1, 3, 8, 8), float32], "
                            "%w: Tensor[(4, 3, 3, 3), float32], %d: Tensor[(10, 256), float32]) {\n"
                            "  %0 = nn.conv2d(%x, %w, padding=[1, 1]);\n"
                            "  %1 = nn.batch_flatten(%0);\n"
                            "  %2 = nn.dense(%1, %d);\n"
                            "  nn.relu(%2)\n"
                            "}\n");
    byocl_compiled *c = build_ref(m);
    byocl_executor *ex = new_executor(c);
    assert_int_equal(byocl_executor_num_steps(ex), 3);
    byocl_step_info s[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(byocl_executor_step(ex, i, &s[i], NULL), BYOCL_OK);
    assert_string_equal(s[0].name, "nn_conv2d_0");
    assert_true(s[0].flops == 2.0 * 4 * 8 * 8 * 3 * 3 * 3);
    assert_string_equal(s[1].name, "nn_dense_2");
    assert_true(s[1].flops == 2.0 * 10 * 256);
    assert_string_equal(s[2].name, "nn_relu_result");
    assert_true(s[2].flops == 10);
    assert_int_equal(s[2].n_nodes, 1);
    byocl_executor_free(ex);
    /* The compiled model outlives its user's reference while an executor holds it. */
    ex = new_executor(c);
    byocl_compiled_free(c);
    byocl_tensor **in = random_inputs(m, 3), **want;
    int n_want;
    reference(m, in, &want, &n_want);
    set_inputs(ex, m, in);
    run(ex);
    assert_true(outputs_equal(ex, want, n_want));
    byocl_tensors_free(want, n_want);
    free_inputs(m, in);
    byocl_executor_free(ex);
    byocl_module_free(m);
}

/* ----------------------------------------------------- parallel executors */

typedef struct worker {
    byocl_compiled *c;
    const byocl_module *m;
    uint64_t seed;
    byocl_tensor **want;
    int n_want;
    bool ok;
    char why[BYOCL_ERROR_MSG_MAX + 64];
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    byocl_executor *ex;
    byocl_error err;
    w->ok = false;
    if (byocl_executor_new(w->c, &ex, &err) != BYOCL_OK) {
        snprintf(w->why, sizeof w->why, "%s", err.msg);
        return NULL;
    }
    byocl_tensor **in = random_inputs(w->m, w->seed);
    const byocl_function *fn = byocl_module_find(w->m, "main");
    bool ok = true;
    for (int k = 0; k < byocl_function_num_params(fn) && ok; k++)
        ok = byocl_executor_set_input(ex, byocl_node_name(fn, byocl_function_param(fn, k)), in[k],
                                      &err) == BYOCL_OK;
    for (int r = 0; r < 3 && ok; r++)
        ok = byocl_executor_run(ex, &err) == BYOCL_OK && outputs_equal(ex, w->want, w->n_want);
    if (!ok)
        snprintf(w->why, sizeof w->why, "run or compare failed: %s", err.msg);
    w->ok = ok;
    free_inputs(w->m, in);
    byocl_executor_free(ex);
    return NULL;
}

/* Four executors of one compiled model of `m` in four threads, each with its own inputs. */
static void run_in_parallel(const byocl_module *m)
{
    enum { N = 4 };
    byocl_build_options o = ref_options();
    o.threads = 2; /* each executor has a pool of its own */
    byocl_compiled *c;
    byocl_error err;
    assert_int_equal(byocl_build(m, &o, &c, &err), BYOCL_OK);
    assert_int_equal(byocl_compiled_threads(c), 2);
    worker w[N];
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        w[i] = (worker){.c = c, .m = m, .seed = 100 + (uint64_t)i};
        byocl_tensor **in = random_inputs(m, w[i].seed);
        reference(m, in, &w[i].want, &w[i].n_want);
        free_inputs(m, in);
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    for (int i = 0; i < N; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    for (int i = 0; i < N; i++) {
        if (!w[i].ok)
            fail_msg("worker %d: %s", i, w[i].why);
        byocl_tensors_free(w[i].want, w[i].n_want);
    }
    byocl_compiled_free(c);
}

static void test_parallel_executors(void **state)
{
    (void)state;
    byocl_module *m = stress_graph(40);
    run_in_parallel(m);
    byocl_module_free(m);
}

/* ------------------------------------------------------------- thread pool */

typedef struct pool_job {
    atomic_int *hits;
    int64_t fail_at;
} pool_job;

static int32_t count_task(void *const *args, int64_t task, void *ctx)
{
    (void)args;
    pool_job *job = ctx;
    atomic_fetch_add(&job->hits[task], 1);
    return task == job->fail_at ? 7 : 0;
}

/* Every task of every job runs once, and a failing task's status comes back; jobs follow
 * each other at once (the workers spinning) or after a pause long enough for the workers
 * to sleep (woken through the condition variable), and the pool is freed with its workers
 * asleep. */
/* Longer than a worker's spin, so that it sleeps. */
static void pause_past_spin(void)
{
    struct timespec t = {0, 20 * 1000 * 1000};
    nanosleep(&t, NULL);
}

static void test_thread_pool(void **state)
{
    (void)state;
    enum { TASKS = 1000 };
    for (int threads = 1; threads <= 4; threads++) {
        byocl_thread_pool *pool;
        assert_int_equal(base_thread_pool_new(threads, &pool, NULL), BYOCL_OK);
        assert_int_equal(base_thread_pool_threads(pool), threads);
        atomic_int *hits = calloc(TASKS, sizeof *hits);
        pool_job job = {hits, -1};
        for (int round = 0; round < 20; round++) {
            int64_t n = round % 5 == 0 ? 1 : TASKS - round;
            for (int i = 0; i < TASKS; i++)
                atomic_store(&hits[i], 0);
            job.fail_at = round == 7 ? 3 : -1;
            if (round % 4 == 3)
                pause_past_spin();
            int32_t r = base_thread_pool_run(pool, count_task, NULL, &job, n);
            assert_int_equal(r, round == 7 ? 7 : 0);
            for (int i = 0; i < TASKS; i++)
                assert_int_equal(atomic_load(&hits[i]), i < n ? 1 : 0);
        }
        free(hits);
        pause_past_spin();
        base_thread_pool_free(pool);
    }
    byocl_error err;
    byocl_thread_pool *pool;
    assert_int_equal(base_thread_pool_new(0, &pool, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "a thread pool needs at least 1 thread, got 0");
    assert_true(base_cpu_count() >= 1);
}

/* Many short jobs back to back, as a model's small kernels come: the caller often ends a
 * job before a worker has seen it, and that worker, waking late, must run no task of a
 * job that has ended nor of the next one. Jobs alternate between two contexts, so that a
 * task run for the wrong job shows in the other's counts: every task of every job runs
 * exactly once, for its own job. */
static void test_thread_pool_short_jobs(void **state)
{
    (void)state;
    enum { JOBS = 20000, MAX_TASKS = 4 };
    atomic_int hits[2][MAX_TASKS];
    for (int threads = 2; threads <= 4; threads++) {
        byocl_thread_pool *pool;
        assert_int_equal(base_thread_pool_new(threads, &pool, NULL), BYOCL_OK);
        pool_job jobs[2] = {{hits[0], -1}, {hits[1], -1}};
        int64_t ran[2] = {0, 0}; /* the task count each context's last job had */
        for (int j = 0; j < JOBS; j++) {
            int x = j % 2;
            int64_t n = 2 + j % (MAX_TASKS - 1);
            for (int i = 0; i < MAX_TASKS; i++)
                atomic_store(&hits[x][i], 0);
            if (j % 4999 == 4998)
                pause_past_spin();
            assert_int_equal(base_thread_pool_run(pool, count_task, NULL, &jobs[x], n), 0);
            ran[x] = n;
            for (int c = 0; c < 2; c++)
                for (int i = 0; i < MAX_TASKS; i++)
                    if (ran[c] > 0 && atomic_load(&hits[c][i]) != (i < ran[c] ? 1 : 0))
                        fail_msg("threads %d, after job %d: task %d of context %d ran %d times",
                                 threads, j, i, c, atomic_load(&hits[c][i]));
        }
        base_thread_pool_free(pool);
    }
}

/* Each thread's share of a job is a range of consecutive tasks, which it runs first, in
 * order (consecutive kernels split the same way then find their data in the same core's
 * caches); a thread that has run its share takes tasks of the others'. Here the tasks
 * outside the caller's share wait until task 0 has started, so no thread can reach the
 * caller's share before the caller does: task 0 runs on the calling thread, and each
 * thread starts its own share's tasks in ascending order. */
typedef struct share_job {
    int threads;
    int64_t n_tasks;
    atomic_bool first_started;
    atomic_int hits[64];
    pthread_t ran_on[64];
    atomic_int order[64]; /* when each task started, counted over the job */
    atomic_int started;
} share_job;

static int32_t share_task(void *const *args, int64_t task, void *ctx)
{
    (void)args;
    share_job *job = ctx;
    job->ran_on[task] = pthread_self();
    atomic_store(&job->order[task], atomic_fetch_add(&job->started, 1));
    if (task == 0)
        atomic_store(&job->first_started, true);
    else if (task >= job->n_tasks / job->threads)
        while (!atomic_load(&job->first_started))
            sched_yield();
    atomic_fetch_add(&job->hits[task], 1);
    return 0;
}

static void test_thread_pool_shares(void **state)
{
    (void)state;
    for (int threads = 2; threads <= 4; threads++) {
        byocl_thread_pool *pool;
        assert_int_equal(base_thread_pool_new(threads, &pool, NULL), BYOCL_OK);
        for (int round = 0; round < 200; round++) {
            share_job *job = calloc(1, sizeof *job);
            assert_non_null(job);
            job->threads = threads;
            job->n_tasks = 64 - round % 7;
            if (round % 50 == 49)
                pause_past_spin();
            assert_int_equal(base_thread_pool_run(pool, share_task, NULL, job, job->n_tasks), 0);
            assert_true(pthread_equal(job->ran_on[0], pthread_self()));
            for (int64_t t = 0; t < job->n_tasks; t++) {
                assert_int_equal(atomic_load(&job->hits[t]), 1);
                /* the task before it in the same share, run by the same thread, began earlier */
                bool share_start = false;
                for (int k = 0; k < threads; k++)
                    share_start |= t == job->n_tasks * k / threads;
                if (!share_start && pthread_equal(job->ran_on[t - 1], job->ran_on[t]))
                    assert_true(atomic_load(&job->order[t - 1]) < atomic_load(&job->order[t]));
            }
            free(job);
        }
        base_thread_pool_free(pool);
    }
}

/* ----------------------------------------------------------- region calls */

static const char region_model[] =
    "#[version = \"0.0.5\"]\n"
    "def @test_main_0(%test_0_i0: Tensor[(2, 3), float32], %test_0_i1: Tensor[(2, 3), float32], "
    "Compiler=\"test\", Primitive=1, Inline=1, global_symbol=\"test_main_0\") -> "
    "(Tensor[(2, 3), float32], Tensor[(2, 3), float32]) {\n"
    "  %0 = subtract(%test_0_i0, %test_0_i1);\n"
    "  %1 = multiply(%test_0_i0, %test_0_i1);\n"
    "  (%0, %1)\n"
    "}\n"
    "\n"
    "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {\n"
    "  %0 = add(%x, %y);\n"
    "  %1 = @test_main_0(%0, %y);\n"
    "  %2 = %1.0;\n"
    "  %3 = %1.1;\n"
    "  %4 = multiply(%2, %3);\n"
    "  (%4, %2)\n"
    "}\n";

/* A runtime module that records what it is given and computes the region in plain C. */
typedef struct recorder {
    int calls;
    char symbol[64];
    int n_in, n_out;
    DLTensor args[4];
    int64_t shapes[4][2];
    bool fail;
} recorder;

static byocl_status recorder_run(void *ctx, const char *symbol, DLTensor *const *args, int n_in,
                                 int n_out, byocl_error *err)
{
    recorder *r = ctx;
    r->calls++;
    snprintf(r->symbol, sizeof r->symbol, "%s", symbol);
    r->n_in = n_in;
    r->n_out = n_out;
    if (r->fail)
        return byocl_error_set(err, BYOCL_ERR_RUNTIME, "the device fell over");
    for (int i = 0; i < n_in + n_out && i < 4; i++) {
        r->args[i] = *args[i];
        for (int d = 0; d < args[i]->ndim && d < 2; d++)
            r->shapes[i][d] = args[i]->shape[d];
    }
    const float *a = args[0]->data, *b = args[1]->data;
    float *diff = args[2]->data, *prod = args[3]->data;
    for (int i = 0; i < 6; i++) {
        diff[i] = a[i] - b[i];
        prod[i] = a[i] * b[i];
    }
    return BYOCL_OK;
}

static byocl_status recorder_compile(void *user, const byocl_function *region, byocl_rtmod **out,
                                     byocl_error *err)
{
    if (strcmp(byocl_attrs_get_str(byocl_function_attrs(region), "Compiler", ""), "test") != 0)
        return BYOCL_OK; /* not ours: the default */
    static const byocl_rtmod_i iface = {.run = recorder_run, .destroy = NULL};
    return byocl_rtmod_new("recorder", &iface, user, out, err);
}

static void test_region_call_receives_executor_buffers(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed(region_model);
    recorder rec = {0};
    byocl_build_options o = ref_options();
    o.region_compile = recorder_compile;
    o.region_user = &rec;
    byocl_compiled *c;
    byocl_error err;
    assert_int_equal(byocl_build(m, &o, &c, &err), BYOCL_OK);
    byocl_plan_stats st;
    byocl_compiled_stats(c, &st);
    assert_int_equal(st.n_kernels, 2);
    assert_int_equal(st.n_regions, 1);
    byocl_executor *ex = new_executor(c);
    byocl_tensor **in = random_inputs(m, 9), **want;
    int n_want;
    reference(m, in, &want, &n_want);
    set_inputs(ex, m, in);
    run(ex);
    assert_true(outputs_equal(ex, want, n_want));

    assert_int_equal(rec.calls, 1);
    assert_string_equal(rec.symbol, "test_main_0");
    assert_int_equal(rec.n_in, 2);
    assert_int_equal(rec.n_out, 2);
    const byocl_function *fn = c->fn;
    int add = byocl_text_node_by_number(fn, 0), call = byocl_text_node_by_number(fn, 1);
    void *want_data[4] = {
        exec_value_data(ex, driver_compiled_value_of(c, add, -1)),
        exec_value_data(ex, driver_compiled_value_of(c, byocl_function_param(fn, 1), -1)),
        exec_value_data(ex, driver_compiled_value_of(c, call, 0)),
        exec_value_data(ex, driver_compiled_value_of(c, call, 1)),
    };
    for (int i = 0; i < 4; i++) {
        assert_non_null(want_data[i]);
        assert_ptr_equal(rec.args[i].data, want_data[i]);
        assert_int_equal(rec.args[i].device.device_type, kDLCPU);
        assert_int_equal(rec.args[i].device.device_id, 0);
        assert_int_equal(rec.args[i].ndim, 2);
        assert_int_equal(rec.shapes[i][0], 2);
        assert_int_equal(rec.shapes[i][1], 3);
        assert_int_equal(rec.args[i].dtype.code, kDLFloat);
        assert_int_equal(rec.args[i].dtype.bits, 32);
        assert_int_equal(rec.args[i].dtype.lanes, 1);
        assert_null(rec.args[i].strides);
        assert_int_equal(rec.args[i].byte_offset, 0);
    }
    /* Not the caller's tensor: the executor's own input buffer. */
    assert_ptr_not_equal(rec.args[1].data, byocl_tensor_cdata(in[1]));
    /* Region output 0 is also output 1 of @main: written in place, no copy. */
    const byocl_tensor *out1;
    assert_int_equal(byocl_executor_output(ex, 1, &out1, &err), BYOCL_OK);
    assert_ptr_equal(byocl_tensor_cdata(out1), rec.args[2].data);

    byocl_step_info info;
    assert_int_equal(byocl_executor_step(ex, 1, &info, &err), BYOCL_OK);
    assert_int_equal(info.kind, BYOCL_STEP_REGION);
    assert_string_equal(info.name, "test_main_0");
    assert_string_equal(info.runner, "recorder");
    assert_int_equal(info.node, call);
    assert_true(info.flops == 12); /* subtract and multiply of 6 elements */
    assert_int_equal(info.runs, 1);

    /* A failing region stops the run with its message and where it was called. */
    rec.fail = true;
    assert_int_equal(byocl_executor_run(ex, &err), BYOCL_ERR_RUNTIME);
    assert_string_equal(err.msg, "in @main, %1 (@test_main_0) at 10:8: the device fell over");
    const byocl_tensor *gone;
    assert_int_equal(byocl_executor_output(ex, 0, &gone, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "no outputs: the last run failed");

    byocl_tensors_free(want, n_want);
    free_inputs(m, in);
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    byocl_module_free(m);
}

/* Without a hook, regions run on the ref region module, which gives the reference's bits. */
static void test_region_default_ref_module(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed(region_model);
    check_equals_reference(m, 4);
    byocl_compiled *c = build_ref(m);
    byocl_executor *ex = new_executor(c);
    byocl_step_info info;
    assert_int_equal(byocl_executor_step(ex, 1, &info, NULL), BYOCL_OK);
    assert_string_equal(info.runner, "ref");
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    byocl_module_free(m);
}

/* Regions on the ref region module from several executors at once. */
static void test_parallel_executors_with_regions(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed(region_model);
    run_in_parallel(m);
    byocl_module_free(m);
}

static byocl_status failing_compile(void *user, const byocl_function *region, byocl_rtmod **out,
                                    byocl_error *err)
{
    (void)user;
    (void)region;
    (void)out;
    return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED, "no device");
}

static void test_region_errors(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed(region_model);
    byocl_build_options o = ref_options();
    o.region_compile = failing_compile;
    expect_build_error(m, &o, BYOCL_ERR_UNSUPPORTED,
                       "in @main, %1 (@test_main_0) at 10:8: region @test_main_0: no device");
    byocl_module_free(m);

    /* A global function without a Compiler attribute is not a region. */
    m = ts_parse_typed("#[version = \"0.0.5\"]\n"
              "def @helper(%a: Tensor[(2), float32]) {\n"
              "  nn.relu(%a)\n"
              "}\n"
              "\n"
              "def @main(%x: Tensor[(2), float32]) {\n"
              "  %0 = @helper(%x);\n"
              "  exp(%0)\n"
              "}\n");
    o = ref_options();
    expect_build_error(m, &o, BYOCL_ERR_UNSUPPORTED,
                       "in @main, %0 (@helper) at 7:8: calls of non-region global functions are "
                       "not supported by the graph executor; inline them");
    byocl_module_free(m);
}

/* The ref region module on its own: what it checks. */
static void test_ref_region_module(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed(region_model);
    byocl_rtmod *mod;
    byocl_error err;
    assert_int_equal(byocl_rtmod_ref_new(byocl_module_find(m, "test_main_0"), &mod, &err),
                     BYOCL_OK);
    byocl_module_free(m); /* the module keeps its own copy */
    assert_string_equal(byocl_rtmod_name(mod), "ref");
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {6, 5, 4, 3, 2, 1}, d[6], p[6];
    int64_t shape[2] = {2, 3}, bad_shape[2] = {3, 2};
    DLTensor t[4];
    float *data[4] = {a, b, d, p};
    for (int i = 0; i < 4; i++)
        t[i] = (DLTensor){data[i], {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 0};
    DLTensor *args[4] = {&t[0], &t[1], &t[2], &t[3]};
    assert_int_equal(byocl_rtmod_run(mod, "test_main_0", args, 2, 2, &err), BYOCL_OK);
    for (int i = 0; i < 6; i++) {
        assert_true(d[i] == a[i] - b[i]);
        assert_true(p[i] == a[i] * b[i]);
    }
    assert_int_equal(byocl_rtmod_run(mod, "other", args, 2, 2, &err), BYOCL_ERR_NOT_FOUND);
    assert_string_equal(err.msg, "the ref region module runs test_main_0, not other");
    assert_int_equal(byocl_rtmod_run(mod, "test_main_0", args, 1, 2, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "region test_main_0 takes 2 inputs and 2 outputs, got 1 and 2");
    t[1].shape = bad_shape;
    assert_int_equal(byocl_rtmod_run(mod, "test_main_0", args, 2, 2, &err), BYOCL_ERR_TYPE);
    assert_string_equal(err.msg, "region test_main_0, input 1 (%test_0_i1): expected "
                                 "Tensor[(2, 3), float32], got Tensor[(3, 2), float32]");
    t[1].shape = shape;
    t[3].device.device_type = kDLOpenCL;
    assert_int_equal(byocl_rtmod_run(mod, "test_main_0", args, 2, 2, &err), BYOCL_ERR_UNSUPPORTED);
    assert_string_equal(err.msg, "region test_main_0, output 1: expected Tensor[(2, 3), float32] "
                                 "in host memory (kDLCPU), got device type 4");
    byocl_rtmod_free(mod);

    static const byocl_rtmod_i no_run = {.run = NULL, .destroy = NULL};
    assert_int_equal(byocl_rtmod_new("x", &no_run, NULL, &mod, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "byocl_rtmod_new: a runtime module needs a run function");
    assert_null(mod);
}

static void test_dlpack_dtypes(void **state)
{
    (void)state;
    for (int d = 0; d < BYOCL_DTYPE_COUNT; d++) {
        DLDataType t = byocl_dtype_to_dlpack((byocl_dtype)d);
        byocl_dtype back;
        assert_true(byocl_dtype_from_dlpack(t, &back));
        assert_int_equal(back, d);
        assert_int_equal(t.lanes, 1);
    }
    DLDataType f16 = byocl_dtype_to_dlpack(BYOCL_FLOAT16), b = byocl_dtype_to_dlpack(BYOCL_BOOL);
    assert_int_equal(f16.code, kDLFloat);
    assert_int_equal(f16.bits, 16);
    assert_int_equal(b.code, kDLUInt);
    assert_int_equal(b.bits, 1);
    byocl_dtype out;
    assert_true(byocl_dtype_from_dlpack((DLDataType){kDLFloat, 64, 1}, &out));
    assert_int_equal(out, BYOCL_FLOAT64);
    assert_true(byocl_dtype_from_dlpack((DLDataType){kDLBfloat, 16, 1}, &out));
    assert_int_equal(out, BYOCL_BFLOAT16);
    assert_false(byocl_dtype_from_dlpack((DLDataType){kDLComplex, 64, 1}, &out));
    assert_false(byocl_dtype_from_dlpack((DLDataType){kDLFloat, 32, 4}, &out));
}

/* ------------------------------------------------------ the built-in models */

static void test_builtin_seed_matches_reference(void **state)
{
    (void)state;
    byocl_module *m;
    assert_int_equal(byocl_builtin_build("seed", &m, NULL), BYOCL_OK);
    check_equals_reference(m, 1);
    byocl_module_free(m);
}

static void test_builtin_resnet18_matches_reference(void **state)
{
    (void)state;
    byocl_module *m;
    assert_int_equal(byocl_builtin_build("resnet18", &m, NULL), BYOCL_OK);
    check_equals_reference(m, 2);
    byocl_compiled *c = build_ref(m);
    byocl_plan_stats st;
    byocl_compiled_stats(c, &st);
    assert_true(st.planned_bytes < st.intermediate_bytes / 4);
    byocl_executor *ex = new_executor(c);
    assert_true(check_no_live_overlap(c, ex) > 0);
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    byocl_module_free(m);
}

/* ------------------------------------------------------------ target host */

/* The same graphs (and the concatenations, the dense block) through the LLVM host
 * backend, with 2 threads: within 1e-5 relative L2 of the reference, and the same bytes
 * on every run. Skipped in a tree without it. */
static void test_host_target(void **state)
{
    (void)state;
    byocl_module *models[4] = {stress_graph(30), NULL, ts_parse_typed(concatenations),
                               ts_parse_typed(dense_block)};
    assert_int_equal(byocl_builtin_build("seed", &models[1], NULL), BYOCL_OK);
    for (int k = 0; k < 4; k++) {
        byocl_module *m = models[k];
        byocl_build_options o = byocl_build_options_default();
        o.threads = 2;
        byocl_compiled *c;
        byocl_error err;
        byocl_status st = byocl_build(m, &o, &c, &err);
        if (st == BYOCL_ERR_UNSUPPORTED) {
            print_message("target host skipped: %s\n", err.msg);
            for (int i = 0; i < 4; i++)
                byocl_module_free(models[i]);
            skip();
        }
        if (st != BYOCL_OK)
            fail_msg("build for host: %s", err.msg);
        assert_string_equal(byocl_compiled_target(c), "host");
        byocl_executor *ex = new_executor(c);
        byocl_tensor **in = random_inputs_in(m, 7, 0.0), **want, **first;
        int n_want;
        reference(m, in, &want, &n_want);
        set_inputs(ex, m, in);
        run(ex);
        assert_int_equal(byocl_executor_num_outputs(ex), n_want);
        first = calloc((size_t)n_want, sizeof *first);
        for (int i = 0; i < n_want; i++) {
            assert_int_equal(byocl_executor_copy_output(ex, i, &first[i], &err), BYOCL_OK);
            double e = ts_relative_l2(first[i], want[i]);
            if (!(e <= 1e-5))
                fail_msg("model %d, output %d: relative L2 %g", k, i, e);
        }
        run(ex);
        assert_true(outputs_equal(ex, first, n_want));
        assert_true(check_no_live_overlap(c, ex) > 0);
        byocl_tensors_free(first, n_want);
        byocl_tensors_free(want, n_want);
        free_inputs(m, in);
        byocl_executor_free(ex);
        byocl_compiled_free(c);
    }
    for (int i = 0; i < 4; i++)
        byocl_module_free(models[i]);
}

/* ------------------------------------------------------------ error paths */

static const char two_inputs[] = "#[version = \"0.0.5\"]\n"
                                 "def @main(%data: Tensor[(1, 4), float32], "
                                 "%weight: Tensor[(3, 4), float32], %bias: Tensor[(3), float32]) {\n"
                                 "  %0 = nn.dense(%data, %weight);\n"
                                 "  nn.bias_add(%0, %bias)\n"
                                 "}\n";

static void test_input_and_output_errors(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed(two_inputs);
    byocl_compiled *c = build_ref(m);
    byocl_executor *ex = new_executor(c);
    byocl_error err;
    assert_int_equal(byocl_compiled_num_inputs(c), 3);
    assert_string_equal(byocl_compiled_input_name(c, 1), "weight");
    assert_null(byocl_compiled_input_name(c, 3));
    assert_int_equal(byocl_compiled_num_outputs(c), 1);
    assert_int_equal(byocl_compiled_output_type(c, 0)->shape.dims[1], 3);

    assert_int_equal(byocl_executor_run(ex, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "inputs of @main not set: data, weight, bias");
    byocl_tensor *data = ts_tensor_f32(2, (int64_t[]){1, 4}, (float[]){1, 2, 3, 4});
    byocl_tensor *wrong = ts_tensor_f32(2, (int64_t[]){4, 3}, NULL);
    assert_int_equal(byocl_executor_set_input(ex, "data", data, &err), BYOCL_OK);
    assert_int_equal(byocl_executor_set_input(ex, "weight", wrong, &err), BYOCL_ERR_TYPE);
    assert_string_equal(err.msg, "input 'weight': expected Tensor[(3, 4), float32], got "
                                 "Tensor[(4, 3), float32]");
    assert_int_equal(byocl_executor_set_input(ex, "wieght", wrong, &err), BYOCL_ERR_NOT_FOUND);
    assert_string_equal(err.msg, "@main has no input 'wieght' (its inputs: data, weight, bias)");
    assert_int_equal(byocl_executor_run(ex, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "inputs of @main not set: weight, bias");
    byocl_tensor *bias = ts_tensor_f32(1, (int64_t[]){3}, (float[]){1, 1, 1});
    assert_int_equal(byocl_executor_set_input(ex, "bias", bias, &err), BYOCL_OK);
    assert_int_equal(byocl_executor_run(ex, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "input of @main not set: weight");

    const byocl_tensor *out;
    assert_int_equal(byocl_executor_output(ex, 0, &out, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "no outputs yet: the executor has not run");
    assert_null(out);

    /* The same inputs from DLTensors: every kind of mismatch. */
    float w[12];
    for (int i = 0; i < 12; i++)
        w[i] = (float)i;
    int64_t shape[2] = {3, 4}, strides[2] = {1, 3};
    DLTensor dl = {w, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 0};
    dl.strides = strides;
    assert_int_equal(byocl_executor_set_input_dl(ex, "weight", &dl, &err), BYOCL_ERR_UNSUPPORTED);
    assert_string_equal(err.msg, "input 'weight': expected Tensor[(3, 4), float32] in C order, "
                                 "got strides that are not");
    dl.strides = NULL;
    dl.dtype = (DLDataType){kDLComplex, 64, 1};
    assert_int_equal(byocl_executor_set_input_dl(ex, "weight", &dl, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "input 'weight': expected Tensor[(3, 4), float32], got a DLPack "
                                 "type byocl does not know (code 5, bits 64, lanes 1)");
    dl.dtype = (DLDataType){kDLInt, 32, 1};
    assert_int_equal(byocl_executor_set_input_dl(ex, "weight", &dl, &err), BYOCL_ERR_TYPE);
    assert_string_equal(err.msg, "input 'weight': expected Tensor[(3, 4), float32], got "
                                 "Tensor[(3, 4), int32]");
    dl.dtype = (DLDataType){kDLFloat, 32, 1};
    dl.device.device_type = kDLCUDA;
    assert_int_equal(byocl_executor_set_input_dl(ex, "weight", &dl, &err), BYOCL_ERR_UNSUPPORTED);
    assert_string_equal(err.msg, "input 'weight': expected Tensor[(3, 4), float32] in host memory "
                                 "(kDLCPU), got device type 2");
    dl.device.device_type = kDLCPU;
    dl.data = NULL;
    assert_int_equal(byocl_executor_set_input_dl(ex, "weight", &dl, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "input 'weight': expected Tensor[(3, 4), float32], got a tensor "
                                 "without data");
    dl.data = w;
    strides[0] = 4; /* compact strides are fine too */
    strides[1] = 1;
    dl.strides = strides;
    assert_int_equal(byocl_executor_set_input_dl(ex, "weight", &dl, &err), BYOCL_OK);
    run(ex);

    /* The result: data . weight^T + bias, computed here. */
    const float want[3] = {1 + 0 + 2 + 6 + 12, 1 + 4 + 10 + 18 + 28, 1 + 8 + 18 + 30 + 44};
    assert_int_equal(byocl_executor_output(ex, 0, &out, &err), BYOCL_OK);
    ts_assert_f32_close(out, want, 3, 0, 0);
    assert_int_equal(byocl_executor_output(ex, 1, &out, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "output index 1 is out of range: @main has 1 output");
    byocl_tensor *copy;
    assert_int_equal(byocl_executor_copy_output(ex, -1, &copy, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "output index -1 is out of range: @main has 1 output");
    assert_null(copy);
    byocl_tensor_unref(data);
    byocl_tensor_unref(wrong);
    byocl_tensor_unref(bias);
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    byocl_module_free(m);
}

/* A kernel that fails on its data (integer division by zero) stops the run and says where. */
static void test_kernel_failure(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed("#[version = \"0.0.5\"]\n"
                            "def @main(%a: Tensor[(4), int32], %b: Tensor[(4), int32]) {\n"
                            "  %0 = add(%a, %b);\n"
                            "  divide(%a, %0)\n"
                            "}\n");
    byocl_compiled *c = build_ref(m);
    byocl_executor *ex = new_executor(c);
    byocl_tensor *a = byocl_tensor_new(BYOCL_INT32, &(byocl_shape){1, {4}}, NULL);
    byocl_tensor *b = byocl_tensor_new(BYOCL_INT32, &(byocl_shape){1, {4}}, NULL);
    for (int i = 0; i < 4; i++) {
        byocl_tensor_set(a, i, 10 + i);
        byocl_tensor_set(b, i, i == 2 ? -12 : 1);
    }
    byocl_error err;
    assert_int_equal(byocl_executor_set_input(ex, "a", a, &err), BYOCL_OK);
    assert_int_equal(byocl_executor_set_input(ex, "b", b, &err), BYOCL_OK);
    assert_int_equal(byocl_executor_run(ex, &err), BYOCL_ERR_RUNTIME);
    assert_string_equal(err.msg, "in @main, the result (divide) at 4:3: divide: integer division "
                                 "by zero at output element 2");
    /* Fixed data, and the same executor runs. */
    byocl_tensor_set(b, 2, 5);
    assert_int_equal(byocl_executor_set_input(ex, "b", b, &err), BYOCL_OK);
    run(ex);
    const byocl_tensor *out;
    assert_int_equal(byocl_executor_output(ex, 0, &out, &err), BYOCL_OK);
    assert_true(byocl_tensor_get(out, 2) == 0); /* 12 / 17 */
    assert_true(byocl_tensor_get(out, 0) == 0); /* 10 / 11 */
    byocl_tensor_unref(a);
    byocl_tensor_unref(b);
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    byocl_module_free(m);
}

static void test_build_errors(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed(two_inputs);
    byocl_build_options o = ref_options();
    o.target = "gpu";
    expect_build_error(m, &o, BYOCL_ERR_INVALID, "unknown target 'gpu' (known: host, ref)");
    o = ref_options();
    o.threads = -2;
    expect_build_error(m, &o, BYOCL_ERR_INVALID,
                       "threads must be 0 (all cores) or a positive count, got -2");
    o = ref_options();
    o.opt_level = 4;
    expect_build_error(m, &o, BYOCL_ERR_INVALID, "opt_level must be 0..3, got 4");
    o = ref_options();
    o.fn_name = "nope";
    expect_build_error(m, &o, BYOCL_ERR_NOT_FOUND, "no function @nope in the module");
    byocl_compiled *c;
    byocl_error err;
    assert_int_equal(byocl_build(NULL, &o, &c, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "byocl_build: no module");
    byocl_module_free(m);

    /* A tuple-typed parameter is not an input the executor can take. */
    m = ts_parse_typed("#[version = \"0.0.5\"]\n"
              "def @main(%t: (Tensor[(2), float32], Tensor[(2), float32])) {\n"
              "  %0 = %t.0;\n"
              "  exp(%0)\n"
              "}\n");
    o = ref_options();
    expect_build_error(m, &o, BYOCL_ERR_UNSUPPORTED,
                       "parameter %t of @main is a tuple; the graph executor takes tensor inputs "
                       "only");
    byocl_module_free(m);
}

/* Defaults: target host, every core. */
static void test_default_options(void **state)
{
    (void)state;
    byocl_build_options o = byocl_build_options_default();
    assert_string_equal(o.target, "host");
    assert_string_equal(o.fn_name, "main");
    assert_int_equal(o.threads, 0);
    assert_int_equal(o.opt_level, 2);
    assert_null(o.region_compile);
    byocl_module *m = ts_parse_typed(two_inputs);
    o.target = "ref";
    byocl_compiled *c;
    assert_int_equal(byocl_build(m, &o, &c, NULL), BYOCL_OK);
    assert_int_equal(byocl_compiled_threads(c), base_cpu_count());
    assert_string_equal(byocl_compiled_target(c), "ref");
    byocl_compiled_free(c);
    byocl_module_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_storage_plan_reuse),
        cmocka_unit_test(test_storage_plan_random),
        cmocka_unit_test(test_storage_plan_offsets_random),
        cmocka_unit_test(test_stress_graph_matches_reference),
        cmocka_unit_test(test_stats_and_aliases),
        cmocka_unit_test(test_concat_in_place),
        cmocka_unit_test(test_copy_copies),
        cmocka_unit_test(test_outputs_valid_until_next_run),
        cmocka_unit_test(test_repeated_runs_identical),
        cmocka_unit_test(test_step_info),
        cmocka_unit_test(test_parallel_executors),
        cmocka_unit_test(test_thread_pool),
        cmocka_unit_test(test_thread_pool_short_jobs),
        cmocka_unit_test(test_thread_pool_shares),
        cmocka_unit_test(test_region_call_receives_executor_buffers),
        cmocka_unit_test(test_region_default_ref_module),
        cmocka_unit_test(test_parallel_executors_with_regions),
        cmocka_unit_test(test_region_errors),
        cmocka_unit_test(test_ref_region_module),
        cmocka_unit_test(test_dlpack_dtypes),
        cmocka_unit_test(test_builtin_seed_matches_reference),
        cmocka_unit_test(test_builtin_resnet18_matches_reference),
        cmocka_unit_test(test_host_target),
        cmocka_unit_test(test_input_and_output_errors),
        cmocka_unit_test(test_kernel_failure),
        cmocka_unit_test(test_build_errors),
        cmocka_unit_test(test_default_options),
    };
    /* BYOCL_TEST_FILTER=test_parallel* picks tests (e.g. for a run under helgrind). */
    if (getenv("BYOCL_TEST_FILTER"))
        cmocka_set_test_filter(getenv("BYOCL_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
