/* byocl run: runs a model on an executor and summarizes (or writes) its outputs. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* The executors `--executor` accepts; only the reference executor exists so far. */
static const char *const executors[] = {"ref"};
#define N_EXECUTORS ((int)(sizeof executors / sizeof executors[0]))

/* Values of integer inputs that --random-inputs draws: [0, RANDOM_INT_HI). */
#define RANDOM_INT_HI 10
/* How many leading values the summary shows. */
#define SUMMARY_FIRST 5

static const cli_option run_options[] = {
    {"executor", 0, CLI_ARG_REQUIRED, false, "NAME", "executor to run on: ref (the default)"},
    {"input", 0, CLI_ARG_REQUIRED, true, "NAME=FILE.npy",
     "the value of parameter NAME (repeatable)"},
    {"params", 0, CLI_ARG_REQUIRED, false, "FILE.npz",
     "tensors by name: @main's parameters to bind, the text's meta constants"},
    {"random-inputs", 0, CLI_ARG_OPTIONAL, false, "SEED",
     "fill the parameters still unbound with random values"},
    {"output-dir", 0, CLI_ARG_REQUIRED, false, "DIR",
     "write output i to DIR/output_<i>.npy (DIR is created)"},
    {"fn", 0, CLI_ARG_REQUIRED, false, "NAME", "run function @NAME instead of @main"},
    {NULL, 0, CLI_ARG_NONE, false, NULL, NULL},
};

static bool parse_seed(const char *s, uint64_t *out)
{
    if (!s) {
        *out = 0;
        return true;
    }
    if (*s < '0' || *s > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > UINT32_MAX)
        return false;
    *out = v;
    return true;
}

/* "a, b, c" of the parameters of fn whose slot in `bound` is NULL (all when bound is NULL).
 * Malloc'ed; NULL when out of memory. */
static char *param_list(const byocl_function *fn, byocl_tensor *const *bound)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    const char *sep = "";
    for (int k = 0; k < byocl_function_num_params(fn); k++) {
        if (bound && bound[k])
            continue;
        fprintf(f, "%s%s", sep, byocl_node_name(fn, byocl_function_param(fn, k)));
        sep = ", ";
    }
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Reads one --input NAME=FILE.npy into its parameter's slot, checking dtype and shape. */
static int read_input(const byocl_function *fn, const char *arg, byocl_tensor **slots)
{
    const char *eq = strchr(arg, '=');
    int name_len = (int)(eq - arg);
    char name[512];
    snprintf(name, sizeof name, "%.*s", name_len, arg);
    const char *file = eq + 1;
    int k;
    for (k = 0; k < byocl_function_num_params(fn); k++)
        if (strcmp(byocl_node_name(fn, byocl_function_param(fn, k)), name) == 0)
            break;
    if (k == byocl_function_num_params(fn)) {
        char *list = param_list(fn, NULL);
        int rc = cli_fail("--input %s: @%s has no parameter '%s' (its parameters: %s)", arg,
                          byocl_function_name(fn), name,
                          list && *list ? list : "none");
        free(list);
        return rc;
    }
    if (slots[k])
        return cli_fail("--input: parameter '%s' given twice", name);
    const byocl_type *want = byocl_node_type(fn, byocl_function_param(fn, k));
    if (want->kind != BYOCL_TYPE_TENSOR)
        return cli_fail("--input %s: parameter '%s' is a tuple; only tensor inputs can be "
                        "read from files",
                        arg, name);
    byocl_error err;
    byocl_tensor *t;
    if (byocl_tensor_read_file(file, &t, &err) != BYOCL_OK)
        return cli_fail_error(&err);
    if (byocl_tensor_dtype(t) != want->dtype ||
        !byocl_shape_equal(byocl_tensor_shape(t), &want->shape)) {
        char want_s[256], got_s[256];
        byocl_type got = byocl_type_tensor(byocl_tensor_dtype(t), byocl_tensor_shape(t)->rank,
                                           byocl_tensor_shape(t)->dims);
        byocl_tensor_unref(t);
        return cli_fail("input '%s': expected %s, got %s from %s", name,
                        byocl_type_str(want, want_s, sizeof want_s),
                        byocl_type_str(&got, got_s, sizeof got_s), file);
    }
    slots[k] = t;
    return CLI_EXIT_OK;
}

/* Parameter k gets seed SEED * 2^32 + k: the same command line gives the same values. */
static int fill_random(const byocl_function *fn, uint64_t seed, byocl_tensor **slots)
{
    for (int k = 0; k < byocl_function_num_params(fn); k++) {
        if (slots[k])
            continue;
        const byocl_type *type = byocl_node_type(fn, byocl_function_param(fn, k));
        const char *name = byocl_node_name(fn, byocl_function_param(fn, k));
        if (type->kind != BYOCL_TYPE_TENSOR)
            return cli_fail("--random-inputs: parameter '%s' is a tuple; only tensor "
                            "parameters can be filled",
                            name);
        byocl_error err;
        byocl_tensor *t = byocl_tensor_new(type->dtype, &type->shape, &err);
        if (!t) {
            byocl_error_prefix(&err, "parameter '%s': ", name);
            return cli_fail_error(&err);
        }
        double hi = byocl_dtype_is_float(type->dtype) ? 1.0 : RANDOM_INT_HI;
        byocl_tensor_fill_random(t, (seed << 32) + (uint64_t)k, 0.0, hi);
        slots[k] = t;
    }
    return CLI_EXIT_OK;
}

static void print_summary(int index, const byocl_tensor *t)
{
    char type_s[256];
    byocl_type type = byocl_type_tensor(byocl_tensor_dtype(t), byocl_tensor_shape(t)->rank,
                                        byocl_tensor_shape(t)->dims);
    printf("output %d: %s\n", index, byocl_type_str(&type, type_s, sizeof type_s));
    int64_t n = byocl_tensor_numel(t);
    if (n == 0) {
        printf("  (no elements)\n");
        return;
    }
    double lo = byocl_tensor_get(t, 0), hi = lo, sum = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = byocl_tensor_get(t, i);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        sum += v;
    }
    printf("  min %.6g  max %.6g  mean %.6g  first [", lo, hi, sum / (double)n);
    for (int64_t i = 0; i < n && i < SUMMARY_FIRST; i++)
        printf("%s%.6g", i ? ", " : "", byocl_tensor_get(t, i));
    printf("%s]\n", n > SUMMARY_FIRST ? ", ..." : "");
}

static int write_outputs(const char *dir, byocl_tensor *const *outputs, int n)
{
    int rc = cli_make_dirs(dir);
    for (int i = 0; i < n && rc == CLI_EXIT_OK; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/output_%d.npy", dir, i);
        byocl_error err;
        if (byocl_npy_write(path, outputs[i], &err) != BYOCL_OK)
            rc = cli_fail_error(&err);
        else
            printf("wrote %s\n", path);
    }
    return rc;
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Binds every parameter of fn, runs it and reports. */
static int run_function(const cli_command *cmd, const cli_args *args, const char *spec,
                        const byocl_module *m, const byocl_function *fn, bool random,
                        uint64_t seed)
{
    int n_params = byocl_function_num_params(fn);
    byocl_tensor **inputs = calloc((size_t)n_params + 1, sizeof *inputs);
    if (!inputs)
        return cli_fail("out of memory");
    int rc = CLI_EXIT_OK;
    for (int i = 0; i < cli_count(cmd, args, "input") && rc == CLI_EXIT_OK; i++)
        rc = read_input(fn, cli_value_at(cmd, args, "input", i), inputs);
    if (rc == CLI_EXIT_OK && random)
        rc = fill_random(fn, seed, inputs);
    if (rc == CLI_EXIT_OK) {
        int n_unbound = 0;
        for (int k = 0; k < n_params; k++)
            n_unbound += inputs[k] == NULL;
        if (n_unbound > 0) {
            char *list = param_list(fn, inputs);
            rc = cli_fail("@%s of %s has %d unbound parameter%s: %s; give each with --input "
                          "NAME=FILE.npy, bind them with --params FILE.npz, or pass "
                          "--random-inputs",
                          byocl_function_name(fn), spec, n_unbound, n_unbound == 1 ? "" : "s",
                          list ? list : "?");
            free(list);
        }
    }
    byocl_tensor **outputs = NULL;
    int n_outputs = 0;
    if (rc == CLI_EXIT_OK) {
        byocl_error err;
        double t0 = seconds_now();
        byocl_status st = byocl_reference_run(m, byocl_function_name(fn), inputs, n_params,
                                              &outputs, &n_outputs, &err);
        double elapsed = seconds_now() - t0;
        if (st != BYOCL_OK) {
            rc = cli_fail_error(&err);
        } else {
            printf("ran @%s of %s on the ref executor in %.2f ms\n", byocl_function_name(fn),
                   spec, elapsed * 1e3);
            for (int i = 0; i < n_outputs; i++)
                print_summary(i, outputs[i]);
            const char *dir = cli_value(cmd, args, "output-dir", NULL);
            if (dir)
                rc = write_outputs(dir, outputs, n_outputs);
        }
    }
    if (outputs)
        byocl_tensors_free(outputs, n_outputs);
    for (int k = 0; k < n_params; k++)
        byocl_tensor_unref(inputs[k]);
    free(inputs);
    return rc;
}

static int run_run(const cli_command *cmd, const cli_args *args)
{
    const char *executor = cli_value(cmd, args, "executor", "ref");
    int e;
    for (e = 0; e < N_EXECUTORS; e++)
        if (strcmp(executors[e], executor) == 0)
            break;
    if (e == N_EXECUTORS)
        return cli_usage_error(cmd, "unknown executor '%s' (known: ref)", executor);
    bool random = cli_count(cmd, args, "random-inputs") > 0;
    uint64_t seed = 0;
    if (random && !parse_seed(cli_value(cmd, args, "random-inputs", NULL), &seed))
        return cli_usage_error(cmd, "--random-inputs=%s: SEED must be an integer from 0 to %u",
                               cli_value(cmd, args, "random-inputs", ""), UINT32_MAX);
    for (int i = 0; i < cli_count(cmd, args, "input"); i++) {
        const char *v = cli_value_at(cmd, args, "input", i);
        const char *eq = strchr(v, '=');
        if (!eq || eq == v || eq[1] == '\0')
            return cli_usage_error(cmd, "--input %s: expected NAME=FILE.npy", v);
    }

    const char *spec = args->positional[0];
    byocl_module *m;
    int rc = cli_load_model(spec, cli_value(cmd, args, "params", NULL), &m);
    if (rc != CLI_EXIT_OK)
        return rc;
    const char *fn_name = cli_value(cmd, args, "fn", "main");
    const byocl_function *fn = byocl_module_find(m, fn_name);
    if (!fn)
        rc = cli_fail("%s has no function @%s", spec, fn_name);
    else
        rc = run_function(cmd, args, spec, m, fn, random, seed);
    byocl_module_free(m);
    return rc;
}

const cli_command cli_cmd_run = {
    .name = "run",
    .summary = "run a model and summarize its outputs",
    .args_usage = "MODEL [--executor ref] [--input NAME=FILE.npy]... [--params FILE.npz]\n"
                  "                 [--random-inputs[=SEED]] [--output-dir DIR] [--fn NAME]",
    .min_positional = 1,
    .max_positional = 1,
    .positional_names = {"MODEL"},
    .description =
        "Runs @main of MODEL (or --fn NAME) on the reference executor, which computes\n"
        "every op with plain C loops, and prints each output's type, min, max, mean and\n"
        "first values, and the run time.\n"
        "\n"
        "Every parameter must be bound: by --input (an .npy of the parameter's dtype and\n"
        "shape), by name from --params, or by --random-inputs, which fills each parameter\n"
        "still unbound from seed SEED * 2^32 + its index (SEED defaults to 0): floats\n"
        "uniform in [0, 1), integers in [0, 10).\n"
        "\n" CLI_MODEL_HELP "\n",
    .options = run_options,
    .examples = "  byocl run builtin:resnet18 --random-inputs\n"
                "  byocl run builtin:seed --random-inputs=7 --output-dir out\n"
                "  byocl run model.relay --params model.npz --input data=image.npy\n",
    .run = run_run,
};
