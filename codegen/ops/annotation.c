/* Op group "annotation": the region markers of TVM's BYOC flow. compiler_begin marks a
 * value that flows into a region offloaded to `compiler`, compiler_end one that flows out.
 * Both are identities on a tensor or a tuple (as TVM prints them: a compiler_begin on the
 * tuple that feeds concatenate, a compiler_end on a whole batch_norm); partition treats a
 * tuple's annotation as one on each field. */
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

/* The argument's type, tensor or tuple. */
static byocl_status infer_annotation(const byocl_infer_ctx *ctx, byocl_type *out,
                                     byocl_error *err)
{
    if (ctx->n_args != 1)
        return byocl_error_set(err, BYOCL_ERR_TYPE, "expected 1 argument, got %d", ctx->n_args);
    *out = *ctx->arg_types[0];
    return BYOCL_OK;
}

/* Copies each tensor of the (flattened) argument to the same field of the result. */
static byocl_status annotation_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                                   int n_in, byocl_tensor *const *out, int n_out,
                                   byocl_error *err)
{
    if (n_in != n_out)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "annotation kernel: got %d input and %d output tensors; it "
                               "passes each input through, so they must be as many",
                               n_in, n_out);
    byocl_status st = BYOCL_OK;
    for (int i = 0; i < n_in && st == BYOCL_OK; i++)
        st = elemwise_ref_copy(attrs, &in[i], 1, &out[i], 1, err);
    return st;
}

static const byocl_attr_schema compiler_attrs[] = {
    {.name = "compiler", .kind = BYOCL_ATTR_STR, .required = true,
     .doc = "target the region is offloaded to, e.g. \"opencl\""},
};

#define ANNOTATION_OP(op_name, check, what)                                               \
    {.name = op_name, .min_args = 1, .max_args = 1, .attrs = compiler_attrs, .n_attrs = 1, \
     .doc = what, .check_attrs = check, .infer = infer_annotation,                         \
     .ref = annotation_ref, .identity = true}

const byocl_op ops_annotation[] = {
    ANNOTATION_OP("annotation.compiler_begin", check_begin_attrs,
                  "marks a tensor (or each field of a tuple) entering a region for `compiler` "
                  "(identity)"),
    ANNOTATION_OP("annotation.compiler_end", check_end_attrs,
                  "marks a tensor (or each field of a tuple) leaving a region for `compiler` "
                  "(identity)"),
};
const int ops_annotation_count =
    (int)(sizeof ops_annotation / sizeof ops_annotation[0]);
