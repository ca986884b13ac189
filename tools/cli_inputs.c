/* The inputs and outputs of a run (run, run-stages): named, typed values bound from
 * --input files, --random-inputs and --params, their summaries, --output-dir. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "byocl/tensor_io.h"
#include "cli_inputs.h"


/* Values of integer inputs that --random-inputs draws: [0, RANDOM_INT_HI). */
#define RANDOM_INT_HI 10
/* How many leading values the summary shows. */
#define SUMMARY_FIRST 5

int cli_inputs_init(cli_inputs *in, int n, const char *owner, const char *noun)
{
    memset(in, 0, sizeof *in);
    snprintf(in->owner, sizeof in->owner, "%s", owner);
    in->noun = noun;
    in->n = n;
    size_t slots = (size_t)n + 1;
    in->names = calloc(slots, sizeof *in->names);
    in->types = calloc(slots, sizeof *in->types);
    in->values = calloc(slots, sizeof *in->values);
    if (!in->names || !in->types || !in->values)
        return cli_fail("out of memory");
    return CLI_EXIT_OK;
}

int cli_inputs_of_function(cli_inputs *in, const byocl_function *fn)
{
    char owner[256];
    snprintf(owner, sizeof owner, "@%s", byocl_function_name(fn));
    int n = byocl_function_num_params(fn);
    int rc = cli_inputs_init(in, n, owner, "parameter");
    for (int k = 0; k < n && rc == CLI_EXIT_OK; k++) {
        in->names[k] = byocl_node_name(fn, byocl_function_param(fn, k));
        in->types[k] = byocl_node_type(fn, byocl_function_param(fn, k));
    }
    return rc;
}

void cli_inputs_free(cli_inputs *in)
{
    for (int k = 0; in->values && k < in->n; k++)
        byocl_tensor_unref(in->values[k]);
    free(in->names);
    free(in->types);
    free(in->values);
    memset(in, 0, sizeof *in);
}

int cli_executor_with_inputs(byocl_compiled *c, const cli_inputs *in, byocl_executor **out)
{
    byocl_error err;
    *out = NULL;
    if (byocl_executor_new(c, out, &err) != BYOCL_OK)
        return cli_fail_error(&err);
    for (int k = 0; k < in->n; k++)
        if (byocl_executor_set_input(*out, in->names[k], in->values[k], &err) != BYOCL_OK)
            return cli_fail_error(&err);
    return CLI_EXIT_OK;
}

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

int cli_check_input_flags(const cli_command *cmd, const cli_args *args, bool *random,
                          uint64_t *seed)
{
    *random = cli_count(cmd, args, "random-inputs") > 0;
    *seed = 0;
    if (*random && !parse_seed(cli_value(cmd, args, "random-inputs", NULL), seed))
        return cli_usage_error(cmd, "--random-inputs=%s: SEED must be an integer from 0 to %u",
                               cli_value(cmd, args, "random-inputs", ""), UINT32_MAX);
    for (int i = 0; i < cli_count(cmd, args, "input"); i++) {
        const char *v = cli_value_at(cmd, args, "input", i);
        const char *eq = strchr(v, '=');
        if (!eq || eq == v || eq[1] == '\0')
            return cli_usage_error(cmd, "--input %s: expected NAME=FILE", v);
    }
    return CLI_EXIT_OK;
}

char *cli_inputs_list(const cli_inputs *in, bool all, int *count)
{
    char *buf = NULL;
    size_t len = 0;
    *count = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    for (int k = 0; k < in->n; k++) {
        if (!all && in->values[k])
            continue;
        fprintf(f, "%s%s", *count ? ", " : "", in->names[k]);
        ++*count;
    }
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* The slot of input `name` (or of the ONNX input of that name: "input.1" is %input_1), or
 * -1. */
static int find_input(const cli_inputs *in, const char *name)
{
    for (int k = 0; k < in->n; k++)
        if (strcmp(in->names[k], name) == 0)
            return k;
    char relay[512];
    byocl_onnx_relay_name(name, relay, sizeof relay);
    for (int k = 0; k < in->n; k++)
        if (strcmp(in->names[k], relay) == 0)
            return k;
    return -1;
}

/* "--input NAME=FILE: @main has no parameter 'NAME' (its parameters: a, b)". */
static int fail_no_input(const cli_inputs *in, const char *where, const char *name)
{
    int count;
    char *list = cli_inputs_list(in, true, &count);
    int rc = cli_fail("%s: %s has no %s '%s' (its %ss: %s)", where, in->owner, in->noun, name,
                      in->noun, list && *list ? list : "none");
    free(list);
    return rc;
}

/* Binds t (a new reference taken) to slot k, checking dtype and shape: `where` starts the
 * messages, `file` names where t came from. */
static int bind_value(cli_inputs *in, int k, byocl_tensor *t, const char *where,
                      const char *file)
{
    const char *name = in->names[k];
    if (in->values[k])
        return cli_fail("%s: %s '%s' given twice", where, in->noun, name);
    const byocl_type *want = in->types[k];
    if (want->kind != BYOCL_TYPE_TENSOR)
        return cli_fail("%s: %s '%s' is a tuple; only tensor inputs can be read from files",
                        where, in->noun, name);
    if (byocl_tensor_dtype(t) != want->dtype ||
        !byocl_shape_equal(byocl_tensor_shape(t), &want->shape)) {
        char want_s[256], got_s[256];
        byocl_type got = byocl_type_tensor(byocl_tensor_dtype(t), byocl_tensor_shape(t)->rank,
                                           byocl_tensor_shape(t)->dims);
        return cli_fail("input '%s': expected %s, got %s from %s", name,
                        byocl_type_str(want, want_s, sizeof want_s),
                        byocl_type_str(&got, got_s, sizeof got_s), file);
    }
    in->values[k] = byocl_tensor_ref(t);
    return CLI_EXIT_OK;
}

/* Reads one --input NAME=FILE into its slot, checking dtype and shape. */
static int read_input(cli_inputs *in, const char *arg)
{
    const char *eq = strchr(arg, '=');
    char name[512], where[4200];
    snprintf(name, sizeof name, "%.*s", (int)(eq - arg), arg);
    snprintf(where, sizeof where, "--input %s", arg);
    const char *file = eq + 1;
    int k = find_input(in, name);
    if (k < 0)
        return fail_no_input(in, where, name);
    if (in->values[k])
        return cli_fail("--input: %s '%s' given twice", in->noun, name);
    byocl_error err;
    byocl_tensor *t;
    if (byocl_tensor_read_file(file, &t, &err) != BYOCL_OK)
        return cli_fail_error(&err);
    int rc = bind_value(in, k, t, where, file);
    byocl_tensor_unref(t);
    return rc;
}

int cli_bind_inputs_file(cli_inputs *in, const char *path)
{
    const char *ext = strrchr(path, '.');
    byocl_error err;
    if (ext && strcasecmp(ext, ".npz") == 0) {
        byocl_params *p;
        if (byocl_npz_read(path, &p, &err) != BYOCL_OK)
            return cli_fail_error(&err);
        int rc = CLI_EXIT_OK;
        for (int i = 0; i < byocl_params_count(p) && rc == CLI_EXIT_OK; i++) {
            int k = find_input(in, byocl_params_name(p, i));
            rc = k < 0 ? fail_no_input(in, path, byocl_params_name(p, i))
                       : bind_value(in, k, byocl_params_tensor(p, i), path, path);
        }
        byocl_params_free(p);
        return rc;
    }
    if (in->n != 1)
        return cli_fail("%s: %s has %d %ss; give them by name in an .npz file", path,
                        in->owner, in->n, in->noun);
    byocl_tensor *t;
    if (byocl_tensor_read_file(path, &t, &err) != BYOCL_OK)
        return cli_fail_error(&err);
    int rc = bind_value(in, 0, t, path, path);
    byocl_tensor_unref(t);
    return rc;
}

/* Value k gets seed SEED * 2^32 + k: the same command line gives the same values. */
int cli_fill_random_inputs(cli_inputs *in, uint64_t seed)
{
    for (int k = 0; k < in->n; k++) {
        if (in->values[k])
            continue;
        const byocl_type *type = in->types[k];
        if (type->kind != BYOCL_TYPE_TENSOR)
            return cli_fail("--random-inputs: %s '%s' is a tuple; only tensor %ss can be "
                            "filled",
                            in->noun, in->names[k], in->noun);
        byocl_error err;
        byocl_tensor *t = byocl_tensor_new(type->dtype, &type->shape, &err);
        if (!t) {
            byocl_error_prefix(&err, "%s '%s': ", in->noun, in->names[k]);
            return cli_fail_error(&err);
        }
        double hi = byocl_dtype_is_float(type->dtype) ? 1.0 : RANDOM_INT_HI;
        byocl_tensor_fill_random(t, (seed << 32) + (uint64_t)k, 0.0, hi);
        in->values[k] = t;
    }
    return CLI_EXIT_OK;
}

int cli_bind_inputs(const cli_command *cmd, const cli_args *args, cli_inputs *in, bool random,
                    uint64_t seed)
{
    int rc = CLI_EXIT_OK;
    for (int i = 0; i < cli_count(cmd, args, "input") && rc == CLI_EXIT_OK; i++)
        rc = read_input(in, cli_value_at(cmd, args, "input", i));
    if (rc == CLI_EXIT_OK && random)
        rc = cli_fill_random_inputs(in, seed);
    return rc;
}

void cli_print_summary(int index, const byocl_tensor *t)
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

int cli_write_outputs(const char *dir, byocl_tensor *const *outputs, int n)
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

int cli_bind_function_inputs(const cli_command *cmd, const cli_args *args, const char *spec,
                             const byocl_function *fn, bool random, uint64_t seed,
                             cli_inputs *in)
{
    /* A built-in model given no values runs on --random-inputs' (seed 0 since !random). */
    if (!random && strncmp(spec, "builtin:", 8) == 0 && cli_count(cmd, args, "input") == 0 &&
        cli_count(cmd, args, "params") == 0)
        random = true;
    int rc = cli_inputs_of_function(in, fn);
    if (rc == CLI_EXIT_OK)
        rc = cli_bind_inputs(cmd, args, in, random, seed);
    if (rc != CLI_EXIT_OK)
        return rc;
    int n_unbound;
    char *list = cli_inputs_list(in, false, &n_unbound);
    if (n_unbound > 0)
        rc = cli_fail("@%s of %s has %d unbound parameter%s: %s; give each with --input "
                      "NAME=FILE, bind them with --params FILE.npz, or pass --random-inputs",
                      byocl_function_name(fn), spec, n_unbound, n_unbound == 1 ? "" : "s",
                      list ? list : "?");
    free(list);
    return rc;
}
