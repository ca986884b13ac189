/* The byocl CLI's shared pieces: the command table entry, flag parsing, help text, model
 * loading and error printing. Each command lives in its own cmd_<name>.c and exports one
 * `const cli_command cli_cmd_<name>`; byocl.c dispatches. Commands use only the public API. */
#ifndef BYOCL_CLI_H
#define BYOCL_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "byocl/byocl.h"
#include "byocl/frontend.h"
#include "byocl/runtime.h"

/* Exit codes. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_FAILURE = 1, CLI_EXIT_USAGE = 2 };

typedef enum cli_arg {
    CLI_ARG_NONE,     /* --flag                         */
    CLI_ARG_REQUIRED, /* --flag VALUE or --flag=VALUE   */
    CLI_ARG_OPTIONAL  /* --flag or --flag=VALUE         */
} cli_arg;

typedef struct cli_option {
    const char *name;    /* long name without dashes; NULL ends a table */
    char short_name;     /* 'o' for -o, or 0 */
    cli_arg arg;
    bool repeatable;     /* may be given several times (else twice is a usage error) */
    const char *metavar; /* how help shows the value: "FILE.npz" */
    const char *help;    /* one line */
} cli_option;

#define CLI_MAX_OPTIONS 24
#define CLI_MAX_POSITIONAL 4

/* What the command line said, pointing into argv. */
typedef struct cli_args {
    int n_positional;
    const char *positional[CLI_MAX_POSITIONAL];
    int count[CLI_MAX_OPTIONS];  /* per option of the command's table */
    const char **values[CLI_MAX_OPTIONS]; /* per option: its values in order (NULL entries
                                             for an optional value not given) */
} cli_args;

typedef struct cli_command {
    const char *name;
    const char *summary;     /* one line, shown by `byocl --help` */
    const char *args_usage;  /* "MODEL [options]" */
    int min_positional, max_positional;
    const char *positional_names[CLI_MAX_POSITIONAL]; /* for "missing MODEL" */
    const char *description; /* paragraphs shown by `byocl CMD --help` */
    const cli_option *options;
    const char *examples;
    int (*run)(const struct cli_command *cmd, const cli_args *args);
} cli_command;

extern const cli_command cli_cmd_print, cli_cmd_run, cli_cmd_info, cli_cmd_ops;

/* What every command's help says about MODEL. */
#define CLI_MODEL_HELP                                                                       \
    "MODEL is builtin:NAME (`byocl info` lists them), a Relay text file, or an\n"            \
    ".onnx model (--shape sets the shape of an input with symbolic dimensions)."

/* Parses argv (after the command name). Returns CLI_EXIT_OK when the command should run,
 * -1 when --help was given (help printed to stdout), or CLI_EXIT_USAGE (message printed).
 * Free with cli_args_free in every case. */
int cli_parse(const cli_command *cmd, int argc, char **argv, cli_args *out);
void cli_args_free(cli_args *args);

/* Option lookups by long name. */
int cli_count(const cli_command *cmd, const cli_args *args, const char *name);
/* Value k of the option (0 = first), or NULL. */
const char *cli_value_at(const cli_command *cmd, const cli_args *args, const char *name,
                         int k);
/* Every value given (cli_count of them), or NULL when none. */
const char *const *cli_values(const cli_command *cmd, const cli_args *args, const char *name);
/* The last value given, or `fallback` when the option is absent or has no value. */
const char *cli_value(const cli_command *cmd, const cli_args *args, const char *name,
                      const char *fallback);

void cli_print_help(const cli_command *cmd, FILE *f);

/* Sends the messages of cli_usage_error, cli_fail and cli_fail_error to f (NULL: stderr
 * again); returns where they went before. */
FILE *cli_set_error_stream(FILE *f);
/* "byocl: error: MSG; see 'byocl CMD --help'" on stderr; returns CLI_EXIT_USAGE.
 * `cmd` NULL points at `byocl --help`. */
int cli_usage_error(const cli_command *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* "byocl: error: MSG" on stderr; returns CLI_EXIT_FAILURE. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints a library error: the text parser's errors exactly as it wrote them
 * ("file:line:col: error: ..."), anything else as "byocl: error: MSG". Returns
 * CLI_EXIT_FAILURE. */
int cli_fail_error(const byocl_error *err);

/* Loads MODEL with the tensors of `params_path` (an .npz, may be NULL) through
 * byocl_load_model. Returns CLI_EXIT_OK, or CLI_EXIT_FAILURE with the error printed. */
int cli_load_model(const char *spec, const char *params_path, byocl_module **out);

/* `--shape NAME=DIMS` for commands that load ONNX models. */
#define CLI_OPTION_SHAPE                                                                     \
    {"shape", 0, CLI_ARG_REQUIRED, true, "NAME=DIMS",                                      \
     "shape of an ONNX input with symbolic dims, e.g. data=1x3x224x224 (repeatable)"}
/* cli_load_model with the command's --params and --shape (each when the command has it).
 * Returns CLI_EXIT_OK, CLI_EXIT_USAGE for a malformed --shape, or CLI_EXIT_FAILURE, with
 * the error printed. */
int cli_load_model_args(const cli_command *cmd, const cli_args *args, const char *spec,
                        byocl_module **out);

/* Creates `dir` and its missing parents. Returns CLI_EXIT_OK or CLI_EXIT_FAILURE (printed). */
int cli_make_dirs(const char *dir);
/* Checks, creating nothing, that cli_make_dirs(dir) will not meet a file in the way:
 * commands call it before long work whose results go there. Same returns. */
int cli_check_dirs(const char *dir);

double cli_seconds(void);
/* A count from `min` to `max` written with digits only (no sign, no spaces). */
bool cli_parse_count(const char *s, int min, int max, int *out);

#endif
