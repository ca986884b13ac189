/* The target registry (include/byocl/target.h): registration copies, lookups, order,
 * every registration error, unregistering and the reset that releases every target. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"
#include "byocl/target.h"

/* What the targets' release functions saw, in order. */
static const char *released[16];
static int n_released;

static void record_release(void *ctx)
{
    assert_true(n_released < 16);
    released[n_released++] = ctx;
}

static bool accept_all(void *ctx, const byocl_function *fn, int node, char *why, size_t len)
{
    (void)ctx;
    (void)fn;
    (void)node;
    (void)why;
    (void)len;
    return true;
}

static byocl_target_i make_target(const char *name, const char *ctx)
{
    return (byocl_target_i){.name = name, .api_version = BYOCL_TARGET_API_VERSION,
                            .ctx = (void *)ctx, .supports = accept_all, .release = record_release};
}

static int setup(void **state)
{
    (void)state;
    n_released = 0;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    byocl_target_registry_reset();
    return 0;
}

static void must_register(const byocl_target_i *t)
{
    byocl_error err = {0};
    if (byocl_target_register(t, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
}

static void test_register_copies_struct_and_name(void **state)
{
    (void)state;
    char name[16] = "vendor_x";
    byocl_target_i t = make_target(name, "ctx-x");
    must_register(&t);
    /* The caller's storage may change or go away after registration. */
    strcpy(name, "changed");
    t.supports = NULL;
    t.ctx = NULL;
    const byocl_target_i *got = byocl_target_find("vendor_x");
    assert_non_null(got);
    assert_string_equal(got->name, "vendor_x");
    assert_ptr_not_equal(got->name, name);
    assert_ptr_equal(got->supports, accept_all);
    assert_string_equal(got->ctx, "ctx-x");
    assert_int_equal(got->api_version, BYOCL_TARGET_API_VERSION);
    assert_null(byocl_target_find("changed"));
    assert_null(byocl_target_find("vendor"));
    assert_null(byocl_target_find(NULL));
    assert_int_equal(byocl_target_count(), 1);
    assert_ptr_equal(byocl_target_at(0), got);
}

static void test_order_and_at(void **state)
{
    (void)state;
    byocl_target_i a = make_target("a", "A"), b = make_target("B_2", "B"),
                   c = make_target("_c", "C");
    must_register(&a);
    must_register(&b);
    const byocl_target_i *kept = byocl_target_find("B_2");
    must_register(&c);
    /* Entries do not move when others are added. */
    assert_ptr_equal(byocl_target_find("B_2"), kept);
    assert_int_equal(byocl_target_count(), 3);
    assert_string_equal(byocl_target_at(0)->name, "a");
    assert_string_equal(byocl_target_at(1)->name, "B_2");
    assert_string_equal(byocl_target_at(2)->name, "_c");
    assert_null(byocl_target_at(3));
    assert_null(byocl_target_at(-1));

    byocl_error err = {0};
    assert_int_equal(byocl_target_unregister("a", &err), BYOCL_OK);
    assert_int_equal(n_released, 1);
    assert_string_equal(released[0], "A");
    assert_int_equal(byocl_target_count(), 2);
    assert_string_equal(byocl_target_at(0)->name, "B_2");
    assert_string_equal(byocl_target_at(1)->name, "_c");
    assert_ptr_equal(byocl_target_find("B_2"), kept);
    assert_null(byocl_target_find("a"));
}

static void expect_register_error(const byocl_target_i *t, byocl_status status, const char *msg)
{
    byocl_error err = {0};
    int before = byocl_target_count();
    assert_int_equal(byocl_target_register(t, &err), status);
    assert_string_equal(err.msg, msg);
    assert_int_equal(byocl_target_count(), before);
    assert_int_equal(n_released, 0); /* a failed registration keeps the caller's ctx */
}

static void test_register_errors(void **state)
{
    (void)state;
    expect_register_error(NULL, BYOCL_ERR_INVALID, "byocl_target_register: no target given");
    byocl_target_i t = make_target(NULL, "ctx");
    expect_register_error(&t, BYOCL_ERR_INVALID, "a target needs a name");
    t.name = "";
    expect_register_error(&t, BYOCL_ERR_INVALID, "a target needs a name");
    t.name = "open-cl";
    expect_register_error(&t, BYOCL_ERR_INVALID,
                          "bad target name \"open-cl\": '-' at position 4; a target name has "
                          "letters, digits and '_' only");
    t.name = "tab\there";
    expect_register_error(&t, BYOCL_ERR_INVALID,
                          "bad target name \"tab\there\": byte 0x09 at position 3; a target "
                          "name has letters, digits and '_' only");
    char long_name[BYOCL_TARGET_NAME_MAX + 1];
    memset(long_name, 'x', BYOCL_TARGET_NAME_MAX);
    long_name[BYOCL_TARGET_NAME_MAX] = '\0';
    t.name = long_name;
    expect_register_error(&t, BYOCL_ERR_INVALID,
                          "target name \"xxxxxxxxxxxxxxxxxxxx...\" is too long (at most 63 "
                          "characters)");
    long_name[BYOCL_TARGET_NAME_MAX - 1] = '\0'; /* 63 characters: the longest allowed */
    must_register(&t);
    assert_non_null(byocl_target_find(long_name));

    t = make_target("no_supports", "ctx");
    t.supports = NULL;
    expect_register_error(&t, BYOCL_ERR_INVALID, "target \"no_supports\" has no supports function");
    t = make_target("future", "ctx");
    t.api_version = BYOCL_TARGET_API_VERSION + 1;
    expect_register_error(&t, BYOCL_ERR_UNSUPPORTED,
                          "target \"future\" was built for target API version 4; this byocl has "
                          "version 3");
    /* A version 1 target's compile had no config argument: calling it would crash. */
    t = make_target("old", "ctx");
    t.api_version = 1;
    expect_register_error(&t, BYOCL_ERR_UNSUPPORTED,
                          "target \"old\" was built for target API version 1; this byocl has "
                          "version 3");
    t = make_target("twice", "first");
    must_register(&t);
    t.ctx = "second";
    expect_register_error(&t, BYOCL_ERR_INVALID, "a target named \"twice\" is already registered");
    assert_string_equal(byocl_target_find("twice")->ctx, "first");
}

static void test_unregister_unknown(void **state)
{
    (void)state;
    byocl_error err = {0};
    assert_int_equal(byocl_target_unregister("ghost", &err), BYOCL_ERR_NOT_FOUND);
    assert_string_equal(err.msg, "no target named \"ghost\" is registered (registered: none)");
    byocl_target_i a = make_target("one", "1"), b = make_target("two", "2");
    must_register(&a);
    must_register(&b);
    assert_int_equal(byocl_target_unregister("ghost", &err), BYOCL_ERR_NOT_FOUND);
    assert_string_equal(err.msg, "no target named \"ghost\" is registered (registered: one, two)");
    assert_int_equal(byocl_target_unregister(NULL, &err), BYOCL_ERR_NOT_FOUND);
    assert_int_equal(byocl_target_unregister("one", NULL), BYOCL_OK);
    assert_int_equal(byocl_target_unregister("one", NULL), BYOCL_ERR_NOT_FOUND);
    assert_int_equal(n_released, 1);
}

static void test_release_is_optional(void **state)
{
    (void)state;
    byocl_target_i t = make_target("quiet", "q");
    t.release = NULL;
    must_register(&t);
    assert_int_equal(byocl_target_unregister("quiet", NULL), BYOCL_OK);
    must_register(&t);
    byocl_target_registry_reset();
    assert_int_equal(n_released, 0);
    assert_int_equal(byocl_target_count(), 0);
}

static void test_reset_releases_last_first(void **state)
{
    (void)state;
    byocl_target_i a = make_target("a", "A"), b = make_target("b", "B"), c = make_target("c", "C");
    must_register(&a);
    must_register(&b);
    must_register(&c);
    byocl_target_registry_reset();
    assert_int_equal(byocl_target_count(), 0);
    assert_int_equal(n_released, 3);
    assert_string_equal(released[0], "C");
    assert_string_equal(released[1], "B");
    assert_string_equal(released[2], "A");
    assert_null(byocl_target_find("a"));
    /* A reset registry works again, and a second reset has nothing to release. */
    must_register(&a);
    assert_string_equal(byocl_target_at(0)->name, "a");
    byocl_target_registry_reset();
    byocl_target_registry_reset();
    assert_int_equal(n_released, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_register_copies_struct_and_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_order_and_at, setup, teardown),
        cmocka_unit_test_setup_teardown(test_register_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unregister_unknown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_release_is_optional, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reset_releases_last_first, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
