/* Pass: keep_on_host (cost-based offload). A region that costs more to hand to its target
 * (launches, transfers, the host side of the call) than it saves stays on the host: its
 * annotations become compiler="default", TVM's mark for the host, and go at once
 * (flatten_annotations.h), so its ops are built with the rest of @main and the regions
 * left are numbered as partition will number them. Two criteria, as
 * the policy gives them:
 * - estimated arithmetic below policy->min_flops: byocl_split_node_flops summed over the
 *   region's calls (2 FLOPs per multiply-add of convolutions, dense layers and batch
 *   matmuls, one per output element of the other ops);
 * - measured: in a profile of the same partition (byocl bench --json), the region took
 *   longer offloaded than its nodes took on the host. Region R of the analysis is the
 *   function partition names "<target>_main_<R>". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/passes.h"
#include "byocl/split.h"
#include "flatten_annotations.h"
#include "rebuild.h"
#include "regions.h"

/* The profile entry of region R (its symbol), or NULL. */
static const byocl_region_timing *timing_of(const byocl_offload_policy *policy,
                                            const char *symbol)
{
    for (int i = 0; i < policy->n_profile; i++)
        if (strcmp(policy->profile[i].symbol, symbol) == 0)
            return &policy->profile[i];
    return NULL;
}

/* Every entry of the profile must name a region of this partition, and every region must
 * have one: a profile of another model, target or options would decide at random. */
static byocl_status check_profile(const byocl_offload_policy *policy, const byocl_regions *r,
                                  byocl_error *err)
{
    char symbol[160];
    for (int i = 0; i < policy->n_profile; i++) {
        bool found = false;
        for (int R = 0; R < r->n_regions && !found; R++) {
            snprintf(symbol, sizeof symbol, "%s_main_%d", r->target[R], R);
            found = strcmp(symbol, policy->profile[i].symbol) == 0;
        }
        if (!found)
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "the profile's region '%s' is not a region of this "
                                   "partition (it has %d): the profile comes from another "
                                   "model, target or options",
                                   policy->profile[i].symbol, r->n_regions);
    }
    for (int R = 0; R < r->n_regions; R++) {
        snprintf(symbol, sizeof symbol, "%s_main_%d", r->target[R], R);
        if (!timing_of(policy, symbol))
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "region %s is not in the profile: the profile comes from "
                                   "another model, target or options",
                                   symbol);
    }
    return BYOCL_OK;
}

/* Why region R stays on the host ("" when it does not). */
static void reason(const byocl_offload_policy *policy, const char *symbol, double flops,
                   char *why, size_t len)
{
    why[0] = '\0';
    const byocl_region_timing *t = policy->n_profile ? timing_of(policy, symbol) : NULL;
    if (flops < policy->min_flops)
        snprintf(why, len, "under the minimum of %.4g FLOPs", policy->min_flops);
    else if (t && t->offloaded_ms > t->host_ms)
        snprintf(why, len, "%s took %.4g ms offloaded against %.4g ms on the host in the profile",
                 symbol, t->offloaded_ms, t->host_ms);
}

byocl_status byocl_keep_regions_on_host(byocl_module *m, const byocl_offload_policy *policy,
                                        byocl_error *err)
{
    if (!policy || !(policy->min_flops >= 0) || isinf(policy->min_flops))
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "the least FLOPs of a region must be a number >= 0, got %g",
                               policy ? policy->min_flops : NAN);
    if (policy->n_profile < 0 || (policy->n_profile > 0 && !policy->profile))
        return byocl_error_set(err, BYOCL_ERR_INVALID, "keep_on_host: bad profile");
    byocl_function *fn;
    byocl_status st = pass_find_main(m, "byocl_keep_regions_on_host", &fn, err);
    if (st != BYOCL_OK || (policy->min_flops == 0 && policy->n_profile == 0))
        return st;
    byocl_regions r;
    if ((st = pass_regions_analyze(fn, &r, err)) != BYOCL_OK)
        return st;
    if (policy->n_profile > 0)
        st = check_profile(policy, &r, err);
    double *flops = calloc((size_t)r.n_regions + 1, sizeof *flops);
    int *n_ops = calloc((size_t)r.n_regions + 1, sizeof *n_ops);
    int *first = malloc(sizeof *first * ((size_t)r.n_regions + 1));
    if (st == BYOCL_OK && (!flops || !n_ops || !first))
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory weighing regions");
    for (int R = 0; st == BYOCL_OK && R < r.n_regions; R++)
        first[R] = -1;
    for (int id = 0; st == BYOCL_OK && id < fn->n_nodes; id++) {
        int R = r.region_of[id];
        if (R < 0 || fn->nodes[id].kind != BYOCL_NODE_CALL || pass_is_annotation(fn, id))
            continue;
        flops[R] += (double)byocl_split_node_flops(fn, id);
        n_ops[R]++;
        if (first[R] < 0)
            first[R] = id;
    }
    bool kept = false;
    for (int R = 0; st == BYOCL_OK && R < r.n_regions; R++) {
        char symbol[160], why[256];
        snprintf(symbol, sizeof symbol, "%s_main_%d", r.target[R], R);
        reason(policy, symbol, flops[R], why, sizeof why);
        if (!why[0])
            continue;
        kept = true;
        if (policy->report)
            policy->report(policy->user, fn, first[R], r.target[R], n_ops[R], flops[R], why);
        for (int id = 0; st == BYOCL_OK && id < fn->n_nodes; id++)
            if (r.region_of[id] == R && pass_is_annotation(fn, id) &&
                byocl_attrs_set_str(m, &fn->nodes[id].attrs, "compiler",
                                    BYOCL_COMPILER_DEFAULT) != BYOCL_OK)
                st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory weighing regions");
    }
    free(flops);
    free(n_ops);
    free(first);
    pass_regions_release(&r);
    if (st == BYOCL_OK && kept)
        st = pass_flatten_annotations(m, fn, err);
    return st;
}
