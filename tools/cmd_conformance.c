/* byocl conformance: runs the ONNX backend test suite's folders (model.onnx plus
 * test_data_set_N/input_K.pb and output_K.pb) and compares byocl's outputs with the
 * expected ones, as onnx's backend test runner does (rtol 1e-3, atol 1e-7). */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "byocl/runtime.h"
#include "cli.h"
#include "cli_build.h"
#include "cli_progress.h"

#define RTOL 1e-3
#define ATOL 1e-7

/* How the tests' models run: on the reference executor (`build` NULL), or built by
 * cli_build_model for build->target ("host": LLVM-compiled kernels, "ref": the ops'
 * reference kernels, a region target such as opencl: the regions it takes on its
 * device, the rest on the host), then run on the graph executor. */
typedef struct runner {
    const cli_build_request *build;
} runner;

static byocl_status run_built(runner *r, const byocl_module *m, byocl_tensor *const *inputs,
                              int n_inputs, byocl_tensor ***outputs, int *n_outputs,
                              byocl_error *err)
{
    *outputs = NULL;
    *n_outputs = 0;
    byocl_compiled *c = NULL;
    byocl_executor *ex = NULL;
    byocl_status st = cli_build_model(r->build, m, &c, NULL, err);
    if (st == BYOCL_OK)
        st = byocl_executor_new(c, &ex, err);
    for (int k = 0; k < n_inputs && st == BYOCL_OK; k++)
        st = byocl_executor_set_input(ex, byocl_compiled_input_name(c, k), inputs[k], err);
    if (st == BYOCL_OK)
        st = byocl_executor_run(ex, err);
    int n = st == BYOCL_OK ? byocl_executor_num_outputs(ex) : 0;
    byocl_tensor **outs = st == BYOCL_OK ? calloc((size_t)n + 1, sizeof *outs) : NULL;
    if (st == BYOCL_OK && !outs)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n && st == BYOCL_OK; i++)
        st = byocl_executor_copy_output(ex, i, &outs[i], err);
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    if (st != BYOCL_OK) {
        if (outs)
            byocl_tensors_free(outs, n);
        return st;
    }
    *outputs = outs;
    *n_outputs = n;
    return BYOCL_OK;
}

static byocl_status run_model(runner *r, const byocl_module *m, byocl_tensor *const *inputs,
                              int n_inputs, byocl_tensor ***outputs, int *n_outputs,
                              byocl_error *err)
{
    if (!r->build)
        return byocl_reference_run(m, "main", inputs, n_inputs, outputs, n_outputs, err);
    return run_built(r, m, inputs, n_inputs, outputs, n_outputs, err);
}

static const cli_option conformance_options[] = {
    {"filter", 0, CLI_ARG_REQUIRED, false, "SUBSTR", "run only the tests whose name contains SUBSTR"},
    {"executor", 0, CLI_ARG_REQUIRED, false, "NAME", "executor to run on: ref (the default)"},
    {"target", 0, CLI_ARG_REQUIRED, false, "NAME",
     "build for the graph executor instead: host (LLVM), ref (reference kernels), or a "
     "region target (opencl, a plugin's) for the regions it supports and host for the rest"},
    CLI_OPTION_DEVICE,
    CLI_OPTION_TARGET_OPT,
    {NULL, 0, CLI_ARG_NONE, false, NULL, NULL},
};

/* ------------------------------------------------------------ file lists */

typedef struct name_list {
    char **items;
    int n, cap;
} name_list;

static void names_free(name_list *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->items[i]);
    free(l->items);
    memset(l, 0, sizeof *l);
}

static bool names_add(name_list *l, const char *s)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        char **items = realloc(l->items, sizeof *items * (size_t)cap);
        if (!items)
            return false;
        l->items = items;
        l->cap = cap;
    }
    if (!(l->items[l->n] = strdup(s)))
        return false;
    l->n++;
    return true;
}

/* Names compare by their text, with runs of digits by value: input_2 before input_10. */
static int natural_compare(const void *pa, const void *pb)
{
    const char *a = *(char *const *)pa, *b = *(char *const *)pb;
    while (*a && *b) {
        if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
            char *ea, *eb;
            unsigned long long x = strtoull(a, &ea, 10), y = strtoull(b, &eb, 10);
            if (x != y)
                return x < y ? -1 : 1;
            a = ea;
            b = eb;
        } else {
            if (*a != *b)
                return (unsigned char)*a - (unsigned char)*b;
            a++;
            b++;
        }
    }
    return (unsigned char)*a - (unsigned char)*b;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The entries of `dir` whose names start with `prefix` and end with `suffix`, sorted
 * naturally. Returns false when the directory cannot be read or memory runs out. */
static bool list_dir(const char *dir, const char *prefix, const char *suffix, name_list *out)
{
    memset(out, 0, sizeof *out);
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool ok = true;
    struct dirent *e;
    size_t np = strlen(prefix), ns = strlen(suffix);
    while (ok && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (e->d_name[0] == '.' || n < np + ns || strncmp(e->d_name, prefix, np) != 0 ||
            strcmp(e->d_name + n - ns, suffix) != 0)
            continue;
        ok = names_add(out, e->d_name);
    }
    closedir(d);
    if (!ok)
        names_free(out);
    else if (out->n > 1) /* qsort of none: items may be NULL, which qsort may not take */
        qsort(out->items, (size_t)out->n, sizeof out->items[0], natural_compare);
    return ok;
}

static char *join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (p) {
        memcpy(p, dir, a);
        p[a] = '/';
        memcpy(p + a + 1, name, b + 1);
    }
    return p;
}

/* ------------------------------------------------------------ one test */

typedef enum outcome { OUTCOME_PASS, OUTCOME_FAIL, OUTCOME_SKIP } outcome;

/* A test's verdict and its reason. */
typedef struct verdict {
    outcome result;
    char why[BYOCL_ERROR_MSG_MAX + 256];
} verdict;

/* An error from loading or reading: what byocl refuses is a skip, anything else a
 * failure. Messages lose the leading "MODEL_PATH: " (the test's name says which). */
static void verdict_from_error(verdict *v, const byocl_error *err, const char *model_path)
{
    const char *msg = err->msg;
    size_t n = strlen(model_path);
    if (strncmp(msg, model_path, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
        msg += n + 2;
    v->result = err->status == BYOCL_ERR_UNSUPPORTED ? OUTCOME_SKIP : OUTCOME_FAIL;
    snprintf(v->why, sizeof v->why, "%s", msg);
}

typedef struct data_set {
    int n_inputs, n_outputs;
    byocl_tensor **inputs, **outputs;
    char **input_names;
    bool *constant; /* input i is bound as a constant (bind_as_constant, load_for) */
} data_set;

static void data_set_free(data_set *ds)
{
    for (int i = 0; i < ds->n_inputs; i++) {
        byocl_tensor_unref(ds->inputs[i]);
        free(ds->input_names[i]);
    }
    for (int i = 0; i < ds->n_outputs; i++)
        byocl_tensor_unref(ds->outputs[i]);
    free(ds->inputs);
    free(ds->input_names);
    free(ds->constant);
    free(ds->outputs);
    memset(ds, 0, sizeof *ds);
}

/* Reads input_*.pb and output_*.pb of one data set folder. */
static byocl_status read_data_set(const char *dir, data_set *ds, byocl_error *err)
{
    memset(ds, 0, sizeof *ds);
    name_list ins, outs;
    if (!list_dir(dir, "input_", ".pb", &ins))
        return byocl_error_set(err, BYOCL_ERR_IO, "cannot read %s", dir);
    if (!list_dir(dir, "output_", ".pb", &outs)) {
        names_free(&ins);
        return byocl_error_set(err, BYOCL_ERR_IO, "cannot read %s", dir);
    }
    byocl_status st = BYOCL_OK;
    ds->inputs = calloc((size_t)ins.n + 1, sizeof *ds->inputs);
    ds->input_names = calloc((size_t)ins.n + 1, sizeof *ds->input_names);
    ds->constant = calloc((size_t)ins.n + 1, sizeof *ds->constant);
    ds->outputs = calloc((size_t)outs.n + 1, sizeof *ds->outputs);
    if (!ds->inputs || !ds->input_names || !ds->constant || !ds->outputs)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (int i = 0; i < ins.n + outs.n && st == BYOCL_OK; i++) {
        bool is_in = i < ins.n;
        char *path = join(dir, is_in ? ins.items[i] : outs.items[i - ins.n]);
        if (!path) {
            st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
            break;
        }
        if (is_in)
            st = byocl_pb_read(path, &ds->inputs[i], &ds->input_names[i], err);
        else
            st = byocl_pb_read(path, &ds->outputs[i - ins.n], NULL, err);
        if (st == BYOCL_OK)
            is_in ? ds->n_inputs++ : ds->n_outputs++;
        free(path);
    }
    names_free(&ins);
    names_free(&outs);
    if (st != BYOCL_OK)
        data_set_free(ds);
    return st;
}

/* ONNX passes shapes, axes, pads and split sizes as int64 tensors, which byocl needs when
 * it compiles the model: the runner binds a test's int64 inputs as constants (TVM's test
 * runner freezes them likewise); every other input stays a run-time input, unless the
 * importer says it needs it when compiling (load_for: Resize's and Upsample's float
 * scales). */
static bool bind_as_constant(const data_set *ds, int i)
{
    return byocl_tensor_dtype(ds->inputs[i]) == BYOCL_INT64 && ds->input_names[i][0];
}

/* The input of the data set that a failed load says it needs when compiling, not bound
 * yet; -1 for none. The importer says "input K ('NAME') is a graph input, but byocl needs
 * ..." or "input K ('V') is computed at run time from graph input(s) 'NAME', ..., but". */
static int input_needed_constant(const data_set *ds, const byocl_error *err)
{
    if (err->status != BYOCL_ERR_UNSUPPORTED)
        return -1;
    const char *from = strstr(err->msg, "is computed at run time from graph input");
    const char *sources_end = from ? strstr(from, ", but") : NULL;
    for (int i = 0; i < ds->n_inputs; i++) {
        if (ds->constant[i] || !ds->input_names[i][0])
            continue;
        char quoted[600];
        snprintf(quoted, sizeof quoted, "('%s') is a graph input", ds->input_names[i]);
        if (strstr(err->msg, quoted))
            return i;
        snprintf(quoted, sizeof quoted, "'%s'", ds->input_names[i]);
        const char *at = sources_end ? strstr(from, quoted) : NULL;
        if (at && at < sources_end)
            return i;
    }
    return -1;
}

/* The parameter of @main that input i of the data set goes to: by name (the ONNX name
 * or its Relay spelling); an input file without a name takes the next parameter not
 * taken, in order. -1 when there is none. */
static int param_for_input(const byocl_function *fn, const data_set *ds, int i, const bool *taken)
{
    int n = byocl_function_num_params(fn);
    const char *name = ds->input_names[i];
    char relay[512];
    byocl_onnx_relay_name(name, relay, sizeof relay);
    for (int k = 0; k < n; k++) {
        const char *p = byocl_node_name(fn, byocl_function_param(fn, k));
        if (!taken[k] && (!*name || strcmp(p, name) == 0 || strcmp(p, relay) == 0))
            return k;
    }
    return -1;
}

/* Compares one output with rtol/atol; fills `why` and returns false on a mismatch. */
static bool compare_output(const byocl_tensor *got, const byocl_tensor *want, char *why,
                           size_t len)
{
    byocl_compare_result r;
    byocl_compare_options tolerance = {.rtol = RTOL, .atol = ATOL};
    byocl_tensor_compare(got, want, &tolerance, &r, NULL); /* cannot fail: none is NULL */
    if (!r.same_dtype || !r.same_shape) {
        byocl_type tg = byocl_type_tensor(byocl_tensor_dtype(got), byocl_tensor_shape(got)->rank,
                                          byocl_tensor_shape(got)->dims);
        byocl_type tw = byocl_type_tensor(byocl_tensor_dtype(want),
                                          byocl_tensor_shape(want)->rank,
                                          byocl_tensor_shape(want)->dims);
        char a[256], b[256];
        snprintf(why, len, "expected %s, got %s", byocl_type_str(&tw, a, sizeof a),
                 byocl_type_str(&tg, b, sizeof b));
    } else if (!r.ok) {
        snprintf(why, len, "max abs err %g at index %lld", r.max_abs_error,
                 (long long)r.worst_index);
    }
    return r.ok;
}

/* Loads the model with the data set's int64 inputs bound as constants, and then each
 * input the importer says it needs when compiling, one by one (ds->constant says which);
 * NULL with the verdict filled when that fails. */
static byocl_module *load_for(const char *model_path, data_set *ds, verdict *v)
{
    byocl_error err;
    for (int i = 0; i < ds->n_inputs; i++)
        ds->constant[i] = bind_as_constant(ds, i);
    for (;;) {
        byocl_params *params = byocl_params_new();
        if (!params) {
            snprintf(v->why, sizeof v->why, "out of memory");
            return NULL;
        }
        byocl_status st = BYOCL_OK;
        for (int i = 0; i < ds->n_inputs && st == BYOCL_OK; i++)
            if (ds->constant[i])
                st = byocl_params_set(params, ds->input_names[i], ds->inputs[i], &err);
        byocl_module *m = NULL;
        if (st == BYOCL_OK) {
            byocl_load_options opt = {.params = params};
            st = byocl_load_model_opts(model_path, &opt, &m, &err);
        }
        byocl_params_free(params);
        if (st == BYOCL_OK)
            return m;
        int needed = input_needed_constant(ds, &err);
        if (needed < 0) {
            verdict_from_error(v, &err, model_path);
            return NULL;
        }
        ds->constant[needed] = true;
    }
}

/* Puts each run-time input of the data set into the slot of its parameter of fn; false
 * with the verdict's reason when an input has no parameter or a parameter no input. */
/* ONNX's test data keeps bfloat16 tensors as their uint16 bits (numpy has no bfloat16):
 * where byocl has bfloat16, *t becomes a bfloat16 tensor of the same bits. */
static void retype_bfloat16(byocl_tensor **t, byocl_dtype want)
{
    if (want != BYOCL_BFLOAT16 || byocl_tensor_dtype(*t) != BYOCL_UINT16)
        return;
    byocl_tensor *b = byocl_tensor_new(BYOCL_BFLOAT16, byocl_tensor_shape(*t), NULL);
    if (!b)
        return; /* out of memory: the mismatch is reported as it is */
    memcpy(byocl_tensor_data(b), byocl_tensor_cdata(*t), byocl_tensor_nbytes(*t));
    byocl_tensor_unref(*t);
    *t = b;
}

/* Whether node `id` of fn is an argument of any node (or the body): a parameter that is
 * not is never read. */
static bool node_is_read(const byocl_function *fn, int id)
{
    if (byocl_function_body(fn) == id)
        return true;
    for (int n = 0; n < byocl_function_num_nodes(fn); n++)
        for (int k = 0; k < byocl_node_num_args(fn, n); k++)
            if (byocl_node_arg(fn, n, k) == id)
                return true;
    return false;
}

/* A parameter the model never reads (CastLike's `like` once imported: only its dtype
 * counts) gets zeros of its declared type: ONNX's test data gives
 * test_castlike_*_BFLOAT16's `like` another shape than its model declares, and the value
 * cannot change the result. Returns the tensor to bind (a new reference) or NULL. */
static byocl_tensor *unread_input(const byocl_function *fn, int k)
{
    int id = byocl_function_param(fn, k);
    const byocl_type *pt = byocl_node_type(fn, id);
    if (node_is_read(fn, id) || !pt || pt->kind != BYOCL_TYPE_TENSOR)
        return NULL;
    return byocl_tensor_new(pt->dtype, &pt->shape, NULL); /* zero-filled */
}

static bool bind_inputs(const byocl_function *fn, data_set *ds, byocl_tensor **slots,
                        bool *taken, verdict *v)
{
    int n_params = byocl_function_num_params(fn), n_bound = 0;
    for (int i = 0; i < ds->n_inputs; i++) {
        if (ds->constant[i])
            continue;
        int k = param_for_input(fn, ds, i, taken);
        if (k < 0) {
            snprintf(v->why, sizeof v->why, "input %d ('%s') of the data set is no input of "
                     "the model",
                     i, ds->input_names[i]);
            return false;
        }
        taken[k] = true;
        const byocl_type *pt = byocl_node_type(fn, byocl_function_param(fn, k));
        if (pt && pt->kind == BYOCL_TYPE_TENSOR)
            retype_bfloat16(&ds->inputs[i], pt->dtype);
        byocl_tensor *zeros = unread_input(fn, k);
        if (zeros) { /* the data set owns what slots hold: it takes the zeros' reference */
            byocl_tensor_unref(ds->inputs[i]);
            ds->inputs[i] = zeros;
        }
        slots[k] = ds->inputs[i];
        n_bound++;
    }
    if (n_bound != n_params) {
        snprintf(v->why, sizeof v->why, "the model has %d run-time input%s, the data set %d",
                 n_params, n_params == 1 ? "" : "s", n_bound);
        return false;
    }
    return true;
}

/* Compares the outputs; fills the verdict. */
static void compare_outputs(byocl_tensor *const *outputs, int n_outputs, data_set *ds,
                            verdict *v)
{
    v->result = OUTCOME_FAIL;
    if (n_outputs != ds->n_outputs) {
        snprintf(v->why, sizeof v->why, "%d output%s, expected %d", n_outputs,
                 n_outputs == 1 ? "" : "s", ds->n_outputs);
        return;
    }
    for (int i = 0; i < n_outputs; i++) {
        char why[512];
        retype_bfloat16(&ds->outputs[i], byocl_tensor_dtype(outputs[i]));
        if (!compare_output(outputs[i], ds->outputs[i], why, sizeof why)) {
            if (n_outputs == 1)
                snprintf(v->why, sizeof v->why, "%s", why);
            else
                snprintf(v->why, sizeof v->why, "output %d: %s", i, why);
            return;
        }
    }
    v->result = OUTCOME_PASS;
}

/* Loads the model for one data set, runs it, compares. */
static void run_data_set(const char *model_path, data_set *ds, runner *r, verdict *v)
{
    v->result = OUTCOME_FAIL;
    byocl_module *m = load_for(model_path, ds, v);
    if (!m)
        return;
    const byocl_function *fn = byocl_module_find(m, "main");
    int n_params = byocl_function_num_params(fn);
    byocl_tensor **slots = calloc((size_t)n_params + 1, sizeof *slots);
    bool *taken = calloc((size_t)n_params + 1, sizeof *taken);
    byocl_tensor **outputs = NULL;
    int n_outputs = 0;
    byocl_error err;
    if (!slots || !taken) {
        snprintf(v->why, sizeof v->why, "out of memory");
    } else if (bind_inputs(fn, ds, slots, taken, v)) {
        if (run_model(r, m, slots, n_params, &outputs, &n_outputs, &err) == BYOCL_OK) {
            compare_outputs(outputs, n_outputs, ds, v);
        } else {
            verdict_from_error(v, &err, model_path);
            v->result = OUTCOME_FAIL; /* a model byocl imported must run */
        }
    }
    if (outputs)
        byocl_tensors_free(outputs, n_outputs);
    free(slots);
    free(taken);
    byocl_module_free(m);
}

/* Runs every test_data_set_* of one test folder. */
static void run_test(const char *dir, runner *r, verdict *v)
{
    v->result = OUTCOME_FAIL;
    v->why[0] = '\0';
    char *model_path = join(dir, "model.onnx");
    name_list sets;
    if (!model_path || !list_dir(dir, "test_data_set_", "", &sets)) {
        snprintf(v->why, sizeof v->why, "cannot read the folder");
        free(model_path);
        return;
    }
    if (sets.n == 0)
        snprintf(v->why, sizeof v->why, "no test_data_set_* folder");
    for (int s = 0; s < sets.n; s++) {
        char *set_dir = join(dir, sets.items[s]);
        data_set ds;
        byocl_error err;
        if (!set_dir) {
            snprintf(v->why, sizeof v->why, "out of memory");
            v->result = OUTCOME_FAIL;
        } else if (read_data_set(set_dir, &ds, &err) != BYOCL_OK) {
            /* What the model uses that byocl refuses says more than its data files do
             * (a sequence input's file is no tensor, a double input's file is refused). */
            byocl_module *m;
            byocl_error load_err;
            if (byocl_load_model(model_path, NULL, &m, &load_err) == BYOCL_ERR_UNSUPPORTED)
                verdict_from_error(v, &load_err, model_path);
            else
                verdict_from_error(v, &err, model_path);
            byocl_module_free(m);
        } else {
            run_data_set(model_path, &ds, r, v);
            data_set_free(&ds);
        }
        free(set_dir);
        if (v->result != OUTCOME_PASS) {
            if (sets.n > 1) { /* say which data set */
                char why[sizeof v->why];
                snprintf(why, sizeof why, "%.200s: %.2000s", sets.items[s], v->why);
                memcpy(v->why, why, sizeof why);
            }
            break;
        }
    }
    names_free(&sets);
    free(model_path);
}

/* ------------------------------------------------------------ the suite */

typedef struct suite {
    runner run;
    const char *filter;
    const char *root;
    int passed, failed, skipped;
    bool io_error;
} suite;

/* How deep folders are searched (a link back up must not recurse forever). */
#define MAX_DEPTH 16

/* A folder with model.onnx is a test (named by its path under the root); any other
 * folder is searched for tests, in natural order. */
static void walk(suite *s, const char *dir, int depth)
{
    char *model = join(dir, "model.onnx");
    if (!model) {
        s->io_error = true;
        return;
    }
    bool is_test = is_file(model);
    free(model);
    if (is_test) {
        size_t n = strlen(s->root);
        const char *name = strcmp(dir, s->root) == 0 ? dir : dir + n + 1;
        if (s->filter && !strstr(name, s->filter))
            return;
        verdict v;
        cli_progress *progress = cli_progress_start(name, 0, false);
        run_test(dir, &s->run, &v);
        cli_progress_finish(progress, true); /* a verdict, whatever it is */
        static const char *const words[] = {"PASS", "FAIL", "SKIP"};
        printf("%s %s%s%s\n", words[v.result], name, v.result == OUTCOME_PASS ? "" : ": ",
               v.result == OUTCOME_PASS ? "" : v.why);
        fflush(stdout);
        s->passed += v.result == OUTCOME_PASS;
        s->failed += v.result == OUTCOME_FAIL;
        s->skipped += v.result == OUTCOME_SKIP;
        return;
    }
    name_list entries;
    if (!list_dir(dir, "", "", &entries)) {
        s->io_error = true;
        return;
    }
    for (int i = 0; i < entries.n; i++) {
        char *sub = join(dir, entries.items[i]);
        if (!sub) {
            s->io_error = true;
            break;
        }
        if (depth < MAX_DEPTH && is_dir(sub))
            walk(s, sub, depth + 1);
        free(sub);
    }
    names_free(&entries);
}

static int run_conformance(const cli_command *cmd, const cli_args *args)
{
    const char *executor = cli_value(cmd, args, "executor", NULL);
    const char *target = cli_value(cmd, args, "target", NULL);
    if (executor && target)
        return cli_usage_error(cmd, "--target and --executor are mutually exclusive");
    if (executor && strcmp(executor, "ref") != 0)
        return cli_usage_error(cmd, "unknown executor '%s' (known: ref)", executor);
    int rc = cli_check_target(cmd, target);
    if (rc != CLI_EXIT_OK)
        return rc;
    /* Progress is per test (walk), the build's included. */
    /* A device per test would cost more than most tests take (PoCL loads its kernel
     * library for each new context, about a second): one device serves every test, where
     * the target can keep its device open. */
    cli_build_request build = {.target = target, .quiet = true, .keep_device = true};
    rc = cli_target_flags(cmd, args, &build);
    if (rc != CLI_EXIT_OK)
        return rc;
    const char *root = args->positional[0];
    if (!is_dir(root))
        return cli_fail("%s is not a folder (give the folder of the ONNX backend tests, e.g. "
                        "/usr/share/libonnx-testdata/data/node)",
                        root);
    /* Paths under the root print relative to it; a trailing '/' would misplace that. */
    char *clean = strdup(root);
    if (!clean)
        return cli_fail("out of memory");
    for (size_t n = strlen(clean); n > 1 && clean[n - 1] == '/'; n--)
        clean[n - 1] = '\0';
    suite s = {.run = {.build = target ? &build : NULL},
               .filter = cli_value(cmd, args, "filter", NULL),
               .root = clean};
    walk(&s, clean, 0);
    free(clean);
    printf("%d passed, %d failed, %d skipped\n", s.passed, s.failed, s.skipped);
    if (s.io_error)
        return cli_fail("some folders under %s could not be read", root);
    return s.failed > 0 ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}

const cli_command cli_cmd_conformance = {
    .name = "conformance",
    .summary = "run the ONNX backend test suite's folders and compare outputs",
    .args_usage = "DIR [--filter SUBSTR] [--executor ref | --target host|ref|opencl|... "
                  "[--device D]]",
    .min_positional = 1,
    .max_positional = 1,
    .positional_names = {"DIR"},
    .description =
        "Runs every ONNX backend test folder under DIR (a folder holding model.onnx and\n"
        "test_data_set_N/input_K.pb, output_K.pb) and compares byocl's outputs with the\n"
        "expected ones: |got - expected| <= 1e-7 + 1e-3 * |expected| elementwise, as the\n"
        "ONNX test runner does. Prints one line per test:\n"
        "  PASS NAME\n"
        "  FAIL NAME: max abs err X at index I    (or what else went wrong)\n"
        "  SKIP NAME: REASON                      (an op, attribute or dtype byocl refuses)\n"
        "and last 'N passed, N failed, N skipped'. The exit status is 1 when a test failed.\n"
        "Models run on the reference executor, or with --target built for the graph\n"
        "executor (host: LLVM-compiled kernels; ref: the ops' reference kernels; a region\n"
        "target such as opencl: the regions it supports on its device, the rest on the\n"
        "host).\n"
        "\n"
        "Inputs bind to the model's inputs by name (by position when a file has no name);\n"
        "int64 inputs (shapes, axes, pads, split sizes in ONNX) are bound as constants,\n"
        "since byocl needs them when it compiles the model.\n",
    .options = conformance_options,
    .examples = "  byocl conformance /usr/share/libonnx-testdata/data/node\n"
                "  byocl conformance /usr/share/libonnx-testdata/data/node --target host\n"
                "  byocl conformance /usr/share/libonnx-testdata/data/node --target opencl\n"
                "  byocl conformance /usr/share/libonnx-testdata/data/node --filter conv\n",
    .run = run_conformance,
};
