/* The timed parts of a compiled model's region steps (byocl_compiled_step_part), read from
 * the steps' runtime modules (runtime/module/rtmod_parts.c). */
#include "executor_impl.h"

static const byocl_xstep *region_step(const byocl_compiled *c, int index)
{
    if (!c || index < 0 || index >= c->n_steps || c->steps[index].kind != BYOCL_STEP_REGION)
        return NULL;
    return &c->steps[index];
}

int byocl_compiled_num_step_parts(const byocl_compiled *c, int index)
{
    const byocl_xstep *s = region_step(c, index);
    return s ? byocl_rtmod_num_parts(s->rtmod, s->symbol) : 0;
}

byocl_status byocl_compiled_step_part(const byocl_compiled *c, int index, int part,
                                      byocl_region_part *out, byocl_error *err)
{
    const byocl_xstep *s = region_step(c, index);
    if (!s)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "step %d is not a region step of the compiled model", index);
    if (!byocl_rtmod_part(s->rtmod, s->symbol, part, out))
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "part %d is out of range: step %d (%s) has %d timed part%s", part,
                               index, s->name, byocl_rtmod_num_parts(s->rtmod, s->symbol),
                               byocl_rtmod_num_parts(s->rtmod, s->symbol) == 1 ? "" : "s");
    return BYOCL_OK;
}

void byocl_compiled_reset_parts(byocl_compiled *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->n_rtmods; i++)
        byocl_rtmod_reset_parts(c->rtmods[i]);
}
