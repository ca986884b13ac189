/* `byocl run` on the graph executor: --target, --threads, --runs, --stats, --profile, the
 * usage errors of their combinations, and results equal to the reference executor's. */
#include "test_support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* snprintf into a fixed buffer, failing the test rather than truncating. */
#define FMT(buf, ...) assert_true(snprintf((buf), sizeof(buf), __VA_ARGS__) < (int)sizeof(buf))

/* Runs the CLI, checks the exit code and the exact stderr (NULL: anything); returns stdout
 * (caller frees). (test_cli.c has the same helper.) */
static byocl_tensor *read_npy(const char *dir, int index)
{
    char path[4300];
    FMT(path, "%s/output_%d.npy", dir, index);
    byocl_tensor *t = NULL;
    byocl_error err;
    if (byocl_npy_read(path, &t, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return t;
}

/* Line `k` (0-based) of `text`, without its newline, into buf. */
static void line_at(const char *text, int k, char *buf, size_t len)
{
    for (int i = 0; i < k && text; i++) {
        text = strchr(text, '\n');
        text = text ? text + 1 : NULL;
    }
    assert_non_null(text);
    size_t n = strcspn(text, "\n");
    assert_true(n < len);
    memcpy(buf, text, n);
    buf[n] = '\0';
}

/* Both executors write the same outputs, bit for bit: the seed graph's three outputs. */
static void test_target_ref_equals_reference(void **state)
{
    (void)state;
    const char *tmp = ts_tmpdir("cli-run-target");
    char args[4400], ref_dir[4200], graph_dir[4200];
    FMT(ref_dir, "%s/ref", tmp);
    FMT(graph_dir, "%s/graph", tmp);
    FMT(args, "run builtin:seed --random-inputs=3 --output-dir '%s'", ref_dir);
    free(ts_cli_expect(args, 0, ""));
    FMT(args, "run builtin:seed --random-inputs=3 --target ref --threads 3 --output-dir '%s'",
        graph_dir);
    char *out = ts_cli_expect(args, 0, "");
    assert_true(strncmp(out, "built @main of builtin:seed for target ref in ", 46) == 0);
    ts_assert_contains(out, " ms: 6 steps, 3 threads\nran @main of builtin:seed on target ref in ");
    ts_assert_contains(out, " ms (first run)\noutput 0: Tensor[(1, 16, 224, 224), float32]\n  min ");
    char line[4400];
    FMT(line, "wrote %s/output_2.npy\n", graph_dir);
    ts_assert_contains(out, line);
    free(out);
    for (int i = 0; i < 3; i++) {
        byocl_tensor *want = read_npy(ref_dir, i), *got = read_npy(graph_dir, i);
        assert_true(byocl_tensor_equal(got, want));
        byocl_tensor_unref(want);
        byocl_tensor_unref(got);
    }
    ts_remove_tree(tmp);
}

static const char chain_model[] = "#[version = \"0.0.5\"]\n"
                                  "def @main(%x: Tensor[(1, 1024), float32]) {\n"
                                  "  %0 = nn.relu(%x);\n"
                                  "  %1 = exp(%0);\n"
                                  "  %2 = nn.relu(%1);\n"
                                  "  %3 = abs(%2);\n"
                                  "  nn.relu(%3)\n"
                                  "}\n";

/* --stats: the exact numbers for a chain of five ops (4 intermediates of 4 KiB share two
 * buffers), and for a concatenation done in place. */
static void test_stats(void **state)
{
    (void)state;
    const char *tmp = ts_tmpdir("cli-run-stats");
    char path[4200], args[4400];
    FMT(path, "%s/chain.relay", tmp);
    ts_write_text(path, chain_model);
    FMT(args, "run '%s' --random-inputs --target ref --threads 1 --stats", path);
    char *out = ts_cli_expect(args, 0, "");
    ts_assert_contains(out, "stats: 5 steps (5 kernels of 1 function, 0 regions)\n"
                            "  intermediates: 4 tensors, 16384 bytes without reuse\n"
                            "  storage plan:  8192 bytes, one pool of 2 blocks (50.0% of the "
                            "intermediates)\n"
                            "  live peak:     8192 bytes (the least a plan of this step order can "
                            "use): the plan is 1.00x\n"
                            "  inputs 4096 bytes, outputs 4096 bytes, constants 0 bytes\n");
    char line[256];
    line_at(out, 0, line, sizeof line);
    ts_assert_contains(line, " ms: 5 steps, 1 thread");
    free(out);
    /* A concatenation done in place: no step, its inputs no tensors of their own. */
    FMT(path, "%s/concat.relay", tmp);
    ts_write_text(path, "#[version = \"0.0.5\"]\n"
                        "def @main(%x: Tensor[(1, 16, 4, 4), float32]) {\n"
                        "  %0 = nn.relu(%x);\n"
                        "  %1 = exp(%x);\n"
                        "  %2 = (%0, %1);\n"
                        "  %3 = concatenate(%2, axis=1);\n"
                        "  nn.relu(%3)\n"
                        "}\n");
    FMT(args, "run '%s' --random-inputs --target ref --threads 1 --stats", path);
    out = ts_cli_expect(args, 0, "");
    ts_assert_contains(out, "stats: 3 steps (3 kernels of 1 function, 0 regions)\n"
                            "  intermediates: 1 tensor, 2048 bytes without reuse\n"
                            "  in place:      1 concatenation (their inputs written into their "
                            "slices)\n"
                            "  storage plan:  2048 bytes, one pool of 1 block (100.0% of the "
                            "intermediates)\n");
    free(out);
    ts_remove_tree(tmp);
}

/* Runs @main(params) { body } on the host with --stats, expects `stats` in the output and
 * the output to match the reference executor's. */
static void expect_twins(const char *params, const char *body, const char *stats)
{
    const char *tmp = ts_tmpdir("cli-run-twins");
    char path[4200], args[8800], text[1024];
    FMT(path, "%s/twins.relay", tmp);
    FMT(text, "#[version = \"0.0.5\"]\ndef @main(%s) {\n%s}\n", params, body);
    ts_write_text(path, text);
    FMT(args, "run '%s' --random-inputs --target host --stats --output-dir '%s/host'", path, tmp);
    char *out = ts_cli_expect(args, 0, "");
    ts_assert_contains(out, stats);
    free(out);
    FMT(args, "run '%s' --random-inputs --output-dir '%s/ref'", path, tmp);
    free(ts_cli_expect(args, 0, ""));
    char file[8800];
    byocl_tensor *t[2];
    byocl_error err = {0};
    const char *dirs[2] = {"host", "ref"};
    for (int k = 0; k < 2; k++) {
        FMT(file, "%s/%s/output_0.npy", tmp, dirs[k]);
        assert_int_equal(byocl_npy_read(file, &t[k], &err), BYOCL_OK);
    }
    assert_true(ts_relative_l2(t[0], t[1]) < 1e-5);
    byocl_tensor_unref(t[0]);
    byocl_tensor_unref(t[1]);
    ts_remove_tree(tmp);
}

/* Two conv + relu groups of equal shapes (different weights, read through each kernel's
 * own arguments): the host backend compiles one function for both, and the outputs are
 * still each group's own (against the reference executor). Two conv groups whose code
 * differs only in a float constant of the epilogue (equal signatures, backend.c) keep a
 * function each. Convs that differ only in their channel counts (read from ctx,
 * lw_ctx_int) share one: padded 3x3 convs (the input copied into X') and 1x1 convs that
 * read it in place, their weights packed by the kernel, and deep 1x1 convs that reduce
 * in blocks of input channels (the block size does not depend on their count). 1x1 convs
 * that read their input in place also take their map's sizes from ctx: two on maps of
 * 18x18 and 9x9 (by position) or 14x14 and 7x7 (by channel, in blocks) share one, a max
 * pool between them. So do two 1x1 convs on 1x1 maps (GEMVs, whose sizes come from ctx
 * too) of 48 -> 40 and 40 -> 36 channels. */
static void test_equal_kernels_share_code(void **state)
{
    (void)state;
    const char *same = "%x: Tensor[(1, 8, 16, 16), float32], %w1: Tensor[(8, 8, 3, 3), float32], "
                       "%w2: Tensor[(8, 8, 3, 3), float32]";
    expect_twins(same,
                 "  %0 = nn.conv2d(%x, %w1, padding=[1, 1, 1, 1]);\n  %1 = nn.relu(%0);\n"
                 "  %2 = nn.conv2d(%1, %w2, padding=[1, 1, 1, 1]);\n  nn.relu(%2)\n",
                 "stats: 2 steps (2 kernels of 1 function, 0 regions)\n");
    expect_twins(same,
                 "  %0 = nn.conv2d(%x, %w1, padding=[1, 1, 1, 1]);\n  %1 = multiply(%0, 2f);\n"
                 "  %2 = nn.conv2d(%1, %w2, padding=[1, 1, 1, 1]);\n  multiply(%2, 3f)\n",
                 "stats: 2 steps (2 kernels of 2 functions, 0 regions)\n");
    /* (10 x 10 maps: both convs under 2^18 MACs, one task each at any thread count; units
     * of packed weights under the 8 KiB from which a unit's first tile prefetches them,
     * which, like the blocks, gives a conv code of its own) */
    expect_twins("%x: Tensor[(1, 8, 10, 10), float32], %w1: Tensor[(12, 8, 3, 3), float32], "
                 "%w2: Tensor[(12, 12, 3, 3), float32]",
                 "  %0 = nn.conv2d(%x, %w1, padding=[1, 1, 1, 1]);\n  %1 = nn.relu(%0);\n"
                 "  %2 = nn.conv2d(%1, %w2, padding=[1, 1, 1, 1]);\n  nn.relu(%2)\n",
                 "stats: 2 steps (2 kernels of 1 function, 0 regions)\n");
    expect_twins("%x: Tensor[(1, 24, 9, 9), float32], %w1: Tensor[(40, 24, 1, 1), float32], "
                 "%w2: Tensor[(40, 40, 1, 1), float32]",
                 "  %0 = nn.conv2d(%x, %w1);\n  %1 = nn.relu(%0);\n"
                 "  %2 = nn.conv2d(%1, %w2);\n  nn.relu(%2)\n",
                 "stats: 2 steps (2 kernels of 1 function, 0 regions)\n");
    expect_twins("%x: Tensor[(1, 1024, 7, 7), float32], %w1: Tensor[(1536, 1024, 1, 1), float32], "
                 "%w2: Tensor[(1536, 1536, 1, 1), float32]",
                 "  %0 = nn.conv2d(%x, %w1);\n  %1 = nn.relu(%0);\n"
                 "  %2 = nn.conv2d(%1, %w2);\n  nn.relu(%2)\n",
                 "stats: 2 steps (2 kernels of 1 function, 0 regions)\n");
    expect_twins("%x: Tensor[(1, 24, 18, 18), float32], %w1: Tensor[(40, 24, 1, 1), float32], "
                 "%w2: Tensor[(40, 40, 1, 1), float32]",
                 "  %0 = nn.conv2d(%x, %w1);\n  %1 = nn.relu(%0);\n"
                 "  %2 = nn.max_pool2d(%1, pool_size=[2, 2], strides=[2, 2]);\n"
                 "  %3 = nn.conv2d(%2, %w2);\n  nn.relu(%3)\n",
                 "stats: 3 steps (3 kernels of 2 functions, 0 regions)\n");
    expect_twins("%x: Tensor[(1, 256, 14, 14), float32], %w1: Tensor[(256, 256, 1, 1), float32], "
                 "%w2: Tensor[(128, 256, 1, 1), float32]",
                 "  %0 = nn.conv2d(%x, %w1);\n  %1 = nn.relu(%0);\n"
                 "  %2 = nn.max_pool2d(%1, pool_size=[2, 2], strides=[2, 2]);\n"
                 "  %3 = nn.conv2d(%2, %w2);\n  nn.relu(%3)\n",
                 "stats: 3 steps (3 kernels of 2 functions, 0 regions)\n");
    expect_twins("%x: Tensor[(1, 48, 1, 1), float32], %w1: Tensor[(40, 48, 1, 1), float32], "
                 "%w2: Tensor[(36, 40, 1, 1), float32]",
                 "  %0 = nn.conv2d(%x, %w1);\n  %1 = nn.relu(%0);\n"
                 "  %2 = nn.conv2d(%1, %w2);\n  nn.relu(%2)\n",
                 "stats: 2 steps (2 kernels of 1 function, 0 regions)\n");
    /* Pools and elementwise groups whose outer loop (the planes, the channels) is all that
     * differs: 5 kernels of 3 functions (the two multiplies, the two pools, the conv). */
    expect_twins("%x: Tensor[(1, 8, 16, 16), float32], %s1: Tensor[(1, 8, 1, 1), float32], "
                 "%w1: Tensor[(16, 8, 1, 1), float32], %s2: Tensor[(1, 16, 1, 1), float32]",
                 "  %0 = multiply(%x, %s1);\n"
                 "  %1 = nn.max_pool2d(%0, pool_size=[3, 3], padding=[1, 1, 1, 1]);\n"
                 "  %2 = nn.conv2d(%1, %w1);\n"
                 "  %3 = nn.max_pool2d(%2, pool_size=[3, 3], padding=[1, 1, 1, 1]);\n"
                 "  multiply(%3, %s2)\n",
                 "stats: 5 steps (5 kernels of 3 functions, 0 regions)\n");
}

/* --profile: one line per step, slowest first, and a total; --runs: min, median, max. */
static void test_profile_and_runs(void **state)
{
    (void)state;
    const char *tmp = ts_tmpdir("cli-run-profile");
    char path[4200], args[4400];
    FMT(path, "%s/chain.relay", tmp);
    ts_write_text(path, chain_model);
    FMT(args, "run '%s' --random-inputs --target ref --profile --runs 4", path);
    char *out = ts_cli_expect(args, 0, "");
    /* The first run after the build apart, then the steady state of the others. */
    FMT(args, "ran @main of %s on target ref 4 times: first run ", path);
    ts_assert_contains(out, args);
    ts_assert_contains(out, " ms; steady state (3 runs): min ");
    ts_assert_contains(out, " ms, median ");
    ts_assert_contains(out, " ms, max ");
    ts_assert_contains(out, "profile: 5 steps, mean of 4 runs\n"
                            "          ms      %   GFLOP/s  step\n");
    const char *table = strstr(out, "profile: ");
    static const char *const names[] = {"nn_relu_0 (kernel, ref)", "exp_1 (kernel, ref)",
                                        "nn_relu_2 (kernel, ref)", "abs_3 (kernel, ref)",
                                        "nn_relu_result (kernel, ref)"};
    for (int i = 0; i < 5; i++)
        ts_assert_contains(table, names[i]);
    double prev = 1e300;
    char line[256];
    for (int k = 2; k < 7; k++) { /* the step lines, slowest first */
        line_at(table, k, line, sizeof line);
        double ms = strtod(line, NULL);
        assert_true(ms <= prev);
        prev = ms;
        /* 1024 elements, one flop each: GFLOP/s = 1024 / (ms * 1e6). */
        char *pct = strchr(line, '%');
        assert_non_null(pct);
        double gflops = strtod(pct + 1, NULL);
        /* ms and GFLOP/s are printed rounded (3 and 2 decimals): on a loaded machine a slow
         * step prints 0.00 GFLOP/s, which must then be what its time gives. */
        if (ms >= 0.01) {
            double want = 1024 / (ms * 1e6);
            if (fabs(gflops - want) > 0.005 + 0.1 * want)
                fail_msg("step line '%s': %.2f GFLOP/s, its time gives %.4f", line, gflops,
                         want);
        }
    }
    line_at(table, 7, line, sizeof line);
    ts_assert_contains(line, "100.0%");
    ts_assert_contains(line, "  total");
    const char *total = strstr(table, "  total\n");
    assert_non_null(total);
    assert_string_equal(total, "  total\n"); /* the table ends the output */
    free(out);

    /* --runs works with the reference executor too. */
    out = ts_cli_expect("run builtin:seed --random-inputs --runs 2", 0, "");
    assert_true(strncmp(out, "ran @main of builtin:seed on the ref executor 2 times: min ", 59) ==
                0);
    ts_assert_contains(out, " ms, median ");
    ts_assert_contains(out, " ms, max ");
    free(out);
    ts_remove_tree(tmp);
}

/* A partitioned model: the region is one step of the ref region module, and the results
 * are the reference executor's. */
static void test_partitioned_model(void **state)
{
    (void)state;
    const char *tmp = ts_tmpdir("cli-run-region");
    char path[4200], args[4400], ref_dir[4200], graph_dir[4200];
    FMT(path, "%s/part.relay", tmp);
    FMT(ref_dir, "%s/ref", tmp);
    FMT(graph_dir, "%s/graph", tmp);
    ts_write_text(path,
               "#[version = \"0.0.5\"]\n"
               "def @acc_main_0(%acc_0_i0: Tensor[(2, 8), float32], Compiler=\"acc\", "
               "Primitive=1, Inline=1, global_symbol=\"acc_main_0\") -> Tensor[(2, 8), float32] {\n"
               "  %0 = nn.relu(%acc_0_i0);\n"
               "  exp(%0)\n"
               "}\n"
               "\n"
               "def @main(%x: Tensor[(2, 8), float32]) {\n"
               "  %0 = add(%x, %x);\n"
               "  %1 = @acc_main_0(%0);\n"
               "  (%1, %0)\n"
               "}\n");
    FMT(args, "run '%s' --random-inputs=5 --output-dir '%s'", path, ref_dir);
    free(ts_cli_expect(args, 0, ""));
    FMT(args, "run '%s' --random-inputs=5 --target ref --profile --stats --output-dir '%s'", path,
        graph_dir);
    char *out = ts_cli_expect(args, 0, "");
    ts_assert_contains(out, "stats: 2 steps (1 kernel of 1 function, 1 region)\n");
    ts_assert_contains(out, "  acc_main_0 (region, ref)\n");
    ts_assert_contains(out, "  add_0 (kernel, ref)\n");
    free(out);
    for (int i = 0; i < 2; i++) {
        byocl_tensor *want = read_npy(ref_dir, i), *got = read_npy(graph_dir, i);
        assert_true(byocl_tensor_equal(got, want));
        byocl_tensor_unref(want);
        byocl_tensor_unref(got);
    }
    ts_remove_tree(tmp);
}

/* A kernel that fails on its data: the error names the node; nothing on stdout but the
 * build line. A constant computation that fails: the build fails, naming the node. */
static void test_run_failure(void **state)
{
    (void)state;
    const char *tmp = ts_tmpdir("cli-run-fail");
    char path[4200], args[4400];
    FMT(path, "%s/div.relay", tmp);
    ts_write_text(path, "#[version = \"0.0.5\"]\n"
                     "def @main(%a: Tensor[(3), int32]) {\n"
                     "  %0 = subtract(%a, %a);\n"
                     "  divide(%a, %0)\n"
                     "}\n");
    FMT(args, "run '%s' --random-inputs --target ref", path);
    char *out = ts_cli_expect(args, 1,
                           "byocl: error: in @main, the result (divide) at 4:3: divide: integer "
                           "division by zero at output element 0\n");
    assert_true(strncmp(out, "built @main of ", 15) == 0);
    assert_null(strstr(out, "ran @main"));
    free(out);
    /* A constant computation that fails is folded when the model is built (byocl_build
     * folds @main's constants), so the build fails, naming the node, before any run. */
    FMT(path, "%s/take.relay", tmp);
    ts_write_text(path, "#[version = \"0.0.5\"]\n"
                     "def @main(%x: Tensor[(2), float32]) {\n"
                     "  %0 = shape_of(%x);\n"
                     "  %1 = take(%0, 5, mode=\"fast\");\n"
                     "  (%x, %1)\n"
                     "}\n");
    FMT(args, "run '%s' --random-inputs --target host", path);
    out = ts_cli_expect(args, 1,
                        "byocl: error: in @main, %1 (take) at 4:8: cannot fold: take: index 5 is "
                        "out of range for an axis of 1\n");
    assert_null(strstr(out, "built @main"));
    free(out);
    ts_remove_tree(tmp);
}

static void test_usage_errors(void **state)
{
    (void)state;
    ts_cli_expect_usage("run builtin:seed --random-inputs --target ref --executor ref",
                 "byocl: error: --target and --executor are mutually exclusive (--executor ref "
                 "runs the reference executor, --target builds for the graph executor); see "
                 "'byocl run --help'\n");
    ts_cli_expect_usage("run builtin:seed --random-inputs --target gpu",
                 "byocl: error: unknown target 'gpu' (known: host, ref, opencl); see 'byocl run --help'\n");
    ts_cli_expect_usage("run builtin:seed --random-inputs --threads 2",
                 "byocl: error: --threads needs --target (it is about the graph executor); see "
                 "'byocl run --help'\n");
    ts_cli_expect_usage("run builtin:seed --random-inputs --profile",
                 "byocl: error: --profile needs --target (it is about the graph executor); see "
                 "'byocl run --help'\n");
    ts_cli_expect_usage("run builtin:seed --executor ref --stats",
                 "byocl: error: --stats needs --target (it is about the graph executor); see "
                 "'byocl run --help'\n");
    ts_cli_expect_usage("run builtin:seed --target ref --threads 0",
                 "byocl: error: --threads 0: expected a count from 1 to 4096; see 'byocl run "
                 "--help'\n");
    ts_cli_expect_usage("run builtin:seed --target ref --threads=two",
                 "byocl: error: --threads two: expected a count from 1 to 4096; see 'byocl run "
                 "--help'\n");
    ts_cli_expect_usage("run builtin:seed --runs -1",
                 "byocl: error: --runs -1: expected a count from 1 to 1000000; see 'byocl run "
                 "--help'\n");
    ts_cli_expect_usage("run builtin:seed --target ref --runs 2x",
                 "byocl: error: --runs 2x: expected a count from 1 to 1000000; see 'byocl run "
                 "--help'\n");
    /* The unbound-parameter message is the same whichever executor runs (the reference
     * executor's: tests/bad/cli.cases, unbound_parameter). A built-in model runs on its
     * deterministic random inputs instead (test_cli.c). */
    char small[4200], args[4400], want[4600];
    FMT(small, "%s/../bad/text/small.relay", BYOCL_FIXTURES_DIR);
    FMT(args, "run '%s' --target ref", small);
    FMT(want,
        "byocl: error: @main of %s has 1 unbound parameter: x; give each with --input "
        "NAME=FILE, bind them with --params FILE.npz, or pass --random-inputs\n",
        small);
    char *out = ts_cli_expect(args, 1, want);
    assert_string_equal(out, "");
    free(out);
    /* With two runs the steady state is the one run after the first. */
    out = ts_cli_expect("run builtin:seed --target ref --runs 2", 0, "");
    ts_assert_contains(out, "ran @main of builtin:seed on target ref 2 times: first run ");
    ts_assert_contains(out, " ms; steady state (1 run): ");
    free(out);
}

static void test_help(void **state)
{
    (void)state;
    char *out = ts_cli_expect("run --help", 0, "");
    ts_assert_contains(out, "--target NAME");
    ts_assert_contains(out, "--threads N");
    ts_assert_contains(out, "--runs N");
    ts_assert_contains(out, "--profile");
    ts_assert_contains(out, "--stats");
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_target_ref_equals_reference),
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_equal_kernels_share_code),
        cmocka_unit_test(test_profile_and_runs),
        cmocka_unit_test(test_partitioned_model),
        cmocka_unit_test(test_run_failure),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_help),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
