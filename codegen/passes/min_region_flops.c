/* Pass: min_region_flops (cost-based offload). A region whose arithmetic is small costs
 * more to hand to its target (launches, transfers, the host side of the call) than it
 * can save; such a region stays on the host. Its annotations become compiler="default",
 * TVM's mark for the host, which partition removes (flatten_annotations.h), so its ops
 * are built with the rest of @main. A region's arithmetic is byocl_split_node_flops's
 * estimate summed over its calls: 2 FLOPs per multiply-add of convolutions, dense layers
 * and batch matmuls, one per output element of the other ops. */
#include <math.h>
#include <stdlib.h>

#include "byocl/passes.h"
#include "byocl/split.h"
#include "flatten_annotations.h"
#include "rebuild.h"
#include "regions.h"

byocl_status byocl_keep_small_regions_on_host(byocl_module *m, double min_flops,
                                              byocl_small_region_fn report, void *user,
                                              byocl_error *err)
{
    if (!(min_flops >= 0) || isinf(min_flops))
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "the least FLOPs of a region must be a number >= 0, got %g",
                               min_flops);
    byocl_function *fn;
    byocl_status st = pass_find_main(m, "byocl_keep_small_regions_on_host", &fn, err);
    if (st != BYOCL_OK || min_flops == 0)
        return st;
    byocl_regions r;
    if ((st = pass_regions_analyze(fn, &r, err)) != BYOCL_OK)
        return st;
    double *flops = calloc((size_t)r.n_regions + 1, sizeof *flops);
    int *n_ops = calloc((size_t)r.n_regions + 1, sizeof *n_ops);
    int *first = malloc(sizeof *first * ((size_t)r.n_regions + 1));
    if (!flops || !n_ops || !first)
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
    for (int R = 0; st == BYOCL_OK && R < r.n_regions; R++) {
        if (flops[R] >= min_flops)
            continue;
        if (report)
            report(user, fn, first[R], r.target[R], n_ops[R], flops[R]);
        for (int id = 0; st == BYOCL_OK && id < fn->n_nodes; id++)
            if (r.region_of[id] == R && pass_is_annotation(fn, id))
                if (byocl_attrs_set_str(m, &fn->nodes[id].attrs, "compiler",
                                        BYOCL_COMPILER_DEFAULT) != BYOCL_OK)
                    st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory weighing regions");
    }
    free(flops);
    free(n_ops);
    free(first);
    pass_regions_release(&r);
    return st;
}
