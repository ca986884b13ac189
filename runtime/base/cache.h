/* On-disk caches of compiled code (OpenCL program binaries, host object code): where they
 * live, how entries are keyed, and entries that are written atomically and checked when
 * read.
 *
 * The folder is the option's, else $BYOCL_CACHE_DIR, else $XDG_CACHE_HOME/byocl, else
 * $HOME/.cache/byocl; "" turns caching off. An entry is DIR/<64 hex digits><ext>, the
 * SHA-256 of everything the payload depends on (byocl_cache_key_*). Its file is a header
 * (magic, format, the key again, the payload's size and SHA-256) and the payload. It is
 * written to a temporary file and renamed into place, so readers see a whole entry or
 * none; an entry that fails a check (short, another key, a digest that does not match) is
 * deleted and counted as corrupt, and its user rebuilds the payload. A cache that cannot
 * be written only costs the next build: writing never fails a build. */
#ifndef BYOCL_CACHE_H
#define BYOCL_CACHE_H

#include <pthread.h>
#include <stddef.h>

#include "byocl/error.h"
#include "sha256.h"

/* What a cache did, counted over the process (tests and benchmarks read it). */
typedef struct byocl_cache_stats {
    int hits;       /* a valid entry was loaded and used */
    int misses;     /* no entry: built (then stored) */
    int corrupt;    /* an entry failed its checks (size, key, digest) and was rebuilt */
    int rejected;   /* its user refused a valid-looking payload: deleted and rebuilt */
    int stored;     /* entries written */
} byocl_cache_stats;

/* One kind of entry: its magic (8 characters), format number, file name suffix, and the
 * statistics of its cache. One static instance per user: BYOCL_CACHE_KIND_INIT. */
typedef struct byocl_cache_kind {
    char magic[8];
    unsigned format;
    const char *suffix;
    pthread_mutex_t lock;
    byocl_cache_stats stats;
} byocl_cache_kind;

#define BYOCL_CACHE_KIND_INIT(magic8, format_number, file_suffix)                             \
    {{magic8[0], magic8[1], magic8[2], magic8[3], magic8[4], magic8[5], magic8[6], magic8[7]}, \
     (format_number), (file_suffix), PTHREAD_MUTEX_INITIALIZER, {0, 0, 0, 0, 0}}

byocl_cache_stats base_cache_stats_get(byocl_cache_kind *kind);
void base_cache_stats_reset(byocl_cache_kind *kind);

/* The cache folder for `opt_dir` (see above), created when missing; *out is malloc'ed,
 * NULL when caching is off or there is no place for it. */
byocl_status base_cache_dir(const char *opt_dir, char **out, byocl_error *err);

/* A key: the SHA-256 of fields, each length-prefixed so that moving bytes from one field
 * to the next changes the key. */
typedef struct byocl_cache_key {
    unsigned char bytes[BYOCL_SHA256_BYTES];
} byocl_cache_key;

typedef struct byocl_cache_hasher {
    byocl_sha256 sha;
} byocl_cache_hasher;

void base_cache_key_begin(byocl_cache_hasher *h);
void base_cache_key_field(byocl_cache_hasher *h, const void *data, size_t len);
void base_cache_key_string(byocl_cache_hasher *h, const char *s); /* NULL hashes as "" */
void base_cache_key_end(byocl_cache_hasher *h, byocl_cache_key *key);

/* DIR/<key in hex><suffix>, malloc'ed. */
byocl_status base_cache_entry_path(const byocl_cache_kind *kind, const char *dir,
                                   const byocl_cache_key *key, char **out, byocl_error *err);

/* The payload of the valid entry at `path` (malloc'ed, *size bytes), or NULL: no entry (a
 * miss) or a corrupt one (deleted). Counts the miss or the corruption; the caller counts
 * the hit (base_cache_accept) or refuses the payload (base_cache_reject). */
void *base_cache_load(byocl_cache_kind *kind, const char *path, const byocl_cache_key *key,
                      size_t *size);
void base_cache_accept(byocl_cache_kind *kind);
void base_cache_reject(byocl_cache_kind *kind, const char *path);

/* Writes the entry atomically and counts it; failures are ignored (see above). */
void base_cache_store(byocl_cache_kind *kind, const char *path, const byocl_cache_key *key,
                      const void *payload, size_t size);

#endif
