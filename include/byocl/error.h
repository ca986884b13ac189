/* byocl: status codes and the error record every public call fills. */
#ifndef BYOCL_ERROR_H
#define BYOCL_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum byocl_status {
    BYOCL_OK = 0,
    BYOCL_ERR_INVALID,     /* malformed IR, bad argument, bad attribute value */
    BYOCL_ERR_PARSE,       /* syntax error in a text file                      */
    BYOCL_ERR_TYPE,        /* type inference failed (shape, dtype, arity)      */
    BYOCL_ERR_IO,          /* file could not be read or written                */
    BYOCL_ERR_NOMEM,       /* allocation failed or exceeded a limit            */
    BYOCL_ERR_UNSUPPORTED, /* valid input that byocl does not handle (yet)     */
    BYOCL_ERR_NOT_FOUND,   /* a named thing (op, function, member) is missing  */
    BYOCL_ERR_RUNTIME      /* failure while running a model                    */
} byocl_status;

#define BYOCL_ERROR_MSG_MAX 2048

/* Filled by every function that returns a byocl_status other than BYOCL_OK.
 * Callers may pass NULL when they do not want the message. */
typedef struct byocl_error {
    byocl_status status;
    char msg[BYOCL_ERROR_MSG_MAX];
} byocl_error;

/* Record `status` with a printf-style message in `err` (if not NULL); returns `status`
 * so that `return byocl_error_set(err, BYOCL_ERR_INVALID, "...")` reads naturally. */
byocl_status byocl_error_set(byocl_error *err, byocl_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Prepend context ("in @main: ") to an error already recorded. */
void byocl_error_prefix(byocl_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

void byocl_error_clear(byocl_error *err);
const char *byocl_status_name(byocl_status status);

#ifdef __cplusplus
}
#endif
#endif
