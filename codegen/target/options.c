/* Target options ("TARGET.KEY=VALUE") and the per-target view a compile receives.
 *
 * A set is a small list of owned strings: models have a handful of options, so lookups are
 * linear. Checking is separate from parsing, so that a program can collect options before
 * the plugins that define their targets are loaded. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "target_impl.h"

typedef struct option_entry {
    char *target, *key, *value;
} option_entry;

struct byocl_target_options {
    option_entry *entries;
    int n, cap;
};

byocl_status byocl_target_options_new(byocl_target_options **out, byocl_error *err)
{
    *out = calloc(1, sizeof **out);
    return *out ? BYOCL_OK : byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
}

static void entry_free(option_entry *e)
{
    free(e->target);
    free(e->key);
    free(e->value);
}

void byocl_target_options_free(byocl_target_options *opts)
{
    if (!opts)
        return;
    for (int i = 0; i < opts->n; i++)
        entry_free(&opts->entries[i]);
    free(opts->entries);
    free(opts);
}

static bool is_key(const char *key)
{
    if (!key || !*key)
        return false;
    for (const char *c = key; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_'))
            return false;
    return true;
}

static option_entry *find_entry(const byocl_target_options *opts, const char *target,
                                const char *key)
{
    for (int i = 0; opts && i < opts->n; i++)
        if (strcmp(opts->entries[i].target, target) == 0 && strcmp(opts->entries[i].key, key) == 0)
            return &opts->entries[i];
    return NULL;
}

byocl_status byocl_target_options_set(byocl_target_options *opts, const char *target,
                                      const char *key, const char *value, byocl_error *err)
{
    if (!opts || !value)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_target_options_set: %s",
                               opts ? "no value given" : "no option set given");
    byocl_status st = target_check_name(target, err);
    if (st != BYOCL_OK) {
        byocl_error_prefix(err, "target option %s.%s: ", target ? target : "",
                           key ? key : "");
        return st;
    }
    if (!is_key(key))
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "target option %s.%s: a key has letters, digits and '_' only",
                               target, key ? key : "");
    char *copy = strdup(value);
    if (!copy)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    option_entry *e = find_entry(opts, target, key);
    if (e) { /* the last value given wins, as on a command line */
        free(e->value);
        e->value = copy;
        return BYOCL_OK;
    }
    if (opts->n == opts->cap) {
        int cap = opts->cap ? 2 * opts->cap : 4;
        option_entry *grown = realloc(opts->entries, sizeof *grown * (size_t)cap);
        if (!grown) {
            free(copy);
            return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
        }
        opts->entries = grown;
        opts->cap = cap;
    }
    option_entry n = {strdup(target), strdup(key), copy};
    if (!n.target || !n.key) {
        entry_free(&n);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    }
    opts->entries[opts->n++] = n;
    return BYOCL_OK;
}

byocl_status byocl_target_options_parse(byocl_target_options *opts, const char *text,
                                        byocl_error *err)
{
    if (!text)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_target_options_parse: no text");
    const char *eq = strchr(text, '=');
    const char *dot = strchr(text, '.');
    if (!eq || !dot || dot > eq)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "target option '%s' is not TARGET.KEY=VALUE (e.g. "
                               "opencl.profile=on)",
                               text);
    char target[BYOCL_TARGET_NAME_MAX + 1], key[128];
    size_t target_len = (size_t)(dot - text), key_len = (size_t)(eq - dot - 1);
    if (target_len >= sizeof target || key_len >= sizeof key)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "target option '%.40s...' is too long",
                               text);
    memcpy(target, text, target_len);
    target[target_len] = '\0';
    memcpy(key, dot + 1, key_len);
    key[key_len] = '\0';
    return byocl_target_options_set(opts, target, key, eq + 1, err);
}

const char *byocl_target_options_get(const byocl_target_options *opts, const char *target,
                                     const char *key)
{
    const option_entry *e = target && key ? find_entry(opts, target, key) : NULL;
    return e ? e->value : NULL;
}

int byocl_target_options_count(const byocl_target_options *opts)
{
    return opts ? opts->n : 0;
}

/* ------------------------------------------------------------------ checks */

static const byocl_target_option *find_option(const byocl_target_i *t, const char *key)
{
    for (const byocl_target_option *o = t->options; o && o->key; o++)
        if (strcmp(o->key, key) == 0)
            return o;
    return NULL;
}

/* "device, profile, cache_dir" or "none". */
static void list_keys(const byocl_target_i *t, char *buf, size_t len)
{
    byocl_strbuf sb;
    base_strbuf_init(&sb, buf, len);
    int n = 0;
    if (t->devices)
        base_strbuf_printf(&sb, "%sdevice", n++ ? ", " : "");
    for (const byocl_target_option *o = t->options; o && o->key; o++)
        base_strbuf_printf(&sb, "%s%s", n++ ? ", " : "", o->key);
    if (n == 0)
        base_strbuf_printf(&sb, "none");
}

bool target_option_parse_bool(const char *value, bool *out)
{
    static const char *const yes[] = {"on", "true", "1", "yes"};
    static const char *const no[] = {"off", "false", "0", "no"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (strcasecmp(value, yes[i]) == 0)
            return *out = true, true;
        if (strcasecmp(value, no[i]) == 0)
            return *out = false, true;
    }
    return false;
}

/* Whether `value` is one of the '|'-separated `choices`. */
static bool is_choice(const char *choices, const char *value)
{
    size_t len = strlen(value);
    for (const char *c = choices; c && *c;) {
        const char *end = strchr(c, '|');
        size_t n = end ? (size_t)(end - c) : strlen(c);
        if (n == len && strncmp(c, value, n) == 0)
            return true;
        c = end ? end + 1 : c + n;
    }
    return false;
}

static byocl_status check_value(const byocl_target_option *o, const char *value,
                                byocl_error *err)
{
    bool flag;
    char *end = NULL;
    switch (o->kind) {
    case BYOCL_OPTION_STRING:
        return BYOCL_OK;
    case BYOCL_OPTION_BOOL:
        if (target_option_parse_bool(value, &flag))
            return BYOCL_OK;
        return byocl_error_set(err, BYOCL_ERR_INVALID, "'%s' is not on or off", value);
    case BYOCL_OPTION_INT:
        if (*value && (strtoll(value, &end, 10), *end == '\0'))
            return BYOCL_OK;
        return byocl_error_set(err, BYOCL_ERR_INVALID, "'%s' is not an integer", value);
    case BYOCL_OPTION_CHOICE:
        if (is_choice(o->choices, value))
            return BYOCL_OK;
        return byocl_error_set(err, BYOCL_ERR_INVALID, "'%s' is not one of %s", value,
                               o->choices ? o->choices : "(no choices)");
    }
    return byocl_error_set(err, BYOCL_ERR_INVALID, "the option has an unknown kind %d",
                           (int)o->kind);
}

/* Checks one option; `device` (may be NULL) receives a device option's index. */
static byocl_status check_entry(const option_entry *e, int *device, byocl_error *err)
{
    const byocl_target_i *t = byocl_target_find(e->target);
    char known[512];
    if (!t)
        return byocl_error_set(err, BYOCL_ERR_NOT_FOUND,
                               "target option %s.%s: no target named '%s' is registered "
                               "(registered: %s)",
                               e->target, e->key, e->target,
                               target_list_names(known, sizeof known));
    byocl_status st = BYOCL_OK;
    if (strcmp(e->key, "device") == 0 && t->devices) {
        int index = -1;
        st = byocl_target_device_find(e->target, e->value, &index, NULL, err);
        if (st == BYOCL_OK && device)
            *device = index;
    } else if (!find_option(t, e->key)) {
        list_keys(t, known, sizeof known);
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "target option %s.%s: target %s has no option '%s' (options: %s)",
                               e->target, e->key, e->target, e->key, known);
    } else {
        st = check_value(find_option(t, e->key), e->value, err);
    }
    if (st != BYOCL_OK)
        byocl_error_prefix(err, "target option %s.%s: ", e->target, e->key);
    return st;
}

byocl_status byocl_target_options_check(const byocl_target_options *opts, byocl_error *err)
{
    for (int i = 0; opts && i < opts->n; i++) {
        byocl_status st = check_entry(&opts->entries[i], NULL, err);
        if (st != BYOCL_OK)
            return st;
    }
    return BYOCL_OK;
}

/* ------------------------------------------------------------------ config */

byocl_status target_config_init(byocl_target_config *cfg, const char *target,
                                const byocl_target_options *opts, byocl_error *err)
{
    *cfg = (byocl_target_config){.target = target, .options = opts, .device = -1};
    for (int i = 0; opts && i < opts->n; i++) {
        if (strcmp(opts->entries[i].target, target) != 0)
            continue;
        byocl_status st = check_entry(&opts->entries[i], &cfg->device, err);
        if (st != BYOCL_OK)
            return st;
    }
    return BYOCL_OK;
}

const char *byocl_target_config_get(const byocl_target_config *cfg, const char *key)
{
    return cfg ? byocl_target_options_get(cfg->options, cfg->target, key) : NULL;
}

bool byocl_target_config_bool(const byocl_target_config *cfg, const char *key, bool fallback)
{
    const char *value = byocl_target_config_get(cfg, key);
    bool out;
    return value && target_option_parse_bool(value, &out) ? out : fallback;
}

int byocl_target_config_device(const byocl_target_config *cfg)
{
    return cfg ? cfg->device : -1;
}
