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
            /* `--json --random-inputs` had written a file called "--random-inputs" */
            const char *eq = strchr(value, '=');
            if (value[0] == '-' && value[1] == '-' &&
                find_long(cmd, value + 2, eq ? (size_t)(eq - value - 2) : strlen(value + 2)) >= 0)
                return cli_usage_error(cmd,
                                       "flag '%s' needs a value (%s), not the flag '%s' (a value "
                                       "that starts with -- goes as --%s=VALUE)",
                                       a, spelling, value, o->name);
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

/* Where the error messages go: stderr, or what cli_set_error_stream gave. */
static FILE *error_stream;

static FILE *errors(void)
{
    return error_stream ? error_stream : stderr;
}

FILE *cli_set_error_stream(FILE *f)
{
    FILE *before = errors();
    error_stream = f;
    return before;
}

int cli_usage_error(const cli_command *cmd, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (cmd)
        fprintf(errors(), "byocl: error: %s; see 'byocl %s --help'\n", msg, cmd->name);
    else
        fprintf(errors(), "byocl: error: %s; see 'byocl --help'\n", msg);
    return CLI_EXIT_USAGE;
}

int cli_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("byocl: error: ", errors());
    vfprintf(errors(), fmt, ap);
    fputc('\n', errors());
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
        fprintf(errors(), "%s\n", err->msg);
    else
        fprintf(errors(), "byocl: error: %s\n", err->msg);
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
