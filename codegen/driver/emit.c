/* byocl_emit_regions: each region's generated code through its target's emit member, for
 * `byocl partition --emit DIR` (include/byocl/pipeline.h). */
#include "byocl/passes.h"
#include "byocl/pipeline.h"
#include "target/target_impl.h"

/* Writes region fn through its target when the target can show its code; *written is set
 * when it did. */
static byocl_status emit_region(const byocl_function *fn, const char *dir,
                                const byocl_target_options *options, bool *written,
                                byocl_error *err)
{
    *written = false;
    const char *name = byocl_attrs_get_str(byocl_function_attrs(fn), "Compiler", NULL);
    const byocl_target_i *target = name ? byocl_target_find(name) : NULL;
    if (!target || !target->emit)
        return BYOCL_OK;
    byocl_target_config config;
    byocl_status st = target_config_init(&config, name, options, err);
    if (st == BYOCL_OK)
        st = target->emit(target->ctx, fn, &config, dir, err);
    if (st != BYOCL_OK)
        byocl_error_prefix(err, "region @%s: ", byocl_function_name(fn));
    *written = st == BYOCL_OK;
    return st;
}

byocl_status byocl_emit_regions(const byocl_module *m, const char *dir,
                                const byocl_target_options *options, int *n_regions,
                                byocl_error *err)
{
    if (n_regions)
        *n_regions = 0;
    if (!m || !dir)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_emit_regions: %s",
                               m ? "no folder given" : "no module given");
    byocl_status st = byocl_target_register_builtins(err);
    if (st == BYOCL_OK)
        st = byocl_target_options_check(options, err);
    if (st != BYOCL_OK)
        return st;
    byocl_module *typed = byocl_module_clone(m, err);
    if (!typed)
        return err ? err->status : BYOCL_ERR_NOMEM;
    st = byocl_infer_types(typed, err);
    int written = 0;
    for (int f = 0; st == BYOCL_OK && f < byocl_module_num_functions(typed); f++) {
        bool done = false;
        st = emit_region(byocl_module_function_at(typed, f), dir, options, &done, err);
        written += done;
    }
    byocl_module_free(typed);
    if (n_regions)
        *n_regions = written;
    return st;
}
