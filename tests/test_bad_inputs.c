/* The bad-input corpus: every case in the .cases files of tests/bad runs through the
 * built CLI and must exit 1 or 2 (never crash) with exactly the expected stderr, print
 * nothing on stdout, and leave no file behind: its output folder stays empty and nothing
 * appears under tests/bad. Format: tests/bad/README.md. */
#define _DEFAULT_SOURCE /* realpath, setenv */
#include "test_support.h"
#include "base/textbuf.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CASES 400
#define MAX_ENV 4
#define MIN_CASES 40

typedef struct bad_case {
    char name[400];  /* "FILE/NAME" */
    char where[300]; /* "FILE.cases:LINE" of its `case` line */
    char *args;
    char *env[MAX_ENV];
    int n_env;
    int exit_code;
    byocl_textbuf want_err; /* lines, each ending in '\n' */
} bad_case;

static bad_case cases[MAX_CASES];
static int n_cases;
static char bad_dir[PATH_MAX];

static char *xstrdup(const char *s)
{
    char *d = strdup(s);
    if (!d) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return d;
}

/* `text` with {bad}, {plugins} and {out} replaced (malloc'ed). */
static char *expand(const char *text, const char *out_dir)
{
    const char *keys[] = {"{bad}", "{plugins}", "{out}"};
    const char *values[] = {bad_dir, BYOCL_PLUGIN_DIR, out_dir ? out_dir : "{out}"};
    size_t cap = strlen(text) + 1;
    for (const char *p = text; (p = strchr(p, '{')) != NULL; p++)
        cap += PATH_MAX;
    char *res = malloc(cap);
    if (!res)
        return NULL;
    size_t n = 0;
    while (*text) {
        bool replaced = false;
        for (int k = 0; k < 3 && !replaced; k++) {
            size_t klen = strlen(keys[k]);
            if (strncmp(text, keys[k], klen) == 0) {
                n += (size_t)snprintf(res + n, cap - n, "%s", values[k]);
                text += klen;
                replaced = true;
            }
        }
        if (!replaced)
            res[n++] = *text++;
    }
    res[n] = '\0';
    return res;
}

/* Parses one .cases file; false (with a message) on a malformed one. */
static bool load_cases(const char *file)
{
    char path[PATH_MAX + 300];
    snprintf(path, sizeof path, "%s/%s", bad_dir, file);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return false;
    }
    char stem[120];
    snprintf(stem, sizeof stem, "%.*s", (int)(strlen(file) - strlen(".cases")), file);
    char line[8192];
    bool ok = true;
    bad_case *c = NULL;
    for (int lineno = 1; ok && fgets(line, sizeof line, f); lineno++) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '\0' || line[0] == '#')
            continue;
        char *value = strchr(line, ' ');
        const char *rest = value ? value + 1 : "";
        if (value)
            *value = '\0';
        if (strcmp(line, "case") == 0 && *rest && n_cases < MAX_CASES) {
            c = &cases[n_cases++];
            snprintf(c->name, sizeof c->name, "%s/%s", stem, rest);
            snprintf(c->where, sizeof c->where, "%s:%d", file, lineno);
        } else if (!c) {
            ok = false;
        } else if (strcmp(line, "args") == 0 && !c->args) {
            c->args = xstrdup(rest);
        } else if (strcmp(line, "env") == 0 && c->n_env < MAX_ENV && strchr(rest, '=')) {
            c->env[c->n_env++] = xstrdup(rest);
        } else if (strcmp(line, "exit") == 0 && (strcmp(rest, "1") == 0 || strcmp(rest, "2") == 0)) {
            c->exit_code = atoi(rest);
        } else if (strcmp(line, "stderr") == 0) {
            base_textbuf_printf(&c->want_err, "%s\n", rest);
        } else {
            ok = false;
        }
        if (!ok)
            fprintf(stderr, "%s:%d: malformed line (see tests/bad/README.md)\n", path, lineno);
    }
    fclose(f);
    for (int i = 0; ok && i < n_cases; i++)
        if (cases[i].want_err.oom) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        } else if (!cases[i].args || !cases[i].exit_code || cases[i].want_err.len == 0) {
            fprintf(stderr, "%s: case %s needs args, exit (1 or 2) and stderr\n", cases[i].where,
                    cases[i].name);
            ok = false;
        }
    for (int i = 0; ok && i < n_cases; i++)
        for (int j = 0; ok && j < i; j++)
            if (strcmp(cases[i].name, cases[j].name) == 0) {
                fprintf(stderr, "%s: case %s is already at %s\n", cases[i].where, cases[i].name,
                        cases[j].where);
                ok = false;
            }
    return ok;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool load_corpus(void)
{
    char given[PATH_MAX];
    snprintf(given, sizeof given, "%s/../bad", BYOCL_FIXTURES_DIR);
    if (!realpath(given, bad_dir)) {
        fprintf(stderr, "cannot find the corpus folder %s\n", given);
        return false;
    }
    DIR *d = opendir(bad_dir);
    if (!d)
        return false;
    char *files[64];
    int n_files = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n_files < 64) {
        size_t len = strlen(e->d_name);
        if (len > 6 && strcmp(e->d_name + len - 6, ".cases") == 0)
            files[n_files++] = xstrdup(e->d_name);
    }
    closedir(d);
    qsort(files, (size_t)n_files, sizeof *files, by_name);
    bool ok = true;
    for (int i = 0; i < n_files; i++) {
        ok = ok && load_cases(files[i]);
        free(files[i]);
    }
    return ok;
}

/* Files (not folders) under `dir`, recursively. */
static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char sub[PATH_MAX + 256];
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        DIR *inner = opendir(sub);
        if (inner) {
            closedir(inner);
            n += count_files(sub);
        } else {
            n++;
        }
    }
    closedir(d);
    return n;
}

static void run_case(void **state)
{
    const bad_case *c = *state;
    char out_dir[PATH_MAX];
    char tag[sizeof c->name + 8];
    snprintf(tag, sizeof tag, "bad_%s", c->name);
    for (char *p = tag; *p; p++)
        if (*p == '/')
            *p = '_';
    snprintf(out_dir, sizeof out_dir, "%s", ts_tmpdir(tag));
    char *args = expand(c->args, out_dir);
    char *want_err = expand(c->want_err.data, out_dir);
    assert_non_null(args);
    assert_non_null(want_err);
    for (int i = 0; i < c->n_env; i++)
        putenv(c->env[i]);
    int corpus_files = count_files(bad_dir);

    char *out, *err;
    int rc = ts_run_cli(args, &out, &err);

    for (int i = 0; i < c->n_env; i++) {
        char name[200];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(c->env[i], "="), c->env[i]);
        unsetenv(name);
    }
    if (rc != c->exit_code || strcmp(err, want_err) != 0 || *out)
        fail_msg("%s (%s): byocl %s\nexit %d, want %d\nstderr:\n%s\nwant stderr:\n%s\nstdout:\n%s",
                 c->name, c->where, args, rc, c->exit_code, err, want_err, out);
    int left = count_files(out_dir);
    if (left != 0)
        fail_msg("%s: %d file(s) left in the output folder %s", c->name, left, out_dir);
    assert_int_equal(count_files(bad_dir), corpus_files);
    ts_remove_tree(out_dir);
    free(out);
    free(err);
    free(args);
    free(want_err);
}

/* The corpus keeps its promised size and spread. */
static void test_corpus_size(void **state)
{
    (void)state;
    assert_true(n_cases >= MIN_CASES);
    const char *areas[] = {"text/", "onnx/", "tensor/", "cli/", "annotations/", "plugins/",
                           "limits/"};
    for (size_t a = 0; a < sizeof areas / sizeof *areas; a++) {
        int n = 0;
        for (int i = 0; i < n_cases; i++)
            n += strncmp(cases[i].name, areas[a], strlen(areas[a])) == 0;
        if (n == 0)
            fail_msg("no case in tests/bad/%.*s.cases", (int)strlen(areas[a]) - 1, areas[a]);
    }
}

int main(void)
{
    /* the messages are those of the default limits, whatever the caller's shell sets */
    unsetenv("BYOCL_MAX_TENSOR_BYTES");
    unsetenv("BYOCL_MAX_TOTAL_BYTES");
    if (!load_corpus())
        return 1;
    static struct CMUnitTest tests[MAX_CASES + 1];
    tests[0] = (struct CMUnitTest){"corpus_size", test_corpus_size, NULL, NULL, NULL};
    for (int i = 0; i < n_cases; i++)
        tests[i + 1] = (struct CMUnitTest){cases[i].name, run_case, NULL, NULL, &cases[i]};
    int failed = _cmocka_run_group_tests("bad_inputs", tests, (size_t)n_cases + 1, NULL, NULL);
    for (int i = 0; i < n_cases; i++) {
        free(cases[i].args);
        base_textbuf_free(&cases[i].want_err);
        for (int k = 0; k < cases[i].n_env; k++)
            free(cases[i].env[k]);
    }
    return failed;
}
