/* The progress reporter: a thread that wakes every 100 ms and redraws. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_progress.h"

#define TICK_NS 100000000L  /* redraw period on a terminal */
#define LINE_PERIOD_S 2.0   /* plain lines: one every 2 s */
#define BAR_WIDTH 30

struct cli_progress {
    char label[160];
    int total;
    atomic_int done;
    bool tty;
    double start, delay, next_line;
    bool shown; /* anything printed yet */
    bool stop;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
};

/* $BYOCL_PROGRESS_DELAY read into *delay: seconds (1 when unset or empty), or -1 for
 * "off". False when it is set to anything else. */
static bool read_delay(double *delay)
{
    const char *v = getenv("BYOCL_PROGRESS_DELAY");
    *delay = 1.0;
    if (!v || !*v)
        return true;
    if (strcmp(v, "off") == 0) {
        *delay = -1;
        return true;
    }
    char *end;
    double d = strtod(v, &end);
    if (*end || !(d >= 0))
        return false;
    *delay = d;
    return true;
}

int cli_progress_check_env(void)
{
    double delay;
    if (read_delay(&delay))
        return CLI_EXIT_OK;
    return cli_fail("BYOCL_PROGRESS_DELAY='%s' is not a number of seconds (e.g. 0, 1 or 2.5; "
                    "off for no progress)",
                    getenv("BYOCL_PROGRESS_DELAY"));
}

/* "3/10" or "" when the total is unknown. */
static void count_str(const cli_progress *p, int done, char *buf, size_t len)
{
    if (p->total > 0)
        snprintf(buf, len, " %d/%d", done, p->total);
    else
        buf[0] = '\0';
}

/* Caller holds p->lock. */
static void draw(cli_progress *p, double now)
{
    double elapsed = now - p->start;
    if (elapsed < p->delay)
        return;
    int done = atomic_load(&p->done);
    char count[48];
    count_str(p, done, count, sizeof count);
    if (!p->tty) {
        if (p->shown && now < p->next_line)
            return;
        fprintf(stderr, "byocl: %s:%s %.1f s\n", p->label, count, elapsed);
        p->next_line = now + LINE_PERIOD_S;
    } else {
        char bar[BAR_WIDTH + 1];
        memset(bar, ' ', BAR_WIDTH);
        bar[BAR_WIDTH] = '\0';
        if (p->total > 0) {
            int fill = (int)((long long)BAR_WIDTH * (done > p->total ? p->total : done) /
                             p->total);
            memset(bar, '#', (size_t)fill);
        } else { /* no count: a block that bounces to show it is alive */
            int span = BAR_WIDTH - 3, step = (int)(elapsed * 10) % (2 * span);
            memset(bar + (step < span ? step : 2 * span - step), '#', 3);
        }
        fprintf(stderr, "\r\033[Kbyocl: %s [%s]%s %.1f s", p->label, bar, count, elapsed);
    }
    fflush(stderr);
    p->shown = true;
}

static void *progress_thread(void *arg)
{
    cli_progress *p = arg;
    pthread_mutex_lock(&p->lock);
    while (!p->stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += TICK_NS;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&p->wake, &p->lock, &until);
        if (!p->stop)
            draw(p, cli_seconds());
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

cli_progress *cli_progress_start(const char *label, int total, bool quiet)
{
    double delay;
    if (quiet || !read_delay(&delay) || delay < 0)
        return NULL;
    cli_progress *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    snprintf(p->label, sizeof p->label, "%s", label);
    p->total = total > 0 ? total : 0;
    atomic_init(&p->done, 0);
    p->tty = isatty(fileno(stderr));
    p->start = cli_seconds();
    p->delay = delay;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    if (p->delay == 0) { /* shown at once, before the step can end */
        pthread_mutex_lock(&p->lock);
        draw(p, p->start);
        pthread_mutex_unlock(&p->lock);
    }
    if (pthread_create(&p->thread, NULL, progress_thread, p) != 0) {
        pthread_cond_destroy(&p->wake);
        pthread_mutex_destroy(&p->lock);
        free(p);
        return NULL;
    }
    return p;
}

void cli_progress_set(cli_progress *p, int done)
{
    if (p)
        atomic_store(&p->done, done);
}

void cli_progress_finish(cli_progress *p, bool ok)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
    if (p->shown) {
        if (p->tty)
            fprintf(stderr, "\r\033[K");
        else
            fprintf(stderr, "byocl: %s: %s %.1f s\n", p->label, ok ? "done in" : "failed after",
                    cli_seconds() - p->start);
        fflush(stderr);
    }
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    free(p);
}
