/* The partitioning pipeline, top to bottom (see include/byocl/pipeline.h): every caller,
 * the CLI included, partitions through byocl_pipeline_partition. */
#include <stdlib.h>
#include <string.h>

#include "byocl/passes.h"
#include "byocl/pipeline.h"
#include "byocl/text.h"

static const char *const pass_names[] = {
    "fold_constants",   "annotate_target", "annotate_range", "check_annotations",
    "merge_regions",    "keep_on_host",    "partition",
};
#define N_PASSES ((int)(sizeof pass_names / sizeof pass_names[0]))

const char *byocl_pipeline_pass_name(int index)
{
    return index >= 0 && index < N_PASSES ? pass_names[index] : NULL;
}

static byocl_status check_dump_after(const char *name, byocl_error *err)
{
    if (!name || strcmp(name, "all") == 0)
        return BYOCL_OK;
    for (int i = 0; i < N_PASSES; i++)
        if (strcmp(name, pass_names[i]) == 0)
            return BYOCL_OK;
    char known[256] = "";
    for (int i = 0; i < N_PASSES; i++) {
        strcat(known, pass_names[i]);
        strcat(known, ", ");
    }
    return byocl_error_set(err, BYOCL_ERR_INVALID,
                           "unknown pass '%s' for dump-after (passes: %sall)", name, known);
}

/* Prints the module after `pass` when the options ask for it. */
static byocl_status dump(const byocl_module *m, const byocl_pipeline_options *opt,
                         const char *pass, byocl_error *err)
{
    if (!opt->dump_after || (strcmp(opt->dump_after, "all") != 0 &&
                             strcmp(opt->dump_after, pass) != 0))
        return BYOCL_OK;
    byocl_print_options popt = {.show_types = true};
    char *text = byocl_text_print(m, &popt, NULL, err);
    if (!text)
        return err ? err->status : BYOCL_ERR_NOMEM;
    FILE *f = opt->dump ? opt->dump : stderr;
    fprintf(f, "// byocl: the module after %s\n%s", pass, text);
    fflush(f);
    free(text);
    return BYOCL_OK;
}

/* Runs one pass's result through the dump and names the pass in an error. */
static byocl_status after(const byocl_module *m, const byocl_pipeline_options *opt,
                          const char *pass, byocl_status st, byocl_error *err)
{
    if (st != BYOCL_OK) {
        byocl_error_prefix(err, "%s: ", pass);
        return st;
    }
    return dump(m, opt, pass, err);
}

byocl_status byocl_pipeline_partition(byocl_module *m, const byocl_pipeline_options *opt,
                                      byocl_error *err)
{
    static const byocl_pipeline_options defaults = {0};
    if (!m)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_pipeline_partition: no module");
    if (!opt)
        opt = &defaults;
    if (opt->n_targets < 0 || (opt->n_targets > 0 && !opt->targets))
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_pipeline_partition: bad targets");
    if (opt->n_targets > 0 && opt->range_target)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "annotate by op support (targets) or by node range, not both");
    byocl_status st = check_dump_after(opt->dump_after, err);
    if (st == BYOCL_OK)
        st = byocl_infer_types(m, err);
    if (st == BYOCL_OK)
        st = after(m, opt, "fold_constants", byocl_fold_constants(m, err), err);
    if (st == BYOCL_OK && opt->n_targets > 0)
        st = after(m, opt, "annotate_target",
                   byocl_annotate_target(m, opt->targets, opt->n_targets, err), err);
    if (st == BYOCL_OK && opt->range_target)
        st = after(m, opt, "annotate_range",
                   opt->range ? byocl_annotate_range_spec(m, opt->range, opt->range_target, err)
                              : byocl_annotate_range(m, opt->range_first, opt->range_last,
                                                     opt->range_target, err),
                   err);
    if (st == BYOCL_OK)
        st = after(m, opt, "check_annotations", byocl_check_annotations(m, opt->complete, err),
                   err);
    if (st == BYOCL_OK && !opt->no_merge)
        st = after(m, opt, "merge_regions", byocl_merge_regions(m, err), err);
    if (st == BYOCL_OK && (opt->offload.min_flops != 0 || opt->offload.n_profile != 0))
        st = after(m, opt, "keep_on_host", byocl_keep_regions_on_host(m, &opt->offload, err),
                   err);
    if (st == BYOCL_OK) {
        byocl_partition_options popt = {.constants_as_args = opt->constants_as_args};
        st = after(m, opt, "partition", byocl_partition(m, &popt, err), err);
    }
    return st;
}
