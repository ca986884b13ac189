/* The CLI of split, run-stages and dot, run as a user runs it: help, exact messages and
 * exit codes, no output left behind by an error, and run-stages giving bitwise what
 * `byocl run` gives on the original model (builtin:resnet18 and builtin:seed). */
#include "test_support.h"

#include "byocl/dot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FMT(buf, ...) assert_true(snprintf((buf), sizeof(buf), __VA_ARGS__) < (int)sizeof(buf))

#define SEED_PARAMS "data, weight, bn_gamma, bn_beta, bn_mean, bn_var, w0"

static bool exists(const char *path)
{
    return access(path, F_OK) == 0;
}

static byocl_tensor *read_npy(const char *dir, const char *name)
{
    char path[4300];
    FMT(path, "%s/%s", dir, name);
    byocl_tensor *t = NULL;
    byocl_error err;
    if (byocl_npy_read(path, &t, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return t;
}

static void assert_same_npy(const char *dir_a, const char *dir_b, const char *name)
{
    byocl_tensor *a = read_npy(dir_a, name), *b = read_npy(dir_b, name);
    assert_true(byocl_tensor_equal(a, b));
    byocl_tensor_unref(a);
    byocl_tensor_unref(b);
}

/* The text after the first line (which holds a run time). */
static const char *after_first_line(const char *text)
{
    const char *nl = strchr(text, '\n');
    assert_non_null(nl);
    return nl + 1;
}

/* ------------------------------------------------------------------ help */

static void test_help(void **state)
{
    (void)state;
    static const struct {
        const char *cmd, *usage;
    } cases[] = {
        {"split", "Usage: byocl split MODEL (--at %A,%B | --parts N [--balance flops|measured]) "
                  "-o DIR\n"
                  "                   [--params FILE.npz]\n"
                  "                   [--target T [--device D] [--threads N] [--repeat R]]\n"},
        {"run-stages", "Usage: byocl run-stages DIR [--input NAME=FILE]... "
                       "[--random-inputs[=SEED] [--count N]]\n"
                       "                        [--inputs DIR] [--output-dir DIR]\n"
                       "                        [--target T [--device D] [--threads N]]\n"},
        {"dot", "Usage: byocl dot MODEL [--params FILE.npz] [-o OUT.dot]\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[64];
        FMT(args, "%s --help", cases[i].cmd);
        char *out = ts_cli_expect(args, 0, "");
        assert_true(strncmp(out, cases[i].usage, strlen(cases[i].usage)) == 0);
        ts_assert_contains(out, "-h, --help");
        FMT(args, "help %s", cases[i].cmd);
        char *same = ts_cli_expect(args, 0, "");
        assert_string_equal(same, out);
        free(same);
        free(out);
    }
    char *out = ts_cli_expect("--help", 0, "");
    ts_assert_contains(out, "  split ");
    ts_assert_contains(out, " split a model into pipeline stages\n");
    ts_assert_contains(out, "  run-stages ");
    ts_assert_contains(out, " run the stages that `byocl split` wrote, in one process or across "
                            "MPI ranks\n");
    ts_assert_contains(out, "  dot ");
    ts_assert_contains(out, " draw a model's graph (Graphviz), regions as clusters\n");
    free(out);
    out = ts_cli_expect("split --help", 0, "");
    ts_assert_contains(out, "  --at %A,%B ");
    ts_assert_contains(out, "  --parts N ");
    ts_assert_contains(out, "  --balance flops|measured ");
    ts_assert_contains(out, "  --repeat R ");
    ts_assert_contains(out, "  -o, --output DIR ");
    free(out);
}

/* ------------------------------------------------------------------ split */

static void test_split_usage_errors(void **state)
{
    (void)state;
    const char *tmp = ts_tmpdir("cli-split-usage");
    char dir[4200], args[4400];
    FMT(dir, "%s/out", tmp);
    static const struct {
        const char *flags, *err;
    } cases[] = {
        {"", "give the cut points (--at %A,%B) or a number of parts (--parts N)"},
        {"--at %3 --parts 2", "give --at or --parts, not both"},
        {"--at %3,x", "--at %3,x: expected node numbers separated by commas, like %12,%30"},
        {"--at %3,", "--at %3,: expected node numbers separated by commas, like %12,%30"},
        {"--at %%3", "--at %%3: expected node numbers separated by commas, like %12,%30"},
        {"--parts 0", "--parts 0: N must be a positive integer"},
        {"--parts 2x", "--parts 2x: N must be a positive integer"},
        {"--parts -1", "--parts -1: N must be a positive integer"},
        {"--parts 99999999999", "--parts 99999999999: N must be a positive integer"},
        {"--parts 2 --balance time", "unknown --balance 'time' (known: flops, measured)"},
        {"--at %3 --balance measured", "--balance goes with --parts N (--at gives the cuts)"},
        {"--at %3 --balance flops", "--balance goes with --parts N (--at gives the cuts)"},
        {"--parts 2 --target host",
         "--target goes with --balance measured (it times the model on a target)"},
        {"--parts 2 --balance flops --threads 2",
         "--threads goes with --balance measured (it times the model on a target)"},
        {"--at %3 --repeat 3",
         "--repeat goes with --balance measured (it times the model on a target)"},
        {"--parts 2 --device 0",
         "--device goes with --balance measured (it times the model on a target)"},
        {"--parts 2 --balance measured --repeat 1",
         "--repeat 1: expected a count from 2 to 1000 (the first run is a warm-up)"},
        {"--parts 2 --balance measured --threads 0",
         "--threads 0: expected a count from 1 to 4096"},
        {"--parts 2 --balance measured --target npu",
         "unknown target 'npu' (known: host, ref, opencl)"},
        {"--parts 2 --balance measured --device 0",
         "--device goes with a region target (--target T)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char want[512];
        FMT(args, "split builtin:seed %s -o '%s'", cases[i].flags, dir);
        FMT(want, "byocl: error: %s; see 'byocl split --help'\n", cases[i].err);
        ts_cli_expect_error(args, 2, want);
        assert_false(exists(dir));
    }
    ts_cli_expect_error("split builtin:seed --parts 2",
                 2, "byocl: error: give the directory to write the stages to (-o DIR); see "
                    "'byocl split --help'\n");
    ts_cli_expect_error("split --parts 2 -o x", 2,
                 "byocl: error: missing MODEL; see 'byocl split --help'\n");
    ts_remove_tree(tmp);
}

static void test_split_failures_write_nothing(void **state)
{
    (void)state;
    const char *tmp = ts_tmpdir("cli-split-fail");
    char base[4200], dir[4300], args[9000], want[9000];
    FMT(base, "%s", tmp);
    FMT(dir, "%s/out", base);
    FMT(args, "split builtin:seed --at %%3,%%99 -o '%s'", dir);
    ts_cli_expect_error(args, 1,
                 "byocl: error: cut after %99: @main has no node %99 (`byocl print` numbers "
                 "its nodes %0 to %17)\n");
    FMT(args, "split builtin:seed --parts 99 -o '%s'", dir);
    ts_cli_expect_error(args, 1,
                 "byocl: error: cannot split @main into 99 parts: its 19 nodes make at most 16 "
                 "stages (a TupleGetItem goes with the tuple it reads)\n");
    FMT(args, "split '%s/none.relay' --parts 2 -o '%s'", base, dir);
    char *out = ts_cli_expect(args, 1, NULL);
    assert_string_equal(out, "");
    free(out);
    assert_false(exists(dir));

    /* A directory that holds files is left as it is. */
    FMT(args, "mkdir -p '%s' && echo mine > '%s/keep.txt'", dir, dir);
    assert_int_equal(system(args), 0);
    FMT(args, "split builtin:seed --parts 2 -o '%s'", dir);
    FMT(want, "byocl: error: %s exists and is not empty; remove it or choose another "
              "directory\n",
        dir);
    ts_cli_expect_error(args, 1, want);
    FMT(args, "test \"$(ls '%s')\" = keep.txt && test \"$(cat '%s/keep.txt')\" = mine", dir,
        dir);
    assert_int_equal(system(args), 0);
    /* The parent holds nothing else: no temporary directory was left. */
    FMT(args, "test \"$(ls -A '%s')\" = out", base);
    assert_int_equal(system(args), 0);
    ts_remove_tree(base);
}

/* Split both ways and run: bitwise the outputs of `byocl run` on the original. */
static void test_split_and_run_resnet18(void **state)
{
    (void)state;
    const char *tmp = ts_tmpdir("cli-split-r18");
    char base[4200], stages[4300], out_run[4300], out_stages[4300], args[9000], want[9000];
    FMT(base, "%s", tmp);
    FMT(stages, "%s/stages", base);
    FMT(out_run, "%s/run", base);
    FMT(out_stages, "%s/from-stages", base);

    FMT(args, "split builtin:resnet18 --parts 3 -o '%s'", stages);
    char *out = ts_cli_expect(args, 0, "");
    FMT(want,
        "split @main of builtin:resnet18 into 3 stages, balanced by estimated FLOPs\n"
        "  stage 0: %%0 to %%26 (27 nodes, 1.28 GFLOPs); inputs: data; outputs: %%22, %%26\n"
        "  stage 1: %%27 to %%55 (29 nodes, 1.07 GFLOPs); inputs: s0_22, s0_26; outputs: "
        "%%55\n"
        "  stage 2: %%56 to the result (34 nodes, 1.29 GFLOPs); inputs: s1_55; outputs: the "
        "result\n"
        "wrote %s (manifest.json wires the stages; run them with: byocl run-stages %s "
        "--random-inputs)\n",
        stages, stages);
    assert_string_equal(out, want);
    free(out);
    static const char *const files[] = {"manifest.json", "stage_0.relay", "stage_0.npz",
                                        "stage_1.relay", "stage_1.npz",   "stage_2.relay",
                                        "stage_2.npz"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[4400];
        FMT(path, "%s/%s", stages, files[i]);
        assert_true(exists(path));
    }

    FMT(args, "run builtin:resnet18 --random-inputs=3 --output-dir '%s'", out_run);
    char *run_out = ts_cli_expect(args, 0, "");
    FMT(args, "run-stages '%s' --random-inputs=3 --output-dir '%s'", stages, out_stages);
    out = ts_cli_expect(args, 0, "");
    FMT(want, "ran 3 stages of %s on the ref executor in ", stages);
    assert_true(strncmp(out, want, strlen(want)) == 0);
    const char *rest = after_first_line(out);
    for (int k = 0; k < 3; k++) { /* "  stage K: T ms" */
        char stage_line[32];
        FMT(stage_line, "  stage %d: ", k);
        assert_true(strncmp(rest, stage_line, strlen(stage_line)) == 0);
        rest = after_first_line(rest);
    }
    /* The summary and the files written read as `byocl run`'s, paths aside. */
    const char *summary = after_first_line(run_out);
    const char *wrote = strstr(summary, "wrote ");
    assert_non_null(wrote);
    assert_true(strncmp(rest, summary, (size_t)(wrote - summary)) == 0);
    FMT(want, "wrote %s/output_0.npy\n", out_stages);
    assert_string_equal(rest + (wrote - summary), want);
    assert_same_npy(out_run, out_stages, "output_0.npy");
    free(out);

    /* Balanced by the time each node takes on the host: the cuts move, and the stages
     * still give bitwise what `byocl run` gives. */
    char timed[4300], out_timed[4300];
    FMT(timed, "%s/timed", base);
    FMT(out_timed, "%s/from-timed", base);
    FMT(args, "split builtin:resnet18 --parts 3 --balance measured --threads 1 --repeat 3 -o '%s'",
        timed);
    out = ts_cli_expect(args, 0, "");
    const char *head = "split @main of builtin:resnet18 into 3 stages, balanced by measured "
                       "time\n"
                       "timed on target host, 1 thread: ";
    assert_true(strncmp(out, head, strlen(head)) == 0);
    rest = after_first_line(after_first_line(out));
    ts_assert_contains(out, " ms a run (median of 2 runs after a warm-up), ");
    assert_null(strstr(out, "no node of @main")); /* every step's time went to its nodes */
    double sum = 0;
    for (int k = 0; k < 3; k++) { /* "  stage K: %A to %B (N nodes, F GFLOPs, T ms); ..." */
        char stage_line[32];
        FMT(stage_line, "  stage %d: ", k);
        assert_true(strncmp(rest, stage_line, strlen(stage_line)) == 0);
        const char *ms = strstr(rest, " ms); inputs: ");
        const char *comma = ms;
        while (comma > rest && *comma != ',')
            comma--;
        assert_true(ms && comma > rest && ms < strchr(rest, '\n'));
        sum += strtod(comma + 1, NULL);
        rest = after_first_line(rest);
    }
    assert_true(sum > 0);
    FMT(want, "wrote %s (manifest.json wires the stages; run them with: byocl run-stages %s "
              "--random-inputs)\n",
        timed, timed);
    assert_string_equal(rest, want);
    free(out);
    char *manifest;
    FMT(args, "%s/manifest.json", timed);
    manifest = ts_read_file(args, NULL);
    ts_assert_contains(manifest, ",\n      \"cost\": ");
    free(manifest);
    FMT(args, "run-stages '%s' --random-inputs=3 --output-dir '%s'", timed, out_timed);
    free(ts_cli_expect(args, 0, ""));
    assert_same_npy(out_run, out_timed, "output_0.npy");
    free(run_out);
    ts_remove_tree(base);
}

static void test_run_stages_inputs(void **state)
{
    (void)state;
    const char *tmp = ts_tmpdir("cli-run-stages");
    char base[4200], stages[4300], args[9000], want[9000], npy[4400];
    FMT(base, "%s", tmp);
    FMT(stages, "%s/seed", base);
    /* builtin:seed cut after the conv2d (%3): its weights are parameters, inputs of the
     * stages that use them. */
    FMT(args, "split builtin:seed --at %%3 -o '%s'", stages);
    free(ts_cli_expect(args, 0, ""));

    FMT(args, "run-stages '%s'", stages);
    FMT(want,
        "byocl: error: the split model in %s has 7 unbound inputs: " SEED_PARAMS
        "; give each with --input NAME=FILE, or pass --random-inputs\n",
        stages);
    ts_cli_expect_error(args, 1, want);

    FMT(npy, "%s/w0.npy", base);
    const int64_t w0_dims[4] = {16, 3, 3, 3};
    byocl_tensor *w0 = ts_tensor_f32(4, w0_dims, NULL);
    byocl_error err;
    assert_int_equal(byocl_npy_write(npy, w0, &err), BYOCL_OK);
    byocl_tensor_unref(w0);
    FMT(args, "run-stages '%s' --input 'nope=%s'", stages, npy);
    FMT(want,
        "byocl: error: --input nope=%s: the split model in %s has no input 'nope' (its "
        "inputs: " SEED_PARAMS ")\n",
        npy, stages);
    ts_cli_expect_error(args, 1, want);
    FMT(args, "run-stages '%s' --input 'data=%s'", stages, npy);
    FMT(want,
        "byocl: error: input 'data': expected Tensor[(1, 3, 224, 224), float32], got "
        "Tensor[(16, 3, 3, 3), float32] from %s\n",
        npy);
    ts_cli_expect_error(args, 1, want);
    FMT(args, "run-stages '%s' --input 'w0=%s'", stages, npy);
    FMT(want,
        "byocl: error: the split model in %s has 6 unbound inputs: data, weight, bn_gamma, "
        "bn_beta, bn_mean, bn_var; give each with --input NAME=FILE, or pass "
        "--random-inputs\n",
        stages);
    ts_cli_expect_error(args, 1, want);
    FMT(args, "run-stages '%s' --random-inputs=x", stages);
    ts_cli_expect_error(args, 2,
                 "byocl: error: --random-inputs=x: SEED must be an integer from 0 to "
                 "4294967295; see 'byocl run-stages --help'\n");
    FMT(args, "run-stages '%s' --input w0", stages);
    ts_cli_expect_error(args, 2,
                 "byocl: error: --input w0: expected NAME=FILE; see 'byocl run-stages "
                 "--help'\n");

    /* An input from a file and the rest random: the same as `byocl run`. */
    char out_run[4300], out_stages[4300];
    FMT(out_run, "%s/run", base);
    FMT(out_stages, "%s/stages-out", base);
    FMT(args, "run builtin:seed --input 'w0=%s' --random-inputs=7 --output-dir '%s'", npy,
        out_run);
    free(ts_cli_expect(args, 0, ""));
    FMT(args, "run-stages '%s' --input 'w0=%s' --random-inputs=7 --output-dir '%s'", stages,
        npy, out_stages);
    char *out = ts_cli_expect(args, 0, "");
    FMT(want, "wrote %s/output_2.npy\n", out_stages);
    ts_assert_contains(out, want);
    free(out);
    for (int i = 0; i < 3; i++) {
        char name[32];
        FMT(name, "output_%d.npy", i);
        assert_same_npy(out_run, out_stages, name);
    }

    FMT(args, "run-stages '%s/none'", base);
    FMT(want, "byocl: error: cannot read stages from %s/none: No such file or directory\n",
        base);
    ts_cli_expect_error(args, 1, want);
    FMT(args, "run-stages '%s/stage_0.relay'", stages);
    FMT(want, "byocl: error: cannot read stages from %s/stage_0.relay: it is a file, not a "
              "directory\n",
        stages);
    ts_cli_expect_error(args, 1, want);
    /* A damaged manifest: the parser's message alone, with its location. */
    FMT(args, "printf '{\"format\": 1' > '%s/manifest.json'", stages);
    assert_int_equal(system(args), 0);
    FMT(args, "run-stages '%s' --random-inputs", stages);
    FMT(want, "%s/manifest.json:1:13: error: expected ',' or '}'\n", stages);
    ts_cli_expect_error(args, 1, want);
    ts_cli_expect_error("run-stages", 2, "byocl: error: missing DIR; see 'byocl run-stages --help'\n");
    ts_remove_tree(base);
}

/* ------------------------------------------------------------------ dot */

/* Relative L2 error of output_0.npy of dir_a against dir_b's. */
static double npy_error(const char *dir_a, const char *dir_b)
{
    byocl_tensor *a = read_npy(dir_a, "output_0.npy"), *b = read_npy(dir_b, "output_0.npy");
    double e = ts_relative_l2(a, b);
    byocl_tensor_unref(a);
    byocl_tensor_unref(b);
    return e;
}

/* Compiled stages: every stage for a target, or each placed apart with --stage, give what
 * `byocl run` gives on the whole model for that target (within float error: the kernels
 * fuse differently at a cut). */
static void test_run_stages_compiled(void **state)
{
    (void)state;
    const char *tmp = ts_tmpdir("cli-run-stages-compiled");
    char model[4300], stages[4300], out_run[4300], out_stages[4300], args[9000], want[9000];
    FMT(model, "%s/residual.relay", tmp);
    FMT(stages, "%s/stages", tmp);
    FMT(out_run, "%s/run", tmp);
    FMT(out_stages, "%s/stages-out", tmp);
    /* Small enough for PoCL to compile in seconds; the residual add crosses the cut. */
    ts_write_text(model,
                  "def @main(%x: Tensor[(1, 4, 8, 8), float32], %w1: Tensor[(4, 4, 3, 3), "
                  "float32], %w2: Tensor[(4, 4, 3, 3), float32]) {\n"
                  "  %0 = nn.conv2d(%x, %w1, padding=[1, 1]);\n"
                  "  %1 = nn.relu(%0);\n"
                  "  %2 = nn.conv2d(%1, %w2, padding=[1, 1]);\n"
                  "  %3 = add(%2, %0);\n"
                  "  nn.relu(%3)\n"
                  "}\n");
    FMT(args, "split '%s' --at %%1 -o '%s'", model, stages);
    free(ts_cli_expect(args, 0, ""));
    /* Balanced by the time measured on OpenCL: the region's time goes to the nodes it was
     * made of. */
    char timed[4300];
    FMT(timed, "%s/timed", tmp);
    FMT(args, "split '%s' --parts 2 --balance measured --target opencl --device 0 --threads 1 "
        "--repeat 2 -o '%s'", model, timed);
    char *timed_out = ts_cli_expect(args, 0, NULL);
    ts_assert_contains(timed_out, " stages, balanced by measured time\n"
                                  "timed on target opencl, 1 thread: ");
    ts_assert_contains(timed_out, " ms in its 1 step\n  stage 0: %0 to ");
    assert_null(strstr(timed_out, "no node of @main"));
    free(timed_out);
    static const char *const targets[] = {"host", "opencl"};
    for (int t = 0; t < 2; t++) {
        FMT(args, "run '%s' --random-inputs=3 --target %s --output-dir '%s'", model, targets[t],
            out_run);
        free(ts_cli_expect(args, 0, NULL));
        FMT(args, "run-stages '%s' --random-inputs=3 --target %s --threads 1 --output-dir '%s'",
            stages, targets[t], out_stages);
        char *out = ts_cli_expect(args, 0, NULL);
        FMT(want, "built stage 0 for target %s in ", targets[t]);
        assert_true(strncmp(out, want, strlen(want)) == 0);
        FMT(want, "ran 2 stages of %s compiled in ", stages);
        ts_assert_contains(out, want);
        FMT(want, " ms (target %s); 2.6 KiB per item to later stages\n  stage 1: ", targets[t]);
        ts_assert_contains(out, want);
        free(out);
        double e = npy_error(out_stages, out_run);
        if (e > 1e-5)
            fail_msg("--target %s: relative L2 error %g against the whole model's run",
                     targets[t], e);
        ts_remove_tree(out_run);
        ts_remove_tree(out_stages);
    }
    /* Stage 1 alone on OpenCL, stage 0 on the host (no --target: the others stay there). */
    FMT(args, "run '%s' --random-inputs=3 --output-dir '%s'", model, out_run);
    free(ts_cli_expect(args, 0, NULL));
    FMT(args, "run-stages '%s' --random-inputs=3 --stage 1:target=opencl,device=0,threads=1 "
        "--output-dir '%s'", stages, out_stages);
    char *out = ts_cli_expect(args, 0, NULL);
    ts_assert_contains(out, "built stage 0 for target host in ");
    ts_assert_contains(out, "built stage 1 for target opencl in ");
    ts_assert_contains(out, " ms (target host); 2.6 KiB per item to later stages\n  stage 1: ");
    ts_assert_contains(out, " ms (target opencl)\n");
    free(out);
    assert_true(npy_error(out_stages, out_run) <= 1e-5);

    /* --pipeline: item i streamed with the inputs of --random-inputs=3+i, bitwise what a
     * single run of those inputs gives. */
    char out_pipe[4300], out_one[4400];
    FMT(out_pipe, "%s/pipeline-out", tmp);
    FMT(args, "run-stages '%s' --random-inputs=3 --count 3 --target host --pipeline --depth 1 "
        "--output-dir '%s'", stages, out_pipe);
    out = ts_cli_expect(args, 0, NULL);
    FMT(want, "streamed (queues of 1) 3 items through 2 stages of %s in ", stages);
    ts_assert_contains(out, want);
    ts_assert_contains(out, "\n  latency per item: min ");
    ts_assert_contains(out, " per item to later stages\n  stage 1: busy ");
    free(out);
    /* The same items one at a time, and from files: item i of --inputs DIR is its i-th
     * file in name order, an .npz of the inputs by name (here --random-inputs=3+i's). */
    char out_turn[4300], out_files[4300], items_dir[4300];
    FMT(out_turn, "%s/turn-out", tmp);
    FMT(out_files, "%s/files-out", tmp);
    FMT(items_dir, "%s/items", tmp);
    FMT(args, "run-stages '%s' --random-inputs=3 --count 3 --target host --output-dir '%s'",
        stages, out_turn);
    out = ts_cli_expect(args, 0, NULL);
    FMT(want, "ran one at a time 3 items through 2 stages of %s in ", stages);
    ts_assert_contains(out, want);
    free(out);
    assert_int_equal(mkdir(items_dir, 0755), 0);
    byocl_module *rm = NULL;
    byocl_error lerr;
    assert_int_equal(byocl_load_model(model, NULL, &rm, &lerr), BYOCL_OK);
    const byocl_function *rfn = byocl_module_find(rm, "main");
    for (int i = 0; i < 3; i++) {
        byocl_params *p = byocl_params_new();
        for (int k = 0; k < byocl_function_num_params(rfn); k++) { /* as --random-inputs=3+i */
            int param = byocl_function_param(rfn, k);
            const byocl_type *t = byocl_node_type(rfn, param);
            byocl_tensor *v = byocl_tensor_new(t->dtype, &t->shape, NULL);
            byocl_tensor_fill_random(v, ((uint64_t)(3 + i) << 32) + (uint64_t)k, 0.0, 1.0);
            assert_int_equal(byocl_params_set(p, byocl_node_name(rfn, param), v, NULL), BYOCL_OK);
            byocl_tensor_unref(v);
        }
        char path[4400];
        FMT(path, "%s/in_%c.npz", items_dir, 'a' + i);
        assert_int_equal(byocl_npz_write(path, p, NULL), BYOCL_OK);
        byocl_params_free(p);
    }
    byocl_module_free(rm);
    FMT(args, "run-stages '%s' --inputs '%s' --target host --pipeline --output-dir '%s'", stages,
        items_dir, out_files);
    free(ts_cli_expect(args, 0, NULL));
    for (int i = 0; i < 3; i++) {
        char item_dir[4400], turn_dir[4400], files_dir[4400];
        FMT(item_dir, "%s/item_%d", out_pipe, i);
        FMT(turn_dir, "%s/item_%d", out_turn, i);
        FMT(files_dir, "%s/item_%d", out_files, i);
        FMT(out_one, "%s/one-%d", tmp, i);
        FMT(args, "run-stages '%s' --random-inputs=%d --target host --output-dir '%s'", stages,
            3 + i, out_one);
        free(ts_cli_expect(args, 0, NULL));
        assert_same_npy(item_dir, out_one, "output_0.npy");
        assert_same_npy(turn_dir, out_one, "output_0.npy");
        assert_same_npy(files_dir, out_one, "output_0.npy");
    }
    /* A file that does not fit stops the stream at its item; a folder without items. */
    char bad_file[4400];
    FMT(bad_file, "%s/in_d.npy", items_dir);
    byocl_shape two = byocl_shape_make(1, (int64_t[]){2});
    byocl_tensor *small = byocl_tensor_new(BYOCL_FLOAT32, &two, NULL);
    assert_int_equal(byocl_npy_write(bad_file, small, NULL), BYOCL_OK);
    byocl_tensor_unref(small);
    FMT(args, "run-stages '%s' --inputs '%s' --target host --pipeline", stages, items_dir);
    FMT(want, "byocl: error: item 3: %s: the split model in %s has 3 inputs; give them by "
              "name in an .npz file\n", bad_file, stages);
    char *stream_err = NULL;
    assert_int_equal(ts_run_cli(args, NULL, &stream_err), 1);
    assert_string_equal(stream_err, want);
    free(stream_err);
    FMT(args, "run-stages '%s' --inputs '%s'", stages, out_pipe);
    FMT(want, "byocl: error: --inputs %s: no .npy or .npz files there (one file per item)\n",
        out_pipe);
    ts_cli_expect_error(args, 1, want);

    /* A hand-annotated model cut inside its region (builtin:seed after its conv2d): each
     * stage's part of the region is completed and offloaded. */
    char seed_stages[4300];
    FMT(seed_stages, "%s/seed", tmp);
    FMT(args, "split builtin:seed --at %%3 -o '%s'", seed_stages);
    free(ts_cli_expect(args, 0, ""));
    ts_remove_tree(out_run);
    ts_remove_tree(out_stages);
    FMT(args, "run builtin:seed --random-inputs=3 --target opencl --output-dir '%s'", out_run);
    free(ts_cli_expect(args, 0, NULL));
    FMT(args, "run-stages '%s' --random-inputs=3 --target opencl --output-dir '%s'",
        seed_stages, out_stages);
    free(ts_cli_expect(args, 0, NULL));
    for (int i = 0; i < 3; i++) {
        char name[32];
        FMT(name, "output_%d.npy", i);
        byocl_tensor *a = read_npy(out_stages, name), *b = read_npy(out_run, name);
        double e = ts_relative_l2(a, b);
        if (e > 1e-5)
            fail_msg("builtin:seed in stages, %s: relative L2 error %g", name, e);
        byocl_tensor_unref(a);
        byocl_tensor_unref(b);
    }

    /* Placement errors, before anything is compiled. */
    static const struct {
        const char *flags, *message;
        int rc;
    } bad[] = {
        {"--stage 2:target=host", "--stage 2:target=host: no stage 2 (the stages are 0 to 1)", 2},
        {"--stage 1", "--stage 1: expected K:KEY=VALUE[,KEY=VALUE...], e.g. "
                      "1:target=opencl,device=0", 2},
        {"--stage 1:color=red", "--stage 1:color=red: unknown key 'color' (keys: target, "
                                "device, threads)", 2},
        {"--stage 1:threads=0", "--stage 1:threads=0: threads=0: expected a count from 1 to "
                                "4096", 2},
        {"--stage 0:target=npu", "unknown target 'npu' (known: host, ref, opencl)", 2},
        {"--threads 2", "--threads goes with --target or --stage (the reference executor runs "
                        "on one thread)", 2},
        {"--device 0", "--device goes with --target T (each stage's: --stage K:device=D)", 2},
        {"--stage 0:device=0", "stage 0: a device goes with a region target, not host", 2},
        {"--count 0", "--count 0: expected a count of items from 1 to 2147483647", 2},
        {"--depth 2", "--depth goes with --pipeline or --mpi", 2},
        {"--pipeline --depth 0", "--depth 0: expected a count from 1 to 4096", 2},
        {"--ranks 0,1", "--ranks goes with --mpi", 2},
        {"--pipeline --mpi", "--pipeline goes without --mpi (the ranks of an MPI job always "
                             "stream the items)", 2},
        {"--inputs .", "--inputs DIR gives every item's inputs: it goes without --input, "
                       "--random-inputs and --count", 2},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FMT(args, "run-stages '%s' --random-inputs %s", stages, bad[i].flags);
        FMT(want, "byocl: error: %s; see 'byocl run-stages --help'\n", bad[i].message);
        ts_cli_expect_error(args, bad[i].rc, want);
    }
    /* A device the target does not have fails that stage's compile, naming the stage. */
    FMT(args, "run-stages '%s' --random-inputs --stage 1:target=opencl,device=nvidia", stages);
    char *err = NULL;
    assert_int_equal(ts_run_cli(args, NULL, &err), 1);
    ts_assert_contains(err, "byocl: error: stage 1: target option opencl.device: device "
                            "'nvidia' names no device of target opencl: give an index from 0 "
                            "to ");
    free(err);
    ts_remove_tree(tmp);
}

static void test_dot(void **state)
{
    (void)state;
    const char *tmp = ts_tmpdir("cli-dot");
    char base[4200], path[4300], args[9000], want[9000];
    FMT(base, "%s", tmp);
    byocl_module *m = NULL;
    byocl_error err;
    assert_int_equal(byocl_load_model("builtin:seed", NULL, &m, &err), BYOCL_OK);
    char *direct = byocl_dot(m, &err);
    assert_non_null(direct);
    byocl_module_free(m);
    /* The region of builtin:seed is a cluster in the color of "opencl". */
    ts_assert_contains(direct, "    label=\"region 0: opencl\";\n    style=filled;\n"
                               "    fillcolor=\"#b3de69\";\n");

    char *out = ts_cli_expect("dot builtin:seed", 0, "");
    assert_string_equal(out, direct);
    free(out);
    FMT(path, "%s/seed.dot", base);
    FMT(args, "dot builtin:seed -o '%s'", path);
    out = ts_cli_expect(args, 0, "");
    FMT(want, "wrote %s (render it with: dot -Tsvg %s -o graph.svg)\n", path, path);
    assert_string_equal(out, want);
    free(out);
    char *file = ts_read_file(path, NULL);
    assert_string_equal(file, direct);
    free(file);
    free(direct);

    FMT(path, "%s/missing/seed.dot", base);
    FMT(args, "dot builtin:seed -o '%s'", path);
    char *err_text;
    assert_int_equal(ts_run_cli(args, &out, &err_text), 1);
    assert_string_equal(out, "");
    ts_assert_contains(err_text, path);
    free(out);
    free(err_text);
    FMT(path, "%s/missing", base);
    assert_false(exists(path));
    ts_cli_expect_error("dot", 2, "byocl: error: missing MODEL; see 'byocl dot --help'\n");
    ts_cli_expect_error("dot builtin:nope", 1, NULL);
    ts_remove_tree(base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_split_usage_errors),
        cmocka_unit_test(test_split_failures_write_nothing),
        cmocka_unit_test(test_split_and_run_resnet18),
        cmocka_unit_test(test_run_stages_inputs),
        cmocka_unit_test(test_run_stages_compiled),
        cmocka_unit_test(test_dot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
