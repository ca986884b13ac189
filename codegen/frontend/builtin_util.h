/* Shared pieces of the built-in models (builtin_*.c): the layers they are made of, with
 * deterministic weights.
 *
 * Every helper returns the new node id, or -1 once anything has failed: after a failure
 * (ctx->err->status is set) or given an argument of -1, a helper returns -1 at once without
 * touching the error, so the first failure stays in ctx->err and a model reads as a
 * straight list of layers checked once, by builtin_finish. */
#ifndef BYOCL_BUILTIN_UTIL_H
#define BYOCL_BUILTIN_UTIL_H

#include <stdint.h>

#include "byocl/ir.h"

/* One model's @main under construction. */
typedef struct builtin_ctx {
    byocl_function *fn;
    byocl_error *err;
    uint64_t model_seed; /* hash of the model name */
    int n_weights;       /* weight tensors made so far; the next one's layer index */
} builtin_ctx;

/* Gain on the He-uniform bound sqrt(6 / fan_in) of conv and dense weights: 1.0 makes
 * resnet18's residual sums grow about tenfold per stage; 0.8 keeps logits of order 1-10. */
#define BUILTIN_WEIGHT_GAIN 0.8

/* Adds @main to `m` and prepares ctx (clearing `err`, which must not be NULL); the seed of
 * every weight derives from `model_name`. */
byocl_status builtin_begin(builtin_ctx *ctx, byocl_module *m, const char *model_name,
                           byocl_error *err);
/* Sets the body of @main (a tuple when n > 1); BYOCL_OK when nothing failed before. */
byocl_status builtin_finish(builtin_ctx *ctx, const int *outputs, int n);

/* Seed of the weight with layer index `index` of the model whose name hashes to
 * `model_seed` (FNV-1a then splitmix64; the same on every machine). */
uint64_t builtin_weight_seed(uint64_t model_seed, int index);
uint64_t builtin_name_hash(const char *name);

/* A float32 parameter of @main. */
int builtin_param(builtin_ctx *ctx, const char *name, int rank, const int64_t *dims);
/* A float32 constant uniform in [lo, hi), seeded with the next layer index. */
int builtin_weight(builtin_ctx *ctx, int rank, const int64_t *dims, double lo, double hi);

/* A call of `op` with attributes in the text syntax (NULL for none); -1 when any argument
 * is -1. */
int builtin_call(builtin_ctx *ctx, const char *op, const int *args, int n_args,
                 const char *attrs_text);
int builtin_unary(builtin_ctx *ctx, const char *op, int x);
/* Field `index` of a tuple (TupleGetItem, printed `%3.0`). */
int builtin_getitem(builtin_ctx *ctx, int tuple, int index);
int builtin_add(builtin_ctx *ctx, int a, int b);
int builtin_relu(builtin_ctx *ctx, int x);
/* clip(x, a_min=0f, a_max=6f), as TVM imports torch's ReLU6. */
int builtin_relu6(builtin_ctx *ctx, int x);

/* nn.conv2d without bias (OIHW weight, He-uniform), square kernel, symmetric padding. */
int builtin_conv2d(builtin_ctx *ctx, int x, int in_c, int out_c, int kernel, int stride,
                   int pad, int groups);
/* nn.batch_norm(x, gamma, beta, moving_mean, moving_var, epsilon=1e-05f) and its field 0:
 * gamma in [0.5, 1.5), beta and mean in [-0.1, 0.1), var in [0.5, 1.5). */
int builtin_batch_norm(builtin_ctx *ctx, int x, int channels);
/* conv2d then batch_norm (torchvision's Conv2d(bias=False) + BatchNorm2d). */
int builtin_conv_bn(builtin_ctx *ctx, int x, int in_c, int out_c, int kernel, int stride,
                    int pad, int groups);
/* global_avg_pool2d, batch_flatten, dense(n_classes), bias_add: torchvision's head. */
int builtin_classifier(builtin_ctx *ctx, int x, int in_features, int n_classes);

/* The models (one file each). Each fills the empty module `m`; the registry (models.c)
 * type-checks and verifies the result. */
byocl_status builtin_build_seed(byocl_module *m, byocl_error *err);
byocl_status builtin_build_resnet18(byocl_module *m, byocl_error *err);
byocl_status builtin_build_mobilenet_v2(byocl_module *m, byocl_error *err);

#endif
