/* Kernel instances: a template from kernels_cl/ preceded by the #defines that specialize
 * it (shapes, strides, tiles, the epilogue, its buffer parameters) and followed by their
 * #undefs, so that every instance in one program starts from a clean slate. Each
 * instance is launched once; its launch records the buffers in parameter order. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sha256.h"
#include "cl_impl.h"
#include "cl_templates.h"

#define KERNEL_MAX_ARGS ((int)(sizeof ((clg_kernel *)0)->args / sizeof ((clg_kernel *)0)->args[0]))

static void record_macro(clg_kernel *k, const char *name)
{
    if (k->n_macros == k->cap_macros) {
        int cap = k->cap_macros ? 2 * k->cap_macros : 32;
        char **m = realloc(k->macros, (size_t)cap * sizeof *m);
        if (!m) {
            k->defines.oom = true;
            return;
        }
        k->macros = m;
        k->cap_macros = cap;
    }
    char *copy = strdup(name);
    if (!copy) {
        k->defines.oom = true;
        return;
    }
    k->macros[k->n_macros++] = copy;
}

void clg_kernel_begin(clg_kernel *k, clg_gen *gen, const char *what)
{
    memset(k, 0, sizeof *k);
    k->gen = gen;
    snprintf(k->name, sizeof k->name, "k%d_%s", gen->n_launches, what);
}

void clg_kernel_define(clg_kernel *k, const char *name, const char *fmt, ...)
{
    base_textbuf_printf(&k->defines, "#define %s ", name);
    va_list ap;
    va_start(ap, fmt);
    base_textbuf_vprintf(&k->defines, fmt, ap);
    va_end(ap);
    base_textbuf_putc(&k->defines, '\n');
    /* The macro's name is what precedes a '(' (function-like macros). */
    char bare[64];
    snprintf(bare, sizeof bare, "%s", name);
    bare[strcspn(bare, "(")] = '\0';
    record_macro(k, bare);
}

bool clg_kernel_has_macro(const clg_kernel *k, const char *name)
{
    for (int i = 0; i < k->n_macros; i++)
        if (strcmp(k->macros[i], name) == 0)
            return true;
    return false;
}

/* How a kernel uses a buffer parameter: which macros it gets. */
typedef enum buffer_access {
    BUFFER_READ,      /* const; LD_<name>(i) */
    BUFFER_WRITE_Y,   /* ST_Y(i, v) */
    BUFFER_READ_WRITE /* LD_<name>(i) and ST_<name>(i, v) */
} buffer_access;

static void add_buffer(clg_kernel *k, const char *name, int buf, byocl_dtype dtype,
                       buffer_access access)
{
    if (k->n_args >= KERNEL_MAX_ARGS) {
        k->defines.oom = true;
        return;
    }
    /* Integer buffers (take's index tensors, resize's offset table, argmax's result) are
     * plain int or long arrays; bool ones uchar arrays of 0 and 1. */
    const char *elem = dtype == BYOCL_FLOAT16 ? "ushort"
                       : dtype == BYOCL_INT32 ? "int"
                       : dtype == BYOCL_INT64 ? "long"
                       : dtype == BYOCL_BOOL  ? "uchar"
                                              : "float";
    const char *suffix = dtype == BYOCL_FLOAT16                           ? "F16"
                         : dtype == BYOCL_INT32 || dtype == BYOCL_INT64 ? "INT"
                         : dtype == BYOCL_BOOL                          ? "BOOL"
                                                                         : "F32";
    base_textbuf_printf(&k->params, "%s__global %s%s *restrict %s", k->n_args ? ", " : "",
                        access == BUFFER_READ ? "const " : "", elem, name);
    char macro[32], value[64];
    if (access != BUFFER_WRITE_Y) {
        snprintf(macro, sizeof macro, "LD_%s(i)", name);
        clg_kernel_define(k, macro, "BYOCL_LD_%s(%s, i)", suffix, name);
    }
    if (access != BUFFER_READ) {
        snprintf(macro, sizeof macro, "ST_%s(i, v)", access == BUFFER_WRITE_Y ? "Y" : name);
        snprintf(value, sizeof value, "BYOCL_ST_%s(%s, i, v)", suffix, name);
        clg_kernel_define(k, macro, "%s", value);
    }
    k->args[k->n_args++] = (byocl_cl_arg){.kind = BYOCL_CL_ARG_BUFFER,
                                          .buffer = {.kind = BYOCL_CL_BUF_SCRATCH, .index = buf}};
    if (k->n_params_by_buf < KERNEL_MAX_ARGS) {
        k->param_buf[k->n_params_by_buf] = buf;
        snprintf(k->param_name[k->n_params_by_buf], sizeof k->param_name[0], "%s", name);
        k->n_params_by_buf++;
    }
}

void clg_kernel_buffer(clg_kernel *k, const char *name, int buf, byocl_dtype dtype, bool output)
{
    add_buffer(k, name, buf, dtype, output ? BUFFER_WRITE_Y : BUFFER_READ);
}

void clg_kernel_buffer_rw(clg_kernel *k, const char *name, int buf, byocl_dtype dtype)
{
    add_buffer(k, name, buf, dtype, BUFFER_READ_WRITE);
}

void clg_kernel_int(clg_kernel *k, const char *name, int64_t value)
{
    if (k->n_args >= KERNEL_MAX_ARGS) {
        k->defines.oom = true;
        return;
    }
    base_textbuf_printf(&k->params, "%sconst int %s", k->n_args ? ", " : "", name);
    k->args[k->n_args++] = (byocl_cl_arg){.kind = BYOCL_CL_ARG_INT, .i = (int32_t)value};
}

const char *clg_kernel_operand(clg_kernel *k, int buf, byocl_dtype dtype)
{
    for (int i = 0; i < k->n_params_by_buf; i++)
        if (k->param_buf[i] == buf)
            return k->param_name[i];
    if (k->n_args >= KERNEL_MAX_ARGS)
        return NULL;
    char name[8];
    snprintf(name, sizeof name, "e%d", k->n_operands++);
    clg_kernel_buffer(k, name, buf, dtype, false);
    return k->param_name[k->n_params_by_buf - 1];
}

static size_t compute_units(const clg_gen *gen)
{
    return gen->opt.compute_units > 0 ? (size_t)gen->opt.compute_units : 2;
}

static size_t max_group(const clg_gen *gen)
{
    return gen->opt.max_work_group_size > 0 ? gen->opt.max_work_group_size : 256;
}

/* The largest work-group extent along dimension d. */
static size_t max_extent(const clg_gen *gen, int d)
{
    size_t given = gen->opt.max_work_item_sizes[d], group = max_group(gen);
    if (given == 0)
        given = d == 2 && group > 64 ? 64 : group;
    return given < group ? given : group;
}

/* Work-groups per launch to aim for: several per compute unit, so that the driver can
 * balance them. */
static size_t wanted_groups(const clg_gen *gen)
{
    return 8 * compute_units(gen);
}

/* One-dimensional kernels check their index against the element count, so their global
 * size is rounded up to a whole number of work-groups. */
static void local_1d(const clg_gen *gen, size_t *global, size_t *local)
{
    size_t n = global[0], want = wanted_groups(gen);
    size_t size = (n + want - 1) / want;
    size = (size + 7) / 8 * 8; /* whole vectors of work-items */
    if (size > max_extent(gen, 0))
        size = max_extent(gen, 0);
    if (size == 0)
        size = 1;
    local[0] = size;
    global[0] = (n + size - 1) / size * size;
}

/* Divisors of n that are at most cap, ascending; their count. */
static int divisors(size_t n, size_t cap, size_t *out, int max)
{
    int count = 0;
    for (size_t d = 1; d <= n && d <= cap && count < max; d++)
        if (n % d == 0)
            out[count++] = d;
    return count;
}

/* Multi-dimensional kernels cover their grid exactly: the local size divides it. Among
 * the divisors that fit a work-group, take the fewest work-groups that are still at least
 * wanted_groups (and a multiple of the compute units, when possible); ties go to the
 * largest extent along dimension 0, whose work-items share the most data. */
static void local_nd(const clg_gen *gen, int work_dim, const size_t *global, size_t *local)
{
    enum { MAX_DIVISORS = 256 };
    size_t div[3][MAX_DIVISORS];
    int nd[3] = {1, 1, 1};
    size_t cap = max_group(gen), cu = compute_units(gen), want = wanted_groups(gen);
    for (int d = 0; d < 3; d++) {
        if (d < work_dim)
            nd[d] = divisors(global[d], max_extent(gen, d), div[d], MAX_DIVISORS);
        else
            div[d][0] = 1;
    }
    size_t best[3] = {1, 1, 1};
    long long best_key = -1;
    for (int a = 0; a < nd[0]; a++) {
        for (int b = 0; b < nd[1]; b++) {
            for (int c = 0; c < nd[2]; c++) {
                size_t l[3] = {div[0][a], div[1][b], div[2][c]};
                if (l[0] * l[1] * l[2] > cap)
                    continue;
                size_t groups = 1;
                for (int d = 0; d < work_dim; d++)
                    groups *= global[d] / l[d];
                /* Larger keys are better: enough groups, balanced, few, wide. */
                long long key = (long long)(groups >= want) << 60;
                key |= (long long)(groups % cu == 0) << 59;
                key |= (long long)(groups >= want ? (1u << 24) - (groups & 0xffffff)
                                                  : (groups & 0xffffff)) << 24;
                key |= (long long)(l[0] & 0xffffff);
                if (key > best_key) {
                    best_key = key;
                    memcpy(best, l, sizeof best);
                }
            }
        }
    }
    for (int d = 0; d < work_dim; d++)
        local[d] = best[d];
}

/* The largest divisor of n that is at most cap (at least 1). */
static size_t divisor_at_most(size_t n, size_t cap)
{
    for (size_t d = cap < n ? cap : n; d > 1; d--)
        if (n % d == 0)
            return d;
    return 1;
}

/* Work-groups that take all of dimension 1 (at the size local_nd chose), for kernels whose
 * work-items along it read the same inputs:
 *  - pooling's row tiles (pool2d_rows.cl) where a row has too many tiles for one
 *    work-item to walk: neighbouring tiles of a row read overlapping columns of the same
 *    input rows. resnet18's 3x3/2 pooling of 112x112x64, a tile a work-item, went from
 *    0.60-0.66 to 0.33-0.37 ms (PoCL, Zen 3); it has since been walked a row a work-item.
 *  - conv2d.cl's and conv2d_channels.cl's output-channel blocks: every block reads the
 *    same input positions. One block per work-group streamed the whole input once per
 *    block, from L3 where it does not fit L2: squeezenet1_1's 128 -> 16 1x1 conv on 54x54
 *    took 0.33 ms against the host's 0.11. With the blocks together its convs took 6.9 ms
 *    a run against 7.4, and offloaded medians went down 8% (mobilenet_v2), 9%
 *    (densenet121), 3% (googlenet, inception_v3), 0 (resnet18); 2-core Zen 2, three
 *    alternating runs each. */
static void local_whole_dim1(const clg_gen *gen, const size_t *global, size_t *local)
{
    size_t size = local[0] * local[1] * local[2];
    if (global[1] > size || global[1] > max_extent(gen, 1))
        return;
    size_t l0 = divisor_at_most(global[0], local[0] < size / global[1] ? local[0]
                                                                         : size / global[1]);
    size_t l2 = divisor_at_most(global[2], size / (l0 * global[1]));
    if (l2 > max_extent(gen, 2))
        l2 = divisor_at_most(global[2], max_extent(gen, 2));
    local[0] = l0, local[1] = global[1], local[2] = l2;
}

/* Whether the program already holds an instance of the template; records it if not. */
static bool template_seen(clg_gen *gen, const char *name)
{
    for (int i = 0; i < gen->n_templates_used; i++)
        if (strcmp(gen->templates_used[i], name) == 0)
            return true;
    if (gen->n_templates_used < (int)(sizeof gen->templates_used / sizeof gen->templates_used[0]))
        gen->templates_used[gen->n_templates_used++] = name;
    return false;
}

static void free_macros(clg_kernel *k)
{
    for (int i = 0; i < k->n_macros; i++)
        free(k->macros[i]);
    free(k->macros);
    k->macros = NULL;
    k->n_macros = k->cap_macros = 0;
}

/* Hashes `text` without its C comments: the generator's comments name the nodes an
 * instance computes, which differ between otherwise equal instances. */
static void hash_without_comments(byocl_sha256 *h, const char *text)
{
    for (const char *p = text; *p;) {
        const char *open = strstr(p, "/*");
        const char *close = open ? strstr(open + 2, "*/") : NULL;
        if (!close) {
            base_sha256_update(h, p, strlen(p));
            break;
        }
        base_sha256_update(h, p, (size_t)(open - p));
        p = close + 2;
    }
    base_sha256_update(h, "", 1);
}

/* The digest of what makes an instance what it is. */
static void kernel_digest(const char *template_name, const char *params, const char *defines,
                          const byocl_cl_launch *launch, unsigned char digest[32])
{
    byocl_sha256 h;
    base_sha256_init(&h);
    base_sha256_update(&h, template_name, strlen(template_name) + 1);
    hash_without_comments(&h, params);
    hash_without_comments(&h, defines);
    base_sha256_update(&h, &launch->work_dim, sizeof launch->work_dim);
    base_sha256_update(&h, launch->local, sizeof launch->local);
    base_sha256_final(&h, digest);
}

/* The kernel already in the program whose digest this is, or NULL. */
static const char *find_equal_kernel(const clg_gen *gen, const unsigned char digest[32])
{
    for (int i = 0; i < gen->n_kernel_texts; i++)
        if (memcmp(gen->kernel_texts[i].digest, digest, 32) == 0)
            return gen->kernel_texts[i].span.name;
    return NULL;
}

/* A new entry in the table of the program's kernels, or NULL (out of memory). */
static clg_kernel_text *add_kernel_text(clg_gen *gen)
{
    if (gen->n_kernel_texts == gen->cap_kernel_texts) {
        int cap = gen->cap_kernel_texts ? 2 * gen->cap_kernel_texts : 16;
        clg_kernel_text *t = realloc(gen->kernel_texts, (size_t)cap * sizeof *t);
        if (!t)
            return NULL;
        gen->kernel_texts = t;
        gen->cap_kernel_texts = cap;
    }
    clg_kernel_text *text = &gen->kernel_texts[gen->n_kernel_texts++];
    memset(text, 0, sizeof *text);
    return text;
}

/* A kernel's compile time relative to a simple kernel's, for splitting a program into
 * parts of equal work. PoCL 3.1 on a Zen 3 (POCL_DEBUG=llvm,timing, December 2026; the
 * resnet18, mobilenet_v2 and efficientnet_b7 regions): elementwise, pooling and dense
 * kernels 0.05-0.12 s; conv2d 0.12-0.45 s and conv2d_input 0.14-0.32 s; the row-tile
 * kernels, whose taps read through per-tile edge shuffles (conv2d_depthwise, pool2d_rows),
 * 0.4-0.95 s; the depthwise planes, up to 128 taps listed, count as those; the pool planes,
 * a loop over their vectors without lists, as conv2d (not measured on their own). */
static double build_cost(const char *template_name)
{
    static const struct {
        const char *name;
        double cost;
    } costs[] = {{"conv2d", 3}, {"conv2d_channels", 3}, {"conv2d_input", 3},
                 {"conv2d_depthwise", 8}, {"conv2d_depthwise_plane", 8},
                 {"pool2d_rows", 8}, {"pool2d_plane", 3}};
    for (size_t i = 0; i < sizeof costs / sizeof costs[0]; i++)
        if (strcmp(template_name, costs[i].name) == 0)
            return costs[i].cost;
    return 1.0;
}

void clg_kernel_abandon(clg_kernel *k)
{
    free_macros(k);
    base_textbuf_free(&k->params);
    base_textbuf_free(&k->defines);
}

int clg_kernel_end(clg_kernel *k, const char *template_name, const char *label, int work_dim,
                  const size_t *global, double flops)
{
    clg_gen *gen = k->gen;
    const char *tmpl = clg_template_text(template_name);
    char *params = base_textbuf_take(&k->params);
    char *defines = base_textbuf_take(&k->defines);
    int index = -1;
    if (!tmpl) {
        byocl_error_set(gen->err, BYOCL_ERR_INVALID, "kernel template %s.cl is not embedded",
                        template_name);
        goto done;
    }
    if (!params || !defines || k->n_args >= KERNEL_MAX_ARGS) {
        byocl_error_set(gen->err, BYOCL_ERR_NOMEM, "out of memory writing kernel %s", k->name);
        goto done;
    }
    if (gen->n_launches == gen->cap_launches) {
        int cap = gen->cap_launches ? 2 * gen->cap_launches : 16;
        byocl_cl_launch *l = realloc(gen->launches, (size_t)cap * sizeof *l);
        if (!l) {
            byocl_error_set(gen->err, BYOCL_ERR_NOMEM, "out of memory writing kernel %s",
                            k->name);
            goto done;
        }
        gen->launches = l;
        gen->cap_launches = cap;
    }
    byocl_cl_launch *launch = &gen->launches[gen->n_launches];
    memset(launch, 0, sizeof *launch);
    launch->args = malloc((size_t)k->n_args * sizeof *launch->args);
    if (!launch->args) {
        byocl_error_set(gen->err, BYOCL_ERR_NOMEM, "out of memory writing kernel %s", k->name);
        goto done;
    }
    memcpy(launch->args, k->args, (size_t)k->n_args * sizeof *launch->args);
    launch->n_args = k->n_args;
    snprintf(launch->kernel, sizeof launch->kernel, "%s", k->name);
    snprintf(launch->label, sizeof launch->label, "%s", label);
    launch->work_dim = work_dim;
    for (int d = 0; d < work_dim; d++)
        launch->global[d] = global[d];
    /* Explicit work-group sizes: given none, PoCL puts a grid of up to 4096 work-items
     * into one work-group, which runs on one core. */
    if (work_dim == 1)
        local_1d(gen, launch->global, launch->local);
    else
        local_nd(gen, work_dim, launch->global, launch->local);
    if (work_dim == 3 &&
        (strcmp(template_name, "pool2d_rows") == 0 || strcmp(template_name, "conv2d") == 0 ||
         strcmp(template_name, "conv2d_channels") == 0))
        local_whole_dim1(gen, launch->global, launch->local);
    launch->flops = flops;
    index = gen->n_launches++;
    unsigned char digest[32];
    kernel_digest(template_name, params, defines, launch, digest);
    const char *equal = find_equal_kernel(gen, digest);
    if (equal) {
        snprintf(launch->kernel, sizeof launch->kernel, "%s", equal);
        goto done;
    }
    clg_kernel_text *text = add_kernel_text(gen);
    if (!text) {
        index = -1;
        gen->n_launches--;
        free(launch->args);
        byocl_error_set(gen->err, BYOCL_ERR_NOMEM, "out of memory writing kernel %s", k->name);
        goto done;
    }
    memcpy(text->digest, digest, sizeof digest);
    snprintf(text->span.name, sizeof text->span.name, "%s", k->name);
    text->span.offset = gen->src.len;
    text->span.build_cost = build_cost(template_name);

    byocl_textbuf *src = &gen->src;
    base_textbuf_printf(src, "\n/* ---- %s: %s ---- */\n", k->name, label);
    if (launch->local[0])
        base_textbuf_printf(src,
                            "__kernel __attribute__((reqd_work_group_size(%zu, %zu, %zu))) "
                            "void %s(%s);\n",
                            launch->local[0], work_dim > 1 ? launch->local[1] : 1,
                            work_dim > 2 ? launch->local[2] : 1, k->name, params);
    base_textbuf_printf(src, "#define KNAME %s\n#define KPARAMS %s\n%s", k->name, params,
                        defines);
    /* A template's leading comment explains it once per program. */
    const char *body = tmpl;
    if (strncmp(tmpl, "/*", 2) == 0 && strstr(tmpl, "*/\n")) {
        const char *end = strstr(tmpl, "*/\n") + 3;
        if (template_seen(gen, template_name))
            body = end;
    }
    if (body != tmpl)
        base_textbuf_printf(src, "/* %s.cl, explained above */\n", template_name);
    base_textbuf_puts(src, body);
    base_textbuf_puts(src, "#undef KNAME\n#undef KPARAMS\n");
    for (int i = 0; i < k->n_macros; i++)
        base_textbuf_printf(src, "#undef %s\n", k->macros[i]);
    text->span.length = src->len - text->span.offset;
done:
    free(params);
    free(defines);
    clg_kernel_abandon(k);
    return index;
}
