/* --capture for the commands that run a model: see cli_capture.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "byocl/passes.h"
#include "byocl/tensor_io.h"
#include "cli_capture.h"

int cli_capture_parse(const cli_command *cmd, const cli_args *args, cli_capture *c)
{
    *c = (cli_capture){.dir = cli_value(cmd, args, "capture", NULL),
                       .region = cli_value(cmd, args, "capture-region", NULL),
                       .node = cli_value(cmd, args, "capture-node", NULL),
                       .node_output = -1};
    if (!c->dir && c->region)
        return cli_usage_error(cmd, "--capture-region needs --capture DIR");
    if (!c->dir && c->node)
        return cli_usage_error(cmd, "--capture-node needs --capture DIR");
    c->regions = c->dir && (c->region || !c->node);
    return CLI_EXIT_OK;
}

/* How `byocl print` names node id ("%3", "%x0"), or "" when it has no name (constants, the
 * body printed inline); numbers[id] is its %N or -1. */
static void print_name(const byocl_function *fn, const int *numbers, int id, char *buf,
                       size_t len)
{
    const char *name = byocl_node_name(fn, id);
    if (numbers[id] >= 0)
        snprintf(buf, len, "%%%d", numbers[id]);
    else if (name && byocl_node_kind_of(fn, id) != BYOCL_NODE_CONSTANT)
        snprintf(buf, len, "%%%s", name);
    else
        buf[0] = '\0';
}

/* The id of the node of `fn` that `label` ("%3", "3", "%x0") names, or a failure. */
static int find_node(const char *spec, const byocl_function *fn, const char *label, int *out)
{
    const char *want = label[0] == '%' ? label + 1 : label;
    char buf[128];
    int n = byocl_function_num_nodes(fn), last = -1, found = -1;
    int *numbers = byocl_text_node_numbers(fn); /* one walk, not one per node */
    if (!numbers)
        return cli_fail("out of memory");
    for (int id = 0; id < n && found < 0; id++) {
        print_name(fn, numbers, id, buf, sizeof buf);
        if (buf[0] == '%' && byocl_node_kind_of(fn, id) != BYOCL_NODE_VAR)
            last = id;
        if (buf[0] == '%' && strcmp(buf + 1, want) == 0)
            found = id;
    }
    int rc = CLI_EXIT_OK;
    if (found >= 0 && byocl_node_kind_of(fn, found) == BYOCL_NODE_VAR)
        rc = cli_fail("--capture-node %s: %s is a parameter of @main, an input of the model, "
                      "not an intermediate value",
                      label, buf);
    else if (found >= 0 && byocl_node_type(fn, found)->kind != BYOCL_TYPE_TENSOR)
        rc = cli_fail("--capture-node %s: %s is a tuple; capture one of its fields (the node "
                      "that takes it apart)",
                      label, buf);
    else if (found >= 0)
        *out = found;
    else {
        if (last >= 0)
            print_name(fn, numbers, last, buf, sizeof buf);
        rc = cli_fail("--capture-node %s: @main of %s has no node %%%s (`byocl print %s` "
                      "numbers them%s%s)",
                      label, spec, want, spec, last >= 0 ? ", up to " : "", last >= 0 ? buf : "");
    }
    free(numbers);
    return rc;
}

/* The target of the hand-annotated region node `id` of `fn` is in (reached from a
 * compiler_begin without passing a compiler_end), or NULL when it is on the host. */
static const char *annotated_region_of(const byocl_function *fn, int id)
{
    int n = byocl_function_num_nodes(fn);
    const char **in = calloc((size_t)n + 1, sizeof *in);
    if (!in)
        return NULL;
    for (int v = 0; v <= id; v++) {
        const char *op = byocl_node_op(fn, v);
        if (op && strcmp(op, "annotation.compiler_begin") == 0) {
            in[v] = byocl_attrs_get_str(byocl_node_attrs(fn, v), "compiler", NULL);
            continue;
        }
        if (op && strcmp(op, "annotation.compiler_end") == 0)
            continue;
        for (int k = 0; k < byocl_node_num_args(fn, v) && !in[v]; k++)
            in[v] = in[byocl_node_arg(fn, v, k)];
    }
    const char *target = in[id];
    free(in);
    return target;
}

/* Makes node `id` of @main of `m` an extra output: the body becomes a tuple of the old
 * result's fields (or the old result) and the node, through a compiler_end when the node
 * is inside a region annotated by hand. */
static byocl_status add_node_output(byocl_module *m, int id, int *index, byocl_error *err)
{
    byocl_function *fn = byocl_module_find(m, "main");
    const char *target = annotated_region_of(fn, id);
    if (target) {
        byocl_attrs *attrs = byocl_attrs_new(m);
        if (!attrs || byocl_attrs_set_str(m, attrs, "compiler", target) != BYOCL_OK)
            return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
        id = byocl_function_add_call(fn, "annotation.compiler_end", &id, 1, attrs, err);
        if (id < 0)
            return err->status;
    }
    int body = byocl_function_body(fn);
    bool tuple = byocl_node_kind_of(fn, body) == BYOCL_NODE_TUPLE;
    int n = tuple ? byocl_node_num_args(fn, body) : 1;
    int *fields = malloc(((size_t)n + 1) * sizeof *fields);
    if (!fields)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (int k = 0; k < n; k++)
        fields[k] = tuple ? byocl_node_arg(fn, body, k) : body;
    fields[n] = id;
    *index = byocl_type_num_tensors(byocl_node_type(fn, body));
    int fresh = byocl_function_add_tuple(fn, fields, n + 1, err);
    free(fields);
    byocl_status st = fresh < 0 ? err->status : byocl_function_set_body(fn, fresh, err);
    if (st == BYOCL_OK)
        st = byocl_function_set_ret_type(fn, NULL, err);
    return st == BYOCL_OK ? byocl_infer_types(m, err) : st;
}

static void install(void *user, byocl_build_options *opt)
{
    cli_capture *c = user;
    if (c->cap)
        byocl_capture_install(c->cap, opt);
}

int cli_capture_prepare(cli_capture *c, cli_build_request *req, const char *spec,
                        const byocl_module *m, const byocl_capture_options *opt,
                        byocl_module **out)
{
    *out = NULL;
    /* DIR is made (and checked) before the run that fills it. */
    struct stat sb;
    c->made_dir = c->dir && stat(c->dir, &sb) != 0;
    int drc = c->dir ? cli_make_dirs(c->dir) : CLI_EXIT_OK;
    if (drc != CLI_EXIT_OK)
        return drc;
    if (c->dir && access(c->dir, W_OK | X_OK) != 0)
        return cli_fail("--capture %s: cannot write there: %s", c->dir, strerror(errno));
    byocl_error err;
    byocl_module *marked = byocl_module_clone(m, &err);
    if (!marked)
        return cli_fail_error(&err);
    int rc = CLI_EXIT_OK, node = -1;
    if (c->node)
        rc = find_node(spec, byocl_module_find(m, "main"), c->node, &node);
    if (rc == CLI_EXIT_OK && node >= 0 && add_node_output(marked, node, &c->node_output, &err))
        rc = cli_fail_error(&err);
    byocl_module *part = NULL;
    if (rc == CLI_EXIT_OK) {
        byocl_capture_mark_nodes(marked);
        if (!cli_is_region_target(req->target)) {
            part = marked;
            marked = NULL;
        } else if (cli_partition_for_target(req, marked, &part, &err) != BYOCL_OK) {
            rc = cli_fail_error(&err);
        }
    }
    byocl_capture_options o = opt ? *opt : (byocl_capture_options){0};
    o.region = c->region;
    o.model = spec;
    if (rc == CLI_EXIT_OK && c->regions && byocl_capture_new(m, part, &o, &c->cap, &err))
        rc = cli_fail("--capture: %s", err.msg);
    byocl_module_free(marked);
    if (rc != CLI_EXIT_OK) {
        byocl_module_free(part);
        cli_capture_free(c);
        return rc;
    }
    /* The module is partitioned now: the rest builds for the host. */
    if (cli_is_region_target(req->target))
        req->target = opt && opt->check ? opt->check : "host";
    req->adjust = install;
    req->adjust_user = c;
    *out = part;
    return CLI_EXIT_OK;
}

/* DIR/node_<N>.npy from the extra output. */
static int write_node(const cli_capture *c, const byocl_executor *ex)
{
    const byocl_tensor *t;
    byocl_error err;
    char name[160], *path = NULL;
    byocl_capture_file_name("node_", c->node[0] == '%' ? c->node + 1 : c->node, name,
                            sizeof name);
    size_t len = strlen(c->dir) + strlen(name) + 8;
    int rc = CLI_EXIT_OK;
    if (!(path = malloc(len)))
        rc = cli_fail("out of memory");
    if (rc == CLI_EXIT_OK) {
        snprintf(path, len, "%s/%s.npy", c->dir, name);
        if (byocl_executor_output(ex, c->node_output, &t, &err) != BYOCL_OK ||
            byocl_npy_write(path, t, &err) != BYOCL_OK)
            rc = cli_fail_error(&err);
        else
            printf("wrote %s (%s of @main)\n", path, c->node);
    }
    free(path);
    return rc;
}

int cli_capture_finish(cli_capture *c, const byocl_executor *ex, bool run_ok)
{
    int rc = CLI_EXIT_OK;
    for (int k = 0; c->cap && k < byocl_capture_num_regions(c->cap); k++) {
        byocl_error err;
        char *path;
        if (byocl_capture_write_region(c->cap, k, c->dir, &path, &err) != BYOCL_OK)
            return cli_fail_error(&err);
        printf("wrote %s\n", path);
        free(path);
    }
    if (c->node_output >= 0 && run_ok && ex && write_node(c, ex) != CLI_EXIT_OK)
        rc = CLI_EXIT_FAILURE;
    return rc;
}

void cli_capture_free(cli_capture *c)
{
    if (c->made_dir)
        rmdir(c->dir); /* only when empty: a failed run leaves no folder behind */
    byocl_capture_free(c->cap);
    c->cap = NULL;
}

/* A tolerance: a finite number >= 0. */
static int parse_tolerance(const cli_command *cmd, const cli_args *args, const char *flag,
                           double fallback, double *out)
{
    const char *v = cli_value(cmd, args, flag, NULL);
    *out = fallback;
    if (!v)
        return CLI_EXIT_OK;
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || *end || end == v || !isfinite(d) || d < 0)
        return cli_usage_error(cmd, "--%s %s: expected a number >= 0", flag, v);
    *out = d;
    return CLI_EXIT_OK;
}

int cli_capture_tolerance(const cli_command *cmd, const cli_args *args, double *rtol,
                          double *atol)
{
    int rc = parse_tolerance(cmd, args, "rtol", BYOCL_CAPTURE_RTOL, rtol);
    return rc == CLI_EXIT_OK ? parse_tolerance(cmd, args, "atol", BYOCL_CAPTURE_ATOL, atol) : rc;
}

void cli_capture_print_diffs(const byocl_capture_diff *diffs, int n)
{
    printf("  %-6s %12s %12s %10s  %s\n", "output", "max abs err", "rel L2", "first bad",
           "result");
    for (int i = 0; i < n; i++) {
        char first[32] = "-";
        if (diffs[i].first_bad >= 0)
            snprintf(first, sizeof first, "%lld", (long long)diffs[i].first_bad);
        printf("  %-6d %12.4g %12.4g %10s  %s\n", i, diffs[i].max_abs, diffs[i].rel_l2, first,
               diffs[i].ok ? "ok" : "DIFFERS");
    }
}
