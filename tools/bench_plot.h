/* byocl bench --svg: host against offloaded time as horizontal bars, one pair per row
 * (end to end, each region, the host ops), written as a standalone SVG. */
#ifndef BYOCL_BENCH_PLOT_H
#define BYOCL_BENCH_PLOT_H

#include <stdio.h>

typedef struct bench_bar {
    const char *label;   /* "end to end", "opencl_main_0", "host ops" */
    double host_ms;      /* the host-only build */
    double offloaded_ms; /* the offloaded build, all of it */
    double kernels_ms;   /* of which kernels (OpenCL events); 0 when not timed */
    double transfers_ms; /* of which transfers */
} bench_bar;

/* Writes the picture to f: per row, the host bar above the offloaded bar, the latter split
 * into kernels, transfers and the rest (the gaps between kernels, the host side of the
 * calls, host ops), each bar labelled with its milliseconds. */
void bench_plot_svg(FILE *f, const char *title, const bench_bar *bars, int n);

#endif
