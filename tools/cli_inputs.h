/* The inputs and outputs of a run (run, run-stages; cli_inputs.c). */
#ifndef BYOCL_CLI_INPUTS_H
#define BYOCL_CLI_INPUTS_H

#include <stdbool.h>
#include <stdint.h>

#include "cli.h"


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

/* The random half of cli_bind_inputs: fills every value still unbound as --random-inputs
 * (SEED `seed`) does. Same returns. */
int cli_fill_random_inputs(cli_inputs *in, uint64_t seed);
/* Binds every value of one file: an .npz binds its members by name (each must be a value
 * of `in`), any other tensor file (.npy, .pb) the single value of an `in` of one. dtype and
 * shape are checked. Returns CLI_EXIT_OK or CLI_EXIT_FAILURE (printed). */
int cli_bind_inputs_file(cli_inputs *in, const char *path);
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

#endif
