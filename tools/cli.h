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

/* ------------------------------------------ inputs and outputs of a run (run, run-stages) */

/* The flags that give inputs and take outputs, shared so that they read the same. */
#define CLI_OPTION_INPUT                                                                     \
    {"input", 0, CLI_ARG_REQUIRED, true, "NAME=FILE",                                  \
     "the value of parameter NAME (repeatable): .npy, .npz (one member) or .pb"}
#define CLI_OPTION_RANDOM_INPUTS                                                             \
    {"random-inputs", 0, CLI_ARG_OPTIONAL, false, "SEED",                                  \
     "fill the parameters still unbound with random values"}
#define CLI_OPTION_OUTPUT_DIR                                                                \
    {"output-dir", 0, CLI_ARG_REQUIRED, false, "DIR",                                      \
     "write output i to DIR/output_<i>.npy (DIR is created)"}

/* Named, typed values to bind from the command line: a function's parameters, or the
 * inputs of a split model's stages. */
typedef struct cli_inputs {
    char owner[256];   /* how messages name their holder: "@main", "the pipeline" */
    const char *noun;  /* what messages call one: "parameter", "input" */
    int n;
    const char **names;       /* borrowed */
    const byocl_type **types; /* borrowed */
    byocl_tensor **values;    /* NULL until bound; references owned */
} cli_inputs;

/* Room for n values, all unbound; names and types to be filled by the caller. Returns
 * CLI_EXIT_OK or CLI_EXIT_FAILURE (printed). Free with cli_inputs_free in every case. */
int cli_inputs_init(cli_inputs *in, int n, const char *owner, const char *noun);
/* The same, for the parameters of fn ("@<name>", "parameter"). */
int cli_inputs_of_function(cli_inputs *in, const byocl_function *fn);
void cli_inputs_free(cli_inputs *in);
/* A new executor of c with every bound value of in set as its input. Returns CLI_EXIT_OK
 * or CLI_EXIT_FAILURE (printed); *out is the caller's to free in every case. */
int cli_executor_with_inputs(byocl_compiled *c, const cli_inputs *in, byocl_executor **out);

/* Checks --input NAME=FILE spellings and --random-inputs[=SEED] before anything is
 * loaded. Returns CLI_EXIT_OK or CLI_EXIT_USAGE (printed). */
int cli_check_input_flags(const cli_command *cmd, const cli_args *args, bool *random,
                          uint64_t *seed);
/* Binds each --input (dtype and shape checked), then, with `random`, every value still
 * unbound: value k from seed SEED * 2^32 + k, floats uniform in [0, 1), integers in
 * [0, 10). Returns CLI_EXIT_OK or CLI_EXIT_FAILURE (printed). */
int cli_bind_inputs(const cli_command *cmd, const cli_args *args, cli_inputs *in, bool random,
                    uint64_t seed);
/* "a, b, c": the names of the unbound values (all of them with `all`), malloc'ed (NULL
 * when out of memory); *count receives how many. */
char *cli_inputs_list(const cli_inputs *in, bool all, int *count);

/* cli_inputs_of_function, cli_bind_inputs, then a failure naming every parameter of fn (of
 * model `spec`) still unbound. A built-in model (`spec` builtin:NAME) given neither --input
 * nor --params binds as with --random-inputs (seed 0): its deterministic random inputs.
 * The command must have the options input and params. Free `in` with cli_inputs_free in
 * every case. */
int cli_bind_function_inputs(const cli_command *cmd, const cli_args *args, const char *spec,
                             const byocl_function *fn, bool random, uint64_t seed,
                             cli_inputs *in);
/* "output I: TYPE" and a line of min, max, mean and the first values. */
void cli_print_summary(int index, const byocl_tensor *t);
/* Writes output i to DIR/output_<i>.npy (DIR created), printing "wrote PATH" for each.
 * Returns CLI_EXIT_OK or CLI_EXIT_FAILURE (printed). */
int cli_write_outputs(const char *dir, byocl_tensor *const *outputs, int n);
/* A monotonic clock, in seconds. */
double cli_seconds(void);
/* A count from `min` to `max` written with digits only (no sign, no spaces). */
bool cli_parse_count(const char *s, int min, int max, int *out);

#endif
