/* The struct behind byocl_stages (include/byocl/split.h), shared by the split pass
 * (split.c), the manifest's writer and reader (codegen/export/split_manifest.c) and the
 * runner (runtime/executor/stages_run.c). */
#ifndef BYOCL_SPLIT_IMPL_H
#define BYOCL_SPLIT_IMPL_H

#include "byocl/split.h"

typedef struct split_stage {
    byocl_module *mod;
    char *first, *last; /* labels of the first and last original node it holds */
    int n_nodes;
    int64_t flops;
    double cost; /* its nodes' costs summed (byocl_split_weighted), or -1: none given */
    int n_inputs;
    byocl_stage_input *inputs;   /* names malloc'ed */
    int n_outputs;
    byocl_stage_output *outputs; /* node and op malloc'ed; type owned by mod */
} split_stage;

struct byocl_stages {
    /* The pipeline's inputs, as the parameters of a function @main of its own module
     * (whose body is an empty tuple): this module owns their names and types. */
    byocl_module *signature;
    int n_stages;
    split_stage *stages;
};

/* An empty byocl_stages with `n_stages` zeroed stages (cost -1) and an empty signature
 * module. */
byocl_stages *split_stages_new(int n_stages, byocl_error *err);

/* The tensor leaves of `type`, in order (a tensor is its own single leaf). Fills at most
 * `max` entries of out and returns the count. */
int split_type_leaves(const byocl_type *type, const byocl_type **out, int max);

/* malloc'ed copy of s, or NULL. */
char *split_strdup(const char *s);

#endif
