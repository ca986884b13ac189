/* Writing a recorded region's capture folder: every file into DIR/.<symbol>.tmp-XXXXXX,
 * then one rename to DIR/<symbol> (replacing a previous capture of the region). */
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

/* The manifest of region r, pointing into r (free only the arrays). */
static byocl_status manifest_of(const byocl_capture *cap, const cap_region *r,
                                const byocl_capture_region *info, bool has_npz,
                                byocl_capture_manifest *m, byocl_error *err)
{
    *m = (byocl_capture_manifest){
        .version = 1,
        .symbol = r->symbol,
        .target = r->compiler,
        .runner = (char *)r->runner,
        .outputs_from = cap->check ? cap->check : (char *)r->runner,
        .model = cap->model,
        .call_node = (char *)r->call_node,
        .module = "region.relay",
        .params = has_npz ? "region.npz" : NULL,
        .calls = info->calls,
        .last_ms = info->last_ms,
        .min_ms = info->min_ms,
        .median_ms = info->median_ms,
        .n_inputs = r->n_in,
        .n_outputs = r->n_out,
    };
    m->inputs = calloc((size_t)r->n_in + 1, sizeof *m->inputs);
    m->outputs = calloc((size_t)r->n_out + 1, sizeof *m->outputs);
    return m->inputs && m->outputs ? BYOCL_OK
                                   : byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
}

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
static byocl_status write_files(const byocl_capture *cap, const cap_region *r,
                                const byocl_capture_region *info, const char *tmp,
                                byocl_error *err)
{
    byocl_module *part = NULL;
    byocl_extract_input *params = NULL;
    int n_params = 0;
    byocl_status st =
        byocl_extract_with_inputs(cap->module, r->symbol, &part, &params, &n_params, err);
    char *text = base_path_join(tmp, "region.relay");
    char *npz = base_path_join(tmp, "region.npz");
    char *manifest_path = base_path_join(tmp, "manifest.json");
    if (st == BYOCL_OK && (!text || !npz || !manifest_path))
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    if (st == BYOCL_OK && n_params != r->n_in)
        st = byocl_error_set(err, BYOCL_ERR_INVALID,
                             "region %s: the extracted module takes %d inputs, the region %d",
                             r->symbol, n_params, r->n_in);
    if (st == BYOCL_OK)
        st = byocl_save_model(part, text, npz, err);
    byocl_capture_manifest m = {0};
    if (st == BYOCL_OK)
        st = manifest_of(cap, r, info, access(npz, F_OK) == 0, &m, err);
    char(*files)[256] = calloc((size_t)(r->n_in + r->n_out) + 1, sizeof *files);
    char(*names)[32] = calloc((size_t)r->n_out + 1, sizeof *names);
    if (st == BYOCL_OK && (!files || !names))
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (int k = 0; k < r->n_in && st == BYOCL_OK; k++)
        st = write_tensor(tmp, "input_", params[k].param, r->inputs[k], &r->in_origin[k],
                          &m.inputs[k], files[k], sizeof files[k], err);
    for (int i = 0; i < r->n_out && st == BYOCL_OK; i++) {
        snprintf(names[i], sizeof names[i], "output_%d", i);
        st = write_tensor(tmp, "", names[i], r->outputs[i], &r->out_origin[i], &m.outputs[i],
                          files[r->n_in + i], sizeof files[r->n_in + i], err);
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
    byocl_extract_inputs_free(params, n_params);
    byocl_module_free(part);
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

byocl_status byocl_capture_write_region(const byocl_capture *cap, int k, const char *dir,
                                        char **path_out, byocl_error *err)
{
    if (path_out)
        *path_out = NULL;
    const cap_region *r = capture_recorded(cap, k);
    if (!r)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "no recorded region %d", k);
    byocl_capture_region info = byocl_capture_region_at(cap, k);
    byocl_status st = BYOCL_OK;
    char pattern[300];
    snprintf(pattern, sizeof pattern, ".%.200s.tmp-XXXXXX", r->symbol);
    char *tmp = base_path_join(dir, pattern), *final = base_path_join(dir, r->symbol);
    if (!tmp || !final)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    else if (!mkdtemp(tmp))
        st = byocl_error_set(err, BYOCL_ERR_IO, "cannot create a folder in %s: %s", dir,
                             strerror(errno));
    else if ((st = write_files(cap, r, &info, tmp, err)) == BYOCL_OK &&
             (st = open_up(tmp, err)) == BYOCL_OK)
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
