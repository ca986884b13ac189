/* What byocl bench reports about the machine its figures come from. The cross-core round
 * trip is there because it moves: on the 2-core cloud machines this project runs on, the
 * two virtual CPUs sat now close together (a cache line there and back in ~60 ns) and now
 * apart (~450 ns), from one minute to the next, and a model on two threads ran 50% slower
 * apart (mobilenet_v2 5.1 against 7.7 ms) while one thread did not move; see
 * docs/benchmarks.md. */
#define _GNU_SOURCE /* sched_getaffinity, pthread_setaffinity_np */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_machine.h"

/* Round trips per batch, and batches at most: ~4 ms at 450 ns a round trip. The probe
 * stops after PROBE_NS whatever it has (a CPU busy with other work answers a round trip
 * only when its scheduler runs the pong thread, and valgrind runs one thread at a time). */
enum { TRIPS = 1000, BATCHES = 9 };
#define PROBE_NS 50e6

typedef struct ping_pong {
    _Alignas(64) atomic_long ball; /* odd: the ping's turn is over; even: the pong's */
    _Alignas(64) int cpu[2];
    atomic_int pinned;              /* threads that got their CPU */
    atomic_bool done;               /* no ping will come */
    int batches;                    /* batches timed */
    double batch_ns[BATCHES];
} ping_pong;

static bool pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Answers every ping until the ping side is done: the other CPU's side. */
static void *pong(void *arg)
{
    ping_pong *pp = arg;
    if (pin(pp->cpu[1]))
        atomic_fetch_add(&pp->pinned, 1);
    for (long i = 0;; i++) {
        while (atomic_load_explicit(&pp->ball, memory_order_acquire) != 2 * i + 1)
            if (atomic_load_explicit(&pp->done, memory_order_acquire))
                return NULL;
        atomic_store_explicit(&pp->ball, 2 * i + 2, memory_order_release);
    }
}

static void *ping(void *arg)
{
    ping_pong *pp = arg;
    if (pin(pp->cpu[0]))
        atomic_fetch_add(&pp->pinned, 1);
    double start = now_ns();
    long i = 0;
    for (int b = 0; b < BATCHES; b++) {
        double t0 = now_ns();
        for (int k = 0; k < TRIPS; k++, i++) {
            atomic_store_explicit(&pp->ball, 2 * i + 1, memory_order_release);
            for (long spin = 1; atomic_load_explicit(&pp->ball, memory_order_acquire) != 2 * i + 2;
                 spin++)
                if (spin % 1024 == 0 && now_ns() - start > PROBE_NS)
                    goto out;
        }
        pp->batch_ns[pp->batches++] = (now_ns() - t0) / TRIPS;
        if (now_ns() - start > PROBE_NS)
            break;
    }
out:
    atomic_store_explicit(&pp->done, true, memory_order_release);
    return NULL;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_cross_core_round_trip_ns(void)
{
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return NAN;
    ping_pong *pp = aligned_alloc(64, sizeof *pp);
    if (!pp)
        return NAN;
    memset(pp, 0, sizeof *pp);
    int found = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && found < 2; cpu++)
        if (CPU_ISSET(cpu, &allowed))
            pp->cpu[found++] = cpu;
    double ns = NAN;
    pthread_t threads[2];
    if (found == 2 && pthread_create(&threads[0], NULL, pong, pp) == 0) {
        if (pthread_create(&threads[1], NULL, ping, pp) == 0) {
            pthread_join(threads[1], NULL);
            pthread_join(threads[0], NULL);
            qsort(pp->batch_ns, (size_t)pp->batches, sizeof pp->batch_ns[0], by_value);
            if (atomic_load(&pp->pinned) == 2 && pp->batches > 0)
                ns = pp->batch_ns[pp->batches / 2];
        } else {
            atomic_store(&pp->done, true);
            pthread_join(threads[0], NULL);
        }
    }
    free(pp);
    return ns;
}

void bench_machine_describe(bench_machine *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->cpu, sizeof m->cpu, "unknown CPU");
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    m->cores = n > 0 ? (int)n : 1;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) != 0 || !colon)
            continue;
        colon++;
        colon += strspn(colon, " \t");
        snprintf(m->cpu, sizeof m->cpu, "%.*s", (int)strcspn(colon, "\n"), colon);
        break;
    }
    fclose(f);
}
