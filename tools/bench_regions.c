/* The region of each op call of @main, for byocl bench (see bench_regions.h). */
#include <stdlib.h>
#include <string.h>

#include "bench_regions.h"
#include "cli_build.h"

#define BEGIN "annotation.compiler_begin"
#define END "annotation.compiler_end"

static bool is_op(const byocl_function *fn, int id, const char *op)
{
    const char *name = byocl_node_op(fn, id);
    return name && strcmp(name, op) == 0;
}

/* An op call that computes something (not an annotation). */
static bool is_compute_call(const byocl_function *fn, int id)
{
    return byocl_node_op(fn, id) && !is_op(fn, id, BEGIN) && !is_op(fn, id, END);
}

/* Annotates, checks and merges @main of a copy of m for `target`, as the pipeline does
 * before it partitions. */
static byocl_status annotate_copy(const byocl_module *m, const char *target,
                                  const byocl_offload_policy *policy, byocl_module **out,
                                  byocl_error *err)
{
    byocl_module *a = byocl_module_clone(m, err);
    if (!a)
        return err->status;
    byocl_status st = byocl_infer_types(a, err);
    const char *targets[1] = {target};
    if (st == BYOCL_OK && !byocl_module_has_regions(a))
        st = byocl_annotate_target(a, targets, 1, err);
    if (st == BYOCL_OK)
        st = byocl_check_annotations(a, false, err);
    if (st == BYOCL_OK)
        st = byocl_merge_regions(a, err);
    if (st == BYOCL_OK && policy)
        st = byocl_keep_regions_on_host(a, policy, err);
    if (st != BYOCL_OK) {
        byocl_module_free(a);
        return st;
    }
    *out = a;
    return BYOCL_OK;
}

/* Maps the op calls of the annotated @main back onto the original's, in order. */
static byocl_status map_calls(const byocl_function *orig, const byocl_function *ann,
                              const int *ann_region, bench_regions *r, byocl_error *err)
{
    int n_ann = byocl_function_num_nodes(ann), a = 0;
    for (int id = 0; id < r->n_nodes; id++) {
        r->region_of[id] = -1;
        if (!is_compute_call(orig, id))
            continue;
        while (a < n_ann && !is_compute_call(ann, a))
            a++;
        if (a == n_ann || strcmp(byocl_node_op(orig, id), byocl_node_op(ann, a)) != 0) {
            char label[64];
            return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                                   "cannot match %s (%s) of @main with the annotated @main",
                                   byocl_node_label(orig, id, label, sizeof label),
                                   byocl_node_op(orig, id));
        }
        int region = ann_region[a++];
        r->region_of[id] = region;
        if (region >= 0)
            r->n_ops[region]++;
        else
            r->n_host_ops++;
    }
    return BYOCL_OK;
}

byocl_status bench_regions_annotate(const byocl_module *m, const char *target,
                                    const byocl_offload_policy *policy, bench_regions *out,
                                    byocl_error *err)
{
    *out = (bench_regions){0};
    for (int f = 0; f < byocl_module_num_functions(m); f++) {
        const byocl_function *fn = byocl_module_function_at(m, f);
        if (byocl_attrs_get_str(byocl_function_attrs(fn), "Compiler", NULL))
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "the model is partitioned already (@%s has a Compiler "
                                   "attribute): give it unpartitioned, with or without "
                                   "annotations, so that its host-only build can be compared",
                                   byocl_function_name(fn));
    }
    const byocl_function *orig = byocl_module_find(m, "main");
    if (!orig)
        return byocl_error_set(err, BYOCL_ERR_NOT_FOUND, "the model has no @main");
    byocl_status st = annotate_copy(m, target, policy, &out->annotated, err);
    if (st != BYOCL_OK)
        return st;
    const byocl_function *ann = byocl_module_find(out->annotated, "main");
    int n_ann = byocl_function_num_nodes(ann);
    out->n_nodes = byocl_function_num_nodes(orig);
    out->region_of = malloc(((size_t)out->n_nodes + 1) * sizeof *out->region_of);
    int *ann_region = malloc(((size_t)n_ann + 1) * sizeof *ann_region);
    if (!out->region_of || !ann_region)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    if (st == BYOCL_OK)
        st = byocl_regions_of_nodes(ann, ann_region, &out->n_regions, err);
    if (st == BYOCL_OK) {
        out->n_ops = calloc((size_t)out->n_regions + 1, sizeof *out->n_ops);
        if (!out->n_ops)
            st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    }
    if (st == BYOCL_OK)
        st = map_calls(orig, ann, ann_region, out, err);
    free(ann_region);
    if (st != BYOCL_OK)
        bench_regions_free(out);
    return st;
}

void bench_regions_free(bench_regions *r)
{
    free(r->region_of);
    free(r->n_ops);
    byocl_module_free(r->annotated);
    *r = (bench_regions){0};
}
