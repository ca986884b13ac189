/* The host code cache (codegen/llvm/jit.c over runtime/base/cache.c): a model built again
 * loads its object code from the cache folder; corrupt, truncated, foreign and unusable
 * entries are detected, ignored and rebuilt; every build runs correctly against the
 * reference executor. Each test uses a fresh folder through $BYOCL_CACHE_DIR. */
#include <dirent.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "byocl/reference.h"
#include "byocl/runtime.h"
#include "base/cache.h"
#include "llvm/llvm_backend.h"
#include "base/sha256.h"
#include "test_support.h"

static char cache_dir[512];

/* The host code cache's entries, as jit.c writes them (the core's copy of cache.c reads
 * and writes the same files). */
static byocl_cache_kind object_kind = BYOCL_CACHE_KIND_INIT("BYOCLHO1", 1u, ".o");

static const char conv_model[] =
    "#[version = \"0.0.5\"]\n"
    "def @main(%x: Tensor[(1, 8, 12, 12), float32], %w: Tensor[(16, 8, 3, 3), float32], "
    "%b: Tensor[(16), float32]) {\n"
    "  %0 = nn.conv2d(%x, %w, padding=[1, 1], channels=16, kernel_size=[3, 3]);\n"
    "  %1 = nn.bias_add(%0, %b);\n"
    "  %2 = nn.relu(%1);\n"
    "  nn.max_pool2d(%2, pool_size=[2, 2], strides=[2, 2])\n"
    "}\n";

static const char dense_model[] =
    "#[version = \"0.0.5\"]\n"
    "def @main(%x: Tensor[(2, 24), float32], %w: Tensor[(10, 24), float32]) {\n"
    "  %0 = nn.dense(%x, %w);\n"
    "  tanh(%0)\n"
    "}\n";

static void fresh_cache(void)
{
    ts_remove_tree(cache_dir);
    setenv("BYOCL_CACHE_DIR", cache_dir, 1);
    byocl_llvm_cache_stats(true);
}

static void expect_stats(int hits, int misses, int corrupt, int rejected, int stored)
{
    byocl_cache_stats s = byocl_llvm_cache_stats(false);
    assert_int_equal(s.hits, hits);
    assert_int_equal(s.misses, misses);
    assert_int_equal(s.corrupt, corrupt);
    assert_int_equal(s.rejected, rejected);
    assert_int_equal(s.stored, stored);
}

/* Builds `text` for the host at `opt_level`, runs it on seeded random inputs and checks
 * every output against the reference executor within `rtol` and `atol` (conv/dense
 * accumulate in float: about 1e-5 a layer, more through a chain of them). */
static void build_and_check_within(const char *text, int opt_level, double rtol, double atol)
{
    byocl_module *m = ts_parse_typed(text);
    byocl_build_options o = byocl_build_options_default();
    o.threads = 2;
    o.opt_level = opt_level;
    byocl_compiled *c = NULL;
    byocl_executor *ex = NULL;
    byocl_error err;
    if (byocl_build(m, &o, &c, &err) != BYOCL_OK)
        fail_msg("byocl_build: %s", err.msg);
    assert_int_equal(byocl_executor_new(c, &ex, &err), BYOCL_OK);
    const byocl_function *fn = byocl_module_find(m, "main");
    int n_in = byocl_function_num_params(fn);
    byocl_tensor *in[4] = {NULL};
    assert_true(n_in <= 4);
    for (int k = 0; k < n_in; k++) {
        const byocl_type *t = byocl_node_type(fn, byocl_function_param(fn, k));
        in[k] = byocl_tensor_new(t->dtype, &t->shape, NULL);
        assert_non_null(in[k]);
        byocl_tensor_fill_random(in[k], 40 + (uint64_t)k, -1.0, 1.0);
        assert_int_equal(byocl_executor_set_input(ex, byocl_node_name(fn, byocl_function_param(fn, k)),
                                                  in[k], &err),
                         BYOCL_OK);
    }
    assert_int_equal(byocl_executor_run(ex, &err), BYOCL_OK);
    byocl_tensor **want = NULL;
    int n_want = 0;
    assert_int_equal(byocl_reference_run(m, "main", in, n_in, &want, &n_want, &err), BYOCL_OK);
    assert_int_equal(byocl_executor_num_outputs(ex), n_want);
    for (int i = 0; i < n_want; i++) {
        const byocl_tensor *got = NULL;
        assert_int_equal(byocl_executor_output(ex, i, &got, &err), BYOCL_OK);
        ts_assert_tensor_close(got, want[i], rtol, atol);
    }
    byocl_tensors_free(want, n_want);
    for (int k = 0; k < n_in; k++)
        byocl_tensor_unref(in[k]);
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    byocl_module_free(m);
}

static void build_and_check(const char *text, int opt_level)
{
    build_and_check_within(text, opt_level, 1e-5, 1e-6);
}

/* The names of the folder's files that contain `part`, sorted; returns how many. */
static int list_files(const char *part, char names[][128], int max)
{
    DIR *d = opendir(cache_dir);
    if (!d)
        return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, part) && e->d_name[0] != '.') {
            assert_true(n < max);
            snprintf(names[n++], 128, "%.127s", e->d_name);
        }
    closedir(d);
    qsort(names, (size_t)n, 128, (int (*)(const void *, const void *))strcmp);
    return n;
}

/* The path of the folder's only entry other than `except` (NULL: the only entry). */
static void entry_path(const char *except, char *path, size_t len)
{
    char names[4][128];
    int n = list_files(".o", names, 4);
    int found = -1;
    for (int i = 0; i < n; i++)
        if (!except || !strstr(except, names[i])) {
            assert_int_equal(found, -1);
            found = i;
        }
    assert_true(found >= 0);
    snprintf(path, len, "%s/%s", cache_dir, names[found]);
}

/* An entry's key: its file name is the key in hex. */
static byocl_cache_key key_of(const char *path)
{
    const char *name = strrchr(path, '/') + 1;
    byocl_cache_key key;
    for (int i = 0; i < BYOCL_SHA256_BYTES; i++) {
        unsigned byte = 0;
        assert_int_equal(sscanf(name + 2 * i, "%2x", &byte), 1);
        key.bytes[i] = (unsigned char)byte;
    }
    return key;
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

/* ------------------------------------------------------------------ tests */

static void test_sha256_vectors(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int repeat;
        const char *hex;
    } cases[] = {
        {"", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        byocl_sha256 h;
        base_sha256_init(&h);
        for (int r = 0; r < cases[c].repeat; r++)
            base_sha256_update(&h, cases[c].text, strlen(cases[c].text));
        unsigned char digest[BYOCL_SHA256_BYTES];
        base_sha256_final(&h, digest);
        char hex[2 * BYOCL_SHA256_BYTES + 1];
        for (int i = 0; i < BYOCL_SHA256_BYTES; i++)
            snprintf(hex + 2 * i, 3, "%02x", digest[i]);
        assert_string_equal(hex, cases[c].hex);
    }
}

static void test_miss_then_hit(void **state)
{
    (void)state;
    fresh_cache();
    build_and_check(conv_model, 3);
    expect_stats(0, 1, 0, 0, 1);
    char names[4][128];
    assert_int_equal(list_files("", names, 4), 1); /* written by a rename: no temporary */
    assert_int_equal(strlen(names[0]), 64 + strlen(".o"));
    assert_int_equal(strspn(names[0], "0123456789abcdef"), 64);
    char path[1024];
    entry_path(NULL, path, sizeof path);
    size_t len = 0;
    char *data = ts_read_file(path, &len);
    assert_memory_equal(data, "BYOCLHO1", 8);
    assert_true(len > 1000);
    free(data);

    build_and_check(conv_model, 3);
    expect_stats(1, 1, 0, 0, 1);
}

/* The key covers the module and how it is compiled: another model, another opt level,
 * narrower vectors are entries of their own; the first entry still hits. */
static void test_key_covers_code_and_settings(void **state)
{
    (void)state;
    fresh_cache();
    build_and_check(conv_model, 3);
    build_and_check(dense_model, 3);
    build_and_check(conv_model, 2);
    expect_stats(0, 3, 0, 0, 3);
    char names[8][128];
    assert_int_equal(list_files(".o", names, 8), 3);
    char info[256];
    if (!strstr(byocl_llvm_host_info(info, sizeof info), " 128-bit vectors")) {
        setenv("BYOCL_LLVM_VECTOR_BITS", "128", 1);
        build_and_check(conv_model, 3);
        unsetenv("BYOCL_LLVM_VECTOR_BITS");
        expect_stats(0, 4, 0, 0, 4);
        assert_int_equal(list_files(".o", names, 8), 4);
    }
    byocl_cache_stats before = byocl_llvm_cache_stats(false);
    build_and_check(conv_model, 3);
    byocl_cache_stats after = byocl_llvm_cache_stats(false);
    assert_int_equal(after.hits, before.hits + 1);
    assert_int_equal(after.misses, before.misses);
}

static void test_corrupt_entries_rebuild(void **state)
{
    (void)state;
    fresh_cache();
    build_and_check(conv_model, 3);
    char path[1024];
    entry_path(NULL, path, sizeof path);
    size_t len = 0;
    char *good = ts_read_file(path, &len);

    /* a flipped byte in the object code: the digest catches it */
    char *bad = malloc(len);
    assert_non_null(bad);
    memcpy(bad, good, len);
    bad[len / 2] ^= 0x5a;
    write_file(path, bad, len);
    build_and_check(conv_model, 3);
    expect_stats(0, 1, 1, 0, 2); /* rebuilt and stored again, the same object */
    size_t again_len = 0;
    char *again = ts_read_file(path, &again_len);
    assert_int_equal(again_len, len);
    assert_memory_equal(again, good, len);
    free(again);

    /* a truncated entry: one byte short, then part of the header only */
    write_file(path, good, len - 1);
    build_and_check(conv_model, 3);
    expect_stats(0, 1, 2, 0, 3);
    write_file(path, good, 40);
    build_and_check(conv_model, 3);
    expect_stats(0, 1, 3, 0, 4);

    /* another model's valid entry under this name: the stored key differs */
    build_and_check(dense_model, 3);
    char other[1024];
    entry_path(path, other, sizeof other);
    size_t other_len = 0;
    char *foreign = ts_read_file(other, &other_len);
    write_file(path, foreign, other_len);
    build_and_check(conv_model, 3);
    expect_stats(0, 2, 4, 0, 6);
    build_and_check(conv_model, 3); /* and the rewritten entry is good */
    expect_stats(1, 2, 4, 0, 6);
    free(foreign);
    free(bad);
    free(good);
}

/* Entries whose checks pass but whose object LLJIT cannot use (not an object; an object
 * without the model's kernels) are deleted, and the model is compiled in a fresh JIT. */
static void test_unusable_entries_rebuild(void **state)
{
    (void)state;
    fresh_cache();
    build_and_check(conv_model, 3);
    char path[1024];
    entry_path(NULL, path, sizeof path);
    byocl_cache_key key = key_of(path);
    static const char not_an_object[] = "not an ELF object, but a well-formed entry";
    base_cache_store(&object_kind, path, &key, not_an_object, sizeof not_an_object);
    build_and_check(conv_model, 3);
    expect_stats(0, 1, 0, 1, 2);

    build_and_check(dense_model, 3);
    char other[1024];
    entry_path(path, other, sizeof other);
    byocl_cache_key other_key = key_of(other);
    size_t size = 0;
    void *object = base_cache_load(&object_kind, other, &other_key, &size);
    assert_non_null(object);
    base_cache_store(&object_kind, path, &key, object, size);
    free(object);
    build_and_check(conv_model, 3);
    expect_stats(0, 2, 0, 2, 4);
    build_and_check(conv_model, 3);
    expect_stats(1, 2, 0, 2, 4);
}

/* A chain of `layers` conv2d + tanh kernels: enough kernels for the backend to compile
 * them as several modules on a machine with several cores. */
static char *chain_model(int layers)
{
    static char text[8192];
    int n = snprintf(text, sizeof text,
                     "#[version = \"0.0.5\"]\n"
                     "def @main(%%x: Tensor[(1, 8, 8, 8), float32], "
                     "%%w: Tensor[(8, 8, 3, 3), float32]) {\n"
                     "  %%0 = tanh(nn.conv2d(%%x, %%w, padding=[1, 1], channels=8, "
                     "kernel_size=[3, 3]));\n");
    for (int i = 1; i < layers; i++)
        n += snprintf(text + n, sizeof text - (size_t)n,
                      "  %%%d = tanh(nn.conv2d(%%%d, %%w, padding=[1, 1], channels=8, "
                      "kernel_size=[3, 3]));\n",
                      i, i - 1);
    snprintf(text + n, sizeof text - (size_t)n, "  %%%d\n}\n", layers - 1);
    return text;
}

/* A model compiled as several modules (one per 8 kernels, at most one per core) has an
 * entry per module: each is found, checked and rebuilt on its own. */
static void test_modules_cached_separately(void **state)
{
    (void)state;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int parts = cores >= 2 ? 2 : 1;
    const char *model = chain_model(16);
    fresh_cache();
    build_and_check_within(model, 3, 1e-3, 1e-3);
    expect_stats(0, parts, 0, 0, parts);
    char names[4][128];
    assert_int_equal(list_files(".o", names, 4), parts);
    build_and_check_within(model, 3, 1e-3, 1e-3);
    expect_stats(parts, parts, 0, 0, parts);

    char path[1024];
    snprintf(path, sizeof path, "%s/%s", cache_dir, names[0]);
    size_t len = 0;
    char *good = ts_read_file(path, &len);
    write_file(path, good, len / 2);
    build_and_check_within(model, 3, 1e-3, 1e-3); /* the other module still comes from the cache */
    expect_stats(2 * parts - 1, parts, 1, 0, parts + 1);
    size_t again_len = 0;
    char *again = ts_read_file(path, &again_len);
    assert_int_equal(again_len, len);
    assert_memory_equal(again, good, len);
    free(again);
    free(good);
}

/* BYOCL_CACHE_DIR="" turns the cache off: nothing is looked up or stored. */
static void test_empty_dir_disables(void **state)
{
    (void)state;
    fresh_cache();
    setenv("BYOCL_CACHE_DIR", "", 1);
    build_and_check(conv_model, 3);
    build_and_check(conv_model, 3);
    expect_stats(0, 0, 0, 0, 0);
    struct stat sb;
    assert_int_not_equal(stat(cache_dir, &sb), 0);
}

int main(void)
{
    snprintf(cache_dir, sizeof cache_dir, "%s", ts_tmpdir("host_cache"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_vectors),
        cmocka_unit_test(test_miss_then_hit),
        cmocka_unit_test(test_key_covers_code_and_settings),
        cmocka_unit_test(test_corrupt_entries_rebuild),
        cmocka_unit_test(test_unusable_entries_rebuild),
        cmocka_unit_test(test_modules_cached_separately),
        cmocka_unit_test(test_empty_dir_disables),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    ts_remove_tree(cache_dir);
    return failed;
}
