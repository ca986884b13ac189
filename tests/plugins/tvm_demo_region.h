/* The region of tvm_demo_region.c, also known to test_tvm_ffi.c: conv2d, bias_add, relu,
 * the weight and the bias arguments (no .npz). */
#ifndef BYOCL_TVM_DEMO_REGION_H
#define BYOCL_TVM_DEMO_REGION_H

#define DEMO_REGION_SYMBOL "byocl_demo_0"
#define DEMO_REGION_TEXT                                                                     \
    "#[version = \"0.0.5\"]\n"                                                               \
    "def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32],\n"      \
    "          %b: Tensor[(4), float32]) {\n"                                                \
    "  %0 = nn.conv2d(%x, %w, padding=[1, 1]);\n"                                            \
    "  %1 = nn.bias_add(%0, %b);\n"                                                          \
    "  nn.relu(%1)\n"                                                                        \
    "}\n"

#endif
