/* builtin:resnet18, torchvision's layout as TVM's PyTorch frontend imports it: conv2d
 * without bias followed by nn.batch_norm (epsilon=1e-05), BasicBlocks with a 1x1 conv +
 * batch_norm downsample where the shape changes, global average pooling and the fc layer
 * as dense + bias_add. Batch 1, input %data (1, 3, 224, 224); returns logits (1, 1000). */
#include "builtin_util.h"

/* torchvision.models.resnet.BasicBlock: relu(bn2(conv2(relu(bn1(conv1(x))))) + identity). */
static int basic_block(builtin_ctx *ctx, int x, int in_c, int out_c, int stride)
{
    int y = builtin_relu(ctx, builtin_conv_bn(ctx, x, in_c, out_c, 3, stride, 1, 1));
    y = builtin_conv_bn(ctx, y, out_c, out_c, 3, 1, 1, 1);
    int identity = x;
    if (stride != 1 || in_c != out_c)
        identity = builtin_conv_bn(ctx, x, in_c, out_c, 1, stride, 0, 1);
    return builtin_relu(ctx, builtin_add(ctx, y, identity));
}

byocl_status builtin_build_resnet18(byocl_module *m, byocl_error *err)
{
    builtin_ctx ctx;
    byocl_status st = builtin_begin(&ctx, m, "resnet18", err);
    if (st != BYOCL_OK)
        return st;
    const int64_t data_dims[4] = {1, 3, 224, 224};
    int x = builtin_param(&ctx, "data", 4, data_dims);

    x = builtin_relu(&ctx, builtin_conv_bn(&ctx, x, 3, 64, 7, 2, 3, 1));
    x = builtin_call(&ctx, "nn.max_pool2d", &x, 1,
                     "pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1]");

    static const struct { int channels, stride; } layers[4] = {{64, 1}, {128, 2}, {256, 2},
                                                               {512, 2}};
    int in_c = 64;
    for (int l = 0; l < 4; l++) {
        x = basic_block(&ctx, x, in_c, layers[l].channels, layers[l].stride);
        x = basic_block(&ctx, x, layers[l].channels, layers[l].channels, 1);
        in_c = layers[l].channels;
    }
    int logits = builtin_classifier(&ctx, x, 512, 1000);
    return builtin_finish(&ctx, &logits, 1);
}
