/* Op group "annotation": the region markers of TVM's BYOC flow. compiler_begin marks a
 * value that flows into a region offloaded to `compiler`, compiler_end one that flows out.
 * Both are identities on a tensor; tuples are not accepted (annotate each field). */
#include "elemwise_util.h"

static byocl_status check_compiler(const char *op, const byocl_attrs *attrs, byocl_error *err)
{
    if (byocl_attrs_get_str(attrs, "compiler", "")[0] == '\0')
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "bad value for attribute 'compiler' of %s: expected a target "
                               "name such as \"opencl\", got \"\"",
                               op);
    return BYOCL_OK;
}

static byocl_status check_begin_attrs(byocl_module *m, byocl_attrs *attrs, byocl_error *err)
{
    (void)m;
    return check_compiler("annotation.compiler_begin", attrs, err);
}

static byocl_status check_end_attrs(byocl_module *m, byocl_attrs *attrs, byocl_error *err)
{
    (void)m;
    return check_compiler("annotation.compiler_end", attrs, err);
}

static const byocl_attr_schema compiler_attrs[] = {
    {.name = "compiler", .kind = BYOCL_ATTR_STR, .required = true,
     .doc = "target the region is offloaded to, e.g. \"opencl\""},
};

#define ANNOTATION_OP(op_name, check, what)                                               \
    {.name = op_name, .min_args = 1, .max_args = 1, .attrs = compiler_attrs, .n_attrs = 1, \
     .doc = what, .check_attrs = check, .infer = elemwise_infer_identity,                  \
     .ref = elemwise_ref_copy}

const byocl_op byocl_ops_annotation[] = {
    ANNOTATION_OP("annotation.compiler_begin", check_begin_attrs,
                  "marks a tensor entering a region for `compiler` (identity)"),
    ANNOTATION_OP("annotation.compiler_end", check_end_attrs,
                  "marks a tensor leaving a region for `compiler` (identity; tensors only)"),
};
const int byocl_ops_annotation_count =
    (int)(sizeof byocl_ops_annotation / sizeof byocl_ops_annotation[0]);
