/* The SVG of byocl bench --svg, written by hand: no plotting library needed. */
#include <string.h>

#include "bench_plot.h"

#define WIDTH 860
#define LABEL_W 150  /* left column: row labels */
#define VALUE_W 110  /* right of the longest bar: its value */
#define BAR_H 16
#define ROW_H 52     /* two bars and a gap */
#define TOP 58       /* title and legend */

static const char *const colors[] = {
    "#4c72b0", /* host */
    "#dd8452", /* kernels */
    "#55a868", /* transfers */
    "#c4c4c4", /* rest of the offloaded time */
};

/* Escapes the characters XML gives a meaning to. */
static void write_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static void rect(FILE *f, double x, double y, double w, const char *color)
{
    if (w > 0)
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>\n", x,
                y, w, BAR_H, color);
}

static void value(FILE *f, double x, double y, double ms)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%.2f ms</text>\n", x + 4,
            y + BAR_H - 4, ms);
}

void bench_plot_svg(FILE *f, const char *title, const bench_bar *bars, int n)
{
    double max = 0;
    for (int i = 0; i < n; i++) {
        if (bars[i].host_ms > max)
            max = bars[i].host_ms;
        if (bars[i].offloaded_ms > max)
            max = bars[i].offloaded_ms;
    }
    double scale = max > 0 ? (WIDTH - LABEL_W - VALUE_W) / max : 0;
    int height = TOP + n * ROW_H + 10;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "font-family=\"sans-serif\">\n", WIDTH, height);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">");
    write_text(f, title);
    fprintf(f, "</text>\n");
    static const char *const legend[] = {"host", "offloaded: kernels", "transfers",
                                         "gaps between kernels, host side of the calls, host ops"};
    double lx = 10;
    for (int k = 0; k < 4; k++) {
        fprintf(f, "<rect x=\"%.1f\" y=\"32\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", lx,
                colors[k]);
        fprintf(f, "<text x=\"%.1f\" y=\"42\" font-size=\"11\">%s</text>\n", lx + 16,
                legend[k]);
        lx += 16 + 6.5 * (double)strlen(legend[k]) + 24; /* ~6.5 px per character */
    }
    for (int i = 0; i < n; i++) {
        const bench_bar *b = &bars[i];
        double y = TOP + i * ROW_H;
        fprintf(f, "<text x=\"10\" y=\"%.1f\" font-size=\"12\">", y + BAR_H + 4);
        write_text(f, b->label);
        fprintf(f, "</text>\n");
        rect(f, LABEL_W, y, b->host_ms * scale, colors[0]);
        value(f, LABEL_W + b->host_ms * scale, y, b->host_ms);
        double y2 = y + BAR_H + 2, x = LABEL_W;
        /* Means of parts inside a median can exceed it: the parts are scaled to fit. */
        double timed = b->kernels_ms + b->transfers_ms;
        double fit = timed > b->offloaded_ms && timed > 0 ? b->offloaded_ms / timed : 1;
        double rest = b->offloaded_ms - timed * fit;
        const double parts[3] = {b->kernels_ms * fit, b->transfers_ms * fit, rest > 0 ? rest : 0};
        for (int k = 0; k < 3; k++) {
            rect(f, x, y2, parts[k] * scale, colors[k + 1]);
            x += parts[k] * scale;
        }
        value(f, x, y2, b->offloaded_ms);
    }
    fprintf(f, "</svg>\n");
}
