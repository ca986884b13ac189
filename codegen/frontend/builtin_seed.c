/* builtin:seed, the forum thread's first graph ("[Relay] Generate sub graphs from existing
 * graph", create_graph): conv2d + batch_norm + relu annotated by hand for one accelerator
 * region with three outputs (relu, bn mean, bn var), an `add(weight, w0)` computed on the
 * host before the region and two host `abs` after it. The thread's "test_target" becomes
 * byocl's built-in OpenCL target. Weights are parameters, as in the thread. */
#include "builtin_util.h"

#define SEED_COMPILER "compiler=\"opencl\""

static int compiler_begin(builtin_ctx *ctx, int x)
{
    return builtin_call(ctx, "annotation.compiler_begin", &x, 1, SEED_COMPILER);
}

static int compiler_end(builtin_ctx *ctx, int x)
{
    return builtin_call(ctx, "annotation.compiler_end", &x, 1, SEED_COMPILER);
}

byocl_status builtin_build_seed(byocl_module *m, byocl_error *err)
{
    builtin_ctx ctx;
    byocl_status st = builtin_begin(&ctx, m, "seed", err);
    if (st != BYOCL_OK)
        return st;
    const int64_t data_dims[4] = {1, 3, 224, 224};
    const int64_t weight_dims[4] = {16, 3, 3, 3};
    const int64_t channel_dims[1] = {16};

    /* parameters in relay.Function's order: data, weight, bn_*, w0 */
    int data = builtin_param(&ctx, "data", 4, data_dims);
    int weight = builtin_param(&ctx, "weight", 4, weight_dims);
    int bn_gamma = builtin_param(&ctx, "bn_gamma", 1, channel_dims);
    int bn_beta = builtin_param(&ctx, "bn_beta", 1, channel_dims);
    int bn_mean = builtin_param(&ctx, "bn_mean", 1, channel_dims);
    int bn_var = builtin_param(&ctx, "bn_var", 1, channel_dims);
    int w0 = builtin_param(&ctx, "w0", 4, weight_dims);

    /* Built in the order TVM's printer walks create_graph's body (post-order from the
     * tuple), so `byocl print builtin:seed` numbers the nodes as TVM does. */
    int data_cb = compiler_begin(&ctx, data);
    int z0 = builtin_add(&ctx, weight, w0); /* on the host, before the region */
    int z0_cb = compiler_begin(&ctx, z0);
    int conv_args[2] = {data_cb, z0_cb};
    int conv = builtin_call(&ctx, "nn.conv2d", conv_args, 2,
                            "padding=[1, 1], channels=16, kernel_size=[3, 3]");
    int bn_gamma_cb = compiler_begin(&ctx, bn_gamma);
    int bn_beta_cb = compiler_begin(&ctx, bn_beta);
    int bn_mean_cb = compiler_begin(&ctx, bn_mean);
    int bn_var_cb = compiler_begin(&ctx, bn_var);
    int bn_args[5] = {conv, bn_gamma_cb, bn_beta_cb, bn_mean_cb, bn_var_cb};
    int bn = builtin_call(&ctx, "nn.batch_norm", bn_args, 5, NULL);

    int relu_ce = compiler_end(&ctx, builtin_relu(&ctx, builtin_getitem(&ctx, bn, 0)));
    int mean_ce = compiler_end(&ctx, builtin_getitem(&ctx, bn, 1));
    int mean_abs = builtin_unary(&ctx, "abs", mean_ce);
    int var_ce = compiler_end(&ctx, builtin_getitem(&ctx, bn, 2));
    int var_abs = builtin_unary(&ctx, "abs", var_ce);

    const int outputs[3] = {relu_ce, mean_abs, var_abs};
    return builtin_finish(&ctx, outputs, 3);
}
