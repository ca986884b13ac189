/* Layers of the built-in models, with deterministic weights. */
#include "builtin_util.h"

#include <math.h>
#include <stdio.h>

byocl_status builtin_begin(builtin_ctx *ctx, byocl_module *m, const char *model_name,
                           byocl_error *err)
{
    byocl_error_clear(err);
    ctx->err = err;
    ctx->model_seed = builtin_name_hash(model_name);
    ctx->n_weights = 0;
    ctx->fn = byocl_module_add_function(m, "main", err);
    return ctx->fn ? BYOCL_OK : err->status;
}

/* True once a step failed: later steps then do nothing, so the first error stays. */
static bool failed(const builtin_ctx *ctx)
{
    return ctx->err->status != BYOCL_OK;
}

byocl_status builtin_finish(builtin_ctx *ctx, const int *outputs, int n)
{
    if (failed(ctx))
        return ctx->err->status;
    int body = n == 1 ? outputs[0] : byocl_function_add_tuple(ctx->fn, outputs, n, ctx->err);
    if (body < 0)
        return ctx->err->status;
    return byocl_function_set_body(ctx->fn, body, ctx->err);
}

uint64_t builtin_name_hash(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a, 64 bit */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ull;
    }
    return h;
}

uint64_t builtin_weight_seed(uint64_t model_seed, int index)
{
    /* splitmix64's finalizer: byocl_tensor_fill_random steps its state by this same
     * constant, so unscrambled seeds index*constant would give overlapping streams */
    uint64_t z = model_seed + 0x9e3779b97f4a7c15ull * (uint64_t)(index + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int builtin_param(builtin_ctx *ctx, const char *name, int rank, const int64_t *dims)
{
    if (failed(ctx))
        return -1;
    byocl_type type = byocl_type_tensor(BYOCL_FLOAT32, rank, dims);
    return byocl_function_add_param(ctx->fn, name, &type, ctx->err);
}

int builtin_weight(builtin_ctx *ctx, int rank, const int64_t *dims, double lo, double hi)
{
    if (failed(ctx))
        return -1;
    byocl_shape shape = byocl_shape_make(rank, dims);
    byocl_tensor *t = byocl_tensor_new(BYOCL_FLOAT32, &shape, ctx->err);
    if (!t)
        return -1;
    byocl_tensor_fill_random(t, builtin_weight_seed(ctx->model_seed, ctx->n_weights++), lo, hi);
    int id = byocl_function_add_constant(ctx->fn, t, ctx->err);
    byocl_tensor_unref(t); /* the node holds its own reference */
    return id;
}

int builtin_call(builtin_ctx *ctx, const char *op, const int *args, int n_args,
                 const char *attrs_text)
{
    if (failed(ctx))
        return -1;
    for (int k = 0; k < n_args; k++)
        if (args[k] < 0)
            return -1;
    if (!attrs_text)
        return byocl_function_add_call(ctx->fn, op, args, n_args, NULL, ctx->err);
    return byocl_function_add_call_str(ctx->fn, op, args, n_args, attrs_text, ctx->err);
}

int builtin_unary(builtin_ctx *ctx, const char *op, int x)
{
    return builtin_call(ctx, op, &x, 1, NULL);
}

int builtin_getitem(builtin_ctx *ctx, int tuple, int index)
{
    if (failed(ctx) || tuple < 0)
        return -1;
    return byocl_function_add_getitem(ctx->fn, tuple, index, ctx->err);
}

int builtin_add(builtin_ctx *ctx, int a, int b)
{
    int args[2] = {a, b};
    return builtin_call(ctx, "add", args, 2, NULL);
}

int builtin_relu(builtin_ctx *ctx, int x)
{
    return builtin_unary(ctx, "nn.relu", x);
}

int builtin_relu6(builtin_ctx *ctx, int x)
{
    return builtin_call(ctx, "clip", &x, 1, "a_min=0f, a_max=6f");
}

/* He-uniform bound, scaled by BUILTIN_WEIGHT_GAIN. */
static double weight_bound(int64_t fan_in)
{
    return BUILTIN_WEIGHT_GAIN * sqrt(6.0 / (double)fan_in);
}

int builtin_conv2d(builtin_ctx *ctx, int x, int in_c, int out_c, int kernel, int stride,
                   int pad, int groups)
{
    if (x < 0)
        return -1;
    int64_t dims[4] = {out_c, in_c / groups, kernel, kernel};
    double bound = weight_bound(dims[1] * kernel * kernel);
    int w = builtin_weight(ctx, 4, dims, -bound, bound);
    char attrs[200];
    snprintf(attrs, sizeof attrs,
             "strides=[%d, %d], padding=[%d, %d, %d, %d], groups=%d, channels=%d, "
             "kernel_size=[%d, %d]",
             stride, stride, pad, pad, pad, pad, groups, out_c, kernel, kernel);
    int args[2] = {x, w};
    return builtin_call(ctx, "nn.conv2d", args, 2, attrs);
}

int builtin_batch_norm(builtin_ctx *ctx, int x, int channels)
{
    if (x < 0)
        return -1;
    int64_t dims[1] = {channels};
    /* one statement each: the order fixes the layer indices, hence the seeds */
    int gamma = builtin_weight(ctx, 1, dims, 0.5, 1.5);
    int beta = builtin_weight(ctx, 1, dims, -0.1, 0.1);
    int moving_mean = builtin_weight(ctx, 1, dims, -0.1, 0.1);
    int moving_var = builtin_weight(ctx, 1, dims, 0.5, 1.5);
    int args[5] = {x, gamma, beta, moving_mean, moving_var};
    int bn = builtin_call(ctx, "nn.batch_norm", args, 5, "epsilon=1e-05f");
    return builtin_getitem(ctx, bn, 0);
}

int builtin_conv_bn(builtin_ctx *ctx, int x, int in_c, int out_c, int kernel, int stride,
                    int pad, int groups)
{
    int conv = builtin_conv2d(ctx, x, in_c, out_c, kernel, stride, pad, groups);
    return builtin_batch_norm(ctx, conv, out_c);
}

int builtin_classifier(builtin_ctx *ctx, int x, int in_features, int n_classes)
{
    int pooled = builtin_unary(ctx, "nn.global_avg_pool2d", x);
    int flat = builtin_unary(ctx, "nn.batch_flatten", pooled);
    if (flat < 0)
        return -1;
    int64_t w_dims[2] = {n_classes, in_features};
    double bound = weight_bound(in_features);
    int dense_args[2] = {flat, builtin_weight(ctx, 2, w_dims, -bound, bound)};
    char attrs[32];
    snprintf(attrs, sizeof attrs, "units=%d", n_classes);
    int dense = builtin_call(ctx, "nn.dense", dense_args, 2, attrs);
    if (dense < 0)
        return -1;
    int64_t b_dims[1] = {n_classes};
    int bias_args[2] = {dense, builtin_weight(ctx, 1, b_dims, -0.1, 0.1)};
    return builtin_call(ctx, "nn.bias_add", bias_args, 2, NULL);
}
