/* Concatenations in place (clg_concat_in_place): the OpenCL counterpart of the host's
 * codegen/driver/concat_in_place.c. squeezenet's fire modules, densenet's dense blocks
 * and inception's branches end in concatenations along the channels of one image; as
 * copies they took densenet121 offloaded 174 launches and about 5 ms a run (PoCL, Zen 2).
 * Here each input is computed straight into its slice of the concatenation's buffer,
 * which the runtime makes a sub-buffer (byocl_cl_slice). */
#include <stdlib.h>

#include "cl_impl.h"

/* OpenCL's least CL_DEVICE_MEM_BASE_ADDR_ALIGN (long16: 1024 bits), what PoCL reports. */
#define DEFAULT_MEM_BASE_ALIGN 128

/* One run of a concatenation's inputs: a root to compute into a slice (buf -1), or the
 * buffer of an earlier concatenation in place that those inputs fill from its start. */
typedef struct piece {
    int root, buf;
    size_t bytes;
} piece;

/* The root of the concatenation in place whose buffer is `buf`, or -1. */
static int holder_of(const clg_gen *gen, int buf)
{
    for (int g = 0; g < gen->graph.n_groups; g++) {
        const clg_group *grp = &gen->graph.groups[g];
        if (grp->in_place && gen->graph.info[grp->tail].buf == buf)
            return grp->tail;
    }
    return -1;
}

/* The roots of group `grp`'s inputs (*n of them, malloc'ed; NULL and *n 0 when it cannot
 * be in place, NULL and *n -1 when out of memory): a concatenation into one contiguous block
 * (every axis before the concatenated one of extent 1) whose result is not a region
 * output. */
static int *concat_roots(clg_gen *gen, const clg_group *grp, int *n)
{
    const byocl_function *fn = gen->fn;
    const byocl_node *node = &fn->nodes[grp->anchor];
    *n = 0;
    if (grp->kind != CLG_ANCHOR_CONCAT || gen->graph.info[grp->tail].buf >= 0)
        return NULL;
    const byocl_shape *out = &node->type->shape;
    int axis = (int)byocl_attrs_get_int(&node->attrs, "axis", 0);
    if (axis < 0)
        axis += out->rank;
    for (int d = 0; d < axis; d++)
        if (out->dims[d] != 1)
            return NULL;
    const byocl_type *fields = fn->nodes[node->args[0]].type;
    int count = fields->kind == BYOCL_TYPE_TUPLE ? fields->n_fields : 1;
    int *roots = malloc((size_t)(count > 0 ? count : 1) * sizeof *roots);
    if (!roots) {
        *n = -1;
        return NULL;
    }
    if (count < 1 || clg_flatten(&gen->graph, node->args[0], roots, count) != count) {
        free(roots); /* nested tuples: emit_concat says so */
        return NULL;
    }
    *n = count;
    return roots;
}

/* Whether root r, stored nowhere yet, can be computed into a slice: a group stores it as
 * its one result. */
static bool placeable(const clg_gen *gen, int r)
{
    const clg_node_info *info = &gen->graph.info[r];
    return info->buf < 0 && info->group >= 0 && gen->graph.groups[info->group].tail == r &&
           gen->graph.groups[info->group].kind != CLG_ANCHOR_TOPK &&
           clg_gen_root_bytes(gen, r) > 0;
}

/* The pieces of a concatenation of roots[0..n-1] (pieces[], *n_pieces), each starting at
 * a multiple of `align`; false when some input cannot be placed. */
static bool plan_pieces(const clg_gen *gen, const int *roots, int n, size_t align,
                        piece *pieces, int *n_pieces)
{
    size_t offset = 0;
    int np = 0;
    for (int k = 0; k < n;) {
        if (offset % align != 0)
            return false;
        piece p = {.root = roots[k], .buf = -1};
        int b = gen->graph.info[roots[k]].buf;
        if (b < 0) {
            if (!placeable(gen, roots[k]))
                return false;
            p.bytes = clg_gen_root_bytes(gen, roots[k]);
            k++;
        } else {
            /* Inputs an earlier concatenation in place holds must fill it from its start:
             * it then becomes the piece (a dense block's ever longer concatenations nest). */
            size_t at;
            p.root = -1;
            p.buf = clg_gen_buf_outermost(gen, b, &at);
            int holder = holder_of(gen, p.buf);
            if (holder < 0 || at != 0)
                return false;
            for (; k < n; k++) {
                int bk = gen->graph.info[roots[k]].buf;
                if (bk < 0 || clg_gen_buf_outermost(gen, bk, &at) != p.buf || at != p.bytes)
                    break;
                p.bytes += clg_gen_root_bytes(gen, roots[k]);
            }
            if (p.bytes != clg_gen_root_bytes(gen, holder))
                return false;
        }
        for (int j = 0; j < np; j++) /* the same tensor twice needs a copy */
            if ((p.root >= 0 && pieces[j].root == p.root) || (p.buf >= 0 && pieces[j].buf == p.buf))
                return false;
        pieces[np++] = p;
        offset += p.bytes;
    }
    *n_pieces = np;
    return true;
}

/* Places group `grp`'s inputs in its result when each of them can be. */
static byocl_status place(clg_gen *gen, clg_group *grp, size_t align)
{
    int n = 0;
    int *roots = concat_roots(gen, grp, &n);
    if (n < 0)
        return byocl_error_set(gen->err, BYOCL_ERR_NOMEM, "out of memory generating @%s",
                               gen->fn->name);
    if (!roots)
        return BYOCL_OK;
    piece *pieces = malloc((size_t)n * sizeof *pieces);
    int n_pieces = 0;
    byocl_status st = pieces ? BYOCL_OK
                             : byocl_error_set(gen->err, BYOCL_ERR_NOMEM,
                                               "out of memory generating @%s", gen->fn->name);
    if (st == BYOCL_OK && plan_pieces(gen, roots, n, align, pieces, &n_pieces)) {
        int y = clg_gen_root_buf(gen, grp->tail);
        size_t offset = 0;
        for (int i = 0; y >= 0 && i < n_pieces; i++) {
            if (pieces[i].root >= 0) {
                if (clg_gen_root_slice(gen, pieces[i].root, y, offset) < 0)
                    y = -1;
            } else {
                clg_buf *held = &gen->bufs[pieces[i].buf];
                held->within = y;
                held->offset = offset;
                held->bytes = pieces[i].bytes; /* a slice has no slack */
            }
            offset += pieces[i].bytes;
        }
        if (y < 0)
            st = gen->err->status;
        else
            grp->in_place = true;
    }
    free(pieces);
    free(roots);
    return st;
}

byocl_status clg_concat_in_place(clg_gen *gen)
{
    size_t align = gen->opt.mem_base_align > 0 ? (size_t)gen->opt.mem_base_align
                                                : DEFAULT_MEM_BASE_ALIGN;
    byocl_status st = BYOCL_OK;
    for (int g = 0; st == BYOCL_OK && g < gen->graph.n_groups; g++)
        st = place(gen, &gen->graph.groups[g], align);
    return st;
}
