/* The MPI job byocl runs in: starting and ending MPI, this rank, and the collective
 * agreement that lets every rank stop together, with one report, when any fails before the
 * stages stream. */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/textbuf.h"
#include "distributed/mpi_impl.h"

bool byocl_mpi_available(void)
{
    return true;
}

const char *byocl_mpi_library(void)
{
    static char version[MPI_MAX_LIBRARY_VERSION_STRING];
    if (!version[0]) {
        int len = 0;
        MPI_Get_library_version(version, &len);
        version[strcspn(version, "\n")] = '\0'; /* the first line names it */
    }
    return version;
}

byocl_status dist_mpi_error(byocl_error *err, int code, const char *fmt, ...)
{
    char what[512], mpi_msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    MPI_Error_string(code, mpi_msg, &len);
    return byocl_error_set(err, BYOCL_ERR_RUNTIME, "%s: %s", what, mpi_msg);
}

byocl_status byocl_mpi_init(int *argc, char ***argv, byocl_error *err)
{
    int provided = 0, code = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    if (code != MPI_SUCCESS)
        return dist_mpi_error(err, code, "MPI_Init_thread");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (provided < MPI_THREAD_FUNNELED) {
        MPI_Finalize();
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "%s offers no MPI_THREAD_FUNNELED (the stages compute on a "
                               "thread of their own)",
                               byocl_mpi_library());
    }
    return BYOCL_OK;
}

static bool initialized(void)
{
    int flag = 0, done = 0;
    MPI_Initialized(&flag);
    MPI_Finalized(&done);
    return flag && !done;
}

int byocl_mpi_rank(void)
{
    int rank = 0;
    if (initialized())
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

int byocl_mpi_size(void)
{
    int size = 1;
    if (initialized())
        MPI_Comm_size(MPI_COMM_WORLD, &size);
    return size;
}

const char *byocl_mpi_host(void)
{
    static char host[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    if (!host[0] && MPI_Get_processor_name(host, &len) != MPI_SUCCESS)
        strcpy(host, "?");
    return host;
}

void byocl_mpi_finalize(void)
{
    if (initialized())
        MPI_Finalize();
}

void byocl_mpi_abort(int code)
{
    MPI_Abort(MPI_COMM_WORLD, code ? code : 1);
}

/* "rank 3", "ranks 0-2", "ranks 0, 2": the ranks marked in `which`. */
static void put_ranks(byocl_textbuf *b, const bool *which, int size)
{
    int count = 0;
    for (int r = 0; r < size; r++)
        count += which[r];
    base_textbuf_puts(b, count == 1 ? "rank " : "ranks ");
    bool first = true;
    for (int r = 0; r < size; r++) {
        if (!which[r])
            continue;
        int end = r;
        while (end + 1 < size && which[end + 1])
            end++;
        base_textbuf_printf(b, first ? "%d" : ", %d", r);
        if (end > r + 1)
            base_textbuf_printf(b, "-%d", end);
        else if (end == r + 1)
            base_textbuf_printf(b, ", %d", end);
        first = false;
        r = end;
    }
}

/* Each distinct message of `texts` once, its lines prefixed with the ranks that sent it;
 * unprefixed when all ranks sent the same one. */
static char *report_messages(char **texts, int size)
{
    byocl_textbuf b = {0};
    bool *same = calloc((size_t)size, sizeof *same), *done = calloc((size_t)size, sizeof *done);
    bool any = false;
    for (int r = 0; same && done && r < size; r++) {
        if (done[r] || !texts[r][0])
            continue;
        int count = 0;
        for (int q = 0; q < size; q++) {
            same[q] = !done[q] && strcmp(texts[q], texts[r]) == 0;
            done[q] |= same[q];
            count += same[q];
        }
        any = true;
        for (const char *line = texts[r]; *line;) {
            size_t len = strcspn(line, "\n");
            if (count < size) {
                put_ranks(&b, same, size);
                base_textbuf_puts(&b, ": ");
            }
            base_textbuf_putn(&b, line, len);
            base_textbuf_putc(&b, '\n');
            line += len + (line[len] == '\n');
        }
    }
    free(same);
    free(done);
    if (!any) {
        base_textbuf_free(&b);
        return NULL;
    }
    return base_textbuf_take(&b);
}

int byocl_mpi_agree(int code, const char *message, char **report)
{
    int worst = code, rank = byocl_mpi_rank(), size = byocl_mpi_size();
    if (report)
        *report = NULL;
    MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (worst == 0)
        return 0;
    /* Someone failed: rank 0 gathers every rank's message. */
    int len = message ? (int)strlen(message) : 0;
    int *lens = rank == 0 ? calloc((size_t)size, sizeof *lens) : NULL;
    int *offsets = rank == 0 ? calloc((size_t)size, sizeof *offsets) : NULL;
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char *all = NULL;
    int total = 0;
    if (rank == 0) {
        for (int r = 0; lens && offsets && r < size; r++) {
            offsets[r] = total;
            total += lens[r] + 1;
        }
        all = calloc((size_t)total + 1, 1);
    }
    MPI_Gatherv(message ? message : "", len, MPI_CHAR, all, lens, offsets, MPI_CHAR, 0,
                MPI_COMM_WORLD);
    if (rank == 0 && all && lens && offsets) {
        char **texts = calloc((size_t)size, sizeof *texts);
        for (int r = 0; texts && r < size; r++)
            texts[r] = all + offsets[r]; /* NUL-terminated: each slot has one byte spare */
        if (texts && report)
            *report = report_messages(texts, size);
        free(texts);
    }
    free(all);
    free(lens);
    free(offsets);
    return worst;
}
