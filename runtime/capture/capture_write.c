/* Writing a capture folder, of a region a byocl_capture recorded or of a call recorded
 * elsewhere (byocl_capture_write_call): every file into DIR/.<symbol>.tmp-XXXXXX, then one
 * rename to DIR/<symbol> (replacing a previous capture of the region). */
#define _GNU_SOURCE /* mkdtemp */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "byocl/frontend.h"
#include "byocl/passes.h"
#include "byocl/tensor_io.h"
#include "capture_impl.h"
#include "base/sha256.h"

/* What a folder holds: the manifest's head (its files and tensors are filled in here), the
 * region alone, the parameter name of each input, and every tensor. */
typedef struct folder_content {
    byocl_capture_manifest head;
    const byocl_module *module;
    const char *const *input_names;
    const byocl_tensor *const *inputs, *const *outputs;
    const value_origin *in_origin, *out_origin; /* NULL: not known */
} folder_content;

static const value_origin unknown_origin = {"?", "?"};

/* Writes one tensor file and fills its manifest entry; names a file not taken yet. */
static byocl_status write_tensor(const char *tmp, const char *prefix, const char *name,
                                 const byocl_tensor *t, const value_origin *origin,
                                 byocl_capture_tensor *entry, char *file, size_t file_len,
                                 byocl_error *err)
{
    char base[200];
    byocl_capture_file_name(prefix, name, base, sizeof base);
    snprintf(file, file_len, "%s.npy", base);
    char *path = base_path_join(tmp, file);
    for (int k = 2; path && access(path, F_OK) == 0; k++) { /* two names made alike */
        snprintf(file, file_len, "%s_%d.npy", base, k);
        free(path);
        path = base_path_join(tmp, file);
    }
    if (!path)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    byocl_status st = byocl_npy_write(path, t, err);
    free(path);
    entry->name = (char *)name;
    entry->file = file;
    entry->dtype = byocl_tensor_dtype(t);
    entry->shape = *byocl_tensor_shape(t);
    entry->node = (char *)origin->node;
    entry->op = (char *)origin->op;
    return st;
}

/* Writes the folder's files into `tmp`. */
static byocl_status write_files(const folder_content *c, const char *tmp, byocl_error *err)
{
    byocl_capture_manifest m = c->head;
    int n_in = m.n_inputs, n_out = m.n_outputs;
    char *text = base_path_join(tmp, "region.relay");
    char *npz = base_path_join(tmp, "region.npz");
    char *manifest_path = base_path_join(tmp, "manifest.json");
    m.inputs = calloc((size_t)n_in + 1, sizeof *m.inputs);
    m.outputs = calloc((size_t)n_out + 1, sizeof *m.outputs);
    char(*files)[256] = calloc((size_t)(n_in + n_out) + 1, sizeof *files);
    char(*names)[32] = calloc((size_t)n_out + 1, sizeof *names);
    byocl_status st = BYOCL_OK;
    if (!text || !npz || !manifest_path || !m.inputs || !m.outputs || !files || !names)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    if (st == BYOCL_OK)
        st = byocl_save_model(c->module, text, npz, err);
    m.module = "region.relay";
    m.params = access(npz, F_OK) == 0 ? "region.npz" : NULL;
    for (int k = 0; k < n_in && st == BYOCL_OK; k++)
        st = write_tensor(tmp, "input_", c->input_names[k], c->inputs[k],
                          c->in_origin ? &c->in_origin[k] : &unknown_origin, &m.inputs[k],
                          files[k], sizeof files[k], err);
    for (int i = 0; i < n_out && st == BYOCL_OK; i++) {
        snprintf(names[i], sizeof names[i], "output_%d", i);
        st = write_tensor(tmp, "", names[i], c->outputs[i],
                          c->out_origin ? &c->out_origin[i] : &unknown_origin, &m.outputs[i],
                          files[n_in + i], sizeof files[n_in + i], err);
    }
    if (st == BYOCL_OK) {
        byocl_textbuf manifest = {0};
        capture_manifest_print(&m, &manifest);
        char *json = base_textbuf_take(&manifest);
        FILE *f = json ? fopen(manifest_path, "w") : NULL;
        bool written = f && fputs(json, f) != EOF;
        if (f && fclose(f) != 0)
            written = false;
        if (!json)
            st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
        else if (!written)
            st = byocl_error_set(err, BYOCL_ERR_IO, "cannot write %s: %s", manifest_path,
                                 strerror(errno));
        free(json);
    }
    free(m.inputs);
    free(m.outputs);
    free(files);
    free(names);
    free(text);
    free(npz);
    free(manifest_path);
    return st;
}

/* Whether `path` is a folder that a capture wrote (it has a manifest.json). */
static bool is_capture_folder(const char *path)
{
    char *manifest = base_path_join(path, "manifest.json");
    bool yes = manifest && access(manifest, F_OK) == 0;
    free(manifest);
    return yes;
}

/* Renames tmp to `final`, replacing a previous capture there. */
static byocl_status move_into_place(const char *tmp, const char *final, const char *dir,
                                    byocl_error *err)
{
    struct stat sb;
    if (lstat(final, &sb) != 0)
        return rename(tmp, final) == 0 ? BYOCL_OK
                                       : byocl_error_set(err, BYOCL_ERR_IO, "cannot create %s: %s",
                                                         final, strerror(errno));
    if (!S_ISDIR(sb.st_mode) || !is_capture_folder(final))
        return byocl_error_set(err, BYOCL_ERR_IO,
                               "cannot write %s: it exists and is not a capture folder; remove "
                               "it or choose another folder",
                               final);
    char *old = base_path_join(dir, ".old-XXXXXX");
    if (!old)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    byocl_status st = BYOCL_OK;
    /* The previous capture goes aside first, so that the new one takes its name whole. */
    bool aside = mkdtemp(old) && rename(final, old) == 0;
    if (!aside || rename(tmp, final) != 0) {
        st = byocl_error_set(err, BYOCL_ERR_IO, "cannot replace %s: %s", final, strerror(errno));
        if (aside) /* the previous capture stays */
            rename(old, final);
    }
    if (st == BYOCL_OK)
        base_dir_remove_files(old);
    else if (!aside)
        rmdir(old);
    free(old);
    return st;
}

/* mkdtemp makes the folder private; a capture folder gets the usual permissions. */
static byocl_status open_up(const char *tmp, byocl_error *err)
{
    mode_t mask = umask(0);
    umask(mask);
    if (chmod(tmp, 0777 & ~mask) != 0)
        return byocl_error_set(err, BYOCL_ERR_IO, "cannot set the permissions of %s: %s", tmp,
                               strerror(errno));
    return BYOCL_OK;
}

/* The folder's name: the symbol, or for a longer one than a name of 128 characters
 * (TVM names a region after its ops: 1,320 characters for resnet18's, where a file name
 * has 255) its first 111, '-' and 16 hex digits of its SHA-256. */
static void folder_name(const char *symbol, char name[129])
{
    size_t len = strlen(symbol);
    if (len <= 128) {
        memcpy(name, symbol, len + 1);
        return;
    }
    byocl_sha256 h;
    unsigned char digest[BYOCL_SHA256_BYTES];
    base_sha256_init(&h);
    base_sha256_update(&h, symbol, len);
    base_sha256_final(&h, digest);
    int at = snprintf(name, 129, "%.111s-", symbol);
    for (int i = 0; i < 8; i++)
        at += snprintf(name + at, (size_t)(129 - at), "%02x", digest[i]);
}

/* Writes DIR/<name>: into DIR/.<name>.tmp-XXXXXX first, then renamed. */
static byocl_status write_folder(const folder_content *c, const char *dir, char **path_out,
                                 byocl_error *err)
{
    if (path_out)
        *path_out = NULL;
    char name[129], pattern[160];
    folder_name(c->head.symbol, name);
    snprintf(pattern, sizeof pattern, ".%s.tmp-XXXXXX", name);
    byocl_status st = BYOCL_OK;
    char *tmp = base_path_join(dir, pattern), *final = base_path_join(dir, name);
    if (!tmp || !final)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    else if (!mkdtemp(tmp))
        st = byocl_error_set(err, BYOCL_ERR_IO, "cannot create a folder in %s: %s", dir,
                             strerror(errno));
    else if ((st = write_files(c, tmp, err)) == BYOCL_OK && (st = open_up(tmp, err)) == BYOCL_OK)
        st = move_into_place(tmp, final, dir, err);
    if (tmp && st != BYOCL_OK)
        base_dir_remove_files(tmp);
    free(tmp);
    if (st == BYOCL_OK && path_out)
        *path_out = final;
    else
        free(final);
    return st;
}

byocl_status byocl_capture_write_region(const byocl_capture *cap, int k, const char *dir,
                                        char **path_out, byocl_error *err)
{
    if (path_out)
        *path_out = NULL;
    const cap_region *r = capture_recorded(cap, k);
    if (!r)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "no recorded region %d", k);
    byocl_capture_region info = byocl_capture_region_at(cap, k);
    byocl_module *part = NULL;
    byocl_extract_input *params = NULL;
    int n_params = 0;
    byocl_status st =
        byocl_extract_with_inputs(cap->module, r->symbol, &part, &params, &n_params, err);
    if (st == BYOCL_OK && n_params != r->n_in)
        st = byocl_error_set(err, BYOCL_ERR_INVALID,
                             "region %s: the extracted module takes %d inputs, the region %d",
                             r->symbol, n_params, r->n_in);
    const char **names = calloc((size_t)n_params + 1, sizeof *names);
    if (st == BYOCL_OK && !names)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (int i = 0; st == BYOCL_OK && i < n_params; i++)
        names[i] = params[i].param;
    folder_content c = {
        .head = {.version = 1,
                 .symbol = r->symbol,
                 .target = r->compiler,
                 .runner = (char *)r->runner,
                 .outputs_from = cap->check ? cap->check : (char *)r->runner,
                 .model = cap->model,
                 .call_node = (char *)r->call_node,
                 .calls = info.calls,
                 .last_ms = info.last_ms,
                 .min_ms = info.min_ms,
                 .median_ms = info.median_ms,
                 .n_inputs = r->n_in,
                 .n_outputs = r->n_out},
        .module = part,
        .input_names = names,
        .inputs = (const byocl_tensor *const *)r->inputs,
        .outputs = (const byocl_tensor *const *)r->outputs,
        .in_origin = r->in_origin,
        .out_origin = r->out_origin,
    };
    if (st == BYOCL_OK)
        st = write_folder(&c, dir, path_out, err);
    free(names);
    byocl_extract_inputs_free(params, n_params);
    byocl_module_free(part);
    return st;
}

/* Whether tensor `t` has type `type` ("input 1 (%w)" names it otherwise). */
static byocl_status check_call_tensor(const byocl_capture_call *call, const char *what,
                                      const byocl_tensor *t, const byocl_type *type,
                                      byocl_error *err)
{
    byocl_type have = byocl_type_tensor(byocl_tensor_dtype(t), byocl_tensor_shape(t)->rank,
                                        byocl_tensor_shape(t)->dims);
    if (byocl_type_equal(&have, type))
        return BYOCL_OK;
    char want[256], got[256];
    return byocl_error_set(err, BYOCL_ERR_INVALID, "capturing %s: %s is %s, @main says %s",
                           call->symbol, what, byocl_type_str(&have, got, sizeof got),
                           byocl_type_str(type, want, sizeof want));
}

byocl_status byocl_capture_write_call(const byocl_capture_call *call, const char *dir,
                                      char **path_out, byocl_error *err)
{
    if (path_out)
        *path_out = NULL;
    const byocl_function *main_fn = call->module ? byocl_module_find(call->module, "main") : NULL;
    if (!main_fn || call->calls < 1 || !call->times_ms || !call->symbol || !*call->symbol)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "byocl_capture_write_call: %s",
                               !main_fn ? "a module with @main is needed"
                               : call->calls < 1 || !call->times_ms ? "no call times"
                                                                    : "no symbol");
    int n_in = byocl_function_num_params(main_fn);
    const byocl_type *ret = byocl_node_type(main_fn, byocl_function_body(main_fn));
    int n_out = byocl_type_num_tensors(ret);
    const char **names = calloc((size_t)n_in + 1, sizeof *names);
    if (!names)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    byocl_status st = BYOCL_OK;
    char what[160];
    for (int k = 0; k < n_in && st == BYOCL_OK; k++) {
        int id = byocl_function_param(main_fn, k);
        names[k] = byocl_node_name(main_fn, id);
        snprintf(what, sizeof what, "input %d (%%%s)", k, names[k]);
        st = check_call_tensor(call, what, call->inputs[k], byocl_node_type(main_fn, id), err);
    }
    for (int i = 0; i < n_out && st == BYOCL_OK; i++) {
        snprintf(what, sizeof what, "output %d", i);
        st = check_call_tensor(call, what, call->outputs[i],
                               ret->kind == BYOCL_TYPE_TUPLE ? ret->fields[i] : ret, err);
    }
    folder_content c = {
        .head = {.version = 1,
                 .symbol = (char *)call->symbol,
                 .target = (char *)call->target,
                 .runner = (char *)call->runner,
                 .outputs_from = (char *)call->runner,
                 .model = (char *)(call->model ? call->model : ""),
                 .call_node = (char *)(call->call_node ? call->call_node : "?"),
                 .calls = call->calls,
                 .n_inputs = n_in,
                 .n_outputs = n_out},
        .module = call->module,
        .input_names = names,
        .inputs = call->inputs,
        .outputs = call->outputs,
    };
    capture_time_stats(call->times_ms, call->calls, &c.head.last_ms, &c.head.min_ms,
                       &c.head.median_ms);
    if (st == BYOCL_OK)
        st = write_folder(&c, dir, path_out, err);
    free(names);
    return st;
}
