/* Op group "image": image.resize2d checked against numpy's ONNX Resize
 * (tests/gen/gen_ops_image.py, tf_crop_and_resize's crops included), and its error
 * messages. */
#include "ops_case.h"

#include "fixtures/ops/image_cases.h"

static const int64_t d1234[] = {1, 2, 3, 4}, d234[] = {2, 3, 4}, d1204[] = {1, 2, 0, 4};

static void test_type_errors(void **state)
{
    (void)state;
    byocl_type r3 = byocl_type_tensor(BYOCL_FLOAT32, 3, d234);
    op_expect_type_error("image.resize2d", &r3, 1, "size=[2, 2]", BYOCL_ERR_TYPE,
                         "image.resize2d: the input has rank 3; expected 4 (NCHW)");
    byocl_type empty = byocl_type_tensor(BYOCL_FLOAT32, 4, d1204);
    op_expect_type_error("image.resize2d", &empty, 1, "size=[2, 2]", BYOCL_ERR_TYPE,
                         "image.resize2d: the input (1, 2, 0, 4) has no rows or no columns to "
                         "resize");
    byocl_type ints = byocl_type_tensor(BYOCL_INT32, 4, d1234);
    op_expect_type_error("image.resize2d", &ints, 1, "size=[2, 2], method=\"cubic\"",
                         BYOCL_ERR_TYPE,
                         "image.resize2d: method 'cubic' needs a float input, got int32");
}

static void test_attr_errors(void **state)
{
    (void)state;
    byocl_type x = byocl_type_tensor(BYOCL_FLOAT32, 4, d1234);
    const char *op = "image.resize2d";
    op_expect_build_error(op, &x, 1, "size=[2]", BYOCL_ERR_INVALID,
                          "attribute 'size' of image.resize2d has 1 values; expected 2 (the "
                          "output height and width)");
    op_expect_build_error(op, &x, 1, "size=[2, 0]", BYOCL_ERR_INVALID,
                          "bad value for attribute 'size' of image.resize2d: the width is 0 "
                          "(expected at least 1)");
    op_expect_build_error(op, &x, 1, "size=[2, 2], layout=\"NHWC\"", BYOCL_ERR_UNSUPPORTED,
                          "bad value for attribute 'layout' of image.resize2d: 'NHWC' (byocl "
                          "supports \"NCHW\" only)");
    op_expect_build_error(op, &x, 1, "size=[2, 2], method=\"bilinear\"", BYOCL_ERR_INVALID,
                          "bad value for attribute 'method' of image.resize2d: 'bilinear' "
                          "(expected \"nearest_neighbor\", \"linear\" or \"cubic\")");
    op_expect_build_error(op, &x, 1, "size=[2, 2], coordinate_transformation_mode=\"edge\"",
                          BYOCL_ERR_INVALID,
                          "bad value for attribute 'coordinate_transformation_mode' of "
                          "image.resize2d: 'edge' (expected \"half_pixel\", \"align_corners\", "
                          "\"asymmetric\", \"pytorch_half_pixel\", \"tf_half_pixel_for_nn\" or "
                          "\"tf_crop_and_resize\")");
    op_expect_build_error(op, &x, 1, "size=[2, 2], roi=[0f, 0f, 1f]", BYOCL_ERR_INVALID,
                          "attribute 'roi' of image.resize2d has 3 values; expected 4 (start_h, "
                          "start_w, end_h, end_w, as fractions of the input's height and width)");
    op_expect_build_error(op, &x, 1, "size=[2, 2], roi=[]", BYOCL_ERR_INVALID,
                          "attribute 'roi' of image.resize2d has 0 values; expected 4 (start_h, "
                          "start_w, end_h, end_w, as fractions of the input's height and width)");
    op_expect_build_error(op, &x, 1,
                          "size=[2, 2], roi=[0f, nanf, 1f, 1f], "
                          "coordinate_transformation_mode=\"tf_crop_and_resize\"",
                          BYOCL_ERR_INVALID,
                          "bad value for attribute 'roi' of image.resize2d: start_w is nan "
                          "(expected a finite number)");
    op_expect_build_error(op, &x, 1, "size=[2, 2], roi=[0, 0, 1, -inff]", BYOCL_ERR_INVALID,
                          "bad value for attribute 'roi' of image.resize2d: end_w is -inf "
                          "(expected a finite number)");
    op_expect_build_error(op, &x, 1, "size=[2, 2], roi=0.5f", BYOCL_ERR_INVALID,
                          "bad value for attribute 'roi' of image.resize2d: expected a list of "
                          "numbers, got 0.5f");
    op_expect_build_error(op, &x, 1, "size=[2, 2], rounding_method=\"up\"", BYOCL_ERR_INVALID,
                          "bad value for attribute 'rounding_method' of image.resize2d: 'up' "
                          "(expected \"\", \"round\", \"round_prefer_floor\", "
                          "\"round_prefer_ceil\", \"floor\" or \"ceil\")");
    op_expect_build_error(op, &x, 1, "size=[2, 2], cubic_exclude=2", BYOCL_ERR_INVALID,
                          "bad value for attribute 'cubic_exclude' of image.resize2d: 2 "
                          "(expected 0 or 1)");
    op_expect_build_error(op, &x, 1, "size=[2, 2], out_dtype=\"float31\"", BYOCL_ERR_INVALID,
                          "bad value for attribute 'out_dtype' of image.resize2d: unknown dtype "
                          "'float31'");
    op_expect_build_error(op, &x, 1, "size=[2, 2], scale_w=-1f", BYOCL_ERR_INVALID,
                          "bad value for attribute 'scale_w' of image.resize2d: -1 (expected a "
                          "positive number or None)");
}

static void test_ops_documented(void **state)
{
    (void)state;
    static const op_attr_spec resize[] = {
        {"size", NULL},
        {"roi", "[0f, 0f, 0f, 0f]"},
        {"layout", "\"NCHW\""},
        {"method", "\"linear\""},
        {"coordinate_transformation_mode", "\"half_pixel\""},
        {"rounding_method", "\"\""},
        {"cubic_alpha", "-0.5f"},
        {"cubic_exclude", "0"},
        {"extrapolation_value", "0f"},
        {"out_dtype", "\"\""},
        {"scale_h", "None"},
        {"scale_w", "None"},
    };
    op_assert_schema("image.resize2d", resize, N_ITEMS(resize));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_type_errors),
        cmocka_unit_test(test_attr_errors),
        cmocka_unit_test(test_ops_documented),
    };
    return op_run_suite("ops_image", image_cases, N_ITEMS(image_cases), tests, N_ITEMS(tests));
}
