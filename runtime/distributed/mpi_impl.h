/* The distributed layer's internals, by file:
 *   mpi_world.c   starting and ending MPI, this rank, byocl_mpi_agree
 *   stages_mpi.c  a split model's stages on the ranks of a job: placement, comparison, the
 *                 stream of items with its messages
 *   mpi_absent.c  the same API where byocl is built without MPI: clear errors */
#ifndef BYOCL_MPI_IMPL_H
#define BYOCL_MPI_IMPL_H

#include "byocl/stages_mpi.h"

/* Records "WHAT: <MPI's message for code>" as a BYOCL_ERR_RUNTIME; returns that status. */
byocl_status dist_mpi_error(byocl_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
