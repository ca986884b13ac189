/* A target plugin that is wrong on purpose, for the tests of `byocl bisect` and `byocl
 * replay` (tests/test_bisect.c).
 *
 * Target "faulty" claims the float32 elementwise ops add, multiply, abs and nn.relu (operands
 * of one shape). Its compile rebuilds the region with every nn.relu replaced by its argument
 * (relu computed as the identity) and runs that with byocl's ref region module, so a region
 * holding a relu differs from the host wherever the relu's input is negative, and every
 * other region is right. With BYOCL_FAULTY_FAIL=<symbol>[@N] in the environment, calls of that
 * region fail (a region failing mid-run), from its N-th call on (default 1); with
 * BYOCL_FAULTY_COMPILE_FAIL set, every compile fails (a target that cannot build). With
 * BYOCL_FAULTY_WAIT=<fifo>, the first region call of the process reads that FIFO to its end
 * before it runs: a test holds the run there, for as long as it wants, to see what the CLI
 * printed before the run (tests/test_cli_progress.c). Uses only byocl's public headers. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/byocl.h"
#include "byocl/plugin.h"
#include "byocl/runtime.h"
#include "byocl/target.h"
#include "plugin_checks.h"

static bool claimed(const char *op)
{
    static const char *const ops[] = {"add", "multiply", "abs", "nn.relu"};
    for (size_t i = 0; op && i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(op, ops[i]) == 0)
            return true;
    return false;
}

static bool faulty_supports(void *ctx, const byocl_function *fn, int node, char *why,
                            size_t why_len)
{
    (void)ctx;
    const char *op = byocl_node_op(fn, node);
    if (!claimed(op)) {
        snprintf(why, why_len, "op %s is not one of add, multiply, abs, nn.relu", op ? op : "?");
        return false;
    }
    return plugin_operands_match_result(fn, node, why, why_len);
}

/* The region's module: the ref region module of the rebuilt function, failing on request. */
typedef struct faulty_module {
    byocl_rtmod *ref;
    long fail_from; /* the first call that fails (1-based); 0: none */
    long calls;
} faulty_module;

/* BYOCL_FAULTY_WAIT: blocks until the FIFO's writer has opened and closed it. */
static void wait_once(void)
{
    static atomic_flag waited = ATOMIC_FLAG_INIT;
    const char *fifo = getenv("BYOCL_FAULTY_WAIT");
    if (!fifo || atomic_flag_test_and_set(&waited))
        return;
    FILE *f = fopen(fifo, "rb");
    if (!f)
        return;
    while (fgetc(f) != EOF)
        ;
    fclose(f);
}

static byocl_status faulty_run(void *ctx, const char *symbol, DLTensor *const *args, int n_in,
                               int n_out, byocl_error *err)
{
    faulty_module *f = ctx;
    wait_once();
    if (f->fail_from > 0 && ++f->calls >= f->fail_from)
        return byocl_error_set(err, BYOCL_ERR_RUNTIME,
                               "faulty target: %s fails on purpose (BYOCL_FAULTY_FAIL)", symbol);
    return byocl_rtmod_run(f->ref, symbol, args, n_in, n_out, err);
}

static void faulty_destroy(void *ctx)
{
    faulty_module *f = ctx;
    byocl_rtmod_free(f->ref);
    free(f);
}

/* Node `id` of `region` into `fn`: *out the new id (a relu becomes its argument). */
static byocl_status copy_node(const byocl_function *region, int id, byocl_function *fn,
                              const int *map, int *out, byocl_error *err)
{
    int n_args = byocl_node_num_args(region, id), args[64];
    if (n_args > 64)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED, "faulty target: too many arguments");
    for (int k = 0; k < n_args; k++)
        args[k] = map[byocl_node_arg(region, id, k)];
    const char *op = byocl_node_op(region, id);
    switch (byocl_node_kind_of(region, id)) {
    case BYOCL_NODE_VAR:
        *out = byocl_function_add_param(fn, byocl_node_name(region, id),
                                        byocl_node_type(region, id), err);
        break;
    case BYOCL_NODE_CONSTANT:
        *out = byocl_function_add_constant(fn, (byocl_tensor *)byocl_node_value(region, id), err);
        break;
    case BYOCL_NODE_CALL:
        *out =
            op && strcmp(op, "nn.relu") == 0 ? args[0] /* the fault */
            : op ? byocl_function_add_call(fn, op, args, n_args, byocl_node_attrs(region, id), err)
                 : byocl_function_add_call_global(fn, byocl_node_callee(region, id), args, n_args,
                                                  err);
        break;
    case BYOCL_NODE_TUPLE:
        *out = byocl_function_add_tuple(fn, args, n_args, err);
        break;
    case BYOCL_NODE_GETITEM:
        *out = byocl_function_add_getitem(fn, args[0], byocl_node_index(region, id), err);
        break;
    }
    return *out < 0 ? err->status : BYOCL_OK;
}

/* The region with every relu as the identity, as function @wrong of `m`. */
static byocl_status rebuild_wrong(const byocl_function *region, const char *symbol,
                                  byocl_module *m, byocl_function **out, byocl_error *err)
{
    byocl_function *fn = byocl_module_add_function(m, "wrong", err);
    *out = fn;
    if (!fn)
        return err->status;
    int n = byocl_function_num_nodes(region);
    int *map = malloc(((size_t)n + 1) * sizeof *map);
    if (!map)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "faulty target: out of memory");
    byocl_status st = BYOCL_OK;
    for (int id = 0; id < n && st == BYOCL_OK; id++)
        st = copy_node(region, id, fn, map, &map[id], err);
    if (st == BYOCL_OK)
        st = byocl_function_set_body(fn, map[byocl_function_body(region)], err);
    free(map);
    byocl_attr attr = {.key = "global_symbol", .kind = BYOCL_ATTR_STR, .s = symbol};
    if (st == BYOCL_OK)
        st = byocl_function_set_attr(fn, &attr, err);
    if (st == BYOCL_OK)
        st = byocl_infer_types(m, err);
    return st;
}

static byocl_status faulty_compile(void *ctx, const byocl_function *region,
                                   const byocl_target_config *config, byocl_rtmod **out,
                                   byocl_error *err)
{
    (void)ctx;
    (void)config;
    *out = NULL;
    const char *symbol = byocl_attrs_get_str(byocl_function_attrs(region), "global_symbol",
                                             byocl_function_name(region));
    if (getenv("BYOCL_FAULTY_COMPILE_FAIL"))
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "faulty target: %s does not compile, on purpose "
                               "(BYOCL_FAULTY_COMPILE_FAIL)",
                               symbol);
    byocl_module *m = byocl_module_new();
    faulty_module *f = calloc(1, sizeof *f);
    if (!m || !f) {
        byocl_module_free(m);
        free(f);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "faulty target: out of memory");
    }
    const char *fail = getenv("BYOCL_FAULTY_FAIL");
    size_t len = strlen(symbol);
    if (fail && strncmp(fail, symbol, len) == 0 && (fail[len] == '\0' || fail[len] == '@'))
        f->fail_from = fail[len] == '@' ? strtol(fail + len + 1, NULL, 10) : 1;
    byocl_function *wrong = NULL;
    byocl_status st = rebuild_wrong(region, symbol, m, &wrong, err);
    if (st == BYOCL_OK)
        st = byocl_rtmod_ref_new(wrong, &f->ref, err); /* copies the function */
    byocl_module_free(m);
    if (st != BYOCL_OK) {
        faulty_destroy(f);
        return st;
    }
    static const byocl_rtmod_i iface = {.run = faulty_run, .destroy = faulty_destroy};
    return byocl_rtmod_new("faulty", &iface, f, out, err);
}

const uint32_t byocl_target_plugin_api_version = BYOCL_TARGET_API_VERSION;

byocl_status byocl_target_plugin_init(uint32_t api_version, byocl_error *err)
{
    if (api_version != BYOCL_TARGET_API_VERSION)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "faulty target: built for target API %u, loaded by %u",
                               (unsigned)BYOCL_TARGET_API_VERSION, (unsigned)api_version);
    const byocl_target_i target = {
        .name = "faulty",
        .api_version = BYOCL_TARGET_API_VERSION,
        .supports = faulty_supports,
        .compile = faulty_compile,
    };
    return byocl_target_register(&target, err);
}
