/* Internal interface of the OpenCL code generator, by file:
 *   cl_codegen.c   clg_codegen: the steps in order; buffers and constants
 *   cl_graph.c     region analysis: value roots, uses, fusion groups, region outputs
 *   cl_emit.c      the kernels of each group (and helper launches: layouts, packing)
 *   cl_emit_scan.c the kernels of cumsum, scatter_elements and scatter_nd
 *   cl_kernel.c    a kernel instance: parameters, #defines, template, launch
 *   cl_epilogue.c  elementwise steps as OpenCL C text (epilogues, elemwise kernels)
 *   cl_schedule.c  conv2d and dense schedules: tiles, input layout, weight packing
 *   cl_concat.c    concatenations in place: their inputs written into their slices
 *   cl_plan.c      plan free, buffer plan, launch plan text, --emit files
 *   cl_supports.c  which calls the target accepts
 *   cl_text.c      float literals, embedded templates
 * Program text grows in byocl_textbufs (runtime/base/textbuf.h). */
#ifndef BYOCL_CL_IMPL_H
#define BYOCL_CL_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ir_impl.h"
#include "cl_codegen.h"
#include "base/textbuf.h"

/* ------------------------------------------------------------- cl_text.c */

/* `v` as an OpenCL C float literal that reads back as (float)v: "0.25f", "(-1e-05f)",
 * "INFINITY", "NAN". */
void clg_float_literal(double v, char *buf, size_t len);

/* ------------------------------------------------------------- cl_graph.c */

/* What a group's first op is; it picks the kernel template. */
typedef enum clg_anchor {
    CLG_ANCHOR_CONV,      /* nn.conv2d */
    CLG_ANCHOR_CONV_TRANSPOSE, /* nn.conv2d_transpose */
    CLG_ANCHOR_DENSE,     /* nn.dense, nn.batch_matmul */
    CLG_ANCHOR_POOL,      /* nn.max_pool2d, nn.avg_pool2d, nn.global_avg_pool2d */
    CLG_ANCHOR_SOFTMAX,   /* nn.softmax, nn.log_softmax, nn.layer_norm: one slice per item */
    CLG_ANCHOR_REDUCE,    /* sum, mean, prod, max, min, argmax, argmin */
    CLG_ANCHOR_RESIZE,    /* image.resize2d */
    CLG_ANCHOR_ELEMWISE,  /* a chain of elementwise ops */
    CLG_ANCHOR_GATHER,    /* strided_slice, broadcast_to, take, gather */
    CLG_ANCHOR_TRANSPOSE, /* transpose */
    CLG_ANCHOR_CONCAT,    /* concatenate */
    CLG_ANCHOR_TOPK,      /* topk */
    CLG_ANCHOR_ONE_HOT,   /* one_hot */
    CLG_ANCHOR_CUMSUM,    /* cumsum */
    CLG_ANCHOR_SCATTER    /* scatter_elements, scatter_nd */
} clg_anchor;

/* A group: one kernel (plus helper launches) computing an anchor op and the chain of
 * elementwise ops fused after it. steps[] are those ops in order (for an elemwise anchor
 * steps[0] is the anchor itself); chain_arg[i] is the argument of steps[i] that carries
 * the chain's value. The group stores the value of `tail`. */
typedef struct clg_group {
    clg_anchor kind;
    int anchor;
    int n_steps;
    int *steps;
    int *chain_arg;
    int n_operands;         /* a bound on the epilogue's buffer parameters */
    int tail;
    bool in_place;          /* a concatenation whose inputs are written into its slices
                             * (cl_concat.c): no launch */
    /* A conv's prologue: the elementwise group whose steps the conv applies to each input
     * value it reads (that group's input), or -1; and that group's conv, -1 for every
     * other group. A prologue's group has no launch of its own (cl_graph.c says when). */
    int prologue;
    int prologue_of;
} clg_group;

/* Per node of the region. */
typedef struct clg_node_info {
    /* Tensor-valued nodes: the node whose storage holds the data (itself for parameters,
     * constants and computing calls; the source for reshape, batch_flatten and
     * TupleGetItem). batch_norm's node stands for its field 0. -1 for tuples. */
    int root;
    int uses;   /* roots: reads by op calls plus appearances among the region outputs */
    int group;  /* computing roots: the group that computes it, -1 otherwise */
    int buf;    /* stored roots (parameters, used constants, group tails): clg_buf id */
} clg_node_info;

/* The roots of the tensors each node stands for (a tuple: its fields, flattened). */
typedef struct clg_flat_table {
    int *start, *count; /* per node, into roots */
    int *roots;
    int n, cap;
} clg_flat_table;

/* Region analysis. */
typedef struct clg_graph {
    const byocl_function *fn;
    clg_node_info *info;     /* per node */
    int n_groups;
    clg_group *groups;       /* in launch order (by tail node id) */
    int n_outputs;
    int *outputs;           /* root of each flattened output */
    clg_flat_table flat;
} clg_graph;

/* Checks every call with clg_supports, resolves roots, counts uses, forms the groups
 * (fusing elementwise chains, and making some of them convs' prologues, unless
 * opt->no_fusion) and flattens the outputs. */
byocl_status clg_graph_build(const byocl_function *fn, const byocl_cl_codegen_options *opt,
                            clg_graph *g, byocl_error *err);
void clg_graph_free(clg_graph *g);
/* The tensor type of a tensor-valued node (batch_norm and topk's tuple: field 0); NULL
 * otherwise. */
const byocl_type *clg_tensor_type(const byocl_function *fn, int node);
/* The first TupleGetItem of field `field` of `node`'s tuple; -1 when there is none. */
int clg_item_of(const byocl_function *fn, int node, int field);
/* Roots of the tensors a node stands for (a tuple: its fields flattened); returns the
 * count, at most `max`. */
int clg_flatten(const clg_graph *g, int node, int *roots, int max);

/* ------------------------------------------------------------- generation state */

/* A buffer the launches use. Parameters, outputs and constants are bound by the runtime
 * module; scratch buffers get a place in the buffer plan (byocl_cl_plan.scratch_bytes). */
typedef struct clg_buf {
    byocl_cl_buffer_kind kind;
    int index;              /* INPUT/OUTPUT/CONSTANT index; SCRATCH: set by the plan */
    size_t bytes;
    int first, last;        /* SCRATCH: the launches that use it (-1 before any) */
    int within;             /* SCRATCH: the buffer this one is a slice of, at `offset`
                             * bytes (cl_concat.c); -1: a buffer of its own */
    size_t offset;
    char what[112];         /* for the launch plan: "%5 (nn.relu)", "packed weight of %3" */
} clg_buf;

/* A kernel written into the program: the digest of what makes it what it is (template,
 * parameters, #defines without their comments, work-group size), its name and where its
 * text lies. */
typedef struct clg_kernel_text {
    unsigned char digest[32];
    byocl_cl_kernel_span span;
} clg_kernel_text;

typedef struct clg_gen {
    const byocl_function *fn;
    byocl_cl_codegen_options opt;
    clg_graph graph;
    clg_buf *bufs;
    int n_bufs, cap_bufs;
    int *output_bufs;       /* clg_buf id of each region output */
    byocl_tensor **consts;  /* plan constants: owned references */
    int n_consts, cap_consts;
    byocl_cl_launch *launches; /* buffer args hold clg_buf ids until the buffer plan */
    int n_launches, cap_launches;
    byocl_textbuf src;
    size_t prelude_length; /* of src, before the first kernel */
    const char *templates_used[32]; /* names of templates already in src (17 exist) */
    int n_templates_used;
    clg_kernel_text *kernel_texts; /* the kernels in src, to launch again instead of repeating */
    int n_kernel_texts, cap_kernel_texts;
    byocl_error *err;
} clg_gen;

/* A new buffer; returns its id or -1 (out of memory, err set). */
int clg_gen_buf(clg_gen *gen, byocl_cl_buffer_kind kind, int index, size_t bytes,
               const char *what);
/* A new constant buffer holding `t` (the plan takes a reference); id or -1. */
int clg_gen_const(clg_gen *gen, byocl_tensor *t, const char *what);
/* The buffer of a stored root (a constant gets its buffer on first use); id or -1. */
int clg_gen_root_buf(clg_gen *gen, int root);
/* The buffer of a root stored as a slice of buffer `within` at `offset` bytes, without
 * slack (cl_concat.c); id or -1. */
int clg_gen_root_slice(clg_gen *gen, int root, int within, size_t offset);
/* The buffer that holds buffer `buf`, following slices out (`buf` itself when it is no
 * slice); *offset: where `buf` lies in it. */
int clg_gen_buf_outermost(const clg_gen *gen, int buf, size_t *offset);
/* The bytes of a root's tensor. */
size_t clg_gen_root_bytes(const clg_gen *gen, int root);
/* Elements readable past the end of a root's buffer (after clg_gen_root_buf): to the end
 * of the scratch buffer it is or lies in (its slack, and for a slice the slices after it);
 * 0 for inputs, outputs, constants and slices of them. */
int64_t clg_gen_root_slack(const clg_gen *gen, int root);
/* "%5 (nn.relu)": how the launch plan names a node. */
void clg_node_desc(const byocl_function *fn, int node, char *buf, size_t len);

/* ------------------------------------------------------------- cl_kernel.c */

/* A kernel instance being written: its parameters, #defines and launch. */
typedef struct clg_kernel {
    clg_gen *gen;
    char name[64];
    byocl_textbuf params;   /* KPARAMS */
    byocl_textbuf defines;  /* #define lines */
    char **macros;          /* names to #undef after the template */
    int n_macros, cap_macros;
    int n_args, n_operands;
    byocl_cl_arg args[48];  /* launch arguments, in parameter order */
    int n_params_by_buf;
    int param_buf[48];      /* clg_buf id of each buffer parameter (dedup of operands) */
    char param_name[48][8];
} clg_kernel;

/* Starts kernel "k<N>_<what>". */
void clg_kernel_begin(clg_kernel *k, clg_gen *gen, const char *what);
/* Adds a buffer parameter `name` for clg_buf `buf` holding `dtype` (float32 or float16;
 * int32 or int64 for an index tensor, resize2d's offset table or argmax's result;
 * read-only unless `output`), with its LD_<name>/ST_Y macros. */
void clg_kernel_buffer(clg_kernel *k, const char *name, int buf, byocl_dtype dtype, bool output);
/* Adds a buffer parameter that the kernel both writes and reads back (topk keeps its
 * sorted results there), with LD_<name>(i) and ST_<name>(i, v) macros. */
void clg_kernel_buffer_rw(clg_kernel *k, const char *name, int buf, byocl_dtype dtype);
/* Adds an int parameter `name` whose value the launch passes: a size that need not be a
 * constant of the kernel's text, so that layers differing only in it share one kernel
 * (compiled once: conv2d's input channels per group). */
void clg_kernel_int(clg_kernel *k, const char *name, int64_t value);
/* The parameter name for an epilogue operand in clg_buf `buf` ("e0", "e1", ...), added
 * on first use. NULL when the kernel has too many parameters. */
const char *clg_kernel_operand(clg_kernel *k, int buf, byocl_dtype dtype);
/* #define NAME VALUE (recorded for #undef). */
void clg_kernel_define(clg_kernel *k, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Whether macro `name` (without parameters) is defined for the instance so far. */
bool clg_kernel_has_macro(const clg_kernel *k, const char *name);
/* Writes the instance (comment, #defines, template, #undefs) into the program and appends
 * its launch with its work-group size: one-dimensional kernels (which check their index)
 * get `global` rounded up to whole work-groups, others must cover `global` exactly.
 * An instance equal to one already in the program (layers of one shape and epilogue)
 * is not written again: its launch names the earlier kernel, which the driver then
 * compiles once. Returns the launch index or -1 (err set). */
int clg_kernel_end(clg_kernel *k, const char *template_name, const char *label, int work_dim,
                  const size_t *global, double flops);
/* Frees an instance that will not be written (after an error). */
void clg_kernel_abandon(clg_kernel *k);

/* The most inputs a concatenation copies in one launch (kernels_cl/concatenate.cl): one
 * kernel per input count, so a concatenation of more inputs takes a launch per 4 of them
 * (densenet121's of up to 25 inputs: at most 4 kernels, of 1 to 4 inputs, in all). */
#define CLG_CONCAT_ONE_LAUNCH_MAX 4
/* Elements a work-item of that launch copies when all its data are float32: one cache
 * line, as one vector where the input has them all. One element a work-item made PoCL
 * run a work-group per 242 elements, and their dispatch cost more than the copies. */
#define CLG_CONCAT_VEC 16
/* The longest mean over innermost axes that global_pool2d.cl computes (in vectors, not
 * compensated); longer ones are reduce.cl's. */
#define CLG_PLANE_MEAN_MAX 4096

/* ------------------------------------------------------------- cl_epilogue.c */

/* Defines EPILOGUE(v, fi) for the group's steps from `first` on (the chain value v of
 * the element at flat index fi of the anchor's result), adding operands as kernel
 * parameters. For an elemwise anchor (first == 0) it also defines LD_FIRST(fi). */
byocl_status clg_epilogue_define(clg_kernel *k, const clg_group *grp, byocl_error *err);
/* The same, and, where every step and operand has a vector form, EPILOGUE_V(v, fi) on a
 * VEC of pt consecutive elements from fi (the kernel guarantees that they lie in one row
 * of the result, tile_axes 1, or in one plane of its last two axes, tile_axes 2) and
 * VSTORE_Y(fi, v), which stores them; a kernel tests `#ifdef EPILOGUE_V`. */
byocl_status clg_epilogue_define_tiles(clg_kernel *k, const clg_group *grp, int pt,
                                       int tile_axes, byocl_error *err);
/* The same with EPILOGUE_VC(v, fi) on a VEC of pt consecutive channels (axis 1) of one
 * position of the result, lane j element fi + j * S (S: the elements of one channel),
 * and SCATTER_Y(fi, v), which stores them; a kernel tests `#ifdef EPILOGUE_VC`. */
byocl_status clg_epilogue_define_channels(clg_kernel *k, const clg_group *grp, int pt,
                                          byocl_error *err);
/* Defines PROLOGUE(v, fi) and PROLOGUE_V(v, fi) for a conv's prologue group (cl_graph.c):
 * its steps on one input value, or on a VEC of pt values, of plane fi of the conv's input
 * (n * C + c; every operand is the same across a plane). */
byocl_status clg_prologue_define(clg_kernel *k, const clg_group *grp, int pt, byocl_error *err);
/* Whether elementwise step `op` has a vector form (not scalar-only). */
bool clg_step_vectorizes(const char *op);
/* True for the ops that can be chained as elementwise steps (cl_epilogue.c's table). */
bool clg_is_elemwise_op(const char *op);
/* True for the elementwise steps with two data arguments (either can be the chain). */
bool clg_is_binary_op(const char *op);
/* How many leading arguments of an elementwise step can carry the chain value: where's
 * three, a binary op's two, else one. */
int clg_chain_args(const char *op);
/* The C expression for the offset, in a tensor of shape `operand` broadcast to `out`
 * (numpy rules, or along `axis` of `out` when axis >= 0 and operand is a vector), of
 * the element at flat index `fi` of `out`. */
void clg_broadcast_offset(const byocl_shape *out, const byocl_shape *operand, int axis,
                         const char *fi, char *buf, size_t len);

/* ------------------------------------------------------------- cl_schedule.c */

/* Stride phases of a conv2d input are listed in the generated code (16: ViT-B/16's
 * patch embedding, a 16x16 conv with stride 16, whose phase planes are its patches). */
#define CLG_MAX_CONV_STRIDE 16

/* Cache lines a conv2d work-item prefetches per input channel at most (a 3x3 conv's
 * three rows of taps take 6 to 9); a conv whose taps touch more prefetches none. */
#define CLG_MAX_CONV_PREFETCH 12

/* conv2d: geometry, work split and input layout. */
typedef struct clg_conv_sched {
    int64_t n, c, h, w, oc, oh, ow, kh, kw;   /* shapes */
    int64_t groups, cin_g, oc_g;
    int64_t stride[2], dilation[2], pad[4];   /* pad: top, left, bottom, right */
    int pt, oct;             /* tile: grid positions x output channels per work-item */
    int row_pt;              /* a depthwise conv's row tile (clg_row_tile_width) */
    int row_ry;              /* and its output rows per work-item (clg_window_rows) */
    int64_t plane_vectors;   /* or vectors of its whole plane per work-item, else 0 */
    bool plane_unrolled;     /* and those listed one by one (else a rolled loop) */
    int64_t ob;              /* output-channel blocks per group */
    bool direct;             /* reads the input as it is (no layout launch) */
    bool in_place;           /* and checks each tap against its bounds (channel tiles) */
    int n_phase_y, n_phase_x;
    int64_t phase_y[CLG_MAX_CONV_STRIDE], phase_x[CLG_MAX_CONV_STRIDE]; /* phases used */
    int64_t hph, wph;        /* height and width of each phase plane (wph: grid width) */
    int64_t xc_stride;       /* floats between channels of the laid-out input */
    int64_t x_planes;        /* planes of the laid-out input, zero planes included */
    int64_t x_elems;         /* elements of the laid-out input */
    int64_t npt;             /* grid tiles per image */
    /* kernels_cl/conv2d_channels.cl's tile where the conv takes it (channels): rt x ct
     * output positions times oct output channels (one vector); nct column tiles per
     * output row, npt = row tiles * nct */
    bool channels;
    int rt, ct;
    int64_t nct;
    int ntaps;
    int64_t *tap_offset;     /* per tap (kh, kw order); malloc'ed */
    int64_t packed_elems;    /* packed weight: groups * ob * cin_g * ntaps * oct */
    /* Where the device is a CPU (byocl_cl_codegen_options.cpu): the input elements a
     * work-item prefetches at each input channel, offsets from its pointer into that
     * channel that reach a few channels ahead (conv_prefetch in cl_schedule.c) */
    int n_prefetch;
    int64_t prefetch_offset[CLG_MAX_CONV_PREFETCH];
} clg_conv_sched;

/* The schedule of conv2d `node` for the device `opt` describes (its vector_width, its
 * conv_tiles choice), whose input buffer has `x_slack` readable elements after its end
 * (clg_gen_root_buf's scratch buffers). */
byocl_status clg_conv_schedule(const byocl_function *fn, int node,
                              const byocl_cl_codegen_options *opt, int64_t x_slack,
                              clg_conv_sched *s, byocl_error *err);
void clg_conv_sched_free(clg_conv_sched *s);
/* A window of stride 1 over planes (a depthwise conv2d's, a pool's), for the kernels that
 * take a whole plane per work-item (conv2d_depthwise_plane.cl, pool2d_plane.cl): input
 * and output planes, window, dilation, top and left padding. */
typedef struct clg_plane {
    int64_t h, w, oh, ow, kh, kw, dh, dw, pad_t, pad_l;
} clg_plane;
/* What output p of a plane reads for tap (kh, kw): input p plus this offset (the same for
 * every output where the output rows are as long as the input rows). */
int64_t clg_plane_offset(const clg_plane *g, int64_t kh, int64_t kw);
/* The vectors (of the device's tile width, at least 8) of a plane whose window takes
 * planes, else 0: output rows as long as the input rows (so that a tap is one offset in
 * the flattened plane), planes of at least one vector, at most 7x7 taps, none reaching
 * further than the next plane (the planes between the first and the last load across
 * their edges). The stride must be 1 (the caller's test). */
int64_t clg_plane_vectors(const clg_plane *g, int vector_width);
/* A conv2d's plane geometry. */
clg_plane clg_conv_plane(const clg_conv_sched *s);
/* Whether the conv2d is depthwise (one input and one output channel per group) with few
 * enough taps for kernels_cl/conv2d_depthwise.cl, which reads its input in place, and
 * rows wide enough for its tiles (clg_row_tiles_pay). */
bool clg_conv_is_depthwise(const clg_conv_sched *s);
/* Output rows a work-item of a depthwise conv's or a pool's row tiles computes
 * (conv2d_depthwise.cl, pool2d_rows.cl; at most out_height): 4 for stride 1 (stride[0])
 * and up to 3 window rows (taps[0]) over rows with a tile inside them, else 2 (more rows
 * unroll more taps, and the taps of rows of edge tiles only are the costliest to
 * compile). Measured on mobilenet_v2 and efficientnet, PoCL: docs/opencl-codegen.md. */
int clg_window_rows(int pt, const int64_t stride[2], const int64_t taps[2],
                    const int64_t dilation[2], int64_t pad_left, int64_t width,
                    int64_t out_height, int64_t out_width);
/* Row tiles (conv2d_depthwise.cl, pool2d_rows.cl, conv2d_input.cl; conv2d.cl's tile starts
 * from it): PT outputs of a row per work-item, PT
 * the device's vector width (4, 8 or 16; 16 for any other width). */
int clg_tile_width(int vector_width);
/* The widest OpenCL vector: a stride-2 row tile of 16 loads two (32 columns). */
#define CLG_ROW_VECTOR_MAX 16
/* Whether a row tile loads each tap as vectors: stride 1 (one vector), or stride 2 (the
 * even lanes of a double-width load: one vector up to PT 8, two of 16 at PT 16, OpenCL's
 * widest); else lane by lane. */
bool clg_row_vector_load(int pt, int64_t stride);
/* Columns one tap of a row tile loads from its first: PT * stride for a vector load,
 * else (PT - 1) * stride + 1. */
int64_t clg_row_load_width(int pt, int64_t stride);
/* Outputs per row tile of a window op (`taps` wide, `dilation`, left padding `pad`,
 * `stride`) over rows of `width` giving `out_width`: the widest of the device's tile
 * width (clg_tile_width), its half, ... down to 8 whose edge tiles can shuffle and at
 * least half of whose tiles lie inside the row (an edge tile's shuffles cost: 28-wide
 * rows in 16-wide tiles are two edge tiles, and mobilenet_v2's 28x28 depthwise convs
 * took 0.097-0.099 ms in them against 0.081-0.082 in 8-wide tiles, PoCL on an Intel
 * Xeon; 4-wide tiles were slower everywhere, 0.107-0.113), or whose taps are two loads
 * (stride 2 at 16: their edge tiles add only a select, and mobilenet_v2's 56x56 -> 28x28
 * depthwise conv, two edge tiles a row, took 0.093 ms against 0.134 in 8-wide tiles);
 * else the widest down to 4
 * whose edge tiles shuffle (7x7 maps take 4-wide tiles where 8-wide ones would load lane
 * by lane), else the device's. */
int clg_row_tile_width(int vector_width, int64_t stride, int64_t taps, int64_t dilation,
                       int64_t pad, int64_t width, int64_t out_width);
/* Whether the tiles at a row's edges can read each tap with one vector load inside the
 * row and a constant shuffle (clg_row_vector_load, and a row at least one load wide). */
bool clg_row_edge_shuffles(int pt, int64_t stride, int64_t width);
/* The first output column of row tile t of a row of `out_width` outputs: t * pt, but the
 * last tile ends at the row's end, overlapping the one before it, where the row holds a
 * whole tile (TILE_X0 of conv2d_depthwise.cl and pool2d_rows.cl), so that every tile
 * stores whole vectors. */
int64_t clg_row_tile_first(int pt, int64_t out_width, int64_t t);
/* Whether row tile t of a window op (`taps` wide, `dilation`, left padding `pad`) over
 * rows of `width` giving `out_width` loads every tap inside the row. */
bool clg_row_tile_inside(int pt, int64_t stride, int64_t taps, int64_t dilation, int64_t pad,
                         int64_t width, int64_t out_width, int64_t t);
/* How many of the row tiles of such a window op giving `out_width` lie inside the row. */
int64_t clg_row_tiles_inside(int pt, int64_t stride, int64_t taps, int64_t dilation,
                             int64_t pad, int64_t width, int64_t out_width);
/* Whether row tiles pay for such a window op giving `out_width`: always when the edge
 * tiles shuffle (clg_row_edge_shuffles), else when at least two thirds of the tiles lie
 * inside the row. Edge tiles that load lane by lane do about ten times the work: on
 * mobilenet_v2 (PoCL, 8-wide tiles), the 14x14 and 7x7 depthwise convs (all edge tiles)
 * took 0.31-0.45 ms in such tiles against 0.15-0.21 ms laid out for conv2d.cl, the 28x28
 * ones (half) 0.41-0.44 against 0.37, the 56x56 ones (5 of 7) 0.74 against 0.89 and the
 * 112x112 ones 0.62-0.67 against 0.87-1.18. */
bool clg_row_tiles_pay(int pt, int64_t stride, int64_t taps, int64_t dilation, int64_t pad,
                       int64_t width, int64_t out_width);
/* Element of the (OIHW) weight that packed element i holds, or -1 for a zero. */
int64_t clg_conv_pack_source(const clg_conv_sched *s, int64_t i);
/* MOVE_INDEX body for the device version of clg_conv_pack_source. */
void clg_conv_pack_index_text(const clg_conv_sched *s, byocl_textbuf *t);
/* PHASE_Y(s) and PHASE_X(s) of kernels_cl/conv2d_input.cl: the row and column phase of
 * slot s. */
void clg_conv_phase_exprs(const clg_conv_sched *s, char *py, char *px, size_t len);

/* dense and batch_matmul: `batch` products of an R x K matrix of x by a K x U matrix of
 * w (dense: one product, w stored [U][K]; batch_matmul: tensor_a and tensor_b). */
typedef struct clg_dense_sched {
    int64_t r, k, u;         /* rows, input features (the reduced axis), units */
    int64_t batch;           /* products (1 for dense) */
    int64_t x_matrices, w_matrices; /* matrices stored in x and w: batch, or 1 for all */
    bool x_kr;               /* x's matrices are stored [K][R] (transpose_a) */
    bool w_ku;               /* w's matrices are stored [K][U] (transpose_b=False) */
    int ut, rt;              /* units x rows per work-item */
    int64_t ub, rb;          /* blocks */
    int64_t packed_elems;    /* w_matrices * ub * k * ut */
} clg_dense_sched;

byocl_status clg_dense_schedule(const byocl_function *fn, int node, clg_dense_sched *s,
                               byocl_error *err);
int64_t clg_dense_pack_source(const clg_dense_sched *s, int64_t i);
void clg_dense_pack_index_text(const clg_dense_sched *s, byocl_textbuf *t);

/* clg_conv_pack_source and clg_dense_pack_source for every packed element at once, from
 * a float32 weight: the same values, in nested loops without a division per element
 * (a build from the cache packs every constant weight again; resnet18 has 11 million). */
void clg_conv_pack_f32(const clg_conv_sched *s, const float *w, float *out);
void clg_dense_pack_f32(const clg_dense_sched *s, const float *w, float *out);

/* How a weight is packed: the source of each packed element (-1: a zero), that mapping
 * as the MOVE_INDEX text of a packing launch, and all of it at once from float32. */
typedef struct clg_packing {
    int64_t (*source)(const void *sched, int64_t i);
    void (*index_text)(const void *sched, byocl_textbuf *t);
    void (*pack_f32)(const void *sched, const float *w, float *out);
} clg_packing;

/* A float32 tensor of `n` elements whose element i is src's element source(i) (as a
 * float), or 0 where source gives -1: host-side weight packing. NULL on no memory. */
byocl_tensor *clg_pack_host(const byocl_tensor *src, int64_t n, const clg_packing *packing,
                           const void *sched, byocl_error *err);

/* ------------------------------------------------------------- cl_emit.c */

/* Emits the kernels of one group (and its helper launches). */
byocl_status clg_emit_group(clg_gen *gen, const clg_group *grp);
/* Copies region output k from the buffer that holds its value. */
byocl_status clg_emit_output_copy(clg_gen *gen, int k);
/* "nn.conv2d+nn.batch_norm+nn.relu (%3 to %6)": the group's ops, its first and last node. */
void clg_group_label(const clg_gen *gen, const clg_group *grp, char *buf, size_t len);
/* The estimated FLOPs of the group's ops (host_node_flops). */
double clg_group_flops(const clg_gen *gen, const clg_group *grp);
/* Writes the instance when st is BYOCL_OK (clg_kernel_end), else drops it; returns the
 * outcome. */
byocl_status clg_kernel_finish(clg_kernel *k, byocl_status st, const char *tmpl,
                               const char *label, int work_dim, const size_t *global,
                               double flops);
/* The offset, in an array whose axes have extents dims[] and strides strides[] (C order,
 * n of them; a stride may be 0 or negative), of the element at flat index `var` of those
 * axes: its digits times the strides ("0" when no stride is nonzero). */
void clg_digits_offset_text(const int64_t *dims, const int64_t *strides, int n,
                            const char *var, byocl_textbuf *t);

/* ------------------------------------------------------------- cl_emit_scan.c */

/* The gather form of a scatter loops, for each output element, over every update that
 * may target it: numel(output) x clg_scatter_candidates steps, where the host makes one
 * pass over the updates. Above this bound clg_supports refuses: 2^24 steps took 14 ms on
 * PoCL's two cores (2^30: 3.6-7 s) where the host took 0.2 ms (docs/opencl-codegen.md). */
#define CLG_MAX_SCATTER_STEPS ((int64_t)1 << 24)
/* The updates that may target one output element of scatter_elements or scatter_nd call
 * `n`: the indices' extent along the axis, or scatter_nd's index positions. */
int64_t clg_scatter_candidates(const byocl_function *fn, const byocl_node *n);
/* cumsum (kernels_cl/cumsum.cl) and scatter_elements and scatter_nd (kernels_cl/scatter.cl),
 * each with its epilogue. */
byocl_status clg_emit_cumsum(clg_gen *gen, const clg_group *grp);
byocl_status clg_emit_scatter(clg_gen *gen, const clg_group *grp);

/* ------------------------------------------------------------- cl_concat.c */

/* Concatenations in place: where a concatenation's inputs are group results (or earlier
 * concatenations in place) that can all be written into its slices, the groups write
 * them there and the concatenation has no launch (its group's in_place). Runs before any
 * group is emitted. */
byocl_status clg_concat_in_place(clg_gen *gen);

/* ------------------------------------------------------------- cl_plan.c */

/* Runs the buffer plan over gen's launches, then moves the program, launches, buffers
 * and constants into a new plan. */
byocl_status clg_plan_finish(clg_gen *gen, byocl_cl_plan **out);

#endif
