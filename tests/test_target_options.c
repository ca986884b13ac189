/* Target API options (version 2 on): option sets ("TARGET.KEY=VALUE"), their checks against the
 * registered targets, the config a compile receives, devices, and byocl_compile. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "byocl/byocl.h"
#include "byocl/pipeline.h"
#include "byocl/runtime.h"
#include "byocl/target.h"
#include "partition_util.h"
#include "test_support.h"

/* A target with one option of each kind and two devices; its compile records what its
 * config said, and makes no module (the region then runs in the ref region module). */
typedef struct seen_config {
    int calls;
    char level[32];
    bool verbose;
    int device;
} seen_config;

static bool any_relu(void *ctx, const byocl_function *fn, int node, char *why, size_t len)
{
    (void)ctx;
    (void)why;
    (void)len;
    return strcmp(byocl_node_op(fn, node), "nn.relu") == 0;
}

static byocl_status record_compile(void *ctx, const byocl_function *region,
                                   const byocl_target_config *config, byocl_rtmod **out,
                                   byocl_error *err)
{
    (void)region;
    (void)err;
    seen_config *seen = ctx;
    seen->calls++;
    const char *level = byocl_target_config_get(config, "level");
    snprintf(seen->level, sizeof seen->level, "%s", level ? level : "(unset)");
    seen->verbose = byocl_target_config_bool(config, "verbose", false);
    seen->device = byocl_target_config_device(config);
    *out = NULL;
    return BYOCL_OK;
}

static byocl_status two_devices(void *ctx, byocl_device_info *out, int cap, int *n,
                                byocl_error *err)
{
    (void)ctx;
    (void)err;
    static const byocl_device_info devs[2] = {
        {.name = "Fake CPU", .description = "the host", .kind = BYOCL_DEVICE_CPU,
         .memory_bytes = 1u << 30, .host_memory = true},
        {.name = "Fake NPU 2000", .description = "vendor X", .kind = BYOCL_DEVICE_ACCELERATOR,
         .memory_bytes = 1u << 28, .host_memory = false},
    };
    *n = 2;
    for (int i = 0; i < cap && i < 2; i++)
        out[i] = devs[i];
    return BYOCL_OK;
}

static const byocl_target_option fake_options[] = {
    {"verbose", BYOCL_OPTION_BOOL, NULL, "off", "say more"},
    {"level", BYOCL_OPTION_CHOICE, "low|high", "low", "how hard to try"},
    {"tiles", BYOCL_OPTION_INT, NULL, "4", "tile count"},
    {"name", BYOCL_OPTION_STRING, NULL, NULL, "any text"},
    {NULL, 0, NULL, NULL, NULL},
};

static seen_config seen;

/* Records where it was asked to write and with which options; writes nothing. */
static byocl_status record_emit(void *ctx, const byocl_function *region,
                                const byocl_target_config *config, const char *dir,
                                byocl_error *err)
{
    (void)err;
    seen_config *s = ctx;
    s->calls++;
    const char *level = byocl_target_config_get(config, "level");
    snprintf(s->level, sizeof s->level, "%s@%s in %s", level ? level : "(unset)",
             byocl_function_name(region), dir);
    return BYOCL_OK;
}

static void register_fake(void)
{
    memset(&seen, 0, sizeof seen);
    const byocl_target_i t = {.name = "fake",
                              .api_version = BYOCL_TARGET_API_VERSION,
                              .ctx = &seen,
                              .supports = any_relu,
                              .compile = record_compile,
                              .options = fake_options,
                              .devices = two_devices,
                              .emit = record_emit};
    byocl_error err = {0};
    assert_int_equal(byocl_target_register(&t, &err), BYOCL_OK);
}

static byocl_target_options *options_of(const char *const *texts, int n)
{
    byocl_target_options *o = NULL;
    byocl_error err = {0};
    assert_int_equal(byocl_target_options_new(&o, &err), BYOCL_OK);
    for (int i = 0; i < n; i++)
        if (byocl_target_options_parse(o, texts[i], &err) != BYOCL_OK)
            fail_msg("%s: %s", texts[i], err.msg);
    return o;
}

static void test_parse(void **state)
{
    (void)state;
    byocl_target_options *o = NULL;
    byocl_error err = {0};
    assert_int_equal(byocl_target_options_new(&o, &err), BYOCL_OK);
    assert_int_equal(byocl_target_options_parse(o, "fake.level=high", &err), BYOCL_OK);
    assert_int_equal(byocl_target_options_parse(o, "fake.name=a=b.c", &err), BYOCL_OK);
    assert_int_equal(byocl_target_options_parse(o, "fake.level=low", &err), BYOCL_OK);
    assert_int_equal(byocl_target_options_count(o), 2); /* the last value wins */
    assert_string_equal(byocl_target_options_get(o, "fake", "level"), "low");
    assert_string_equal(byocl_target_options_get(o, "fake", "name"), "a=b.c");
    assert_null(byocl_target_options_get(o, "fake", "tiles"));
    PU_ASSERT_ERROR(byocl_target_options_parse(o, "level=high", &err), err, BYOCL_ERR_INVALID,
                    "target option 'level=high' is not TARGET.KEY=VALUE (e.g. "
                    "opencl.profile=on)");
    PU_ASSERT_ERROR(byocl_target_options_parse(o, "fake.level", &err), err, BYOCL_ERR_INVALID,
                    "target option 'fake.level' is not TARGET.KEY=VALUE (e.g. "
                    "opencl.profile=on)");
    PU_ASSERT_ERROR(byocl_target_options_parse(o, "fa-ke.level=1", &err), err,
                    BYOCL_ERR_INVALID,
                    "target option fa-ke.level: bad target name \"fa-ke\": '-' at position 2; "
                    "a target name has letters, digits and '_' only");
    PU_ASSERT_ERROR(byocl_target_options_parse(o, "fake.le vel=1", &err), err,
                    BYOCL_ERR_INVALID,
                    "target option fake.le vel: a key has letters, digits and '_' only");
    byocl_target_options_free(o);
}

static void test_check(void **state)
{
    (void)state;
    register_fake();
    byocl_error err = {0};
    static const char *const good[] = {"fake.verbose=ON", "fake.level=high", "fake.tiles=-3",
                                       "fake.name=", "fake.device=npu"};
    byocl_target_options *o = options_of(good, 5);
    assert_int_equal(byocl_target_options_check(o, &err), BYOCL_OK);
    byocl_target_options_free(o);
    static const struct {
        const char *text, *message;
    } bad[] = {
        {"other.x=1", "target option other.x: no target named 'other' is registered "
                      "(registered: fake)"},
        {"fake.levl=high", "target option fake.levl: target fake has no option 'levl' "
                           "(options: device, verbose, level, tiles, name)"},
        {"fake.verbose=maybe", "target option fake.verbose: 'maybe' is not on or off"},
        {"fake.tiles=4x", "target option fake.tiles: '4x' is not an integer"},
        {"fake.level=medium", "target option fake.level: 'medium' is not one of low|high"},
        {"fake.device=2", "target option fake.device: device '2' names no device of target "
                          "fake: give an index from 0 to 1 or a part of a device's name "
                          "(devices: 0: Fake CPU, 1: Fake NPU 2000)"},
        {"fake.device=gpu", "target option fake.device: device 'gpu' names no device of "
                            "target fake: give an index from 0 to 1 or a part of a device's "
                            "name (devices: 0: Fake CPU, 1: Fake NPU 2000)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o = options_of(&bad[i].text, 1);
        assert_int_not_equal(byocl_target_options_check(o, &err), BYOCL_OK);
        assert_string_equal(err.msg, bad[i].message);
        byocl_target_options_free(o);
    }
    byocl_target_registry_reset();
}

static void test_devices(void **state)
{
    (void)state;
    register_fake();
    byocl_error err = {0};
    byocl_device_info *devs = NULL;
    int n = 0;
    assert_int_equal(byocl_target_devices("fake", &devs, &n, &err), BYOCL_OK);
    assert_int_equal(n, 2);
    assert_string_equal(devs[1].name, "Fake NPU 2000");
    assert_string_equal(byocl_device_kind_name(devs[1].kind), "accelerator");
    assert_false(devs[1].host_memory);
    free(devs);
    int index = -1;
    byocl_device_info info;
    assert_int_equal(byocl_target_device_find("fake", "1", &index, &info, &err), BYOCL_OK);
    assert_int_equal(index, 1);
    assert_int_equal(byocl_target_device_find("fake", "HOST", &index, &info, &err), BYOCL_OK);
    assert_int_equal(index, 0); /* a part of the description matches too */
    assert_string_equal(info.name, "Fake CPU");
    const byocl_target_i plain = {.name = "plain", .api_version = BYOCL_TARGET_API_VERSION,
                                  .supports = any_relu};
    assert_int_equal(byocl_target_register(&plain, &err), BYOCL_OK);
    PU_ASSERT_ERROR(byocl_target_devices("plain", &devs, &n, &err), err, BYOCL_ERR_UNSUPPORTED,
                    "target plain has no devices to choose from");
    PU_ASSERT_ERROR(byocl_target_devices("nope", &devs, &n, &err), err, BYOCL_ERR_NOT_FOUND,
                    "no target named 'nope' is registered (registered: fake, plain)");
    byocl_target_registry_reset();
}

static byocl_module *relu_model(void)
{
    const char *text = "def @main(%x: Tensor[(2, 3), float32]) { nn.relu(%x) }";
    byocl_module *m = NULL;
    byocl_error err = {0};
    if (byocl_text_parse(text, strlen(text), "relu.relay", NULL, &m, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return m;
}

/* byocl_compile partitions for the target, hands its compile its own options, and refuses
 * wrong options before any region is compiled (no fallback hides them). */
static void test_compile_passes_config(void **state)
{
    (void)state;
    register_fake();
    byocl_module *m = relu_model();
    const char *targets[1] = {"fake"};
    static const char *const texts[] = {"fake.level=high", "fake.verbose=yes",
                                        "fake.device=NPU", "opencl.buffers=copy"};
    byocl_target_options *o = options_of(texts, 4);
    byocl_compile_options co = byocl_compile_options_default();
    co.partition.targets = targets;
    co.partition.n_targets = 1;
    co.build.target = "ref";
    co.build.target_options = o;
    byocl_compiled *c = NULL;
    byocl_error err = {0};
    if (byocl_compile(m, &co, &c, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(seen.calls, 1);
    assert_string_equal(seen.level, "high");
    assert_true(seen.verbose);
    assert_int_equal(seen.device, 1);
    byocl_plan_stats st;
    byocl_compiled_stats(c, &st);
    assert_int_equal(st.n_regions, 1);
    byocl_compiled_free(c);
    byocl_target_options_free(o);

    static const char *const wrong[] = {"fake.level=top"};
    o = options_of(wrong, 1);
    co.build.target_options = o;
    co.build.fallback = "host";
    PU_ASSERT_ERROR(byocl_compile(m, &co, &c, &err), err, BYOCL_ERR_INVALID,
                    "target option fake.level: 'top' is not one of low|high");
    assert_null(c);
    assert_int_equal(seen.calls, 1);
    byocl_target_options_free(o);

    /* Without targets the module is built as it is: nothing is partitioned. */
    co = byocl_compile_options_default();
    co.build.target = "ref";
    if (byocl_compile(m, &co, &c, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    byocl_compiled_stats(c, &st);
    assert_int_equal(st.n_regions, 0);
    byocl_compiled_free(c);
    byocl_module_free(m);
    byocl_target_registry_reset();
}

/* byocl_compile's errors name the pass; a dump shows the partitioned module. */
static void test_compile_errors(void **state)
{
    (void)state;
    register_fake();
    byocl_module *m = relu_model();
    byocl_error err = {0};
    byocl_compiled *c = NULL;
    PU_ASSERT_ERROR(byocl_compile(NULL, NULL, &c, &err), err, BYOCL_ERR_INVALID,
                    "byocl_compile: no module");
    byocl_compile_options co = byocl_compile_options_default();
    co.partition.range_target = "fake";
    co.partition.range = "#7:#9";
    co.build.target = "ref";
    assert_int_not_equal(byocl_compile(m, &co, &c, &err), BYOCL_OK);
    ts_assert_contains(err.msg, "annotate_range: ");
    assert_null(c);
    byocl_module_free(m);
    byocl_target_registry_reset();
}

/* byocl_emit_regions hands each region to its target's emit with the target's options;
 * regions of targets without emit are left out. */
static void test_emit_regions(void **state)
{
    (void)state;
    register_fake();
    byocl_module *m = relu_model();
    const char *targets[1] = {"fake"};
    byocl_compile_options co = byocl_compile_options_default();
    co.partition.targets = targets;
    co.partition.n_targets = 1;
    byocl_module *p = NULL;
    byocl_error err = {0};
    if (byocl_compile_partition(m, &co, &p, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    static const char *const texts[] = {"fake.level=high"};
    byocl_target_options *o = options_of(texts, 1);
    int n = -1;
    assert_int_equal(byocl_emit_regions(p, "out", o, &n, &err), BYOCL_OK);
    assert_int_equal(n, 1);
    assert_int_equal(seen.calls, 1);
    assert_string_equal(seen.level, "high@fake_main_0 in out");
    byocl_target_options_free(o);
    static const char *const wrong[] = {"fake.levels=high"};
    o = options_of(wrong, 1);
    PU_ASSERT_ERROR(byocl_emit_regions(p, "out", o, &n, &err), err, BYOCL_ERR_INVALID,
                    "target option fake.levels: target fake has no option 'levels' (options: "
                    "device, verbose, level, tiles, name)");
    assert_int_equal(n, 0);
    byocl_target_options_free(o);
    /* A target without emit: its regions are not written. */
    byocl_target_registry_reset();
    const byocl_target_i quiet = {.name = "fake", .api_version = BYOCL_TARGET_API_VERSION,
                                  .supports = any_relu};
    assert_int_equal(byocl_target_register(&quiet, &err), BYOCL_OK);
    assert_int_equal(byocl_emit_regions(p, "out", NULL, &n, &err), BYOCL_OK);
    assert_int_equal(n, 0);
    byocl_module_free(p);
    byocl_module_free(m);
    byocl_target_registry_reset();
}

/* The built-in targets register on first use, with their options and devices. */
static void test_builtins(void **state)
{
    (void)state;
    byocl_error err = {0};
    assert_int_equal(byocl_target_register_builtins(&err), BYOCL_OK);
    assert_int_equal(byocl_target_register_builtins(&err), BYOCL_OK); /* once */
    assert_int_equal(byocl_target_count(), 1);
    const byocl_target_i *cl = byocl_target_at(0);
    assert_non_null(cl->options);
    assert_non_null(cl->devices);
    assert_non_null(cl->compile);
    byocl_target_registry_reset();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_devices),
        cmocka_unit_test(test_compile_passes_config),
        cmocka_unit_test(test_compile_errors),
        cmocka_unit_test(test_emit_regions),
        cmocka_unit_test(test_builtins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
