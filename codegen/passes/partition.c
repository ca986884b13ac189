/* Pass: partition (TVM's PartitionGraph). Each region of @main (regions.c) becomes a
 * function that @main calls.
 *
 * The function of the n-th region (n counts regions over the whole module, in order of
 * first appearance in @main, skipping names already taken) is @<T>_main_<n> with the
 * attributes, in this order, Compiler="<T>", Primitive=1, Inline=1,
 * global_symbol="<T>_main_<n>". Its parameters are the distinct values the region's
 * compiler_begins take, in node order, named <T>_<n>_i<k> (compiler_ends of one value, as
 * TVM puts one per use, are one value: its producer's); constants used in the region are
 * copied into it, or (constants_as_args) passed as parameters too. Its body is the value
 * its compiler_end closes, or a tuple of the distinct closed values in order of their
 * first compiler_end; @main then takes `%call.k` for each.
 *
 * First, as TVM's PartitionGraph does, annotations of compiler "default" go and those of
 * tuples become one per field (flatten_annotations.h): a region takes and gives tensors.
 *
 * @main is rebuilt in its old order: host nodes where they were, each region's call where
 * its first computing node was, moved later only as far as its inputs require (a
 * depth-first walk over the region-contracted graph, which convexity keeps acyclic). A
 * region with no compiler_end computes nothing used and is dropped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/passes.h"
#include "flatten_annotations.h"
#include "rebuild.h"
#include "regions.h"

/* What partition made of one region. */
typedef struct region_fn {
    bool live;          /* has an output */
    char name[160];     /* "opencl_main_0" */
    int key;            /* node where @main calls it */
    int n_args, *args;  /* @main values passed, old ids */
    int n_outs, *outs;  /* closed values, old ids */
} region_fn;

typedef struct partitioner {
    byocl_module *mod;
    const byocl_function *fn; /* the old @main */
    const byocl_regions *r;
    int *source; /* per old id: the value it stands for (the first compiler_end of a value) */
    bool constants_as_args;
    region_fn *regions;
    byocl_error *err;
} partitioner;

static byocl_status nomem(byocl_error *err)
{
    return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory partitioning @main");
}

/* ------------------------------------------------------- region functions */

/* "<target>_main_<n>": the function's name and global symbol. */
static void region_name(char *buf, size_t len, const char *target, int n)
{
    snprintf(buf, len, "%s_main_%d", target, n);
}

/* Building one region's function: old ids -> ids in `out`. */
typedef struct region_build {
    partitioner *p;
    region_fn *rf;
    byocl_function *out;
    int *map;       /* old id -> id in `out` */
    int *param_of;  /* old id of a value passed in -> param id in `out` */
    const char *target;
    int number;
} region_build;

/* The id in `out` standing for old value `src`, which flows into the region: one
 * parameter per distinct value (constants bound unless passed as arguments). */
static int bring_in(region_build *b, int src)
{
    const byocl_function *fn = b->p->fn;
    if (b->param_of[src] >= 0)
        return b->param_of[src];
    int id;
    if (fn->nodes[src].kind == BYOCL_NODE_CONSTANT && !b->p->constants_as_args) {
        id = ir_fn_append(b->out, &fn->nodes[src], b->p->err);
    } else {
        char name[192];
        snprintf(name, sizeof name, "%s_%d_i%d", b->target, b->number, b->rf->n_args);
        id = byocl_function_add_param(b->out, name, fn->nodes[src].type, b->p->err);
        if (id >= 0)
            b->rf->args[b->rf->n_args++] = src;
    }
    if (id >= 0)
        b->param_of[src] = id;
    return id;
}

static byocl_status copy_member(region_build *b, int id)
{
    const byocl_function *fn = b->p->fn;
    const byocl_node *n = &fn->nodes[id];
    if (pass_is_compiler_begin(fn, id)) {
        b->map[id] = bring_in(b, b->p->source[n->args[0]]);
        return b->map[id] >= 0 ? BYOCL_OK : b->p->err->status;
    }
    if (pass_is_compiler_end(fn, id)) {
        int value = n->args[0];
        for (int k = 0; k < b->rf->n_outs; k++)
            if (b->rf->outs[k] == value)
                return BYOCL_OK;
        b->rf->outs[b->rf->n_outs++] = value;
        return BYOCL_OK;
    }
    int small[8], *args = n->n_args <= 8 ? small : malloc(sizeof(int) * (size_t)n->n_args);
    if (!args)
        return nomem(b->p->err);
    byocl_status st = BYOCL_OK;
    for (int k = 0; k < n->n_args && st == BYOCL_OK; k++) {
        int a = n->args[k];
        args[k] = fn->nodes[a].kind == BYOCL_NODE_CONSTANT ? bring_in(b, a) : b->map[a];
        if (args[k] < 0)
            st = b->p->err->status;
    }
    byocl_node proto = *n;
    proto.args = args;
    if (st == BYOCL_OK && (b->map[id] = ir_fn_append(b->out, &proto, b->p->err)) < 0)
        st = b->p->err->status;
    if (args != small)
        free(args);
    return st;
}

static byocl_status set_region_attrs(byocl_function *out, const char *target, const char *name,
                                     byocl_error *err)
{
    const byocl_attr attrs[4] = {
        {.key = "Compiler", .kind = BYOCL_ATTR_STR, .s = target},
        {.key = "Primitive", .kind = BYOCL_ATTR_INT, .i = 1},
        {.key = "Inline", .kind = BYOCL_ATTR_INT, .i = 1},
        {.key = "global_symbol", .kind = BYOCL_ATTR_STR, .s = name},
    };
    for (int i = 0; i < 4; i++) {
        byocl_status st = byocl_function_set_attr(out, &attrs[i], err);
        if (st != BYOCL_OK)
            return st;
    }
    return BYOCL_OK;
}

/* Builds @<target>_main_<number> for region R. */
static byocl_status build_region(partitioner *p, int R, int number, byocl_error *err)
{
    const byocl_function *fn = p->fn;
    region_fn *rf = &p->regions[R];
    const char *target = p->r->target[R];
    region_name(rf->name, sizeof rf->name, target, number);
    region_build b = {.p = p, .rf = rf, .target = target, .number = number};
    b.map = malloc(sizeof(int) * (size_t)(fn->n_nodes + 1));
    b.param_of = malloc(sizeof(int) * (size_t)(fn->n_nodes + 1));
    if (!b.map || !b.param_of) {
        free(b.map);
        free(b.param_of);
        return nomem(err);
    }
    for (int id = 0; id < fn->n_nodes; id++)
        b.map[id] = b.param_of[id] = -1;
    byocl_status st = BYOCL_OK;
    b.out = byocl_module_add_function(p->mod, rf->name, err);
    if (!b.out)
        st = err->status;
    rf->key = -1;
    for (int id = 0; id < fn->n_nodes && st == BYOCL_OK; id++) {
        if (p->r->region_of[id] != R)
            continue;
        if (rf->key < 0 && !pass_is_annotation(fn, id))
            rf->key = id;
        st = copy_member(&b, id);
    }
    if (rf->key < 0)
        rf->key = p->r->inputs[R][0]; /* a region that only passes values through */
    int body = -1;
    if (st == BYOCL_OK && rf->n_outs == 1) {
        body = b.map[rf->outs[0]];
    } else if (st == BYOCL_OK) {
        int *fields = malloc(sizeof(int) * (size_t)rf->n_outs);
        if (!fields)
            st = nomem(err);
        for (int k = 0; fields && k < rf->n_outs; k++)
            fields[k] = b.map[rf->outs[k]];
        if (fields && (body = byocl_function_add_tuple(b.out, fields, rf->n_outs, err)) < 0)
            st = err->status;
        free(fields);
    }
    if (st == BYOCL_OK)
        st = byocl_function_set_body(b.out, body, err);
    if (st == BYOCL_OK)
        st = set_region_attrs(b.out, target, rf->name, err);
    free(b.map);
    free(b.param_of);
    return st;
}

/* ---------------------------------------------------------------- @main */

/* Units of the contracted graph: host node `id` is unit id, region R is n_nodes + R. */
typedef struct main_build {
    partitioner *p;
    byocl_rebuild rb;
    int n;
} main_build;

static int unit_of_value(const main_build *mb, int v)
{
    const byocl_function *fn = mb->p->fn;
    return pass_is_compiler_end(fn, v) ? mb->n + mb->p->r->region_of[v] : v;
}

static int num_deps(const main_build *mb, int u)
{
    return u < mb->n ? mb->p->fn->nodes[u].n_args : mb->p->regions[u - mb->n].n_args;
}

static int dep(const main_build *mb, int u, int i)
{
    return unit_of_value(mb, u < mb->n ? mb->p->fn->nodes[u].args[i]
                                       : mb->p->regions[u - mb->n].args[i]);
}

/* Appends the call of region R and its items; maps its compiler_ends to them. */
static byocl_status emit_region(main_build *mb, int R, byocl_error *err)
{
    partitioner *p = mb->p;
    const region_fn *rf = &p->regions[R];
    int *args = malloc(sizeof(int) * (size_t)(rf->n_args + 1));
    if (!args)
        return nomem(err);
    for (int k = 0; k < rf->n_args; k++)
        args[k] = mb->rb.map[rf->args[k]];
    int call = byocl_function_add_call_global(mb->rb.fresh, rf->name, args, rf->n_args, err);
    free(args);
    if (call < 0)
        return err->status;
    for (int k = 0; k < rf->n_outs; k++) {
        int item = call;
        if (rf->n_outs > 1 && (item = byocl_function_add_getitem(mb->rb.fresh, call, k, err)) < 0)
            return err->status;
        const int *ends = p->r->outputs[R];
        for (int e = 0; e < p->r->n_outputs[R]; e++)
            if (p->fn->nodes[ends[e]].args[0] == rf->outs[k])
                mb->rb.map[ends[e]] = item;
    }
    return BYOCL_OK;
}

static byocl_status emit_unit(main_build *mb, int u, byocl_error *err)
{
    if (u >= mb->n)
        return emit_region(mb, u - mb->n, err);
    return pass_rebuild_copy(&mb->rb, u, NULL, err) >= 0 ? BYOCL_OK : err->status;
}

enum { NOT_SEEN, ON_STACK, EMITTED };

/* Emits unit `root` after everything it depends on (iterative depth-first walk). */
static byocl_status emit_with_deps(main_build *mb, int root, char *state, int *stack,
                                   int *next, byocl_error *err)
{
    if (state[root] == EMITTED)
        return BYOCL_OK;
    int depth = 0;
    stack[depth] = root;
    next[depth] = 0;
    state[root] = ON_STACK;
    while (depth >= 0) {
        int u = stack[depth];
        if (next[depth] < num_deps(mb, u)) {
            int d = dep(mb, u, next[depth]++);
            if (state[d] == EMITTED)
                continue;
            if (state[d] == ON_STACK) /* excluded by the convexity check */
                return byocl_error_set(err, BYOCL_ERR_INVALID,
                                       "internal error: regions of @main form a cycle");
            state[d] = ON_STACK;
            depth++;
            stack[depth] = d;
            next[depth] = 0;
            continue;
        }
        byocl_status st = emit_unit(mb, u, err);
        if (st != BYOCL_OK)
            return st;
        state[u] = EMITTED;
        depth--;
    }
    return BYOCL_OK;
}

static byocl_status rebuild_main(partitioner *p, byocl_function *fn, byocl_error *err)
{
    main_build mb = {.p = p, .n = fn->n_nodes};
    byocl_status st = pass_rebuild_begin(&mb.rb, p->mod, fn, "partition", err);
    if (st != BYOCL_OK)
        return st;
    size_t units = (size_t)(mb.n + p->r->n_regions + 1);
    char *state = calloc(units, 1);
    int *stack = malloc(sizeof(int) * units), *next = malloc(sizeof(int) * units);
    if (!state || !stack || !next)
        st = nomem(err);
    /* Region R's unit sits at its key node; constants come when something needs them. */
    int *region_at = malloc(sizeof(int) * (size_t)(mb.n + 1));
    if (!region_at)
        st = nomem(err);
    for (int id = 0; st == BYOCL_OK && id < mb.n; id++)
        region_at[id] = -1;
    for (int R = 0; st == BYOCL_OK && R < p->r->n_regions; R++)
        if (p->regions[R].live)
            region_at[p->regions[R].key] = R;
    for (int id = 0; st == BYOCL_OK && id < mb.n; id++) {
        if (region_at[id] >= 0)
            st = emit_with_deps(&mb, mb.n + region_at[id], state, stack, next, err);
        else if (p->r->region_of[id] < 0 && fn->nodes[id].kind != BYOCL_NODE_CONSTANT)
            st = emit_with_deps(&mb, id, state, stack, next, err);
    }
    if (st == BYOCL_OK && mb.rb.map[fn->body] < 0) /* a constant result */
        st = emit_with_deps(&mb, unit_of_value(&mb, fn->body), state, stack, next, err);
    free(state);
    free(stack);
    free(next);
    free(region_at);
    if (st == BYOCL_OK)
        return pass_rebuild_finish(&mb.rb, mb.rb.map[fn->body], err);
    pass_rebuild_abort(&mb.rb);
    return st;
}

/* ------------------------------------------------------------------ pass */

static void remove_region_fns(partitioner *p)
{
    for (int R = 0; R < p->r->n_regions; R++)
        if (p->regions[R].name[0] && byocl_module_find(p->mod, p->regions[R].name))
            byocl_module_remove(p->mod, p->regions[R].name, NULL);
}

static byocl_status partition_regions(partitioner *p, byocl_function *fn, byocl_error *err)
{
    const byocl_regions *r = p->r;
    byocl_status st = BYOCL_OK;
    int number = 0;
    for (int R = 0; R < r->n_regions && st == BYOCL_OK; R++) {
        region_fn *rf = &p->regions[R];
        rf->live = r->n_outputs[R] > 0;
        if (!rf->live)
            continue;
        /* Room for every input and every constant use; every output. */
        int n_uses = r->n_inputs[R];
        for (int id = 0; id < fn->n_nodes; id++)
            if (r->region_of[id] == R)
                n_uses += fn->nodes[id].n_args;
        rf->args = malloc(sizeof(int) * (size_t)(n_uses + 1));
        rf->outs = malloc(sizeof(int) * (size_t)(r->n_outputs[R] + 1));
        if (!rf->args || !rf->outs) {
            st = nomem(err);
            break;
        }
        char name[160];
        for (;; number++) {
            region_name(name, sizeof name, r->target[R], number);
            if (!byocl_module_find(p->mod, name))
                break;
        }
        st = build_region(p, R, number++, err);
    }
    if (st == BYOCL_OK)
        st = rebuild_main(p, fn, err);
    if (st != BYOCL_OK)
        remove_region_fns(p);
    return st;
}

/* source[id] for every node: itself, or for a compiler_end the first compiler_end of the
 * same value (both give the same output of the region). */
static int *value_sources(const byocl_function *fn, byocl_error *err)
{
    int *source = malloc(sizeof(int) * (size_t)(fn->n_nodes + 1));
    int *first_end = malloc(sizeof(int) * (size_t)(fn->n_nodes + 1));
    if (!source || !first_end) {
        free(source);
        free(first_end);
        nomem(err);
        return NULL;
    }
    for (int id = 0; id < fn->n_nodes; id++)
        first_end[id] = -1;
    for (int id = 0; id < fn->n_nodes; id++) {
        source[id] = id;
        if (!pass_is_compiler_end(fn, id))
            continue;
        int *first = &first_end[fn->nodes[id].args[0]];
        if (*first < 0)
            *first = id;
        source[id] = *first;
    }
    free(first_end);
    return source;
}

/* The regions of @main, once TVM's forms are flattened (the checks run on the annotations
 * as given, so that errors name the user's nodes). */
static byocl_status find_regions(byocl_module *m, byocl_function **fn, byocl_regions *r,
                                 byocl_error *err)
{
    byocl_status st = pass_regions_analyze(*fn, r, err);
    if (st == BYOCL_OK)
        st = pass_regions_check_convex(*fn, r, err);
    if (st == BYOCL_OK && pass_annotations_need_flattening(*fn)) {
        pass_regions_release(r);
        st = pass_flatten_annotations(m, *fn, err);
        if (st == BYOCL_OK) {
            *fn = byocl_module_find(m, BYOCL_PASS_MAIN);
            st = pass_regions_analyze(*fn, r, err);
        }
        if (st == BYOCL_OK)
            st = pass_regions_check_convex(*fn, r, err);
    }
    if (st != BYOCL_OK)
        pass_regions_release(r); /* safe after a failed analysis: it holds nothing */
    return st;
}

byocl_status byocl_partition(byocl_module *m, const byocl_partition_options *opt,
                             byocl_error *err)
{
    byocl_error local;
    if (!err)
        err = &local; /* the helpers read err->status */
    byocl_function *fn;
    byocl_status st = pass_find_main(m, "byocl_partition", &fn, err);
    if (st == BYOCL_OK)
        st = byocl_infer_types(m, err);
    if (st != BYOCL_OK)
        return st;
    byocl_regions r;
    if ((st = find_regions(m, &fn, &r, err)) != BYOCL_OK)
        return st;
    if (r.n_regions > 0) {
        partitioner p = {.mod = m, .fn = fn, .r = &r,
                         .constants_as_args = opt && opt->constants_as_args, .err = err};
        p.regions = calloc((size_t)r.n_regions, sizeof *p.regions);
        p.source = value_sources(fn, err);
        st = !p.source ? err->status : p.regions ? partition_regions(&p, fn, err) : nomem(err);
        for (int R = 0; p.regions && R < r.n_regions; R++) {
            free(p.regions[R].args);
            free(p.regions[R].outs);
        }
        free(p.regions);
        free(p.source);
    }
    pass_regions_release(&r);
    if (st == BYOCL_OK)
        st = byocl_verify(m, true, err);
    return st;
}
