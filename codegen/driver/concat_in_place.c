/* Concatenations in place: where a host kernel step does nothing but concatenate tensors
 * into one contiguous block each (every dimension before the axis is 1, as in a batch-1
 * NCHW channel concatenation), the steps that write its inputs write them straight into
 * their slices of its result, and the copying step goes. squeezenet's fire modules,
 * densenet's dense blocks and inception's branches end in such concatenations. */
#include <stdlib.h>
#include <string.h>

#include "compiled.h"
#include "ops/op_impl.h"

/* Byte offsets of the slices, like every buffer of the pool (build.c's BUFFER_ALIGN): the
 * host code's vector loads assume it. */
#define SLICE_ALIGN 64

/* Whether root `r` can be written in place as a slice of another root: a pool tensor that
 * a host kernel step writes, not yet a slice of anything. */
static bool placeable(const byocl_compiled *c, const byocl_xvalue *r)
{
    return r->home == HOME_POOL && r->producer >= 0 && r->within < 0 && r->nbytes > 0 &&
           c->steps[r->producer].kind == BYOCL_STEP_KERNEL;
}

/* Step `s`'s concatenation: its result's value, and its inputs' values in order in
 * `ins` (n_in of them, malloc'ed), or -1 when the step is not a lone concatenation into
 * one contiguous block. */
static int lone_concatenation(const byocl_compiled *c, const byocl_xstep *s, int **ins,
                              int *n_in)
{
    if (s->kind != BYOCL_STEP_KERNEL || s->n_covered != 1 || s->n_out != 1)
        return -1;
    const byocl_node *n = &c->fn->nodes[s->covered[0]];
    if (!n->op || strcmp(n->op->name, "concatenate") != 0 || n->type->kind != BYOCL_TYPE_TENSOR)
        return -1;
    const byocl_shape *shape = &n->type->shape;
    int64_t axis = byocl_attrs_get_int(&n->attrs, "axis", 0);
    axis = axis < 0 ? axis + shape->rank : axis;
    for (int d = 0; d < axis; d++)
        if (shape->dims[d] != 1)
            return -1;
    *n_in = byocl_type_num_tensors(c->fn->nodes[n->args[0]].type);
    *ins = malloc((size_t)(*n_in > 0 ? *n_in : 1) * sizeof **ins);
    if (!*ins)
        return -2;
    for (int k = 0; k < *n_in; k++)
        (*ins)[k] = c->node_values[c->node_first[n->args[0]] + k];
    return s->args[s->n_in];
}

/* Places the inputs of step `s` in its result when each of them can be; returns whether
 * it did (-1: out of memory). An input that an earlier concatenation already holds brings
 * that one along when it and the inputs after it fill it from its start: a dense block's
 * concatenations of ever more of the same tensors then nest, the last holding them all. */
static int place_inputs(byocl_compiled *c, int s)
{
    int *ins = NULL, n_in = 0;
    int result = lone_concatenation(c, &c->steps[s], &ins, &n_in);
    if (result < 0)
        return result == -2 ? -1 : 0;
    int *pieces = malloc((size_t)(n_in > 0 ? n_in : 1) * sizeof *pieces), n_pieces = 0;
    if (!pieces) {
        free(ins);
        return -1;
    }
    bool ok = placeable(c, &c->values[result]);
    size_t offset = 0;
    for (int k = 0; k < n_in && ok;) {
        int piece = driver_value_outermost(c, c->values[ins[k]].root, NULL);
        size_t filled = 0, at;
        for (; k < n_in; k++) {
            const byocl_xvalue *v = &c->values[ins[k]];
            if (driver_value_outermost(c, v->root, &at) != piece || at != filled ||
                v->nbytes != c->values[v->root].nbytes)
                break;
            filled += v->nbytes;
        }
        ok = filled > 0 && filled == c->values[piece].nbytes && piece != result &&
             placeable(c, &c->values[piece]) && offset % SLICE_ALIGN == 0;
        for (int j = 0; j < n_pieces && ok; j++) /* the same tensor twice needs two copies */
            ok = pieces[j] != piece;
        pieces[n_pieces++] = piece;
        offset += filled;
    }
    free(ins);
    if (!ok) {
        free(pieces);
        return 0;
    }
    int written = -1; /* the result is whole once the last of its slices is written */
    offset = 0;
    for (int k = 0; k < n_pieces; k++) {
        byocl_xvalue *r = &c->values[pieces[k]];
        r->within = result;
        r->within_offset = offset;
        offset += r->nbytes;
        written = r->producer > written ? r->producer : written;
    }
    c->values[result].producer = written;
    free(pieces);
    return 1;
}

/* Drops step `s`, which writes nothing any longer. */
static void drop_step(byocl_compiled *c, int s)
{
    byocl_xstep *step = &c->steps[s];
    free(step->args);
    free(step->covered);
    memmove(step, step + 1, (size_t)(c->n_steps - s - 1) * sizeof *step);
    c->n_steps--;
    for (int v = 0; v < c->n_values; v++)
        if (c->values[v].producer > s)
            c->values[v].producer--;
}

byocl_status driver_concat_in_place(byocl_compiled *c, byocl_error *err)
{
    for (int s = 0; s < c->n_steps; s++) {
        int placed = place_inputs(c, s);
        if (placed < 0)
            return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
        if (placed) {
            drop_step(c, s--);
            c->stats.n_concats_in_place++;
        }
    }
    return BYOCL_OK;
}

int driver_value_outermost(const byocl_compiled *c, int root, size_t *offset)
{
    size_t at = 0;
    for (; c->values[root].within >= 0; root = c->values[root].within)
        at += c->values[root].within_offset;
    if (offset)
        *offset = at;
    return root;
}
