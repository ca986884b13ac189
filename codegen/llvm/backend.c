/* byocl_host_backend_llvm: plan fusion groups, lower every group into one LLVM module,
 * optimize it for this CPU and JIT-compile it; kernels keep their constants (model
 * constants, packed weights) in per-kernel ctx arrays owned by the state. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llvm_backend.h"
#include "lower.h"
#include "ops/reduce.h"

typedef struct llvm_state {
    jit *j;
    int n_groups;
    char (*names)[64];
    kconsts *consts;      /* per group */
    _Atomic int32_t error_slot; /* (group << 8) | code of the last failing kernel */
} llvm_state;

static void llvm_release(void *vstate)
{
    llvm_state *s = vstate;
    if (!s)
        return;
    jit_free(s->j);
    for (int g = 0; s->consts && g < s->n_groups; g++)
        kconsts_free(&s->consts[g]);
    free(s->consts);
    free(s->names);
    free(s);
}

static bool op_is(const byocl_node *n, const char *op) { return strcmp(n->op->name, op) == 0; }

/* Emits the kernel of one group. */
static byocl_status lower_group(lw *w)
{
    const byocl_host_group *g = w->grp;
    for (int i = 0; i < g->n_nodes; i++) {
        const byocl_node *n = lw_node(w, g->nodes[i]);
        if (op_is(n, "nn.conv2d") || op_is(n, "nn.conv2d_transpose") || op_is(n, "nn.conv3d") ||
            op_is(n, "nn.conv3d_transpose"))
            return lower_conv(w, g->nodes[i]);
        if (op_is(n, "nn.dense"))
            return lower_dense(w, g->nodes[i]);
    }
    int id = g->nodes[g->n_nodes - 1];
    const byocl_node *n = lw_node(w, id);
    if (lop_classify(n->op->name) == LOP_ELEMWISE)
        return lower_elemwise_group(w);
    if (g->n_nodes != 1)
        return lw_failed(w, byocl_error_set(w->err, BYOCL_ERR_INVALID,
                                            "group %s mixes %s with other ops (a planner bug)",
                                            g->name, n->op->name));
    static const struct {
        const char *op;
        byocl_status (*lower)(lw *, int);
    } table[] = {
        {"nn.max_pool2d", lower_pool},     {"nn.avg_pool2d", lower_pool},
        {"nn.global_avg_pool2d", lower_pool},
        {"nn.max_pool3d", lower_pool},     {"nn.avg_pool3d", lower_pool},
        {"nn.softmax", lower_softmax},     {"nn.log_softmax", lower_softmax},
        {"nn.layer_norm", lower_layer_norm}, {"reshape", lower_copy},
        {"squeeze", lower_copy},           {"expand_dims", lower_copy},
        {"nn.batch_flatten", lower_copy},  {"transpose", lower_transpose},
        {"nn.depth_to_space", lower_transpose}, {"nn.space_to_depth", lower_transpose},
        {"concatenate", lower_concatenate}, {"split", lower_split},
        {"strided_slice", lower_index_op}, {"broadcast_to", lower_index_op},
        {"take", lower_index_op},          {"gather", lower_index_op},
        {"arange", lower_index_op},        {"shape_of", lower_index_op},
        {"trilu", lower_index_op},         {"cumsum", lower_index_op},
        {"nn.batch_matmul", lower_batch_matmul},
        {"gather_nd", lower_index_op},     {"scatter_nd", lower_index_op},
        {"scatter_elements", lower_index_op}, {"topk", lower_index_op},
        {"one_hot", lower_index_op},       {"nn.pad", lower_index_op},
        {"image.resize2d", lower_resize2d},
    };
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++)
        if (op_is(n, table[k].op))
            return table[k].lower(w, id);
    if (ops_reduce_kind_of(n->op->name) != OPS_REDUCE_NONE) /* sum, mean, ..., argmin */
        return lower_reduce(w, id);
    return lw_failed(w, byocl_error_set(w->err, BYOCL_ERR_UNSUPPORTED,
                                        "the LLVM host backend cannot lower %s", n->op->name));
}

/* Modules compiled in parallel: one per 8 kernels (a thread pays off only with enough code
 * to compile), at most one per core, or at most BYOCL_LLVM_COMPILE_THREADS. */
static int compile_threads(int n_groups)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const char *want = getenv("BYOCL_LLVM_COMPILE_THREADS");
    if (want && atoi(want) >= 1)
        cores = atoi(want);
    int parts = n_groups / 8;
    if (parts > cores)
        parts = (int)cores;
    return parts < 1 ? 1 : parts;
}

/* Kernels already lowered, by their key (jit_kernel_key): a group whose code equals an
 * earlier one's uses that one's function with its own ctx (its own weights), so repeated
 * blocks of a model (a transformer's layers) compile once. A key writes the kernel's
 * module as bitcode; so each function gets a cheaper signature first, and only kernels
 * whose signatures meet write their keys. */
typedef struct kernel_key {
    void *bytes; /* NULL until written */
    size_t size;
} kernel_key;

typedef struct kernel_keys {
    LLVMValueRef *body; /* per group with a function of its own: its body, else NULL */
    uint64_t *sig;      /* per such group: its signature (code_signature) */
    kernel_key *key;    /* per such group: its key once written */
} kernel_keys;

static uint64_t fnv1a_step(uint64_t h, uint64_t v)
{
    for (int b = 0; b < 8; b++, v >>= 8)
        h = (h ^ (v & 0xff)) * 1099511628211ull;
    return h;
}

/* Each instruction's opcode, type, operand count and integer constants, block by block
 * (the constants tell apart kernels of one op on different shapes): equal code (equal
 * keys) has equal signatures, so different signatures mean different code. */
static uint64_t code_signature(LLVMValueRef fn)
{
    uint64_t h = 14695981039346656037ull;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(fn); b; b = LLVMGetNextBasicBlock(b)) {
        h = fnv1a_step(h, 0xb10c);
        for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) {
            h = fnv1a_step(h, (uint64_t)LLVMGetInstructionOpcode(i));
            h = fnv1a_step(h, (uint64_t)LLVMGetTypeKind(LLVMTypeOf(i)));
            int n = LLVMGetNumOperands(i);
            h = fnv1a_step(h, (uint64_t)n);
            for (int k = 0; k < n; k++) {
                LLVMValueRef op = LLVMGetOperand(i, (unsigned)k);
                if (op && LLVMIsAConstantInt(op) && LLVMGetIntTypeWidth(LLVMTypeOf(op)) <= 64)
                    h = fnv1a_step(h, (uint64_t)LLVMConstIntGetSExtValue(op));
            }
        }
    }
    return h;
}

/* Group e's key, written on first use; its bytes are NULL when out of memory. */
static const kernel_key *key_of(kernel_keys *k, int e)
{
    if (!k->key[e].bytes)
        k->key[e].bytes = jit_kernel_key(k->body[e], &k->key[e].size);
    return &k->key[e];
}

/* The earlier group whose function kernel g can use, or g itself (then recorded). */
static int find_twin(kernel_keys *k, int g, LLVMValueRef body)
{
    uint64_t sig = code_signature(body);
    kernel_key key = {NULL, 0};
    for (int e = 0; e < g; e++) {
        if (!k->body[e] || k->sig[e] != sig)
            continue;
        if (!key.bytes && !(key.bytes = jit_kernel_key(body, &key.size)))
            break; /* out of memory: a function of its own, which is always right */
        const kernel_key *other = key_of(k, e);
        if (other->bytes && other->size == key.size &&
            memcmp(other->bytes, key.bytes, key.size) == 0) {
            free(key.bytes);
            return e;
        }
    }
    k->body[g] = body;
    k->sig[g] = sig;
    k->key[g] = key;
    return g;
}

static byocl_status llvm_compile(const byocl_function *fn, const byocl_host_group *groups,
                                 int n_groups, const byocl_host_backend_options *opt,
                                 byocl_host_kernel *kernels, void **state_out, byocl_error *err)
{
    *state_out = NULL;
    llvm_state *s = calloc(1, sizeof *s);
    size_t ng = (size_t)(n_groups > 0 ? n_groups : 1);
    const char **symbols = malloc(ng * sizeof *symbols);
    void **addrs = calloc(ng, sizeof *addrs);
    int64_t *n_tasks = calloc(ng, sizeof *n_tasks);
    int *twin = calloc(ng, sizeof *twin);
    kernel_keys keys = {calloc(ng, sizeof *keys.body), calloc(ng, sizeof *keys.sig),
                        calloc(ng, sizeof *keys.key)};
    int n_own = 0; /* kernels with a function of their own */
    byocl_status st = BYOCL_OK;
    if (!s || !symbols || !addrs || !n_tasks || !twin || !keys.body || !keys.sig || !keys.key ||
        !(s->names = calloc(ng, sizeof *s->names)) || !(s->consts = calloc(ng, sizeof *s->consts))) {
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory compiling host kernels");
        goto done;
    }
    s->n_groups = n_groups;
    if ((st = jit_create(&s->j, compile_threads(n_groups), err)) != BYOCL_OK)
        goto done;
    const jit_host *host = jit_target(s->j);
    for (int g = 0; g < n_groups && st == BYOCL_OK; g++) {
        /* Symbol names are C identifiers made from the group name. */
        snprintf(s->names[g], sizeof s->names[g], "%s", groups[g].name);
        for (char *c = s->names[g]; *c; c++)
            if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                  (*c >= '0' && *c <= '9') || *c == '_'))
                *c = '_';
        if (kconsts_add(&s->consts[g], (void *)&s->error_slot, NULL, NULL) != 0 ||
            kconsts_add(&s->consts[g], (void *)(intptr_t)g, NULL, NULL) != 1) {
            st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory compiling host kernels");
            break;
        }
        if (groups[g].n_outputs < 1) {
            st = byocl_error_set(err, BYOCL_ERR_INVALID, "group %s has no outputs",
                                 groups[g].name);
            break;
        }
        lw w = {.j = s->j, .host = host, .state = s, .fn = fn, .grp = &groups[g],
                .group_index = g, .consts = &s->consts[g], .err = err,
                .threads = opt && opt->threads > 0 ? opt->threads : 1};
        jit_next_kernel(s->j);
        st = lw_begin(&w, s->names[g]);
        if (st == BYOCL_OK)
            st = lower_group(&w);
        byocl_status end = w.B ? lw_end(&w) : w.status;
        if (st == BYOCL_OK)
            st = end;
        if (st == BYOCL_OK && (twin[g] = find_twin(&keys, g, w.body)) != g)
            jit_kernel_drop(s->j); /* twin[g]'s code serves, with this group's ctx */
        else if (st == BYOCL_OK)
            st = jit_kernel_done(s->j, w.body, err);
        if (st == BYOCL_OK && twin[g] == g)
            symbols[n_own++] = s->names[g];
        free(w.data);
        n_tasks[g] = w.n_tasks;
        if (st != BYOCL_OK)
            byocl_error_prefix(err, "host kernel %s: ", groups[g].name);
    }
    if (st != BYOCL_OK)
        goto done;
    /* A cache folder that cannot be made only costs build time: compile without one. */
    char *cache_dir = NULL;
    if (base_cache_dir(opt ? opt->cache_dir : NULL, &cache_dir, NULL) != BYOCL_OK)
        cache_dir = NULL;
    st = jit_finish(s->j, opt ? opt->opt_level : 2, cache_dir, symbols, n_own, addrs, err);
    free(cache_dir);
    if (st != BYOCL_OK)
        goto done;
    /* addrs[k] is the k-th kernel with a function of its own; twins share it. */
    for (int g = 0, k = 0; g < n_groups; g++) {
        void *addr = twin[g] == g ? addrs[k++] : (void *)kernels[twin[g]].fn;
        kernels[g] = (byocl_host_kernel){(byocl_host_kernel_fn)addr, s->consts[g].ptrs,
                                         n_tasks[g] > 0 ? n_tasks[g] : 1};
    }
    *state_out = s;
    s = NULL;
done:
    llvm_release(s);
    free(symbols);
    free(addrs);
    free(n_tasks);
    free(twin);
    for (int g = 0; keys.key && g < n_groups; g++)
        free(keys.key[g].bytes);
    free(keys.key);
    free(keys.sig);
    free(keys.body);
    return st;
}

static const char *llvm_error(void *vstate)
{
    static _Thread_local char msg[256];
    llvm_state *s = vstate;
    int32_t slot = atomic_load(&s->error_slot);
    int g = slot >> 8, code = slot & 0xff;
    const char *what = code == KERR_DIV_ZERO     ? "integer division by zero"
                       : code == KERR_NOMEM      ? "out of memory for kernel scratch space"
                       : code == KERR_EMPTY_MEAN ? "integer mean over zero elements"
                       : code == KERR_INDEX      ? "an index is out of range"
                       : code == KERR_EMPTY_REDUCE
                           ? "max, min, argmax or argmin over zero elements has no result"
                                                 : "unknown failure";
    if (slot == 0 || g < 0 || g >= s->n_groups)
        snprintf(msg, sizeof msg, "a host kernel failed");
    else
        snprintf(msg, sizeof msg, "host kernel %s: %s", s->names[g], what);
    return msg;
}

char *byocl_llvm_host_info(char *buf, size_t len)
{
    const jit_host *h = NULL;
    byocl_error err;
    unsigned major = 0, minor = 0, patch = 0;
    LLVMGetVersion(&major, &minor, &patch);
    if (jit_host_get(&h, &err) != BYOCL_OK)
        snprintf(buf, len, "LLVM %u.%u.%u: %s", major, minor, patch, err.msg);
    else
        snprintf(buf, len, "LLVM %u.%u.%u, %s, %d-bit vectors", major, minor, patch, h->cpu,
                 h->vector_floats * 32);
    return buf;
}

const byocl_host_backend_i byocl_host_backend_llvm = {
    .name = "llvm",
    .group = llvm_group,
    .compile = llvm_compile,
    .release = llvm_release,
    .error = llvm_error,
};
