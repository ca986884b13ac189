/* Flag parsing, help text, model loading and error printing shared by the commands. */
#include "cli.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static int find_long(const cli_command *cmd, const char *name, size_t len)
{
    for (int i = 0; cmd->options[i].name; i++)
        if (strlen(cmd->options[i].name) == len && strncmp(cmd->options[i].name, name, len) == 0)
            return i;
    return -1;
}

static int find_short(const cli_command *cmd, char c)
{
    for (int i = 0; cmd->options[i].name; i++)
        if (cmd->options[i].short_name && cmd->options[i].short_name == c)
            return i;
    return -1;
}

/* How help and errors spell an option: "--input NAME=FILE", "--random-inputs[=SEED]". */
static void option_spelling(const cli_option *o, bool with_short, char *buf, size_t len)
{
    int n = 0;
    if (with_short && o->short_name)
        n = snprintf(buf, len, "-%c, ", o->short_name);
    if (n < 0 || (size_t)n >= len)
        return;
    switch (o->arg) {
    case CLI_ARG_NONE:
        snprintf(buf + n, len - (size_t)n, "--%s", o->name);
        break;
    case CLI_ARG_REQUIRED:
        snprintf(buf + n, len - (size_t)n, "--%s %s", o->name, o->metavar);
        break;
    case CLI_ARG_OPTIONAL:
        snprintf(buf + n, len - (size_t)n, "--%s[=%s]", o->name, o->metavar);
        break;
    }
}

/* Records one occurrence of option `k` with `value` (may be NULL). */
static int add_value(const cli_command *cmd, int argc, cli_args *out, int k, const char *value)
{
    assert(k < CLI_MAX_OPTIONS); /* a command declares at most CLI_MAX_OPTIONS flags */
    const cli_option *o = &cmd->options[k];
    if (out->count[k] > 0 && !o->repeatable)
        return cli_usage_error(cmd, "flag '--%s' given twice", o->name);
    if (!out->values[k]) {
        out->values[k] = calloc((size_t)argc + 1, sizeof *out->values[k]);
        if (!out->values[k]) {
            fprintf(stderr, "byocl: error: out of memory\n");
            return CLI_EXIT_FAILURE;
        }
    }
    out->values[k][out->count[k]++] = value;
    return CLI_EXIT_OK;
}

int cli_parse(const cli_command *cmd, int argc, char **argv, cli_args *out)
{
    memset(out, 0, sizeof *out);
    assert(cmd->max_positional <= CLI_MAX_POSITIONAL);
    bool only_positional = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        bool is_flag = !only_positional && a[0] == '-' && a[1] != '\0';
        if (is_flag && strcmp(a, "--") == 0) {
            only_positional = true;
            continue;
        }
        if (!is_flag) {
            if (out->n_positional >= cmd->max_positional)
                return cli_usage_error(cmd, "unexpected argument '%s'", a);
            out->positional[out->n_positional++] = a;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            cli_print_help(cmd, stdout);
            return -1;
        }
        int k;
        const char *value = NULL;
        bool has_inline_value = false;
        if (a[1] == '-') {
            const char *name = a + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            k = find_long(cmd, name, len);
            if (k < 0)
                return cli_usage_error(cmd, "unknown flag '--%.*s'", (int)len, name);
            if (eq) {
                value = eq + 1;
                has_inline_value = true;
            }
        } else {
            k = a[2] == '\0' ? find_short(cmd, a[1]) : -1;
            if (k < 0)
                return cli_usage_error(cmd, "unknown flag '%s'", a);
        }
        const cli_option *o = &cmd->options[k];
        char spelling[128];
        option_spelling(o, false, spelling, sizeof spelling);
        if (o->arg == CLI_ARG_NONE && has_inline_value)
            return cli_usage_error(cmd, "flag '--%s' takes no value", o->name);
        if (o->arg == CLI_ARG_REQUIRED && !has_inline_value) {
            if (i + 1 >= argc)
                return cli_usage_error(cmd, "flag '%s' needs a value (%s)", a, spelling);
            value = argv[++i];
        }
        if (o->arg == CLI_ARG_REQUIRED && value[0] == '\0')
            return cli_usage_error(cmd, "flag '%s' needs a value (%s)", a, spelling);
        int rc = add_value(cmd, argc, out, k, value);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    if (out->n_positional < cmd->min_positional)
        return cli_usage_error(cmd, "missing %s", cmd->positional_names[out->n_positional]);
    return CLI_EXIT_OK;
}

void cli_args_free(cli_args *args)
{
    for (int k = 0; k < CLI_MAX_OPTIONS; k++) {
        free(args->values[k]);
        args->values[k] = NULL;
    }
}

static int option_index(const cli_command *cmd, const char *name)
{
    int k = find_long(cmd, name, strlen(name));
    if (k < 0) { /* a typo in a command's own code, not user input */
        fprintf(stderr, "byocl: internal error: command '%s' has no option '%s'\n", cmd->name,
                name);
        abort();
    }
    return k;
}

int cli_count(const cli_command *cmd, const cli_args *args, const char *name)
{
    return args->count[option_index(cmd, name)];
}

const char *cli_value_at(const cli_command *cmd, const cli_args *args, const char *name, int k)
{
    int i = option_index(cmd, name);
    return k >= 0 && k < args->count[i] ? args->values[i][k] : NULL;
}

const char *const *cli_values(const cli_command *cmd, const cli_args *args, const char *name)
{
    int i = option_index(cmd, name);
    return args->count[i] > 0 ? args->values[i] : NULL;
}

const char *cli_value(const cli_command *cmd, const cli_args *args, const char *name,
                      const char *fallback)
{
    int n = cli_count(cmd, args, name);
    const char *v = n > 0 ? cli_value_at(cmd, args, name, n - 1) : NULL;
    return v ? v : fallback;
}

void cli_print_help(const cli_command *cmd, FILE *f)
{
    fprintf(f, "Usage: byocl %s%s%s\n\n%s", cmd->name, *cmd->args_usage ? " " : "",
            cmd->args_usage, cmd->description);
    char spelling[128];
    int width = (int)strlen("-h, --help");
    for (int i = 0; cmd->options[i].name; i++) {
        option_spelling(&cmd->options[i], true, spelling, sizeof spelling);
        int w = (int)strlen(spelling) + (cmd->options[i].short_name ? 0 : 4);
        if (w > width)
            width = w;
    }
    fprintf(f, "\nOptions:\n");
    for (int i = 0; cmd->options[i].name; i++) {
        const cli_option *o = &cmd->options[i];
        option_spelling(o, true, spelling, sizeof spelling);
        fprintf(f, "  %s%-*s  %s\n", o->short_name ? "" : "    ",
                width - (o->short_name ? 0 : 4), spelling, o->help);
    }
    fprintf(f, "  %-*s  %s\n", width, "-h, --help", "show this help and exit");
    if (cmd->examples)
        fprintf(f, "\nExamples:\n%s", cmd->examples);
}

int cli_usage_error(const cli_command *cmd, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (cmd)
        fprintf(stderr, "byocl: error: %s; see 'byocl %s --help'\n", msg, cmd->name);
    else
        fprintf(stderr, "byocl: error: %s; see 'byocl --help'\n", msg);
    return CLI_EXIT_USAGE;
}

int cli_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("byocl: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return CLI_EXIT_FAILURE;
}

/* Whether `msg` starts "PATH:LINE:COL: error: ", as the text parser writes its messages. */
static bool is_located_message(const char *msg)
{
    const char *p = strstr(msg, ": error: ");
    if (!p)
        return false;
    for (int field = 0; field < 2; field++) { /* COL, then LINE, each after a ':' */
        const char *end = p;
        while (p > msg && isdigit((unsigned char)p[-1]))
            p--;
        if (p == end || p == msg || p[-1] != ':')
            return false;
        p--;
    }
    return p > msg;
}

int cli_fail_error(const byocl_error *err)
{
    /* The parser's messages already read "file:line:col: error: ..." (as compilers print
     * them, so that editors can jump there); they go out untouched. */
    if (err->status == BYOCL_ERR_PARSE || is_located_message(err->msg))
        fprintf(stderr, "%s\n", err->msg);
    else
        fprintf(stderr, "byocl: error: %s\n", err->msg);
    return CLI_EXIT_FAILURE;
}

/* Loads `spec` with the tensors of `params_path` (may be NULL) and input shapes. */
static int load_model(const char *spec, const char *params_path, const byocl_input_shape *shapes,
                      int n_shapes, byocl_module **out)
{
    byocl_error err;
    byocl_params *params = NULL;
    *out = NULL;
    if (params_path && byocl_npz_read(params_path, &params, &err) != BYOCL_OK)
        return cli_fail_error(&err);
    byocl_load_options opt = {.params = params, .shapes = shapes, .n_shapes = n_shapes};
    byocl_status st = byocl_load_model_opts(spec, &opt, out, &err);
    byocl_params_free(params);
    return st == BYOCL_OK ? CLI_EXIT_OK : cli_fail_error(&err);
}

int cli_load_model(const char *spec, const char *params_path, byocl_module **out)
{
    return load_model(spec, params_path, NULL, 0, out);
}

int cli_load_model_args(const cli_command *cmd, const cli_args *args, const char *spec,
                        byocl_module **out)
{
    *out = NULL;
    bool has_params = find_long(cmd, "params", strlen("params")) >= 0;
    int n = find_long(cmd, "shape", strlen("shape")) >= 0 ? cli_count(cmd, args, "shape") : 0;
    byocl_input_shape *shapes = calloc((size_t)n + 1, sizeof *shapes);
    if (!shapes)
        return cli_fail("out of memory");
    int rc = CLI_EXIT_OK;
    for (int i = 0; i < n && rc == CLI_EXIT_OK; i++) {
        byocl_error err;
        char *name;
        if (byocl_input_shape_parse(cli_value_at(cmd, args, "shape", i), &name, &shapes[i].shape,
                                    &err) != BYOCL_OK)
            rc = cli_usage_error(cmd, "--shape %s", err.msg);
        shapes[i].name = name;
    }
    if (rc == CLI_EXIT_OK)
        rc = load_model(spec, has_params ? cli_value(cmd, args, "params", NULL) : NULL, shapes,
                        n, out);
    for (int i = 0; i < n; i++)
        free((char *)shapes[i].name);
    free(shapes);
    return rc;
}

/* Walks the prefixes of dir that end at a '/', then dir: each must be a directory;
 * `create` makes the missing ones, otherwise the walk stops at the first missing one. */
static int walk_dirs(const char *dir, bool create)
{
    size_t len = strlen(dir);
    char *path = malloc(len + 1);
    if (!path)
        return cli_fail("out of memory");
    memcpy(path, dir, len + 1);
    int rc = CLI_EXIT_OK;
    bool missing = false; /* without create: what follows is made later */
    for (size_t i = 1; i <= len && rc == CLI_EXIT_OK && !missing; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        char saved = path[i];
        path[i] = '\0';
        struct stat st;
        missing = !create && stat(path, &st) != 0;
        if (create && mkdir(path, 0777) != 0 && errno != EEXIST)
            rc = cli_fail("cannot create directory %s: %s", path, strerror(errno));
        else if (!missing && (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)))
            rc = cli_fail("cannot create directory %s: a file of that name exists", path);
        path[i] = saved;
    }
    free(path);
    return rc;
}

int cli_make_dirs(const char *dir) { return walk_dirs(dir, true); }

int cli_check_dirs(const char *dir) { return walk_dirs(dir, false); }

/* ------------------------------------------ inputs and outputs of a run (run, run-stages) */

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

/* Reads one --input NAME=FILE into its slot, checking dtype and shape. */
static int read_input(cli_inputs *in, const char *arg)
{
    const char *eq = strchr(arg, '=');
    char name[512];
    snprintf(name, sizeof name, "%.*s", (int)(eq - arg), arg);
    const char *file = eq + 1;
    int k;
    for (k = 0; k < in->n; k++)
        if (strcmp(in->names[k], name) == 0)
            break;
    if (k == in->n) { /* an ONNX input by its own name ("input.1" is %input_1) */
        char relay[512];
        byocl_onnx_relay_name(name, relay, sizeof relay);
        for (k = 0; k < in->n; k++)
            if (strcmp(in->names[k], relay) == 0)
                break;
    }
    if (k == in->n) {
        int count;
        char *list = cli_inputs_list(in, true, &count);
        int rc = cli_fail("--input %s: %s has no %s '%s' (its %ss: %s)", arg, in->owner,
                          in->noun, name, in->noun, list && *list ? list : "none");
        free(list);
        return rc;
    }
    if (in->values[k])
        return cli_fail("--input: %s '%s' given twice", in->noun, name);
    const byocl_type *want = in->types[k];
    if (want->kind != BYOCL_TYPE_TENSOR)
        return cli_fail("--input %s: %s '%s' is a tuple; only tensor inputs can be read from "
                        "files",
                        arg, in->noun, name);
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
    in->values[k] = t;
    return CLI_EXIT_OK;
}

/* Value k gets seed SEED * 2^32 + k: the same command line gives the same values. */
static int fill_random(cli_inputs *in, uint64_t seed)
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
        rc = fill_random(in, seed);
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

double cli_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

bool cli_parse_count(const char *s, int min, int max, int *out)
{
    if (!s || *s < '0' || *s > '9')
        return false;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return false;
    *out = (int)v;
    return true;
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
