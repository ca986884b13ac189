/* byocl: capturing the regions of a real run, to replay and bisect them one at a time.
 *
 * A capture records, for each region call of a run (the last call of each region), the
 * DLTensors its runtime module received and wrote, and writes them to a folder per region:
 *
 *   DIR/<symbol>/manifest.json       what the folder holds (docs/debugging-regions.md)
 *   DIR/<symbol>/region.relay (.npz) the region as a standalone module (byocl_extract)
 *   DIR/<symbol>/input_<param>.npy   each input, named after the module's parameter
 *   DIR/<symbol>/output_<i>.npy      each output
 *
 * A symbol longer than 128 characters names its folder by its first 111, '-' and 16 hex
 * digits of its SHA-256 (TVM names a region after all its ops). A folder is written as
 * DIR/.<symbol>.tmp-XXXXXX and then renamed: it appears whole or not at all. The manifest says which node of the original @main (numbered as `byocl print`
 * shows the model before partitioning) each input and output is.
 *
 * How: mark the nodes of a copy of the model (byocl_capture_mark_nodes), partition it,
 * start a capture on the partitioned module (byocl_capture_new), let it wrap each region's
 * runtime module (byocl_capture_install on the build options), build, run, then write the
 * recorded regions (byocl_capture_write_region). With `check` set (bisect), each region
 * runs on the host as well, its host outputs go on to the rest of the model, and its
 * target's outputs are compared with them. */
#ifndef BYOCL_CAPTURE_H
#define BYOCL_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "byocl/ir.h"
#include "byocl/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ comparing */

/* The default tolerance of replay and bisect: |got - want| <= atol + rtol * |want|. */
#define BYOCL_CAPTURE_RTOL 1e-4
#define BYOCL_CAPTURE_ATOL 1e-5

/* How far `got` is from `want`. */
typedef struct byocl_capture_diff {
    double max_abs;   /* the largest |got - want| (infinity for a NaN where want has none) */
    double rel_l2;    /* ||got - want|| / ||want|| (the absolute norm when want is all 0) */
    int64_t first_bad; /* the first flat index beyond the tolerance; -1: none */
    int64_t n_bad;    /* how many elements are beyond it */
    bool ok;          /* same dtype and shape, and no element beyond the tolerance */
} byocl_capture_diff;

/* Compares two tensors element by element with byocl_tensor_compare (tensor.h). A dtype
 * or shape mismatch is not ok, with first_bad 0; so is every element under a tolerance that
 * is negative or NaN. */
void byocl_capture_compare(const byocl_tensor *got, const byocl_tensor *want, double rtol,
                           double atol, byocl_capture_diff *out);

/* ------------------------------------------------------------- manifest */

/* One captured tensor. */
typedef struct byocl_capture_tensor {
    char *name;        /* input: the standalone module's parameter; output: "output_<i>" */
    char *file;        /* relative to the folder: "input_data.npy" */
    byocl_dtype dtype;
    byocl_shape shape;
    char *node;        /* the original @main's value: "%3", "%data", "the result", "?" */
    char *op;          /* what computes it there: "nn.relu", "Var", "Constant", "?" */
} byocl_capture_tensor;

typedef struct byocl_capture_manifest {
    int version;         /* 1 */
    char *symbol;        /* "opencl_main_0" */
    char *target;        /* the region's target (its Compiler attribute) */
    char *runner;        /* the runtime module that ran the captured call */
    char *outputs_from;  /* who computed the captured outputs: the runner, or in a bisect
                            the host path ("host", "ref") */
    char *model;         /* the model as given on the command line; may be "" */
    char *call_node;     /* the region's call in the partitioned @main: "%1" */
    char *module;        /* "region.relay" */
    char *params;        /* "region.npz", or NULL when the region has no tensor constants */
    int calls;           /* how often the region ran; the tensors are the last call's */
    double last_ms, min_ms, median_ms; /* the runner's time per call */
    int n_inputs, n_outputs;
    byocl_capture_tensor *inputs, *outputs;
} byocl_capture_manifest;

/* Parses manifest.json from memory (`filename` names it in errors, which read
 * "FILENAME:LINE:COL: error: ..."). Every field above is checked: kinds, a known dtype,
 * dims >= 0 and rank <= BYOCL_MAX_RANK, file names without '/' that do not start with
 * '.'. *out is NULL on failure. */
byocl_status byocl_capture_manifest_parse(const char *text, size_t len, const char *filename,
                                          byocl_capture_manifest **out, byocl_error *err);
void byocl_capture_manifest_free(byocl_capture_manifest *m); /* NULL is fine */

/* ------------------------------------------------------- reading a folder */

typedef struct byocl_capture_folder {
    byocl_capture_manifest *manifest;
    byocl_module *module;     /* the standalone region, typed; @main takes the inputs */
    byocl_tensor **inputs;    /* manifest->n_inputs, in @main's parameter order */
    byocl_tensor **outputs;   /* manifest->n_outputs */
} byocl_capture_folder;

/* Reads DIR (one region's folder): the manifest, the module and every tensor, checking that
 * the tensors have the manifest's dtypes and shapes and that @main's parameters and result
 * are the manifest's inputs and outputs. Errors name the file and what is wrong. */
byocl_status byocl_capture_read(const char *dir, byocl_capture_folder **out, byocl_error *err);
void byocl_capture_folder_free(byocl_capture_folder *f); /* NULL is fine */

/* A file name made of `prefix` and `name` that is safe in a folder: letters, digits, '_',
 * '-' and '.' kept, anything else '_', no leading '.'. Returns buf. */
char *byocl_capture_file_name(const char *prefix, const char *name, char *buf, size_t len);

/* ------------------------------------------------------------ recording */

typedef struct byocl_capture byocl_capture;

typedef struct byocl_capture_options {
    const char *region; /* capture only the region with this global symbol; NULL: all */
    const char *model;  /* the model's name for the manifest; may be NULL */
    /* NULL: each region runs on its runtime module and its outputs are recorded. "host"
     * or "ref" (bisect): each region also runs alone on that host target (as
     * byocl_rtmod_host_new / byocl_rtmod_ref_new); the host outputs go on to the rest of
     * the model and are the captured outputs, the runtime module's are compared with
     * them (rtol, atol). */
    const char *check;
    double rtol, atol;
} byocl_capture_options;

/* Marks each node of @main of `m` (a copy of the model, about to be partitioned) with its
 * id, so that byocl_capture_new can tell which original node each value is. The marks
 * replace the nodes' source positions until byocl_capture_new puts them back. */
void byocl_capture_mark_nodes(byocl_module *m);

/* The id of the node of the original @main that byocl_capture_mark_nodes marked on node
 * `id` of `fn`, or -1 for a node without a mark (one that a pass made). `fn` is any
 * function of the marked copy after any passes (partitioning carries the marks into the
 * regions it makes) or of a model compiled from it (byocl_compiled_step_nodes), as long as
 * byocl_capture_new has not put the positions back. */
int byocl_capture_marked_node(const byocl_function *fn, int id);

/* A capture of the regions of `partitioned` (the marked copy after partitioning; its
 * positions are restored from `original`, the unmarked model). Errors: opt->region names
 * no region (the message lists them), no region at all, an unknown check target. The
 * capture keeps a copy of `partitioned`. */
byocl_status byocl_capture_new(const byocl_module *original, byocl_module *partitioned,
                               const byocl_capture_options *opt, byocl_capture **out,
                               byocl_error *err);
/* After every compiled model built with it (and its executors) is freed. NULL is fine. */
void byocl_capture_free(byocl_capture *cap);

/* Makes `opt` (for byocl_build of the partitioned module) wrap each captured region's
 * runtime module: the one opt's own hook, the target or the fallback gives it. */
void byocl_capture_install(byocl_capture *cap, byocl_build_options *opt);

/* The regions recorded so far, in the order of their first call. */
typedef struct byocl_capture_region {
    const char *symbol;
    const char *runner;     /* the runtime module's name */
    const char *call_node;  /* the region's call in the partitioned @main: "%1" */
    int calls;
    double last_ms, min_ms, median_ms;
    int n_outputs;
    const byocl_capture_diff *diffs; /* with check: one per output, else NULL */
    bool ok;                /* with check: every output within the tolerance */
} byocl_capture_region;

int byocl_capture_num_regions(const byocl_capture *cap);
/* Region k (0 <= k < num_regions); its pointers live as long as the capture. */
byocl_capture_region byocl_capture_region_at(const byocl_capture *cap, int k);

/* Writes region k's folder DIR/<symbol> (DIR must exist; a previous capture of the region
 * there is replaced, anything else of that name is an error). *path_out (may be NULL)
 * receives the folder's path, malloc'ed. */
byocl_status byocl_capture_write_region(const byocl_capture *cap, int k, const char *dir,
                                        char **path_out, byocl_error *err);

/* ------------------------------------------ a call recorded elsewhere */

/* One call of a region that ran outside a byocl_capture, to write as a capture folder:
 * byocl's TVM bridge captures the regions TVM calls with it (docs/tvm.md). */
typedef struct byocl_capture_call {
    const char *symbol;         /* the folder's name: DIR/<symbol> */
    const char *target;         /* where `byocl replay` runs it unless told otherwise */
    const char *runner;         /* who ran the call ("tvm/opencl") */
    const char *model;          /* may be NULL */
    const char *call_node;      /* where it was called from; NULL: not known ("?") */
    const byocl_module *module; /* the region alone, typed: @main takes the inputs and
                                   returns the outputs */
    const byocl_tensor *const *inputs;  /* one per parameter of @main, in order */
    const byocl_tensor *const *outputs; /* one per tensor of @main's (flattened) result */
    const double *times_ms;     /* the runner's time of each call so far, this one last */
    int calls;                  /* >= 1 */
} byocl_capture_call;

/* Writes `call` as the folder DIR/<symbol>, as byocl_capture_write_region does (DIR must
 * exist; a previous capture of the region there is replaced). The tensors must have the
 * types of @main's parameters and result. The inputs and outputs have no node of an
 * original @main: their manifest entries say "?". */
byocl_status byocl_capture_write_call(const byocl_capture_call *call, const char *dir,
                                      char **path_out, byocl_error *err);

#ifdef __cplusplus
}
#endif
#endif
