/* A compiled model as byocl_build makes it (build.c) and the executor runs it
 * (runtime/executor/): its values and where their data live, its steps in execution order,
 * the copies between memories, the storage plan. Immutable once built. Tests include this
 * header to check the plans themselves. */
#ifndef BYOCL_COMPILED_H
#define BYOCL_COMPILED_H

#include <stdatomic.h>

#include "backend/host_backend.h"
#include "byocl/runtime.h"

/* Where a value's data live. */
typedef enum value_home {
    HOME_INPUT,    /* a parameter: the executor's input buffer `slot` */
    HOME_CONSTANT, /* a constant node's tensor (read-only) */
    HOME_POOL,     /* an intermediate: at `pool_offset` in the storage plan's pool */
    HOME_OUTPUT    /* a step's result that is an output: its own buffer `slot` */
} value_home;

/* The memory of the host, as opposed to device memory `k` (c->memories[k]). */
#define HOST_MEMORY (-1)

/* A tensor value: one tensor-typed node, or one field of a tuple-typed node. A value that
 * aliases another (a field of a Tuple or TupleGetItem, an annotation, a reshape) shares
 * its root's buffer (from its first byte) and has its own type. */
typedef struct byocl_xvalue {
    int node, field;     /* field -1: the node is a tensor */
    const byocl_type *type;
    size_t nbytes;
    int root;            /* the value whose buffer this one uses (itself for roots) */
    /* Roots only: */
    value_home home;
    int slot;            /* HOME_INPUT: input index; HOME_OUTPUT: output buffer index */
    size_t pool_offset;  /* HOME_POOL: its first byte in the pool */
    int within;          /* HOME_POOL: the root whose buffer holds this one as a slice (an
                            input of a concatenation done in place), else -1 */
    size_t within_offset; /* within >= 0: its first byte there */
    const void *constant; /* HOME_CONSTANT */
    int producer;        /* the step that writes it, -1 for inputs and constants */
    int last_use;        /* the last step that reads it (directly or through an alias) */
    int memory;          /* where its producer writes it: the device memory of a region
                            step that has one, else HOST_MEMORY */
    bool host_copy;      /* in device memory and downloaded during or after a run, so it
                            has a host buffer too; in device memory without it: no host
                            buffer at all */
} byocl_xvalue;

typedef struct byocl_xstep {
    byocl_step_kind kind;
    char name[64];
    int node;            /* the last node of the step (region: its call) */
    int n_nodes;
    /* What the step computes (byocl_compiled_step_nodes): nodes of `covered_fn`, the
     * group's op calls for a kernel, the region function's nodes but its parameters and
     * constants for a region. */
    const byocl_function *covered_fn;
    int *covered;
    int n_covered;
    double flops;
    int n_in, n_out;
    int *args;           /* value ids: inputs then outputs */
    /* kernel */
    byocl_host_kernel kernel;
    int group;           /* its group in the host backend's grouping */
    /* region */
    byocl_rtmod *rtmod;  /* owned by the compiled model's rtmod list */
    const char *symbol;
    int memory;          /* a region whose module has device memory: its index in
                            c->memories; every other step: HOST_MEMORY */
    int *devbufs;        /* memory >= 0: per argument, the device buffer passed for it */
    int first_transfer, n_transfers; /* the copies made just before the step */
} byocl_xstep;

/* A buffer in device memory, allocated by each executor (one per value and memory, no
 * reuse by liveness): a root value's home, or the copy of a value that lives elsewhere. */
typedef struct byocl_xdevbuf {
    int value;           /* the root value it holds */
    int memory;          /* index in c->memories */
    int step;            /* the first step that uses it (errors name it) */
} byocl_xdevbuf;

/* One copy between a value's host buffer and one of its device buffers. */
typedef struct byocl_xtransfer {
    int devbuf;
    bool upload;         /* host -> device; else device -> host */
    int step;            /* made just before this step; -1: once, when an executor is made
                            (constants); n_steps: after the last step (outputs) */
} byocl_xtransfer;

typedef struct byocl_xoutput {
    int value;
    int buffer;          /* its own output buffer, or -1 when it shares another output's */
    bool copy;           /* the value is an input or a constant: copied after each run */
} byocl_xoutput;

struct byocl_compiled {
    atomic_int refs;     /* the user's, plus one per executor */
    byocl_module *mod;   /* a typed copy of the user's module */
    const byocl_function *fn;
    const char *target;
    const byocl_host_backend_i *backend;
    void *backend_state;
    int threads;

    int n_values;
    byocl_xvalue *values;
    int *node_values;    /* node_values[node_first[id] + k]: value of field k of node id */
    int *node_first;     /* -1 for nodes the body does not need */

    int n_steps;
    byocl_xstep *steps;  /* in execution order */
    int n_rtmods;
    byocl_rtmod **rtmods;

    int n_inputs;        /* one value per parameter */
    int *input_values;
    int n_outputs;
    byocl_xoutput *outputs;

    size_t pool_bytes;   /* the storage plan: one pool of intermediates */
    int n_output_buffers;
    size_t *output_buffer_bytes;

    /* Device memory (none unless a region module has some, byocl_rtmod_memory): one entry
     * per distinct DLDevice, described by the first region module in step order that
     * names it. */
    int n_memories;
    byocl_device_memory *memories;
    int n_devbufs;
    byocl_xdevbuf *devbufs;
    /* Every copy, ordered by step: those made once per executor ([0, n_setup_transfers)),
     * each step's (byocl_xstep.first_transfer), those after the run (from
     * first_final_transfer). */
    int n_transfers;
    byocl_xtransfer *transfers;
    int n_setup_transfers;
    int first_final_transfer;
    byocl_plan_stats stats;
};

/* The value of field `field` (-1 for a tensor node) of node `node`, or -1. */
int driver_compiled_value_of(const byocl_compiled *c, int node, int field);

/* concat_in_place.c: drops each host kernel step that only concatenates into one contiguous
 * block, placing its inputs as slices of its result (`within`); the result's producer
 * becomes the last step that writes a slice. Runs on ordered steps, after the outputs'
 * homes are known and before anything records step indices other than `producer`. */
byocl_status driver_concat_in_place(byocl_compiled *c, byocl_error *err);
/* The root whose buffer holds root `root` and is no slice itself (`root` unless it is a
 * slice); *offset (may be NULL) receives root's first byte in it. */
int driver_value_outermost(const byocl_compiled *c, int root, size_t *offset);

#endif
