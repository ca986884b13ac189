/* A target's devices, and picking one by index or by name ("--device 1", "--device pocl"). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "target_impl.h"

const char *byocl_device_kind_name(byocl_device_kind kind)
{
    switch (kind) {
    case BYOCL_DEVICE_CPU: return "CPU";
    case BYOCL_DEVICE_GPU: return "GPU";
    case BYOCL_DEVICE_ACCELERATOR: return "accelerator";
    case BYOCL_DEVICE_OTHER: break;
    }
    return "other";
}

byocl_status byocl_target_devices(const char *name, byocl_device_info **out, int *n,
                                  byocl_error *err)
{
    *out = NULL;
    *n = 0;
    const byocl_target_i *t = byocl_target_find(name);
    if (!t) {
        char known[512];
        return byocl_error_set(err, BYOCL_ERR_NOT_FOUND,
                               "no target named '%s' is registered (registered: %s)",
                               name ? name : "(null)", target_list_names(known, sizeof known));
    }
    if (!t->devices)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "target %s has no devices to choose from", t->name);
    int count = 0;
    byocl_status st = t->devices(t->ctx, NULL, 0, &count, err);
    if (st != BYOCL_OK)
        return st;
    if (count <= 0)
        return byocl_error_set(err, BYOCL_ERR_NOT_FOUND, "target %s has no device", t->name);
    byocl_device_info *list = calloc((size_t)count, sizeof *list);
    if (!list)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    int filled = 0;
    st = t->devices(t->ctx, list, count, &filled, err);
    if (st != BYOCL_OK) {
        free(list);
        return st;
    }
    *out = list;
    *n = filled < count ? filled : count;
    return BYOCL_OK;
}

static bool contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return true;
    return false;
}

byocl_status byocl_target_device_find(const char *name, const char *spec, int *index,
                                      byocl_device_info *out, byocl_error *err)
{
    if (index)
        *index = -1;
    byocl_device_info *list;
    int n;
    byocl_status st = byocl_target_devices(name, &list, &n, err);
    if (st != BYOCL_OK)
        return st;
    int found = -1;
    if (spec && base_str_all_digits(spec)) {
        long k = strtol(spec, NULL, 10);
        found = k < n ? (int)k : -1;
    } else {
        for (int i = 0; spec && *spec && found < 0 && i < n; i++)
            if (contains_nocase(list[i].name, spec) || contains_nocase(list[i].description, spec))
                found = i;
    }
    if (found < 0) {
        char known[1024];
        byocl_strbuf sb;
        base_strbuf_init(&sb, known, sizeof known);
        for (int i = 0; i < n; i++)
            base_strbuf_printf(&sb, "%s%d: %s", i ? ", " : "", i, list[i].name);
        free(list);
        return byocl_error_set(err, BYOCL_ERR_NOT_FOUND,
                               "device '%s' names no device of target %s: give an index from 0 "
                               "to %d or a part of a device's name (devices: %s)",
                               spec ? spec : "", name, n - 1, known);
    }
    if (index)
        *index = found;
    if (out)
        *out = list[found];
    free(list);
    return BYOCL_OK;
}
