/* node_range: "A:B" resolved to @main's nodes; see node_range.h. */
#include "node_range.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/text.h"
#include "ops/op_impl.h"
#include "base/strbuf.h"

/* One end as written: its prefix ('%', '#' or 0 for a bare end) and its text. */
typedef struct range_end {
    char prefix;
    char text[96];
    bool numeric;
    long number;
} range_end;

/* How the function's nodes are called: the numbers `byocl print` shows (-1 where it
 * shows a name), byocl's own numbers, and whether the source named bindings by numbers. */
typedef struct node_names {
    const byocl_function *fn;
    int *printed, *own;
    bool file_numbers; /* bindings named by numbers (%78) */
    bool renumbered;   /* ... that `byocl print` does not keep */
} node_names;

/* Which numbering an end was read in. */
enum { READ_FILE, READ_OWN };

static bool is_bound(const byocl_function *fn, int id)
{
    byocl_node_kind kind = fn->nodes[id].kind;
    return kind != BYOCL_NODE_VAR && kind != BYOCL_NODE_CONSTANT;
}

static bool parse_end(const char *s, size_t len, range_end *e)
{
    memset(e, 0, sizeof *e);
    if (len > 0 && (*s == '%' || *s == '#')) {
        e->prefix = *s++;
        len--;
    }
    if (len == 0 || len >= sizeof e->text)
        return false;
    memcpy(e->text, s, len);
    e->numeric = base_str_all_digits(e->text);
    if (e->numeric) {
        errno = 0;
        e->number = strtol(e->text, NULL, 10);
        if (errno || e->number > INT_MAX)
            return false;
    }
    return e->prefix != '#' || e->numeric; /* #N is always a number */
}

/* The ends of `spec` split at its colon `colon`. */
static bool parse_split(const char *spec, const char *colon, range_end ends[2])
{
    return parse_end(spec, (size_t)(colon - spec), &ends[0]) &&
           parse_end(colon + 1, strlen(colon + 1), &ends[1]);
}

bool pass_node_range_spelled(const char *spec)
{
    if (!spec)
        return false;
    const char *colon = strchr(spec, ':');
    range_end ends[2];
    if (colon && !strchr(colon + 1, ':'))
        return parse_split(spec, colon, ends) &&
               !(ends[0].numeric && ends[1].numeric && (ends[0].prefix == '#') == (ends[1].prefix == '#') &&
                 ends[0].number > ends[1].number);
    for (; colon; colon = strchr(colon + 1, ':')) /* names with ':' in them */
        if (parse_split(spec, colon, ends))
            return true;
    return false;
}

/* ------------------------------------------------------------ finding ends */

/* The node the source named `text` (the file's %78, %x0, an ONNX node's name); else, for
 * a number, the node the source did not name that `byocl print` shows as %text (not in a
 * function whose source numbers it does not keep: there that number is #text). -1 when
 * none. */
static int find_named(const node_names *v, const char *text)
{
    const byocl_function *fn = v->fn;
    for (int id = 0; id < fn->n_nodes; id++)
        if (is_bound(fn, id) && fn->nodes[id].name && strcmp(fn->nodes[id].name, text) == 0)
            return id;
    long number = base_str_all_digits(text) ? strtol(text, NULL, 10) : -1;
    for (int id = 0; id < fn->n_nodes && number >= 0 && !v->renumbered; id++)
        if (is_bound(fn, id) && !fn->nodes[id].name && v->printed[id] == number)
            return id;
    return -1;
}

static int find_own(const node_names *v, long number)
{
    for (int id = 0; id < v->fn->n_nodes; id++)
        if (v->own[id] == number)
            return id;
    return -1;
}

/* "%75" or "#0": an end as messages write it once read. */
static void end_label(const node_names *v, const range_end *e, int reading, char *buf,
                      size_t len)
{
    bool own_spelling = reading == READ_OWN && (e->prefix == '#' || v->file_numbers);
    if (snprintf(buf, len, "%c%s", own_spelling ? '#' : '%', e->text) < 0)
        buf[0] = '\0';
}

/* "%78": the file's name of a node where it has one, else its label. */
static char *source_label(const node_names *v, int id, char *buf, size_t len)
{
    const char *name = v->fn->nodes[id].name;
    if (name && v->fn->nodes[id].kind != BYOCL_NODE_VAR)
        snprintf(buf, len, "%%%s", name);
    else
        byocl_node_label(v->fn, id, buf, len);
    return buf;
}

/* What the function's nodes are called, for the error about a missing end. */
static void describe_names(const node_names *v, char *buf, size_t len)
{
    const byocl_function *fn = v->fn;
    int first = -1, last = -1, highest = -1;
    bool names = false;
    for (int id = 0; id < fn->n_nodes; id++) {
        if (v->own[id] > highest)
            highest = v->own[id];
        if (!is_bound(fn, id) || (v->printed[id] < 0 && (!fn->nodes[id].name || id == fn->body)) ||
            (v->file_numbers && !fn->nodes[id].name))
            continue; /* the body printed inline; with the file's numbers, its names only */
        names |= fn->nodes[id].name != NULL;
        if (first < 0)
            first = id;
        last = id;
    }
    char a[128], b[128];
    if (first < 0)
        snprintf(buf, len, "it has no numbered nodes");
    else if (!names)
        snprintf(buf, len, "its nodes are numbered %%0..%%%d", highest);
    else
        snprintf(buf, len, "its bindings run from %s to %s; byocl's own numbers are #0..#%d",
                 source_label(v, first, a, sizeof a), source_label(v, last, b, sizeof b),
                 highest);
}

static byocl_status missing_end(const node_names *v, const char *what, const char *end,
                                byocl_error *err)
{
    char known[400];
    describe_names(v, known, sizeof known);
    return byocl_error_set(err, BYOCL_ERR_NOT_FOUND, "%s: @%s has no node %s (%s)", what,
                           v->fn->name, end, known);
}

/* "nn.conv2d at 7:9": what a node is and where the file has it (its label could be
 * either reading's number). */
static void describe_node(const byocl_function *fn, int id, char *buf, size_t len)
{
    const byocl_node *n = &fn->nodes[id];
    const char *what = n->kind == BYOCL_NODE_TUPLE     ? "a tuple"
                       : n->kind == BYOCL_NODE_GETITEM ? "a tuple item"
                       : n->op                         ? n->op->name
                                                       : n->callee;
    if (n->line > 0)
        snprintf(buf, len, "%s%s at %d:%d", n->kind == BYOCL_NODE_CALL && !n->op ? "@" : "",
                 what, n->line, n->col);
    else
        snprintf(buf, len, "%s%s", n->kind == BYOCL_NODE_CALL && !n->op ? "@" : "", what);
}

/* "nn.conv2d at 7:9 .. nn.relu at 10:9" */
static void describe_ends(const byocl_function *fn, const int ids[2], char *buf, size_t len)
{
    char a[160], b[160];
    describe_node(fn, ids[0], a, sizeof a);
    describe_node(fn, ids[1], b, sizeof b);
    snprintf(buf, len, "%s .. %s", a, b);
}

/* Both ends read the same way; a bare number's reading is decided here. */
static byocl_status resolve_ends(const node_names *v, const range_end ends[2], int ids[2],
                                 int readings[2], char *what, size_t what_len, byocl_error *err)
{
    int file_ids[2], own_ids[2];
    for (int k = 0; k < 2; k++) {
        file_ids[k] = ends[k].prefix == '#' ? -1 : find_named(v, ends[k].text);
        own_ids[k] = ends[k].numeric && ends[k].prefix != '%' ? find_own(v, ends[k].number) : -1;
        bool bare_number = ends[k].numeric && !ends[k].prefix;
        readings[k] = ends[k].prefix == '#' || (bare_number && !v->file_numbers) ? READ_OWN
                                                                                 : READ_FILE;
    }
    char labels[2][100];
    for (int k = 0; k < 2; k++)
        end_label(v, &ends[k], readings[k], labels[k], sizeof labels[k]);
    snprintf(what, what_len, "range %s..%s", labels[0], labels[1]);
    bool both_bare = ends[0].numeric && !ends[0].prefix && ends[1].numeric && !ends[1].prefix;
    if (both_bare && v->file_numbers && file_ids[0] >= 0 && file_ids[1] >= 0 &&
        own_ids[0] >= 0 && own_ids[1] >= 0 &&
        (file_ids[0] != own_ids[0] || file_ids[1] != own_ids[1])) {
        char file_desc[420], own_desc[420];
        describe_ends(v->fn, file_ids, file_desc, sizeof file_desc);
        describe_ends(v->fn, own_ids, own_desc, sizeof own_desc);
        const char *a = ends[0].text, *b = ends[1].text;
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "range %s:%s is ambiguous in @%s: it reads as the file's "
                               "%%%s..%%%s (%s) or as byocl's own #%s..#%s (%s); write %%%s:%%%s "
                               "or #%s:#%s",
                               a, b, v->fn->name, a, b, file_desc, a, b, own_desc, a, b, a, b);
    }
    for (int k = 0; k < 2; k++) {
        ids[k] = readings[k] == READ_OWN ? own_ids[k] : file_ids[k];
        if (ids[k] < 0)
            return missing_end(v, what, labels[k], err);
    }
    if (ids[0] > ids[1])
        return byocl_error_set(err, BYOCL_ERR_INVALID, "%s is empty: %s comes after %s", what,
                               labels[0], labels[1]);
    return BYOCL_OK;
}

/* ----------------------------------------------------------------- members */

static void mark_members(const node_names *v, const range_end ends[2], const int ids[2],
                         const int readings[2], bool *member)
{
    const byocl_function *fn = v->fn;
    bool own = readings[0] == READ_OWN && readings[1] == READ_OWN;
    bool numbered = ends[0].numeric && ends[1].numeric && readings[0] == READ_FILE &&
                    readings[1] == READ_FILE;
    long lo = ends[0].number, hi = ends[1].number;
    for (int id = 0; id < fn->n_nodes; id++) {
        const char *name = fn->nodes[id].name;
        bool in = id >= ids[0] && id <= ids[1] && is_bound(fn, id);
        if (in && own)
            in = v->own[id] >= lo && v->own[id] <= hi;
        else if (in && numbered && name) /* the file's %N; other names stay outside */
            in = base_str_all_digits(name) && strtol(name, NULL, 10) >= lo && strtol(name, NULL, 10) <= hi;
        member[id] = in || id == ids[0] || id == ids[1];
    }
}

byocl_status pass_node_range_resolve(const byocl_function *fn, const char *spec,
                                     byocl_node_range *out, bool *member, byocl_error *err)
{
    range_end ends[2];
    const char *colon = spec ? strchr(spec, ':') : NULL;
    while (colon && !parse_split(spec, colon, ends))
        colon = strchr(colon + 1, ':');
    if (!colon)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "bad range '%s': expected A:B, e.g. 75:82, %%75:%%82, #0:#5 or "
                               "conv1:relu2",
                               spec ? spec : "(null)");
    node_names v = {.fn = fn, .printed = byocl_text_node_numbers(fn),
                    .own = byocl_text_node_own_numbers(fn)};
    byocl_status st = BYOCL_OK;
    if (!v.printed || !v.own)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory resolving a range");
    for (int id = 0; st == BYOCL_OK && id < fn->n_nodes; id++) {
        bool numbered = is_bound(fn, id) && fn->nodes[id].name && base_str_all_digits(fn->nodes[id].name);
        v.file_numbers |= numbered;
        v.renumbered |= numbered && v.printed[id] >= 0;
    }
    /* Names may hold ':' (TensorFlow's "x:0"): take the one split whose ends both name
     * nodes; the first split's error when none does. */
    int found = 0;
    byocl_error first_err = {0};
    for (; st == BYOCL_OK && colon; colon = strchr(colon + 1, ':')) {
        int ids[2] = {-1, -1}, readings[2] = {READ_FILE, READ_FILE};
        byocl_node_range r;
        byocl_error e = {0};
        if (!parse_split(spec, colon, ends))
            continue;
        if (resolve_ends(&v, ends, ids, readings, r.what, sizeof r.what, &e) != BYOCL_OK) {
            if (!first_err.status)
                first_err = e;
            continue;
        }
        if (found++ == 0) {
            r.id_first = ids[0];
            r.id_last = ids[1];
            *out = r;
            mark_members(&v, ends, ids, readings, member);
        }
    }
    if (st == BYOCL_OK && found == 0 && err)
        *err = first_err;
    if (st == BYOCL_OK && found == 0)
        st = first_err.status;
    else if (st == BYOCL_OK && found > 1)
        st = byocl_error_set(err, BYOCL_ERR_INVALID,
                             "range '%s' is ambiguous in @%s: it splits at more than one ':' "
                             "into nodes",
                             spec, fn->name);
    free(v.printed);
    free(v.own);
    return st;
}
