/* The registry of built-in models (`builtin:NAME`): each is built with the builder API,
 * then type-checked and verified before anyone sees it. */
#include "byocl/models.h"

#include <stdio.h>
#include <string.h>

#include "byocl/passes.h"
#include "builtin_util.h"

typedef struct builtin_model {
    const char *name;
    const char *description;
    byocl_status (*build)(byocl_module *m, byocl_error *err);
} builtin_model;

static const builtin_model builtin_models[] = {
    {"seed",
     "the forum thread's conv2d + batch_norm + relu region for \"opencl\"; weights are "
     "parameters",
     builtin_build_seed},
    {"resnet18", "torchvision resnet18, data (1, 3, 224, 224) -> logits (1, 1000), random weights",
     builtin_build_resnet18},
    {"mobilenet_v2",
     "torchvision mobilenet_v2, data (1, 3, 224, 224) -> logits (1, 1000), random weights",
     builtin_build_mobilenet_v2},
};

enum { BUILTIN_COUNT = (int)(sizeof builtin_models / sizeof builtin_models[0]) };

int byocl_builtin_count(void)
{
    return BUILTIN_COUNT;
}

const char *byocl_builtin_name(int index)
{
    return index >= 0 && index < BUILTIN_COUNT ? builtin_models[index].name : NULL;
}

const char *byocl_builtin_description(int index)
{
    return index >= 0 && index < BUILTIN_COUNT ? builtin_models[index].description : NULL;
}

static byocl_status unknown_model(const char *name, byocl_error *err)
{
    char known[256] = "";
    size_t used = 0;
    for (int k = 0; k < BUILTIN_COUNT; k++) {
        int n = snprintf(known + used, sizeof known - used, "%s%s", k ? ", " : "",
                         builtin_models[k].name);
        if (n < 0 || (size_t)n >= sizeof known - used)
            break;
        used += (size_t)n;
    }
    return byocl_error_set(err, BYOCL_ERR_NOT_FOUND, "unknown built-in model '%s' (known: %s)",
                           name, known);
}

byocl_status byocl_builtin_build(const char *name, byocl_module **out, byocl_error *err)
{
    if (!out || !name)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "byocl_builtin_build: name and out must not be NULL");
    *out = NULL;
    const builtin_model *model = NULL;
    for (int k = 0; k < BUILTIN_COUNT; k++)
        if (strcmp(builtin_models[k].name, name) == 0)
            model = &builtin_models[k];
    if (!model)
        return unknown_model(name, err);

    byocl_module *m = byocl_module_new();
    if (!m)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory building builtin:%s", name);
    /* the builders need an error record even when the caller passes none */
    byocl_error local;
    byocl_error *e = err ? err : &local;
    byocl_status st = model->build(m, e);
    if (st == BYOCL_OK)
        st = byocl_infer_types(m, e);
    if (st == BYOCL_OK)
        st = byocl_verify(m, true, e);
    if (st != BYOCL_OK) {
        byocl_error_prefix(e, "builtin:%s: ", name);
        byocl_module_free(m);
        return st;
    }
    *out = m;
    return BYOCL_OK;
}
