/* `byocl partition` and `byocl extract`, run as a user runs them: the printed modules
 * (the same as the C API's pipeline gives), exact error messages and exit codes, -o
 * writing whole files or none, --dump-after, and the extracted region running alone. */
#include "test_support.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "byocl/pipeline.h"

#define FMT(buf, ...) assert_true(snprintf((buf), sizeof(buf), __VA_ARGS__) < (int)sizeof(buf))

/* Runs the CLI, checks the exit code and the exact stderr (NULL: anything); returns
 * stdout (caller frees). */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* What the C API's pipeline prints for `spec` with `opt`, with or without types. */
static char *api_partition_typed(const char *spec, const byocl_pipeline_options *opt,
                                 bool types)
{
    byocl_module *m = NULL;
    byocl_error err;
    if (byocl_load_model(spec, NULL, &m, &err) != BYOCL_OK ||
        byocl_pipeline_partition(m, opt, &err) != BYOCL_OK)
        fail_msg("%s: %s", spec, err.msg);
    byocl_print_options popt = {.show_types = types};
    char *text = byocl_text_print(m, &popt, NULL, &err);
    assert_non_null(text);
    byocl_module_free(m);
    return text;
}

static char *api_partition(const char *spec, const byocl_pipeline_options *opt)
{
    return api_partition_typed(spec, opt, true);
}

/* The run summary without its first line (which has the model's name and the time). */
static char *run_summary(const char *model_args)
{
    char args[1024];
    FMT(args, "run %s --random-inputs=3", model_args);
    char *out = ts_cli_expect(args, 0, "");
    char *nl = strchr(out, '\n');
    assert_non_null(nl);
    char *rest = strdup(nl + 1);
    free(out);
    return rest;
}

/* What `run MODEL_ARGS --random-inputs=3` prints about the outputs (without the lines
 * about building and running, which have times in them). */
static char *run_outputs(const char *model_args)
{
    char args[1024];
    FMT(args, "run %s --random-inputs=3", model_args);
    char *out = ts_cli_expect(args, 0, "");
    char *kept = malloc(strlen(out) + 1);
    assert_non_null(kept);
    size_t at = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
        if (strncmp(line, "built ", 6) != 0 && strncmp(line, "ran ", 4) != 0)
            at += (size_t)sprintf(kept + at, "%s\n", line);
    kept[at] = '\0';
    free(out);
    return kept;
}

/* A small unannotated model: dense, relu, abs, exp, add (a residual edge). */
static const char plain_model[] = "#[version = \"0.0.5\"]\n"
                                  "def @main(%x: Tensor[(1, 4), float32], "
                                  "%w: Tensor[(4, 4), float32]) {\n"
                                  "  %0 = nn.dense(%x, %w);\n"
                                  "  %1 = nn.relu(%0);\n"
                                  "  %2 = abs(%1);\n"
                                  "  %3 = exp(%2);\n"
                                  "  add(%3, %0)\n"
                                  "}\n";

/* ------------------------------------------------------------- partition */

static void test_help(void **state)
{
    (void)state;
    char *out = ts_cli_expect("partition --help", 0, "");
    ts_assert_contains(out, "Usage: byocl partition MODEL [--target T[,T2] | --range A:B "
                            "--target T] [options] [-o OUT.relay]\n");
    ts_assert_contains(out, "--dump-after PASS");
    free(out);
    out = ts_cli_expect("help extract", 0, "");
    ts_assert_contains(out, "Usage: byocl extract MODEL --region SYMBOL|N [-o OUT.relay]\n");
    free(out);
    out = ts_cli_expect("--help", 0, "");
    ts_assert_contains(out, "partition");
    ts_assert_contains(out, " cut a model's accelerator regions out as functions\n");
    ts_assert_contains(out, " one partitioned region as a standalone model\n");
    free(out);
}

/* The model's own annotations: the seed partitions to the fixture's text. */
static void test_partition_seed(void **state)
{
    (void)state;
    char *out = ts_cli_expect("partition builtin:seed", 0, "");
    char *want = ts_read_file(ts_fixture("partition/seed_partitioned.relay"), NULL);
    assert_string_equal(out, want);
    free(want);
    free(out);
}

/* An ONNX model with a symbolic batch: --shape fixes it before the range, given in the
 * ONNX file's node names, is annotated; the region keeps those names. */
static void test_partition_onnx_shape(void **state)
{
    (void)state;
    char args[1024];
    FMT(args, "partition '%s' --shape input.1=2x3x8x8 --range relu:clip --target acc",
        ts_fixture("onnx/small_cnn.onnx"));
    char *out = ts_cli_expect(args, 0, "");
    ts_assert_contains(out, "def @main(%input_1: Tensor[(2, 3, 8, 8), float32]) -> "
                            "Tensor[(2, 5), float32] {\n");
    ts_assert_contains(out, "  %2 = @acc_main_0(%bn) /* ty=Tensor[(2, 4, 4, 4), float32] */;\n");
    ts_assert_contains(out, "def @acc_main_0(%acc_0_i0: Tensor[(2, 4, 8, 8), float32], "
                            "Compiler=\"acc\", Primitive=1, Inline=1, "
                            "global_symbol=\"acc_main_0\") -> Tensor[(2, 4, 4, 4), float32] {\n"
                            "  %relu = nn.relu(%acc_0_i0) /* ty=Tensor[(2, 4, 8, 8), float32] */;\n"
                            "  %pool = nn.max_pool2d(%relu, pool_size=[2, 2], strides=[2, 2]) "
                            "/* ty=Tensor[(2, 4, 4, 4), float32] */;\n"
                            "  clip(%pool, a_min=0f, a_max=6f) "
                            "/* ty=Tensor[(2, 4, 4, 4), float32] */\n}\n");
    free(out);
    /* Bare numbers are byocl's own numbering here (the file names no node by a number):
     * relu, max_pool2d and clip have names, so the numbers stop at #2. */
    FMT(args, "partition '%s' --shape input.1=2x3x8x8 --range 4:6 --target acc",
        ts_fixture("onnx/small_cnn.onnx"));
    ts_cli_expect_error(args, 1,
                        "byocl: error: annotate_range: range %4..%6: @main has no node %4 (its "
                        "bindings run from %0 to %fc; byocl's own numbers are #0..#2)\n");
    /* --explain names the calls it leaves on the host by their ONNX names. */
    FMT(args, "partition '%s' --target opencl --explain -o '%s/x.relay'",
        ts_fixture("onnx/legacy7.onnx"), ts_tmpdir("cli-partition-onnx-explain"));
    char *err = NULL;
    assert_int_equal(ts_run_cli(args, &out, &err), 0);
    ts_assert_contains(err, "\n%unsq (expand_dims) stays on the host: opencl: op expand_dims is "
                            "not supported by the opencl target\n"
                            "%sq (squeeze) stays on the host: opencl: op squeeze is not supported "
                            "by the opencl target\n"
                            "%cast (cast) stays on the host: opencl: dtype int32 is not supported "
                            "(the opencl target computes float32 and float16)\n");
    free(out);
    free(err);
}

/* --min-region-flops: the sigmoid + multiply region (2048 FLOPs) stays on the host and
 * --explain says so; --offload-profile keeps the region that ran slower offloaded in the
 * profile; run takes both with a region target; bad values are usage errors, a missing
 * profile a failure. */
static void test_partition_keep_on_host(void **state)
{
    (void)state;
    char path[4096], args[8192], *out = NULL, *err = NULL;
    snprintf(path, sizeof path, "%s", ts_fixture("text/two_regions.relay"));
    FMT(args, "partition '%s' --target opencl --min-region-flops 5k --explain --no-types", path);
    assert_int_equal(ts_run_cli(args, &out, &err), 0);
    assert_string_equal(err, "%2 (split) stays on the host: opencl: op split is not supported "
                             "by the opencl target\n"
                             "opencl region of 2 ops from sigmoid on (2048 FLOPs) stays on the "
                             "host: under the minimum of 5000 FLOPs\n");
    ts_assert_contains(out, "  %1 = split(%0, indices_or_sections=8, axis=1);\n"
                            "  %2 = %1.0;\n"
                            "  %3 = sigmoid(%2);\n"
                            "  multiply(%3, 2f)\n");
    assert_null(strstr(out, "opencl_main_1"));
    free(out);
    free(err);
    FMT(args, "run '%s' --random-inputs --target opencl --min-region-flops 1M", path);
    assert_int_equal(ts_run_cli(args, &out, &err), 0);
    free(out);
    free(err);
    /* --offload-profile: regions[] as byocl bench --json writes them; the conv region ran
     * slower offloaded. */
    char profile[4200];
    snprintf(profile, sizeof profile, "%s/profile.json", ts_tmpdir("cli-keep-on-host"));
    ts_write_text(profile, "{\"regions\": [{\"name\": \"opencl_main_0\", \"host_ms\": 0.5, "
                           "\"offloaded_ms\": 0.9}, {\"name\": \"opencl_main_1\", "
                           "\"host_ms\": 0.3, \"offloaded_ms\": 0.1}]}\n");
    FMT(args, "partition '%s' --target opencl --offload-profile '%s' --explain --no-types", path,
        profile);
    assert_int_equal(ts_run_cli(args, &out, &err), 0);
    ts_assert_contains(err, "opencl region of 2 ops from nn.conv2d on (4.506e+05 FLOPs) stays on "
                            "the host: opencl_main_0 took 0.9 ms offloaded against 0.5 ms on the "
                            "host in the profile\n");
    ts_assert_contains(out, "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);\n");
    free(out);
    free(err);
    FMT(args, "run '%s' --random-inputs --target opencl --offload-profile '%s'", path, profile);
    assert_int_equal(ts_run_cli(args, &out, &err), 0);
    free(out);
    free(err);
    FMT(args, "partition '%s' --target opencl --offload-profile '%s.missing'", path, profile);
    assert_int_equal(ts_run_cli(args, &out, &err), 1);
    ts_assert_contains(err, "profile.json.missing");
    free(out);
    free(err);
    FMT(args, "partition '%s' --target opencl --min-region-flops 1X", path);
    ts_cli_expect_error(args, 2,
                        "byocl: error: bad --min-region-flops '1X': expected a number of FLOPs "
                        ">= 0, e.g. 2e6, 500k or 1.5G; see 'byocl partition --help'\n");
    FMT(args, "partition '%s' --target opencl --min-region-flops -5", path);
    ts_cli_expect_error(args, 2,
                        "byocl: error: bad --min-region-flops '-5': expected a number of FLOPs "
                        ">= 0, e.g. 2e6, 500k or 1.5G; see 'byocl partition --help'\n");
    FMT(args, "run '%s' --random-inputs --min-region-flops 1k", path);
    ts_cli_expect_error(args, 2,
                        "byocl: error: --min-region-flops goes with a region target (--target "
                        "T); see 'byocl run --help'\n");
    FMT(args, "run '%s' --random-inputs --target host --offload-profile '%s'", path, profile);
    ts_cli_expect_error(args, 2,
                        "byocl: error: --offload-profile goes with a region target (--target "
                        "T); see 'byocl run --help'\n");
    /* a profile that is not JSON: the reader's message, with the file and position */
    FMT(args, "run '%s' --random-inputs --target opencl --offload-profile '%s'", path, path);
    char want[8400];
    FMT(want, "%s:1:1: error: expected a value\n", path);
    ts_cli_expect_error(args, 1, want);
}

/* The thread's VGG block: the error names the node, its op, the argument and a hint;
 * --complete fixes it, exactly as the API does. */
static void test_partition_thread_block(void **state)
{
    (void)state;
    char args[1024];
    FMT(args, "partition '%s'", ts_fixture("text/vgg_block.relay"));
    ts_cli_expect_error(args, 1,
                 "byocl: error: check_annotations: in @main, %78 (nn.conv2d) at 9:9: argument 1 "
                 "(%77, cast at 8:9) comes from outside region 0 (ccompiler) without "
                 "annotation.compiler_begin; hint: annotate every value that flows into a "
                 "region (or run `byocl partition --complete`)\n");
    FMT(args, "partition '%s' --complete", ts_fixture("text/vgg_block.relay"));
    char *out = ts_cli_expect(args, 0, "");
    byocl_pipeline_options opt = {.complete = true};
    char *want = api_partition(ts_fixture("text/vgg_block.relay"), &opt);
    assert_string_equal(out, want);
    ts_assert_contains(out, "  @ccompiler_main_0(%74, %77, %79) /* ty=Tensor[(1, 512, 14, 14), "
                            "float16] */\n");
    free(want);
    free(out);
}

/* --no-types, as print has it: the same module without the type comments. */
static void test_partition_no_types(void **state)
{
    (void)state;
    char *out = ts_cli_expect("partition builtin:seed --no-types", 0, "");
    char *want = api_partition_typed("builtin:seed", NULL, false);
    assert_string_equal(out, want);
    assert_null(strstr(out, "/* ty="));
    ts_assert_contains(out, "  %1 = @opencl_main_0(%data, %0, %bn_gamma, %bn_beta, %bn_mean, "
                            "%bn_var);\n");
    free(want);
    free(out);
    out = ts_cli_expect("partition --help", 0, "");
    ts_assert_contains(out, "--no-types");
    free(out);
    /* With -o, the file has no types either. */
    const char *dir = ts_tmpdir("cli-partition-no-types");
    char args[1024], path[512];
    FMT(path, "%s/seed.relay", dir);
    FMT(args, "partition builtin:seed --no-types -o '%s'", path);
    free(ts_cli_expect(args, 0, ""));
    char *text = ts_read_file(path, NULL);
    want = api_partition_typed("builtin:seed", NULL, false);
    assert_string_equal(text, want);
    free(want);
    free(text);
}

/* Annotations as TVM's passes print them (a batch_norm closed whole, compiler="default",
 * a compiler_begin on the tuple that feeds concatenate, one compiler_end per use):
 * partitioned to the fixture's text (no @default_main function; one parameter for the
 * concatenate entering acc twice), and the partitioned module computes what the annotated
 * one does, on the reference executor and on --target host. */
static void test_partition_tvm_forms(void **state)
{
    (void)state;
    const char *model = ts_fixture("partition/tvm_forms.relay");
    char args[1024], path[512], quoted[600];
    FMT(args, "partition '%s'", model);
    char *out = ts_cli_expect(args, 0, "");
    char *want = ts_read_file(ts_fixture("partition/tvm_forms_partitioned.relay"), NULL);
    assert_string_equal(out, want);
    assert_null(strstr(out, "default"));
    ts_assert_contains(out, "  %6 = @acc_main_2(%5) /* ty=Tensor[(1, 4, 3, 3), float32] */;\n");
    free(want);
    free(out);

    const char *dir = ts_tmpdir("cli-partition-tvm-forms");
    FMT(path, "%s/part.relay", dir);
    FMT(args, "partition '%s' -o '%s'", model, path);
    free(ts_cli_expect(args, 0, ""));
    FMT(quoted, "'%s'", model);
    char *original = run_outputs(quoted);
    ts_assert_contains(original, "output 1: Tensor[(2), float32]\n");
    static const char *const how[] = {"'%s'", "'%s' --target host"};
    for (int i = 0; i < 2; i++) {
        const char *files[2] = {model, path};
        for (int f = 0; f < 2; f++) {
            FMT(quoted, how[i], files[f]);
            char *got = run_outputs(quoted);
            assert_string_equal(got, original);
            free(got);
        }
    }
    free(original);
}

/* --range on an unannotated model, with --dump-after showing the annotated module. */
static void test_partition_range_and_dump(void **state)
{
    (void)state;
    const char *dir = ts_tmpdir("cli-partition-range");
    char path[512], args[1024];
    FMT(path, "%s/plain.relay", dir);
    ts_write_text(path, plain_model);
    FMT(args, "partition '%s' --range %%1:%%2 --target acc --dump-after annotate_range", path);
    char *out, *err;
    assert_int_equal(ts_run_cli(args, &out, &err), 0);
    byocl_pipeline_options opt = {.range_target = "acc", .range_first = 1, .range_last = 2};
    char *want = api_partition(path, &opt);
    assert_string_equal(out, want);
    ts_assert_contains(out, "  %1 = @acc_main_0(%0) /* ty=Tensor[(1, 4), float32] */;\n");
    assert_string_equal(err,
                        "// byocl: the module after annotate_range\n"
                        "#[version = \"0.0.5\"]\n"
                        "def @main(%x: Tensor[(1, 4), float32], %w: Tensor[(4, 4), float32]) -> "
                        "Tensor[(1, 4), float32] {\n"
                        "  %0 = nn.dense(%x, %w) /* ty=Tensor[(1, 4), float32] */;\n"
                        "  %1 = annotation.compiler_begin(%0, compiler=\"acc\") /* "
                        "ty=Tensor[(1, 4), float32] */;\n"
                        "  %2 = nn.relu(%1) /* ty=Tensor[(1, 4), float32] */;\n"
                        "  %3 = abs(%2) /* ty=Tensor[(1, 4), float32] */;\n"
                        "  %4 = annotation.compiler_end(%3, compiler=\"acc\") /* "
                        "ty=Tensor[(1, 4), float32] */;\n"
                        "  %5 = exp(%4) /* ty=Tensor[(1, 4), float32] */;\n"
                        "  add(%5, %0) /* ty=Tensor[(1, 4), float32] */\n"
                        "}\n");
    free(want);
    free(out);
    free(err);
    /* "all" dumps after each pass that ran. */
    FMT(args, "partition '%s' --range 1:2 --target acc --dump-after all --no-merge", path);
    assert_int_equal(ts_run_cli(args, &out, &err), 0);
    const char *at = err;
    static const char *const passes[] = {"annotate_range", "check_annotations", "partition"};
    for (int i = 0; i < 3; i++) {
        char line[128];
        FMT(line, "// byocl: the module after %s\n", passes[i]);
        at = strstr(at, line);
        if (!at)
            fail_msg("no dump after %s in:\n%s", passes[i], err);
    }
    assert_null(strstr(err, "after merge_regions"));
    free(out);
    free(err);
}

/* --dump-after fold_constants: constant arithmetic already folded, before any annotation. */
static void test_partition_dump_after_fold(void **state)
{
    (void)state;
    const char *dir = ts_tmpdir("cli-partition-fold");
    char path[512], args[1024];
    FMT(path, "%s/fold.relay", dir);
    ts_write_text(path, "#[version = \"0.0.5\"]\n"
                        "def @main(%x: Tensor[(1, 4), float32]) {\n"
                        "  %0 = add(1f, 2f);\n"
                        "  %1 = multiply(%x, %0);\n"
                        "  nn.relu(%1)\n"
                        "}\n");
    FMT(args, "partition '%s' --range 1:1 --target acc --dump-after fold_constants", path);
    char *out, *err;
    assert_int_equal(ts_run_cli(args, &out, &err), 0);
    assert_string_equal(err, "// byocl: the module after fold_constants\n"
                             "#[version = \"0.0.5\"]\n"
                             "def @main(%x: Tensor[(1, 4), float32]) -> Tensor[(1, 4), float32] {\n"
                             "  %1 = multiply(%x, 3f) /* ty=Tensor[(1, 4), float32] */;\n"
                             "  nn.relu(%1) /* ty=Tensor[(1, 4), float32] */\n"
                             "}\n");
    free(out);
    free(err);
}

/* The thread's block as the user's file names it: --range in the file's names (bare, with
 * '%' or in byocl's own #N), the region keeping them; an end the file lacks, and a bare
 * range that reads two ways, are errors that say so; print keeps the names, --renumber
 * numbers them from %0. */
static void test_partition_file_names(void **state)
{
    (void)state;
    const char *vgg = ts_fixture("annotate/vgg_block_plain.relay");
    char args[1024];
    FMT(args, "partition '%s' --range 75:82 --target opencl", vgg);
    ts_cli_expect_error(args, 1,
                        "byocl: error: annotate_range: range %75..%82: @main has no node %75 "
                        "(its bindings run from %76 to %81; byocl's own numbers are #0..#5)\n");
    FMT(args, "partition '%s' --range 76:81 --target opencl --no-types", vgg);
    char *want = ts_cli_expect(args, 0, "");
    assert_string_equal(
        want,
        "#[version = \"0.0.5\"]\n"
        "def @main(%74: Tensor[(1, 512, 14, 14), float16], "
        "%block5_conv3/convolution/ReadVariableOp:0: Tensor[(512, 512, 3, 3), float32], "
        "%block5_conv3/BiasAdd/ReadVariableOp:0: Tensor[(512), float32]) -> "
        "Tensor[(1, 512, 7, 7), float16] {\n"
        "  %0 = @opencl_main_0(%74, %block5_conv3/convolution/ReadVariableOp:0, "
        "%block5_conv3/BiasAdd/ReadVariableOp:0);\n"
        "  nn.max_pool2d(%0, pool_size=[2, 2], strides=[2, 2])\n"
        "}\n"
        "\n"
        "def @opencl_main_0(%opencl_0_i0: Tensor[(1, 512, 14, 14), float16], %opencl_0_i1: "
        "Tensor[(512, 512, 3, 3), float32], %opencl_0_i2: Tensor[(512), float32], "
        "Compiler=\"opencl\", Primitive=1, Inline=1, global_symbol=\"opencl_main_0\") -> "
        "Tensor[(1, 512, 14, 14), float16] {\n"
        "  %76 = nn.relu(%opencl_0_i0);\n"
        "  %77 = cast(%opencl_0_i1, dtype=\"float16\");\n"
        "  %78 = nn.conv2d(%76, %77, padding=[1, 1, 1, 1], channels=512, kernel_size=[3, 3], "
        "out_dtype=\"float16\");\n"
        "  %79 = cast(%opencl_0_i2, dtype=\"float16\");\n"
        "  %80 = nn.bias_add(%78, %79);\n"
        "  nn.relu(%80)\n"
        "}\n");
    static const char *const same[] = {"%76:%81", "'#0:#5'", "76:%81"};
    for (int i = 0; i < 3; i++) {
        FMT(args, "partition '%s' --range %s --target opencl --no-types", vgg, same[i]);
        char *out = ts_cli_expect(args, 0, "");
        assert_string_equal(out, want);
        free(out);
    }
    free(want);

    const char *dir = ts_tmpdir("cli-partition-file-names");
    char path[512];
    FMT(path, "%s/inline.relay", dir);
    ts_write_text(path, "#[version = \"0.0.5\"]\n"
                        "def @main(%x: Tensor[(1, 4), float32]) {\n"
                        "  %0 = nn.relu(add(%x, 1f));\n"
                        "  %1 = multiply(%0, %x);\n"
                        "  %2 = nn.relu(%1);\n"
                        "  tanh(%2)\n"
                        "}\n");
    FMT(args, "partition '%s' --range 0:1 --target acc", path);
    ts_cli_expect_error(args, 1,
                        "byocl: error: annotate_range: range 0:1 is ambiguous in @main: it reads "
                        "as the file's %0..%1 (nn.relu at 3:8 .. multiply at 4:8) or as byocl's "
                        "own #0..#1 (add at 3:16 .. nn.relu at 3:8); write %0:%1 or #0:#1\n");

    /* print keeps the file's names; --renumber gives byocl's own numbers. */
    FMT(args, "print '%s' --no-types", vgg);
    char *out = ts_cli_expect(args, 0, "");
    ts_assert_contains(out, "  %76 = nn.relu(%74);\n"
                            "  %77 = cast(%block5_conv3/convolution/ReadVariableOp:0, "
                            "dtype=\"float16\");\n"
                            "  %78 = nn.conv2d(%76, %77, ");
    free(out);
    FMT(args, "print '%s' --no-types --renumber", vgg);
    out = ts_cli_expect(args, 0, "");
    ts_assert_contains(out, "  %0 = nn.relu(%74);\n"
                            "  %1 = cast(%block5_conv3/convolution/ReadVariableOp:0, "
                            "dtype=\"float16\");\n"
                            "  %2 = nn.conv2d(%0, %1, ");
    free(out);
}

static void test_partition_usage_and_errors(void **state)
{
    (void)state;
    ts_cli_expect_error("partition builtin:seed --target nope", 1,
                 "byocl: error: annotate_target: unknown target \"nope\" (registered targets: "
                 "opencl)\n");
    ts_cli_expect_error("partition builtin:seed --shape data=1x3x224x224", 1,
                 "byocl: error: builtin:seed: input shapes (--shape) apply to ONNX models "
                 "only\n");
    ts_cli_expect_error("partition builtin:seed --range 1:3", 2,
                 "byocl: error: --range needs one --target: the region's compiler; see 'byocl "
                 "partition --help'\n");
    ts_cli_expect_error("partition builtin:seed --range 3:1 --target acc", 2,
                 "byocl: error: bad --range '3:1': expected A:B with A <= B, e.g. 75:82, "
                 "%75:%82, #0:#5 or conv1:relu2; see "
                 "'byocl partition --help'\n");
    ts_cli_expect_error("partition builtin:seed --range 1-3 --target acc", 2,
                 "byocl: error: bad --range '1-3': expected A:B with A <= B, e.g. 75:82, "
                 "%75:%82, #0:#5 or conv1:relu2; see "
                 "'byocl partition --help'\n");
    ts_cli_expect_error("partition builtin:seed --explain", 2,
                 "byocl: error: --explain goes with --target (annotation by op support); see "
                 "'byocl partition --help'\n");
    ts_cli_expect_error("partition builtin:seed --target , ", 2,
                 "byocl: error: bad --target ',': expected names separated by commas (at most "
                 "16); see 'byocl partition --help'\n");
    ts_cli_expect_error("partition builtin:seed --dump-after parse", 2,
                 "byocl: error: unknown pass 'parse' for --dump-after (passes: fold_constants, "
                 "annotate_target, annotate_range, check_annotations, merge_regions, "
                 "keep_on_host, partition, all); see 'byocl "
                 "partition --help'\n");
}

/* -o writes the text (and the .npz of a model with weights) whole; a failure writes
 * nothing. The written model reads back and computes what the original computes. */
static void test_partition_output_files(void **state)
{
    (void)state;
    const char *tmp = ts_tmpdir("cli-partition-out");
    char dir[512], path[600], args[2048], line[1400];
    FMT(dir, "%s", tmp);
    FMT(path, "%s/seed.relay", dir);
    FMT(args, "partition builtin:seed -o '%s'", path);
    char *out = ts_cli_expect(args, 0, "");
    FMT(line, "wrote %s\n", path);
    assert_string_equal(out, line);
    free(out);
    char *text = ts_read_file(path, NULL);
    char *want = ts_read_file(ts_fixture("partition/seed_partitioned.relay"), NULL);
    assert_string_equal(text, want);
    free(text);
    free(want);
    FMT(args, "'%s'", path);
    char *partitioned = run_summary(args);
    char *original = run_summary("builtin:seed");
    assert_string_equal(partitioned, original);
    free(partitioned);
    free(original);

    /* ResNet-18 with a range: constants bound in the region go to the .npz too. */
    FMT(path, "%s/r18.relay", dir);
    FMT(args, "partition builtin:resnet18 --range 5:13 --target acc -o '%s'", path);
    out = ts_cli_expect(args, 0, "");
    FMT(line, "wrote %s/r18.relay and %s/r18.npz (read it back with: byocl print %s/r18.relay "
              "--params %s/r18.npz)\n", dir, dir, dir, dir);
    assert_string_equal(out, line);
    free(out);
    FMT(args, "'%s/r18.relay' --params '%s/r18.npz'", dir, dir);
    partitioned = run_summary(args);
    original = run_summary("builtin:resnet18");
    assert_string_equal(partitioned, original);
    free(partitioned);
    free(original);

    /* Failures leave no file, not even a temporary one. */
    char bad_dir[600];
    FMT(bad_dir, "%s/bad", dir);
    FMT(args, "mkdir '%s'", bad_dir);
    assert_int_equal(system(args), 0);
    FMT(args, "partition '%s' -o '%s/block.relay'", ts_fixture("text/vgg_block.relay"), bad_dir);
    out = ts_cli_expect(args, 1, NULL);
    assert_string_equal(out, "");
    free(out);
    assert_int_equal(count_entries(bad_dir), 0);
    FMT(args, "partition builtin:seed -o '%s/missing/seed.relay'", dir);
    out = ts_cli_expect(args, 1, NULL);
    assert_string_equal(out, "");
    free(out);
    FMT(path, "%s/missing", dir);
    assert_int_not_equal(access(path, F_OK), 0);
}

/* --------------------------------------------------------------- extract */

/* The thread's standalone build: the seed's region as a model of its own, its inputs
 * listed on stderr, and it runs. */
static void test_extract_seed(void **state)
{
    (void)state;
    static const char mapping[] = "# %data <- %data\n"
                                  "# %n0_add <- %0 (add)\n"
                                  "# %bn_gamma <- %bn_gamma\n"
                                  "# %bn_beta <- %bn_beta\n"
                                  "# %bn_mean <- %bn_mean\n"
                                  "# %bn_var <- %bn_var\n";
    char *out = ts_cli_expect("extract builtin:seed --region 0", 0, mapping);
    byocl_module *m = NULL, *x = NULL;
    byocl_error err;
    assert_int_equal(byocl_builtin_build("seed", &m, &err), BYOCL_OK);
    assert_int_equal(byocl_partition(m, NULL, &err), BYOCL_OK);
    assert_int_equal(byocl_extract(m, "opencl_main_0", &x, &err), BYOCL_OK);
    byocl_print_options popt = {.show_types = true};
    char *want = byocl_text_print(x, &popt, NULL, &err);
    assert_string_equal(out, want);
    free(want);
    free(out);
    byocl_module_free(x);
    byocl_module_free(m);

    /* From a file partitioned before, by symbol, to a file; then run. */
    const char *tmp = ts_tmpdir("cli-extract");
    char dir[512], args[1400], line[1400];
    FMT(dir, "%s", tmp);
    FMT(args, "partition builtin:seed -o '%s/p.relay'", dir);
    free(ts_cli_expect(args, 0, ""));
    FMT(args, "extract '%s/p.relay' --region opencl_main_0 -o '%s/r.relay'", dir, dir);
    out = ts_cli_expect(args, 0, mapping);
    FMT(line, "wrote %s/r.relay\n", dir);
    assert_string_equal(out, line);
    free(out);
    FMT(args, "run '%s/r.relay' --random-inputs", dir);
    out = ts_cli_expect(args, 0, "");
    ts_assert_contains(out, "output 0: Tensor[(1, 16, 224, 224), float32]\n");
    ts_assert_contains(out, "output 2: Tensor[(16), float32]\n");
    free(out);
}

static void test_extract_errors(void **state)
{
    (void)state;
    ts_cli_expect_error("extract builtin:seed --region 0 --shape data=1x3x224x224", 1,
                 "byocl: error: builtin:seed: input shapes (--shape) apply to ONNX models "
                 "only\n");
    ts_cli_expect_error("extract builtin:seed --region 3", 1,
                 "byocl: error: no region '3' in the module (its regions: opencl_main_0)\n");
    ts_cli_expect_error("extract builtin:seed", 2,
                 "byocl: error: missing --region SYMBOL|N; see 'byocl extract --help'\n");
    ts_cli_expect_error("extract builtin:resnet18 --region 0", 1,
                 "byocl: error: the module has no partitioned regions (functions with a "
                 "Compiler attribute); partition it first (byocl partition)\n");
    char args[1024];
    FMT(args, "extract '%s' --region 0", ts_fixture("text/vgg_block.relay"));
    char *out = ts_cli_expect(args, 1, NULL);
    assert_string_equal(out, "");
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_partition_onnx_shape),
        cmocka_unit_test(test_partition_seed),
        cmocka_unit_test(test_partition_keep_on_host),
        cmocka_unit_test(test_partition_thread_block),
        cmocka_unit_test(test_partition_no_types),
        cmocka_unit_test(test_partition_tvm_forms),
        cmocka_unit_test(test_partition_range_and_dump),
        cmocka_unit_test(test_partition_dump_after_fold),
        cmocka_unit_test(test_partition_file_names),
        cmocka_unit_test(test_partition_usage_and_errors),
        cmocka_unit_test(test_partition_output_files),
        cmocka_unit_test(test_extract_seed),
        cmocka_unit_test(test_extract_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
