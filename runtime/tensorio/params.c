/* Named tensor collections: a small ordered map (insertion order is file order). */
#include <stdlib.h>
#include <string.h>

#include "byocl/tensor_io.h"

struct byocl_params {
    int n, cap;
    char **names;
    byocl_tensor **tensors; /* one reference each */
};

byocl_params *byocl_params_new(void)
{
    return calloc(1, sizeof(byocl_params));
}

void byocl_params_free(byocl_params *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->n; i++) {
        free(p->names[i]);
        byocl_tensor_unref(p->tensors[i]);
    }
    free(p->names);
    free(p->tensors);
    free(p);
}

int byocl_params_count(const byocl_params *p) { return p ? p->n : 0; }

const char *byocl_params_name(const byocl_params *p, int index)
{
    return p && index >= 0 && index < p->n ? p->names[index] : NULL;
}

byocl_tensor *byocl_params_tensor(const byocl_params *p, int index)
{
    return p && index >= 0 && index < p->n ? p->tensors[index] : NULL;
}

static int params_index(const byocl_params *p, const char *name)
{
    for (int i = 0; p && name && i < p->n; i++)
        if (strcmp(p->names[i], name) == 0)
            return i;
    return -1;
}

byocl_tensor *byocl_params_find(const byocl_params *p, const char *name)
{
    int i = params_index(p, name);
    return i < 0 ? NULL : p->tensors[i];
}

byocl_status byocl_params_set(byocl_params *p, const char *name, byocl_tensor *t,
                              byocl_error *err)
{
    if (!p || !t)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_params_set: no params or tensor");
    if (!name || !*name)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "a parameter needs a non-empty name");
    int i = params_index(p, name);
    if (i >= 0) {
        byocl_tensor_ref(t); /* before unref: t may be the tensor it replaces */
        byocl_tensor_unref(p->tensors[i]);
        p->tensors[i] = t;
        return BYOCL_OK;
    }
    if (p->n == p->cap) {
        int cap = p->cap ? p->cap * 2 : 8;
        char **names = realloc(p->names, (size_t)cap * sizeof *names);
        if (names)
            p->names = names;
        byocl_tensor **tensors = names ? realloc(p->tensors, (size_t)cap * sizeof *tensors) : NULL;
        if (!tensors)
            return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory adding parameter %s",
                                   name);
        p->tensors = tensors;
        p->cap = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory adding parameter %s", name);
    p->names[p->n] = copy;
    p->tensors[p->n] = byocl_tensor_ref(t);
    p->n++;
    return BYOCL_OK;
}
