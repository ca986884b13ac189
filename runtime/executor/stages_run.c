/* byocl_stages_run: the stages of a split model, one after the other on the reference
 * executor or on executors of the compiled stages, each fed from the pipeline inputs and
 * earlier stages' outputs as the wiring says. A stage's outputs are released once the last
 * stage that reads them has run. The pipeline (stages_pipeline.c) runs the same steps,
 * one worker per stage. */
#include <stdlib.h>

#include "byocl/reference.h"
#include "executor_impl.h"
#include "passes/split_impl.h"

/* Runs one stage on `ex` (NULL: the reference executor); *outs receives copies of its
 * outputs. */
static byocl_status run_stage(const split_stage *stage, byocl_executor *ex,
                              byocl_tensor *const *args, byocl_tensor ***outs, int *n_outs,
                              byocl_error *err)
{
    if (!ex)
        return byocl_reference_run(stage->mod, "main", args, stage->n_inputs, outs, n_outs,
                                   err);
    const byocl_function *fn = byocl_module_find(stage->mod, "main");
    byocl_status st = BYOCL_OK;
    for (int i = 0; i < stage->n_inputs && st == BYOCL_OK; i++)
        st = byocl_executor_set_input(ex, byocl_node_name(fn, byocl_function_param(fn, i)),
                                      args[i], err);
    if (st == BYOCL_OK)
        st = byocl_executor_run(ex, err);
    int n = st == BYOCL_OK ? byocl_executor_num_outputs(ex) : 0;
    byocl_tensor **copies = calloc((size_t)n + 1, sizeof *copies);
    if (st == BYOCL_OK && !copies)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n && st == BYOCL_OK; i++)
        st = byocl_executor_copy_output(ex, i, &copies[i], err);
    if (st != BYOCL_OK) {
        byocl_tensors_free(copies, n);
        return st;
    }
    *outs = copies;
    *n_outs = n;
    return BYOCL_OK;
}

byocl_status exec_stages_last_readers(const byocl_stages *s, int **out, byocl_error *err)
{
    int n = s->n_stages;
    int *last_reader = malloc((size_t)n * sizeof *last_reader);
    if (!last_reader)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (int k = 0; k < n; k++) {
        last_reader[k] = k;
        for (int j = k + 1; j < n; j++)
            for (int i = 0; i < s->stages[j].n_inputs; i++)
                if (s->stages[j].inputs[i].stage == k)
                    last_reader[k] = j;
    }
    *out = last_reader;
    return BYOCL_OK;
}

byocl_status exec_stages_step(const byocl_stages *s, int k, byocl_executor *ex,
                              const int *last_reader, byocl_tensor *const *inputs,
                              byocl_tensor ***outs, int *n_outs, byocl_error *err)
{
    const split_stage *stage = &s->stages[k];
    byocl_tensor **args = malloc((size_t)(stage->n_inputs ? stage->n_inputs : 1) * sizeof *args);
    if (!args)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (int i = 0; i < stage->n_inputs; i++) {
        const byocl_stage_input *in = &stage->inputs[i];
        args[i] = in->stage < 0 ? inputs[in->index] : outs[in->stage][in->index];
    }
    byocl_status st = run_stage(stage, ex, args, &outs[k], &n_outs[k], err);
    free(args);
    if (st == BYOCL_OK && n_outs[k] != stage->n_outputs)
        st = byocl_error_set(err, BYOCL_ERR_RUNTIME, "gave %d outputs, not %d", n_outs[k],
                             stage->n_outputs);
    if (st != BYOCL_OK)
        return st;
    for (int j = 0; j < k; j++)
        if (outs[j] && last_reader[j] == k) {
            byocl_tensors_free(outs[j], n_outs[j]);
            outs[j] = NULL;
        }
    return BYOCL_OK;
}

void exec_stages_outs_free(const byocl_stages *s, byocl_tensor ***outs, int *n_outs)
{
    for (int k = 0; outs && k < s->n_stages; k++)
        if (outs[k])
            byocl_tensors_free(outs[k], n_outs[k]);
    free(outs);
    free(n_outs);
}

byocl_status byocl_stages_run(const byocl_stages *s, byocl_tensor *const *inputs, int n_inputs,
                              byocl_stage_done_fn done, void *user, byocl_tensor ***outputs,
                              int *n_outputs, byocl_error *err)
{
    return byocl_stages_run_on(s, NULL, inputs, n_inputs, done, user, outputs, n_outputs, err);
}

/* The checks both runners make of their arguments. */
byocl_status exec_stages_check(const byocl_stages *s, int n_inputs, const void *inputs,
                               const void *outputs, const void *n_outputs, byocl_error *err)
{
    if (!s || !outputs || !n_outputs || (n_inputs > 0 && !inputs))
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "byocl_stages_run: stages, inputs and outputs are required");
    if (n_inputs != byocl_stages_num_inputs(s))
        return byocl_error_set(err, BYOCL_ERR_INVALID, "the stages take %d input%s, %d given",
                               byocl_stages_num_inputs(s),
                               byocl_stages_num_inputs(s) == 1 ? "" : "s", n_inputs);
    return BYOCL_OK;
}

byocl_status byocl_stages_run_on(const byocl_stages *s, byocl_executor *const *executors,
                                 byocl_tensor *const *inputs, int n_inputs,
                                 byocl_stage_done_fn done, void *user, byocl_tensor ***outputs,
                                 int *n_outputs, byocl_error *err)
{
    byocl_status st = exec_stages_check(s, n_inputs, inputs, outputs, n_outputs, err);
    if (st != BYOCL_OK)
        return st;
    *outputs = NULL;
    *n_outputs = 0;
    int n = s->n_stages;
    byocl_tensor ***outs = calloc((size_t)n, sizeof *outs); /* per stage, once it ran */
    int *n_outs = calloc((size_t)n, sizeof *n_outs);
    int *last_reader = NULL;
    if (!outs || !n_outs)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    if (st == BYOCL_OK)
        st = exec_stages_last_readers(s, &last_reader, err);
    for (int k = 0; k < n && st == BYOCL_OK; k++) {
        st = exec_stages_step(s, k, executors ? executors[k] : NULL, last_reader, inputs, outs,
                              n_outs, err);
        if (st != BYOCL_OK)
            byocl_error_prefix(err, "stage %d: ", k);
        else if (done)
            done(user, k);
    }
    if (st == BYOCL_OK) {
        *outputs = outs[n - 1];
        *n_outputs = n_outs[n - 1];
        outs[n - 1] = NULL;
    }
    exec_stages_outs_free(s, outs, n_outs);
    free(last_reader);
    return st;
}

int64_t byocl_stages_cut_bytes(const byocl_stages *s, int k)
{
    if (!s || k < 0 || k >= s->n_stages - 1)
        return 0;
    int64_t bytes = 0;
    /* A value is counted at its first reader after the cut; earlier readers after the cut
     * would have counted it already. */
    for (int j = k + 1; j < s->n_stages; j++) {
        for (int i = 0; i < s->stages[j].n_inputs; i++) {
            const byocl_stage_input *in = &s->stages[j].inputs[i];
            if (in->stage > k)
                continue;
            bool counted = false;
            for (int jj = k + 1; jj <= j && !counted; jj++)
                for (int ii = 0; ii < (jj < j ? s->stages[jj].n_inputs : i) && !counted; ii++)
                    counted = s->stages[jj].inputs[ii].stage == in->stage &&
                              s->stages[jj].inputs[ii].index == in->index;
            if (counted)
                continue;
            const byocl_type *t = in->stage < 0 ? byocl_stages_input_type(s, in->index)
                                                : s->stages[in->stage].outputs[in->index].type;
            bytes += byocl_shape_numel(&t->shape) * (int64_t)byocl_dtype_size(t->dtype);
        }
    }
    return bytes;
}
