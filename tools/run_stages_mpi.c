/* byocl run-stages --mpi: this rank's part of an MPI job (include/byocl/stages_mpi.h).
 *
 * Three phases. Before the stream, every rank reads the stages and the flags (the rank of
 * stage 0 its inputs too, the last rank checks where the outputs go), then compares what
 * it read with rank 0 and builds its own stages; after each phase byocl_mpi_agree stops
 * every rank when any failed, rank 0 printing each failing rank's messages once. During
 * the stream a failure is this rank's alone and the others wait on it: it prints its
 * message and ends the job (byocl_mpi_abort). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "byocl/stages_mpi.h"
#include "run_stages.h"

/* The error messages of one phase, collected instead of printed (cli_set_error_stream). */
typedef struct phase {
    FILE *f, *before;
    char *text;
    size_t len;
} phase;

static void phase_begin(phase *p)
{
    *p = (phase){0};
    p->f = open_memstream(&p->text, &p->len);
    p->before = cli_set_error_stream(p->f); /* none: they go to stderr as ever */
}

/* Every rank's verdict on the phase: the largest exit code; rank 0 prints the messages. */
static int phase_end(phase *p, int rc)
{
    cli_set_error_stream(p->before == stderr ? NULL : p->before);
    if (p->f)
        fclose(p->f);
    char *report = NULL;
    int worst = byocl_mpi_agree(rc, p->text, &report);
    if (report)
        fputs(report, stderr);
    fflush(stderr);
    free(report);
    free(p->text);
    return worst;
}

/* --ranks 0,0,1: the rank of each of the n stages (NULL without the flag: stage k on rank
 * k). */
static int parse_ranks(const cli_command *cmd, const cli_args *args, int n, int **out)
{
    const char *v = cli_value(cmd, args, "ranks", NULL);
    *out = NULL;
    if (!v)
        return CLI_EXIT_OK;
    int *ranks = calloc((size_t)n, sizeof *ranks), count = 0;
    char *copy = strdup(v);
    if (!ranks || !copy) {
        free(ranks);
        free(copy);
        return cli_fail("out of memory");
    }
    int rc = CLI_EXIT_OK;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && rc == CLI_EXIT_OK;
         tok = strtok_r(NULL, ",", &save)) {
        int r;
        if (!cli_parse_count(tok, 0, 1 << 20, &r))
            rc = cli_usage_error(cmd, "--ranks %s: '%s' is not a rank", v, tok);
        else if (count < n)
            ranks[count] = r;
        count++;
    }
    if (rc == CLI_EXIT_OK && count != n)
        rc = cli_usage_error(cmd, "--ranks %s: %d rank%s for %d stages (one per stage)", v,
                             count, count == 1 ? "" : "s", n);
    free(copy);
    if (rc != CLI_EXIT_OK)
        free(ranks);
    else
        *out = ranks;
    return rc;
}

/* Everything a rank holds while it runs its part. */
typedef struct rank_job {
    const char *dir;
    int rank, size, n_stages, n_items, depth;
    byocl_stages *s;
    stage_plan plan;
    int *ranks; /* the placement; NULL: stage k on rank k */
    stage_source source; /* the rank of stage 0's */
    byocl_compiled **compiled;
    byocl_executor **executors;
} rank_job;

static int rank_of_stage(const rank_job *job, int k)
{
    return job->ranks ? job->ranks[k] : k;
}

/* Phase 1: the stages, the flags, the placement; the inputs at the rank of stage 0. */
static int read_part(const cli_command *cmd, const cli_args *args, rank_job *job)
{
    byocl_error err;
    if (byocl_stages_read(job->dir, &job->s, &err) != BYOCL_OK)
        return cli_fail_error(&err);
    job->n_stages = byocl_stages_count(job->s);
    int rc = stage_plan_make(cmd, args, job->n_stages, &job->plan);
    if (rc == CLI_EXIT_OK)
        rc = parse_ranks(cmd, args, job->n_stages, &job->ranks);
    if (rc == CLI_EXIT_OK && byocl_stages_mpi_check(job->s, job->ranks, &err) != BYOCL_OK) {
        if (job->ranks)
            rc = cli_fail("--ranks %s: %s", cli_value(cmd, args, "ranks", ""), err.msg);
        else
            rc = cli_fail("%s; start a rank per stage (mpirun -np %d) or place the stages "
                          "with --ranks",
                          err.msg, job->n_stages);
    }
    job->compiled = calloc((size_t)job->n_stages, sizeof *job->compiled);
    job->executors = calloc((size_t)job->n_stages, sizeof *job->executors);
    if (rc == CLI_EXIT_OK && (!job->compiled || !job->executors))
        rc = cli_fail("out of memory");
    if (rc == CLI_EXIT_OK && job->rank == 0) {
        rc = stage_source_open(cmd, args, job->s, job->dir, &job->source);
        job->n_items = job->source.n;
    }
    const char *out_dir = cli_value(cmd, args, "output-dir", NULL);
    if (rc == CLI_EXIT_OK && out_dir && job->rank == job->size - 1)
        rc = cli_check_dirs(out_dir);
    return rc;
}

/* Phase 2: the same stages on every rank, then this rank's own built. */
static int build_part(rank_job *job)
{
    byocl_error err;
    if (byocl_stages_mpi_compare(job->s, &job->n_items, &err) != BYOCL_OK)
        return cli_fail_error(&err);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "rank %d: ", job->rank);
    int rc = CLI_EXIT_OK;
    for (int k = 0; k < job->n_stages && rc == CLI_EXIT_OK; k++)
        if (rank_of_stage(job, k) == job->rank && job->plan.compiled)
            rc = stage_compile(job->s, &job->plan, k, prefix, &job->compiled[k],
                               &job->executors[k]);
    return rc;
}

/* "rank 1 on node2 (pid 4242): stages 1 to 2": which process runs what, so that a rank
 * mpirun reports dead can be told by its stage. */
static void print_placement(const rank_job *job)
{
    int first = -1, last = -1;
    for (int k = 0; k < job->n_stages; k++)
        if (rank_of_stage(job, k) == job->rank) {
            first = first < 0 ? k : first;
            last = k;
        }
    printf("rank %d on %s (pid %ld): ", job->rank, byocl_mpi_host(), (long)getpid());
    if (first == last)
        printf("stage %d", first);
    else
        printf("stages %d to %d", first, last);
    printf(", %d item%s\n", job->n_items, job->n_items == 1 ? "" : "s");
    fflush(stdout);
}

/* Phase 3: the stream; on the last rank, the report and the outputs. */
static int stream_part(const cli_command *cmd, const cli_args *args, rank_job *job)
{
    byocl_tensor ***outputs = NULL;
    int *n_outputs = NULL;
    byocl_pipeline_stats stats = {0};
    byocl_error err;
    byocl_status st = byocl_stages_mpi_run(
        job->s, job->ranks, job->plan.compiled ? job->executors : NULL, job->depth,
        job->rank == 0 ? stage_source_inputs : NULL, &job->source, job->n_items, &outputs,
        &n_outputs, &stats, &err);
    if (st != BYOCL_OK) { /* the other ranks wait on this one: end them all */
        cli_fail_error(&err);
        fflush(stdout);
        fflush(stderr);
        byocl_mpi_abort(CLI_EXIT_FAILURE);
        return CLI_EXIT_FAILURE;
    }
    int rc = CLI_EXIT_OK;
    if (outputs) { /* the last rank */
        int *placement = malloc((size_t)job->n_stages * sizeof *placement);
        for (int k = 0; placement && k < job->n_stages; k++)
            placement[k] = rank_of_stage(job, k);
        char how[64];
        snprintf(how, sizeof how, "streamed across %d rank%s (MPI, queues of %d)", job->size,
                 job->size == 1 ? "" : "s", job->depth);
        stage_print_stream(job->s, &job->plan, job->dir, how, job->n_items, &stats, placement);
        free(placement);
        const char *out_dir = cli_value(cmd, args, "output-dir", NULL);
        if (out_dir)
            rc = stage_write_items(out_dir, outputs, n_outputs, job->n_items);
        for (int i = 0; i < job->n_items; i++)
            byocl_tensors_free(outputs[i], n_outputs[i]);
        fflush(stdout);
    }
    free(outputs);
    free(n_outputs);
    free(stats.latency_ms);
    free(stats.busy_ms);
    return rc;
}

static void rank_job_free(rank_job *job)
{
    for (int k = 0; k < job->n_stages; k++) {
        byocl_executor_free(job->executors ? job->executors[k] : NULL);
        byocl_compiled_free(job->compiled ? job->compiled[k] : NULL);
    }
    free(job->executors);
    free(job->compiled);
    free(job->ranks);
    stage_plan_free(&job->plan);
    stage_source_close(&job->source);
    byocl_stages_free(job->s);
}

int run_stages_mpi(const cli_command *cmd, const cli_args *args, const char *dir, int depth)
{
    byocl_error err;
    if (byocl_mpi_init(NULL, NULL, &err) != BYOCL_OK) /* also: built without MPI */
        return cli_fail("--mpi: %s", err.msg);
    rank_job job = {.dir = dir, .rank = byocl_mpi_rank(), .size = byocl_mpi_size(),
                    .depth = depth};
    phase p;
    phase_begin(&p);
    int rc = phase_end(&p, read_part(cmd, args, &job));
    if (rc == CLI_EXIT_OK) {
        phase_begin(&p);
        rc = phase_end(&p, build_part(&job));
    }
    if (rc == CLI_EXIT_OK) {
        print_placement(&job);
        rc = stream_part(cmd, args, &job);
        phase_begin(&p); /* the last rank's writing decides every rank's exit code */
        rc = phase_end(&p, rc);
    }
    rank_job_free(&job);
    byocl_mpi_finalize();
    return rc;
}
