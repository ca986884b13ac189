/* `--shape NAME=1x3x224x224`: the shape of a model input whose dimensions the model leaves
 * open (see byocl_load_options). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/frontend.h"

byocl_status byocl_input_shape_parse(const char *text, char **name, byocl_shape *shape,
                                     byocl_error *err)
{
    *name = NULL;
    const char *eq = text ? strrchr(text, '=') : NULL;
    if (!eq || eq == text)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "'%s': expected NAME=DIMS, e.g. data=1x3x224x224",
                               text ? text : "");
    byocl_shape s = {0};
    const char *p = eq + 1;
    for (;;) {
        if (!isdigit((unsigned char)*p))
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "'%s': the dimensions must be non-negative integers "
                                   "separated by 'x', e.g. data=1x3x224x224",
                                   text);
        if (s.rank == BYOCL_MAX_RANK)
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "'%s': more than %d dimensions", text, BYOCL_MAX_RANK);
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (errno)
            return byocl_error_set(err, BYOCL_ERR_INVALID, "'%s': dimension %d is too large",
                                   text, s.rank);
        s.dims[s.rank++] = v;
        p = end;
        if (*p == '\0')
            break;
        if (*p != 'x' && *p != ',')
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "'%s': the dimensions must be non-negative integers "
                                   "separated by 'x', e.g. data=1x3x224x224",
                                   text);
        p++;
    }
    size_t len = (size_t)(eq - text);
    char *copy = malloc(len + 1);
    if (!copy)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    memcpy(copy, text, len);
    copy[len] = '\0';
    *name = copy;
    *shape = s;
    return BYOCL_OK;
}
