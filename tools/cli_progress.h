/* Progress of a long step (compiling, running) on stderr, shown only once the step has
 * taken longer than a delay: 1 s, or $BYOCL_PROGRESS_DELAY seconds (0 shows it at once,
 * "off" never).
 * On a terminal, a bar redrawn in place and erased when the step ends; otherwise (a pipe,
 * a log file) a plain line every 2 s and one when the step ends. A reporter ticks in a
 * thread of its own, so the step itself only calls cli_progress_set. */
#ifndef BYOCL_CLI_PROGRESS_H
#define BYOCL_CLI_PROGRESS_H

#include <stdbool.h>

typedef struct cli_progress cli_progress;

/* Checks $BYOCL_PROGRESS_DELAY (unset, seconds >= 0, or "off"): CLI_EXIT_OK, or
 * CLI_EXIT_FAILURE with the error printed. The CLI checks it before any command. */
int cli_progress_check_env(void);

/* Starts reporting `label` ("compiling the host path"); `total` is how many units the step
 * has (runs), 0 when unknown (elapsed time only). Returns NULL, which every function
 * accepts and ignores, with `quiet`, with $BYOCL_PROGRESS_DELAY=off, or when no reporter
 * can be started. */
cli_progress *cli_progress_start(const char *label, int total, bool quiet);
/* `done` units of `total` are finished. */
void cli_progress_set(cli_progress *p, int done);
/* Ends the step: erases the bar (terminal) or prints a last line, "done in 3.2 s" or
 * "failed after 3.2 s" as `ok` says (when any line was printed), then frees p. */
void cli_progress_finish(cli_progress *p, bool ok);

#endif
