/* byocl built without MPI (CMake found none): the API of byocl/stages_mpi.h says so. */
#include <stddef.h>

#include "distributed/mpi_impl.h"

#define NO_MPI "byocl was built without MPI: install Open MPI (Debian: libopenmpi-dev, "   \
               "openmpi-bin) and configure byocl again"

bool byocl_mpi_available(void)
{
    return false;
}

const char *byocl_mpi_library(void)
{
    return "none (" NO_MPI ")";
}

static byocl_status no_mpi(byocl_error *err)
{
    return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED, NO_MPI);
}

byocl_status byocl_mpi_init(int *argc, char ***argv, byocl_error *err)
{
    return no_mpi(err);
}

int byocl_mpi_rank(void)
{
    return 0;
}

int byocl_mpi_size(void)
{
    return 1;
}

const char *byocl_mpi_host(void)
{
    return "localhost";
}

void byocl_mpi_finalize(void)
{
}

void byocl_mpi_abort(int code)
{
}

int byocl_mpi_agree(int code, const char *message, char **report)
{
    if (report)
        *report = NULL;
    return code;
}

byocl_status byocl_stages_mpi_check(const byocl_stages *s, const int *rank_of_stage,
                                    byocl_error *err)
{
    return no_mpi(err);
}

byocl_status byocl_stages_mpi_compare(const byocl_stages *s, int *n_items, byocl_error *err)
{
    return no_mpi(err);
}

byocl_status byocl_stages_mpi_run(const byocl_stages *s, const int *rank_of_stage,
                                  byocl_executor *const *executors, int depth,
                                  byocl_item_inputs_fn next_inputs, void *user, int n_items,
                                  byocl_tensor ****outputs, int **n_outputs,
                                  byocl_pipeline_stats *stats, byocl_error *err)
{
    return no_mpi(err);
}
