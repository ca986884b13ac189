/* The op registry: the concatenation of every op group's table, looked up by name. */
#include <string.h>

#include "op_impl.h"

#define BYOCL_OP_GROUPS(X) X(conv) X(pool) X(nn) X(elemwise) X(transform) X(index) X(image) X(annotation)

#define DECLARE_GROUP(g)                  \
    extern const byocl_op ops_##g[]; \
    extern const int ops_##g##_count;
BYOCL_OP_GROUPS(DECLARE_GROUP)

typedef struct op_group {
    const byocl_op *ops;
    const int *count;
} op_group;

#define GROUP_ENTRY(g) {ops_##g, &ops_##g##_count},
static const op_group groups[] = {BYOCL_OP_GROUPS(GROUP_ENTRY)};
#define N_GROUPS ((int)(sizeof groups / sizeof groups[0]))

int byocl_op_count(void)
{
    int n = 0;
    for (int g = 0; g < N_GROUPS; g++)
        n += *groups[g].count;
    return n;
}

const byocl_op *byocl_op_at(int index)
{
    if (index < 0)
        return NULL;
    for (int g = 0; g < N_GROUPS; g++) {
        if (index < *groups[g].count)
            return &groups[g].ops[index];
        index -= *groups[g].count;
    }
    return NULL;
}

const byocl_op *byocl_op_find(const char *name)
{
    if (!name)
        return NULL;
    for (int g = 0; g < N_GROUPS; g++)
        for (int k = 0; k < *groups[g].count; k++)
            if (strcmp(groups[g].ops[k].name, name) == 0)
                return &groups[g].ops[k];
    return NULL;
}

const char *byocl_op_name(const byocl_op *op) { return op->name; }
const char *byocl_op_doc(const byocl_op *op) { return op->doc ? op->doc : ""; }

void byocl_op_arity(const byocl_op *op, int *min_args, int *max_args)
{
    if (min_args)
        *min_args = op->min_args;
    if (max_args)
        *max_args = op->max_args;
}

int byocl_op_num_attrs(const byocl_op *op) { return op->n_attrs; }
const char *byocl_op_attr_name(const byocl_op *op, int k) { return op->attrs[k].name; }
byocl_attr_kind byocl_op_attr_kind(const byocl_op *op, int k) { return op->attrs[k].kind; }
bool byocl_op_attr_required(const byocl_op *op, int k) { return op->attrs[k].required; }
const char *byocl_op_attr_doc(const byocl_op *op, int k)
{
    return op->attrs[k].doc ? op->attrs[k].doc : "";
}
