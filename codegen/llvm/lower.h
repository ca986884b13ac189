/* Internal interface of the LLVM host backend (libbyocl_llvm.so): fusion planning, the
 * kernel-building context and the lowering of each op family.
 *
 *   plan.c            fusion groups (no LLVM)
 *   backend.c         the byocl_host_backend_i: plan, compile, release, error
 *   jit.c             host TargetMachine, the O2 pipeline, ORC LLJIT
 *   lower_util.c      the kernel builder: function shell, loops, typed loads/stores,
 *                     conversions, constants, errors
 *   lower_elemwise.c  elementwise trees (standalone, and as conv/dense epilogues)
 *   lower_conv.c      nn.conv2d: packed weights, vector register tiles;
 *                     nn.conv2d_transpose: a direct loop nest
 *   lower_dense.c     nn.dense: packed weights, vector register tiles;
 *                     nn.batch_matmul: a direct loop nest
 *   lower_pool.c      max/avg/global pooling, softmax, log_softmax, layer_norm, the
 *                     reductions (sum, mean, ...)
 *   lower_transform.c copies (reshape, squeeze, ...), transpose, concatenate, split
 *   lower_index.c     strided_slice, broadcast_to, take, gather, arange, shape_of, trilu,
 *                     cumsum, gather_nd, scatter_elements, scatter_nd, topk
 *   lower_image.c     image.resize2d
 *   runtime.c         C helpers that generated code calls */
#ifndef BYOCL_LLVM_LOWER_H
#define BYOCL_LLVM_LOWER_H

#include <stdbool.h>
#include <stdint.h>

#include <llvm-c/Core.h>

#include "backend/host_backend.h"
#include "ir/ir_impl.h"
#include "jit.h"
#include "ops/op_impl.h"

/* ------------------------------------------------------------ plan (plan.c) */

/* How the planner treats an op. */
typedef enum lop_class {
    LOP_ANCHOR,   /* nn.conv2d(_transpose), nn.dense: start a group that epilogues join */
    LOP_ELEMWISE, /* same-shape elementwise ops: join their producer's group */
    LOP_OTHER     /* pools, softmax, transforms, ...: a group of their own */
} lop_class;

lop_class lop_classify(const char *op);

/* The value a tensor-typed view names: GetItem and Tuple nodes resolved to the node that
 * produces the tensor. `field` is -1 for a tensor-typed node, else a flattened field of
 * `node`'s tuple type. */
byocl_value_ref lv_resolve(const byocl_function *fn, int node, int field);
/* The tensor values an argument node stands for (one for a tensor, one per flattened
 * field for a tuple), resolved; returns their count (at most `max`). */
int lv_flatten(const byocl_function *fn, int node, byocl_value_ref *out, int max);
bool lv_equal(byocl_value_ref a, byocl_value_ref b);

byocl_status llvm_group(const byocl_function *fn, const int *compute, int n_compute,
                        byocl_host_group **groups, int *n_groups, byocl_error *err);

/* -------------------------------------------------------- kernel constants */

/* Constant data that kernels reach through their ctx (an array of pointers): constant
 * tensors of the model (kept alive by a reference) and packed weights (owned). */
typedef struct kconsts {
    void **ptrs;           /* ptrs[0] is the error slot of the backend state, ptrs[1] the
                              group's index (so that the code of equal groups is equal) */
    int n, cap;
    byocl_tensor **keep;   /* references held while the kernel lives */
    int n_keep, cap_keep;
    void **owned;          /* buffers freed with the kernel */
    int n_owned, cap_owned;
} kconsts;

/* Registers a pointer for ctx (returns its index, -1 when out of memory); `keep` and
 * `owned` as for lw_const_ptr. */
int kconsts_add(kconsts *k, const void *data, byocl_tensor *keep, void *owned);
void kconsts_free(kconsts *k);

/* ---------------------------------------------------------- kernel builder */

/* Kernel error codes (returned by kernels; the backend turns them into messages). */
enum {
    KERR_DIV_ZERO = 1,     /* integer division by zero */
    KERR_NOMEM = 2,        /* scratch memory could not be allocated */
    KERR_EMPTY_MEAN = 3,   /* integer mean over no elements */
    KERR_EMPTY_REDUCE = 4, /* max, min, argmax or argmin over no elements */
    KERR_INDEX = 5,        /* take, gather, gather_nd, the scatters: an index out of range */
};

struct llvm_state;

/* One kernel under construction: the function `int32 name(void *const *args, int64 task,
 * void *ctx)` whose body is an inner function with the data pointers as noalias
 * parameters (inlined by the optimizer). */
typedef struct lw {
    jit *j;
    const jit_host *host;
    LLVMContextRef C;
    LLVMModuleRef M;
    LLVMBuilderRef B;
    LLVMBuilderRef B_entry;    /* positioned in the entry block: allocas, ctx loads */
    struct llvm_state *state;
    const byocl_function *fn;
    const byocl_host_group *grp;
    int group_index;
    kconsts *consts;
    byocl_error *err;
    byocl_status status;       /* sticky: the first failure of a helper */

    LLVMValueRef body;         /* the inner function */
    LLVMValueRef task;         /* i64 */
    LLVMValueRef ctx;          /* ptr to the kconsts pointer array */
    LLVMValueRef *data;        /* inputs then outputs: data pointers */
    LLVMBasicBlockRef entry;
    LLVMBasicBlockRef fail;    /* returns the code in fail_code */
    LLVMValueRef fail_code;    /* i32 alloca */
    int64_t n_tasks;           /* set by the lowering (default 1) */
    int threads;               /* the executor's pool size (sizes n_tasks) */

    LLVMTypeRef t_void, t_i1, t_i8, t_i16, t_i32, t_i64, t_f16, t_f32, t_f64, t_ptr;
    int vf;                    /* floats per vector */
    LLVMTypeRef t_vf;          /* <vf x float> */
} lw;

/* Creates the kernel shell for group `g`; the builder is left in the inner function's
 * first block. */
byocl_status lw_begin(lw *w, const char *name);
/* Closes the inner function (returns 0), the entry block and the outer wrapper;
 * returns w->status. */
byocl_status lw_end(lw *w);
/* Records a failure (first one wins) and returns it. */
byocl_status lw_failed(lw *w, byocl_status st);

/* Data pointer of a value the group reads or writes; NULL when it is not an argument. */
LLVMValueRef lw_input(lw *w, byocl_value_ref v);
LLVMValueRef lw_output(lw *w, byocl_value_ref v);
/* Pointer to constant data through ctx (registered in w->consts; `keep` is a tensor the
 * state keeps a reference to, `owned` a malloc'ed buffer the state frees; either may be
 * NULL). */
LLVMValueRef lw_const_ptr(lw *w, const void *data, byocl_tensor *keep, void *owned);
LLVMValueRef lw_const_ptr_at(lw *w, int k);
/* An int64 the kernel reads from its ctx, not from its code: kernels that differ only in
 * such values lower to the same code and share one function (backend.c). For sizes
 * that only bound loops or scale offsets; LLVM cannot fold them. */
LLVMValueRef lw_ctx_int(lw *w, int64_t value);
/* Element 0 of a constant tensor as a compute-type constant (exact, any dtype). */
LLVMValueRef lw_const_scalar(lw *w, const byocl_tensor *t);
/* The data of value v, wherever it lives: an argument or a constant node; NULL with
 * err set otherwise. */
LLVMValueRef lw_value_ptr(lw *w, byocl_value_ref v);
/* Stack slot in the entry block. */
LLVMValueRef lw_alloca(lw *w, LLVMTypeRef t, const char *name);
LLVMValueRef lw_alloca_array(lw *w, LLVMTypeRef t, int64_t n, unsigned align, const char *name);

/* Integer constants. */
LLVMValueRef lw_i64(lw *w, int64_t v);
LLVMValueRef lw_i32(lw *w, int32_t v);
/* a * b + c on i64 values (constants folded by the builder). */
LLVMValueRef lw_mad(lw *w, LLVMValueRef a, int64_t b, LLVMValueRef c);

/* Counted loops: for (i = begin; i < end; i += step). The induction variable is an
 * alloca that SROA turns into a phi. */
typedef struct lw_loop {
    LLVMValueRef slot, end;
    int64_t step;
    LLVMBasicBlockRef cond, body, exit;
    bool no_unroll;        /* set before lw_for_end: keep LLVM from unrolling it */
    bool fold_tail;        /* set before lw_for_end: vectorize it with a masked last
                              iteration instead of a scalar remainder (short rows) */
    int interleave;        /* set before lw_for_end: vector iterations the vectorized
                              loop runs side by side (0: the vectorizer's choice) */
} lw_loop;
LLVMValueRef lw_for(lw *w, lw_loop *l, LLVMValueRef begin, LLVMValueRef end, int64_t step,
                    const char *name);
void lw_for_end(lw *w, lw_loop *l);
/* if (cond) { ... } */
typedef struct lw_if {
    LLVMBasicBlockRef then, done;
} lw_if;
void lw_if_begin(lw *w, lw_if *f, LLVMValueRef cond, const char *name);
void lw_if_end(lw *w, lw_if *f);
/* A task count for `work` units of about `grain` units each, at most `max_tasks`, at
 * least 1 (and 1 when the machine runs one thread or the work is one grain at most);
 * else a multiple of the threads where max_tasks allows: the thread pool gives each
 * thread an equal share of consecutive tasks, and a share of one task more left a thread
 * idle (mobilenet_v2, two threads: its depthwise convs in lanes of 5, 7 and 3 tasks,
 * and the one of 1 onto 7x7, idled a thread 7-32 us each; the model ran 2% faster). */
int64_t lw_pick_tasks(lw *w, int64_t work, int64_t grain, int64_t max_tasks);
/* The range [lo, hi) of this task when `total` items are split over w->n_tasks. */
void lw_task_range(lw *w, int64_t total, LLVMValueRef *lo, LLVMValueRef *hi);
/* The same, with `total` and the task count read from ctx (lw_ctx_int): for the outermost
 * loop of a kernel, so that kernels differing only in its length share one function. */
void lw_task_range_ctx(lw *w, int64_t total, LLVMValueRef *lo, LLVMValueRef *hi);
/* Branches to the failure exit with `code` when cond is true. */
void lw_fail_if(lw *w, LLVMValueRef cond, int code);

/* ---- dtypes. Values are computed in a "compute type" per dtype: float for float32 and
 * float16 (rounded to half after every op, as the reference stores each op's result),
 * double for float64, the dtype's own integer width for integers (i8 for int8, uint8 and
 * bool; bool is 0/1). */
LLVMTypeRef lw_mem_type(lw *w, byocl_dtype d);     /* element type in memory */
LLVMTypeRef lw_calc_type(lw *w, byocl_dtype d);    /* compute type */
bool lw_is_float(byocl_dtype d);                   /* float32, float16, float64 */
/* float32 and float16: computed in float, the dtypes of the vectorized float schedules
 * (<vf x float> registers); float64 takes the direct loop nests, accumulating in double. */
bool lw_is_single_float(byocl_dtype d);
bool lw_is_unsigned(byocl_dtype d);                /* uint8 ... uint64, bool */
LLVMValueRef lw_load(lw *w, LLVMValueRef ptr, byocl_dtype d, LLVMValueRef index);
void lw_store(lw *w, LLVMValueRef ptr, byocl_dtype d, LLVMValueRef index, LLVMValueRef v);
/* float16: the value rounded to half and back; else v. */
LLVMValueRef lw_round(lw *w, LLVMValueRef v, byocl_dtype d);
/* A compute-type value of dtype `from` converted to dtype `to` exactly as byocl's cast:
 * through double for anything involving a float (float16 nearest even, truncation
 * toward zero with wrap-around), integer wrap or zero/sign extension, bool = (v != 0). */
LLVMValueRef lw_convert(lw *w, LLVMValueRef v, byocl_dtype from, byocl_dtype to);
/* A double converted to dtype `to` as byocl_tensor_set stores it. */
LLVMValueRef lw_from_double(lw *w, LLVMValueRef v, byocl_dtype to);
/* A compute-type value as double (exact). */
LLVMValueRef lw_to_double(lw *w, LLVMValueRef v, byocl_dtype from);
/* Sums of products of dtype d, as the reference kernels accumulate them: in double for
 * the float dtypes, in int64 for the integers (the direct conv and dense loop nests). */
LLVMTypeRef lw_acc_type(lw *w, byocl_dtype d);
/* sum + x * y in lw_acc_type(d), x and y compute-type values of d. */
LLVMValueRef lw_acc_mul_add(lw *w, byocl_dtype d, LLVMValueRef sum, LLVMValueRef x,
                            LLVMValueRef y);
/* An accumulator of dtype d's sums converted to dtype `to` as byocl_tensor_set would. */
LLVMValueRef lw_acc_to(lw *w, byocl_dtype d, LLVMValueRef acc, byocl_dtype to);
/* Constant `v` in dtype d's compute type, converted as byocl_tensor_set would. */
LLVMValueRef lw_const_of(lw *w, byocl_dtype d, double v);
/* Intrinsic call helpers. */
LLVMValueRef lw_intrinsic(lw *w, const char *name, LLVMTypeRef *overloads, int n_overloads,
                          LLVMValueRef *args, int n_args);
LLVMValueRef lw_call_rt(lw *w, const char *name, LLVMTypeRef ret, LLVMTypeRef *params,
                        int n_params, LLVMValueRef *args);
/* Vector helpers for <vf x float>. */
LLVMValueRef lw_splat(lw *w, LLVMValueRef scalar, int n);
/* v, through an empty inline asm: the same value, of which LLVM knows nothing (it cannot
 * prove two such values equal or related). */
LLVMValueRef lw_opaque(lw *w, LLVMValueRef v);
/* Where a prefetch brings its line: L1 (and L2), or only as far as L2. */
typedef enum { LW_PREFETCH_L1, LW_PREFETCH_L2 } lw_prefetch_level;
/* A hint to bring the cache line of float base[index] into `level` for reading; any
 * index, inside the buffer or not (a prefetch never faults). */
void lw_prefetch_f32(lw *w, LLVMValueRef base, LLVMValueRef index, lw_prefetch_level level);
LLVMValueRef lw_vload(lw *w, LLVMValueRef ptr, LLVMValueRef index, int n, unsigned align);
void lw_vstore(lw *w, LLVMValueRef ptr, LLVMValueRef index, LLVMValueRef v, unsigned align);
LLVMValueRef lw_fma(lw *w, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c);
/* <n x float> of the row elements row[first + i*stride] for i < n (float32 or float16
 * data), where lanes whose column lies outside [0, width) are `fill` and never read: one
 * masked load of n*stride floats, de-interleaved by a shuffle when stride > 1 (depthwise
 * convs and pools, whose padding these lanes are). With stride 2 the lanes come in the
 * order of the cheapest shuffle, the same for every load of n lanes: values computed lane
 * by lane from them go through lw_row_in_order once, before they are stored. */
LLVMValueRef lw_row_load(lw *w, LLVMValueRef row, byocl_dtype d, LLVMValueRef first,
                         int64_t stride, int64_t width, int n, double fill);
/* The same lanes where all n*stride columns from `first` lie inside the row: one plain
 * load (rows' inner segments, which need neither the mask nor its arithmetic). */
LLVMValueRef lw_row_load_inside(lw *w, LLVMValueRef row, byocl_dtype d, LLVMValueRef first,
                                int64_t stride, int n);
/* A vector computed lane by lane from row loads of `stride`, its lanes put in the order
 * of their columns (first + i*stride in lane i). */
LLVMValueRef lw_row_in_order(lw *w, LLVMValueRef v, int64_t stride);
/* Whether every load of a row segment's outputs [ox0, ox0 + n) lies inside a row of
 * `width`: over taps 0..kernel-1 (output o reads input column o*stride + k*dilation -
 * pad), each vector's load of VF*stride columns whole. */
LLVMValueRef lw_row_span_inside(lw *w, LLVMValueRef ox0, int64_t n, int64_t stride,
                                int64_t kernel, int64_t dilation, int64_t pad, int64_t width);
/* taps(ctx, true) where `inside` holds, taps(ctx, false) elsewhere: a row segment's
 * loads, plain inside the row, masked where it has padding. */
typedef void (*lw_taps_fn)(lw *w, const void *ctx, bool inside);
void lw_row_taps(lw *w, LLVMValueRef inside, lw_taps_fn taps, const void *ctx);
/* body(ox0) for each segment of `seg` outputs of a row of `len`: the first and the last
 * with a constant start, so that their loads' masks and inside tests fold (a row's edges
 * are where the padding is), those between in a loop. */
typedef byocl_status (*lw_segment_fn)(lw *w, void *ctx, LLVMValueRef ox0);
byocl_status lw_row_segments(lw *w, int64_t len, int64_t seg, lw_segment_fn body, void *ctx);
/* Memory copy of `bytes` (an i64 value). */
void lw_memcpy(lw *w, LLVMValueRef dst, LLVMValueRef src, LLVMValueRef bytes);

/* ------------------------------------------------- elementwise trees (lower_elemwise.c) */

/* Where the elementwise evaluator is: the index of the element being computed in the
 * space of the group's root shape (rank dims; full or coalesced, see ew_space), and
 * for conv/dense epilogues the anchor node with its accumulated value. */
typedef struct ew_space {
    int rank;                       /* original rank of the root shape */
    int64_t dims[BYOCL_MAX_RANK];
    int crank;                      /* coalesced rank */
    int64_t cdims[BYOCL_MAX_RANK];
    int clast[BYOCL_MAX_RANK];      /* last original dim of each coalesced dim */
} ew_space;

typedef struct ew_env {
    lw *w;
    const ew_space *space;
    LLVMValueRef cidx[BYOCL_MAX_RANK]; /* index along each coalesced dim */
    int anchor;                        /* node id, -1 for none */
    LLVMValueRef anchor_value;         /* compute type of the anchor's dtype */
    bool exact;                        /* batch_norm in double, exactly as the reference */
} ew_env;

/* The value the group's tree computes for `v` at the env's index (compute type of v's
 * dtype). */
byocl_status ew_eval(ew_env *e, byocl_value_ref v, LLVMValueRef *out);
/* The space of a group's root shape, coalesced so that adjacent dims merge wherever no
 * operand the tree reads breaks contiguity; `coalesce` false keeps every dim. */
byocl_status ew_space_init(lw *w, const byocl_shape *root, int anchor, bool coalesce,
                           ew_space *s);
/* The group's root value (its first output that is not a batch_norm pass-through). */
byocl_value_ref ew_root(lw *w);
/* False when the group's only outputs are batch_norm pass-throughs (the statistics are
 * used, the normalized data is not): then there is nothing else to compute. */
bool ew_has_root(lw *w);
/* Stores the pass-through outputs of batch_norm (fields 1 and 2: copies of the moving
 * statistics) when the group has them; emitted for task 0 only. */
byocl_status ew_store_passthrough(lw *w);

/* exp of float32 lanes (a float or a vector of them), in float, straight-line code that
 * the loop vectorizer vectorizes; within 1 ulp (docs/host-codegen.md, Numerics). */
LLVMValueRef ew_exp_f32(lw *w, LLVMValueRef x);

/* Lowering entry points, one per op family; each emits the whole kernel body. */
byocl_status lower_elemwise_group(lw *w);
byocl_status lower_conv(lw *w, int node);
byocl_status lower_dense(lw *w, int node);
byocl_status lower_dense_conv(lw *w, int node, const ew_space *s);
byocl_status lower_batch_matmul(lw *w, int node);
byocl_status lower_pool(lw *w, int node);
byocl_status lower_reduce(lw *w, int node);
byocl_status lower_softmax(lw *w, int node); /* and nn.log_softmax */
byocl_status lower_layer_norm(lw *w, int node);
byocl_status lower_copy(lw *w, int node);
byocl_status lower_transpose(lw *w, int node);
byocl_status lower_concatenate(lw *w, int node);
byocl_status lower_split(lw *w, int node);
/* The op group "index": strided_slice, broadcast_to, take, gather, arange, shape_of,
 * trilu, cumsum, gather_nd, scatter_elements, scatter_nd, topk. */
byocl_status lower_index_op(lw *w, int node);
/* The op group "image": image.resize2d. */
byocl_status lower_resize2d(lw *w, int node);

/* The shape and dtype of a node's tensor value (field 0 of a tuple). */
const byocl_type *lw_value_type(lw *w, byocl_value_ref v);
const byocl_node *lw_node(lw *w, int id);
/* Is node id part of the group being lowered? */
bool lw_in_group(lw *w, int id);

#endif
