/* On-disk caches of compiled code: folder, keys, checked entries (cache.h). */
#include "cache.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_util.h"

typedef struct entry_header {
    char magic[8];
    uint32_t format;
    uint32_t reserved;
    unsigned char key[BYOCL_SHA256_BYTES];
    uint64_t size; /* bytes of payload after the header */
    unsigned char digest[BYOCL_SHA256_BYTES]; /* of the payload */
} entry_header;

/* ------------------------------------------------------------------ stats */

typedef enum { EVENT_HIT, EVENT_MISS, EVENT_CORRUPT, EVENT_REJECTED, EVENT_STORED } event;

static void count(byocl_cache_kind *kind, event e)
{
    pthread_mutex_lock(&kind->lock);
    byocl_cache_stats *s = &kind->stats;
    int *field = e == EVENT_HIT       ? &s->hits
                 : e == EVENT_MISS    ? &s->misses
                 : e == EVENT_CORRUPT ? &s->corrupt
                 : e == EVENT_REJECTED ? &s->rejected
                                       : &s->stored;
    (*field)++;
    pthread_mutex_unlock(&kind->lock);
}

byocl_cache_stats base_cache_stats_get(byocl_cache_kind *kind)
{
    pthread_mutex_lock(&kind->lock);
    byocl_cache_stats s = kind->stats;
    pthread_mutex_unlock(&kind->lock);
    return s;
}

void base_cache_stats_reset(byocl_cache_kind *kind)
{
    pthread_mutex_lock(&kind->lock);
    memset(&kind->stats, 0, sizeof kind->stats);
    pthread_mutex_unlock(&kind->lock);
}

/* ----------------------------------------------------------------- folder */

static byocl_status make_dirs(const char *dir, byocl_error *err)
{
    char *path = strdup(dir);
    if (!path)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    byocl_status st = BYOCL_OK;
    for (char *p = path + 1; st == BYOCL_OK; p++) {
        bool end = *p == '\0';
        if (*p != '/' && !end)
            continue;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            st = byocl_error_set(err, BYOCL_ERR_IO, "cannot create the cache folder %s: %s",
                                 path, strerror(errno));
        if (end)
            break;
        *p = '/';
    }
    free(path);
    return st;
}

byocl_status base_cache_dir(const char *opt_dir, char **out, byocl_error *err)
{
    *out = NULL;
    const char *dir = opt_dir ? opt_dir : getenv("BYOCL_CACHE_DIR");
    char buf[4096];
    if (!dir) {
        const char *xdg = getenv("XDG_CACHE_HOME");
        const char *home = getenv("HOME");
        if (xdg && *xdg)
            snprintf(buf, sizeof buf, "%s/byocl", xdg);
        else if (home && *home)
            snprintf(buf, sizeof buf, "%s/.cache/byocl", home);
        else
            return BYOCL_OK; /* nowhere to keep it */
        dir = buf;
    }
    if (!*dir)
        return BYOCL_OK;
    byocl_status st = make_dirs(dir, err);
    if (st != BYOCL_OK)
        return st;
    if (!(*out = strdup(dir)))
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    return BYOCL_OK;
}

/* ------------------------------------------------------------------- keys */

void base_cache_key_begin(byocl_cache_hasher *h) { base_sha256_init(&h->sha); }

void base_cache_key_field(byocl_cache_hasher *h, const void *data, size_t len)
{
    unsigned char prefix[8];
    for (int i = 0; i < 8; i++)
        prefix[i] = (unsigned char)((uint64_t)len >> (8 * i));
    base_sha256_update(&h->sha, prefix, sizeof prefix);
    base_sha256_update(&h->sha, data, len);
}

void base_cache_key_string(byocl_cache_hasher *h, const char *s)
{
    base_cache_key_field(h, s ? s : "", s ? strlen(s) : 0);
}

void base_cache_key_end(byocl_cache_hasher *h, byocl_cache_key *key)
{
    base_sha256_final(&h->sha, key->bytes);
}

byocl_status base_cache_entry_path(const byocl_cache_kind *kind, const char *dir,
                                   const byocl_cache_key *key, char **out, byocl_error *err)
{
    size_t len = strlen(dir) + 1 + 2 * BYOCL_SHA256_BYTES + strlen(kind->suffix) + 1;
    if (!(*out = malloc(len)))
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    char *p = *out + snprintf(*out, len, "%s/", dir);
    for (int i = 0; i < BYOCL_SHA256_BYTES; i++)
        p += snprintf(p, 3, "%02x", key->bytes[i]);
    snprintf(p, len - (size_t)(p - *out), "%s", kind->suffix);
    return BYOCL_OK;
}

/* ---------------------------------------------------------------- entries */

static void digest_of(const void *payload, size_t size, unsigned char out[BYOCL_SHA256_BYTES])
{
    byocl_sha256 sha;
    base_sha256_init(&sha);
    base_sha256_update(&sha, payload, size);
    base_sha256_final(&sha, out);
}

void *base_cache_load(byocl_cache_kind *kind, const char *path, const byocl_cache_key *key,
                      size_t *size)
{
    *size = 0;
    struct stat sb;
    if (stat(path, &sb) != 0) {
        count(kind, EVENT_MISS);
        return NULL;
    }
    void *data = NULL;
    size_t len = 0;
    bool ok = base_file_read_all(path, &data, &len, NULL) == BYOCL_OK;
    entry_header h;
    ok = ok && len >= sizeof h;
    if (ok)
        memcpy(&h, data, sizeof h);
    unsigned char digest[BYOCL_SHA256_BYTES];
    ok = ok && memcmp(h.magic, kind->magic, sizeof h.magic) == 0 && h.format == kind->format &&
         memcmp(h.key, key->bytes, sizeof h.key) == 0 && h.size > 0 &&
         h.size == len - sizeof h;
    if (ok) {
        digest_of((unsigned char *)data + sizeof h, (size_t)h.size, digest);
        ok = memcmp(digest, h.digest, sizeof digest) == 0;
    }
    if (!ok) {
        free(data);
        unlink(path);
        count(kind, EVENT_CORRUPT);
        return NULL;
    }
    memmove(data, (unsigned char *)data + sizeof h, (size_t)h.size);
    *size = (size_t)h.size;
    return data;
}

void base_cache_accept(byocl_cache_kind *kind) { count(kind, EVENT_HIT); }

void base_cache_reject(byocl_cache_kind *kind, const char *path)
{
    unlink(path);
    count(kind, EVENT_REJECTED);
}

void base_cache_store(byocl_cache_kind *kind, const char *path, const byocl_cache_key *key,
                      const void *payload, size_t size)
{
    entry_header h = {.format = kind->format, .size = size};
    memcpy(h.magic, kind->magic, sizeof h.magic);
    memcpy(h.key, key->bytes, sizeof h.key);
    digest_of(payload, size, h.digest);
    byocl_file_part parts[2] = {{&h, sizeof h}, {payload, size}};
    if (base_file_write_atomic(path, parts, 2, NULL) == BYOCL_OK)
        count(kind, EVENT_STORED);
}
