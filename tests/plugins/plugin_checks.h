/* What the test plugins (faulty_target.c, devmem_target.c) check in `supports`, written
 * once: each is a shared library of its own, so the helper is static inline. */
#ifndef BYOCL_TEST_PLUGIN_CHECKS_H
#define BYOCL_TEST_PLUGIN_CHECKS_H

#include <stdbool.h>
#include <stdio.h>

#include "byocl/ir.h"

/* Whether every operand of call `node` is a float32 tensor of the result's type; when not,
 * the reason goes into `why`. */
static inline bool plugin_operands_match_result(const byocl_function *fn, int node, char *why,
                                                size_t why_len)
{
    const byocl_type *t = byocl_node_type(fn, node);
    for (int k = 0; k < byocl_node_num_args(fn, node); k++) {
        const byocl_type *a = byocl_node_type(fn, byocl_node_arg(fn, node, k));
        if (t->dtype != BYOCL_FLOAT32 || a->kind != BYOCL_TYPE_TENSOR ||
            !byocl_type_equal(a, t)) {
            snprintf(why, why_len, "only float32 operands of the result's shape");
            return false;
        }
    }
    return true;
}

#endif
