/* Reading one tensor from a file of any format byocl knows, chosen by extension: what
 * `byocl run --input NAME=FILE` and the conformance runner read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "byocl/tensor_io.h"

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

/* The one member of an .npz; more or fewer is an error listing what is there. */
static byocl_status read_single_npz_member(const char *path, byocl_tensor **out,
                                           byocl_error *err)
{
    byocl_params *p;
    byocl_status st = byocl_npz_read(path, &p, err);
    if (st != BYOCL_OK)
        return st;
    int n = byocl_params_count(p);
    if (n == 1) {
        *out = byocl_tensor_ref(byocl_params_tensor(p, 0));
    } else if (n == 0) {
        st = byocl_error_set(err, BYOCL_ERR_INVALID,
                             "%s: the .npz has no members; a tensor file needs exactly one",
                             path);
    } else {
        char list[1024];
        size_t used = 0;
        list[0] = '\0';
        for (int i = 0; i < n && used < sizeof list; i++) {
            int w = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                             byocl_params_name(p, i));
            used += w > 0 ? (size_t)w : 0;
        }
        st = byocl_error_set(err, BYOCL_ERR_INVALID,
                             "%s: the .npz has %d members (%s); a tensor file needs exactly one",
                             path, n, list);
    }
    byocl_params_free(p);
    return st;
}

byocl_status byocl_tensor_read_file(const char *path, byocl_tensor **out, byocl_error *err)
{
    *out = NULL;
    if (!path)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "no tensor file given");
    if (has_suffix(path, ".npy"))
        return byocl_npy_read(path, out, err);
    if (has_suffix(path, ".npz"))
        return read_single_npz_member(path, out, err);
    if (has_suffix(path, ".pb"))
        return byocl_pb_read(path, out, NULL, err);
    return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                           "%s: unsupported tensor file extension (supported: .npy, .npz, .pb)",
                           path);
}
