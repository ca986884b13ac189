/* The byocl CLI, run as a user runs it: help, exit codes, exact error messages, the
 * print round trip through -o/--params, and run's inputs and outputs. */
#include "test_support.h"

#include "byocl/frontend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* snprintf into a fixed buffer, failing the test rather than truncating. */
#define FMT(buf, ...) assert_true(snprintf((buf), sizeof(buf), __VA_ARGS__) < (int)sizeof(buf))

#define SEED_UNBOUND "data, weight, bn_gamma, bn_beta, bn_mean, bn_var, w0"

/* Runs the CLI and checks the exit code and the exact stderr (NULL: anything); returns
 * stdout (caller frees). */
/* Removes a test's directory once the test passed (model files are tens of MB). */
static bool file_exists(const char *path)
{
    return access(path, F_OK) == 0;
}

/* ------------------------------------------------------------------ help */

static void test_help_of_every_command(void **state)
{
    (void)state;
    static const char *const commands[] = {"print", "run", "info", "ops"};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        char args[64], usage[64];
        FMT(args, "%s --help", commands[i]);
        FMT(usage, "Usage: byocl %s", commands[i]);
        char *out = ts_cli_expect(args, 0, "");
        assert_true(strncmp(out, usage, strlen(usage)) == 0);
        ts_assert_contains(out, "-h, --help");
        /* `byocl help CMD` and `byocl CMD -h` print the same text. */
        FMT(args, "help %s", commands[i]);
        char *same = ts_cli_expect(args, 0, "");
        assert_string_equal(same, out);
        free(same);
        FMT(args, "%s -h", commands[i]);
        same = ts_cli_expect(args, 0, "");
        assert_string_equal(same, out);
        free(same);
        free(out);
    }
    char *out = ts_cli_expect("info --help", 0, "");
    assert_true(strncmp(out, "Usage: byocl info\n\n", 19) == 0);
    free(out);
    out = ts_cli_expect("run --help", 0, "");
    ts_assert_contains(out, "--input NAME=FILE");
    ts_assert_contains(out, "--random-inputs[=SEED]");
    ts_assert_contains(out, "--output-dir DIR");
    free(out);
    out = ts_cli_expect("print --help", 0, "");
    ts_assert_contains(out, "-o, --output OUT.relay");
    ts_assert_contains(out, "--no-types");
    free(out);
}

static void test_top_level_help(void **state)
{
    (void)state;
    char *out = ts_cli_expect("--help", 0, "");
    assert_true(strncmp(out, "Usage: byocl COMMAND [options]\n", 31) == 0);
    ts_assert_contains(out, "  print       print a model as typed Relay text\n");
    ts_assert_contains(out, "  run         run a model and summarize its outputs\n");
    ts_assert_contains(out, "  info        ");
    ts_assert_contains(out, "  ops         ");
    ts_assert_contains(out, "  conformance run the ONNX backend test suite's folders");
    char *same = ts_cli_expect("help", 0, "");
    assert_string_equal(same, out);
    free(same);
    /* No command at all: the same overview, on stderr, as a usage error. */
    char *err;
    char *none;
    assert_int_equal(ts_run_cli("", &none, &err), 2);
    assert_string_equal(none, "");
    assert_string_equal(err, out);
    free(none);
    free(err);
    free(out);
    out = ts_cli_expect("--version", 0, "");
    assert_string_equal(out, "byocl " BYOCL_VERSION_STRING "\n");
    free(out);
}

/* ---------------------------------------------------------- usage errors */

static void test_usage_errors(void **state)
{
    (void)state;
    ts_cli_expect_usage("frob", "byocl: error: unknown command 'frob'; see 'byocl --help'\n");
    ts_cli_expect_usage("help frob", "byocl: error: unknown command 'frob'; see 'byocl --help'\n");
    ts_cli_expect_usage("--frob",
                 "byocl: error: unknown flag '--frob' (flags go after the command); see "
                 "'byocl --help'\n");
    ts_cli_expect_usage("run builtin:seed --frob",
                 "byocl: error: unknown flag '--frob'; see 'byocl run --help'\n");
    ts_cli_expect_usage("print builtin:seed -x",
                 "byocl: error: unknown flag '-x'; see 'byocl print --help'\n");
    ts_cli_expect_usage("print", "byocl: error: missing MODEL; see 'byocl print --help'\n");
    ts_cli_expect_usage("run", "byocl: error: missing MODEL; see 'byocl run --help'\n");
    ts_cli_expect_usage("print builtin:seed extra",
                 "byocl: error: unexpected argument 'extra'; see 'byocl print --help'\n");
    ts_cli_expect_usage("info extra",
                 "byocl: error: unexpected argument 'extra'; see 'byocl info --help'\n");
    ts_cli_expect_usage("run builtin:seed --input",
                 "byocl: error: flag '--input' needs a value (--input NAME=FILE); see "
                 "'byocl run --help'\n");
    ts_cli_expect_usage("print builtin:seed -o",
                 "byocl: error: flag '-o' needs a value (--output OUT.relay); see "
                 "'byocl print --help'\n");
    ts_cli_expect_usage("run builtin:seed --input --random-inputs",
                 "byocl: error: flag '--input' needs a value (--input NAME=FILE), not the flag "
                 "'--random-inputs' (a value that starts with -- goes as --input=VALUE); see "
                 "'byocl run --help'\n");
    ts_cli_expect_usage("print builtin:seed -o --no-types",
                 "byocl: error: flag '-o' needs a value (--output OUT.relay), not the flag "
                 "'--no-types' (a value that starts with -- goes as --output=VALUE); see "
                 "'byocl print --help'\n");
    ts_cli_expect_usage("print builtin:seed --params=",
                 "byocl: error: flag '--params=' needs a value (--params FILE.npz); see "
                 "'byocl print --help'\n");
    ts_cli_expect_usage("print builtin:seed --no-types=yes",
                 "byocl: error: flag '--no-types' takes no value; see 'byocl print --help'\n");
    ts_cli_expect_usage("print builtin:seed --params a.npz --params b.npz",
                 "byocl: error: flag '--params' given twice; see 'byocl print --help'\n");
    ts_cli_expect_usage("run builtin:seed --executor opencl",
                 "byocl: error: unknown executor 'opencl' (known: ref); see "
                 "'byocl run --help'\n");
    ts_cli_expect_usage("run builtin:seed --random-inputs=x1",
                 "byocl: error: --random-inputs=x1: SEED must be an integer from 0 to "
                 "4294967295; see 'byocl run --help'\n");
    ts_cli_expect_usage("run builtin:seed --random-inputs=4294967296",
                 "byocl: error: --random-inputs=4294967296: SEED must be an integer from 0 to "
                 "4294967295; see 'byocl run --help'\n");
    ts_cli_expect_usage("run builtin:seed --input data.npy",
                 "byocl: error: --input data.npy: expected NAME=FILE; see "
                 "'byocl run --help'\n");
    ts_cli_expect_usage("run builtin:seed --input =x.npy",
                 "byocl: error: --input =x.npy: expected NAME=FILE; see "
                 "'byocl run --help'\n");
}

/* ------------------------------------------------------------- model errors */

static void test_model_errors(void **state)
{
    (void)state;
    ts_cli_expect_failure("print builtin:nope",
                   "byocl: error: unknown built-in model 'nope' (known: seed, resnet18, "
                   "mobilenet_v2)\n");
    ts_cli_expect_failure("run builtin:nope --random-inputs",
                   "byocl: error: unknown built-in model 'nope' (known: seed, resnet18, "
                   "mobilenet_v2)\n");
    ts_cli_expect_failure("print model.onnx",
                   "byocl: error: cannot open model.onnx: No such file or directory\n");
    ts_cli_expect_failure("run builtin:seed --random-inputs --fn nope",
                   "byocl: error: builtin:seed has no function @nope\n");
    ts_cli_expect_failure("ops nope", NULL);
}

static void test_missing_file(void **state)
{
    (void)state;
    char *out, *err;
    assert_int_equal(ts_run_cli("print /nonexistent/m.relay", &out, &err), 1);
    assert_string_equal(out, "");
    ts_assert_contains(err, "byocl: error: ");
    ts_assert_contains(err, "/nonexistent/m.relay");
    assert_non_null(strchr(err, '\n'));
    assert_string_equal(strchr(err, '\n'), "\n"); /* one line */
    free(out);
    free(err);
}

/* The parser's message, exactly, and nothing else. */
static void test_syntax_error_printed_alone(void **state)
{
    (void)state;
    const char *dir = ts_tmpdir("cli-syntax");
    char path[4200], args[4300], want[4400];
    FMT(path, "%s/bad.relay", dir);
    ts_write_text(path, "#[version = \"0.0.5\"]\n"
                     "def @main(%x: Tensor[(1, 4), float32]) {\n"
                     "  nn.relu(%x,, %x)\n"
                     "}\n");
    FMT(args, "print '%s'", path);
    /* What the library says about this text, as it says it. */
    byocl_module *m = NULL;
    byocl_error e;
    assert_int_equal(byocl_text_parse_file(path, NULL, &m, &e), BYOCL_ERR_PARSE);
    assert_null(m);
    FMT(want, "%s:3:14: error: expected an expression but found ','", path);
    assert_string_equal(e.msg, want);
    FMT(want, "%s:3:14: error: expected an expression but found ','\n", path);
    ts_cli_expect_failure(args, want);
    FMT(args, "run '%s' --random-inputs", path);
    ts_cli_expect_failure(args, want);
    ts_remove_tree(dir);
}

/* ------------------------------------------------------------------- print */

static void test_print(void **state)
{
    (void)state;
    char *typed = ts_cli_expect("print builtin:seed", 0, "");
    assert_true(strncmp(typed, "#[version = \"0.0.5\"]\ndef @main(%data: Tensor[(1, 3, 224, 224), "
                               "float32]",
                        60) == 0);
    ts_assert_contains(typed, "/* ty=");
    ts_assert_contains(typed, "nn.conv2d(");
    char *plain = ts_cli_expect("print builtin:seed --no-types", 0, "");
    assert_null(strstr(plain, "/* ty="));
    ts_assert_contains(plain, "nn.conv2d(");

    /* The same as the library prints. */
    byocl_module *m;
    byocl_error err;
    assert_int_equal(byocl_load_model("builtin:seed", NULL, &m, &err), BYOCL_OK);
    byocl_print_options opt = {.show_types = true};
    char *want = byocl_text_print(m, &opt, NULL, &err);
    assert_non_null(want);
    assert_string_equal(typed, want);
    free(want);
    byocl_module_free(m);
    free(typed);
    free(plain);
}

/* print -o writes text + .npz; printing them back gives the same text. */
static void test_print_round_trip(void **state)
{
    (void)state;
    const char *tmp = ts_tmpdir("cli-print");
    char dir[4096], args[8400], text_path[4200], npz_path[4200], want_out[12800];
    FMT(dir, "%s", tmp);
    FMT(text_path, "%s/r18.relay", dir);
    FMT(npz_path, "%s/r18.npz", dir);

    char *direct = ts_cli_expect("print builtin:resnet18", 0, "");
    FMT(args, "print builtin:resnet18 -o '%s'", text_path);
    char *out = ts_cli_expect(args, 0, "");
    FMT(want_out,
             "wrote %s and %s (read it back with: byocl print %s --params %s)\n", text_path,
             npz_path, text_path, npz_path);
    assert_string_equal(out, want_out);
    free(out);
    char *file = ts_read_file(text_path, NULL);
    assert_string_equal(file, direct);
    free(file);
    assert_true(file_exists(npz_path));

    FMT(args, "print '%s' --params '%s'", text_path, npz_path);
    char *back = ts_cli_expect(args, 0, "");
    assert_string_equal(back, direct);
    free(back);

    /* --no-types -o writes the untyped text; a model without tensor constants gets no
     * .npz. */
    FMT(text_path, "%s/seed", dir);
    FMT(npz_path, "%s/seed.npz", dir);
    FMT(args, "print builtin:seed --no-types --output '%s'", text_path);
    out = ts_cli_expect(args, 0, "");
    FMT(want_out, "wrote %s\n", text_path);
    assert_string_equal(out, want_out);
    free(out);
    assert_false(file_exists(npz_path));
    char *plain = ts_cli_expect("print builtin:seed --no-types", 0, "");
    file = ts_read_file(text_path, NULL);
    assert_string_equal(file, plain);
    free(file);
    free(plain);
    free(direct);
    ts_remove_tree(dir);
}

/* Meta constants come from --params; one that is missing is the parser's error, and a
 * member that matches nothing is named. */
static void test_params_errors(void **state)
{
    (void)state;
    const char *tmp = ts_tmpdir("cli-params");
    char dir[4096], args[8400], text_path[4200], npz_path[4200], bad_npz[4200],
        want[8400];
    FMT(dir, "%s", tmp);
    FMT(text_path, "%s/r.relay", dir);
    FMT(npz_path, "%s/r.npz", dir);
    FMT(bad_npz, "%s/bad.npz", dir);
    FMT(args, "print builtin:mobilenet_v2 -o '%s'", text_path);
    free(ts_cli_expect(args, 0, ""));

    /* The .npz without relay.Constant.0. */
    byocl_params *all, *some = byocl_params_new();
    byocl_error err;
    assert_int_equal(byocl_npz_read(npz_path, &all, &err), BYOCL_OK);
    for (int i = 0; i < byocl_params_count(all); i++)
        if (strcmp(byocl_params_name(all, i), "relay.Constant.0") != 0)
            assert_int_equal(byocl_params_set(some, byocl_params_name(all, i),
                                              byocl_params_tensor(all, i), &err),
                             BYOCL_OK);
    assert_int_equal(byocl_params_count(some), byocl_params_count(all) - 1);
    assert_int_equal(byocl_npz_write(bad_npz, some, &err), BYOCL_OK);
    byocl_module *m = NULL;
    assert_int_not_equal(byocl_load_model(text_path, some, &m, &err), BYOCL_OK);
    assert_null(m);
    /* The parser's located message, printed as it is. */
    assert_true(strncmp(err.msg, text_path, strlen(text_path)) == 0);
    ts_assert_contains(err.msg, ": error: meta[relay.Constant][0] is missing: the parameter "
                                "file has no 'relay.Constant.0'");
    FMT(want, "%s\n", err.msg);
    FMT(args, "print '%s' --params '%s'", text_path, bad_npz);
    ts_cli_expect_failure(args, want);
    FMT(args, "run '%s' --params '%s' --random-inputs", text_path, bad_npz);
    ts_cli_expect_failure(args, want);

    /* No parameter file at all. */
    assert_int_not_equal(byocl_load_model(text_path, NULL, &m, &err), BYOCL_OK);
    ts_assert_contains(err.msg, ": error: meta[relay.Constant][0] needs a parameter file with "
                                "'relay.Constant.0'");
    FMT(want, "%s\n", err.msg);
    FMT(args, "print '%s'", text_path);
    ts_cli_expect_failure(args, want);

    /* An extra member named like nothing in the model. */
    byocl_tensor *t = byocl_params_tensor(all, 0);
    assert_int_equal(byocl_params_set(all, "nonesuch", t, &err), BYOCL_OK);
    assert_int_equal(byocl_npz_write(bad_npz, all, &err), BYOCL_OK);
    FMT(want,
             "byocl: error: params member 'nonesuch' is neither a parameter of @main nor a "
             "meta constant (relay.Constant.K) of %s\n",
             text_path);
    FMT(args, "print '%s' --params '%s'", text_path, bad_npz);
    ts_cli_expect_failure(args, want);
    byocl_params_free(all);
    byocl_params_free(some);

    /* Meta constants given to a built-in model. */
    FMT(args, "print builtin:seed --params '%s'", npz_path);
    ts_cli_expect_failure(args, "byocl: error: params member 'relay.Constant.0' is a meta constant, "
                         "but builtin:seed is not a text file that could refer to it\n");
    ts_remove_tree(dir);
}

/* -------------------------------------------------------------------- run */

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

/* The documented --random-inputs rule, computed here: parameter k from seed SEED*2^32+k. */
static void expected_seed_outputs(uint64_t seed, byocl_tensor ***outs, int *n_outs)
{
    byocl_module *m;
    byocl_error err;
    assert_int_equal(byocl_load_model("builtin:seed", NULL, &m, &err), BYOCL_OK);
    const byocl_function *fn = byocl_module_find(m, "main");
    int n = byocl_function_num_params(fn);
    assert_int_equal(n, 7);
    byocl_tensor *in[7];
    for (int k = 0; k < n; k++) {
        const byocl_type *ty = byocl_node_type(fn, byocl_function_param(fn, k));
        in[k] = byocl_tensor_new(ty->dtype, &ty->shape, &err);
        assert_non_null(in[k]);
        byocl_tensor_fill_random(in[k], (seed << 32) + (uint64_t)k, 0.0, 1.0);
    }
    assert_int_equal(byocl_reference_run(m, "main", in, n, outs, n_outs, &err), BYOCL_OK);
    for (int k = 0; k < n; k++)
        byocl_tensor_unref(in[k]);
    byocl_module_free(m);
}

static void test_run_writes_outputs(void **state)
{
    (void)state;
    const char *tmp = ts_tmpdir("cli-run");
    char dir[4096], args[4400];
    FMT(dir, "%s/out/nested", tmp);
    FMT(args, "run builtin:seed --random-inputs --output-dir '%s'", dir);
    char *out = ts_cli_expect(args, 0, "");
    assert_true(strncmp(out, "ran @main of builtin:seed on the ref executor in ", 49) == 0);
    ts_assert_contains(out, " ms\noutput 0: Tensor[(1, 16, 224, 224), float32]\n  min ");
    ts_assert_contains(out, "\noutput 1: Tensor[(16), float32]\n  min ");
    ts_assert_contains(out, "\noutput 2: Tensor[(16), float32]\n  min ");
    char line[4400];
    FMT(line, "wrote %s/output_2.npy\n", dir);
    ts_assert_contains(out, line);
    free(out);

    byocl_tensor **want;
    int n_want;
    expected_seed_outputs(0, &want, &n_want);
    assert_int_equal(n_want, 3);
    static const char *const names[] = {"output_0.npy", "output_1.npy", "output_2.npy"};
    for (int i = 0; i < 3; i++) {
        byocl_tensor *got = read_npy(dir, names[i]);
        assert_true(byocl_tensor_equal(got, want[i]));
        byocl_tensor_unref(got);
    }
    char path[4300];
    FMT(path, "%s/output_3.npy", dir);
    assert_false(file_exists(path));
    byocl_tensors_free(want, n_want);

    /* Another seed, other values, still as documented. */
    FMT(args, "run builtin:seed --random-inputs=7 --output-dir '%s'", dir);
    free(ts_cli_expect(args, 0, ""));
    expected_seed_outputs(7, &want, &n_want);
    byocl_tensor *got = read_npy(dir, "output_1.npy");
    assert_true(byocl_tensor_equal(got, want[1]));
    byocl_tensor_unref(got);
    byocl_tensors_free(want, n_want);
    ts_remove_tree(tmp);
}

/* The summary's numbers are the output's own. */
static void test_run_summary_values(void **state)
{
    (void)state;
    byocl_tensor **want;
    int n_want;
    expected_seed_outputs(0, &want, &n_want);
    const byocl_tensor *var_abs = want[2];
    double lo = 1e300, hi = -1e300, sum = 0;
    for (int64_t i = 0; i < 16; i++) {
        double v = byocl_tensor_get(var_abs, i);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        sum += v;
    }
    char line[512];
    FMT(line,
             "output 2: Tensor[(16), float32]\n  min %.6g  max %.6g  mean %.6g  first [%.6g, "
             "%.6g, %.6g, %.6g, %.6g, ...]\n",
             lo, hi, sum / 16, byocl_tensor_get(var_abs, 0), byocl_tensor_get(var_abs, 1),
             byocl_tensor_get(var_abs, 2), byocl_tensor_get(var_abs, 3),
             byocl_tensor_get(var_abs, 4));
    byocl_tensors_free(want, n_want);
    char *out = ts_cli_expect("run builtin:seed --random-inputs", 0, "");
    ts_assert_contains(out, line);
    free(out);
}

/* A built-in model given no values runs on its deterministic random inputs: exactly what
 * --random-inputs gives (the same summaries, the same output files byte for byte), on
 * either executor. A model from a file still needs its values (tests/bad/cli.cases:
 * unbound_parameter). */
static void test_run_builtin_default_inputs(void **state)
{
    (void)state;
    const char *tmp = ts_tmpdir("cli-default-inputs");
    char args[4400], dir[2][4200];
    char *out[2];
    const char *summary[2];
    for (int k = 0; k < 2; k++) {
        FMT(dir[k], "%s/out%d", tmp, k);
        FMT(args, "run builtin:seed%s --output-dir '%s'", k ? " --random-inputs" : "", dir[k]);
        out[k] = ts_cli_expect(args, 0, "");
        assert_true(strncmp(out[k], "ran @main of builtin:seed on the ref executor in ", 49) ==
                    0);
        /* The outputs' summaries: after the time line, up to the files written. */
        summary[k] = strstr(out[k], "output 0: ");
        assert_non_null(summary[k]);
        char *wrote = strstr(out[k], "wrote ");
        assert_non_null(wrote);
        *wrote = '\0';
    }
    assert_string_equal(summary[0], summary[1]);
    for (int i = 0; i < 3; i++) {
        size_t len[2];
        char *bytes[2];
        for (int k = 0; k < 2; k++) {
            char path[4300];
            FMT(path, "%s/output_%d.npy", dir[k], i);
            bytes[k] = ts_read_file(path, &len[k]);
        }
        assert_int_equal(len[0], len[1]);
        assert_true(memcmp(bytes[0], bytes[1], len[0]) == 0);
        free(bytes[0]);
        free(bytes[1]);
    }
    char *graph = ts_cli_expect("run builtin:seed --target ref --threads 1", 0, "");
    ts_assert_contains(graph, summary[0]);
    free(graph);
    free(out[0]);
    free(out[1]);
    ts_remove_tree(tmp);
}

static void write_npy_f32(const char *path, int rank, const int64_t *dims)
{
    byocl_tensor *t = ts_tensor_f32(rank, dims, NULL);
    byocl_error err;
    assert_int_equal(byocl_npy_write(path, t, &err), BYOCL_OK);
    byocl_tensor_unref(t);
}

static void test_run_inputs(void **state)
{
    (void)state;
    const char *tmp = ts_tmpdir("cli-inputs");
    char dir[4096], small[4200], w0[4200], args[9000], want[9000];
    FMT(dir, "%s", tmp);
    FMT(small, "%s/small.npy", dir);
    FMT(w0, "%s/w0.npy", dir);
    const int64_t small_dims[4] = {1, 3, 8, 8}, w0_dims[4] = {16, 3, 3, 3};
    write_npy_f32(small, 4, small_dims);
    write_npy_f32(w0, 4, w0_dims);

    FMT(args, "run builtin:seed --input 'data=%s' --random-inputs", small);
    FMT(want,
             "byocl: error: input 'data': expected Tensor[(1, 3, 224, 224), float32], got "
             "Tensor[(1, 3, 8, 8), float32] from %s\n",
             small);
    ts_cli_expect_failure(args, want);

    FMT(args, "run builtin:seed --input 'nope=%s'", small);
    FMT(want,
             "byocl: error: --input nope=%s: @main has no parameter 'nope' (its parameters: "
             "" SEED_UNBOUND ")\n",
             small);
    ts_cli_expect_failure(args, want);

    FMT(args, "run builtin:seed --input 'w0=%s' --input 'w0=%s'", w0, w0);
    ts_cli_expect_failure(args, "byocl: error: --input: parameter 'w0' given twice\n");

    /* Inputs given by file leave the rest unbound. */
    FMT(args, "run builtin:seed --input 'w0=%s'", w0);
    ts_cli_expect_failure(args, "byocl: error: @main of builtin:seed has 6 unbound parameters: data, "
                         "weight, bn_gamma, bn_beta, bn_mean, bn_var; give each with --input "
                         "NAME=FILE, bind them with --params FILE.npz, or pass "
                         "--random-inputs\n");

    /* w0 all zeros from the file and the rest random: the region's conv sees weight + 0. */
    FMT(args, "run builtin:seed --input 'w0=%s' --random-inputs", w0);
    free(ts_cli_expect(args, 0, ""));

    /* An unreadable input names the file. */
    FMT(args, "run builtin:seed --input 'w0=%s/missing.npy'", dir);
    char *out, *err;
    assert_int_equal(ts_run_cli(args, &out, &err), 1);
    assert_string_equal(out, "");
    ts_assert_contains(err, "byocl: error: ");
    ts_assert_contains(err, "missing.npy");
    free(out);
    free(err);
    ts_remove_tree(dir);
}

/* --params binds @main's parameters by name: what is bound needs no --input. */
static void test_run_params_bind(void **state)
{
    (void)state;
    const char *tmp = ts_tmpdir("cli-bind");
    char npz[4200], args[4400];
    FMT(npz, "%s/weights.npz", tmp);
    byocl_params *p = byocl_params_new();
    byocl_error err;
    const int64_t w_dims[4] = {16, 3, 3, 3}, c_dims[1] = {16};
    byocl_tensor *w = ts_tensor_f32(4, w_dims, NULL);
    byocl_tensor *c = ts_tensor_f32(1, c_dims, NULL);
    assert_int_equal(byocl_params_set(p, "weight", w, &err), BYOCL_OK);
    assert_int_equal(byocl_params_set(p, "w0", w, &err), BYOCL_OK);
    assert_int_equal(byocl_params_set(p, "bn_gamma", c, &err), BYOCL_OK);
    assert_int_equal(byocl_npz_write(npz, p, &err), BYOCL_OK);
    byocl_tensor_unref(w);
    byocl_tensor_unref(c);
    byocl_params_free(p);

    FMT(args, "run builtin:seed --params '%s'", npz);
    ts_cli_expect_failure(args, "byocl: error: @main of builtin:seed has 4 unbound parameters: data, "
                         "bn_beta, bn_mean, bn_var; give each with --input NAME=FILE, bind "
                         "them with --params FILE.npz, or pass --random-inputs\n");
    /* Zero weights and zero gamma: batch_norm gives beta everywhere (positive, so relu
     * keeps it). After binding, @main's parameters are data, bn_beta, bn_mean, bn_var:
     * bn_beta is parameter 1 and --random-inputs fills it from seed 0 * 2^32 + 1. */
    char dir[4200];
    FMT(dir, "%s/out", tmp);
    FMT(args, "run builtin:seed --params '%s' --random-inputs --output-dir '%s'",
             npz, dir);
    char *out = ts_cli_expect(args, 0, "");
    ts_assert_contains(out, "output 0: Tensor[(1, 16, 224, 224), float32]\n");
    free(out);
    byocl_tensor *beta = ts_tensor_f32(1, c_dims, NULL);
    byocl_tensor_fill_random(beta, 1, 0.0, 1.0);
    byocl_tensor *relu = read_npy(dir, "output_0.npy");
    for (int64_t ch = 0; ch < 16; ch++)
        for (int64_t i = 0; i < 224 * 224; i += 997)
            assert_true(byocl_tensor_get(relu, ch * 224 * 224 + i) == byocl_tensor_get(beta, ch));
    byocl_tensor_unref(relu);
    byocl_tensor_unref(beta);
    ts_remove_tree(tmp);
}

/* ------------------------------------------------------------ info and ops */

static void test_info(void **state)
{
    (void)state;
    char *out = ts_cli_expect("info", 0, "");
    assert_true(strncmp(out, "byocl " BYOCL_VERSION_STRING "\nbuild: ", 13) == 0);
    ts_assert_contains(out, "  libzip ");
    ts_assert_contains(out, "  cmocka (tests only; not needed at run time)\n");
    ts_assert_contains(out, "\n  tvm-ffi: "); /* the TVM bridge, built or not (docs/tvm.md) */
    for (int i = 0; i < byocl_builtin_count(); i++) {
        char line[512];
        FMT(line, "  builtin:%-14s %s\n", byocl_builtin_name(i),
                 byocl_builtin_description(i));
        ts_assert_contains(out, line);
    }
    char ops[64];
    FMT(ops, "\nops: %d (byocl ops lists them)\n", byocl_op_count());
    ts_assert_contains(out, ops);
    free(out);
}

static void test_ops(void **state)
{
    (void)state;
    char *out = ts_cli_expect("ops", 0, "");
    for (int i = 0; i < byocl_op_count(); i++) {
        char head[128];
        FMT(head, "%s  (", byocl_op_name(byocl_op_at(i)));
        ts_assert_contains(out, head);
    }
    free(out);
    out = ts_cli_expect("ops nn.conv2d", 0, "");
    assert_true(strncmp(out, "nn.conv2d  (2 arguments)\n", 25) == 0);
    ts_assert_contains(out, "    strides ");
    ts_assert_contains(out, "    out_dtype ");
    free(out);
    out = ts_cli_expect("ops nn.relu", 0, "");
    assert_true(strncmp(out, "nn.relu  (1 argument)\n", 22) == 0);
    free(out);
    char want[128];
    FMT(want, "byocl: error: unknown op 'nope' (byocl ops lists all %d)\n",
             byocl_op_count());
    ts_cli_expect_failure("ops nope", want);
}

/* docs/text-ir.md carries the output of `byocl ops --markdown` verbatim between its markers
 * (docs/gen-ops.sh, `make docs`, rewrites it). */
static void test_docs_op_table_is_current(void **state)
{
    (void)state;
    char *table = ts_cli_expect("ops --markdown", 0, "");
    ts_assert_contains(table, "### nn.conv2d\n");
    static const char begin[] = "<!-- begin: byocl ops --markdown -->\n";
    static const char end[] = "<!-- end: byocl ops --markdown -->\n";
    size_t len = strlen(begin) + strlen(table) + strlen(end) + 1;
    char *want = malloc(len);
    assert_non_null(want);
    assert_true(snprintf(want, len, "%s%s%s", begin, table, end) < (int)len);
    char path[4200];
    FMT(path, "%s/../../docs/text-ir.md", BYOCL_FIXTURES_DIR);
    char *doc = ts_read_file(path, NULL);
    if (!strstr(doc, want))
        fail_msg("docs/text-ir.md is out of date: run `make docs` (docs/gen-ops.sh) to "
                 "regenerate its op reference from `byocl ops --markdown`");
    free(doc);
    free(want);
    free(table);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_of_every_command),
        cmocka_unit_test(test_top_level_help),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_model_errors),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_syntax_error_printed_alone),
        cmocka_unit_test(test_print),
        cmocka_unit_test(test_print_round_trip),
        cmocka_unit_test(test_params_errors),
        cmocka_unit_test(test_run_writes_outputs),
        cmocka_unit_test(test_run_summary_values),
        cmocka_unit_test(test_run_builtin_default_inputs),
        cmocka_unit_test(test_run_inputs),
        cmocka_unit_test(test_run_params_bind),
        cmocka_unit_test(test_info),
        cmocka_unit_test(test_ops),
        cmocka_unit_test(test_docs_op_table_is_current),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
