/* Byte caps on tensor data: one tensor and all of them together, from the defaults, the
 * environment or byocl_limits_set, and the count of bytes in use they are checked against. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "limits_impl.h"

static _Atomic uint64_t max_tensor_bytes = BYOCL_DEFAULT_MAX_TENSOR_BYTES;
static _Atomic uint64_t max_total_bytes = BYOCL_DEFAULT_MAX_TOTAL_BYTES;
static _Atomic uint64_t bytes_in_use;

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static byocl_error env_error; /* status BYOCL_OK unless a variable was malformed */
static atomic_bool env_overridden; /* byocl_limits_set was called: env_error no longer counts */

bool byocl_limits_parse_bytes(const char *text, uint64_t *out)
{
    if (!text || *text < '0' || *text > '9')
        return false;
    errno = 0;
    char *end;
    unsigned long long n = strtoull(text, &end, 10);
    if (errno == ERANGE)
        return false;
    static const char suffixes[] = "KMGT";
    int shift = 0;
    if (*end) {
        const char *at = strchr(suffixes, *end);
        if (!at || end[1])
            return false;
        shift = 10 * (int)(at - suffixes + 1);
    }
    if (n > (UINT64_MAX >> shift))
        return false;
    *out = (uint64_t)n << shift;
    return true;
}

static void read_env_var(const char *name, _Atomic uint64_t *limit)
{
    const char *text = getenv(name);
    uint64_t value;
    if (!text)
        return;
    if (byocl_limits_parse_bytes(text, &value))
        atomic_store(limit, value);
    else if (env_error.status == BYOCL_OK)
        byocl_error_set(&env_error, BYOCL_ERR_INVALID,
                        "%s='%s' is not a byte count (e.g. 1048576, 512M or 4G; 0 for no limit)",
                        name, text);
}

static void read_env(void)
{
    read_env_var(BYOCL_MAX_TENSOR_BYTES_ENV, &max_tensor_bytes);
    read_env_var(BYOCL_MAX_TOTAL_BYTES_ENV, &max_total_bytes);
}

/* The environment's error, once (it is read before the first use of the limits). */
static byocl_status env_status(byocl_error *err)
{
    pthread_once(&env_once, read_env);
    if (env_error.status == BYOCL_OK || atomic_load(&env_overridden))
        return BYOCL_OK;
    if (err)
        *err = env_error;
    return env_error.status;
}

byocl_status byocl_limits_get(byocl_limits *out, byocl_error *err)
{
    byocl_status st = env_status(err);
    out->max_tensor_bytes = atomic_load(&max_tensor_bytes);
    out->max_total_bytes = atomic_load(&max_total_bytes);
    return st;
}

void byocl_limits_set(const byocl_limits *limits)
{
    pthread_once(&env_once, read_env);
    atomic_store(&env_overridden, true);
    atomic_store(&max_tensor_bytes, limits->max_tensor_bytes);
    atomic_store(&max_total_bytes, limits->max_total_bytes);
}

uint64_t byocl_limits_bytes_in_use(void) { return atomic_load(&bytes_in_use); }

byocl_status base_limits_reserve(uint64_t bytes, uint64_t largest, const char *what,
                                 byocl_error *err)
{
    byocl_status st = env_status(err);
    if (st != BYOCL_OK)
        return st;
    uint64_t one = atomic_load(&max_tensor_bytes), all = atomic_load(&max_total_bytes);
    if (one && largest > one)
        return byocl_error_set(err, BYOCL_ERR_NOMEM,
                               "%s: %s%" PRIu64 " bytes is over the limit of %" PRIu64
                               " bytes for one tensor (%s)",
                               what, largest == bytes ? "" : "a buffer of ", largest, one,
                               BYOCL_MAX_TENSOR_BYTES_ENV);
    uint64_t used = atomic_load(&bytes_in_use);
    for (;;) {
        if (all && (bytes > all || used > all - bytes))
            return byocl_error_set(err, BYOCL_ERR_NOMEM,
                                   "%s: %" PRIu64 " more bytes with %" PRIu64
                                   " in use is over the limit of %" PRIu64
                                   " bytes in all (%s)",
                                   what, bytes, used, all, BYOCL_MAX_TOTAL_BYTES_ENV);
        if (atomic_compare_exchange_weak(&bytes_in_use, &used, used + bytes))
            return BYOCL_OK;
    }
}

void base_limits_release(uint64_t bytes) { atomic_fetch_sub(&bytes_in_use, bytes); }
