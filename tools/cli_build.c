/* Partition-then-build for a target, shared by the commands that run models. */
#include <stdio.h>
#include <string.h>

#include "byocl/opencl.h"
#include "byocl/pipeline.h"
#include "byocl/target.h"
#include "cli_build.h"
#include "cli_progress.h"

bool cli_is_region_target(const char *target)
{
    return target && strcmp(target, "host") != 0 && strcmp(target, "ref") != 0;
}

int cli_check_target(const cli_command *cmd, const char *target)
{
    if (!cli_is_region_target(target) || byocl_target_find(target))
        return CLI_EXIT_OK;
    char known[512] = "";
    size_t at = 0;
    for (int i = 0; i < byocl_target_count() && at < sizeof known; i++)
        at += (size_t)snprintf(known + at, sizeof known - at, ", %s", byocl_target_at(i)->name);
    return cli_usage_error(cmd, "unknown target '%s' (known: host, ref%s)", target, known);
}

int cli_check_device(const cli_command *cmd, const char *target, const char *device)
{
    if (!device)
        return CLI_EXIT_OK;
    if (!target || strcmp(target, "opencl") != 0)
        return cli_usage_error(cmd, "--device goes with --target opencl");
    byocl_error err;
    if (byocl_opencl_device_find(device, NULL, &err) != BYOCL_OK)
        return cli_fail_error(&err);
    return CLI_EXIT_OK;
}

bool cli_has_regions(const byocl_module *m)
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

byocl_status cli_partition_for_target(const cli_build_request *req, const byocl_module *m,
                                      byocl_module **out, byocl_error *err)
{
    *out = NULL;
    if (strcmp(req->target, "opencl") == 0) {
        byocl_opencl_options o = byocl_opencl_options_default();
        o.device = req->device;
        o.profile = req->profile;
        byocl_status st = byocl_opencl_configure(&o, err);
        if (st != BYOCL_OK)
            return st;
    }
    byocl_module *p = byocl_module_clone(m, err);
    if (!p)
        return err->status;
    /* A model annotated by hand (or partitioned already) keeps its own regions. */
    const char *targets[1] = {req->target};
    byocl_pipeline_options po = {.targets = targets, .n_targets = cli_has_regions(p) ? 0 : 1};
    byocl_status st = byocl_pipeline_partition(p, &po, err);
    if (st != BYOCL_OK) {
        byocl_module_free(p);
        return st;
    }
    *out = p;
    return BYOCL_OK;
}

static void warn_fallback(void *user, const char *region, const char *reason)
{
    const cli_build_request *req = user;
    fprintf(stderr, "byocl: warning: region @%s runs on the host (--fallback %s): %s\n", region,
            req->fallback, reason);
}

byocl_status cli_build_model(const cli_build_request *req, const byocl_module *m,
                             byocl_compiled **out, double *build_ms, byocl_error *err)
{
    bool regions = cli_is_region_target(req->target);
    byocl_build_options opt = byocl_build_options_default();
    opt.target = regions ? "host" : req->target;
    opt.fn_name = regions ? "main" : req->fn_name;
    opt.threads = req->threads;
    opt.fallback = req->fallback;
    if (!req->quiet_fallback) {
        opt.on_fallback = warn_fallback;
        opt.fallback_user = (void *)req;
    }
    if (req->adjust)
        req->adjust(req->adjust_user, &opt);
    char label[300];
    snprintf(label, sizeof label, "building @%s for target %s", opt.fn_name ? opt.fn_name : "main",
             req->target);
    cli_progress *progress = cli_progress_start(req->label ? req->label : label, 0, req->quiet);
    byocl_module *partitioned = NULL;
    double t0 = cli_seconds();
    byocl_status st = regions ? cli_partition_for_target(req, m, &partitioned, err) : BYOCL_OK;
    if (st == BYOCL_OK)
        st = byocl_build(partitioned ? partitioned : m, &opt, out, err);
    if (build_ms)
        *build_ms = (cli_seconds() - t0) * 1e3;
    cli_progress_finish(progress, st == BYOCL_OK);
    byocl_module_free(partitioned);
    return st;
}
