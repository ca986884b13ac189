/* The machine byocl bench's figures come from (bench_machine.c). */
#ifndef BYOCL_BENCH_MACHINE_H
#define BYOCL_BENCH_MACHINE_H

typedef struct bench_machine {
    char cpu[128]; /* /proc/cpuinfo's model name, or "unknown CPU" */
    int cores;     /* online */
} bench_machine;

void bench_machine_describe(bench_machine *m);
/* The median time (ns) for a cache line to go from one CPU to another and back, the first
 * two CPUs this process may run on, each pinned by a thread of its own; NAN where there is
 * one CPU, a thread could not be pinned, or not one batch of round trips finished within
 * the probe's 50 ms. Takes a few milliseconds. */
double bench_cross_core_round_trip_ns(void);

#endif
