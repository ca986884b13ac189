/* builtin:mobilenet_v2, torchvision's MobileNetV2 (width 1.0) as TVM's PyTorch frontend
 * imports it: conv2d without bias + nn.batch_norm (epsilon=1e-05), ReLU6 as
 * clip(a_min=0f, a_max=6f), depthwise convs as conv2d with groups = channels. Dropout is
 * an identity at inference and left out. Input %data (1, 3, 224, 224); logits (1, 1000). */
#include "builtin_util.h"

static int conv_bn_relu6(builtin_ctx *ctx, int x, int in_c, int out_c, int kernel, int stride,
                         int groups)
{
    int pad = (kernel - 1) / 2;
    return builtin_relu6(ctx, builtin_conv_bn(ctx, x, in_c, out_c, kernel, stride, pad, groups));
}

/* torchvision.models.mobilenetv2.InvertedResidual. */
static int inverted_residual(builtin_ctx *ctx, int x, int in_c, int out_c, int stride,
                             int expand_ratio)
{
    int hidden = in_c * expand_ratio;
    int y = x;
    if (expand_ratio != 1)
        y = conv_bn_relu6(ctx, y, in_c, hidden, 1, 1, 1);
    y = conv_bn_relu6(ctx, y, hidden, hidden, 3, stride, hidden);
    y = builtin_conv_bn(ctx, y, hidden, out_c, 1, 1, 0, 1);
    if (stride == 1 && in_c == out_c)
        return builtin_add(ctx, x, y);
    return y;
}

byocl_status builtin_build_mobilenet_v2(byocl_module *m, byocl_error *err)
{
    builtin_ctx ctx;
    byocl_status st = builtin_begin(&ctx, m, "mobilenet_v2", err);
    if (st != BYOCL_OK)
        return st;
    const int64_t data_dims[4] = {1, 3, 224, 224};
    int x = builtin_param(&ctx, "data", 4, data_dims);

    x = conv_bn_relu6(&ctx, x, 3, 32, 3, 2, 1);
    /* t (expansion), c (output channels), n (repeats), s (stride of the first) */
    static const struct { int t, c, n, s; } settings[7] = {
        {1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
        {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
    int in_c = 32;
    for (int k = 0; k < 7; k++) {
        for (int i = 0; i < settings[k].n; i++) {
            int stride = i == 0 ? settings[k].s : 1;
            x = inverted_residual(&ctx, x, in_c, settings[k].c, stride, settings[k].t);
            in_c = settings[k].c;
        }
    }
    x = conv_bn_relu6(&ctx, x, in_c, 1280, 1, 1, 1);
    int logits = builtin_classifier(&ctx, x, 1280, 1000);
    return builtin_finish(&ctx, &logits, 1);
}
