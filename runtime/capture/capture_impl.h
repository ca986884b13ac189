/* The capture's internals shared by the files of runtime/capture/: the recorder's state, tracing
 * values of the partitioned module back to the original @main (capture_origin.c), the
 * manifest writer (capture_manifest.c) and path joining (capture_read.c). */
#ifndef BYOCL_CAPTURE_IMPL_H
#define BYOCL_CAPTURE_IMPL_H

#include <pthread.h>
#include <stdio.h>

#include "byocl/capture.h"
#include "base/file_util.h"
#include "base/textbuf.h"

/* What one region's inputs and outputs are in the original @main. */
typedef struct value_origin {
    char node[96];
    char op[96];
} value_origin;

typedef struct cap_region {
    char *symbol;
    char *compiler;               /* its Compiler attribute: the target */
    char call_node[32];           /* "%1" in the partitioned @main */
    int n_in, n_out;
    const byocl_type **in_types, **out_types; /* in the capture's module */
    value_origin *in_origin, *out_origin;
    /* recorded (under the capture's lock) */
    int order;                    /* rank of its first call; -1: not called (or failed) */
    char runner[64];
    byocl_tensor **inputs, **outputs, **got; /* got: the target's outputs (check) */
    byocl_capture_diff *diffs;    /* check: one per output */
    bool ok;
    int calls, cap_times;
    double *times;
} cap_region;

struct byocl_capture {
    byocl_module *module;         /* the partitioned module (a copy) */
    char *model, *check;
    double rtol, atol;
    int n_regions;
    cap_region *regions;
    int n_called;
    byocl_build_options base;     /* the build's options under the capture's hook */
    pthread_mutex_t lock;
};


/* The region recorded k-th (in order of first calls), or NULL. */
cap_region *capture_recorded(const byocl_capture *cap, int k);

/* The last, the smallest and the median of n >= 1 call times. */
void capture_time_stats(const double *times, int n, double *last, double *min, double *median);

/* ------------------------------------------------------ capture_origin.c */

/* The marks of a partitioned copy (byocl_capture_mark_nodes), read back. */
typedef struct capture_tracer {
    const byocl_module *part;
    const byocl_function *orig_main;
    int n_functions;
    int **marks; /* per function of `part`: the original id of each node, -1 when unmarked */
} capture_tracer;

/* Reads the marks of every node of `part` and puts the original positions back. Free with
 * capture_tracer_free in every case. */
byocl_status capture_tracer_init(capture_tracer *t, const byocl_module *original,
                                 byocl_module *part, byocl_error *err);
void capture_tracer_free(capture_tracer *t);
/* Which original value node `id` of `fn` (a function of `part`) is; `out` is left as it
 * is when that cannot be told. */
void capture_trace(const capture_tracer *t, const byocl_function *fn, int id,
                   value_origin *out);
/* The same for output `field` of region function `region`. */
void capture_trace_output(const capture_tracer *t, const byocl_function *region, int field,
                          value_origin *out);
/* The node of @main that calls function `name`, or -1. */
int capture_call_of(const byocl_function *main_fn, const char *name);

/* ---------------------------------------------------- the other files */

/* Appends `m` as manifest.json text (the format byocl_capture_manifest_parse reads). */
void capture_manifest_print(const byocl_capture_manifest *m, byocl_textbuf *out);

#endif
