/* The OpenCL code generator: a partitioned region (a function of the module, typed, whose
 * parameters are the region's inputs and whose body is a tensor or a tuple of tensors,
 * its outputs) becomes one OpenCL C 1.2 program and the plans to run it (cl_plan.h).
 * docs/opencl-codegen.md explains the generated code. */
#ifndef BYOCL_CL_CODEGEN_H
#define BYOCL_CL_CODEGEN_H

#include <stdbool.h>
#include <stddef.h>

#include "cl_plan.h"

typedef struct byocl_cl_codegen_options {
    /* The device's compute units (CL_DEVICE_MAX_COMPUTE_UNITS); 0 means 2. Launches are
     * split into about 8 work-groups per compute unit. */
    int compute_units;
    /* The device's CL_DEVICE_MAX_WORK_GROUP_SIZE; 0 means 256 (which every device
     * allows). PoCL allows 4096, and its kernels run best with large work-groups. */
    size_t max_work_group_size;
    /* The device's CL_DEVICE_MAX_WORK_ITEM_SIZES; a 0 entry means max_work_group_size for
     * dimensions 0 and 1, and at most 64 for dimension 2 (the smallest common GPU limit). */
    size_t max_work_item_sizes[3];
    /* The device's CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT; 0 means 16. A conv2d
     * work-item computes one such vector of positions for each of its output channels,
     * so that its accumulators fit the vector registers (4, 8 or 16; other widths, GPUs'
     * 1 among them, get 16). */
    int vector_width;
    /* The device's CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes; 0 means 128 (OpenCL's least).
     * A value written in place into a concatenation (a slice of its buffer) must start at
     * a multiple of it; where one would not, the concatenation copies. */
    int mem_base_align;
    /* The device is a CPU (CL_DEVICE_TYPE_CPU): conv2d kernels prefetch their input a
     * few channels ahead (clg_conv_sched.prefetch_offset), which the cores' prefetchers
     * do not: each channel is a plane further on. */
    bool cpu;
    /* Every op its own kernel (no epilogue fusion): for debugging and tests. */
    bool no_fusion;
    /* Which tiles a conv2d takes (clg_conv_schedule): the cheaper by its cost (AUTO), or
     * always one kind where it can (for tests and measurements). */
    enum {
        BYOCL_CL_CONV_TILES_AUTO,
        BYOCL_CL_CONV_TILES_POSITIONS, /* kernels_cl/conv2d.cl */
        BYOCL_CL_CONV_TILES_CHANNELS   /* kernels_cl/conv2d_channels.cl */
    } conv_tiles;
    /* How a depthwise conv2d is tiled (clg_conv_schedule): whole planes
     * (kernels_cl/conv2d_depthwise_plane.cl) where it can, else rows (AUTO), or rows
     * always (kernels_cl/conv2d_depthwise.cl; for tests and measurements). */
    enum { BYOCL_CL_DEPTHWISE_AUTO, BYOCL_CL_DEPTHWISE_ROWS } depthwise_tiles;
    /* How a pool of stride 1 is tiled (nn.max_pool2d, nn.avg_pool2d): whole planes
     * (kernels_cl/pool2d_plane.cl) where it can, else rows (AUTO), or rows always
     * (kernels_cl/pool2d_rows.cl; for tests and measurements). */
    enum { BYOCL_CL_POOL_AUTO, BYOCL_CL_POOL_ROWS } pool_tiles;
} byocl_cl_codegen_options;

/* Generates the program and plans for `region`. `opt` may be NULL (defaults). Errors:
 * BYOCL_ERR_UNSUPPORTED naming the node when a call is not one clg_supports accepts
 * or the region's shape is outside what the kernels index (2^31 elements),
 * BYOCL_ERR_INVALID for an untyped or malformed region, BYOCL_ERR_NOMEM. */
byocl_status clg_codegen(const byocl_function *region, const byocl_cl_codegen_options *opt,
                         byocl_cl_plan **out, byocl_error *err);

/* May call `node` of `fn` (a Call of an op, types inferred) run in an OpenCL region? When
 * not, `why` says why ("op split is not supported by the opencl target", "dtype int64 is
 * not supported", ...). */
bool clg_supports(const byocl_function *fn, int node, char *why, size_t why_len);

/* The launch plan as text (what --emit writes to <symbol>.launch.txt): the region's
 * buffers (inputs, outputs, constants, the scratch buffer plan) and every launch with its
 * kernel, arguments, work sizes and the nodes it computes. Malloc'ed; NULL when out of
 * memory. */
char *clg_plan_text(const byocl_cl_plan *plan, const char *symbol);

/* Writes DIR/<symbol>.cl (the program) and DIR/<symbol>.launch.txt (clg_plan_text),
 * each atomically (a temporary file renamed into place). DIR must exist. */
byocl_status clg_plan_write(const byocl_cl_plan *plan, const char *dir, const char *symbol,
                            byocl_error *err);

#endif
