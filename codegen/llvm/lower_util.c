/* The kernel builder: the function shell every host kernel shares, loops, typed loads
 * and stores, byocl's conversions, constants reached through ctx, failures. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/DebugInfo.h>

#include "lower.h"
#include "runtime.h"

/* ------------------------------------------------------------ constants */

static bool grow(void **items, int *cap, int n, size_t size)
{
    if (n < *cap)
        return true;
    int c = *cap ? *cap * 2 : 8;
    void *p = realloc(*items, (size_t)c * size);
    if (!p)
        return false;
    *items = p;
    *cap = c;
    return true;
}

int kconsts_add(kconsts *k, const void *data, byocl_tensor *keep, void *owned)
{
    if (!grow((void **)&k->ptrs, &k->cap, k->n, sizeof *k->ptrs) ||
        (keep && !grow((void **)&k->keep, &k->cap_keep, k->n_keep, sizeof *k->keep)) ||
        (owned && !grow((void **)&k->owned, &k->cap_owned, k->n_owned, sizeof *k->owned))) {
        free(owned);
        return -1;
    }
    if (keep)
        k->keep[k->n_keep++] = byocl_tensor_ref(keep);
    if (owned)
        k->owned[k->n_owned++] = owned;
    k->ptrs[k->n] = (void *)data;
    return k->n++;
}

void kconsts_free(kconsts *k)
{
    for (int i = 0; i < k->n_keep; i++)
        byocl_tensor_unref(k->keep[i]);
    for (int i = 0; i < k->n_owned; i++)
        free(k->owned[i]);
    free(k->keep);
    free(k->owned);
    free(k->ptrs);
    memset(k, 0, sizeof *k);
}

/* ------------------------------------------------------------ shell */

byocl_status lw_failed(lw *w, byocl_status st)
{
    if (w->status == BYOCL_OK)
        w->status = st;
    return w->status;
}

const byocl_node *lw_node(lw *w, int id) { return &w->fn->nodes[id]; }

bool lw_in_group(lw *w, int id)
{
    for (int i = 0; i < w->grp->n_nodes; i++)
        if (w->grp->nodes[i] == id)
            return true;
    return false;
}

const byocl_type *lw_value_type(lw *w, byocl_value_ref v)
{
    return host_value_ref_type(w->fn, v);
}

static LLVMAttributeRef enum_attr(lw *w, const char *name, uint64_t value)
{
    unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
    return LLVMCreateEnumAttribute(w->C, kind, value);
}

byocl_status lw_begin(lw *w, const char *name)
{
    w->C = jit_context(w->j);
    w->M = jit_module(w->j);
    w->status = BYOCL_OK;
    w->n_tasks = 1;
    w->t_void = LLVMVoidTypeInContext(w->C);
    w->t_i1 = LLVMInt1TypeInContext(w->C);
    w->t_i8 = LLVMInt8TypeInContext(w->C);
    w->t_i16 = LLVMInt16TypeInContext(w->C);
    w->t_i32 = LLVMInt32TypeInContext(w->C);
    w->t_i64 = LLVMInt64TypeInContext(w->C);
    w->t_f16 = LLVMHalfTypeInContext(w->C);
    w->t_f32 = LLVMFloatTypeInContext(w->C);
    w->t_f64 = LLVMDoubleTypeInContext(w->C);
    w->t_ptr = LLVMPointerTypeInContext(w->C, 0);
    w->vf = jit_vector_floats(w->j);
    w->t_vf = LLVMVectorType(w->t_f32, (unsigned)w->vf);

    int n_data = w->grp->n_inputs + w->grp->n_outputs;
    LLVMTypeRef *params = malloc((size_t)(n_data + 2) * sizeof *params);
    w->data = calloc((size_t)(n_data > 0 ? n_data : 1), sizeof *w->data);
    if (!params || !w->data) {
        free(params);
        return lw_failed(w, byocl_error_set(w->err, BYOCL_ERR_NOMEM, "out of memory"));
    }
    for (int i = 0; i < n_data; i++)
        params[i] = w->t_ptr;
    params[n_data] = w->t_i64;
    params[n_data + 1] = w->t_ptr;
    char body_name[96];
    snprintf(body_name, sizeof body_name, "%s.body", name);
    LLVMTypeRef body_ty = LLVMFunctionType(w->t_i32, params, (unsigned)n_data + 2, 0);
    free(params);
    w->body = LLVMAddFunction(w->M, body_name, body_ty);
    LLVMSetLinkage(w->body, LLVMInternalLinkage);
    jit_set_function_attrs(w->j, w->body);
    LLVMAddAttributeAtIndex(w->body, LLVMAttributeFunctionIndex, enum_attr(w, "alwaysinline", 0));
    for (int i = 0; i < n_data; i++) {
        w->data[i] = LLVMGetParam(w->body, (unsigned)i);
        LLVMAddAttributeAtIndex(w->body, (unsigned)i + 1, enum_attr(w, "noalias", 0));
        LLVMAddAttributeAtIndex(w->body, (unsigned)i + 1, enum_attr(w, "nocapture", 0));
        if (i < w->grp->n_inputs)
            LLVMAddAttributeAtIndex(w->body, (unsigned)i + 1, enum_attr(w, "readonly", 0));
    }
    w->task = LLVMGetParam(w->body, (unsigned)n_data);
    w->ctx = LLVMGetParam(w->body, (unsigned)n_data + 1);

    w->entry = LLVMAppendBasicBlockInContext(w->C, w->body, "entry");
    w->fail = LLVMAppendBasicBlockInContext(w->C, w->body, "fail");
    LLVMBasicBlockRef start = LLVMAppendBasicBlockInContext(w->C, w->body, "start");
    w->B = LLVMCreateBuilderInContext(w->C);
    w->B_entry = LLVMCreateBuilderInContext(w->C);
    LLVMPositionBuilderAtEnd(w->B_entry, w->entry);
    w->fail_code = LLVMBuildAlloca(w->B_entry, w->t_i32, "fail_code");

    /* fail: record (group << 8 | code) in the state's error slot, return the code. The
     * group's index comes from ctx[1], not the code, so equal groups share their code. */
    LLVMPositionBuilderAtEnd(w->B, w->fail);
    LLVMValueRef code = LLVMBuildLoad2(w->B, w->t_i32, w->fail_code, "code");
    LLVMValueRef slot = LLVMBuildLoad2(w->B, w->t_ptr, w->ctx, "error_slot");
    LLVMValueRef one = lw_i64(w, 1);
    LLVMValueRef group = LLVMBuildPtrToInt(
        w->B,
        LLVMBuildLoad2(w->B, w->t_ptr, LLVMBuildInBoundsGEP2(w->B, w->t_ptr, w->ctx, &one, 1, ""),
                       "group"),
        w->t_i32, "");
    LLVMValueRef tagged =
        LLVMBuildOr(w->B, LLVMBuildShl(w->B, group, lw_i32(w, 8), ""), code, "");
    LLVMValueRef st = LLVMBuildStore(w->B, tagged, slot);
    LLVMSetOrdering(st, LLVMAtomicOrderingMonotonic);
    LLVMSetAlignment(st, 4);
    LLVMBuildRet(w->B, code);

    LLVMPositionBuilderAtEnd(w->B, start);
    return w->status;
}

byocl_status lw_end(lw *w)
{
    LLVMBuildRet(w->B, lw_i32(w, 0));
    /* The entry block falls through to "start", the block after "fail". */
    LLVMBasicBlockRef start = LLVMGetNextBasicBlock(w->fail);
    LLVMPositionBuilderAtEnd(w->B_entry, w->entry);
    LLVMBuildBr(w->B_entry, start);

    /* The outer function: int32 name(void *const *args, int64 task, void *ctx). */
    int n_data = w->grp->n_inputs + w->grp->n_outputs;
    LLVMTypeRef params[3] = {w->t_ptr, w->t_i64, w->t_ptr};
    LLVMTypeRef outer_ty = LLVMFunctionType(w->t_i32, params, 3, 0);
    const char *body_name = LLVMGetValueName(w->body);
    char name[96];
    snprintf(name, sizeof name, "%.*s", (int)(strlen(body_name) - strlen(".body")), body_name);
    LLVMValueRef outer = LLVMAddFunction(w->M, name, outer_ty);
    jit_set_function_attrs(w->j, outer);
    LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(w->C, outer, "entry");
    LLVMPositionBuilderAtEnd(w->B, bb);
    LLVMValueRef *args = malloc((size_t)(n_data + 2) * sizeof *args);
    if (!args) {
        LLVMDisposeBuilder(w->B);
        LLVMDisposeBuilder(w->B_entry);
        return lw_failed(w, byocl_error_set(w->err, BYOCL_ERR_NOMEM, "out of memory"));
    }
    LLVMValueRef argv = LLVMGetParam(outer, 0);
    for (int i = 0; i < n_data; i++) {
        LLVMValueRef idx = lw_i64(w, i);
        LLVMValueRef p = LLVMBuildInBoundsGEP2(w->B, w->t_ptr, argv, &idx, 1, "");
        args[i] = LLVMBuildLoad2(w->B, w->t_ptr, p, "arg");
    }
    args[n_data] = LLVMGetParam(outer, 1);
    args[n_data + 1] = LLVMGetParam(outer, 2);
    LLVMValueRef ret = LLVMBuildCall2(w->B, LLVMGlobalGetValueType(w->body), w->body, args,
                                      (unsigned)n_data + 2, "");
    LLVMBuildRet(w->B, ret);
    free(args);
    LLVMDisposeBuilder(w->B);
    LLVMDisposeBuilder(w->B_entry);
    w->B = w->B_entry = NULL;
    return w->status;
}

/* ------------------------------------------------------------ arguments */

static LLVMValueRef find_ref(lw *w, const byocl_value_ref *list, int n, int base,
                             byocl_value_ref v)
{
    for (int i = 0; i < n; i++)
        if (lv_equal(list[i], v))
            return w->data[base + i];
    return NULL;
}

LLVMValueRef lw_input(lw *w, byocl_value_ref v)
{
    return find_ref(w, w->grp->inputs, w->grp->n_inputs, 0, v);
}

LLVMValueRef lw_output(lw *w, byocl_value_ref v)
{
    return find_ref(w, w->grp->outputs, w->grp->n_outputs, w->grp->n_inputs, v);
}

LLVMValueRef lw_const_ptr(lw *w, const void *data, byocl_tensor *keep, void *owned)
{
    for (int i = 2; i < w->consts->n && !owned; i++) /* past the error slot and index */
        if (w->consts->ptrs[i] == data)
            return lw_const_ptr_at(w, i);
    int k = kconsts_add(w->consts, data, keep, owned);
    if (k < 0) {
        lw_failed(w, byocl_error_set(w->err, BYOCL_ERR_NOMEM, "out of memory"));
        return LLVMConstNull(w->t_ptr);
    }
    return lw_const_ptr_at(w, k);
}

LLVMValueRef lw_const_ptr_at(lw *w, int k)
{
    LLVMValueRef idx = lw_i64(w, k);
    LLVMValueRef p = LLVMBuildInBoundsGEP2(w->B_entry, w->t_ptr, w->ctx, &idx, 1, "");
    LLVMValueRef v = LLVMBuildLoad2(w->B_entry, w->t_ptr, p, "const");
    unsigned md = LLVMGetMDKindIDInContext(w->C, "invariant.load", 14);
    LLVMSetMetadata(v, md, LLVMMetadataAsValue(w->C, LLVMMDNodeInContext2(w->C, NULL, 0)));
    return v;
}

LLVMValueRef lw_ctx_int(lw *w, int64_t value)
{
    int k = kconsts_add(w->consts, (const void *)(intptr_t)value, NULL, NULL);
    if (k < 0) {
        lw_failed(w, byocl_error_set(w->err, BYOCL_ERR_NOMEM, "out of memory"));
        return lw_i64(w, value);
    }
    return LLVMBuildPtrToInt(w->B_entry, lw_const_ptr_at(w, k), w->t_i64, "");
}

LLVMValueRef lw_value_ptr(lw *w, byocl_value_ref v)
{
    LLVMValueRef p = lw_input(w, v);
    if (!p)
        p = lw_output(w, v);
    if (p)
        return p;
    const byocl_node *n = lw_node(w, v.node);
    if (n->kind == BYOCL_NODE_CONSTANT && n->value)
        return lw_const_ptr(w, byocl_tensor_cdata(n->value), n->value, NULL);
    lw_failed(w, byocl_error_set(w->err, BYOCL_ERR_INVALID,
                                 "kernel %s reads node %d, which is neither an input nor a "
                                 "constant (a planner bug)",
                                 w->grp->name, v.node));
    return LLVMConstNull(w->t_ptr);
}

LLVMValueRef lw_alloca(lw *w, LLVMTypeRef t, const char *name)
{
    return LLVMBuildAlloca(w->B_entry, t, name);
}

LLVMValueRef lw_alloca_array(lw *w, LLVMTypeRef t, int64_t n, unsigned align, const char *name)
{
    LLVMValueRef a = LLVMBuildAlloca(w->B_entry, LLVMArrayType2(t, (uint64_t)n), name);
    LLVMSetAlignment(a, align);
    return a;
}

/* ------------------------------------------------------------ integers, loops */

LLVMValueRef lw_i64(lw *w, int64_t v) { return LLVMConstInt(w->t_i64, (unsigned long long)v, 1); }
LLVMValueRef lw_i32(lw *w, int32_t v) { return LLVMConstInt(w->t_i32, (unsigned long long)v, 1); }

LLVMValueRef lw_mad(lw *w, LLVMValueRef a, int64_t b, LLVMValueRef c)
{
    LLVMValueRef m = b == 1 ? a : LLVMBuildNSWMul(w->B, a, lw_i64(w, b), "");
    return c ? LLVMBuildNSWAdd(w->B, m, c, "") : m;
}

LLVMValueRef lw_for(lw *w, lw_loop *l, LLVMValueRef begin, LLVMValueRef end, int64_t step,
                    const char *name)
{
    l->no_unroll = l->fold_tail = false;
    l->interleave = 0;
    l->slot = lw_alloca(w, w->t_i64, name);
    l->end = end;
    l->step = step;
    LLVMBuildStore(w->B, begin, l->slot);
    l->cond = LLVMAppendBasicBlockInContext(w->C, w->body, "for.cond");
    l->body = LLVMAppendBasicBlockInContext(w->C, w->body, "for.body");
    l->exit = LLVMAppendBasicBlockInContext(w->C, w->body, "for.exit");
    LLVMBuildBr(w->B, l->cond);
    LLVMPositionBuilderAtEnd(w->B, l->cond);
    LLVMValueRef i = LLVMBuildLoad2(w->B, w->t_i64, l->slot, name);
    LLVMBuildCondBr(w->B, LLVMBuildICmp(w->B, LLVMIntSLT, i, end, ""), l->body, l->exit);
    LLVMPositionBuilderAtEnd(w->B, l->body);
    return LLVMBuildLoad2(w->B, w->t_i64, l->slot, name);
}

static LLVMMetadataRef loop_hint(lw *w, const char *key, bool with_true)
{
    LLVMMetadataRef items[2] = {LLVMMDStringInContext2(w->C, key, strlen(key)),
                                LLVMValueAsMetadata(LLVMConstInt(w->t_i1, 1, 0))};
    return LLVMMDNodeInContext2(w->C, items, with_true ? 2 : 1);
}

/* !llvm.loop !{!self, hints...} on a loop's back edge. unroll.disable: loops around
 * vectorized ones would otherwise be unrolled into many copies of them, which costs
 * compile time and gains nothing. vectorize.predicate.enable: a masked last iteration
 * instead of a scalar remainder, for rows shorter than a few vectors (AVX-512 masks make
 * it cheap). */
static void set_loop_hints(lw *w, LLVMValueRef branch, const lw_loop *l)
{
    LLVMMetadataRef tmp = LLVMTemporaryMDNode(w->C, NULL, 0);
    LLVMMetadataRef items[4] = {tmp};
    int n = 1;
    if (l->no_unroll)
        items[n++] = loop_hint(w, "llvm.loop.unroll.disable", false);
    if (l->fold_tail && w->vf >= 16)
        items[n++] = loop_hint(w, "llvm.loop.vectorize.predicate.enable", true);
    if (l->interleave > 0) {
        static const char key[] = "llvm.loop.interleave.count";
        LLVMMetadataRef count[2] = {LLVMMDStringInContext2(w->C, key, sizeof key - 1),
                                    LLVMValueAsMetadata(lw_i32(w, l->interleave))};
        items[n++] = LLVMMDNodeInContext2(w->C, count, 2);
    }
    LLVMMetadataRef loop = LLVMMDNodeInContext2(w->C, items, (size_t)n);
    LLVMMetadataReplaceAllUsesWith(tmp, loop); /* also frees tmp */
    unsigned kind = LLVMGetMDKindIDInContext(w->C, "llvm.loop", 9);
    LLVMSetMetadata(branch, kind, LLVMMetadataAsValue(w->C, loop));
}

void lw_for_end(lw *w, lw_loop *l)
{
    LLVMValueRef i = LLVMBuildLoad2(w->B, w->t_i64, l->slot, "");
    LLVMBuildStore(w->B, LLVMBuildNSWAdd(w->B, i, lw_i64(w, l->step), ""), l->slot);
    LLVMValueRef br = LLVMBuildBr(w->B, l->cond);
    if (l->no_unroll || l->fold_tail || l->interleave > 0)
        set_loop_hints(w, br, l);
    LLVMPositionBuilderAtEnd(w->B, l->exit);
}

void lw_if_begin(lw *w, lw_if *f, LLVMValueRef cond, const char *name)
{
    f->then = LLVMAppendBasicBlockInContext(w->C, w->body, name);
    f->done = LLVMAppendBasicBlockInContext(w->C, w->body, "endif");
    LLVMBuildCondBr(w->B, cond, f->then, f->done);
    LLVMPositionBuilderAtEnd(w->B, f->then);
}

void lw_if_end(lw *w, lw_if *f)
{
    LLVMBuildBr(w->B, f->done);
    LLVMPositionBuilderAtEnd(w->B, f->done);
}

static void task_range(lw *w, LLVMValueRef tot, LLVMValueRef nt, LLVMValueRef *lo,
                       LLVMValueRef *hi)
{
    if (w->n_tasks <= 1) {
        *lo = lw_i64(w, 0);
        *hi = tot;
        return;
    }
    LLVMValueRef next = LLVMBuildNSWAdd(w->B, w->task, lw_i64(w, 1), "");
    *lo = LLVMBuildSDiv(w->B, LLVMBuildNSWMul(w->B, w->task, tot, ""), nt, "lo");
    *hi = LLVMBuildSDiv(w->B, LLVMBuildNSWMul(w->B, next, tot, ""), nt, "hi");
}

void lw_task_range(lw *w, int64_t total, LLVMValueRef *lo, LLVMValueRef *hi)
{
    task_range(w, lw_i64(w, total), lw_i64(w, w->n_tasks), lo, hi);
}

void lw_task_range_ctx(lw *w, int64_t total, LLVMValueRef *lo, LLVMValueRef *hi)
{
    task_range(w, lw_ctx_int(w, total), w->n_tasks <= 1 ? NULL : lw_ctx_int(w, w->n_tasks), lo,
               hi);
}

void lw_fail_if(lw *w, LLVMValueRef cond, int code)
{
    LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(w->C, w->body, "ok");
    LLVMBasicBlockRef bad = LLVMAppendBasicBlockInContext(w->C, w->body, "bad");
    LLVMBuildCondBr(w->B, cond, bad, ok);
    LLVMPositionBuilderAtEnd(w->B, bad);
    LLVMBuildStore(w->B, lw_i32(w, code), w->fail_code);
    LLVMBuildBr(w->B, w->fail);
    LLVMPositionBuilderAtEnd(w->B, ok);
}

/* ------------------------------------------------------------ dtypes */

bool lw_is_float(byocl_dtype d)
{
    return lw_is_single_float(d) || d == BYOCL_FLOAT64 || d == BYOCL_BFLOAT16;
}
bool lw_is_single_float(byocl_dtype d) { return d == BYOCL_FLOAT32 || d == BYOCL_FLOAT16; }
bool lw_is_unsigned(byocl_dtype d) { return byocl_dtype_is_unsigned(d); }

/* A 64-bit integer dtype: its values are their own int64 (bits), with no extension. */
static bool is_int64_wide(byocl_dtype d) { return d == BYOCL_INT64 || d == BYOCL_UINT64; }

LLVMTypeRef lw_mem_type(lw *w, byocl_dtype d)
{
    switch (d) {
    case BYOCL_FLOAT32: return w->t_f32;
    case BYOCL_FLOAT16: return w->t_f16;
    case BYOCL_INT32:
    case BYOCL_UINT32: return w->t_i32;
    case BYOCL_INT64:
    case BYOCL_UINT64: return w->t_i64;
    case BYOCL_INT16:
    case BYOCL_UINT16:
    case BYOCL_BFLOAT16: return w->t_i16; /* its bits (see lw_load, lw_store) */
    case BYOCL_FLOAT64: return w->t_f64;
    default: return w->t_i8;
    }
}

LLVMTypeRef lw_calc_type(lw *w, byocl_dtype d)
{
    return d == BYOCL_FLOAT16 || d == BYOCL_BFLOAT16 ? w->t_f32 : lw_mem_type(w, d);
}

/* A bfloat16's bits as the float32 they are the top half of. */
static LLVMValueRef bf16_to_f32(lw *w, LLVMValueRef bits)
{
    LLVMValueRef x = LLVMBuildShl(w->B, LLVMBuildZExt(w->B, bits, w->t_i32, ""), lw_i32(w, 16), "");
    return LLVMBuildBitCast(w->B, x, w->t_f32, "");
}

/* A float32's bfloat16 bits, as byocl_f32_to_bf16: truncated, a NaN kept a quiet NaN. */
static LLVMValueRef f32_to_bf16(lw *w, LLVMValueRef f)
{
    LLVMValueRef hi = LLVMBuildLShr(w->B, LLVMBuildBitCast(w->B, f, w->t_i32, ""), lw_i32(w, 16), "");
    LLVMValueRef nan = LLVMBuildFCmp(w->B, LLVMRealUNO, f, f, "");
    hi = LLVMBuildSelect(w->B, nan, LLVMBuildOr(w->B, hi, lw_i32(w, 0x40), ""), hi, "");
    return LLVMBuildTrunc(w->B, hi, w->t_i16, "");
}

LLVMValueRef lw_load(lw *w, LLVMValueRef ptr, byocl_dtype d, LLVMValueRef index)
{
    LLVMTypeRef t = lw_mem_type(w, d);
    LLVMValueRef p = LLVMBuildInBoundsGEP2(w->B, t, ptr, &index, 1, "");
    LLVMValueRef v = LLVMBuildLoad2(w->B, t, p, "");
    LLVMSetAlignment(v, (unsigned)byocl_dtype_size(d));
    if (d == BYOCL_FLOAT16)
        v = LLVMBuildFPExt(w->B, v, w->t_f32, "");
    if (d == BYOCL_BFLOAT16)
        v = bf16_to_f32(w, v);
    return v;
}

void lw_store(lw *w, LLVMValueRef ptr, byocl_dtype d, LLVMValueRef index, LLVMValueRef v)
{
    LLVMTypeRef t = lw_mem_type(w, d);
    if (d == BYOCL_FLOAT16)
        v = LLVMBuildFPTrunc(w->B, v, w->t_f16, "");
    if (d == BYOCL_BFLOAT16)
        v = f32_to_bf16(w, v);
    LLVMValueRef p = LLVMBuildInBoundsGEP2(w->B, t, ptr, &index, 1, "");
    LLVMValueRef s = LLVMBuildStore(w->B, v, p);
    LLVMSetAlignment(s, (unsigned)byocl_dtype_size(d));
}

LLVMValueRef lw_round(lw *w, LLVMValueRef v, byocl_dtype d)
{
    if (d == BYOCL_BFLOAT16) /* scalars only: the vector schedules take float32 and float16 */
        return bf16_to_f32(w, f32_to_bf16(w, v));
    if (d != BYOCL_FLOAT16)
        return v;
    LLVMTypeRef half = w->t_f16, f = w->t_f32;
    LLVMTypeRef vt = LLVMTypeOf(v);
    if (LLVMGetTypeKind(vt) == LLVMVectorTypeKind) {
        unsigned n = LLVMGetVectorSize(vt);
        half = LLVMVectorType(w->t_f16, n);
        f = vt;
    }
    return LLVMBuildFPExt(w->B, LLVMBuildFPTrunc(w->B, v, half, ""), f, "");
}

LLVMValueRef lw_to_double(lw *w, LLVMValueRef v, byocl_dtype from)
{
    if (from == BYOCL_FLOAT64)
        return v;
    if (lw_is_float(from))
        return LLVMBuildFPExt(w->B, v, w->t_f64, "");
    if (lw_is_unsigned(from))
        return LLVMBuildUIToFP(w->B, v, w->t_f64, "");
    return LLVMBuildSIToFP(w->B, v, w->t_f64, "");
}

/* Wraps an int64 to dtype d's integer width (bool: v != 0). */
static LLVMValueRef int_to_dtype(lw *w, LLVMValueRef v64, byocl_dtype d)
{
    if (d == BYOCL_BOOL)
        return LLVMBuildZExt(w->B, LLVMBuildICmp(w->B, LLVMIntNE, v64, lw_i64(w, 0), ""),
                             w->t_i8, "");
    if (is_int64_wide(d))
        return v64;
    return LLVMBuildTrunc(w->B, v64, lw_mem_type(w, d), "");
}

LLVMValueRef lw_from_double(lw *w, LLVMValueRef v, byocl_dtype to)
{
    if (to == BYOCL_FLOAT64)
        return v;
    if (to == BYOCL_FLOAT32)
        return LLVMBuildFPTrunc(w->B, v, w->t_f32, "");
    if (to == BYOCL_FLOAT16 || to == BYOCL_BFLOAT16)
        return lw_round(w, LLVMBuildFPTrunc(w->B, v, w->t_f32, ""), to);
    if (to == BYOCL_BOOL)
        return LLVMBuildZExt(w->B, LLVMBuildFCmp(w->B, LLVMRealUNE, v, LLVMConstReal(w->t_f64, 0), ""),
                             w->t_i8, "");
    /* |v| < 9.2e18 (false for NaN and inf) converts inline; the rest calls the runtime
     * helper, which wraps modulo 2^64 and maps NaN to 0. */
    LLVMTypeRef f64 = w->t_f64;
    LLVMValueRef mag = lw_intrinsic(w, "llvm.fabs", &f64, 1, &v, 1);
    LLVMValueRef inside = LLVMBuildFCmp(w->B, LLVMRealOLT, mag, LLVMConstReal(w->t_f64, 9.2e18), "");
    LLVMValueRef slot = lw_alloca(w, w->t_i64, "int");
    lw_if f;
    LLVMValueRef safe = LLVMBuildSelect(w->B, inside, v, LLVMConstReal(w->t_f64, 0), "");
    LLVMBuildStore(w->B, LLVMBuildFPToSI(w->B, safe, w->t_i64, ""), slot);
    lw_if_begin(w, &f, LLVMBuildNot(w->B, inside, ""), "wrap");
    LLVMBuildStore(w->B, lw_call_rt(w, "byocl_llvm_rt_f64_to_int", w->t_i64, &f64, 1, &v), slot);
    lw_if_end(w, &f);
    return int_to_dtype(w, LLVMBuildLoad2(w->B, w->t_i64, slot, ""), to);
}

LLVMValueRef lw_convert(lw *w, LLVMValueRef v, byocl_dtype from, byocl_dtype to)
{
    if (from == to)
        return v;
    if (lw_is_float(from) || lw_is_float(to))
        return lw_from_double(w, lw_to_double(w, v, from), to);
    LLVMValueRef v64 = v;
    if (!is_int64_wide(from))
        v64 = lw_is_unsigned(from) ? LLVMBuildZExt(w->B, v, w->t_i64, "")
                                   : LLVMBuildSExt(w->B, v, w->t_i64, "");
    return int_to_dtype(w, v64, to);
}

LLVMTypeRef lw_acc_type(lw *w, byocl_dtype d) { return lw_is_float(d) ? w->t_f64 : w->t_i64; }

LLVMValueRef lw_acc_mul_add(lw *w, byocl_dtype d, LLVMValueRef sum, LLVMValueRef x,
                            LLVMValueRef y)
{
    if (lw_is_float(d))
        return LLVMBuildFAdd(w->B, sum,
                             LLVMBuildFMul(w->B, lw_to_double(w, x, d), lw_to_double(w, y, d), ""),
                             "");
    return LLVMBuildAdd(w->B, sum,
                        LLVMBuildMul(w->B, lw_convert(w, x, d, BYOCL_INT64),
                                     lw_convert(w, y, d, BYOCL_INT64), ""),
                        "");
}

LLVMValueRef lw_acc_to(lw *w, byocl_dtype d, LLVMValueRef acc, byocl_dtype to)
{
    return lw_is_float(d) ? lw_from_double(w, acc, to) : lw_convert(w, acc, BYOCL_INT64, to);
}

LLVMValueRef lw_const_of(lw *w, byocl_dtype d, double v)
{
    switch (d) {
    case BYOCL_FLOAT32: return LLVMConstReal(w->t_f32, (double)(float)v);
    case BYOCL_FLOAT16:
        return LLVMConstReal(w->t_f32, (double)byocl_f16_to_f32(byocl_f32_to_f16((float)v)));
    case BYOCL_BFLOAT16:
        return LLVMConstReal(w->t_f32, (double)byocl_bf16_to_f32(byocl_f32_to_bf16((float)v)));
    case BYOCL_FLOAT64: return LLVMConstReal(w->t_f64, v);
    case BYOCL_BOOL: return LLVMConstInt(w->t_i8, v != 0.0, 0);
    default: {
        int64_t i = rt_f64_to_int(v);
        return LLVMConstInt(lw_mem_type(w, d), (unsigned long long)i, 1);
    }
    }
}

/* ------------------------------------------------------------ calls */

LLVMValueRef lw_intrinsic(lw *w, const char *name, LLVMTypeRef *overloads, int n_overloads,
                          LLVMValueRef *args, int n_args)
{
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(w->M, id, overloads, (size_t)n_overloads);
    LLVMTypeRef ty = LLVMIntrinsicGetType(w->C, id, overloads, (size_t)n_overloads);
    return LLVMBuildCall2(w->B, ty, fn, args, (unsigned)n_args, "");
}

void lw_prefetch_f32(lw *w, LLVMValueRef base, LLVMValueRef index, lw_prefetch_level level)
{
    /* not inbounds: the index may lie past the buffer */
    LLVMValueRef ptr = LLVMBuildGEP2(w->B, w->t_f32, base, &index, 1, "");
    LLVMTypeRef t = LLVMTypeOf(ptr);
    /* locality 3: prefetcht0 (L1); 2: prefetcht1 (L2) */
    LLVMValueRef args[4] = {ptr, lw_i32(w, 0) /* read */,
                            lw_i32(w, level == LW_PREFETCH_L1 ? 3 : 2), lw_i32(w, 1) /* data */};
    lw_intrinsic(w, "llvm.prefetch", &t, 1, args, 4);
}

LLVMValueRef lw_opaque(lw *w, LLVMValueRef v)
{
    LLVMTypeRef t = LLVMTypeOf(v);
    LLVMTypeRef fn_t = LLVMFunctionType(t, &t, 1, 0);
    static const char constraints[] = "=r,0";
    LLVMValueRef as = LLVMGetInlineAsm(fn_t, "", 0, constraints, sizeof constraints - 1, 0, 0,
                                       LLVMInlineAsmDialectATT, 0);
    LLVMValueRef call = LLVMBuildCall2(w->B, fn_t, as, &v, 1, "");
    /* It neither throws nor touches memory (memory(none), encoded 0): only what LLVM
     * knows of the value is lost, loads and stores still move across it. */
    LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex, enum_attr(w, "nounwind", 0));
    LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex, enum_attr(w, "memory", 0));
    return call;
}

LLVMValueRef lw_call_rt(lw *w, const char *name, LLVMTypeRef ret, LLVMTypeRef *params,
                        int n_params, LLVMValueRef *args)
{
    LLVMTypeRef ty = LLVMFunctionType(ret, params, (unsigned)n_params, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(w->M, name);
    if (!fn) {
        fn = LLVMAddFunction(w->M, name, ty);
        LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, enum_attr(w, "nounwind", 0));
    }
    return LLVMBuildCall2(w->B, ty, fn, args, (unsigned)n_params, "");
}

/* ------------------------------------------------------------ vectors */

LLVMValueRef lw_splat(lw *w, LLVMValueRef scalar, int n)
{
    LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(scalar), (unsigned)n);
    LLVMValueRef v = LLVMBuildInsertElement(w->B, LLVMGetPoison(vt), scalar, lw_i32(w, 0), "");
    LLVMValueRef mask = LLVMConstNull(LLVMVectorType(w->t_i32, (unsigned)n));
    return LLVMBuildShuffleVector(w->B, v, LLVMGetPoison(vt), mask, "splat");
}

LLVMValueRef lw_vload(lw *w, LLVMValueRef ptr, LLVMValueRef index, int n, unsigned align)
{
    LLVMValueRef p = LLVMBuildInBoundsGEP2(w->B, w->t_f32, ptr, &index, 1, "");
    LLVMValueRef v = LLVMBuildLoad2(w->B, LLVMVectorType(w->t_f32, (unsigned)n), p, "");
    LLVMSetAlignment(v, align);
    return v;
}

void lw_vstore(lw *w, LLVMValueRef ptr, LLVMValueRef index, LLVMValueRef v, unsigned align)
{
    LLVMValueRef p = LLVMBuildInBoundsGEP2(w->B, w->t_f32, ptr, &index, 1, "");
    LLVMSetAlignment(LLVMBuildStore(w->B, v, p), align);
}

LLVMValueRef lw_fma(lw *w, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c)
{
    LLVMTypeRef t = LLVMTypeOf(a);
    LLVMValueRef args[3] = {a, b, c};
    return lw_intrinsic(w, "llvm.fma", &t, 1, args, 3);
}

void lw_memcpy(lw *w, LLVMValueRef dst, LLVMValueRef src, LLVMValueRef bytes)
{
    LLVMBuildMemCpy(w->B, dst, 1, src, 1, bytes);
}

LLVMValueRef lw_const_scalar(lw *w, const byocl_tensor *t)
{
    const void *p = byocl_tensor_cdata(t);
    byocl_dtype d = byocl_tensor_dtype(t);
    switch (d) {
    case BYOCL_FLOAT32: return LLVMConstReal(w->t_f32, (double)*(const float *)p);
    case BYOCL_FLOAT16: return LLVMConstReal(w->t_f32, (double)byocl_f16_to_f32(*(const uint16_t *)p));
    case BYOCL_BFLOAT16: return LLVMConstReal(w->t_f32, (double)byocl_bf16_to_f32(*(const uint16_t *)p));
    case BYOCL_INT32: return LLVMConstInt(w->t_i32, (unsigned long long)*(const int32_t *)p, 1);
    case BYOCL_INT64: return LLVMConstInt(w->t_i64, (unsigned long long)*(const int64_t *)p, 1);
    case BYOCL_INT8: return LLVMConstInt(w->t_i8, (unsigned long long)*(const int8_t *)p, 1);
    case BYOCL_INT16: return LLVMConstInt(w->t_i16, (unsigned long long)*(const int16_t *)p, 1);
    case BYOCL_UINT16: return LLVMConstInt(w->t_i16, *(const uint16_t *)p, 0);
    case BYOCL_UINT32: return LLVMConstInt(w->t_i32, *(const uint32_t *)p, 0);
    case BYOCL_UINT64: return LLVMConstInt(w->t_i64, *(const uint64_t *)p, 0);
    case BYOCL_BOOL: return LLVMConstInt(w->t_i8, *(const uint8_t *)p != 0, 0);
    case BYOCL_FLOAT64: return LLVMConstReal(w->t_f64, *(const double *)p);
    default: return LLVMConstInt(w->t_i8, *(const uint8_t *)p, 0);
    }
}

int64_t lw_pick_tasks(lw *w, int64_t work, int64_t grain, int64_t max_tasks)
{
    if (w->threads <= 1 || work <= grain)
        return 1;
    int64_t n = work / (grain > 0 ? grain : 1), t = w->threads;
    n = (n + t - 1) / t * t; /* every thread an equal share */
    if (n > max_tasks)
        n = max_tasks >= t ? max_tasks / t * t : max_tasks;
    return n < 1 ? 1 : n;
}

/* The column (in strides from `first`) that lane i of a row load holds: the lane itself,
 * but with stride 2 and whole 128-bit groups of lanes, the order that one in-lane shuffle
 * of the two loaded vectors gives (vshufps: per 128 bits two columns from the first
 * vector, then two from the second), which saves a cross-lane permute per load. */
static int row_lane_column(int64_t stride, int n, int i)
{
    if (stride != 2 || n < 8 || n % 4 != 0)
        return i;
    int k = i / 4, m = i % 4;
    return m < 2 ? 2 * k + m : n / 2 + 2 * k + m - 2;
}

/* The lanes first + row_lane_column(i)*stride (i < n) of n*stride loaded floats: widened
 * from float16, de-interleaved by a shuffle when stride > 1. */
static LLVMValueRef row_lanes(lw *w, LLVMValueRef v, byocl_dtype d, int64_t stride, int n)
{
    LLVMBuilderRef B = w->B;
    int wide = (int)(n * stride);
    if (d == BYOCL_FLOAT16)
        v = LLVMBuildFPExt(B, v, LLVMVectorType(w->t_f32, (unsigned)wide), "");
    if (stride == 1)
        return v;
    LLVMValueRef picks[64];
    for (int i = 0; i < n; i++) {
        int64_t at = row_lane_column(stride, n, i) * stride;
        picks[i] = LLVMConstInt(w->t_i32, (unsigned long long)at, 0);
    }
    return LLVMBuildShuffleVector(B, v, LLVMGetPoison(LLVMTypeOf(v)),
                                  LLVMConstVector(picks, (unsigned)n), "");
}

LLVMValueRef lw_row_in_order(lw *w, LLVMValueRef v, int64_t stride)
{
    int n = (int)LLVMGetVectorSize(LLVMTypeOf(v));
    LLVMValueRef picks[64];
    bool moved = false;
    for (int i = 0; i < n; i++) {
        int column = row_lane_column(stride, n, i);
        picks[column] = LLVMConstInt(w->t_i32, (unsigned long long)i, 0);
        moved |= column != i;
    }
    return moved ? LLVMBuildShuffleVector(w->B, v, LLVMGetPoison(LLVMTypeOf(v)),
                                          LLVMConstVector(picks, (unsigned)n), "")
                 : v;
}

LLVMValueRef lw_row_load(lw *w, LLVMValueRef row, byocl_dtype d, LLVMValueRef first,
                         int64_t stride, int64_t width, int n, double fill)
{
    LLVMBuilderRef B = w->B;
    int wide = (int)(n * stride);
    LLVMValueRef lanes[256], fills[256];
    /* Columns in 32 bits (rows are far shorter than 2^31): half the mask arithmetic. */
    LLVMTypeRef it = width < INT32_MAX - wide ? w->t_i32 : w->t_i64;
    for (int j = 0; j < wide; j++) {
        lanes[j] = LLVMConstInt(it, (unsigned long long)j, 0);
        fills[j] = LLVMConstReal(d == BYOCL_FLOAT16 ? w->t_f16 : w->t_f32, fill);
    }
    LLVMValueRef first_c = it == w->t_i32 ? LLVMBuildTrunc(B, first, it, "") : first;
    LLVMValueRef cols = LLVMBuildNSWAdd(B, lw_splat(w, first_c, wide),
                                        LLVMConstVector(lanes, (unsigned)wide), "");
    LLVMValueRef mask = LLVMBuildICmp(B, LLVMIntULT, cols,
                                      lw_splat(w, LLVMConstInt(it, (unsigned long long)width, 0), wide),
                                      ""); /* 0 <= col < width, as one unsigned compare */
    /* The address of lane 0 may lie before the row (its lane is masked off): no inbounds. */
    LLVMValueRef addr = LLVMBuildGEP2(B, lw_mem_type(w, d), row, &first, 1, "");
    LLVMTypeRef et = d == BYOCL_FLOAT16 ? w->t_f16 : w->t_f32;
    LLVMTypeRef vt = LLVMVectorType(et, (unsigned)wide);
    LLVMTypeRef over[2] = {vt, w->t_ptr};
    LLVMValueRef args[4] = {addr, lw_i32(w, (int32_t)byocl_dtype_size(d)), mask,
                            LLVMConstVector(fills, (unsigned)wide)};
    return row_lanes(w, lw_intrinsic(w, "llvm.masked.load", over, 2, args, 4), d, stride, n);
}

LLVMValueRef lw_row_span_inside(lw *w, LLVMValueRef ox0, int64_t n, int64_t stride,
                                int64_t kernel, int64_t dilation, int64_t pad, int64_t width)
{
    LLVMBuilderRef B = w->B;
    LLVMValueRef first = lw_mad(w, ox0, stride, lw_i64(w, -pad));
    LLVMValueRef past = lw_mad(w, ox0, stride, lw_i64(w, n * stride + (kernel - 1) * dilation - pad));
    return LLVMBuildAnd(B, LLVMBuildICmp(B, LLVMIntSGE, first, lw_i64(w, 0), ""),
                        LLVMBuildICmp(B, LLVMIntSLE, past, lw_i64(w, width), ""), "inside");
}

void lw_row_taps(lw *w, LLVMValueRef inside, lw_taps_fn taps, const void *ctx)
{
    lw_if plain, masked;
    lw_if_begin(w, &plain, inside, "inside");
    taps(w, ctx, true);
    lw_if_end(w, &plain);
    lw_if_begin(w, &masked, LLVMBuildNot(w->B, inside, ""), "edge");
    taps(w, ctx, false);
    lw_if_end(w, &masked);
}

byocl_status lw_row_segments(lw *w, int64_t len, int64_t seg, lw_segment_fn body, void *ctx)
{
    int64_t last = (len - 1) / seg * seg; /* the last segment's start */
    byocl_status st = body(w, ctx, lw_i64(w, 0));
    if (st == BYOCL_OK && last > seg) {
        lw_loop l;
        LLVMValueRef ox0 = lw_for(w, &l, lw_i64(w, seg), lw_i64(w, last), seg, "ox0");
        st = body(w, ctx, ox0);
        l.no_unroll = true;
        lw_for_end(w, &l);
    }
    if (st == BYOCL_OK && last > 0)
        st = body(w, ctx, lw_i64(w, last));
    return st;
}

LLVMValueRef lw_row_load_inside(lw *w, LLVMValueRef row, byocl_dtype d, LLVMValueRef first,
                                int64_t stride, int n)
{
    LLVMTypeRef vt = LLVMVectorType(d == BYOCL_FLOAT16 ? w->t_f16 : w->t_f32, (unsigned)(n * stride));
    LLVMValueRef v = LLVMBuildLoad2(w->B, vt, LLVMBuildInBoundsGEP2(w->B, lw_mem_type(w, d), row, &first, 1, ""), "");
    LLVMSetAlignment(v, (unsigned)byocl_dtype_size(d));
    return row_lanes(w, v, d, stride, n);
}
