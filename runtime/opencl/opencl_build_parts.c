/* Building a large region's program in parts, in parallel.
 *
 * PoCL 3.1 compiles one kernel at a time in a process (its compiler lock is process-wide:
 * two threads building in contexts of their own took as long as one), about a second per
 * conv2d kernel; a region with thirty kernels took 15 s on any number of cores. So a region
 * whose kernels cost enough is split into parts of about equal cost, one per build job
 * (the plan's kernel spans: the prelude with any subset of the kernels is a program). This
 * process compiles the first part while worker processes (byocl-opencl-build,
 * opencl_build_worker.c) compile the others into the program cache, from which this
 * process then loads them. Whatever a worker does not deliver (there is none, it failed,
 * it was killed) is compiled here, so the results and error messages are those of a build
 * in one process. Each part is an entry of its own in the program cache; a region that is
 * not split keeps the one entry of its whole program. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT, mkdtemp */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/file_util.h"
#include "base/textbuf.h"
#include "opencl_impl.h"

extern char **environ;

/* The version of the command line between this file and opencl_build_worker.c. */
#define OCL_WORKER_PROTOCOL "1"

/* A part is worth a process of its own from about this cost (build_cost units: one is a
 * simple kernel, about 0.08 s with PoCL, so this is about 1 s): a worker's start and
 * PoCL's own take about 0.5 s. */
#define MIN_PART_COST 12.0
#define MAX_JOBS 64

byocl_status ocl_build_jobs(int *out, byocl_error *err)
{
    const char *env = getenv("BYOCL_OPENCL_BUILD_JOBS");
    if (env && *env) {
        char *end;
        errno = 0;
        long n = strtol(env, &end, 10);
        if (errno || *end || n < 1 || n > 4096)
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "bad BYOCL_OPENCL_BUILD_JOBS '%s': expected a whole number "
                                   "of build jobs from 1 to 4096 (1: build in this process only)",
                                   env);
        *out = (int)n;
        return BYOCL_OK;
    }
    cpu_set_t cpus;
    int n = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus)
                                                         : (int)sysconf(_SC_NPROCESSORS_ONLN);
    *out = n < 1 ? 1 : n > MAX_JOBS ? MAX_JOBS : n;
    return BYOCL_OK;
}

const char *ocl_build_worker_path(char *buf, size_t len)
{
    const char *env = getenv("BYOCL_OPENCL_BUILD_WORKER");
    const char *candidates[] = {env,
#ifdef BYOCL_OPENCL_WORKER_BUILT
                                env ? NULL : BYOCL_OPENCL_WORKER_BUILT,
#endif
#ifdef BYOCL_OPENCL_WORKER_INSTALLED
                                env ? NULL : BYOCL_OPENCL_WORKER_INSTALLED,
#endif
                                NULL};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        if (candidates[i] && *candidates[i] && access(candidates[i], X_OK) == 0) {
            snprintf(buf, len, "%s", candidates[i]);
            return buf;
        }
        if (i == 0 && env) /* set: that one or none */
            return NULL;
    }
    return NULL;
}

/* ------------------------------------------------------------------ parts */

/* Assigns each kernel to one of n parts (part_of_kernel all -1 before), the costliest
 * first, each to the part with the least cost so far. */
static void assign_parts(const byocl_cl_plan *plan, int n, int *part_of_kernel)
{
    double load[MAX_JOBS] = {0};
    for (int placed = 0; placed < plan->n_kernels; placed++) {
        int next = -1;
        for (int k = 0; k < plan->n_kernels; k++)
            if (part_of_kernel[k] < 0 &&
                (next < 0 || plan->kernels[k].build_cost > plan->kernels[next].build_cost))
                next = k;
        int least = 0;
        for (int p = 1; p < n; p++)
            if (load[p] < load[least])
                least = p;
        part_of_kernel[next] = least;
        load[least] += plan->kernels[next].build_cost;
    }
}

/* The number of parts: one per build job, each worth a process, at most one per kernel. */
static int part_count(const byocl_cl_plan *plan, int jobs)
{
    double cost = 0;
    for (int k = 0; k < plan->n_kernels; k++)
        cost += plan->kernels[k].build_cost;
    int n = (int)(cost / MIN_PART_COST);
    if (n > jobs)
        n = jobs;
    if (n > plan->n_kernels)
        n = plan->n_kernels;
    return n > MAX_JOBS ? MAX_JOBS : n < 1 ? 1 : n;
}

/* Part p's program text: the prelude and its kernels in source order (malloc'ed). */
static char *part_source(const byocl_cl_plan *plan, const int *part_of_kernel, int p)
{
    byocl_textbuf t = {0};
    base_textbuf_printf(&t, "%.*s", (int)plan->prelude_length, plan->source);
    for (int k = 0; k < plan->n_kernels; k++)
        if (part_of_kernel[k] == p)
            base_textbuf_printf(&t, "%.*s", (int)plan->kernels[k].length,
                                plan->source + plan->kernels[k].offset);
    return base_textbuf_take(&t);
}

/* Starts a worker on `source`, written to a file in `dir`; returns its pid, or -1 (the
 * part is then compiled here). *source_file is the file to remove afterwards. */
static pid_t start_worker(const char *worker, const ocl_device *dev, const char *dir,
                          const char *region, const char *source, const char *options,
                          int part, char **source_file)
{
    /* Other processes and this one's other builds may use the folder at the same time. */
    static int builds;
    char name[96];
    snprintf(name, sizeof name, "part-%ld-%d-%d.cl", (long)getpid(),
             __atomic_fetch_add(&builds, 1, __ATOMIC_RELAXED), part);
    *source_file = base_path_join(dir, name);
    if (!*source_file)
        return -1;
    byocl_file_part text = {source, strlen(source)};
    if (base_file_write_atomic(*source_file, &text, 1, NULL) != BYOCL_OK) {
        free(*source_file);
        *source_file = NULL;
        return -1;
    }
    char device[16];
    snprintf(device, sizeof device, "%d", dev->info.index);
    char *argv[] = {(char *)worker,       "--protocol", OCL_WORKER_PROTOCOL, "--device",
                    device,               "--cache-dir", (char *)dir,        "--options",
                    (char *)options,      "--region",    (char *)region,     *source_file,
                    NULL};
    /* Its messages would repeat this process's: a part it fails is compiled again here,
     * which reports the error. */
    posix_spawn_file_actions_t files;
    pid_t pid = -1;
    if (posix_spawn_file_actions_init(&files) != 0)
        return -1;
    if (posix_spawn_file_actions_addopen(&files, STDIN_FILENO, "/dev/null", O_RDONLY, 0) == 0 &&
        posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, "/dev/null", O_WRONLY, 0) == 0 &&
        posix_spawn_file_actions_addopen(&files, STDERR_FILENO, "/dev/null", O_WRONLY, 0) == 0 &&
        posix_spawn(&pid, worker, &files, NULL, argv, environ) != 0)
        pid = -1;
    posix_spawn_file_actions_destroy(&files);
    return pid;
}

/* Waits for a worker; `stop` ends it first (this build failed). */
static void finish_worker(pid_t pid, bool stop)
{
    if (pid <= 0)
        return;
    if (stop)
        kill(pid, SIGTERM);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
}

void ocl_program_parts_release(ocl_program_parts *parts)
{
    for (int p = 0; parts->programs && p < parts->n; p++)
        if (parts->programs[p])
            clReleaseProgram(parts->programs[p]);
    free(parts->programs);
    free(parts->part_of_kernel);
    memset(parts, 0, sizeof *parts);
}

cl_program ocl_program_parts_find(const ocl_program_parts *parts, const byocl_cl_plan *plan,
                                  const char *name)
{
    if (parts->n == 1)
        return parts->programs[0];
    for (int k = 0; k < plan->n_kernels; k++)
        if (strcmp(plan->kernels[k].name, name) == 0)
            return parts->programs[parts->part_of_kernel[k]];
    return NULL;
}

/* The parts' build: sources, workers for the parts not cached (all but the first), the
 * first compiled here, then every part fetched (loaded, or compiled here after all). */
static byocl_status build_parts(ocl_device *dev, const char *dir, const char *region,
                                const byocl_cl_plan *plan, const char *worker, double start_ms,
                                ocl_program_parts *out, byocl_error *err)
{
    int n = out->n;
    char **sources = calloc((size_t)n, sizeof *sources);
    char **files = calloc((size_t)n, sizeof *files);
    pid_t *pids = calloc((size_t)n, sizeof *pids);
    byocl_status st = BYOCL_OK;
    if (!sources || !files || !pids)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (int p = 0; st == BYOCL_OK && p < n; p++)
        if (!(sources[p] = part_source(plan, out->part_of_kernel, p)))
            st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    int started = 0;
    for (int p = 0; st == BYOCL_OK && p < n; p++) {
        bool cached = ocl_program_cached(dev, dir, sources[p], plan->build_options);
        /* The first part not cached is this process's own. */
        if (!cached && started++ > 0)
            pids[p] = start_worker(worker, dev, dir, region, sources[p], plan->build_options, p,
                                   &files[p]);
    }
    int compiled = 0, loaded = 0, by_workers = 0;
    for (int p = 0; st == BYOCL_OK && p < n; p++) {
        if (pids[p] > 0)
            continue;
        bool here = false;
        st = ocl_program_fetch(dev, dir, region, sources[p], plan->build_options,
                               &out->programs[p], &here, err);
        compiled += here;
        loaded += !here;
    }
    for (int p = 0; pids && p < n; p++) {
        finish_worker(pids[p], st != BYOCL_OK);
        if (st == BYOCL_OK && pids[p] > 0) {
            bool here = false;
            st = ocl_program_fetch(dev, dir, region, sources[p], plan->build_options,
                                   &out->programs[p], &here, err);
            compiled++;
            by_workers += !here;
        }
        if (files && files[p]) {
            unlink(files[p]);
            free(files[p]);
        }
    }
    for (int p = 0; sources && p < n; p++)
        free(sources[p]);
    free(sources);
    free(files);
    free(pids);
    if (st == BYOCL_OK)
        ocl_build_totals_add(compiled, loaded, by_workers, start_ms);
    return st;
}

byocl_status ocl_program_parts_build(ocl_device *dev, const char *dir, const char *region,
                                     const byocl_cl_plan *plan, ocl_program_parts *out,
                                     byocl_error *err)
{
    memset(out, 0, sizeof *out);
    double start_ms = base_now_ms();
    int jobs = 1;
    byocl_status st = ocl_build_jobs(&jobs, err);
    if (st != BYOCL_OK)
        return st;
    char worker_buf[4096];
    const char *worker = jobs > 1 ? ocl_build_worker_path(worker_buf, sizeof worker_buf) : NULL;
    int n = worker ? part_count(plan, jobs) : 1;
    out->programs = calloc((size_t)n, sizeof *out->programs);
    out->part_of_kernel = calloc((size_t)(plan->n_kernels ? plan->n_kernels : 1),
                                 sizeof *out->part_of_kernel);
    if (!out->programs || !out->part_of_kernel) {
        ocl_program_parts_release(out);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    }
    out->n = n;
    if (n == 1) {
        st = ocl_program_get(dev, dir, region, plan->source, plan->build_options,
                             &out->programs[0], err);
        if (st != BYOCL_OK)
            ocl_program_parts_release(out);
        return st;
    }
    for (int k = 0; k < plan->n_kernels; k++)
        out->part_of_kernel[k] = -1;
    assign_parts(plan, n, out->part_of_kernel);
    /* Workers hand their programs over through a cache folder: without one, a folder of
     * this build's own. */
    char *own_dir = NULL;
    if (!dir) {
        const char *tmp = getenv("TMPDIR");
        char tmpl[4096];
        snprintf(tmpl, sizeof tmpl, "%s/byocl-build-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (mkdtemp(tmpl))
            dir = own_dir = strdup(tmpl);
    }
    if (dir)
        st = build_parts(dev, dir, region, plan, worker, start_ms, out, err);
    /* Nowhere to hand programs over, or a part that does not build: the whole program,
     * here, whose build error (if it has one) names the kernel and its line in the
     * program that `byocl partition --emit` writes. */
    if (!dir || (st != BYOCL_OK && st != BYOCL_ERR_NOMEM)) {
        for (int p = 0; p < n; p++)
            if (out->programs[p])
                clReleaseProgram(out->programs[p]);
        memset(out->programs, 0, (size_t)n * sizeof *out->programs);
        out->n = 1;
        st = ocl_program_get(dev, dir == own_dir ? NULL : dir, region, plan->source,
                             plan->build_options, &out->programs[0], err);
    }
    if (own_dir) {
        base_dir_remove_files(own_dir);
        free(own_dir);
    }
    if (st != BYOCL_OK)
        ocl_program_parts_release(out);
    return st;
}
