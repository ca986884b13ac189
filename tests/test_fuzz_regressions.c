/* Every input under tests/fuzz_regressions/<target>/ once crashed, hung or leaked in the
 * fuzz target of that name (fuzz/): each is fed again to the same entry point, in the
 * normal build (and in `make test-asan`), and must now end cleanly: accepted, or refused
 * with a message that names the input. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_targets.h"
#include "test_support.h"

#define REGRESSIONS_DIR BYOCL_FIXTURES_DIR "/../fuzz_regressions"

/* Feeds one file to the target and prints the outcome. */
static void run_input(const fuzz_target *target, const char *path)
{
    size_t len;
    char *data = ts_read_file(path, &len);
    byocl_error err = {0};
    byocl_status st = target->run((const uint8_t *)data, len, &err);
    free(data);
    if (st != BYOCL_OK) {
        if (err.status != st || !strstr(err.msg, "fuzz-input"))
            fail_msg("%s: status %s, but the message does not name the input: \"%s\"", path,
                     byocl_status_name(st), err.msg);
        printf("  %s/%s: %s: %s\n", target->name, strrchr(path, '/') + 1,
               byocl_status_name(st), err.msg);
    } else {
        printf("  %s/%s: accepted\n", target->name, strrchr(path, '/') + 1);
    }
}

static void test_every_regression_ends_cleanly(void **state)
{
    (void)state;
    fuzz_set_limits();
    DIR *top = opendir(REGRESSIONS_DIR);
    assert_non_null(top);
    int inputs = 0;
    struct dirent *sub;
    while ((sub = readdir(top))) {
        if (sub->d_name[0] == '.')
            continue;
        const fuzz_target *target = fuzz_target_find(sub->d_name);
        if (!target)
            fail_msg("tests/fuzz_regressions/%s: no fuzz target of that name", sub->d_name);
        char dir_path[1024];
        snprintf(dir_path, sizeof dir_path, "%s/%s", REGRESSIONS_DIR, sub->d_name);
        DIR *dir = opendir(dir_path);
        assert_non_null(dir);
        struct dirent *entry;
        while ((entry = readdir(dir))) {
            if (entry->d_name[0] == '.')
                continue;
            char path[2048];
            snprintf(path, sizeof path, "%s/%s", dir_path, entry->d_name);
            run_input(target, path);
            inputs++;
        }
        closedir(dir);
    }
    closedir(top);
    assert_true(inputs > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_regression_ends_cleanly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
