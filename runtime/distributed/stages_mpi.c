/* A split model's stages on the ranks of an MPI job (include/byocl/stages_mpi.h).
 *
 * Every rank derives the same list of links from the stages and the placement: one link
 * per value that one rank makes and another reads (an input of the pipeline, made at the
 * rank of stage 0, or a stage's output), per reading rank. A link's index is its MPI tag,
 * so the messages of one link arrive in item order (MPI does not reorder messages of one
 * sender, tag and communicator) and a message is exactly its tensor's bytes.
 *
 * On each rank two threads share the work: this one (the only one that calls MPI, as
 * MPI_THREAD_FUNNELED asks) posts the receives of up to `depth` items ahead, hands the
 * items whose values all arrived to the compute thread, and posts the sends of the items
 * it finished, completing them in order; the compute thread runs this rank's stages of one
 * item after another (exec_stages_step, as byocl_stages_run does). So an item computes
 * while the next ones arrive and the previous ones leave. The MPI thread polls its
 * requests (MPI_Testall) and sleeps when nothing moved, longer the longer nothing does:
 * Open MPI's blocking waits spin, which would take a core from the stages. */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "byocl/reference.h"
#include "base/textbuf.h"
#include "distributed/mpi_impl.h"
#include "executor/executor_impl.h"
#include "passes/split_impl.h"

/* How long the MPI thread sleeps when no request completed and no item is ready: from the
 * first, doubling while nothing moves, up to the last. Polling often costs the stages a
 * core's share (each poll goes through Open MPI's progress engine and the sockets); a
 * millisecond is little beside a stage's time on an item. */
#define IDLE_SLEEP_MIN_NS 20000
#define IDLE_SLEEP_MAX_NS 1000000

/* ------------------------------------------------------------------ placement, links */

static int rank_of(const int *rank_of_stage, int k)
{
    return rank_of_stage ? rank_of_stage[k] : k;
}

byocl_status byocl_stages_mpi_check(const byocl_stages *s, const int *rank_of_stage,
                                    byocl_error *err)
{
    int n = byocl_stages_count(s), size = byocl_mpi_size();
    for (int k = 0; k < n; k++) {
        int r = rank_of(rank_of_stage, k), prev = k ? rank_of(rank_of_stage, k - 1) : 0;
        if (r < 0 || (k == 0 && r != 0) || (k > 0 && r != prev && r != prev + 1))
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "stage %d on rank %d: stage 0 goes on rank 0 and each "
                                   "stage on the rank of the one before or the next",
                                   k, r);
    }
    int used = rank_of(rank_of_stage, n - 1) + 1;
    if (used != size)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "the %d stage%s %s placed on %d rank%s, but the job has %d "
                               "(mpirun -np %d)",
                               n, n == 1 ? "" : "s", n == 1 ? "is" : "are", used,
                               used == 1 ? "" : "s", size, size);
    return BYOCL_OK;
}

/* One value that travels from one rank to another, per item. */
typedef struct link {
    int stage, index; /* a stage's output, or stage -1: an input of the pipeline */
    int from, to;     /* ranks */
    const byocl_type *type;
    const char *name; /* how messages name the value */
    int bytes;
} link;

static const byocl_type *value_type(const byocl_stages *s, int stage, int index)
{
    return stage < 0 ? byocl_stages_input_type(s, index)
                     : byocl_stage_output_at(s, stage, index).type;
}

static const char *value_name(const byocl_stages *s, int stage, int index)
{
    return stage < 0 ? byocl_stages_input_name(s, index)
                     : byocl_stage_output_at(s, stage, index).node;
}

/* The links of the job, in the order every rank derives them. */
static byocl_status plan_links(const byocl_stages *s, const int *rank_of_stage, link **out,
                               int *n_out, byocl_error *err)
{
    int n = byocl_stages_count(s), max = 0, count = 0;
    for (int k = 0; k < n; k++)
        max += byocl_stage_num_inputs(s, k);
    link *links = calloc((size_t)max + 1, sizeof *links);
    if (!links)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (int k = 0; k < n; k++) {
        for (int i = 0; i < byocl_stage_num_inputs(s, k); i++) {
            byocl_stage_input in = byocl_stage_input_at(s, k, i);
            link l = {.stage = in.stage, .index = in.index,
                      .from = rank_of(rank_of_stage, in.stage < 0 ? 0 : in.stage),
                      .to = rank_of(rank_of_stage, k),
                      .type = value_type(s, in.stage, in.index),
                      .name = value_name(s, in.stage, in.index)};
            bool seen = l.from == l.to;
            for (int j = 0; j < count && !seen; j++)
                seen = links[j].stage == l.stage && links[j].index == l.index &&
                       links[j].to == l.to;
            if (seen)
                continue;
            size_t bytes = (size_t)byocl_shape_numel(&l.type->shape) *
                           byocl_dtype_size(l.type->dtype);
            if (bytes > INT32_MAX) {
                free(links);
                return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                                       "%s (stage %d to stage %d) is %zu bytes, more than one "
                                       "MPI message of bytes holds (2 GiB)",
                                       l.name, in.stage, k, bytes);
            }
            l.bytes = (int)bytes;
            links[count++] = l;
        }
    }
    *out = links;
    *n_out = count;
    return BYOCL_OK;
}

/* ------------------------------------------------------------------ comparing ranks */

/* What a rank read and will do, a line per fact, for comparing ranks. */
static char *describe(const byocl_stages *s)
{
    byocl_textbuf b = {0};
    char type_s[1024];
    for (int i = 0; i < byocl_stages_num_inputs(s); i++)
        base_textbuf_printf(&b, "input %d: %s %s\n", i, byocl_stages_input_name(s, i),
                            byocl_type_str(byocl_stages_input_type(s, i), type_s,
                                           sizeof type_s));
    for (int k = 0; k < byocl_stages_count(s); k++) {
        base_textbuf_printf(&b, "stage %d: %d nodes, %s to %s\n", k,
                            byocl_stage_num_nodes(s, k), byocl_stage_first_node(s, k),
                            byocl_stage_last_node(s, k));
        for (int i = 0; i < byocl_stage_num_inputs(s, k); i++) {
            byocl_stage_input in = byocl_stage_input_at(s, k, i);
            if (in.stage < 0)
                base_textbuf_printf(&b, "stage %d input %d: %s from input %d\n", k, i,
                                    in.name, in.index);
            else
                base_textbuf_printf(&b, "stage %d input %d: %s from stage %d output %d\n", k,
                                    i, in.name, in.stage, in.index);
        }
        for (int i = 0; i < byocl_stage_num_outputs(s, k); i++) {
            byocl_stage_output o = byocl_stage_output_at(s, k, i);
            base_textbuf_printf(&b, "stage %d output %d: %s %s\n", k, i, o.node,
                                byocl_type_str(o.type, type_s, sizeof type_s));
        }
    }
    return base_textbuf_take(&b);
}

/* The first line where a and b differ, into the two buffers. */
static void first_difference(const char *a, const char *b, char *line_a, char *line_b,
                             size_t len)
{
    while (*a && *b) {
        size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
        if (la != lb || memcmp(a, b, la) != 0)
            break;
        a += la + (a[la] == '\n');
        b += lb + (b[lb] == '\n');
    }
    snprintf(line_a, len, "%.*s", (int)strcspn(a, "\n"), *a ? a : "(nothing)");
    snprintf(line_b, len, "%.*s", (int)strcspn(b, "\n"), *b ? b : "(nothing)");
}

byocl_status byocl_stages_mpi_compare(const byocl_stages *s, int *n_items, byocl_error *err)
{
    int size = byocl_mpi_size();
    MPI_Bcast(n_items, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char *mine = describe(s);
    int len = mine ? (int)strlen(mine) + 1 : 0, missing = !mine, any_missing = 0;
    int *lens = calloc((size_t)size, sizeof *lens), *offsets = calloc((size_t)size, sizeof *offsets);
    missing |= !lens || !offsets;
    MPI_Allreduce(&missing, &any_missing, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_missing) {
        free(mine);
        free(lens);
        free(offsets);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory comparing the ranks");
    }
    MPI_Allgather(&len, 1, MPI_INT, lens, 1, MPI_INT, MPI_COMM_WORLD);
    long total = 0;
    for (int r = 0; r < size; r++) {
        offsets[r] = (int)total;
        total += lens[r];
    }
    char *all = malloc((size_t)total);
    missing = !all;
    MPI_Allreduce(&missing, &any_missing, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    byocl_status st = BYOCL_OK;
    if (any_missing)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory comparing the ranks");
    else
        MPI_Allgatherv(mine, len, MPI_CHAR, all, lens, offsets, MPI_CHAR, MPI_COMM_WORLD);
    for (int r = 1; r < size && st == BYOCL_OK; r++) {
        const char *first = all + offsets[0], *theirs = all + offsets[r];
        if (strcmp(first, theirs) == 0)
            continue;
        char line0[1200], line_r[1200];
        first_difference(first, theirs, line0, line_r, sizeof line0);
        st = byocl_error_set(err, BYOCL_ERR_INVALID,
                             "rank %d read other stages than rank 0: rank 0 has '%s', rank %d "
                             "has '%s' (every host needs the same split model)",
                             r, line0, r, line_r);
    }
    free(all);
    free(mine);
    free(lens);
    free(offsets);
    return st;
}

/* ------------------------------------------------------------------ items and queues */

/* One item on this rank: its values and the MPI requests in flight for it. */
typedef struct rank_item {
    int index;
    byocl_tensor **inputs; /* the pipeline's: given at the rank of stage 0, else those that
                              came in; references owned */
    byocl_tensor ***outs;        /* per stage, as exec_stages_step keeps them */
    int *n_outs;
    MPI_Request *requests;
    int n_requests;
    byocl_status status; /* what the compute thread made of it */
    byocl_error err;
    struct rank_item *next;
} rank_item;

typedef struct fifo {
    rank_item *head, *tail;
    int count;
} fifo;

static void fifo_push(fifo *q, rank_item *it)
{
    it->next = NULL;
    if (q->tail)
        q->tail->next = it;
    else
        q->head = it;
    q->tail = it;
    q->count++;
}

static rank_item *fifo_pop(fifo *q)
{
    rank_item *it = q->head;
    if (it) {
        q->head = it->next;
        if (!q->head)
            q->tail = NULL;
        q->count--;
    }
    return it;
}

/* What this rank's two threads share. */
typedef struct rank_run {
    const byocl_stages *s;
    byocl_executor *const *executors;
    const int *last_reader;
    int first_stage, last_stage; /* this rank's */
    pthread_mutex_t lock;        /* guards ready, computed, closed, stop */
    pthread_cond_t item_ready;
    fifo ready, computed;
    bool closed, stop;
    double *busy_ms; /* per stage; the compute thread's */
} rank_run;

static void item_free(const byocl_stages *s, rank_item *it)
{
    if (!it)
        return;
    exec_stages_outs_free(s, it->outs, it->n_outs);
    if (it->inputs)
        byocl_tensors_free(it->inputs, byocl_stages_num_inputs(s));
    free(it->requests);
    free(it);
}

static void *compute(void *arg)
{
    rank_run *run = arg;
    for (;;) {
        pthread_mutex_lock(&run->lock);
        while (!run->ready.head && !run->closed && !run->stop)
            pthread_cond_wait(&run->item_ready, &run->lock);
        rank_item *it = run->stop ? NULL : fifo_pop(&run->ready);
        pthread_mutex_unlock(&run->lock);
        if (!it)
            return NULL;
        it->status = BYOCL_OK;
        for (int k = run->first_stage; k <= run->last_stage && it->status == BYOCL_OK; k++) {
            double t0 = base_now_ms();
            it->status = exec_stages_step(run->s, k, run->executors ? run->executors[k] : NULL,
                                          run->last_reader, it->inputs, it->outs, it->n_outs,
                                          &it->err);
            run->busy_ms[k] += base_now_ms() - t0;
            if (it->status != BYOCL_OK)
                byocl_error_prefix(&it->err, "stage %d, rank %d, item %d: ", k,
                                   byocl_mpi_rank(), it->index);
        }
        pthread_mutex_lock(&run->lock);
        fifo_push(&run->computed, it);
        bool failed = it->status != BYOCL_OK;
        pthread_mutex_unlock(&run->lock);
        if (failed)
            return NULL;
    }
}

/* ------------------------------------------------------------------ the MPI thread */

typedef struct mpi_side {
    const byocl_stages *s;
    const link *links;
    int n_links, rank, n_recv, n_send;
    int first_stage;
    byocl_item_inputs_fn next_inputs; /* the rank of stage 0's */
    void *user;
} mpi_side;

/* A new item whose values this rank receives: tensors allocated, receives posted. */
static byocl_status post_receives(const mpi_side *m, int index, rank_item **out,
                                  byocl_error *err)
{
    int n_stages = byocl_stages_count(m->s), n_inputs = byocl_stages_num_inputs(m->s);
    int n_requests = m->n_recv > m->n_send ? m->n_recv : m->n_send;
    rank_item *it = calloc(1, sizeof *it);
    if (it) {
        it->index = index;
        it->outs = calloc((size_t)n_stages, sizeof *it->outs);
        it->n_outs = calloc((size_t)n_stages, sizeof *it->n_outs);
        it->requests = calloc((size_t)n_requests + 1, sizeof *it->requests);
        it->inputs = calloc((size_t)n_inputs + 1, sizeof *it->inputs);
    }
    if (!it || !it->outs || !it->n_outs || !it->requests || !it->inputs) {
        item_free(m->s, it);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    }
    byocl_status st = BYOCL_OK;
    if (m->first_stage == 0 && (st = m->next_inputs(m->user, index, it->inputs, err)) != BYOCL_OK) {
        byocl_error_prefix(err, "item %d: ", index);
        item_free(m->s, it);
        return st;
    }
    for (int l = 0; l < m->n_links && st == BYOCL_OK; l++) {
        const link *lk = &m->links[l];
        if (lk->to != m->rank)
            continue;
        byocl_tensor *t = byocl_tensor_new(lk->type->dtype, &lk->type->shape, err);
        if (!t) {
            st = BYOCL_ERR_NOMEM;
            break;
        }
        if (lk->stage < 0) {
            it->inputs[lk->index] = t;
        } else {
            if (!it->outs[lk->stage]) {
                it->n_outs[lk->stage] = byocl_stage_num_outputs(m->s, lk->stage);
                it->outs[lk->stage] = calloc((size_t)it->n_outs[lk->stage],
                                             sizeof *it->outs[lk->stage]);
            }
            if (!it->outs[lk->stage]) {
                byocl_tensor_unref(t);
                st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
                break;
            }
            it->outs[lk->stage][lk->index] = t;
        }
        int code = MPI_Irecv(byocl_tensor_data(t), lk->bytes, MPI_BYTE, lk->from, l,
                             MPI_COMM_WORLD, &it->requests[it->n_requests]);
        if (code != MPI_SUCCESS)
            st = dist_mpi_error(err, code, "receiving %s from rank %d", lk->name, lk->from);
        else
            it->n_requests++;
    }
    *out = it; /* on failure too: receives may be posted into its tensors */
    return st;
}

/* Whether every request of `it` completed (*done); the first error, naming the value. */
static byocl_status test_requests(const mpi_side *m, rank_item *it, bool receiving, bool *done,
                                  byocl_error *err)
{
    MPI_Status statuses[it->n_requests + 1];
    int flag = 0;
    int code = MPI_Testall(it->n_requests, it->requests, &flag, statuses);
    *done = flag;
    int r = 0;
    for (int l = 0; l < m->n_links; l++) {
        const link *lk = &m->links[l];
        if ((receiving ? lk->to : lk->from) != m->rank)
            continue;
        const char *peer_role = receiving ? "from" : "to";
        int peer = receiving ? lk->from : lk->to;
        if (code == MPI_ERR_IN_STATUS && statuses[r].MPI_ERROR != MPI_SUCCESS &&
            statuses[r].MPI_ERROR != MPI_ERR_PENDING)
            return dist_mpi_error(err, statuses[r].MPI_ERROR, "item %d: %s %s %s rank %d",
                                  it->index, receiving ? "receiving" : "sending", lk->name,
                                  peer_role, peer);
        if (flag && receiving) {
            int count = -1;
            MPI_Get_count(&statuses[r], MPI_BYTE, &count);
            if (count != lk->bytes) {
                char type_s[1024];
                return byocl_error_set(err, BYOCL_ERR_RUNTIME,
                                       "item %d: %s from rank %d came as %d bytes, not the %d "
                                       "of %s",
                                       it->index, lk->name, lk->from, count, lk->bytes,
                                       byocl_type_str(lk->type, type_s, sizeof type_s));
            }
        }
        r++;
    }
    if (code != MPI_SUCCESS && code != MPI_ERR_IN_STATUS)
        return dist_mpi_error(err, code, "item %d: %s", it->index,
                              receiving ? "receiving" : "sending");
    return BYOCL_OK;
}

/* Posts the sends of a computed item, each tensor checked against the manifest's type. */
static byocl_status post_sends(const mpi_side *m, rank_item *it, byocl_error *err)
{
    it->n_requests = 0;
    for (int l = 0; l < m->n_links; l++) {
        const link *lk = &m->links[l];
        if (lk->from != m->rank)
            continue;
        const byocl_tensor *t = lk->stage < 0 ? it->inputs[lk->index]
                                              : it->outs[lk->stage][lk->index];
        if (!t || byocl_tensor_dtype(t) != lk->type->dtype ||
            !byocl_shape_equal(byocl_tensor_shape(t), &lk->type->shape)) {
            char want_s[1024], got_s[1024] = "nothing";
            if (t) {
                byocl_type got = byocl_type_tensor(byocl_tensor_dtype(t),
                                                   byocl_tensor_shape(t)->rank,
                                                   byocl_tensor_shape(t)->dims);
                byocl_type_str(&got, got_s, sizeof got_s);
            }
            return byocl_error_set(err, BYOCL_ERR_RUNTIME,
                                   "item %d: %s for rank %d is %s, the manifest says %s",
                                   it->index, lk->name, lk->to, got_s,
                                   byocl_type_str(lk->type, want_s, sizeof want_s));
        }
        int code = MPI_Isend(byocl_tensor_cdata(t), lk->bytes, MPI_BYTE, lk->to, l,
                             MPI_COMM_WORLD, &it->requests[it->n_requests]);
        if (code != MPI_SUCCESS)
            return dist_mpi_error(err, code, "item %d: sending %s to rank %d", it->index,
                                  lk->name, lk->to);
        it->n_requests++;
    }
    return BYOCL_OK;
}

/* What the MPI thread keeps track of while the items stream. */
typedef struct stream {
    fifo receiving, sending; /* items whose receives, sends are posted, oldest first */
    int posted, completed;
    double *entered_ms, *left_ms; /* per item, from the common start */
    byocl_tensor ***results;      /* the last rank's */
    int *n_results;
    bool compute_failed; /* the error is a stage's, which names stage, rank and item */
} stream;

/* One round of the MPI thread's loop: posts, hands over and completes what it can.
 * *moved tells whether anything happened. */
static byocl_status stream_round(const mpi_side *m, rank_run *run, stream *st, int n_items,
                                 int depth, double t0, bool last_rank, bool *moved,
                                 byocl_error *err)
{
    *moved = false;
    pthread_mutex_lock(&run->lock);
    int waiting = run->ready.count;
    pthread_mutex_unlock(&run->lock);
    /* Receives of the items ahead, at most `depth` not yet computing. */
    while (st->posted < n_items && st->receiving.count + waiting < depth &&
           st->posted - st->completed < 2 * depth + 1) {
        rank_item *it = NULL;
        byocl_status s = post_receives(m, st->posted, &it, err);
        if (s != BYOCL_OK)
            return s;
        if (m->first_stage == 0)
            st->entered_ms[st->posted] = base_now_ms() - t0;
        fifo_push(&st->receiving, it);
        st->posted++;
        *moved = true;
    }
    /* Items whose values all arrived, in order, to the compute thread. */
    while (st->receiving.head) {
        bool done;
        byocl_status s = test_requests(m, st->receiving.head, true, &done, err);
        if (s != BYOCL_OK)
            return s;
        if (!done)
            break;
        rank_item *it = fifo_pop(&st->receiving);
        it->n_requests = 0;
        pthread_mutex_lock(&run->lock);
        fifo_push(&run->ready, it);
        pthread_cond_signal(&run->item_ready);
        pthread_mutex_unlock(&run->lock);
        *moved = true;
    }
    /* Computed items: results on the last rank, sends elsewhere (at most `depth` out). */
    for (;;) {
        pthread_mutex_lock(&run->lock);
        rank_item *it = st->sending.count < depth ? fifo_pop(&run->computed) : NULL;
        pthread_mutex_unlock(&run->lock);
        if (!it)
            break;
        *moved = true;
        if (it->status != BYOCL_OK) {
            *err = it->err;
            st->compute_failed = true;
            byocl_status s = it->status;
            item_free(m->s, it);
            return s;
        }
        if (last_rank) {
            int n = byocl_stages_count(m->s);
            st->results[it->index] = it->outs[n - 1];
            st->n_results[it->index] = it->n_outs[n - 1];
            it->outs[n - 1] = NULL;
            st->left_ms[it->index] = base_now_ms() - t0;
            item_free(m->s, it);
            st->completed++;
            continue;
        }
        fifo_push(&st->sending, it);
        byocl_status s = post_sends(m, it, err);
        if (s != BYOCL_OK)
            return s;
    }
    /* Sends that completed, in order: those items are done here. */
    while (st->sending.head) {
        bool done;
        byocl_status s = test_requests(m, st->sending.head, false, &done, err);
        if (s != BYOCL_OK)
            return s;
        if (!done)
            break;
        item_free(m->s, fifo_pop(&st->sending));
        st->completed++;
        *moved = true;
    }
    return BYOCL_OK;
}

/* The last rank's figures: each stage's busy time and each item's latency, gathered from
 * the ranks that measured them. */
static void gather_stats(const byocl_stages *s, const rank_run *run, const stream *st,
                         int n_items, int last, byocl_pipeline_stats *stats, bool *ok)
{
    int n = byocl_stages_count(s), rank = byocl_mpi_rank();
    double *busy = calloc((size_t)n, sizeof *busy);
    double *entered = rank == last ? calloc((size_t)n_items, sizeof *entered) : NULL;
    MPI_Reduce(run->busy_ms, busy, n, MPI_DOUBLE, MPI_SUM, last, MPI_COMM_WORLD);
    MPI_Reduce(st->entered_ms, entered, n_items, MPI_DOUBLE, MPI_SUM, last, MPI_COMM_WORLD);
    if (rank == last && stats && busy && entered) {
        double *latency = calloc((size_t)n_items, sizeof *latency);
        double end = 0;
        for (int i = 0; latency && i < n_items; i++) {
            latency[i] = st->left_ms[i] - entered[i];
            end = st->left_ms[i] > end ? st->left_ms[i] : end;
        }
        if (latency) {
            stats->total_ms = end;
            stats->latency_ms = latency;
            stats->busy_ms = busy;
            busy = NULL;
        }
        *ok = latency != NULL;
    }
    free(busy);
    free(entered);
}

byocl_status byocl_stages_mpi_run(const byocl_stages *s, const int *rank_of_stage,
                                  byocl_executor *const *executors, int depth,
                                  byocl_item_inputs_fn next_inputs, void *user, int n_items,
                                  byocl_tensor ****outputs, int **n_outputs,
                                  byocl_pipeline_stats *stats, byocl_error *err)
{
    if (!s || !outputs || !n_outputs || depth < 1 || n_items < 1)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "byocl_stages_mpi_run: stages and outputs are required, depth "
                               "and items at least 1");
    *outputs = NULL;
    *n_outputs = NULL;
    byocl_status status = byocl_stages_mpi_check(s, rank_of_stage, err);
    if (status != BYOCL_OK)
        return status;
    int n = byocl_stages_count(s), rank = byocl_mpi_rank(), last = byocl_mpi_size() - 1;
    mpi_side m = {.s = s, .rank = rank, .first_stage = -1, .next_inputs = next_inputs,
                  .user = user};
    rank_run run = {.s = s, .executors = executors, .first_stage = -1};
    for (int k = 0; k < n; k++)
        if (rank_of(rank_of_stage, k) == rank) {
            run.first_stage = run.first_stage < 0 ? k : run.first_stage;
            run.last_stage = k;
        }
    m.first_stage = run.first_stage;
    if (run.first_stage == 0 && !next_inputs)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "byocl_stages_mpi_run: the rank of stage 0 gives the inputs");
    link *links = NULL;
    int *last_reader = NULL;
    status = plan_links(s, rank_of_stage, &links, &m.n_links, err);
    if (status == BYOCL_OK)
        status = exec_stages_last_readers(s, &last_reader, err);
    m.links = links;
    run.last_reader = last_reader;
    for (int l = 0; l < m.n_links; l++) {
        m.n_recv += links[l].to == rank;
        m.n_send += links[l].from == rank;
    }
    stream st = {0};
    run.busy_ms = calloc((size_t)n, sizeof *run.busy_ms);
    st.entered_ms = calloc((size_t)n_items, sizeof *st.entered_ms);
    st.left_ms = calloc((size_t)n_items, sizeof *st.left_ms);
    if (rank == last) {
        st.results = calloc((size_t)n_items, sizeof *st.results);
        st.n_results = calloc((size_t)n_items, sizeof *st.n_results);
    }
    if (status == BYOCL_OK && (!run.busy_ms || !st.entered_ms || !st.left_ms ||
                               (rank == last && (!st.results || !st.n_results))))
        status = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&run.lock, NULL);
    pthread_cond_init(&run.item_ready, NULL);
    pthread_t thread;
    bool started = status == BYOCL_OK && pthread_create(&thread, NULL, compute, &run) == 0;
    if (status == BYOCL_OK && !started)
        status = byocl_error_set(err, BYOCL_ERR_RUNTIME, "cannot start the compute thread");
    /* A common start: the times of the first and last rank compare. */
    if (status == BYOCL_OK)
        MPI_Barrier(MPI_COMM_WORLD);
    double t0 = base_now_ms();
    long idle_ns = IDLE_SLEEP_MIN_NS;
    while (status == BYOCL_OK && st.completed < n_items) {
        bool moved;
        status = stream_round(&m, &run, &st, n_items, depth, t0, rank == last, &moved, err);
        if (moved) {
            idle_ns = IDLE_SLEEP_MIN_NS;
        } else if (status == BYOCL_OK) {
            nanosleep(&(struct timespec){0, idle_ns}, NULL);
            idle_ns = idle_ns * 2 > IDLE_SLEEP_MAX_NS ? IDLE_SLEEP_MAX_NS : idle_ns * 2;
        }
    }
    if (status != BYOCL_OK && !st.compute_failed && run.last_stage > run.first_stage)
        byocl_error_prefix(err, "rank %d (stages %d to %d), ", rank, run.first_stage,
                           run.last_stage);
    else if (status != BYOCL_OK && !st.compute_failed)
        byocl_error_prefix(err, "rank %d (stage %d), ", rank, run.first_stage);
    pthread_mutex_lock(&run.lock);
    run.stop = status != BYOCL_OK;
    run.closed = true;
    pthread_cond_broadcast(&run.item_ready);
    pthread_mutex_unlock(&run.lock);
    if (started)
        pthread_join(thread, NULL);
    bool stats_ok = true;
    if (status == BYOCL_OK)
        gather_stats(s, &run, &st, n_items, last, stats, &stats_ok);
    if (status == BYOCL_OK && !stats_ok)
        status = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    if (status == BYOCL_OK && rank == last) {
        *outputs = st.results;
        *n_outputs = st.n_results;
        st.results = NULL;
        st.n_results = NULL;
    }
    /* After a failure, items with requests in flight stay allocated: MPI may still write
     * into them until byocl_mpi_abort ends the job. */
    for (rank_item *it; status == BYOCL_OK && (it = fifo_pop(&run.computed));)
        item_free(s, it);
    for (int i = 0; st.results && i < n_items; i++)
        byocl_tensors_free(st.results[i], st.n_results[i]);
    free(st.results);
    free(st.n_results);
    free(st.entered_ms);
    free(st.left_ms);
    free(run.busy_ms);
    pthread_cond_destroy(&run.item_ready);
    pthread_mutex_destroy(&run.lock);
    free(last_reader);
    free(links);
    return status;
}
