/* The contract between the OpenCL code generator (codegen/opencl/) and the OpenCL runtime
 * module (runtime/opencl/): what one compiled region is.
 *
 * The generator turns a partitioned region function into one OpenCL C 1.2 program
 * (built from the kernels_cl/ templates, specialized with compile-time constants, with
 * elementwise epilogues fused into their producers), a buffer plan for the tensors that
 * live only inside the region, and a launch plan: the kernels to enqueue, in order, with
 * their arguments and work sizes. The runtime module builds the program (through its
 * on-disk cache), binds the region's inputs/outputs and its own scratch buffers, and
 * enqueues the launches. */
#ifndef BYOCL_CL_PLAN_H
#define BYOCL_CL_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "byocl/ir.h"

typedef enum byocl_cl_buffer_kind {
    BYOCL_CL_BUF_INPUT = 0,  /* region input k (index = k)                        */
    BYOCL_CL_BUF_OUTPUT,     /* region output k (flattened result, index = k)      */
    BYOCL_CL_BUF_SCRATCH,    /* intermediate of the region (index into scratch[])  */
    BYOCL_CL_BUF_CONSTANT,   /* a constant bound into the region (index into constants[]) */
    BYOCL_CL_BUF_SLICE       /* bytes of a scratch buffer (index into slices[]): a value
                              * written in place into its concatenation */
} byocl_cl_buffer_kind;

/* Part of a scratch buffer that kernels see as a buffer of its own (clCreateSubBuffer):
 * `offset` is a multiple of the device's CL_DEVICE_MEM_BASE_ADDR_ALIGN. A slice holds one
 * value and runs on to the end of the value holding it (the slices after it, then that
 * value's slack), which a kernel may read past the value as past any scratch value
 * (a direct conv2d's last tile; what it reads there is dropped). */
typedef struct byocl_cl_slice {
    int scratch;             /* the scratch buffer */
    size_t offset, bytes;
} byocl_cl_slice;

typedef struct byocl_cl_buffer_ref {
    byocl_cl_buffer_kind kind;
    int index;
} byocl_cl_buffer_ref;

typedef enum byocl_cl_arg_kind {
    BYOCL_CL_ARG_BUFFER = 0, /* a __global pointer */
    BYOCL_CL_ARG_INT,        /* int (cl_int) */
    BYOCL_CL_ARG_FLOAT       /* float (cl_float) */
} byocl_cl_arg_kind;

typedef struct byocl_cl_arg {
    byocl_cl_arg_kind kind;
    byocl_cl_buffer_ref buffer; /* BUFFER */
    int32_t i;                  /* INT */
    float f;                    /* FLOAT */
} byocl_cl_arg;

typedef struct byocl_cl_launch {
    char kernel[64];         /* kernel function name in the program */
    int n_args;
    byocl_cl_arg *args;
    int work_dim;            /* 1..3 */
    size_t global[3];
    size_t local[3];         /* all 0: let the driver choose (NULL local size) */
    char label[96];          /* what it computes, e.g. "nn.conv2d+nn.relu %3" (profiles) */
    double flops;
} byocl_cl_launch;

/* Where one kernel's text lies in the program. The program is a prelude (the source's
 * first prelude_length bytes) followed by the kernels' texts, each complete on its own
 * (its #defines undone at its end): the prelude with any subset of them is a program too,
 * which is how the runtime builds a large region in parts, in parallel
 * (runtime/opencl/opencl_build_parts.c). */
typedef struct byocl_cl_kernel_span {
    char name[64];           /* the kernel function's name */
    size_t offset, length;   /* its text: source[offset, offset + length) */
    double build_cost;       /* its compile time relative to a simple kernel's */
} byocl_cl_kernel_span;

typedef struct byocl_cl_plan {
    char *source;            /* OpenCL C 1.2 program text (malloc'ed) */
    size_t prelude_length;   /* the text before the first kernel */
    int n_kernels;
    byocl_cl_kernel_span *kernels; /* each distinct kernel once, in source order (malloc'ed) */
    char *build_options;     /* e.g. "-cl-std=CL1.2 -cl-mad-enable -w" (malloc'ed) */
    int n_inputs, n_outputs;
    int n_scratch;
    size_t *scratch_bytes;   /* per scratch buffer (the intra-region buffer plan) */
    int n_slices;
    byocl_cl_slice *slices;  /* parts of scratch buffers (malloc'ed) */
    int n_constants;
    byocl_tensor **constants; /* references; uploaded once per runtime module */
    int n_launches;
    byocl_cl_launch *launches;
    /* Added by the code generator, for people reading the plan (clg_plan_text): */
    char *region;            /* the region function's name (malloc'ed) */
    char *buffers_text;      /* one line per input, output, constant and scratch buffer:
                              * its size and what it holds (malloc'ed) */
} byocl_cl_plan;

/* Frees the plan and drops its references to the constants (codegen/opencl/cl_plan.c).
 * NULL is fine. */
void clg_plan_free(byocl_cl_plan *plan);

#endif
