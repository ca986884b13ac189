/* byocl: pipeline stages across processes and hosts with MPI.
 *
 * `mpirun -np K` starts K processes (ranks); each runs the stages that a placement gives it
 * (rank_of_stage[k]: the rank of stage k; consecutive stages share a rank, every rank has
 * at least one stage, the ranks ascend with the stages). The values that cross from one
 * rank to another travel as MPI messages, one per tensor and item, each exactly the bytes
 * of the tensor type the manifest gives it: the pipeline's inputs enter at the rank of
 * stage 0, every output of a stage goes straight to each later rank that reads it, and the
 * last stage's outputs stay on the last rank. Receives are posted ahead and sends are
 * non-blocking, so a rank computes one item while the next arrives and the last leaves.
 *
 * Built where CMake finds MPI (byocl_mpi_available). Without it, byocl_mpi_available and
 * byocl_mpi_library work and every other function fails with BYOCL_ERR_UNSUPPORTED (or,
 * for those that return no status, does nothing). */
#ifndef BYOCL_STAGES_MPI_H
#define BYOCL_STAGES_MPI_H

#include <stdbool.h>

#include "byocl/split.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether this byocl was built with MPI. */
bool byocl_mpi_available(void);
/* The MPI library byocl was built with ("Open MPI v4.1.4, ..."), or why there is none. */
const char *byocl_mpi_library(void);

/* MPI_Init_thread (MPI_THREAD_FUNNELED: only the calling thread makes MPI calls; the
 * stages compute on a thread of their own). MPI errors are returned, not fatal. */
byocl_status byocl_mpi_init(int *argc, char ***argv, byocl_error *err);
/* This process's rank and the number of ranks (0 and 1 before byocl_mpi_init). */
int byocl_mpi_rank(void);
int byocl_mpi_size(void);
/* The host this rank runs on (MPI_Get_processor_name). */
const char *byocl_mpi_host(void);
void byocl_mpi_finalize(void);
/* Ends every rank of the job now (MPI_Abort) with exit status `code`. */
void byocl_mpi_abort(int code);

/* Collective: every rank gives its exit code (0: fine) and a message (NULL or ""); each rank
 * gets the largest code. On rank 0, *report (when report is not NULL) receives the
 * messages, malloc'ed: each distinct text once, its lines prefixed with the ranks that sent
 * it ("rank 1: ", "ranks 0-2: "), or unprefixed when every rank sent the same text; NULL
 * when no rank sent one. */
int byocl_mpi_agree(int code, const char *message, char **report);

/* Checks a placement of the stages on the ranks of this job; every rank reaches the same
 * verdict without communicating. rank_of_stage NULL: stage k on rank k. */
byocl_status byocl_stages_mpi_check(const byocl_stages *s, const int *rank_of_stage,
                                    byocl_error *err);

/* Collective: gives every rank rank 0's *n_items (only the rank of stage 0 reads the
 * inputs, so only it may know how many there are), then checks that every rank read the
 * same stages (the folder may differ between hosts): the inputs, each stage's nodes, its
 * wiring and every type that crosses a cut. Every rank returns the same verdict; the
 * error names the first rank that differs from rank 0 and how. */
byocl_status byocl_stages_mpi_compare(const byocl_stages *s, int *n_items, byocl_error *err);

/* Collective: streams `n_items` items through the stages, this rank running its own
 * (placement as byocl_stages_mpi_check takes it) on executors[k] (NULL, or executors NULL:
 * the reference executor; the other ranks' entries are not read). At the rank of stage 0
 * next_inputs(user, i, ...) gives item i's inputs, as byocl_stages_pipeline asks (the
 * other ranks pass NULL); `depth` bounds the items a rank receives ahead and has in
 * flight outward. On the last rank (*outputs)[i] receives item i's outputs, (*n_outputs)[i] of
 * them, in input order (free as byocl_stages_pipeline's), and stats (may be NULL) what
 * was measured: the total from the first item in to the last out, each item's latency,
 * each stage's busy time; elsewhere *outputs and *n_outputs are NULL and stats untouched.
 *
 * A failure (a stage's run, a message of the wrong size, a peer that is gone) returns the
 * error, naming the stage, rank and item, with the other ranks still waiting on this one:
 * report it, then call byocl_mpi_abort, which ends them all. */
byocl_status byocl_stages_mpi_run(const byocl_stages *s, const int *rank_of_stage,
                                  byocl_executor *const *executors, int depth,
                                  byocl_item_inputs_fn next_inputs, void *user, int n_items,
                                  byocl_tensor ****outputs, int **n_outputs,
                                  byocl_pipeline_stats *stats, byocl_error *err);

#ifdef __cplusplus
}
#endif
#endif
