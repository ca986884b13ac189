/* byocl_load_model and byocl_save_model: model specs, binding by name, meta constants,
 * saving text + .npz and loading it back. */
#include "test_support.h"

#include "byocl/frontend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* snprintf into a fixed buffer, failing the test rather than truncating. */
#define FMT(buf, ...) assert_true(snprintf((buf), sizeof(buf), __VA_ARGS__) < (int)sizeof(buf))

static char *print_typed(const byocl_module *m)
{
    byocl_print_options opt = {.show_types = true};
    byocl_error err;
    char *text = byocl_text_print(m, &opt, NULL, &err);
    if (!text)
        fail_msg("%s", err.msg);
    return text;
}

static void test_bad_arguments(void **state)
{
    (void)state;
    byocl_module *m = (byocl_module *)&m; /* must be reset to NULL */
    byocl_error err;
    assert_int_equal(byocl_load_model(NULL, NULL, &m, &err), BYOCL_ERR_INVALID);
    assert_null(m);
    assert_string_equal(err.msg, "no model given");
    assert_int_equal(byocl_load_model("", NULL, &m, &err), BYOCL_ERR_INVALID);
    assert_int_equal(byocl_load_model("builtin:seed", NULL, NULL, &err), BYOCL_ERR_INVALID);
    assert_int_equal(byocl_save_model(NULL, "x.relay", NULL, &err), BYOCL_ERR_INVALID);
    /* err may be NULL */
    assert_int_equal(byocl_load_model("builtin:nope", NULL, &m, NULL), BYOCL_ERR_NOT_FOUND);
    assert_null(m);
}

/* .onnx (any case) goes to the ONNX importer; tests/test_onnx.c covers it. */
static void test_onnx_by_extension(void **state)
{
    (void)state;
    byocl_module *m;
    byocl_error err;
    assert_int_equal(byocl_load_model("dir/Model.ONNX", NULL, &m, &err), BYOCL_ERR_IO);
    assert_null(m);
    assert_string_equal(err.msg, "cannot open dir/Model.ONNX: No such file or directory");
}

static void test_builtin_is_typed_and_verified(void **state)
{
    (void)state;
    byocl_module *m;
    byocl_error err;
    assert_int_equal(byocl_load_model("builtin:seed", NULL, &m, &err), BYOCL_OK);
    assert_int_equal(byocl_verify(m, true, &err), BYOCL_OK);
    const byocl_function *fn = byocl_module_find(m, "main");
    assert_non_null(fn);
    assert_int_equal(byocl_function_num_params(fn), 7);
    byocl_module_free(m);
}

/* Members that name parameters bind them; the rest of @main keeps its parameters. */
static void test_bind_by_name(void **state)
{
    (void)state;
    byocl_params *p = byocl_params_new();
    byocl_error err;
    const int64_t w_dims[4] = {16, 3, 3, 3};
    byocl_tensor *w = ts_tensor_f32(4, w_dims, NULL);
    assert_int_equal(byocl_params_set(p, "w0", w, &err), BYOCL_OK);
    byocl_module *m;
    assert_int_equal(byocl_load_model("builtin:seed", p, &m, &err), BYOCL_OK);
    const byocl_function *fn = byocl_module_find(m, "main");
    assert_int_equal(byocl_function_num_params(fn), 6);
    assert_int_equal(byocl_function_find_param(fn, "w0"), -1);
    assert_true(byocl_function_find_param(fn, "weight") >= 0);
    byocl_module_free(m);

    /* Wrong shape: the binding error names the model. */
    const int64_t bad_dims[1] = {3};
    byocl_tensor *bad = ts_tensor_f32(1, bad_dims, NULL);
    assert_int_equal(byocl_params_set(p, "w0", bad, &err), BYOCL_OK);
    assert_int_not_equal(byocl_load_model("builtin:seed", p, &m, &err), BYOCL_OK);
    assert_null(m);
    ts_assert_contains(err.msg, "builtin:seed: binding params: ");
    ts_assert_contains(err.msg, "w0");

    /* A name that is nothing. */
    byocl_params_free(p);
    p = byocl_params_new();
    assert_int_equal(byocl_params_set(p, "w1", w, &err), BYOCL_OK);
    assert_int_equal(byocl_load_model("builtin:seed", p, &m, &err), BYOCL_ERR_NOT_FOUND);
    assert_string_equal(err.msg, "params member 'w1' is neither a parameter of @main nor a "
                                 "meta constant (relay.Constant.K) of builtin:seed");
    byocl_params_free(p);
    byocl_tensor_unref(w);
    byocl_tensor_unref(bad);
}

/* Save a model with tensor constants, load it back: the same module, printed. */
static void test_save_and_load_back(void **state)
{
    (void)state;
    const char *tmp = ts_tmpdir("frontend-save");
    char text_path[4200], npz_path[4200];
    FMT(text_path, "%s/m.relay", tmp);
    FMT(npz_path, "%s/m.npz", tmp);
    byocl_module *m;
    byocl_error err;
    assert_int_equal(byocl_load_model("builtin:mobilenet_v2", NULL, &m, &err), BYOCL_OK);

    /* Tensor constants need a place to go. */
    assert_int_equal(byocl_save_model(m, text_path, NULL, &err), BYOCL_ERR_INVALID);
    ts_assert_contains(err.msg, "tensor constant(s); give a path for their .npz file");
    assert_int_not_equal(access(text_path, F_OK), 0);

    assert_int_equal(byocl_save_model(m, text_path, npz_path, &err), BYOCL_OK);
    char *want = print_typed(m);
    char *file = ts_read_file(text_path, NULL);
    assert_string_equal(file, want);
    free(file);

    byocl_params *p;
    assert_int_equal(byocl_npz_read(npz_path, &p, &err), BYOCL_OK);
    assert_true(byocl_params_count(p) > 0);
    for (int i = 0; i < byocl_params_count(p); i++) {
        char name[64];
        FMT(name, "relay.Constant.%d", i);
        assert_non_null(byocl_params_find(p, name));
    }
    byocl_module *back;
    assert_int_equal(byocl_load_model(text_path, p, &back, &err), BYOCL_OK);
    char *got = print_typed(back);
    assert_string_equal(got, want);
    free(got);
    byocl_module_free(back);

    /* Without the parameters the text cannot be loaded. */
    assert_int_not_equal(byocl_load_model(text_path, NULL, &back, &err), BYOCL_OK);
    assert_null(back);
    ts_assert_contains(err.msg, "relay.Constant");

    /* Untyped text parses to the same module. */
    byocl_print_options plain = {.show_types = false};
    assert_int_equal(byocl_save_model_opts(m, text_path, npz_path, &plain, &err), BYOCL_OK);
    file = ts_read_file(text_path, NULL);
    assert_null(strstr(file, "/* ty="));
    free(file);
    assert_int_equal(byocl_load_model(text_path, p, &back, &err), BYOCL_OK);
    got = print_typed(back);
    assert_string_equal(got, want);
    free(got);
    byocl_module_free(back);

    byocl_params_free(p);
    free(want);
    byocl_module_free(m);
    ts_remove_tree(tmp);
}

/* A meta constant that the text never refers to is an error naming it. */
static void test_unused_meta_constant(void **state)
{
    (void)state;
    const char *tmp = ts_tmpdir("frontend-meta");
    char path[4200];
    FMT(path, "%s/m.relay", tmp);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("#[version = \"0.0.5\"]\n"
          "def @main(%x: Tensor[(2), float32]) {\n"
          "  nn.relu(%x)\n"
          "}\n",
          f);
    fclose(f);
    byocl_params *p = byocl_params_new();
    byocl_error err;
    const int64_t dims[1] = {2};
    byocl_tensor *t = ts_tensor_f32(1, dims, NULL);
    assert_int_equal(byocl_params_set(p, "relay.Constant.0", t, &err), BYOCL_OK);
    byocl_module *m;
    assert_int_equal(byocl_load_model(path, p, &m, &err), BYOCL_ERR_INVALID);
    assert_null(m);
    char want[4600];
    FMT(want,
             "params member 'relay.Constant.0' is not used by %s (no meta[relay.Constant][0] in "
             "the text)",
             path);
    assert_string_equal(err.msg, want);

    /* Binding %x by name works on a text model too. */
    byocl_params_free(p);
    p = byocl_params_new();
    assert_int_equal(byocl_params_set(p, "x", t, &err), BYOCL_OK);
    assert_int_equal(byocl_load_model(path, p, &m, &err), BYOCL_OK);
    assert_int_equal(byocl_function_num_params(byocl_module_find(m, "main")), 0);
    byocl_module_free(m);
    byocl_params_free(p);
    byocl_tensor_unref(t);
    ts_remove_tree(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_onnx_by_extension),
        cmocka_unit_test(test_builtin_is_typed_and_verified),
        cmocka_unit_test(test_bind_by_name),
        cmocka_unit_test(test_save_and_load_back),
        cmocka_unit_test(test_unused_meta_constant),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
