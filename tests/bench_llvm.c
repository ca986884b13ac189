/* bench_llvm MODEL [THREADS [RUNS]]: times a model's host kernels compiled by the LLVM
 * backend, run by a small spinning thread pool, without the graph executor (whose
 * `byocl run --profile` is the user-facing figure). Prints per-kernel median times and
 * GFLOP/s, the median of whole runs, and the relative L2 error against the reference
 * executor. Inputs are random (seed 1). Not a test: a tool for tuning the kernels. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "byocl/byocl.h"
#include "ir/ir_impl.h"
#include "llvm/llvm_backend.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------ thread pool */

typedef struct pool {
    int n_workers;
    pthread_t th[64];
    atomic_int gen, done, quit;
    atomic_long next;
    byocl_host_kernel k;
    void *const *args;
    atomic_int rc;
} pool;

static void run_tasks(pool *p)
{
    long t;
    while ((t = atomic_fetch_add(&p->next, 1)) < p->k.n_tasks)
        if (p->k.fn(p->args, t, p->k.ctx))
            atomic_store(&p->rc, 1);
}

static void *worker(void *arg)
{
    pool *p = arg;
    int seen = 0;
    for (;;) {
        int g;
        while ((g = atomic_load(&p->gen)) == seen && !atomic_load(&p->quit))
            __builtin_ia32_pause();
        if (atomic_load(&p->quit))
            return NULL;
        seen = g;
        run_tasks(p);
        atomic_fetch_add(&p->done, 1);
    }
}

static int pool_run(pool *p, byocl_host_kernel k, void *const *args)
{
    p->k = k;
    p->args = args;
    atomic_store(&p->rc, 0);
    atomic_store(&p->next, 0);
    atomic_store(&p->done, 0);
    if (k.n_tasks > 1 && p->n_workers > 0) {
        atomic_fetch_add(&p->gen, 1);
        run_tasks(p);
        while (atomic_load(&p->done) < p->n_workers)
            __builtin_ia32_pause();
    } else {
        run_tasks(p);
    }
    return atomic_load(&p->rc);
}

/* ------------------------------------------------------------ model */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void die(const char *what, const byocl_error *err)
{
    fprintf(stderr, "bench_llvm: %s: %s\n", what, err ? err->msg : "");
    exit(1);
}

int main(int argc, char **argv)
{
    const char *spec = argc > 1 ? argv[1] : "builtin:resnet18";
    int threads = argc > 2 ? atoi(argv[2]) : 2;
    int runs = argc > 3 ? atoi(argv[3]) : 20;
    byocl_error err = {0};
    byocl_module *m = NULL;
    if (byocl_load_model(spec, NULL, &m, &err) != BYOCL_OK)
        die("load", &err);
    byocl_function *fn = byocl_module_find(m, "main");
    int nn = fn->n_nodes;

    int *compute = malloc((size_t)nn * sizeof *compute), n_compute = 0;
    for (int id = 0; id < nn; id++)
        if (fn->nodes[id].kind == BYOCL_NODE_CALL && fn->nodes[id].op)
            compute[n_compute++] = id;
    const byocl_host_backend_i *be = &byocl_host_backend_llvm;
    byocl_host_group *groups = NULL;
    int n_groups = 0;
    double t0 = now();
    if (be->group(fn, compute, n_compute, &groups, &n_groups, &err) != BYOCL_OK)
        die("plan", &err);
    byocl_host_kernel *kernels = calloc((size_t)n_groups, sizeof *kernels);
    void *state = NULL;
    byocl_host_backend_options opt = {.threads = threads, .opt_level = 2};
    if (be->compile(fn, groups, n_groups, &opt, kernels, &state, &err) != BYOCL_OK)
        die("compile", &err);
    double t_compile = now() - t0;
    char info[128];
    printf("%s: %d host kernels, compiled in %.0f ms (%s)\n", spec, n_groups, t_compile * 1e3,
           byocl_llvm_host_info(info, sizeof info));

    /* Every value gets its own tensor. */
    int *base = malloc((size_t)nn * sizeof *base), n_vals = 0;
    for (int id = 0; id < nn; id++) {
        base[id] = n_vals;
        int c = byocl_type_num_tensors(fn->nodes[id].type);
        n_vals += c > 0 ? c : 1;
    }
    byocl_tensor **vals = calloc((size_t)n_vals, sizeof *vals);
    byocl_tensor **inputs = calloc((size_t)fn->n_params + 1, sizeof *inputs);
    for (int k = 0; k < fn->n_params; k++) {
        const byocl_type *t = fn->nodes[fn->params[k]].type;
        inputs[k] = byocl_tensor_new(t->dtype, &t->shape, &err);
        byocl_tensor_fill_random(inputs[k], 1 + (uint64_t)k, -1.0, 1.0);
        vals[base[fn->params[k]]] = byocl_tensor_ref(inputs[k]);
    }
    for (int id = 0; id < nn; id++)
        if (fn->nodes[id].kind == BYOCL_NODE_CONSTANT)
            vals[base[id]] = byocl_tensor_ref(fn->nodes[id].value);
    void ***args = calloc((size_t)n_groups, sizeof *args);
    for (int g = 0; g < n_groups; g++) {
        const byocl_host_group *grp = &groups[g];
        args[g] = calloc((size_t)(grp->n_inputs + grp->n_outputs + 1), sizeof **args);
        for (int i = 0; i < grp->n_outputs; i++) {
            const byocl_type *t = host_value_ref_type(fn, grp->outputs[i]);
            byocl_tensor *o = byocl_tensor_new(t->dtype, &t->shape, &err);
            vals[base[grp->outputs[i].node] + (grp->outputs[i].field < 0 ? 0 : grp->outputs[i].field)] = o;
            args[g][grp->n_inputs + i] = byocl_tensor_data(o);
        }
    }
    for (int g = 0; g < n_groups; g++)
        for (int i = 0; i < groups[g].n_inputs; i++) {
            byocl_value_ref v = groups[g].inputs[i];
            args[g][i] = byocl_tensor_data(vals[base[v.node] + (v.field < 0 ? 0 : v.field)]);
        }

    pool p = {.n_workers = threads - 1};
    for (int i = 0; i < p.n_workers; i++)
        pthread_create(&p.th[i], NULL, worker, &p);
    double *times = calloc((size_t)(runs * (n_groups + 1)), sizeof *times);
    for (int r = -2; r < runs; r++) { /* two warm-up runs */
        double start = now();
        for (int g = 0; g < n_groups; g++) {
            double ts = now();
            if (pool_run(&p, kernels[g], args[g]))
                die(groups[g].name, NULL);
            if (r >= 0)
                times[(size_t)g * runs + r] = now() - ts;
        }
        if (r >= 0)
            times[(size_t)n_groups * runs + r] = now() - start;
    }
    atomic_store(&p.quit, 1);
    for (int i = 0; i < p.n_workers; i++)
        pthread_join(p.th[i], NULL);

    double flops_total = 0;
    printf("%-48s %6s %9s %9s %9s %9s\n", "kernel", "tasks", "median", "GFLOP/s", "min",
           "GFLOP/s");
    double sum_min = 0;
    for (int g = 0; g < n_groups; g++) {
        qsort(times + (size_t)g * runs, (size_t)runs, sizeof *times, cmp_double);
        double med = times[(size_t)g * runs + runs / 2], lo = times[(size_t)g * runs];
        flops_total += groups[g].flops;
        sum_min += lo;
        printf("%-48s %6lld %9.3f %9.1f %9.3f %9.1f\n", groups[g].name,
               (long long)kernels[g].n_tasks, med * 1e3, groups[g].flops / med * 1e-9, lo * 1e3,
               groups[g].flops / lo * 1e-9);
    }
    double *tot = times + (size_t)n_groups * runs;
    qsort(tot, (size_t)runs, sizeof *tot, cmp_double);
    printf("total: median %.2f ms, min %.2f ms over %d runs (sum of kernel minima %.2f ms), "
           "%d threads, %.2f GFLOP -> %.0f GFLOP/s at the median\n",
           tot[runs / 2] * 1e3, tot[0] * 1e3, runs, sum_min * 1e3, threads, flops_total * 1e-9,
           flops_total / tot[runs / 2] * 1e-9);

    /* Against the reference executor. */
    byocl_tensor **want = NULL;
    int n_want = 0;
    if (byocl_reference_run(m, "main", inputs, fn->n_params, &want, &n_want, &err) != BYOCL_OK)
        die("reference", &err);
    const byocl_node *body = &fn->nodes[fn->body];
    if (n_want == 1 && body->kind == BYOCL_NODE_CALL) {
        byocl_compare_result r;
        if (byocl_tensor_compare(vals[base[fn->body]], want[0], NULL, &r, &err) != BYOCL_OK)
            die("compare", &err);
        printf("relative L2 error vs the reference executor: %.3g\n",
               sqrt(r.sum_sq_error / r.sum_sq_expected));
    }
    byocl_tensors_free(want, n_want);
    for (int i = 0; i < n_vals; i++)
        byocl_tensor_unref(vals[i]);
    for (int k = 0; k < fn->n_params; k++)
        byocl_tensor_unref(inputs[k]);
    for (int g = 0; g < n_groups; g++)
        free(args[g]);
    free(args);
    free(inputs);
    free(vals);
    free(base);
    free(times);
    be->release(state);
    free(kernels);
    host_groups_free(groups, n_groups);
    free(compute);
    byocl_module_free(m);
    return 0;
}
