/* run_model: compile a model for byocl's graph executor and run it, with the C API of
 * <byocl/pipeline.h> and <byocl/runtime.h>. See docs/executor.md.
 *
 *   run_model [MODEL [TARGET [T.KEY=VALUE...]]]
 *       MODEL: builtin:NAME or a Relay text file (default builtin:seed); TARGET: host or
 *       ref (default ref), or a region target such as opencl: its regions are offloaded
 *       and the rest runs on the host; then the region target's options, e.g.
 *       opencl.buffers=copy (`byocl ops --target opencl` lists them).
 *
 * Input k gets deterministic random values in [0, 1) from seed k (a real program would
 * read its data). Prints each output's type and first values, and the storage plan. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <byocl/byocl.h>
#include <byocl/frontend.h>
#include <byocl/pipeline.h>
#include <byocl/runtime.h>

static int fail(const char *what, const byocl_error *err)
{
    fprintf(stderr, "run_model: %s: %s\n", what, err->msg);
    return 1;
}

int main(int argc, char **argv)
{
    const char *model = argc > 1 ? argv[1] : "builtin:seed";
    const char *target = argc > 2 ? argv[2] : "ref";
    byocl_error err;

    /* 1. Load: typed and verified, the same way `byocl run` gets it. */
    byocl_module *m = NULL;
    if (byocl_load_model(model, NULL, &m, &err) != BYOCL_OK)
        return fail("load", &err);

    /* 2. Compile once: partition for a region target, then the execution plan, the host
     *    kernels, each region's code, the storage plan. */
    bool offload = strcmp(target, "host") != 0 && strcmp(target, "ref") != 0;
    byocl_compile_options opt = byocl_compile_options_default();
    opt.partition.targets = &target;
    opt.partition.n_targets = offload ? 1 : 0;
    opt.build.target = offload ? "host" : target;
    byocl_target_options *target_options = NULL;
    byocl_status st = byocl_target_options_new(&target_options, &err);
    for (int k = 3; k < argc && st == BYOCL_OK; k++)
        st = byocl_target_options_parse(target_options, argv[k], &err);
    opt.build.target_options = target_options;
    byocl_compiled *compiled = NULL;
    if (st == BYOCL_OK)
        st = byocl_compile(m, &opt, &compiled, &err);
    byocl_target_options_free(target_options);
    byocl_module_free(m); /* the compiled model keeps what it needs */
    if (st != BYOCL_OK)
        return fail("compile", &err);

    /* 3. An executor owns the buffers; several may run one compiled model in parallel. */
    byocl_executor *ex = NULL;
    if (byocl_executor_new(compiled, &ex, &err) != BYOCL_OK) {
        byocl_compiled_free(compiled);
        return fail("executor", &err);
    }

    /* 4. Inputs by name (copied into the executor). */
    int rc = 0;
    for (int k = 0; k < byocl_compiled_num_inputs(compiled) && rc == 0; k++) {
        const byocl_type *type = byocl_compiled_input_type(compiled, k);
        byocl_tensor *t = byocl_tensor_new(type->dtype, &type->shape, &err);
        if (!t) {
            rc = fail("input", &err);
            break;
        }
        byocl_tensor_fill_random(t, (uint64_t)k, 0.0, 1.0);
        if (byocl_executor_set_input(ex, byocl_compiled_input_name(compiled, k), t, &err) !=
            BYOCL_OK)
            rc = fail("set input", &err);
        byocl_tensor_unref(t);
    }

    /* 5. Run (as often as needed: nothing is planned again), then read outputs by index:
     *    views valid until the next run. */
    if (rc == 0 && byocl_executor_run(ex, &err) != BYOCL_OK)
        rc = fail("run", &err);
    int n_out = rc == 0 ? byocl_executor_num_outputs(ex) : 0;
    if (rc == 0)
        printf("%s on target %s: %d output%s\n", model, byocl_compiled_target(compiled), n_out,
               n_out == 1 ? "" : "s");
    for (int i = 0; i < n_out; i++) {
        const byocl_tensor *out;
        if (byocl_executor_output(ex, i, &out, &err) != BYOCL_OK) {
            rc = fail("output", &err);
            break;
        }
        char type_s[256];
        const byocl_shape *shape = byocl_tensor_shape(out);
        byocl_type type = byocl_type_tensor(byocl_tensor_dtype(out), shape->rank, shape->dims);
        printf("output %d: %s, first values", i, byocl_type_str(&type, type_s, sizeof type_s));
        for (int64_t j = 0; j < byocl_tensor_numel(out) && j < 3; j++)
            printf(" %.9g", byocl_tensor_get(out, j));
        printf("\n");
    }

    /* 6. What the storage plan saved. */
    byocl_plan_stats stats;
    byocl_compiled_stats(compiled, &stats);
    if (rc == 0)
        printf("storage plan: %zu bytes for %zu bytes of intermediates\n", stats.planned_bytes,
               stats.intermediate_bytes);

    byocl_executor_free(ex);
    byocl_compiled_free(compiled);
    return rc;
}
