/* byocl_compile: partition for the requested targets, then build (include/byocl/pipeline.h).
 * Every program that runs a model (the CLI's commands, the tests, the examples) compiles
 * through here, so "partition, then build the rest for the host" exists once. */
#include <string.h>

#include "byocl/opencl.h"
#include "byocl/pipeline.h"

byocl_status byocl_target_register_builtins(byocl_error *err)
{
    if (byocl_opencl_register() != BYOCL_OK)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory registering the built-in "
                                                     "targets");
    return BYOCL_OK;
}

byocl_compile_options byocl_compile_options_default(void)
{
    return (byocl_compile_options){.build = byocl_build_options_default()};
}

bool byocl_module_has_regions(const byocl_module *m)
{
    for (int f = 0; f < byocl_module_num_functions(m); f++) {
        const byocl_function *fn = byocl_module_function_at(m, f);
        if (byocl_attrs_get_str(byocl_function_attrs(fn), "Compiler", NULL))
            return true;
    }
    const byocl_function *main_fn = byocl_module_find(m, "main");
    for (int id = 0; main_fn && id < byocl_function_num_nodes(main_fn); id++) {
        const char *op = byocl_node_op(main_fn, id);
        if (op && strcmp(op, "annotation.compiler_begin") == 0)
            return true;
    }
    return false;
}

/* Whether the options ask for partitioning at all. */
static bool partitions(const byocl_compile_options *opt)
{
    return opt->partition.n_targets > 0 || opt->partition.range_target;
}

byocl_status byocl_compile_partition(const byocl_module *m, const byocl_compile_options *opt,
                                     byocl_module **out, byocl_error *err)
{
    if (!out)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_compile: no place for the result");
    *out = NULL;
    if (!m)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_compile: no module");
    byocl_compile_options defaults = byocl_compile_options_default();
    if (!opt)
        opt = &defaults;
    byocl_status st = byocl_target_register_builtins(err);
    if (st == BYOCL_OK)
        st = byocl_target_options_check(opt->build.target_options, err);
    if (st != BYOCL_OK)
        return st;
    byocl_module *p = byocl_module_clone(m, err);
    if (!p)
        return err ? err->status : BYOCL_ERR_NOMEM;
    if (partitions(opt)) {
        byocl_pipeline_options po = opt->partition;
        /* A model annotated by hand (or partitioned already) keeps its own regions. */
        if (byocl_module_has_regions(p))
            po.n_targets = 0;
        st = byocl_pipeline_partition(p, &po, err);
    }
    if (st != BYOCL_OK) {
        byocl_module_free(p);
        return st;
    }
    *out = p;
    return BYOCL_OK;
}

byocl_status byocl_compile(const byocl_module *m, const byocl_compile_options *opt,
                           byocl_compiled **out, byocl_error *err)
{
    if (!out)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_compile: no place for the result");
    *out = NULL;
    byocl_compile_options defaults = byocl_compile_options_default();
    if (!opt)
        opt = &defaults;
    if (!partitions(opt)) { /* built as it is: no copy needed, byocl_build makes its own */
        if (!m)
            return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_compile: no module");
        return byocl_build(m, &opt->build, out, err);
    }
    byocl_module *partitioned = NULL;
    byocl_status st = byocl_compile_partition(m, opt, &partitioned, err);
    if (st == BYOCL_OK) {
        byocl_build_options bo = opt->build;
        bo.fn_name = "main"; /* partitioning is of @main */
        st = byocl_build(partitioned, &bo, out, err);
    }
    byocl_module_free(partitioned);
    return st;
}
