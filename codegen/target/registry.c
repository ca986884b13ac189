/* The target registry: targets registered by name, kept in registration order.
 *
 * Each entry is allocated on its own, so that the pointer byocl_target_find returns stays
 * valid while other targets come and go. The registry owns copies of the struct and of
 * the name; the target's ctx stays the target's, handed back to `release` once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target_impl.h"

typedef struct target_entry {
    byocl_target_i iface; /* iface.name points at `name` below */
    char name[BYOCL_TARGET_NAME_MAX];
} target_entry;

static target_entry **registry;
static int registry_count, registry_cap;

static bool is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
}

byocl_status target_check_name(const char *name, byocl_error *err)
{
    if (!name || !*name)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "a target needs a name");
    size_t len = strnlen(name, BYOCL_TARGET_NAME_MAX);
    if (len >= BYOCL_TARGET_NAME_MAX)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "target name \"%.20s...\" is too long (at most %d characters)",
                               name, BYOCL_TARGET_NAME_MAX - 1);
    for (size_t k = 0; k < len; k++)
        if (!is_name_char(name[k])) {
            unsigned char c = (unsigned char)name[k];
            char shown[16];
            if (c >= 0x20 && c < 0x7f)
                snprintf(shown, sizeof shown, "'%c'", c);
            else
                snprintf(shown, sizeof shown, "byte 0x%02x", c);
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "bad target name \"%s\": %s at position %zu; a target "
                                   "name has letters, digits and '_' only",
                                   name, shown, k);
        }
    return BYOCL_OK;
}

static int find_index(const char *name)
{
    for (int i = 0; name && i < registry_count; i++)
        if (strcmp(registry[i]->name, name) == 0)
            return i;
    return -1;
}

char *target_list_names(char *buf, size_t len)
{
    size_t at = 0;
    if (len == 0)
        return buf;
    snprintf(buf, len, "none");
    for (int i = 0; i < registry_count && at < len; i++) {
        int w = snprintf(buf + at, len - at, "%s%s", i ? ", " : "", registry[i]->name);
        at += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

byocl_status byocl_target_register(const byocl_target_i *target, byocl_error *err)
{
    if (!target)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_target_register: no target given");
    byocl_status st = target_check_name(target->name, err);
    if (st != BYOCL_OK)
        return st;
    if (target->api_version != BYOCL_TARGET_API_VERSION)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "target \"%s\" was built for target API version %u; this byocl "
                               "has version %u",
                               target->name, (unsigned)target->api_version,
                               (unsigned)BYOCL_TARGET_API_VERSION);
    if (!target->supports)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "target \"%s\" has no supports function",
                               target->name);
    if (find_index(target->name) >= 0)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "a target named \"%s\" is already registered", target->name);
    if (registry_count == registry_cap) {
        int cap = registry_cap ? 2 * registry_cap : 8;
        target_entry **grown = realloc(registry, sizeof *grown * (size_t)cap);
        if (!grown)
            return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory registering a target");
        registry = grown;
        registry_cap = cap;
    }
    target_entry *e = malloc(sizeof *e);
    if (!e)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory registering a target");
    e->iface = *target;
    snprintf(e->name, sizeof e->name, "%s", target->name);
    e->iface.name = e->name;
    registry[registry_count++] = e;
    return BYOCL_OK;
}

/* Takes entry i out of the registry, then lets the target release its ctx. */
static void remove_at(int i)
{
    target_entry *e = registry[i];
    memmove(&registry[i], &registry[i + 1], sizeof registry[0] * (size_t)(registry_count - i - 1));
    registry_count--;
    if (e->iface.release)
        e->iface.release(e->iface.ctx);
    free(e);
}

byocl_status byocl_target_unregister(const char *name, byocl_error *err)
{
    int i = find_index(name);
    if (i < 0) {
        char known[512];
        return byocl_error_set(err, BYOCL_ERR_NOT_FOUND,
                               "no target named \"%s\" is registered (registered: %s)",
                               name ? name : "(null)",
                               target_list_names(known, sizeof known));
    }
    remove_at(i);
    return BYOCL_OK;
}

const byocl_target_i *byocl_target_find(const char *name)
{
    int i = find_index(name);
    return i >= 0 ? &registry[i]->iface : NULL;
}

int byocl_target_count(void) { return registry_count; }

const byocl_target_i *byocl_target_at(int index)
{
    return index >= 0 && index < registry_count ? &registry[index]->iface : NULL;
}

void byocl_target_registry_reset(void)
{
    while (registry_count > 0)
        remove_at(registry_count - 1);
    free(registry);
    registry = NULL;
    registry_cap = 0;
}
