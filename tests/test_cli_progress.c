/* What the CLI says while it works, read as a user's pipe reads it: progress lines on a
 * stderr that is not a terminal, result lines written when they happen (not when the process
 * exits), and the first run after a build reported apart from the steady state.
 *
 * The CLI runs here with its stdout and stderr on pipes (not through ts_run_cli's files).
 * BYOCL_PROGRESS_DELAY=0 stands in for a step that takes over a second, so nothing depends
 * on timing: times are written "T" before the output is compared, exactly. The run that is
 * held mid-way uses the faulty test plugin's BYOCL_FAULTY_WAIT (tests/plugins/faulty_target.c):
 * its first region call reads a FIFO to its end, so the CLI waits there until the test
 * writes it. */
#define _DEFAULT_SOURCE /* setenv, mkfifo */
#include "test_support.h"
#include "base/textbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FMT(buf, ...) assert_true(snprintf((buf), sizeof(buf), __VA_ARGS__) < (int)sizeof(buf))

/* How long the test waits for the CLI to write what it expects (a hang fails, not blocks). */
#define WAIT_MS 60000

/* Region faulty_main_0 = abs (the faulty target runs it); exp runs on the host. */
static const char model_text[] = "#[version = \"0.0.5\"]\n"
                                 "def @main(%x: Tensor[(4), float32]) {\n"
                                 "  %0 = exp(%x);\n"
                                 "  abs(%0)\n"
                                 "}\n";

static char work[600], model[700], plugin[700];

/* A child CLI with its stdout and stderr on pipes; what it wrote so far. */
typedef struct child {
    pid_t pid;
    int fd[2]; /* stdout, stderr; -1 once at EOF */
    byocl_textbuf out[2];
    const char *text[2]; /* out[k].data: what came so far */
} child;

/* Starts the CLI with argv[] (NULL-terminated, after the program name) and `env`
 * ("NAME=VALUE", NULL-terminated) added to the environment. */
static void child_start(child *c, const char *const *argv, const char *const *env)
{
    int out[2], err[2];
    assert_int_equal(pipe(out), 0);
    assert_int_equal(pipe(err), 0);
    const char *args[32] = {BYOCL_CLI_PATH};
    int n = 1;
    for (; argv[n - 1]; n++) {
        assert_true(n < 31);
        args[n] = argv[n - 1];
    }
    args[n] = NULL;
    c->pid = fork();
    assert_true(c->pid >= 0);
    if (c->pid == 0) {
        for (int i = 0; env[i]; i++)
            putenv((char *)env[i]);
        int null = open("/dev/null", O_RDONLY);
        if (null < 0 || dup2(null, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
            _exit(126);
        close(out[0]);
        close(err[0]);
        execv(BYOCL_CLI_PATH, (char *const *)args);
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    c->fd[0] = out[0];
    c->fd[1] = err[0];
    for (int k = 0; k < 2; k++) {
        c->out[k] = (byocl_textbuf){0};
        assert_true(base_textbuf_reserve(&c->out[k], 0));
        c->text[k] = c->out[k].data;
    }
}

/* Reads what the child writes until `until(c)` holds (NULL: until both streams end); fails
 * the test (killing the child) when that takes over WAIT_MS. */
static void child_read(child *c, bool (*until)(const child *c))
{
    int waited = 0;
    while (until ? !until(c) : c->fd[0] >= 0 || c->fd[1] >= 0) {
        struct pollfd p[2] = {{.fd = c->fd[0], .events = POLLIN}, {.fd = c->fd[1], .events = POLLIN}};
        int r = poll(p, 2, 100);
        if (r < 0 && errno == EINTR)
            continue;
        assert_true(r >= 0);
        if (r == 0 && (waited += 100) > WAIT_MS) {
            kill(c->pid, SIGKILL);
            waitpid(c->pid, NULL, 0);
            fail_msg("the CLI wrote no more for %d s; stdout so far:\n%s\nstderr so far:\n%s",
                     WAIT_MS / 1000, c->text[0], c->text[1]);
        }
        for (int k = 0; k < 2; k++) {
            if (c->fd[k] < 0 || !(p[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char buf[4096];
            ssize_t got = read(c->fd[k], buf, sizeof buf);
            if (got <= 0) {
                close(c->fd[k]);
                c->fd[k] = -1;
                continue;
            }
            base_textbuf_putn(&c->out[k], buf, (size_t)got);
            assert_false(c->out[k].oom);
            c->text[k] = c->out[k].data;
        }
    }
}

/* Reads to the end and returns the exit status. */
static int child_finish(child *c)
{
    child_read(c, NULL);
    int status;
    assert_int_equal(waitpid(c->pid, &status, 0), c->pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void child_free(child *c)
{
    base_textbuf_free(&c->out[0]);
    base_textbuf_free(&c->out[1]);
}

/* Whether the child is still running (it has not exited, nor been reaped). */
static bool child_alive(const child *c)
{
    return waitpid(c->pid, NULL, WNOHANG) == 0;
}

/* `text` with each time ("12.34 ms", "0.0 s") written "T ms", "T s", and the repeats of a
 * progress line (a step that took over 2 s prints one every 2 s: "byocl: LABEL: 1/2 T s"
 * after "byocl: LABEL: 0/2 T s") dropped; malloc'ed. */
static char *normalized(const char *text)
{
    size_t n = strlen(text);
    char *tmp = malloc(n + 1), *out = malloc(n + 1);
    assert_non_null(tmp);
    assert_non_null(out);
    size_t at = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && text[j] >= '0' && text[j] <= '9')
            j++;
        bool number = j > i && j < n && text[j] == '.' && (i == 0 || text[i - 1] == ' ');
        size_t k = j + 1;
        while (number && k < n && text[k] >= '0' && text[k] <= '9')
            k++;
        if (number && (strncmp(text + k, " ms", 3) == 0 || strncmp(text + k, " s\n", 3) == 0)) {
            tmp[at++] = 'T';
            i = k;
        } else {
            tmp[at++] = text[i++];
        }
    }
    tmp[at] = '\0';
    /* Drop a progress line whose "byocl: LABEL:" is the one of the line kept before it (the
     * periodic lines; the last, "done in" or "failed after", stays). */
    size_t prev_len = 0;
    const char *prev = NULL;
    at = 0;
    for (const char *line = tmp; *line;) {
        size_t len = strcspn(line, "\n") + (line[strcspn(line, "\n")] == '\n');
        const char *colon = NULL;
        for (const char *p = line; p < line + len; p++)
            if (p[0] == ':' && p[1] == ' ')
                colon = p;
        size_t key = colon ? (size_t)(colon - line) : len;
        bool progress = strncmp(line, "byocl: ", 7) == 0 && !strstr(line, ": done in ") &&
                        !strstr(line, ": failed after ") && line[len - 1] == '\n';
        bool repeat = progress && prev && prev_len == key && strncmp(prev, line, key) == 0;
        if (!repeat) {
            memcpy(out + at, line, len);
            at += len;
            prev = line;
            prev_len = key;
        }
        line += len;
    }
    out[at] = '\0';
    free(tmp);
    return out;
}

static void assert_normalized(const char *got, const char *want)
{
    char *norm = normalized(got);
    if (strcmp(norm, want) != 0)
        fail_msg("got (times as T):\n%s\nwant:\n%s\nas written:\n%s", norm, want, got);
    free(norm);
}

static int setup(void **state)
{
    (void)state;
    FMT(work, "%s", ts_tmpdir("cli-progress"));
    FMT(model, "%s/abs_exp.relay", work);
    ts_write_text(model, model_text);
    FMT(plugin, "%s/libfaulty_target.so", BYOCL_PLUGIN_DIR);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ts_remove_tree(work);
    return 0;
}

/* The output lines of the model on --random-inputs (seed 0), after the time line(s). */
#define MODEL_OUTPUT                                                                         \
    "output 0: Tensor[(4), float32]\n"                                                       \
    "  min 1.02679  max 2.64027  mean 1.90639  first [2.4189, 1.53961, 1.02679, 2.64027]\n"

/* Progress on a pipe: a line when a step starts showing and one when it is done, for the
 * build, the first run and the steady-state runs; stdout has the first run apart. */
static void test_progress_lines_on_a_pipe(void **state)
{
    (void)state;
    const char *argv[] = {"run", model, "--random-inputs", "--target", "ref", "--threads", "1",
                          "--runs", "3", NULL};
    const char *env[] = {"BYOCL_PROGRESS_DELAY=0", NULL};
    child c;
    child_start(&c, argv, env);
    assert_int_equal(child_finish(&c), 0);
    assert_normalized(c.text[1], "byocl: building @main for target ref: T s\n"
                                 "byocl: building @main for target ref: done in T s\n"
                                 "byocl: running @main on target ref (first run): T s\n"
                                 "byocl: running @main on target ref (first run): done in T s\n"
                                 "byocl: running @main on target ref (steady state): 0/2 T s\n"
                                 "byocl: running @main on target ref (steady state): done in "
                                 "T s\n");
    char want[4096];
    FMT(want,
        "built @main of %s for target ref in T ms: 2 steps, 1 thread\n"
        "ran @main of %s on target ref 3 times: first run T ms; steady state (2 runs): min "
        "T ms, median T ms, max T ms\n" MODEL_OUTPUT,
        model, model);
    assert_normalized(c.text[0], want);
    child_free(&c);

    /* The reference executor counts its runs as one step. */
    const char *argv_ref[] = {"run", model, "--random-inputs", "--runs", "2", NULL};
    child_start(&c, argv_ref, env);
    assert_int_equal(child_finish(&c), 0);
    assert_normalized(c.text[1], "byocl: running @main on the ref executor: 0/2 T s\n"
                                 "byocl: running @main on the ref executor: done in T s\n");
    FMT(want,
        "ran @main of %s on the ref executor 2 times: min T ms, median T ms, max T ms\n"
        MODEL_OUTPUT,
        model);
    assert_normalized(c.text[0], want);
    child_free(&c);
}

/* Under the delay (1 s by default) a short command prints no progress; "off" never does,
 * and a delay that is no number of seconds is refused before any work. */
/* A step that fails ends its progress with "failed after", not "done in", before the error. */
static void test_failed_step(void **state)
{
    (void)state;
    const char *argv[] = {"--plugin", plugin, "run", model, "--random-inputs", "--target",
                          "faulty", "--threads", "1", NULL};
    const char *env[] = {"BYOCL_PROGRESS_DELAY=0", "BYOCL_FAULTY_FAIL=faulty_main_0", NULL};
    child c;
    child_start(&c, argv, env);
    assert_int_equal(child_finish(&c), 1);
    assert_normalized(c.text[1], "byocl: building @main for target faulty: T s\n"
                                 "byocl: building @main for target faulty: done in T s\n"
                                 "byocl: running @main on target faulty (first run): T s\n"
                                 "byocl: running @main on target faulty (first run): failed "
                                 "after T s\n"
                                 "byocl: error: in @main, the result (@faulty_main_0): faulty "
                                 "target: faulty_main_0 fails on purpose (BYOCL_FAULTY_FAIL)\n");
    child_free(&c);
}

static void test_progress_delay(void **state)
{
    (void)state;
    const char *argv[] = {"run", model, "--random-inputs", "--target", "ref", "--threads", "1",
                          NULL};
    const char *env_off[] = {"BYOCL_PROGRESS_DELAY=off", NULL};
    const char *env_long[] = {"BYOCL_PROGRESS_DELAY=3600", NULL};
    const char *const *envs[] = {env_off, env_long};
    char want[4096];
    FMT(want,
        "built @main of %s for target ref in T ms: 2 steps, 1 thread\n"
        "ran @main of %s on target ref in T ms (first run)\n" MODEL_OUTPUT,
        model, model);
    for (int i = 0; i < 2; i++) {
        child c;
        child_start(&c, argv, envs[i]);
        assert_int_equal(child_finish(&c), 0);
        assert_string_equal(c.text[1], "");
        assert_normalized(c.text[0], want);
        child_free(&c);
    }
    const char *env_bad[] = {"BYOCL_PROGRESS_DELAY=-1", NULL};
    child c;
    child_start(&c, argv, env_bad);
    assert_int_equal(child_finish(&c), 1);
    assert_string_equal(c.text[0], "");
    assert_string_equal(c.text[1], "byocl: error: BYOCL_PROGRESS_DELAY='-1' is not a number of "
                                   "seconds (e.g. 0, 1 or 2.5; off for no progress)\n");
    child_free(&c);
}

static bool built_line_read(const child *c)
{
    return strchr(c->text[0], '\n') != NULL;
}

static bool first_run_shown(const child *c)
{
    const char *at = strstr(c->text[1], "(first run): ");
    return at && strchr(at, '\n');
}

/* The `built ...` line reaches a pipe while the run after it is still going (held at the
 * region's first call), and the run's progress line is there too; the rest follows when
 * the run is let go. */
static void test_lines_written_when_they_happen(void **state)
{
    (void)state;
    char fifo[800], wait_env[900];
    FMT(fifo, "%s/hold", work);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    FMT(wait_env, "BYOCL_FAULTY_WAIT=%s", fifo);
    const char *argv[] = {"--plugin", plugin, "run", model, "--random-inputs", "--target",
                          "faulty", "--threads", "1", NULL};
    const char *env[] = {wait_env, "BYOCL_PROGRESS_DELAY=0", NULL};
    child c;
    child_start(&c, argv, env);
    child_read(&c, built_line_read);
    child_read(&c, first_run_shown);
    /* The run is held: nothing else can have been printed, and the CLI has not exited. */
    assert_true(child_alive(&c));
    char want[4096];
    FMT(want, "built @main of %s for target faulty in T ms: 2 steps, 1 thread\n", model);
    assert_normalized(c.text[0], want);
    assert_normalized(c.text[1], "byocl: building @main for target faulty: T s\n"
                                 "byocl: building @main for target faulty: done in T s\n"
                                 "byocl: running @main on target faulty (first run): T s\n");
    int w = open(fifo, O_WRONLY); /* lets the run go: the region reads to EOF */
    assert_true(w >= 0);
    close(w);
    assert_int_equal(child_finish(&c), 0);
    FMT(want,
        "built @main of %s for target faulty in T ms: 2 steps, 1 thread\n"
        "ran @main of %s on target faulty in T ms (first run)\n" MODEL_OUTPUT,
        model, model);
    assert_normalized(c.text[0], want);
    assert_normalized(c.text[1], "byocl: building @main for target faulty: T s\n"
                                 "byocl: building @main for target faulty: done in T s\n"
                                 "byocl: running @main on target faulty (first run): T s\n"
                                 "byocl: running @main on target faulty (first run): done in "
                                 "T s\n");
    child_free(&c);
    remove(fifo);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_progress_lines_on_a_pipe),
        cmocka_unit_test(test_failed_step),
        cmocka_unit_test(test_progress_delay),
        cmocka_unit_test(test_lines_written_when_they_happen),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
