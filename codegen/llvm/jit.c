/* The JIT: host detection, the TargetMachine that tunes the optimizer, ORC LLJIT.
 *
 * The order is the one PLATFORM_NOTES found to work with LLVM-C: native target and asm
 * printer initialized once; a TargetMachine for the host CPU (name and features from
 * LLVM's host detection) drives LLVMRunPasses, because the loop and SLP vectorizers
 * only widen code when they see the target; LLJIT gets a second TargetMachine built the
 * same way, so the module's data layout matches the JIT's. */
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

#include <llvm-c/Analysis.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "runtime.h"

struct jit {
    LLVMOrcThreadSafeContextRef tsc;
    LLVMContextRef ctx;
    LLVMModuleRef module;   /* until jit_finish hands it to LLJIT */
    LLVMOrcLLJITRef lljit;
    LLVMTargetMachineRef tm; /* for the optimizer */
    const jit_host *host;
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
        {"tanh", (void *)tanh},       {"byocl_llvm_rt_f64_to_int", (void *)rt_f64_to_int},
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

byocl_status jit_create(jit **out, byocl_error *err)
{
    *out = NULL;
    const jit_host *h;
    byocl_status st = jit_host_get(&h, err);
    if (st != BYOCL_OK)
        return st;
    jit *j = calloc(1, sizeof *j);
    if (!j)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    j->host = h;
    j->vector_floats = h->vector_floats;
    const char *want = getenv("BYOCL_LLVM_VECTOR_BITS");
    if (want && (strcmp(want, "128") == 0 || strcmp(want, "256") == 0 || strcmp(want, "512") == 0) &&
        atoi(want) / 32 < j->vector_floats)
        j->vector_floats = atoi(want) / 32;
    j->tm = host_target_machine(h, err);
    LLVMTargetMachineRef jit_tm = j->tm ? host_target_machine(h, err) : NULL;
    if (!jit_tm) {
        jit_free(j);
        return err ? err->status : BYOCL_ERR_UNSUPPORTED;
    }
    LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
    LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(
        builder, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(jit_tm));
    LLVMErrorRef e = LLVMOrcCreateLLJIT(&j->lljit, builder); /* consumes the builder */
    if (e) {
        j->lljit = NULL;
        st = llvm_error(err, e, "creating the LLVM JIT");
        jit_free(j);
        return st;
    }
    st = define_runtime_symbols(j, err);
    if (st != BYOCL_OK) {
        jit_free(j);
        return st;
    }
    j->tsc = LLVMOrcCreateNewThreadSafeContext();
    j->ctx = LLVMOrcThreadSafeContextGetContext(j->tsc);
    j->module = LLVMModuleCreateWithNameInContext("byocl_host", j->ctx);
    LLVMSetTarget(j->module, LLVMOrcLLJITGetTripleString(j->lljit));
    LLVMSetDataLayout(j->module, LLVMOrcLLJITGetDataLayoutStr(j->lljit));
    *out = j;
    return BYOCL_OK;
}

LLVMContextRef jit_context(jit *j) { return j->ctx; }
int jit_vector_floats(const jit *j) { return j->vector_floats; }
LLVMModuleRef jit_module(jit *j) { return j->module; }

static void add_string_attr(LLVMContextRef ctx, LLVMValueRef fn, const char *key,
                            const char *value)
{
    LLVMAttributeRef a = LLVMCreateStringAttribute(ctx, key, (unsigned)strlen(key), value,
                                                   (unsigned)strlen(value));
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, a);
}

void jit_set_function_attrs(jit *j, LLVMValueRef fn)
{
    add_string_attr(j->ctx, fn, "target-cpu", j->host->cpu);
    add_string_attr(j->ctx, fn, "target-features", j->host->features);
    char width[16];
    snprintf(width, sizeof width, "%d", j->vector_floats * 32);
    add_string_attr(j->ctx, fn, "prefer-vector-width", width);
    add_string_attr(j->ctx, fn, "min-legal-vector-width", width);
    unsigned kind = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(j->ctx, kind, 0));
}

/* ------------------------------------------------------------------ finish */

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void dump_module(LLVMModuleRef m, const char *name, const char *suffix)
{
    const char *dir = getenv("BYOCL_LLVM_DUMP");
    if (!dir || !*dir)
        return;
    mkdir(dir, 0777); /* may exist */
    char path[4096];
    snprintf(path, sizeof path, "%s/%s%s", dir, name, suffix);
    char *msg = NULL;
    if (LLVMPrintModuleToFile(m, path, &msg))
        fprintf(stderr, "byocl: cannot write %s: %s\n", path, msg ? msg : "");
    LLVMDisposeMessage(msg);
}

byocl_status jit_finish(jit *j, const char *name, int opt_level, const char *const *symbols,
                        int n, void **addresses, byocl_error *err)
{
    if (!j->module)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "the JIT module was already compiled");
    dump_module(j->module, name, ".ll");
    char *msg = NULL;
    if (LLVMVerifyModule(j->module, LLVMReturnStatusAction, &msg)) {
        byocl_status st = byocl_error_set(err, BYOCL_ERR_INVALID,
                                          "generated LLVM IR is invalid (a byocl bug): %.1500s",
                                          msg ? msg : "");
        LLVMDisposeMessage(msg);
        return st;
    }
    LLVMDisposeMessage(msg);

    if (opt_level < 0)
        opt_level = 0;
    if (opt_level > 3)
        opt_level = 3;
    char passes[32];
    snprintf(passes, sizeof passes, "default<O%d>", opt_level);
    LLVMPassBuilderOptionsRef pbo = LLVMCreatePassBuilderOptions();
    LLVMPassBuilderOptionsSetLoopVectorization(pbo, opt_level >= 2);
    LLVMPassBuilderOptionsSetSLPVectorization(pbo, opt_level >= 2);
    LLVMPassBuilderOptionsSetLoopInterleaving(pbo, opt_level >= 2);
    LLVMPassBuilderOptionsSetLoopUnrolling(pbo, opt_level >= 2);
    double t0 = seconds();
    LLVMErrorRef e = LLVMRunPasses(j->module, passes, j->tm, pbo);
    double t1 = seconds();
    LLVMDisposePassBuilderOptions(pbo);
    if (e)
        return llvm_error(err, e, "optimizing the host kernels");
    dump_module(j->module, name, ".opt.ll");

    LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(j->module, j->tsc);
    j->module = NULL; /* owned by tsm, then by the JIT */
    e = LLVMOrcLLJITAddLLVMIRModule(j->lljit, LLVMOrcLLJITGetMainJITDylib(j->lljit), tsm);
    if (e) {
        LLVMOrcDisposeThreadSafeModule(tsm);
        return llvm_error(err, e, "adding the host kernels to the JIT");
    }
    for (int i = 0; i < n; i++) {
        LLVMOrcExecutorAddress addr = 0;
        e = LLVMOrcLLJITLookup(j->lljit, &addr, symbols[i]);
        if (e)
            return llvm_error(err, e, "generating machine code");
        addresses[i] = (void *)(uintptr_t)addr;
    }
    if (getenv("BYOCL_LLVM_VERBOSE"))
        fprintf(stderr, "byocl llvm: %s: optimized in %.0f ms, machine code in %.0f ms\n", name,
                (t1 - t0) * 1e3, (seconds() - t1) * 1e3);
    return BYOCL_OK;
}

void jit_free(jit *j)
{
    if (!j)
        return;
    if (j->module)
        LLVMDisposeModule(j->module);
    if (j->lljit) {
        LLVMErrorRef e = LLVMOrcDisposeLLJIT(j->lljit);
        if (e)
            LLVMConsumeError(e);
    }
    if (j->tsc)
        LLVMOrcDisposeThreadSafeContext(j->tsc);
    if (j->tm)
        LLVMDisposeTargetMachine(j->tm);
    free(j);
}
