/* The JIT: host detection, TargetMachines, ORC LLJIT, parallel compilation and the cache
 * of compiled object code.
 *
 * The order is the one PLATFORM_NOTES found to work with LLVM-C: native target and asm
 * printer initialized once; a TargetMachine for the host CPU (name and features from
 * LLVM's host detection) drives LLVMRunPasses, because the loop and SLP vectorizers
 * only widen code when they see the target, and emits the object file; LLJIT gets a
 * TargetMachine built the same way, so the modules' data layout matches the JIT's, and
 * links the objects. A model's kernels are spread over a few modules, each in a context
 * of its own, which compile on threads of their own (one TargetMachine each). Each object
 * is a cache entry (runtime/base/cache.h) keyed by its module's bitcode before optimization and
 * everything else that shapes the machine code, so a model built again skips optimization
 * and code generation. */
#include "jit.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "byocl/version.h"
#include "base/cache.h"
#include "base/file_util.h"
#include "llvm_backend.h"
#include "runtime.h"

/* One module of kernels in a context of its own, optimized and compiled to an object by a
 * thread of its own (jit_finish), so that a model's kernels compile in parallel. */
typedef struct jit_part {
    LLVMContextRef ctx;
    LLVMModuleRef module;   /* until jit_finish has linked its object */
    size_t instructions;    /* lowered into it so far: balances the parts */
    /* Its kernels, each lowered into a module of its own (jit_next_kernel) that a
     * compiling jit_finish links into `module`: a kernel's key (jit_kernel_key) writes
     * its module, and printing a function (the key before) walked every function of
     * its module, so in the part's growing module each key cost time in proportion to
     * the whole model. */
    LLVMModuleRef *kernels;
    int n_kernels, kernels_cap;
    /* jit_finish's */
    char *path;             /* its cache entry, or NULL */
    byocl_cache_key key;
    void *object;           /* the object file, malloc'ed */
    size_t object_size;
    bool cached;            /* the object came from the cache */
    int opt_level;
    const jit_host *host;
    byocl_error err;        /* of its compile thread */
    byocl_status status;
    double opt_ms, codegen_ms;
} jit_part;

struct jit {
    jit_part parts[JIT_MAX_PARTS];
    int n_parts, current;
    LLVMModuleRef kernel;    /* the module of the kernel being lowered, or NULL */
    LLVMOrcLLJITRef lljit;
    const jit_host *host;    /* &target */
    jit_host target;         /* the host, with BYOCL_LLVM_CACHE_KIB's cache sizes */
    int vector_floats;       /* the host's, or fewer (BYOCL_LLVM_VECTOR_BITS) */
};

/* ------------------------------------------------------------------ host */

static jit_host host;
static byocl_status host_status = BYOCL_OK;
static char host_error[256];
static pthread_once_t host_once = PTHREAD_ONCE_INIT;

static bool has_feature(const char *features, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = features; (p = strstr(p, name)) != NULL; p += n)
        if (p > features && p[-1] == '+' && (p[n] == ',' || p[n] == '\0'))
            return true;
    return false;
}

static void host_detect(void)
{
    if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter()) {
        host_status = BYOCL_ERR_UNSUPPORTED;
        snprintf(host_error, sizeof host_error, "LLVM has no native target for this host");
        return;
    }
    char *triple = LLVMGetDefaultTargetTriple();
    char *cpu = LLVMGetHostCPUName();
    char *features = LLVMGetHostCPUFeatures();
    snprintf(host.triple, sizeof host.triple, "%s", triple);
    snprintf(host.cpu, sizeof host.cpu, "%s", cpu);
    /* Gathers are slow on most x86 cores (and stride-2 pooling vectorizes better as
     * interleaved loads): keep the vectorizer from choosing them. */
    static char feature_buf[4096];
    snprintf(feature_buf, sizeof feature_buf, "%s%s+prefer-no-gather,+prefer-no-scatter",
             features, features[0] ? "," : "");
    host.features = feature_buf;
    LLVMDisposeMessage(triple);
    LLVMDisposeMessage(cpu);
    LLVMDisposeMessage(features);

    int bits = 128;
    if (has_feature(host.features, "avx512f"))
        bits = 512;
    else if (has_feature(host.features, "avx2") || has_feature(host.features, "avx"))
        bits = 256;
    host.vector_floats = bits / 32;

    /* glibc reads the cache sizes from CPUID; where it cannot, 32 KiB, the most common L1,
     * and 512 KiB, the smallest L2 of the x86 cores this has met (Zen 2 and 3). */
    long l1d = -1, l2 = -1;
#ifdef _SC_LEVEL1_DCACHE_SIZE
    l1d = sysconf(_SC_LEVEL1_DCACHE_SIZE);
#endif
#ifdef _SC_LEVEL2_CACHE_SIZE
    l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    host.l1d_bytes = l1d >= 4096 ? l1d : 32 << 10;
    host.l2_bytes = l2 >= 65536 ? l2 : 512 << 10;
}

byocl_status jit_host_get(const jit_host **out, byocl_error *err)
{
    pthread_once(&host_once, host_detect);
    if (host_status != BYOCL_OK)
        return byocl_error_set(err, host_status, "%s", host_error);
    *out = &host;
    return BYOCL_OK;
}

/* ------------------------------------------------------------------ setup */

static byocl_status llvm_error(byocl_error *err, LLVMErrorRef e, const char *what)
{
    char *msg = LLVMGetErrorMessage(e);
    byocl_status st = byocl_error_set(err, BYOCL_ERR_UNSUPPORTED, "%s: %s", what, msg);
    LLVMDisposeErrorMessage(msg);
    return st;
}

static LLVMTargetMachineRef host_target_machine(const jit_host *h, byocl_error *err)
{
    LLVMTargetRef target;
    char *msg = NULL;
    if (LLVMGetTargetFromTriple(h->triple, &target, &msg)) {
        byocl_error_set(err, BYOCL_ERR_UNSUPPORTED, "LLVM target for %s: %s", h->triple,
                        msg ? msg : "unknown");
        LLVMDisposeMessage(msg);
        return NULL;
    }
    LLVMTargetMachineRef tm =
        LLVMCreateTargetMachine(target, h->triple, h->cpu, h->features,
                                LLVMCodeGenLevelAggressive, LLVMRelocDefault,
                                LLVMCodeModelJITDefault);
    if (!tm)
        byocl_error_set(err, BYOCL_ERR_UNSUPPORTED, "cannot create an LLVM target machine for %s",
                        h->cpu);
    return tm;
}

/* The C functions generated code may call, by the names LLVM uses for them. */
static byocl_status define_runtime_symbols(jit *j, byocl_error *err)
{
    static const struct {
        const char *name;
        void *addr;
    } syms[] = {
        {"memcpy", (void *)memcpy},   {"memmove", (void *)memmove},
        {"memset", (void *)memset},   {"exp", (void *)exp},
        {"tanh", (void *)tanh},       {"log", (void *)log},
        {"erf", (void *)erf},         {"pow", (void *)pow},
        {"fmod", (void *)fmod},       {"sin", (void *)sin},
        {"cos", (void *)cos},         {"tan", (void *)tan},
        {"asin", (void *)asin},       {"acos", (void *)acos},
        {"atan", (void *)atan},       {"sinh", (void *)sinh},
        {"cosh", (void *)cosh},       {"asinh", (void *)asinh},
        {"acosh", (void *)acosh},     {"atanh", (void *)atanh},
        {"byocl_llvm_rt_f64_to_int", (void *)rt_f64_to_int},
        {"byocl_llvm_rt_alloc", (void *)rt_alloc}, {"byocl_llvm_rt_free", (void *)rt_free},
        {"byocl_llvm_rt_pack_conv", (void *)rt_pack_conv},
        {"byocl_llvm_rt_pack_dense", (void *)rt_pack_dense},
    };
    enum { N = sizeof syms / sizeof syms[0] };
    LLVMOrcCSymbolMapPair pairs[N];
    for (int i = 0; i < N; i++) {
        pairs[i].Name = LLVMOrcLLJITMangleAndIntern(j->lljit, syms[i].name);
        pairs[i].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)syms[i].addr;
        pairs[i].Sym.Flags.GenericFlags =
            LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
        pairs[i].Sym.Flags.TargetFlags = 0;
    }
    LLVMOrcMaterializationUnitRef mu = LLVMOrcAbsoluteSymbols(pairs, N);
    LLVMErrorRef e = LLVMOrcJITDylibDefine(LLVMOrcLLJITGetMainJITDylib(j->lljit), mu);
    if (e)
        return llvm_error(err, e, "defining the JIT's runtime symbols");
    return BYOCL_OK;
}

/* A fresh LLJIT for the host with the runtime symbols defined (j->lljit). */
static byocl_status lljit_create(jit *j, byocl_error *err)
{
    LLVMTargetMachineRef jit_tm = host_target_machine(j->host, err);
    if (!jit_tm)
        return err ? err->status : BYOCL_ERR_UNSUPPORTED;
    LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
    LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(
        builder, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(jit_tm));
    LLVMErrorRef e = LLVMOrcCreateLLJIT(&j->lljit, builder); /* consumes the builder */
    if (e) {
        j->lljit = NULL;
        return llvm_error(err, e, "creating the LLVM JIT");
    }
    return define_runtime_symbols(j, err);
}

static void lljit_dispose(jit *j)
{
    if (!j->lljit)
        return;
    LLVMErrorRef e = LLVMOrcDisposeLLJIT(j->lljit);
    if (e)
        LLVMConsumeError(e);
    j->lljit = NULL;
}

/* BYOCL_LLVM_CACHE_KIB=L1D,L2: the cache sizes the schedules are planned for, in KiB, in
 * place of the host's (tests reach the convs' blocks and bands with small ones on any
 * machine; a virtual machine may report its caches wrong). Malformed values are ignored,
 * as the other knobs' are. */
static void cache_sizes_from_env(jit_host *h)
{
    const char *v = getenv("BYOCL_LLVM_CACHE_KIB");
    long l1d, l2;
    char tail;
    if (v && sscanf(v, "%ld,%ld%c", &l1d, &l2, &tail) == 2 && l1d >= 4 && l2 >= 64 &&
        l1d <= (1L << 20) && l2 <= (1L << 24)) {
        h->l1d_bytes = (int64_t)l1d << 10;
        h->l2_bytes = (int64_t)l2 << 10;
    }
}

const jit_host *jit_target(const jit *j) { return j->host; }

byocl_status jit_create(jit **out, int n_parts, byocl_error *err)
{
    *out = NULL;
    const jit_host *h;
    byocl_status st = jit_host_get(&h, err);
    if (st != BYOCL_OK)
        return st;
    jit *j = calloc(1, sizeof *j);
    if (!j)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    j->target = *h;
    j->host = &j->target;
    cache_sizes_from_env(&j->target);
    j->vector_floats = h->vector_floats;
    const char *want = getenv("BYOCL_LLVM_VECTOR_BITS");
    if (want && (strcmp(want, "128") == 0 || strcmp(want, "256") == 0 || strcmp(want, "512") == 0) &&
        atoi(want) / 32 < j->vector_floats)
        j->vector_floats = atoi(want) / 32;
    if ((st = lljit_create(j, err)) != BYOCL_OK) {
        jit_free(j);
        return st;
    }
    j->n_parts = n_parts < 1 ? 1 : n_parts > JIT_MAX_PARTS ? JIT_MAX_PARTS : n_parts;
    for (int i = 0; i < j->n_parts; i++) {
        jit_part *part = &j->parts[i];
        char name[32];
        snprintf(name, sizeof name, i == 0 ? "byocl_host" : "byocl_host.%d", i);
        part->host = j->host;
        part->ctx = LLVMContextCreate();
        part->module = LLVMModuleCreateWithNameInContext(name, part->ctx);
        LLVMSetTarget(part->module, LLVMOrcLLJITGetTripleString(j->lljit));
        LLVMSetDataLayout(part->module, LLVMOrcLLJITGetDataLayoutStr(j->lljit));
    }
    *out = j;
    return BYOCL_OK;
}

void jit_next_kernel(jit *j)
{
    jit_kernel_drop(j);
    int best = 0;
    for (int i = 1; i < j->n_parts; i++)
        if (j->parts[i].instructions < j->parts[best].instructions)
            best = i;
    j->current = best;
    jit_part *part = &j->parts[best];
    j->kernel = LLVMModuleCreateWithNameInContext("byocl_kernel", part->ctx);
    LLVMSetTarget(j->kernel, LLVMGetTarget(part->module));
    LLVMSetDataLayout(j->kernel, LLVMGetDataLayoutStr(part->module));
}

byocl_status jit_kernel_done(jit *j, LLVMValueRef fn, byocl_error *err)
{
    jit_part *part = &j->parts[j->current];
    if (part->n_kernels == part->kernels_cap) {
        int cap = part->kernels_cap ? 2 * part->kernels_cap : 64;
        LLVMModuleRef *grown = realloc(part->kernels, (size_t)cap * sizeof *grown);
        if (!grown)
            return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory compiling host kernels");
        part->kernels = grown;
        part->kernels_cap = cap;
    }
    size_t n = 0;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(fn); b; b = LLVMGetNextBasicBlock(b))
        for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i))
            n++;
    part->instructions += n;
    part->kernels[part->n_kernels++] = j->kernel;
    j->kernel = NULL;
    return BYOCL_OK;
}

void jit_kernel_drop(jit *j)
{
    if (j->kernel)
        LLVMDisposeModule(j->kernel);
    j->kernel = NULL;
}

/* Moves the kernels' modules into their part's module. The linker walks all of its
 * destination first, so linking them one by one into the growing module took time in
 * proportion to the model times the kernels (80-100 ms of densenet121's build):
 * they merge in pairs instead, in rounds, keeping the order they were lowered in (the
 * order fixes the module's bitcode, hence its cache key). */
static byocl_status link_into(LLVMModuleRef into, LLVMModuleRef *from, byocl_error *err)
{
    LLVMModuleRef src = *from;
    *from = NULL; /* LLVMLinkModules2 disposes it, whatever happens */
    if (LLVMLinkModules2(into, src))
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "linking the host kernels into one module failed (a byocl bug)");
    return BYOCL_OK;
}

static byocl_status link_kernels(jit_part *part, byocl_error *err)
{
    LLVMModuleRef *m = part->kernels;
    byocl_status st = BYOCL_OK;
    /* Each round, m[k] takes m[k + 1] for even k and moves to m[k / 2]. */
    for (int n = part->n_kernels; n > 1 && st == BYOCL_OK; n = (n + 1) / 2)
        for (int k = 0; k < n && st == BYOCL_OK; k += 2) {
            if (k + 1 < n)
                st = link_into(m[k], &m[k + 1], err);
            if (k > 0) {
                m[k / 2] = m[k];
                m[k] = NULL;
            }
        }
    if (st == BYOCL_OK && part->n_kernels > 0)
        st = link_into(part->module, &m[0], err);
    if (st == BYOCL_OK)
        part->n_kernels = 0;
    return st; /* on failure, jit_free disposes what is left in part->kernels */
}

/* The defined functions of `m` (a kernel's wrapper and body), at most `cap` of them. */
static int defined_functions(LLVMModuleRef m, LLVMValueRef *fns, int cap)
{
    int n = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
        if (!LLVMIsDeclaration(f)) {
            if (n == cap)
                return -1;
            fns[n++] = f;
        }
    return n;
}

void *jit_kernel_key(LLVMValueRef fn, size_t *size)
{
    LLVMModuleRef m = LLVMGetGlobalParent(fn);
    LLVMValueRef fns[4];
    char *names[4] = {NULL};
    int n = defined_functions(m, fns, 4);
    bool ok = n >= 0;
    /* The group's names become the same for every kernel while the module is written. */
    for (int i = 0; ok && i < n; i++) {
        size_t len = 0;
        const char *name = LLVMGetValueName2(fns[i], &len);
        ok = (names[i] = malloc(len + 1)) != NULL;
        if (ok) {
            memcpy(names[i], name, len + 1);
            char generic[32];
            snprintf(generic, sizeof generic, "byocl.kernel.%d", i);
            LLVMSetValueName2(fns[i], generic, strlen(generic));
        }
    }
    LLVMMemoryBufferRef bitcode = ok ? LLVMWriteBitcodeToMemoryBuffer(m) : NULL;
    for (int i = 0; i < n; i++)
        if (names[i]) {
            LLVMSetValueName2(fns[i], names[i], strlen(names[i]));
            free(names[i]);
        }
    if (!bitcode)
        return NULL;
    *size = LLVMGetBufferSize(bitcode);
    void *key = malloc(*size ? *size : 1);
    if (key)
        memcpy(key, LLVMGetBufferStart(bitcode), *size);
    LLVMDisposeMemoryBuffer(bitcode);
    return key;
}

LLVMContextRef jit_context(jit *j) { return j->parts[j->current].ctx; }
int jit_vector_floats(const jit *j) { return j->vector_floats; }
LLVMModuleRef jit_module(jit *j) { return j->kernel; }

static void add_string_attr(LLVMContextRef ctx, LLVMValueRef fn, const char *key,
                            const char *value)
{
    LLVMAttributeRef a = LLVMCreateStringAttribute(ctx, key, (unsigned)strlen(key), value,
                                                   (unsigned)strlen(value));
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, a);
}

void jit_set_function_attrs(jit *j, LLVMValueRef fn)
{
    LLVMContextRef ctx = jit_context(j);
    add_string_attr(ctx, fn, "target-cpu", j->host->cpu);
    add_string_attr(ctx, fn, "target-features", j->host->features);
    char width[16];
    snprintf(width, sizeof width, "%d", j->vector_floats * 32);
    add_string_attr(ctx, fn, "prefer-vector-width", width);
    add_string_attr(ctx, fn, "min-legal-vector-width", width);
    unsigned kind = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(ctx, kind, 0));
}

/* ------------------------------------------------------------------ finish */

static double seconds_of(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double seconds(void) { return seconds_of(CLOCK_MONOTONIC); }

/* CPU time of the calling thread: compile times that other jobs on the machine do not
 * inflate. */
static double thread_seconds(void) { return seconds_of(CLOCK_THREAD_CPUTIME_ID); }

static void dump_module(LLVMModuleRef m, const char *suffix)
{
    const char *dir = getenv("BYOCL_LLVM_DUMP");
    if (!dir || !*dir)
        return;
    mkdir(dir, 0777); /* may exist */
    char path[4096];
    size_t len = 0;
    snprintf(path, sizeof path, "%s/%s%s", dir, LLVMGetModuleIdentifier(m, &len), suffix);
    /* Printed to memory and written atomically, like every file byocl writes. */
    char *text = LLVMPrintModuleToString(m);
    byocl_file_part part = {text, strlen(text)};
    byocl_error err;
    if (base_file_write_atomic(path, &part, 1, &err) != BYOCL_OK)
        fprintf(stderr, "byocl: %s\n", err.msg);
    LLVMDisposeMessage(text);
}

/* Entries of the host code cache: an ELF object of one part's module. */
static byocl_cache_kind object_cache = BYOCL_CACHE_KIND_INIT("BYOCLHO1", 1u, ".o");

byocl_cache_stats byocl_llvm_cache_stats(bool reset)
{
    byocl_cache_stats s = base_cache_stats_get(&object_cache);
    if (reset)
        base_cache_stats_reset(&object_cache);
    return s;
}

static void pipeline(int opt_level, char *buf, size_t len)
{
    snprintf(buf, len, "default<O%d>", opt_level);
}

/* Everything the object code depends on: the module before optimization (its kernels'
 * modules in order, which linking makes it of: code, attributes, CPU, features, vector
 * width), the pipeline, the machine, LLVM and byocl. Hashing the kernels' modules
 * leaves the linking to a build that compiles. "host object 1" names the way jit.c
 * compiles: change it with the code generation settings (code model, pass builder
 * options) that none of the fields show. */
static byocl_status object_key(jit *j, jit_part *part, byocl_cache_key *key, byocl_error *err)
{
    unsigned major = 0, minor = 0, patch = 0;
    LLVMGetVersion(&major, &minor, &patch);
    char llvm_version[48], passes[32];
    snprintf(llvm_version, sizeof llvm_version, "%u.%u.%u", major, minor, patch);
    pipeline(part->opt_level, passes, sizeof passes);
    byocl_cache_hasher h;
    base_cache_key_begin(&h);
    /* "2": code generation with loop strength reduction (objects of "1" were without). */
    const char *fields[] = {"byocl host object 2", BYOCL_VERSION_STRING, llvm_version,
                            j->host->triple, j->host->cpu, j->host->features, passes};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        base_cache_key_string(&h, fields[i]);
    for (int k = 0; k < part->n_kernels; k++) {
        LLVMMemoryBufferRef bitcode = LLVMWriteBitcodeToMemoryBuffer(part->kernels[k]);
        if (!bitcode)
            return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory hashing the host module");
        base_cache_key_field(&h, LLVMGetBufferStart(bitcode), LLVMGetBufferSize(bitcode));
        LLVMDisposeMemoryBuffer(bitcode);
    }
    base_cache_key_end(&h, key);
    return BYOCL_OK;
}

/* Links the part's kernels into its module, which it writes to BYOCL_LLVM_DUMP and
 * verifies. */
static byocl_status prepare_module(jit_part *part, byocl_error *err)
{
    byocl_status st = link_kernels(part, err);
    if (st != BYOCL_OK)
        return st;
    dump_module(part->module, ".ll");
    char *msg = NULL;
    if (LLVMVerifyModule(part->module, LLVMReturnStatusAction, &msg))
        st = byocl_error_set(err, BYOCL_ERR_INVALID,
                             "generated LLVM IR is invalid (a byocl bug): %.1500s", msg ? msg : "");
    LLVMDisposeMessage(msg);
    return st;
}

/* Optimizes the part's module and compiles it to an object (part->object); the status in
 * part->status. Runs on a thread of its own, with a TargetMachine of its own. */
static void *compile_part(void *arg)
{
    jit_part *part = arg;
    byocl_error *err = &part->err;
    if ((part->status = prepare_module(part, err)) != BYOCL_OK)
        return NULL;
    LLVMTargetMachineRef tm = host_target_machine(part->host, err);
    if (!tm) {
        part->status = err->status;
        return NULL;
    }
    char passes[32];
    pipeline(part->opt_level, passes, sizeof passes);
    LLVMPassBuilderOptionsRef pbo = LLVMCreatePassBuilderOptions();
    LLVMPassBuilderOptionsSetLoopVectorization(pbo, part->opt_level >= 2);
    LLVMPassBuilderOptionsSetSLPVectorization(pbo, part->opt_level >= 2);
    LLVMPassBuilderOptionsSetLoopInterleaving(pbo, part->opt_level >= 2);
    LLVMPassBuilderOptionsSetLoopUnrolling(pbo, part->opt_level >= 2);
    double t0 = thread_seconds();
    LLVMErrorRef e = LLVMRunPasses(part->module, passes, tm, pbo);
    double t1 = thread_seconds();
    LLVMDisposePassBuilderOptions(pbo);
    byocl_status st = BYOCL_OK;
    LLVMMemoryBufferRef object = NULL;
    char *msg = NULL;
    if (e) {
        st = llvm_error(err, e, "optimizing the host kernels");
    } else {
        dump_module(part->module, ".opt.ll");
        if (LLVMTargetMachineEmitToMemoryBuffer(tm, part->module, LLVMObjectFile, &msg, &object))
            st = byocl_error_set(err, BYOCL_ERR_UNSUPPORTED, "generating machine code: %s",
                                 msg ? msg : "unknown LLVM failure");
        LLVMDisposeMessage(msg);
    }
    if (st == BYOCL_OK) {
        part->object_size = LLVMGetBufferSize(object);
        part->object = malloc(part->object_size ? part->object_size : 1);
        if (part->object)
            memcpy(part->object, LLVMGetBufferStart(object), part->object_size);
        else
            st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory for machine code");
    }
    if (object)
        LLVMDisposeMemoryBuffer(object);
    LLVMDisposeTargetMachine(tm);
    part->opt_ms = (t1 - t0) * 1e3;
    part->codegen_ms = (thread_seconds() - t1) * 1e3;
    part->status = st;
    return NULL;
}

/* Compiles every part that has no object yet, each on a thread (the first on this one),
 * and stores the new objects in the cache. */
static byocl_status compile_parts(jit *j, byocl_error *err)
{
    pthread_t threads[JIT_MAX_PARTS];
    bool to_compile[JIT_MAX_PARTS] = {false}, started[JIT_MAX_PARTS] = {false};
    int first = -1;
    for (int i = 0; i < j->n_parts; i++) {
        jit_part *part = &j->parts[i];
        to_compile[i] = part->object == NULL;
        part->status = BYOCL_OK;
        if (!to_compile[i])
            continue;
        if (first < 0)
            first = i;
        else
            started[i] = pthread_create(&threads[i], NULL, compile_part, part) == 0;
    }
    if (first >= 0)
        compile_part(&j->parts[first]);
    for (int i = 0; i < j->n_parts; i++) {
        if (started[i])
            pthread_join(threads[i], NULL);
        else if (to_compile[i] && i != first)
            compile_part(&j->parts[i]); /* no thread to spare: compile it here */
    }
    for (int i = 0; i < j->n_parts; i++) {
        jit_part *part = &j->parts[i];
        if (part->status != BYOCL_OK) {
            if (err)
                *err = part->err;
            return part->status;
        }
    }
    for (int i = 0; i < j->n_parts; i++) {
        jit_part *part = &j->parts[i];
        if (to_compile[i] && part->path)
            base_cache_store(&object_cache, part->path, &part->key, part->object,
                             part->object_size);
    }
    return BYOCL_OK;
}

/* Links every part's object and looks the kernels up. */
static byocl_status link_parts(jit *j, const char *const *symbols, int n, void **addresses,
                               byocl_error *err)
{
    LLVMOrcJITDylibRef dylib = LLVMOrcLLJITGetMainJITDylib(j->lljit);
    for (int i = 0; i < j->n_parts; i++) {
        jit_part *part = &j->parts[i];
        LLVMMemoryBufferRef object = LLVMCreateMemoryBufferWithMemoryRangeCopy(
            part->object, part->object_size, LLVMGetModuleIdentifier(part->module, &(size_t){0}));
        LLVMErrorRef e = LLVMOrcLLJITAddObjectFile(j->lljit, dylib, object); /* takes it */
        if (e)
            return llvm_error(err, e, "adding the host kernels to the JIT");
    }
    for (int i = 0; i < n; i++) {
        LLVMOrcExecutorAddress addr = 0;
        LLVMErrorRef e = LLVMOrcLLJITLookup(j->lljit, &addr, symbols[i]);
        if (e)
            return llvm_error(err, e, "linking the host kernels");
        addresses[i] = (void *)(uintptr_t)addr;
        /* for perf: its samples of JIT code are addresses, which these and the symbols of
         * the cached object (objdump -t) place in a kernel (docs/host-codegen.md) */
        const char *verbose = getenv("BYOCL_LLVM_VERBOSE");
        if (verbose && atoi(verbose) >= 2)
            fprintf(stderr, "byocl llvm: kernel %s at %p\n", symbols[i], addresses[i]);
    }
    return BYOCL_OK;
}

/* Forgets the objects that came from the cache (deleting their entries) and makes LLJIT
 * anew: it may hold part of a refused object. */
static byocl_status reject_cached(jit *j, byocl_error *err)
{
    for (int i = 0; i < j->n_parts; i++) {
        jit_part *part = &j->parts[i];
        if (!part->cached)
            continue;
        base_cache_reject(&object_cache, part->path);
        free(part->object);
        part->object = NULL;
        part->cached = false;
    }
    lljit_dispose(j);
    return lljit_create(j, err);
}

byocl_status jit_finish(jit *j, int opt_level, const char *cache_dir, const char *const *symbols,
                        int n, void **addresses, byocl_error *err)
{
    double t0 = seconds();
    int n_cached = 0;
    for (int i = 0; i < j->n_parts; i++) {
        jit_part *part = &j->parts[i];
        if (!part->module)
            return byocl_error_set(err, BYOCL_ERR_INVALID, "the JIT module was already compiled");
        part->opt_level = opt_level < 0 ? 0 : opt_level > 3 ? 3 : opt_level;
        if (!cache_dir)
            continue;
        byocl_status st = object_key(j, part, &part->key, err);
        if (st == BYOCL_OK)
            st = base_cache_entry_path(&object_cache, cache_dir, &part->key, &part->path, err);
        if (st != BYOCL_OK)
            return st;
        part->object = base_cache_load(&object_cache, part->path, &part->key, &part->object_size);
        part->cached = part->object != NULL;
        n_cached += part->cached;
        if (part->cached && getenv("BYOCL_LLVM_DUMP") && (st = prepare_module(part, err)) != BYOCL_OK)
            return st;
    }
    byocl_status st = compile_parts(j, err);
    if (st == BYOCL_OK)
        st = link_parts(j, symbols, n, addresses, n_cached > 0 ? NULL : err);
    if (st != BYOCL_OK && n_cached > 0) { /* a cached object LLJIT refused: compile it */
        n_cached = 0;
        if ((st = reject_cached(j, err)) == BYOCL_OK && (st = compile_parts(j, err)) == BYOCL_OK)
            st = link_parts(j, symbols, n, addresses, err);
    }
    if (st != BYOCL_OK)
        return st;
    for (int i = 0; i < n_cached; i++)
        base_cache_accept(&object_cache);
    if (getenv("BYOCL_LLVM_VERBOSE")) {
        fprintf(stderr, "byocl llvm: %d of %d modules from the cache;", n_cached, j->n_parts);
        for (int i = 0; i < j->n_parts; i++)
            if (!j->parts[i].cached)
                fprintf(stderr, " module %d: optimized in %.0f ms, machine code in %.0f ms;", i,
                        j->parts[i].opt_ms, j->parts[i].codegen_ms);
        fprintf(stderr, " %.0f ms in all (thread CPU times; wall time in all)\n",
                (seconds() - t0) * 1e3);
    }
    for (int i = 0; i < j->n_parts; i++) {
        jit_part *part = &j->parts[i];
        LLVMDisposeModule(part->module);
        part->module = NULL;
        free(part->object);
        part->object = NULL;
        free(part->path);
        part->path = NULL;
    }
    return BYOCL_OK;
}

void jit_free(jit *j)
{
    if (!j)
        return;
    lljit_dispose(j);
    jit_kernel_drop(j);
    for (int i = 0; i < j->n_parts; i++) {
        jit_part *part = &j->parts[i];
        for (int k = 0; k < part->n_kernels; k++)
            if (part->kernels[k])
                LLVMDisposeModule(part->kernels[k]);
        free(part->kernels);
        if (part->module)
            LLVMDisposeModule(part->module);
        if (part->ctx)
            LLVMContextDispose(part->ctx);
        free(part->object);
        free(part->path);
    }
    free(j);
}
