/* byocl bench: the table's rows per region, the JSON against the table, the agreement
 * figure against one computed here from `byocl run`'s outputs, progress lines on a pipe
 * and none with --quiet, --svg, and the usage errors and unwritable report files (no
 * half-written file). The model is small: two OpenCL regions around a host op (copy). Every
 * bench run shares one --cache-dir, so only the first compiles cold. No timed asserts. */
#define _GNU_SOURCE /* sched_setaffinity */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_support.h"
#include "byocl/tensor_io.h"
#include "base/json.h"

#define FMT(buf, ...) snprintf(buf, sizeof buf, __VA_ARGS__)

/* add + exp | copy (the host) | dense + relu: regions opencl_main_0 and _1. exp differs
 * between LLVM and PoCL in the last bits, so the outputs differ a little. The kernels are
 * quick for PoCL to compile. */
static const char *const model_text =
    "#[version = \"0.0.5\"]\n"
    "def @main(%data: Tensor[(4, 256), float32], %b: Tensor[(4, 256), float32],\n"
    "          %w: Tensor[(64, 256), float32]) {\n"
    "  %0 = add(%data, %b);\n"
    "  %1 = exp(%0);\n"
    "  %2 = copy(%1);\n"
    "  %3 = nn.dense(%2, %w, units=64);\n"
    "  nn.relu(%3)\n"
    "}\n";

static char dir[256], model[300], caches[300];

static int set_up(void **state)
{
    (void)state;
    FMT(dir, "%s", ts_tmpdir("bench"));
    FMT(model, "%s/small.relay", dir);
    FMT(caches, "%s/caches", dir);
    ts_write_text(model, model_text);
    return 0;
}

static int tear_down(void **state)
{
    (void)state;
    ts_remove_tree(dir);
    return 0;
}

static void expect_usage(const char *flags, const char *msg)
{
    char args[4096], want[1200];
    FMT(args, "bench %s", flags);
    FMT(want, "byocl: error: %s; see 'byocl bench --help'\n", msg);
    ts_cli_expect_usage(args, want);
}

static void test_usage_errors(void **state)
{
    (void)state;
    expect_usage("builtin:seed --runs 0", "--runs 0: expected a count from 1 to 100000");
    expect_usage("builtin:seed --runs 3x", "--runs 3x: expected a count from 1 to 100000");
    expect_usage("builtin:seed --warmup -1", "--warmup -1: expected a count from 0 to 100000");
    expect_usage("builtin:seed --threads 0", "--threads 0: expected a count from 1 to 4096");
    expect_usage("builtin:seed --target nope", "unknown target 'nope' (known: host, ref, opencl)");
    expect_usage("builtin:seed --target host",
                 "--target host: bench compares the host with a region target such as opencl");
    expect_usage("builtin:seed --json a.out --svg a.out",
                 "--json and --svg name the same file a.out");
    expect_usage("a b", "unexpected argument 'b'");
}

/* Nothing of the report is left behind: neither the file nor its temporary. */
static void expect_no_files(const char *in)
{
    char args[4096];
    FMT(args, "ls -A '%s' | grep -v -e '^small.relay$' -e '^caches$' | grep -q .", in);
    assert_int_not_equal(system(args), 0);
}

static void test_unwritable_report(void **state)
{
    (void)state;
    char args[4096], want[1400];
    FMT(args, "bench '%s' --json '%s/missing/b.json' --quiet", model, dir);
    FMT(want, "byocl: error: --json %s/missing/b.json: cannot write %s/missing/b.json.tmp.",
        dir, dir);
    char *err = NULL;
    assert_int_equal(ts_run_cli(args, NULL, &err), 1);
    assert_true(strncmp(err, want, strlen(want)) == 0);
    ts_assert_contains(err, ": No such file or directory\n");
    free(err);
    /* A failure after the file was opened (the model does not load) leaves nothing. */
    FMT(args, "bench '%s/nothing.relay' --json '%s/b.json' --svg '%s/b.svg' --quiet", dir, dir,
        dir);
    assert_int_equal(ts_run_cli(args, NULL, NULL), 1);
    expect_no_files(dir);
    /* Fresh caches go under $TMPDIR: one that does not exist stops the bench at once. */
    FMT(args, "bench '%s' --quiet", model);
    char *saved = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
    setenv("TMPDIR", "/nonexistent-tmp", 1);
    ts_cli_expect_failure(args, "byocl: error: cannot create a directory for fresh caches in "
                                "/nonexistent-tmp: No such file or directory\n");
    if (saved)
        setenv("TMPDIR", saved, 1);
    else
        unsetenv("TMPDIR");
    free(saved);
}

/* The table row of `name`: ops, GFLOP, host ms, offloaded ms. */
static void table_row(const char *out, const char *name, int *ops, double *v)
{
    char key[128];
    FMT(key, "\n  %-22s ", name);
    const char *at = strstr(out, key);
    if (!at)
        fail_msg("no table row for %s in:\n%s", name, out);
    assert_int_equal(sscanf(at + strlen(key), "%d %lf %lf %lf", ops, &v[0], &v[1], &v[2]), 4);
}

/* The parsed JSON file at `path` (fails the test when it does not parse). */
static byocl_json *read_json(const char *path)
{
    size_t len;
    char *text = ts_read_file(path, &len);
    byocl_json *j = NULL;
    byocl_error err = {0};
    if (base_json_parse(text, len, path, &j, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    free(text);
    return j;
}

static double json_number(const byocl_json *obj, const char *key)
{
    const byocl_json *v = base_json_get(obj, key);
    if (!v || v->kind != BYOCL_JSON_NUMBER)
        fail_msg("the JSON has no number %s", key);
    return v->number;
}

/* The table prints 3 decimals. */
static void expect_printed(double json, double table)
{
    if (fabs(json - table) > 0.0005 + 1e-9)
        fail_msg("JSON %.9g against the table's %.3f", json, table);
}

/* Largest absolute difference and relative L2 error of `byocl run`'s outputs on the host
 * and offloaded, computed here. */
static void reference_agreement(double *max_abs, double *rel_l2)
{
    const char *targets[2] = {"host", "opencl"};
    char out_dir[2][300], args[4096];
    for (int k = 0; k < 2; k++) {
        FMT(out_dir[k], "%s/out_%s", dir, targets[k]);
        FMT(args, "run '%s' --random-inputs --threads 2 --target %s --output-dir '%s'", model,
            targets[k], out_dir[k]);
        assert_int_equal(ts_run_cli(args, NULL, NULL), 0);
    }
    byocl_tensor *t[2];
    byocl_error err = {0};
    for (int k = 0; k < 2; k++) {
        char path[700];
        FMT(path, "%s/output_0.npy", out_dir[k]);
        if (byocl_npy_read(path, &t[k], &err) != BYOCL_OK)
            fail_msg("%s", err.msg);
    }
    byocl_compare_result r;
    if (byocl_tensor_compare(t[1], t[0], NULL, &r, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    *max_abs = r.max_abs_error;
    *rel_l2 = sqrt(r.sum_sq_error / r.sum_sq_expected);
    byocl_tensor_unref(t[0]);
    byocl_tensor_unref(t[1]);
}

static void test_table_json_and_progress(void **state)
{
    (void)state;
    char args[4096], json_path[300], svg_path[300];
    FMT(json_path, "%s/bench.json", dir);
    FMT(svg_path, "%s/bench.svg", dir);
    FMT(args, "bench '%s' --threads 2 --runs 3 --warmup 1 --cache-dir '%s' --json '%s' --svg '%s' "
              "--per-op",
        model, caches, json_path, svg_path);
    setenv("BYOCL_PROGRESS_DELAY", "0", 1); /* every step reports, even a short one */
    char *out = NULL, *err = NULL;
    int rc = ts_run_cli(args, &out, &err);
    unsetenv("BYOCL_PROGRESS_DELAY");
    if (rc != 0)
        fail_msg("byocl %s exited %d:\n%s%s", args, rc, out, err);

    /* stderr is a file here: plain lines, one when each step starts and ends. */
    ts_assert_contains(err, "byocl: compiling the host build (cold): 0.0 s\n");
    ts_assert_contains(err, "byocl: compiling the offloaded build (cached): done in ");
    ts_assert_contains(err, "byocl: warming up: 0/2 0.0 s\n");
    ts_assert_contains(err, "byocl: running: 0/6 0.0 s\n");
    ts_assert_contains(err, "byocl: running: done in ");
    assert_null(strchr(err, '\r'));

    FMT(args, "byocl bench %s: host against opencl, 2 threads, 3 runs each after 1 warm-up "
              "run, alternating\n", model);
    assert_true(strncmp(out, args, strlen(args)) == 0);
    int ops[3];
    double row[3][3];
    table_row(out, "opencl_main_0", &ops[0], row[0]);
    table_row(out, "opencl_main_1", &ops[1], row[1]);
    table_row(out, "host ops", &ops[2], row[2]);
    assert_int_equal(ops[0], 2); /* add, exp */
    assert_int_equal(ops[1], 2); /* dense, relu */
    assert_int_equal(ops[2], 1); /* copy */
    assert_null(strstr(out, "opencl_main_2"));
    ts_assert_contains(out, "\nhost build, profile: ");
    ts_assert_contains(out, "\noffloaded build, profile: ");
    ts_assert_contains(out, " (region, opencl)\n");

    /* The JSON holds the table's figures. */
    byocl_json *j = read_json(json_path);
    const char *paths[2] = {"host", "offloaded"};
    for (int k = 0; k < 2; k++) {
        const byocl_json *p = base_json_get(j, paths[k]);
        assert_non_null(p);
        double min, median, max;
        char key[64];
        FMT(key, "\n  %-22s ", paths[k]);
        const char *at = strstr(out, key);
        assert_non_null(at);
        assert_int_equal(sscanf(at + strlen(key), "%lf %lf %lf", &min, &median, &max), 3);
        expect_printed(json_number(p, "min_ms"), min);
        expect_printed(json_number(p, "median_ms"), median);
        expect_printed(json_number(p, "max_ms"), max);
        assert_true(min <= median && median <= max);
        assert_true(json_number(p, "compile_cold_ms") > 0);
        assert_true(json_number(p, "compile_cached_ms") > 0);
        /* The parts add up to the totals; the host build has nothing to partition. */
        const char *whole[2] = {"compile_cold_ms", "compile_cached_ms"};
        const char *split[2] = {"compile_cold_parts_ms", "compile_cached_parts_ms"};
        for (int w = 0; w < 2; w++) {
            const byocl_json *parts = base_json_get(p, split[w]);
            assert_non_null(parts);
            double partition = json_number(parts, "partition"), build = json_number(parts, "build");
            assert_true(build > 0);
            assert_true(k == 0 ? partition == 0 : partition > 0);
            assert_true(fabs(partition + build - json_number(p, whole[w])) <=
                        1e-6 * json_number(p, whole[w]));
            /* Of the build, the OpenCL programs: one per region offloaded (two), loaded
             * from the program cache by the cached build, none on the host. */
            const char *kinds[2] = {"opencl_programs_cold", "opencl_programs_cached"};
            const byocl_json *programs = base_json_get(p, kinds[w]);
            assert_non_null(programs);
            int compiled = (int)json_number(programs, "compiled");
            int loaded = (int)json_number(programs, "loaded");
            double ms = json_number(programs, "compiled_ms") + json_number(programs, "loaded_ms");
            expect_printed(json_number(parts, "opencl_programs"), ms);
            assert_int_equal(compiled + loaded, k == 0 ? 0 : 2);
            if (w == 1)
                assert_int_equal(compiled, 0);
            assert_true(k == 0 ? ms == 0 : ms > 0 && ms <= build);
        }
    }
    assert_int_equal((int)json_number(j, "runs"), 3);
    assert_true(json_number(j, "import_ms") > 0);
    assert_int_equal((int)json_number(j, "threads"), 2);
    const byocl_json *regions = base_json_get(j, "regions");
    assert_non_null(regions);
    assert_int_equal(regions->n, 2);
    for (int r = 0; r < 2; r++) {
        const byocl_json *reg = &regions->items[r];
        char name[32];
        FMT(name, "opencl_main_%d", r);
        assert_string_equal(base_json_get(reg, "name")->string, name);
        assert_int_equal((int)json_number(reg, "ops"), ops[r]);
        expect_printed(json_number(reg, "gflop"), row[r][0]);
        expect_printed(json_number(reg, "host_ms"), row[r][1]);
        expect_printed(json_number(reg, "offloaded_ms"), row[r][2]);
        assert_true(json_number(reg, "gaps_ms") >= 0);
        assert_true(json_number(reg, "kernels_ms") + json_number(reg, "transfers_ms") +
                        json_number(reg, "gaps_ms") <=
                    json_number(reg, "offloaded_ms"));
    }
    /* dense 4x256 by 64x256: 2 * 4 * 64 * 256 flops, and a relu. */
    double flops1 = json_number(&regions->items[1], "gflop") * 1e9;
    assert_true(flops1 >= 2.0 * 4 * 64 * 256 && flops1 <= 2.0 * 4 * 64 * 256 + 4 * 64);
    assert_int_equal((int)json_number(base_json_get(j, "host_ops"), "ops"), 1);
    assert_true(json_number(j, "peak_rss_bytes") > 0);
    assert_non_null(base_json_get(base_json_get(j, "per_op"), "offloaded"));

    /* The machine, in the table and the JSON: the cores online, and on two or more the
     * cross-core round trips (a cache line between two cores and back: tens to hundreds
     * of ns). */
    const byocl_json *machine = base_json_get(j, "machine");
    assert_non_null(machine);
    int cores = (int)json_number(machine, "cores");
    assert_int_equal(cores, (int)sysconf(_SC_NPROCESSORS_ONLN));
    const byocl_json *cpu = base_json_get(machine, "cpu");
    assert_true(cpu && cpu->kind == BYOCL_JSON_STRING && cpu->string[0] != '\0');
    char machine_line[512];
    const byocl_json *trips[2] = {base_json_get(machine, "cross_core_round_trip_ns_before"),
                                  base_json_get(machine, "cross_core_round_trip_ns_after")};
    bool measured = cores >= 2 && trips[0] && trips[0]->kind == BYOCL_JSON_NUMBER && trips[1] &&
                    trips[1]->kind == BYOCL_JSON_NUMBER;
    if (measured) {
        double before = trips[0]->number, after = trips[1]->number;
        assert_true(before >= 1 && before < 1e6 && after >= 1 && after < 1e6);
        FMT(machine_line, "\n  machine: %s, %d cores; cross-core round trip %.0f ns before the "
                          "timed runs, %.0f after\n\n", cpu->string, cores, before, after);
    } else if (cores >= 2) {
        /* null: the other core, busy with other work, did not answer a batch of round
         * trips within the probe's 50 ms (a loaded machine); the line then has none. */
        for (int k = 0; k < 2; k++)
            assert_true(trips[k] && (trips[k]->kind == BYOCL_JSON_NUMBER ||
                                     trips[k]->kind == BYOCL_JSON_NULL));
        FMT(machine_line, "\n  machine: %s, %d cores\n\n", cpu->string, cores);
    } else {
        FMT(machine_line, "\n  machine: %s, 1 core\n\n", cpu->string);
    }
    ts_assert_contains(out, machine_line);

    /* The agreement figure, against the same outputs compared here. */
    const byocl_json *agree = base_json_get(j, "agreement");
    assert_non_null(agree);
    assert_int_equal((int)json_number(agree, "values"), 4 * 64);
    double max_abs, rel_l2;
    reference_agreement(&max_abs, &rel_l2);
    double got_max = json_number(agree, "max_abs_err"), got_l2 = json_number(agree, "rel_l2");
    if (fabs(got_max - max_abs) > 1e-12 + 1e-6 * max_abs ||
        fabs(got_l2 - rel_l2) > 1e-15 + 1e-6 * rel_l2)
        fail_msg("bench's agreement max %g, rel L2 %g; computed here %g, %g", got_max, got_l2,
                 max_abs, rel_l2);
    char line[200];
    FMT(line, "agreement (offloaded against host, 1 output, 256 values): max abs err %.3g, "
              "rel L2 %.3g\n", got_max, got_l2);
    ts_assert_contains(out, line);

    size_t len;
    char *svg = ts_read_file(svg_path, &len);
    assert_true(strncmp(svg, "<svg ", 5) == 0);
    ts_assert_contains(svg, ">opencl_main_1</text>");
    ts_assert_contains(svg, ">end to end</text>");
    ts_assert_contains(svg, "</svg>\n");
    free(svg);
    base_json_free(j);
    free(out);
    free(err);
}

static void test_quiet(void **state)
{
    (void)state;
    char args[4096];
    FMT(args, "bench '%s' --runs 1 --warmup 0 --cache-dir '%s' --quiet", model, caches);
    setenv("BYOCL_PROGRESS_DELAY", "0", 1);
    char *out = ts_cli_expect(args, 0, "");
    unsetenv("BYOCL_PROGRESS_DELAY");
    ts_assert_contains(out, "1 run each after 0 warm-up runs, alternating\n");
    free(out);
}

/* Allowed on one CPU (the CLI inherits this process's affinity), bench has no second core
 * to time a round trip to: the machine line says so by leaving the round trip out, and the
 * JSON has null for it. */
static void test_machine_one_cpu(void **state)
{
    (void)state;
    cpu_set_t all, one;
    assert_int_equal(sched_getaffinity(0, sizeof all, &all), 0);
    CPU_ZERO(&one);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &all)) {
            CPU_SET(cpu, &one);
            break;
        }
    char args[4096], json_path[300];
    FMT(json_path, "%s/one_cpu.json", dir);
    FMT(args, "bench '%s' --threads 1 --runs 1 --warmup 0 --cache-dir '%s' --quiet --json '%s'",
        model, caches, json_path);
    assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
    char *out = NULL, *err = NULL;
    int rc = ts_run_cli(args, &out, &err);
    assert_int_equal(sched_setaffinity(0, sizeof all, &all), 0);
    if (rc != 0)
        fail_msg("byocl %s exited %d:\n%s%s", args, rc, out, err);
    byocl_json *j = read_json(json_path);
    const byocl_json *machine = base_json_get(j, "machine");
    assert_non_null(machine);
    const char *keys[2] = {"cross_core_round_trip_ns_before", "cross_core_round_trip_ns_after"};
    for (int k = 0; k < 2; k++) {
        const byocl_json *v = base_json_get(machine, keys[k]);
        assert_true(v && v->kind == BYOCL_JSON_NULL);
    }
    int cores = (int)json_number(machine, "cores");
    char line[512];
    FMT(line, "\n  machine: %s, %d core%s\n\n", base_json_get(machine, "cpu")->string, cores,
        cores == 1 ? "" : "s");
    ts_assert_contains(out, line);
    base_json_free(j);
    free(out);
    free(err);
}

/* --suggest names exactly the regions that ran slower offloaded in this run's JSON, and
 * --offload-profile with that JSON keeps them on the host: the next table lists as many
 * regions as ran faster. */
static void test_suggest_and_profile(void **state)
{
    (void)state;
    char args[4096], json_path[300];
    FMT(json_path, "%s/suggest.json", dir);
    FMT(args, "bench '%s' --runs 2 --warmup 0 --cache-dir '%s' --quiet --suggest --json '%s'",
        model, caches, json_path);
    char *out = ts_cli_expect(args, 0, "");
    byocl_json *j = read_json(json_path);
    const byocl_json *regions = base_json_get(j, "regions");
    int slower = 0;
    for (int r = 0; r < regions->n; r++) {
        const byocl_json *reg = &regions->items[r];
        double host = json_number(reg, "host_ms"), off = json_number(reg, "offloaded_ms");
        char line[200];
        FMT(line, "  %s ran slower offloaded (%.3f ms against %.3f ms on the host)\n",
            base_json_get(reg, "name")->string, off, host);
        if (off > host) {
            slower++;
            ts_assert_contains(out, line);
        } else {
            assert_null(strstr(out, line));
        }
    }
    if (slower == 0)
        ts_assert_contains(out, "\n  suggestions: none, every region ran faster offloaded\n");
    else {
        FMT(args, "  to keep %s on the host: byocl run %s --target opencl --offload-profile %s\n",
            slower == 1 ? "it" : "them", model, json_path);
        ts_assert_contains(out, args);
    }
    free(out);
    FMT(args, "bench '%s' --runs 1 --warmup 0 --cache-dir '%s' --quiet --offload-profile '%s'",
        model, caches, json_path);
    out = ts_cli_expect(args, 0, "");
    int listed = 0;
    for (const char *at = out; (at = strstr(at, "\n  opencl_main_")) != NULL; at++)
        listed++;
    assert_int_equal(listed, regions->n - slower);
    free(out);
    base_json_free(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_unwritable_report),
        cmocka_unit_test(test_suggest_and_profile),
        cmocka_unit_test(test_table_json_and_progress),
        cmocka_unit_test(test_quiet),
        cmocka_unit_test(test_machine_one_cpu),
    };
    return cmocka_run_group_tests(tests, set_up, tear_down);
}
