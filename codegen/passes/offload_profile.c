/* Reading an offload profile: the regions[] of `byocl bench --json`, each region's name
 * and its time on the host and offloaded, for the keep_on_host pass (keep_on_host.c). */
#include <stdlib.h>
#include <string.h>

#include "base/file_util.h"
#include "base/json.h"
#include "byocl/passes.h"

void byocl_offload_profile_free(byocl_region_timing *profile, int n)
{
    for (int i = 0; profile && i < n; i++)
        free((char *)profile[i].symbol);
    free(profile);
}

/* Member `key` of region i: a number >= 0. */
static byocl_status time_of(const char *path, const byocl_json *region, int i, const char *key,
                            double *out, byocl_error *err)
{
    const byocl_json *v = base_json_get(region, key);
    if (!v || v->kind != BYOCL_JSON_NUMBER || !(v->number >= 0))
        return byocl_error_set(err, BYOCL_ERR_PARSE,
                               "%s: regions[%d] has no \"%s\" (a time in ms >= 0), as byocl "
                               "bench --json writes it",
                               path, i, key);
    *out = v->number;
    return BYOCL_OK;
}

byocl_status byocl_offload_profile_read(const char *path, byocl_region_timing **out, int *n,
                                        byocl_error *err)
{
    *out = NULL;
    *n = 0;
    void *text = NULL;
    size_t len = 0;
    byocl_json *doc = NULL;
    byocl_status st = base_file_read_all(path, &text, &len, err);
    if (st == BYOCL_OK)
        st = base_json_parse(text, len, path, &doc, err);
    free(text);
    if (st != BYOCL_OK)
        return st;
    const byocl_json *regions = doc->kind == BYOCL_JSON_OBJECT ? base_json_get(doc, "regions")
                                                               : NULL;
    if (!regions || regions->kind != BYOCL_JSON_ARRAY) {
        base_json_free(doc);
        return byocl_error_set(err, BYOCL_ERR_PARSE,
                               "%s: no \"regions\" array: an offload profile is what byocl "
                               "bench --json writes",
                               path);
    }
    int count = regions->n;
    byocl_region_timing *profile = calloc((size_t)count + 1, sizeof *profile);
    if (!profile)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory reading %s", path);
    for (int i = 0; st == BYOCL_OK && i < count; i++) {
        const byocl_json *r = &regions->items[i];
        const byocl_json *name = r->kind == BYOCL_JSON_OBJECT ? base_json_get(r, "name") : NULL;
        if (!name || name->kind != BYOCL_JSON_STRING) {
            st = byocl_error_set(err, BYOCL_ERR_PARSE,
                                 "%s: regions[%d] has no \"name\" (the region's symbol)", path,
                                 i);
            break;
        }
        if ((st = time_of(path, r, i, "host_ms", &profile[i].host_ms, err)) != BYOCL_OK ||
            (st = time_of(path, r, i, "offloaded_ms", &profile[i].offloaded_ms, err)) !=
                BYOCL_OK)
            break;
        if (!(profile[i].symbol = strdup(name->string)))
            st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory reading %s", path);
    }
    base_json_free(doc);
    if (st != BYOCL_OK) {
        byocl_offload_profile_free(profile, count);
        return st;
    }
    *out = profile;
    *n = count;
    return BYOCL_OK;
}
