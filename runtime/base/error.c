/* Error records: what went wrong and where, filled by every failing call. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "byocl/error.h"

byocl_status byocl_error_set(byocl_error *err, byocl_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->status = status;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return status;
}

void byocl_error_prefix(byocl_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    size_t plen = strlen(prefix);
    size_t mlen = strnlen(err->msg, sizeof err->msg - 1);
    if (plen + mlen >= sizeof err->msg)
        mlen = sizeof err->msg - 1 - plen;
    memmove(err->msg + plen, err->msg, mlen);
    memcpy(err->msg, prefix, plen);
    err->msg[plen + mlen] = '\0';
}

void byocl_error_clear(byocl_error *err)
{
    if (err) {
        err->status = BYOCL_OK;
        err->msg[0] = '\0';
    }
}

const char *byocl_status_name(byocl_status status)
{
    switch (status) {
    case BYOCL_OK: return "ok";
    case BYOCL_ERR_INVALID: return "invalid";
    case BYOCL_ERR_PARSE: return "parse error";
    case BYOCL_ERR_TYPE: return "type error";
    case BYOCL_ERR_IO: return "I/O error";
    case BYOCL_ERR_NOMEM: return "out of memory";
    case BYOCL_ERR_UNSUPPORTED: return "unsupported";
    case BYOCL_ERR_NOT_FOUND: return "not found";
    case BYOCL_ERR_RUNTIME: return "runtime error";
    }
    return "unknown status";
}
