/* Einsum as byocl ops, the way numpy.einsum (the ONNX reference) reads the equation:
 * operands are combined two at a time, left to right. Before a combination, a label that
 * neither the other operand, a later operand nor the output uses is summed out; then the
 * labels both share and that are needed later are batch axes, those they share and that
 * are not are contracted, the rest are each side's own: one nn.batch_matmul of the two
 * operands transposed and reshaped to [batch, own, contracted] and [batch, contracted,
 * own]. The last operand is summed and transposed into the output's order. Labels are
 * letters; "..." stands for the same broadcast axes in every operand (right-aligned, as
 * numpy's). A label repeated within one operand first takes that operand's diagonal. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "onnx_import.h"

#define EINSUM_MAX_OPERANDS 16
/* 52 letters, then the ellipsis axes. */
#define ELLIPSIS_LABEL 52
#define N_LABELS (ELLIPSIS_LABEL + BYOCL_MAX_RANK)

/* An operand: its byocl node and one label per axis. */
typedef struct einsum_term {
    int id;
    int rank;
    int labels[BYOCL_MAX_RANK];
} einsum_term;

static int letter_label(char c)
{
    return isupper((unsigned char)c) ? c - 'A' : 26 + (c - 'a');
}

/* The character a label prints as (the ellipsis axes as '.'). */
static char label_char(int label)
{
    return label < 26 ? (char)('A' + label) : label < ELLIPSIS_LABEL ? (char)('a' + label - 26) : '.';
}

/* Parses one term ("bij", "...ii", "" for a scalar) of an operand of `rank` axes (rank -1:
 * the output, whose ellipsis takes `n_ellipsis` axes). */
static byocl_status parse_term(onnx_ctx *cx, const char *text, size_t len, int rank,
                               int n_ellipsis, const char *which, einsum_term *t)
{
    int letters = 0;
    bool ellipsis = false;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '.') {
            if (ellipsis || i + 3 > len || strncmp(text + i, "...", 3) != 0)
                return onnx_fail(cx, BYOCL_ERR_INVALID,
                                 "equation: %s has a '.' that is not one '...'", which);
            ellipsis = true;
            i += 2;
        } else if (isalpha((unsigned char)text[i])) {
            letters++;
        } else {
            return onnx_fail(cx, BYOCL_ERR_INVALID,
                             "equation: %s has '%c', which is not a letter or '...'", which,
                             text[i]);
        }
    }
    int dots = ellipsis ? (rank < 0 ? n_ellipsis : rank - letters) : 0;
    if (rank >= 0 && (dots < 0 || (!ellipsis && letters != rank)))
        return onnx_fail(cx, BYOCL_ERR_INVALID, "equation: %s names %d axes but the input has %d",
                         which, letters, rank);
    if (letters + dots > BYOCL_MAX_RANK)
        return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED, "equation: %s has more than %d axes", which,
                         BYOCL_MAX_RANK);
    t->rank = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '.') {
            /* right-aligned: the last ellipsis axis of every operand is the same label */
            for (int d = 0; d < dots; d++)
                t->labels[t->rank++] = ELLIPSIS_LABEL + n_ellipsis - dots + d;
            i += 2;
            continue;
        }
        int label = letter_label(text[i]);
        for (int d = 0; rank < 0 && d < t->rank; d++)
            if (t->labels[d] == label)
                return onnx_fail(cx, BYOCL_ERR_INVALID, "equation: %s repeats '%c'", which,
                                 text[i]);
        t->labels[t->rank++] = label; /* an input may repeat one: its diagonal */
    }
    return BYOCL_OK;
}

static int axis_of(const einsum_term *t, int label)
{
    for (int d = 0; d < t->rank; d++)
        if (t->labels[d] == label)
            return d;
    return -1;
}

/* t with each label that it repeats reduced to one axis, the diagonal: the two axes are
 * made neighbours, merged, and `take` picks cells 0, n + 1, 2(n + 1), ... of the n * n. */
static byocl_status take_diagonals(onnx_ctx *cx, einsum_term *t)
{
    for (int d1 = 0; d1 < t->rank; d1++)
        for (int d2 = d1 + 1; d2 < t->rank; d2++) {
            if (t->labels[d1] != t->labels[d2])
                continue;
            byocl_shape s = onnx_type(cx, t->id)->shape;
            int64_t n = s.dims[d1];
            if (s.dims[d2] != n)
                return onnx_fail(cx, BYOCL_ERR_INVALID,
                                 "equation: the diagonal of '%c' over axes of %lld and %lld",
                                 label_char(t->labels[d1]), (long long)n,
                                 (long long)s.dims[d2]);
            int64_t perm[BYOCL_MAX_RANK], dims[BYOCL_MAX_RANK];
            int k = 0, rank = 0;
            for (int d = 0; d < t->rank; d++) {
                if (d == d2)
                    continue;
                perm[k++] = d;
                dims[rank++] = d == d1 ? n * n : s.dims[d];
                if (d == d1)
                    perm[k++] = d2;
            }
            byocl_attrs *a = onnx_attrs(cx);
            if (!a)
                return cx->err->status;
            TRY(onnx_attrs_ok(cx, byocl_attrs_set_ints(cx->mod, a, "axes", perm, t->rank)));
            TRY_ID(adjacent, onnx_call1(cx, "transpose", t->id, a));
            TRY_ID(merged, onnx_reshape(cx, adjacent, rank, dims));
            byocl_shape is = byocl_shape_make(1, &n);
            byocl_tensor *idx = byocl_tensor_new(BYOCL_INT64, &is, cx->err);
            if (!idx)
                return onnx_fail(cx, cx->err->status, "the diagonal's indices: out of memory");
            for (int64_t i = 0; i < n; i++)
                ((int64_t *)byocl_tensor_data(idx))[i] = i * (n + 1);
            int at = onnx_constant(cx, idx);
            byocl_tensor_unref(idx);
            byocl_attrs *ta = at >= 0 ? onnx_attrs(cx) : NULL;
            if (!ta)
                return cx->err->status;
            TRY(onnx_attrs_ok(cx, byocl_attrs_set_int(cx->mod, ta, "axis", d1)));
            int args[2] = {merged, at};
            TRY_ID(y, onnx_call(cx, "take", args, 2, ta));
            t->id = y;
            for (int d = d2; d + 1 < t->rank; d++)
                t->labels[d] = t->labels[d + 1];
            t->rank--;
            d2 = d1; /* the same label may appear a third time */
        }
    return BYOCL_OK;
}

/* t with the axes whose label `keep` does not hold summed out. */
static byocl_status sum_out(onnx_ctx *cx, einsum_term *t, const bool *keep)
{
    int64_t axes[BYOCL_MAX_RANK];
    int n = 0, rank = 0;
    for (int d = 0; d < t->rank; d++) {
        if (keep[t->labels[d]])
            t->labels[rank++] = t->labels[d];
        else
            axes[n++] = d;
    }
    if (n == 0)
        return BYOCL_OK;
    byocl_attrs *a = onnx_attrs(cx);
    if (!a)
        return cx->err->status;
    TRY(onnx_attrs_ok(cx, byocl_attrs_set_ints(cx->mod, a, "axis", axes, n)));
    TRY_ID(y, onnx_call1(cx, "sum", t->id, a));
    t->id = y;
    t->rank = rank;
    return BYOCL_OK;
}

/* t's axes put in the order of `labels` (which holds each of t's labels once). */
static byocl_status permute(onnx_ctx *cx, einsum_term *t, const int *labels)
{
    int64_t perm[BYOCL_MAX_RANK];
    bool moved = false;
    for (int d = 0; d < t->rank; d++) {
        perm[d] = axis_of(t, labels[d]);
        moved |= perm[d] != d;
    }
    if (!moved)
        return BYOCL_OK;
    byocl_attrs *a = onnx_attrs(cx);
    if (!a)
        return cx->err->status;
    TRY(onnx_attrs_ok(cx, byocl_attrs_set_ints(cx->mod, a, "axes", perm, t->rank)));
    TRY_ID(y, onnx_call1(cx, "transpose", t->id, a));
    t->id = y;
    memcpy(t->labels, labels, sizeof t->labels[0] * (size_t)t->rank);
    return BYOCL_OK;
}

/* The size of each label's axis in a and b; a shared axis of size 1 against n is
 * broadcast to n (the ellipsis axes broadcast as numpy's), other differences are errors. */
static byocl_status label_sizes(onnx_ctx *cx, einsum_term *a, einsum_term *b, int64_t *size)
{
    einsum_term *terms[2] = {a, b};
    for (int k = 0; k < 2; k++)
        for (int d = 0; d < terms[k]->rank; d++)
            size[terms[k]->labels[d]] = 1;
    for (int k = 0; k < 2; k++) {
        const byocl_shape *s = &onnx_type(cx, terms[k]->id)->shape;
        for (int d = 0; d < terms[k]->rank; d++) {
            int64_t *have = &size[terms[k]->labels[d]];
            if (*have != 1 && s->dims[d] != 1 && s->dims[d] != *have)
                return onnx_fail(cx, BYOCL_ERR_INVALID,
                                 "equation: axis '%c' is %lld in one operand and %lld in "
                                 "another",
                                 label_char(terms[k]->labels[d]), (long long)*have,
                                 (long long)s->dims[d]);
            if (s->dims[d] != 1)
                *have = s->dims[d];
        }
    }
    for (int k = 0; k < 2; k++) { /* make the size-1 axes that meet a larger one real */
        const byocl_shape *s = &onnx_type(cx, terms[k]->id)->shape;
        int64_t to[BYOCL_MAX_RANK];
        bool grow = false;
        for (int d = 0; d < terms[k]->rank; d++) {
            to[d] = size[terms[k]->labels[d]];
            grow |= to[d] != s->dims[d];
        }
        if (!grow)
            continue;
        byocl_attrs *attrs = onnx_attrs(cx);
        if (!attrs)
            return cx->err->status;
        TRY(onnx_attrs_ok(cx, byocl_attrs_set_ints(cx->mod, attrs, "shape", to, terms[k]->rank)));
        TRY_ID(y, onnx_call1(cx, "broadcast_to", terms[k]->id, attrs));
        terms[k]->id = y;
    }
    return BYOCL_OK;
}

/* Reshapes t (its axes in order: groups of g[0], g[1], g[2] labels) to the three products. */
static int flatten3(onnx_ctx *cx, const einsum_term *t, const int64_t *size, const int *g)
{
    int64_t dims[3] = {1, 1, 1};
    for (int k = 0, d = 0; k < 3; k++)
        for (int i = 0; i < g[k]; i++, d++)
            dims[k] *= size[t->labels[d]];
    return onnx_reshape(cx, t->id, 3, dims);
}

/* a and b combined into one operand whose labels are those `needed` (later operands and
 * the output) that either holds: batch, then a's own, then b's own. */
static byocl_status combine(onnx_ctx *cx, einsum_term *a, einsum_term *b, const bool *needed,
                            einsum_term *out)
{
    bool keep_a[N_LABELS], keep_b[N_LABELS];
    for (int l = 0; l < N_LABELS; l++) {
        keep_a[l] = needed[l] || axis_of(b, l) >= 0;
        keep_b[l] = needed[l] || axis_of(a, l) >= 0;
    }
    TRY(sum_out(cx, a, keep_a));
    TRY(sum_out(cx, b, keep_b));
    int64_t size[N_LABELS];
    TRY(label_sizes(cx, a, b, size));
    int batch[BYOCL_MAX_RANK], own_a[BYOCL_MAX_RANK], own_b[BYOCL_MAX_RANK],
        shared[BYOCL_MAX_RANK];
    int nb = 0, na = 0, nob = 0, ns = 0;
    for (int d = 0; d < a->rank; d++) {
        int l = a->labels[d];
        if (axis_of(b, l) < 0)
            own_a[na++] = l;
        else if (needed[l])
            batch[nb++] = l;
        else
            shared[ns++] = l;
    }
    for (int d = 0; d < b->rank; d++)
        if (axis_of(a, b->labels[d]) < 0)
            own_b[nob++] = b->labels[d];
    if (nb + na + nob > BYOCL_MAX_RANK)
        return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                         "equation: an intermediate result would have %d axes (at most %d)",
                         nb + na + nob, BYOCL_MAX_RANK);
    int order_a[BYOCL_MAX_RANK], order_b[BYOCL_MAX_RANK];
    memcpy(order_a, batch, sizeof batch[0] * (size_t)nb);
    memcpy(order_a + nb, own_a, sizeof own_a[0] * (size_t)na);
    memcpy(order_a + nb + na, shared, sizeof shared[0] * (size_t)ns);
    memcpy(order_b, batch, sizeof batch[0] * (size_t)nb);
    memcpy(order_b + nb, shared, sizeof shared[0] * (size_t)ns);
    memcpy(order_b + nb + ns, own_b, sizeof own_b[0] * (size_t)nob);
    TRY(permute(cx, a, order_a));
    TRY(permute(cx, b, order_b));
    int ga[3] = {nb, na, ns}, gb[3] = {nb, ns, nob};
    int args[2] = {flatten3(cx, a, size, ga), flatten3(cx, b, size, gb)};
    byocl_attrs *attrs = args[0] < 0 || args[1] < 0 ? NULL : onnx_attrs(cx);
    if (!attrs)
        return cx->err->status;
    TRY(onnx_attrs_ok(cx, byocl_attrs_set_bool(cx->mod, attrs, "transpose_b", false)));
    TRY_ID(y, onnx_call(cx, "nn.batch_matmul", args, 2, attrs));
    out->rank = 0;
    int64_t dims[BYOCL_MAX_RANK];
    const int *groups[3] = {batch, own_a, own_b};
    const int counts[3] = {nb, na, nob};
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < counts[k]; i++) {
            dims[out->rank] = size[groups[k][i]];
            out->labels[out->rank++] = groups[k][i];
        }
    TRY_ID(shaped, onnx_reshape(cx, y, out->rank, dims));
    out->id = shaped;
    return BYOCL_OK;
}

byocl_status onnx_convert_einsum(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    char eq[1024], text[1024];
    TRY(onnx_attr_string(cx, "equation", "", eq, sizeof eq));
    size_t len = 0;
    for (const char *c = eq; *c; c++) /* spaces separate nothing: drop them */
        if (*c != ' ')
            text[len++] = *c;
    text[len] = '\0';
    int n_in = (int)n->n_input;
    if (n_in < 1 || n_in > EINSUM_MAX_OPERANDS)
        return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED, "Einsum of %d operands (1 to %d supported)",
                         n_in, EINSUM_MAX_OPERANDS);
    const char *arrow = strstr(text, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - text) : len;
    einsum_term terms[EINSUM_MAX_OPERANDS], output;
    const char *term[EINSUM_MAX_OPERANDS];
    size_t term_len[EINSUM_MAX_OPERANDS];
    int n_terms = 0, n_ellipsis = 0, count[N_LABELS] = {0};
    for (size_t i = 0, from = 0; i <= lhs_len; i++) {
        if (i < lhs_len && text[i] != ',')
            continue;
        if (n_terms < EINSUM_MAX_OPERANDS) {
            term[n_terms] = text + from;
            term_len[n_terms] = i - from;
        }
        n_terms++;
        from = i + 1;
    }
    if (n_terms != n_in)
        return onnx_fail(cx, BYOCL_ERR_INVALID,
                         "equation '%s' has %d input terms for %d inputs", eq, n_terms, n_in);
    for (int k = 0; k < n_in; k++) { /* the ellipsis spans the most axes any operand gives it */
        TRY(onnx_input(cx, k, &terms[k].id));
        int letters = 0;
        for (size_t i = 0; i < term_len[k]; i++)
            letters += isalpha((unsigned char)term[k][i]) != 0;
        int dots = onnx_type(cx, terms[k].id)->shape.rank - letters;
        if (memchr(term[k], '.', term_len[k]) && dots > n_ellipsis)
            n_ellipsis = dots;
    }
    for (int k = 0; k < n_in; k++) {
        char which[32];
        snprintf(which, sizeof which, "the term of input %d", k);
        TRY(parse_term(cx, term[k], term_len[k], onnx_type(cx, terms[k].id)->shape.rank,
                       n_ellipsis, which, &terms[k]));
        for (int d = 0; d < terms[k].rank; d++)
            count[terms[k].labels[d]]++;
        TRY(take_diagonals(cx, &terms[k]));
    }
    if (arrow) {
        TRY(parse_term(cx, arrow + 2, strlen(arrow + 2), -1, n_ellipsis, "the output", &output));
        for (int d = 0; d < output.rank; d++)
            if (count[output.labels[d]] == 0)
                return onnx_fail(cx, BYOCL_ERR_INVALID,
                                 "equation: the output's '%c' is in no input",
                                 label_char(output.labels[d]));
    } else { /* implicit: the ellipsis, then the letters used once, in ASCII order */
        output.rank = 0;
        for (int l = ELLIPSIS_LABEL; l < ELLIPSIS_LABEL + n_ellipsis; l++)
            output.labels[output.rank++] = l;
        for (int c = 'A'; c <= 'z'; c++) {
            if (!isalpha(c) || count[letter_label((char)c)] != 1)
                continue;
            if (output.rank == BYOCL_MAX_RANK)
                return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                                 "equation: the output has more than %d axes", BYOCL_MAX_RANK);
            output.labels[output.rank++] = letter_label((char)c);
        }
    }
    einsum_term acc = terms[0];
    for (int k = 1; k < n_in; k++) {
        bool needed[N_LABELS] = {false};
        for (int d = 0; d < output.rank; d++)
            needed[output.labels[d]] = true;
        for (int j = k + 1; j < n_in; j++)
            for (int d = 0; d < terms[j].rank; d++)
                needed[terms[j].labels[d]] = true;
        TRY(combine(cx, &acc, &terms[k], needed, &acc));
    }
    bool in_output[N_LABELS] = {false};
    for (int d = 0; d < output.rank; d++)
        in_output[output.labels[d]] = true;
    TRY(sum_out(cx, &acc, in_output));
    TRY(permute(cx, &acc, output.labels));
    return onnx_output(cx, 0, acc.id);
}
