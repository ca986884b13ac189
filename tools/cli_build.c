/* Compiling a model for a target the way every command that runs one does, through
 * byocl_compile, with the target flags and progress. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int cli_check_dump_after(const cli_command *cmd, const char *pass)
{
    if (!pass || strcmp(pass, "all") == 0)
        return CLI_EXIT_OK;
    char list[256];
    size_t at = 0;
    list[0] = '\0';
    for (int i = 0; byocl_pipeline_pass_name(i) && at < sizeof list; i++) {
        if (strcmp(pass, byocl_pipeline_pass_name(i)) == 0)
            return CLI_EXIT_OK;
        at += (size_t)snprintf(list + at, sizeof list - at, "%s, ", byocl_pipeline_pass_name(i));
    }
    return cli_usage_error(cmd, "unknown pass '%s' for --dump-after (passes: %sall)", pass, list);
}

/* Sets `key` to on for target t when it has that BOOL option and the user gave no value. */
static byocl_status turn_on(byocl_target_options *opts, const byocl_target_i *t, const char *key,
                            byocl_error *err)
{
    for (const byocl_target_option *o = t->options; o && o->key; o++)
        if (strcmp(o->key, key) == 0 && o->kind == BYOCL_OPTION_BOOL &&
            !byocl_target_options_get(opts, t->name, key))
            return byocl_target_options_set(opts, t->name, key, "on", err);
    return BYOCL_OK;
}

/* The option set of req: --target-opt, then --device, and --profile and keep_device where
 * the region target has such options. */
static byocl_status make_options(const cli_build_request *req, byocl_target_options **out,
                                 byocl_error *err)
{
    byocl_status st = byocl_target_options_new(out, err);
    for (int i = 0; st == BYOCL_OK && i < req->n_target_opts; i++)
        st = byocl_target_options_parse(*out, req->target_opts[i], err);
    const byocl_target_i *t = cli_is_region_target(req->target) ? byocl_target_find(req->target)
                                                                : NULL;
    if (st == BYOCL_OK && req->device && t)
        st = byocl_target_options_set(*out, t->name, "device", req->device, err);
    if (st == BYOCL_OK && t && req->profile)
        st = turn_on(*out, t, "profile", err);
    if (st == BYOCL_OK && t && req->keep_device)
        st = turn_on(*out, t, "keep_device", err);
    if (st != BYOCL_OK) {
        byocl_target_options_free(*out);
        *out = NULL;
    }
    return st;
}

/* --min-region-flops X: a number >= 0, optionally with k, M or G. */
static int parse_min_flops(const cli_command *cmd, const char *text, double *out)
{
    char *end;
    double v = strtod(text, &end);
    static const struct {
        char suffix;
        double scale;
    } units[] = {{'k', 1e3}, {'K', 1e3}, {'M', 1e6}, {'G', 1e9}};
    for (size_t i = 0; end != text && i < sizeof units / sizeof units[0]; i++)
        if (*end == units[i].suffix) {
            v *= units[i].scale;
            end++;
        }
    if (end == text || *end || !(v >= 0) || isinf(v))
        return cli_usage_error(cmd, "bad --min-region-flops '%s': expected a number of FLOPs >= 0, "
                                    "e.g. 2e6, 500k or 1.5G", text);
    *out = v;
    return CLI_EXIT_OK;
}

int cli_offload_flags(const cli_command *cmd, const cli_args *args, const char *target,
                      byocl_offload_policy *out)
{
    memset(out, 0, sizeof *out);
    const char *min_flops = cli_value(cmd, args, "min-region-flops", NULL);
    const char *profile = cli_value(cmd, args, "offload-profile", NULL);
    if ((min_flops || profile) && target && !cli_is_region_target(target))
        return cli_usage_error(cmd, "--%s goes with a region target (--target T)",
                               min_flops ? "min-region-flops" : "offload-profile");
    int rc = min_flops ? parse_min_flops(cmd, min_flops, &out->min_flops) : CLI_EXIT_OK;
    byocl_region_timing *timings = NULL;
    byocl_error err;
    if (rc == CLI_EXIT_OK && profile &&
        byocl_offload_profile_read(profile, &timings, &out->n_profile, &err) != BYOCL_OK)
        rc = cli_fail_error(&err);
    out->profile = timings;
    return rc;
}

void cli_offload_free(byocl_offload_policy *policy)
{
    byocl_offload_profile_free((byocl_region_timing *)policy->profile, policy->n_profile);
    policy->profile = NULL;
    policy->n_profile = 0;
}

int cli_target_flags(const cli_command *cmd, const cli_args *args, cli_build_request *req)
{
    req->device = cli_value(cmd, args, "device", NULL);
    req->n_target_opts = cli_count(cmd, args, "target-opt");
    req->target_opts = cli_values(cmd, args, "target-opt");
    if (req->device && !cli_is_region_target(req->target))
        return cli_usage_error(cmd, "--device goes with a region target (--target T)");
    byocl_error err;
    if (req->device &&
        byocl_target_device_find(req->target, req->device, NULL, NULL, &err) != BYOCL_OK)
        return cli_fail_error(&err);
    byocl_target_options *opts = NULL;
    byocl_status st = byocl_target_options_new(&opts, &err);
    for (int i = 0; st == BYOCL_OK && i < req->n_target_opts; i++)
        if (byocl_target_options_parse(opts, req->target_opts[i], &err) != BYOCL_OK) {
            byocl_target_options_free(opts); /* malformed text: a usage error */
            return cli_usage_error(cmd, "--target-opt: %s", err.msg);
        }
    if (st == BYOCL_OK) /* a target, key or value that does not exist: a failure */
        st = byocl_target_options_check(opts, &err);
    byocl_target_options_free(opts);
    return st == BYOCL_OK ? CLI_EXIT_OK : cli_fail_error(&err);
}

byocl_status cli_partition_for_target(const cli_build_request *req, const byocl_module *m,
                                      byocl_module **out, byocl_error *err)
{
    const char *targets[1] = {req->target};
    byocl_compile_options co = byocl_compile_options_default();
    co.partition.targets = targets;
    co.partition.n_targets = 1;
    co.partition.offload = req->offload;
    return byocl_compile_partition(m, &co, out, err);
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
    const char *targets[1] = {req->target};
    byocl_compile_options co = byocl_compile_options_default();
    co.partition.targets = targets;
    co.partition.n_targets = regions ? 1 : 0;
    co.partition.dump_after = req->dump_after;
    co.partition.complete = req->complete_annotations;
    co.partition.offload = req->offload;
    co.build.target = regions ? "host" : req->target;
    co.build.fn_name = req->fn_name;
    co.build.threads = req->threads;
    co.build.fallback = req->fallback;
    if (!req->quiet_fallback) {
        co.build.on_fallback = warn_fallback;
        co.build.fallback_user = (void *)req;
    }
    if (req->adjust)
        req->adjust(req->adjust_user, &co.build);
    char label[300];
    snprintf(label, sizeof label, "building @%s for target %s",
             !regions && req->fn_name ? req->fn_name : "main", req->target);
    byocl_target_options *opts = NULL;
    byocl_status st = make_options(req, &opts, err);
    co.build.target_options = opts;
    if (st != BYOCL_OK)
        return st;
    cli_progress *progress = cli_progress_start(req->label ? req->label : label, 0, req->quiet);
    double t0 = cli_seconds();
    st = byocl_compile(m, &co, out, err);
    if (build_ms)
        *build_ms = (cli_seconds() - t0) * 1e3;
    cli_progress_finish(progress, st == BYOCL_OK);
    byocl_target_options_free(opts);
    return st;
}

/* What values option o takes, as help shows them. */
static const char *option_values(const byocl_target_option *o)
{
    switch (o->kind) {
    case BYOCL_OPTION_STRING: return "TEXT";
    case BYOCL_OPTION_BOOL: return "on|off";
    case BYOCL_OPTION_INT: return "INTEGER";
    case BYOCL_OPTION_CHOICE: return o->choices ? o->choices : "";
    }
    return "?";
}

void cli_print_target(const byocl_target_i *t)
{
    printf("target %s\n", t->name);
    if (!t->options && !t->devices)
        printf("  options: none\n");
    else
        printf("  options (--target-opt %s.KEY=VALUE):\n", t->name);
    int width = t->devices ? (int)strlen("device") : 0; /* the keys' column */
    for (const byocl_target_option *o = t->options; o && o->key; o++)
        width = (int)strlen(o->key) > width ? (int)strlen(o->key) : width;
    if (t->devices)
        printf("    %-*s  %-20s %s\n", width, "device", "INDEX|NAME",
               "the device (--device D says the same; default: the target's choice)");
    for (const byocl_target_option *o = t->options; o && o->key; o++) {
        printf("    %-*s  %-20s %s", width, o->key, option_values(o),
               o->help ? o->help : "");
        if (o->default_value)
            printf(" (default: %s)", o->default_value);
        printf("\n");
    }
    if (!t->devices)
        return;
    byocl_device_info *devs = NULL;
    int n = 0;
    byocl_error err;
    if (byocl_target_devices(t->name, &devs, &n, &err) != BYOCL_OK) {
        printf("  devices: none (%s)\n", err.msg);
        return;
    }
    printf("  devices (--device INDEX or a part of the name):\n");
    for (int i = 0; i < n; i++)
        printf("    %d: %s (%s, %s; %.1f GiB%s)\n", i, devs[i].name,
               byocl_device_kind_name(devs[i].kind), devs[i].description,
               (double)devs[i].memory_bytes / (1024.0 * 1024.0 * 1024.0),
               devs[i].host_memory ? ", shares host memory" : "");
    free(devs);
}
