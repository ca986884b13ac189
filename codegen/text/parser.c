/* Parser for TVM Relay's text format: builds a byocl_module through the builder API.
 *
 * Grammar, as TVM's `mod.astext()` prints it. Comments are skipped anywhere: line comments
 * `// ...` and C block comments (slash-star ... star-slash, which may nest); TVM puts its
 * type annotations (`ty=Tensor[(1, 16), float32]`) in block comments.
 *
 *   module     := header? function* metadata?
 *   header     := '#' '[' 'version' '=' STRING ']'          #[version = "0.0.5"]
 *   metadata   := '#' '[' 'metadata' ']' JSON                TVM's meta table (metadata.h)
 *   function   := 'def' GLOBAL '(' (item (',' item)*)? ','? ')' ('->' type)? '{' body '}'
 *   item       := LOCAL ':' type                             a parameter: %x: Tensor[(1, 3), float32]
 *               | IDENT '=' value                            a function attribute: Compiler="my_npu"
 *   body       := binding* expr                              the last expr is the result
 *   binding    := LOCAL '=' expr ';'                         %0 = nn.relu(%x);   %x0 = ...;
 *   expr       := primary ('.' INDEX)*                       tuple items: %8.0, %b.1.0, (%a, %b).1
 *   primary    := LOCAL                                      a parameter or an earlier binding
 *               | IDENT '(' (arg (',' arg)*)? ','? ')'       an op call: nn.conv2d(%x, %w, channels=16)
 *               | GLOBAL '(' (expr (',' expr)*)? ','? ')'    a call of a function: @opencl_main_0(%a)
 *               | '(' ')'                                    the empty tuple
 *               | '(' expr ')'                               just expr
 *               | '(' expr ',' (expr (',' expr)*)? ','? ')'  a tuple: (%a,) (%a, %b)
 *               | NUMBER                                     a scalar constant
 *               | 'True' | 'False'                           a bool scalar constant
 *               | 'meta' '[' 'relay.Constant' ']' '[' INDEX ']'
 *                                                            tensor constant K: the tensor
 *                                                            "relay.Constant.K" of the meta params,
 *                                                            else constant K of the #[metadata]
 *                                                            section
 *   arg        := expr                                       a tensor argument
 *               | IDENT '=' value                            an attribute (after the arguments)
 *               | value                                      a positional attribute (see below)
 *   value      := NUMBER | STRING | 'True' | 'False' | 'None'
 *               | '[' (INT (',' INT)*)? ','? ']'             a list of integers: [1, 1]
 *               | '[' list (',' list)* ','? ']'              rows of integers: [[0, 0], [1, 2]]
 *               | '(' (INT (',' INT)*)? ','? ')'             the same, Python style: (3, 3)
 *   type       := 'Tensor' '[' '(' (INT (',' INT)*)? ','? ')' ',' DTYPE ']'
 *               | DTYPE                                      a scalar: float32 (= Tensor[(), float32])
 *               | '(' ')' | '(' type ',' ')'                 tuple types: (), (T,)
 *               | '(' type (',' type)+ ','? ')'              (T1, T2); '(' type ')' is just type
 *   DTYPE      := float32 | float16 | int32 | int64 | int8 | uint8 | bool
 *
 * Tokens:
 *   LOCAL   '%' and a name: letters, digits and '_', plus '/', ':' and '-' when a letter,
 *           digit or '_' follows, and '.' when a letter or '_' follows
 *           (%block5_conv3/convolution/ReadVariableOp:0). A name that starts with a digit is
 *           all digits, so %8.0 is item 0 of %8.
 *   GLOBAL  '@' and a name, as LOCAL.
 *   IDENT   letters, digits, '_' and '.' before a letter: nn.conv2d, relay.Constant.
 *   NUMBER  optional '-', digits, optional fraction and exponent, optional dtype suffix:
 *           f or f32 (float32), f16, f64, i32, i64, i8, u8. Without a suffix an integer is int32
 *           and a number with a fraction or exponent is float32. Also inff, -inff, nanf
 *           (with any float suffix). Examples: 3, -1, 0i64, 2f, -1f, 2e-05f, 1.5f16, 0.1f64.
 *   INT     a NUMBER without fraction, exponent or float suffix; INDEX a non-negative INT.
 *   STRING  double-quoted, with the escapes \" \\ \n \t \r.
 *
 * Meaning:
 * - Names are local to their function; a name must be defined before its use, and defining
 *   one twice (parameter or binding) is an error.
 * - A binding's name, a number (%78) or not (%x0), stays on the node the binding creates
 *   (byocl_node_name): messages name the node so, and the printer keeps it.
 *   A binding of an existing node (%1 = %0;) is only a second name for it.
 * - Op calls are built with byocl_function_add_call: unknown ops, wrong argument counts and
 *   attributes that the op's schema refuses are errors at the op's name.
 * - Positional attributes: once an op has its largest number of tensor arguments, further
 *   values (and a string, list or None anywhere) bind to its attributes in schema order:
 *   cast(%b, "int32") is cast(%b, dtype="int32"), clip(%x, 0f, 6f) sets a_min and a_max.
 *   After the first key=value only key=value may follow.
 * - Calls of global functions may come before the callee's definition; a callee that is
 *   not defined anywhere in the module is an error.
 * - Every node records where it starts (byocl_node_set_pos) for later error messages.
 * - The #[metadata] section is found and read (metadata.c) at the first meta constant; a
 *   constant the meta params also have comes from the meta params. A `ty=TYPE` comment
 *   right after a meta constant, as TVM writes one, must match the tensor's dtype and
 *   shape (a comment that does not read as a type is skipped).
 *
 * Errors read "FILE:LINE:COL: error: MESSAGE" (1-based line and column of the offending
 * token), where MESSAGE says what was expected and what was found. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/ops.h"
#include "byocl/tensor_io.h"
#include "byocl/text.h"
#include "ir/ir_impl.h"
#include "lexer.h"
#include "metadata.h"
#include "names.h"
#include "ops/op_impl.h"

/* Nesting of expressions, types and lists beyond this is refused (not a stack overflow). */
#define MAX_DEPTH 200

typedef struct parser {
    text_lexer lx;
    const char *filename;
    const byocl_params *meta;   /* the parameter file's tensors (may be NULL) */
    /* TVM's #[metadata] section, looked for at the first meta constant */
    bool section_looked;
    byocl_params *section;      /* its constants; NULL when there is none */
    int section_line, section_col; /* where its '#' is */
    byocl_module *mod;
    byocl_function *fn;  /* the function being parsed */
    text_names scope;    /* parameters and bindings of fn */
    int depth;
    bool failed;
    byocl_error err;     /* the first error */
} parser;

/* ----------------------------------------------------------------- errors */

static void fail_at(parser *P, int line, int col, byocl_status status, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void fail_at(parser *P, int line, int col, byocl_status status, const char *fmt, ...)
{
    if (P->failed)
        return;
    char msg[BYOCL_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    byocl_error_set(&P->err, status, "%s:%d:%d: error: %s", P->filename, line, col, msg);
    P->failed = true;
}

#define fail_tok(P, tok, status, ...) fail_at((P), (tok)->line, (tok)->col, (status), __VA_ARGS__)

static void fail_nomem(parser *P, const text_token *at)
{
    fail_tok(P, at, BYOCL_ERR_NOMEM, "out of memory");
}

/* How a token reads in a message: ';', '%x', 'nn.relu', string "abc", end of input. */
static void describe_token(const text_token *tok, char *buf, size_t len)
{
    const int max_chars = 40;
    int n = tok->len > (size_t)max_chars ? max_chars : (int)tok->len;
    const char *more = tok->len > (size_t)max_chars ? "..." : "";
    switch (tok->kind) {
    case TOK_EOF:
        snprintf(buf, len, "end of input");
        break;
    case TOK_LOCAL:
        snprintf(buf, len, "'%%%.*s%s'", n, tok->text, more);
        break;
    case TOK_GLOBAL:
        snprintf(buf, len, "'@%.*s%s'", n, tok->text, more);
        break;
    case TOK_STRING:
        snprintf(buf, len, "string %.*s%s", n, tok->text, more);
        break;
    default:
        snprintf(buf, len, "'%.*s%s'", n, tok->text, more);
        break;
    }
}

/* "expected X but found Y", or the lexer's own error when the token is one. */
static void fail_expected(parser *P, const text_token *found, const char *expected)
{
    if (found->kind == TOK_ERROR) {
        fail_tok(P, found, BYOCL_ERR_PARSE, "%s", P->lx.error);
    } else if (found->kind == TOK_EOF) {
        fail_tok(P, found, BYOCL_ERR_PARSE, "unexpected end of input, expected %s", expected);
    } else {
        char what[64];
        describe_token(found, what, sizeof what);
        fail_tok(P, found, BYOCL_ERR_PARSE, "expected %s but found %s", expected, what);
    }
}

/* Re-anchors an error from the builder (or another library call) at a source position. */
static void fail_from(parser *P, const text_token *at, const byocl_error *e)
{
    fail_tok(P, at, e->status, "%s", e->msg);
}

/* ----------------------------------------------------------------- tokens */

static const text_token *peek(parser *P, int k) { return text_lexer_peek(&P->lx, k); }
static text_token next(parser *P) { return text_lexer_next(&P->lx); }

static bool at_kind(parser *P, text_tok_kind kind) { return peek(P, 0)->kind == kind; }

static bool tok_is(const text_token *tok, text_tok_kind kind, const char *text)
{
    return tok->kind == kind && strlen(text) == tok->len && memcmp(tok->text, text, tok->len) == 0;
}

static bool at_word(parser *P, int k, const char *word) { return tok_is(peek(P, k), TOK_IDENT, word); }

static bool accept(parser *P, text_tok_kind kind)
{
    if (!at_kind(P, kind))
        return false;
    next(P);
    return true;
}

/* Consumes a token of `kind`; `what` names it in the error ("')'"). */
static bool expect(parser *P, text_tok_kind kind, const char *what, text_token *out)
{
    const text_token *tok = peek(P, 0);
    if (tok->kind != kind) {
        fail_expected(P, tok, what);
        return false;
    }
    text_token t = next(P);
    if (out)
        *out = t;
    return true;
}

/* A NUL-terminated copy of the token's text in the module's arena. */
static const char *tok_str(parser *P, const text_token *tok)
{
    const char *s = ir_arena_strndup(&P->mod->arena, tok->text, tok->len);
    if (!s)
        fail_nomem(P, tok);
    return s;
}

static bool enter(parser *P, const text_token *at)
{
    if (++P->depth > MAX_DEPTH) {
        fail_tok(P, at, BYOCL_ERR_PARSE, "nesting deeper than %d levels", MAX_DEPTH);
        return false;
    }
    return true;
}

static void leave(parser *P) { P->depth--; }

/* Arrays that grow in the module's arena (the parser never frees on error paths). */
static bool grow_array(parser *P, void **items, int n, int *cap, size_t size, const text_token *at)
{
    if (n < *cap)
        return true;
    int new_cap = *cap ? *cap * 2 : 8;
    if (new_cap > INT_MAX / 2) {
        fail_nomem(P, at);
        return false;
    }
    void *grown = ir_arena_alloc(&P->mod->arena, (size_t)new_cap * size);
    if (!grown) {
        fail_nomem(P, at);
        return false;
    }
    if (n)
        memcpy(grown, *items, (size_t)n * size);
    *items = grown;
    *cap = new_cap;
    return true;
}

/* An integer token that fits `lo..hi`; `what` names it in errors ("a dimension"). */
static bool expect_int(parser *P, const char *what, int64_t lo, int64_t hi, int64_t *out)
{
    const text_token *tok = peek(P, 0);
    if (tok->kind != TOK_NUMBER || tok->is_float) {
        fail_expected(P, tok, what);
        return false;
    }
    if (tok->i < lo || tok->i > hi) {
        fail_tok(P, tok, BYOCL_ERR_PARSE, "%s cannot be %s than %lld, found %lld", what,
                 tok->i < lo ? "less" : "more", (long long)(tok->i < lo ? lo : hi),
                 (long long)tok->i);
        return false;
    }
    *out = tok->i;
    next(P);
    return true;
}

/* ------------------------------------------------------------------ types */

static const byocl_type *parse_type(parser *P);

static bool parse_dtype_name(parser *P, byocl_dtype *out)
{
    const text_token *tok = peek(P, 0);
    if (tok->kind != TOK_IDENT) {
        fail_expected(P, tok, "a dtype");
        return false;
    }
    char name[32] = "";
    if (tok->len < sizeof name)
        memcpy(name, tok->text, tok->len);
    if (!byocl_dtype_from_name(name, out)) {
        fail_tok(P, tok, BYOCL_ERR_PARSE,
                 "unknown dtype '%.*s' (expected one of " BYOCL_DTYPE_NAMES ")",
                 (int)(tok->len > 40 ? 40 : tok->len), tok->text);
        return false;
    }
    next(P);
    return true;
}

/* Tensor[(d0, d1), dtype] after 'Tensor'. */
static const byocl_type *parse_tensor_type(parser *P)
{
    int64_t dims[BYOCL_MAX_RANK];
    int rank = 0;
    if (!expect(P, TOK_LBRACKET, "'['", NULL))
        return NULL;
    text_token shape_at = *peek(P, 0);
    if (!expect(P, TOK_LPAREN, "'('", NULL))
        return NULL;
    while (!at_kind(P, TOK_RPAREN)) {
        if (rank == BYOCL_MAX_RANK) {
            fail_tok(P, peek(P, 0), BYOCL_ERR_UNSUPPORTED, "tensor rank above %d is not supported",
                     BYOCL_MAX_RANK);
            return NULL;
        }
        if (!expect_int(P, "a dimension", 0, INT64_MAX, &dims[rank]))
            return NULL;
        rank++;
        if (!accept(P, TOK_COMMA))
            break;
    }
    byocl_dtype dtype;
    if (!expect(P, TOK_RPAREN, "')'", NULL) || !expect(P, TOK_COMMA, "','", NULL) ||
        !parse_dtype_name(P, &dtype) || !expect(P, TOK_RBRACKET, "']'", NULL))
        return NULL;
    byocl_shape shape = byocl_shape_make(rank, dims);
    if (byocl_shape_numel(&shape) < 0) {
        char s[200];
        fail_tok(P, &shape_at, BYOCL_ERR_UNSUPPORTED,
                 "tensor shape %s has more elements than a 64-bit count holds",
                 byocl_shape_str(&shape, s, sizeof s));
        return NULL;
    }
    byocl_type t = byocl_type_tensor(dtype, rank, dims);
    const byocl_type *interned = byocl_module_intern_type(P->mod, &t);
    if (!interned)
        fail_nomem(P, peek(P, 0));
    return interned;
}

/* (T1, T2) after '('; `(T)` is T itself, `(T,)` a one-field tuple. */
static const byocl_type *parse_tuple_type(parser *P, const text_token *open)
{
    const byocl_type **fields = NULL;
    int n = 0, cap = 0;
    bool trailing_comma = false;
    while (!at_kind(P, TOK_RPAREN)) {
        const byocl_type *field = parse_type(P);
        if (!field || !grow_array(P, (void **)&fields, n, &cap, sizeof *fields, open))
            return NULL;
        fields[n++] = field;
        trailing_comma = accept(P, TOK_COMMA);
        if (!trailing_comma)
            break;
    }
    if (!expect(P, TOK_RPAREN, "')'", NULL))
        return NULL;
    if (n == 1 && !trailing_comma)
        return fields[0];
    const byocl_type *t = byocl_module_tuple_type(P->mod, (const byocl_type *const *)fields, n);
    if (!t)
        fail_nomem(P, open);
    return t;
}

static const byocl_type *parse_type(parser *P)
{
    const text_token *tok = peek(P, 0);
    if (!enter(P, tok))
        return NULL;
    const byocl_type *t = NULL;
    if (tok->kind == TOK_LPAREN) {
        text_token open = next(P);
        t = parse_tuple_type(P, &open);
    } else if (tok_is(tok, TOK_IDENT, "Tensor")) {
        next(P);
        t = parse_tensor_type(P);
    } else if (tok->kind == TOK_IDENT) {
        text_token at = *tok;
        byocl_dtype dtype;
        if (parse_dtype_name(P, &dtype)) {
            byocl_type scalar = byocl_type_tensor(dtype, 0, NULL);
            t = byocl_module_intern_type(P->mod, &scalar);
            if (!t)
                fail_nomem(P, &at);
        }
    } else {
        fail_expected(P, tok, "a type");
    }
    leave(P);
    return t;
}

/* ------------------------------------------------------------- attributes */

static bool parse_number_list(parser *P, text_tok_kind close, const char *close_what,
                              byocl_attr *out);

/* [[0, 0], [1, 2]] after the outer '[': rows of integers, all as long as the first, kept
 * flat with their width in cols (Relay's pad_width). */
static bool parse_int_rows(parser *P, byocl_attr *out)
{
    int64_t *ints = NULL;
    int n = 0, cap = 0, cols = -1;
    while (at_kind(P, TOK_LBRACKET)) {
        text_token open = next(P);
        byocl_attr row = {0};
        if (!enter(P, &open))
            return false;
        bool ok = parse_number_list(P, TOK_RBRACKET, "']'", &row);
        leave(P);
        if (!ok)
            return false;
        if (row.kind != BYOCL_ATTR_INTS || row.cols || (cols >= 0 && row.n != cols) ||
            row.n == 0) {
            fail_tok(P, &open, BYOCL_ERR_PARSE,
                     "expected a list of integers as long as the first (%d)", cols < 0 ? row.n : cols);
            return false;
        }
        cols = row.n;
        for (int i = 0; i < row.n; i++) {
            if (!grow_array(P, (void **)&ints, n, &cap, sizeof *ints, &open))
                return false;
            ints[n++] = row.ints[i];
        }
        if (!accept(P, TOK_COMMA))
            break;
    }
    if (!expect(P, TOK_RBRACKET, "']'", NULL))
        return false;
    *out = (byocl_attr){.key = out->key, .kind = BYOCL_ATTR_INTS, .n = n, .ints = ints,
                        .cols = cols};
    return true;
}

/* [1, 2], (1, 2) or [0f, 0.5f] after the opening token: a list of integers, or of floats
 * when one of its numbers is a float (its integers then read as floats); a list of
 * integer lists after '[' (parse_int_rows). */
static bool parse_number_list(parser *P, text_tok_kind close, const char *close_what,
                              byocl_attr *out)
{
    if (close == TOK_RBRACKET && at_kind(P, TOK_LBRACKET))
        return parse_int_rows(P, out);
    int64_t *ints = NULL;
    double *floats = NULL;
    int n = 0, cap = 0, float_cap = 0;
    bool any_float = false;
    while (!at_kind(P, close)) {
        const text_token *tok = peek(P, 0);
        if (tok->kind != TOK_NUMBER) {
            fail_expected(P, tok, "a number");
            return false;
        }
        if (!grow_array(P, (void **)&ints, n, &cap, sizeof *ints, tok) ||
            !grow_array(P, (void **)&floats, n, &float_cap, sizeof *floats, tok))
            return false;
        ints[n] = tok->is_float ? 0 : tok->i;
        floats[n] = tok->f;
        any_float |= tok->is_float;
        n++;
        next(P);
        if (!accept(P, TOK_COMMA))
            break;
    }
    if (!expect(P, close, close_what, NULL))
        return false;
    out->kind = any_float ? BYOCL_ATTR_FLOATS : BYOCL_ATTR_INTS;
    out->n = n;
    out->ints = any_float ? NULL : ints;
    out->floats = any_float ? floats : NULL;
    return true;
}

/* One attribute value: 1, 2e-05f, True, None, "NCHW", [1, 2], (1, 2), [0f, 0.5f]. */
static bool parse_attr_value(parser *P, byocl_attr *out)
{
    const text_token *tok = peek(P, 0);
    byocl_attr v = {.key = out->key};
    switch (tok->kind) {
    case TOK_NUMBER:
        if (tok->is_float) {
            v.kind = BYOCL_ATTR_FLOAT;
            v.f = tok->f;
        } else {
            v.kind = BYOCL_ATTR_INT;
            v.i = tok->i;
        }
        next(P);
        break;
    case TOK_STRING: {
        char *s = ir_arena_alloc(&P->mod->arena, tok->len);
        if (!s) {
            fail_nomem(P, tok);
            return false;
        }
        text_string_decode(tok, s);
        v.kind = BYOCL_ATTR_STR;
        v.s = s;
        next(P);
        break;
    }
    case TOK_LBRACKET:
    case TOK_LPAREN: {
        text_token open = next(P);
        bool bracket = open.kind == TOK_LBRACKET;
        if (!enter(P, &open))
            return false;
        bool ok = parse_number_list(P, bracket ? TOK_RBRACKET : TOK_RPAREN, bracket ? "']'" : "')'", &v);
        leave(P);
        if (!ok)
            return false;
        break;
    }
    default:
        if (tok_is(tok, TOK_IDENT, "True") || tok_is(tok, TOK_IDENT, "False")) {
            v.kind = BYOCL_ATTR_BOOL;
            v.i = tok->text[0] == 'T';
        } else if (tok_is(tok, TOK_IDENT, "None")) {
            v.kind = BYOCL_ATTR_NULL;
        } else {
            fail_expected(P, tok, "an attribute value");
            return false;
        }
        next(P);
        break;
    }
    *out = v;
    return true;
}

/* `key=value`; the key is a NUL-terminated copy in the arena. */
static bool parse_keyword_attr(parser *P, byocl_attr *out, text_token *key_tok)
{
    *key_tok = next(P);
    out->key = tok_str(P, key_tok);
    return out->key && expect(P, TOK_EQUAL, "'='", NULL) && parse_attr_value(P, out);
}

/* Adds `attr` to `attrs`, refusing a key given twice. */
static bool add_attr(parser *P, byocl_attrs *attrs, const byocl_attr *attr, const text_token *at)
{
    if (byocl_attrs_find(attrs, attr->key)) {
        fail_tok(P, at, BYOCL_ERR_INVALID, "attribute '%s' is given twice", attr->key);
        return false;
    }
    if (byocl_attrs_set(P->mod, attrs, attr) != BYOCL_OK) {
        fail_nomem(P, at);
        return false;
    }
    return true;
}

/* ------------------------------------------------------------ expressions */

static int parse_expr(parser *P);

/* Records the node's source position; passes through -1. */
static int placed(parser *P, int id, const text_token *at)
{
    if (id >= 0)
        byocl_node_set_pos(P->fn, id, at->line, at->col);
    return id;
}

/* The result of a builder call: the node (positioned at `at`) or a failure there. */
static int built(parser *P, int id, const byocl_error *e, const text_token *at)
{
    if (id < 0)
        fail_from(P, at, e);
    return placed(P, id, at);
}

static int parse_scalar(parser *P)
{
    text_token tok = next(P);
    if (!tok.is_float && tok.dtype != BYOCL_INT64) {
        static const struct {
            byocl_dtype dtype;
            int64_t lo, hi;
        } ranges[] = {
            {BYOCL_INT32, INT32_MIN, INT32_MAX},
            {BYOCL_INT8, INT8_MIN, INT8_MAX},
            {BYOCL_UINT8, 0, UINT8_MAX},   {BYOCL_INT16, INT16_MIN, INT16_MAX},
            {BYOCL_UINT16, 0, UINT16_MAX}, {BYOCL_UINT32, 0, UINT32_MAX},
        };
        for (size_t k = 0; k < sizeof ranges / sizeof ranges[0]; k++) {
            if (ranges[k].dtype == tok.dtype && (tok.i < ranges[k].lo || tok.i > ranges[k].hi)) {
                fail_tok(P, &tok, BYOCL_ERR_PARSE, "integer literal %lld does not fit %s",
                         (long long)tok.i, byocl_dtype_name(tok.dtype));
                return -1;
            }
        }
    }
    byocl_error e;
    if (tok.dtype != BYOCL_INT64 && tok.dtype != BYOCL_UINT64)
        return built(P, byocl_function_add_scalar(P->fn, tok.dtype, tok.f, &e), &e, &tok);
    /* 64-bit integers beyond 2^53 do not survive a double: store the integer itself (the
     * lexer keeps a uint64's bits in tok.i). */
    byocl_shape scalar = byocl_shape_make(0, NULL);
    byocl_tensor *t = byocl_tensor_from_data(tok.dtype, &scalar, &tok.i, &e);
    int id = t ? byocl_function_add_constant(P->fn, t, &e) : -1;
    byocl_tensor_unref(t);
    return built(P, id, &e, &tok);
}

static int parse_bool(parser *P)
{
    text_token tok = next(P);
    byocl_error e;
    int id = byocl_function_add_scalar(P->fn, BYOCL_BOOL, tok.text[0] == 'T' ? 1.0 : 0.0, &e);
    return built(P, id, &e, &tok);
}

/* Finds TVM's #[metadata] section further on (a copy of the lexer reads the tokens ahead,
 * comments skipped) and reads its constants into P->section: once, at the first meta
 * constant, so that text without meta constants never reads it. Returns false after an
 * error in the section. */
static bool load_metadata_section(parser *P)
{
    if (P->section_looked)
        return true;
    P->section_looked = true;
    text_lexer scan = P->lx;
    for (;;) {
        const text_token *tok = text_lexer_peek(&scan, 0);
        if (tok->kind == TOK_EOF || tok->kind == TOK_ERROR)
            return true; /* no section (a lexical error is the parser's to report) */
        if (tok->kind == TOK_HASH && text_lexer_peek(&scan, 1)->kind == TOK_LBRACKET &&
            tok_is(text_lexer_peek(&scan, 2), TOK_IDENT, "metadata"))
            break;
        text_lexer_next(&scan);
    }
    P->section_line = text_lexer_peek(&scan, 0)->line;
    P->section_col = text_lexer_peek(&scan, 0)->col;
    for (int k = 0; k < 3; k++)
        text_lexer_next(&scan);
    text_token close = text_lexer_next(&scan);
    if (close.kind != TOK_RBRACKET)
        return true; /* reported when the parser gets there */
    const char *json = close.text + 1;
    byocl_error e;
    if (text_metadata_read(json, (size_t)(P->lx.end - json), P->filename, close.line,
                           close.col + 1, &P->section, &e) != BYOCL_OK) {
        P->err = e;
        P->failed = true;
        return false;
    }
    return true;
}

/* The type in a `ty=TYPE ...` block comment right after `after` (TVM writes one after each
 * meta constant), parsed as the text's types are; NULL when there is none or it does not
 * start with a type (comments are otherwise not read). *line, *col: where TYPE starts. */
static const byocl_type *annotation_after(parser *P, const text_token *after, int *line, int *col)
{
    const text_token *following = peek(P, 0);
    if (following->kind == TOK_ERROR || P->failed)
        return NULL;
    const char *p = after->text + after->len, *gap_end = following->text;
    const char *line_start = after->text - (after->col - 1);
    int at_line = after->line;
    for (; p < gap_end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'); p++)
        if (*p == '\n') {
            at_line++;
            line_start = p + 1;
        }
    if (gap_end - p < 2 || p[0] != '/' || p[1] != '*')
        return NULL;
    p += 2;
    while (p < gap_end && *p == ' ')
        p++;
    if (gap_end - p < 3 || memcmp(p, "ty=", 3) != 0)
        return NULL;
    p += 3;
    const char *type_end = p;
    for (int depth = 1; type_end + 1 < gap_end; type_end++) {
        if (type_end[0] == '/' && type_end[1] == '*')
            depth++;
        else if (type_end[0] == '*' && type_end[1] == '/' && --depth == 0)
            break;
        else if (*type_end == '\n')
            return NULL; /* TVM's annotations are one line */
    }
    *line = at_line;
    *col = (int)(p - line_start) + 1;
    text_lexer outer = P->lx;
    int depth = P->depth;
    text_lexer_init(&P->lx, p, (size_t)(type_end - p));
    P->lx.line = at_line;
    P->lx.line_start = line_start;
    const byocl_type *type = parse_type(P); /* what follows the type (span=...) is not read */
    P->lx = outer;
    P->depth = depth;
    if (!type) { /* not a type byocl reads: skipped, as any comment */
        P->failed = false;
        byocl_error_clear(&P->err);
    }
    return type;
}

/* Checks a meta constant's value against the `ty=` annotation that follows it. */
static bool check_meta_annotation(parser *P, const text_token *at, const text_token *close,
                                  int64_t k, const byocl_tensor *value, const char *source)
{
    int line, col;
    const byocl_type *said = annotation_after(P, close, &line, &col);
    if (!said)
        return true;
    const byocl_shape *shape = byocl_tensor_shape(value);
    byocl_type actual = byocl_type_tensor(byocl_tensor_dtype(value), shape->rank, shape->dims);
    if (byocl_type_equal(said, &actual))
        return true;
    char said_s[256], actual_s[256];
    byocl_type_str(said, said_s, sizeof said_s);
    byocl_type_str(&actual, actual_s, sizeof actual_s);
    fail_tok(P, at, BYOCL_ERR_TYPE,
             "meta[relay.Constant][%lld] is %s in %s, but its annotation at %d:%d says %s",
             (long long)k, actual_s, source, line, col, said_s);
    return false;
}

/* meta[relay.Constant][K]: the tensor "relay.Constant.K" of the parameter file (P->meta),
 * else constant K of the #[metadata] section. */
static int parse_meta(parser *P)
{
    text_token at = next(P);
    text_token kind_tok;
    if (!expect(P, TOK_LBRACKET, "'['", NULL) || !expect(P, TOK_IDENT, "'relay.Constant'", &kind_tok))
        return -1;
    if (!tok_is(&kind_tok, TOK_IDENT, "relay.Constant")) {
        fail_tok(P, &kind_tok, BYOCL_ERR_UNSUPPORTED,
                 "meta[%.*s] is not supported (only meta[relay.Constant][K])",
                 (int)(kind_tok.len > 40 ? 40 : kind_tok.len), kind_tok.text);
        return -1;
    }
    int64_t k;
    text_token close;
    if (!expect(P, TOK_RBRACKET, "']'", NULL) || !expect(P, TOK_LBRACKET, "'['", NULL) ||
        !expect_int(P, "a constant index", 0, INT_MAX, &k) ||
        !expect(P, TOK_RBRACKET, "']'", &close) || !load_metadata_section(P))
        return -1;
    char name[64];
    snprintf(name, sizeof name, "relay.Constant.%lld", (long long)k);
    const char *source = "the parameter file";
    byocl_tensor *value = P->meta ? byocl_params_find(P->meta, name) : NULL;
    if (!value && P->section) {
        source = "the #[metadata] section";
        value = byocl_params_find(P->section, name);
    }
    if (!value) {
        char section[160] = "";
        if (P->section) {
            int n = byocl_params_count(P->section);
            snprintf(section, sizeof section, "the #[metadata] section at %d:%d has %d constant%s",
                     P->section_line, P->section_col, n, n == 1 ? "" : "s");
        }
        if (!P->meta && !P->section)
            fail_tok(P, &at, BYOCL_ERR_NOT_FOUND,
                     "meta[relay.Constant][%lld] needs a parameter file with '%s' or a "
                     "#[metadata] section",
                     (long long)k, name);
        else if (!P->meta)
            fail_tok(P, &at, BYOCL_ERR_NOT_FOUND,
                     "meta[relay.Constant][%lld] is out of range: %s", (long long)k, section);
        else
            fail_tok(P, &at, BYOCL_ERR_NOT_FOUND,
                     "meta[relay.Constant][%lld] is missing: the parameter file has no '%s'%s%s",
                     (long long)k, name, P->section ? " and " : "", section);
        return -1;
    }
    if (!check_meta_annotation(P, &at, &close, k, value, source))
        return -1;
    byocl_error e;
    return built(P, byocl_function_add_constant(P->fn, value, &e), &e, &at);
}

/* Arguments of an op call or a function call, up to ')'. Ops (op != NULL) accept
 * attributes: `key=value`, and positional values past the op's tensor arguments. */
typedef struct call_args {
    int *ids;
    int n, cap;
    byocl_attrs *attrs;
} call_args;

/* What a call argument's first token allows. */
typedef enum arg_start {
    ARG_EXPR,       /* only an expression: %x, @f(...), nn.relu(...), (...)              */
    ARG_VALUE,      /* only an attribute value: "NCHW", [1, 2], None                    */
    ARG_EITHER      /* a scalar constant or an attribute value: 2f, 1, True             */
} arg_start;

static arg_start classify_arg(const text_token *tok)
{
    if (tok->kind == TOK_STRING || tok->kind == TOK_LBRACKET || tok_is(tok, TOK_IDENT, "None"))
        return ARG_VALUE;
    if (tok->kind == TOK_NUMBER || tok_is(tok, TOK_IDENT, "True") || tok_is(tok, TOK_IDENT, "False"))
        return ARG_EITHER;
    return ARG_EXPR;
}

static bool parse_call_args(parser *P, const byocl_op *op, call_args *args)
{
    int n_positional_attrs = 0;
    bool keywords_started = false;
    while (!at_kind(P, TOK_RPAREN)) {
        const text_token *tok = peek(P, 0);
        bool keyword = tok->kind == TOK_IDENT && peek(P, 1)->kind == TOK_EQUAL;
        arg_start kind = classify_arg(tok);
        bool attrs_started = n_positional_attrs > 0;
        bool past_tensor_args = op && op->max_args >= 0 && args->n >= op->max_args;
        if (keyword || keywords_started) {
            if (!op || !keyword) {
                fail_expected(P, tok, op ? "'key=value' after keyword attributes" : "an argument");
                return false;
            }
            byocl_attr attr;
            text_token key_tok;
            if (!parse_keyword_attr(P, &attr, &key_tok))
                return false;
            if (!add_attr(P, args->attrs, &attr, &key_tok))
                return false;
            keywords_started = true;
        } else if (op && n_positional_attrs < op->n_attrs &&
                   (kind == ARG_VALUE ||
                    (kind == ARG_EITHER && (attrs_started || past_tensor_args)) ||
                    (tok->kind == TOK_LPAREN && (attrs_started || past_tensor_args) &&
                     (peek(P, 1)->kind == TOK_NUMBER || peek(P, 1)->kind == TOK_RPAREN)))) {
            /* A value past the tensor arguments: the next attribute in schema order. */
            text_token at = *tok;
            byocl_attr attr = {.key = op->attrs[n_positional_attrs++].name};
            if (!parse_attr_value(P, &attr))
                return false;
            if (!add_attr(P, args->attrs, &attr, &at))
                return false;
        } else {
            if (!grow_array(P, (void **)&args->ids, args->n, &args->cap, sizeof *args->ids, tok))
                return false;
            int id = parse_expr(P);
            if (id < 0)
                return false;
            args->ids[args->n++] = id;
        }
        if (!accept(P, TOK_COMMA))
            break;
    }
    return expect(P, TOK_RPAREN, "')'", NULL);
}

static int parse_op_call(parser *P)
{
    text_token name_tok = next(P);
    const char *name = tok_str(P, &name_tok);
    if (!name)
        return -1;
    const byocl_op *op = byocl_op_find(name);
    if (!op) {
        fail_tok(P, &name_tok, BYOCL_ERR_NOT_FOUND, "unknown op '%s'", name);
        return -1;
    }
    call_args args = {0};
    args.attrs = byocl_attrs_new(P->mod);
    if (!args.attrs) {
        fail_nomem(P, &name_tok);
        return -1;
    }
    if (!expect(P, TOK_LPAREN, "'('", NULL) || !parse_call_args(P, op, &args))
        return -1;
    byocl_error e;
    int id = byocl_function_add_call(P->fn, name, args.ids, args.n, args.attrs, &e);
    return built(P, id, &e, &name_tok);
}

static int parse_global_call(parser *P)
{
    text_token name_tok = next(P);
    const char *callee = tok_str(P, &name_tok);
    call_args args = {0};
    if (!callee || !expect(P, TOK_LPAREN, "'('", NULL) || !parse_call_args(P, NULL, &args))
        return -1;
    byocl_error e;
    int id = byocl_function_add_call_global(P->fn, callee, args.ids, args.n, &e);
    return built(P, id, &e, &name_tok);
}

/* After '(': `()`, `(e)`, `(e,)`, `(e1, e2, ...)`. */
static int parse_paren(parser *P)
{
    text_token open = next(P);
    int *fields = NULL;
    int n = 0, cap = 0;
    bool trailing_comma = false;
    while (!at_kind(P, TOK_RPAREN)) {
        if (!grow_array(P, (void **)&fields, n, &cap, sizeof *fields, &open))
            return -1;
        int id = parse_expr(P);
        if (id < 0)
            return -1;
        fields[n++] = id;
        trailing_comma = accept(P, TOK_COMMA);
        if (!trailing_comma)
            break;
    }
    if (!expect(P, TOK_RPAREN, "')'", NULL))
        return -1;
    if (n == 1 && !trailing_comma)
        return fields[0];
    byocl_error e;
    return built(P, byocl_function_add_tuple(P->fn, fields, n, &e), &e, &open);
}

static int parse_local_ref(parser *P)
{
    text_token tok = next(P);
    const text_name_slot *slot = text_names_find(&P->scope, tok.text, tok.len);
    if (!slot) {
        fail_tok(P, &tok, BYOCL_ERR_NOT_FOUND, "unknown variable '%%%.*s'", (int)tok.len, tok.text);
        return -1;
    }
    return slot->id;
}

static int parse_primary(parser *P)
{
    const text_token *tok = peek(P, 0);
    switch (tok->kind) {
    case TOK_LOCAL:
        return parse_local_ref(P);
    case TOK_GLOBAL:
        return parse_global_call(P);
    case TOK_NUMBER:
        return parse_scalar(P);
    case TOK_LPAREN:
        return parse_paren(P);
    case TOK_IDENT:
        if (tok_is(tok, TOK_IDENT, "True") || tok_is(tok, TOK_IDENT, "False"))
            return parse_bool(P);
        if (tok_is(tok, TOK_IDENT, "meta"))
            return parse_meta(P);
        if (tok_is(tok, TOK_IDENT, "fn") || tok_is(tok, TOK_IDENT, "let") ||
            tok_is(tok, TOK_IDENT, "if") || tok_is(tok, TOK_IDENT, "match") ||
            tok_is(tok, TOK_IDENT, "ref")) {
            fail_tok(P, tok, BYOCL_ERR_UNSUPPORTED,
                     "'%.*s' expressions are not supported (only calls, tuples and constants)",
                     (int)tok->len, tok->text);
            return -1;
        }
        if (peek(P, 1)->kind == TOK_LPAREN)
            return parse_op_call(P);
        fail_expected(P, tok, "an expression");
        return -1;
    default:
        fail_expected(P, tok, "an expression");
        return -1;
    }
}

static int parse_expr(parser *P)
{
    text_token start = *peek(P, 0);
    if (!enter(P, &start))
        return -1;
    int id = parse_primary(P);
    while (id >= 0 && at_kind(P, TOK_DOT)) {
        next(P);
        int64_t index;
        if (!expect_int(P, "a tuple index", 0, INT_MAX, &index)) {
            id = -1;
            break;
        }
        byocl_error e;
        id = built(P, byocl_function_add_getitem(P->fn, id, (int)index, &e), &e, &start);
    }
    leave(P);
    return id;
}

/* -------------------------------------------------------------- functions */

/* A parameter or binding name must be new in its function. */
static bool name_is_new(parser *P, const text_token *tok)
{
    const text_name_slot *prev = text_names_find(&P->scope, tok->text, tok->len);
    if (prev)
        fail_tok(P, tok, BYOCL_ERR_INVALID, "'%%%.*s' is already defined at %d:%d", (int)tok->len,
                 tok->text, prev->line, prev->col);
    return !prev;
}

/* Adds a parameter or binding name to the scope. */
static bool define_name(parser *P, const text_token *tok, int id)
{
    if (!name_is_new(P, tok))
        return false;
    if (!text_names_add(&P->scope, tok->text, tok->len, id, tok->line, tok->col)) {
        fail_nomem(P, tok);
        return false;
    }
    return true;
}

static bool parse_param(parser *P)
{
    text_token name_tok = next(P);
    const char *name = tok_str(P, &name_tok);
    if (!name || !name_is_new(P, &name_tok) ||
        !expect(P, TOK_COLON, "':' and the parameter's type", NULL))
        return false;
    const byocl_type *type = parse_type(P);
    if (!type)
        return false;
    byocl_error e;
    int id = built(P, byocl_function_add_param(P->fn, name, type, &e), &e, &name_tok);
    return id >= 0 && define_name(P, &name_tok, id);
}

static bool parse_function_attr(parser *P)
{
    byocl_attr attr;
    text_token key_tok;
    if (!parse_keyword_attr(P, &attr, &key_tok))
        return false;
    if (byocl_attrs_find(byocl_function_attrs(P->fn), attr.key)) {
        fail_tok(P, &key_tok, BYOCL_ERR_INVALID, "function attribute '%s' is given twice", attr.key);
        return false;
    }
    byocl_error e;
    if (byocl_function_set_attr(P->fn, &attr, &e) != BYOCL_OK) {
        fail_from(P, &key_tok, &e);
        return false;
    }
    return true;
}

/* '(' params and function attributes ')' */
static bool parse_param_list(parser *P)
{
    if (!expect(P, TOK_LPAREN, "'('", NULL))
        return false;
    while (!at_kind(P, TOK_RPAREN)) {
        const text_token *tok = peek(P, 0);
        if (tok->kind == TOK_LOCAL) {
            if (!parse_param(P))
                return false;
        } else if (tok->kind == TOK_IDENT && peek(P, 1)->kind == TOK_EQUAL) {
            if (!parse_function_attr(P))
                return false;
        } else {
            fail_expected(P, tok, "a parameter or a function attribute");
            return false;
        }
        if (!accept(P, TOK_COMMA))
            break;
    }
    return expect(P, TOK_RPAREN, "')'", NULL);
}

/* `%name = expr;` */
static bool parse_binding(parser *P)
{
    text_token name_tok = next(P);
    next(P); /* '=' */
    int first_new = byocl_function_num_nodes(P->fn);
    int id = parse_expr(P);
    if (id < 0 || !expect(P, TOK_SEMI, "';'", NULL))
        return false;
    if (!define_name(P, &name_tok, id))
        return false;
    /* The name (x0, or 78 for `%78 = ...`) stays on the node it created, so that messages
     * and the printer use the source's names; a binding that only renames an existing
     * node (`%1 = %0;`) leaves it alone. */
    byocl_node_kind kind = byocl_node_kind_of(P->fn, id);
    if (id >= first_new && kind != BYOCL_NODE_VAR && kind != BYOCL_NODE_CONSTANT) {
        const char *name = tok_str(P, &name_tok);
        if (!name)
            return false;
        byocl_error e;
        if (byocl_node_set_name(P->fn, id, name, &e) != BYOCL_OK) {
            fail_from(P, &name_tok, &e);
            return false;
        }
    }
    return true;
}

static bool parse_body(parser *P)
{
    if (!expect(P, TOK_LBRACE, "'{'", NULL))
        return false;
    while (peek(P, 0)->kind == TOK_LOCAL && peek(P, 1)->kind == TOK_EQUAL)
        if (!parse_binding(P))
            return false;
    text_token at = *peek(P, 0);
    int body = parse_expr(P);
    if (body < 0)
        return false;
    byocl_error e;
    if (byocl_function_set_body(P->fn, body, &e) != BYOCL_OK) {
        fail_from(P, &at, &e);
        return false;
    }
    return expect(P, TOK_RBRACE, "'}'", NULL);
}

static bool parse_function(parser *P)
{
    next(P); /* def */
    text_token name_tok;
    if (!expect(P, TOK_GLOBAL, "a function name like '@main'", &name_tok))
        return false;
    const char *name = tok_str(P, &name_tok);
    if (!name)
        return false;
    if (byocl_module_find(P->mod, name)) {
        fail_tok(P, &name_tok, BYOCL_ERR_INVALID, "function '@%s' is already defined", name);
        return false;
    }
    byocl_error e;
    P->fn = byocl_module_add_function(P->mod, name, &e);
    if (!P->fn) {
        fail_from(P, &name_tok, &e);
        return false;
    }
    text_names_clear(&P->scope);
    if (!parse_param_list(P))
        return false;
    if (accept(P, TOK_ARROW)) {
        text_token at = *peek(P, 0);
        const byocl_type *ret = parse_type(P);
        if (!ret)
            return false;
        if (byocl_function_set_ret_type(P->fn, ret, &e) != BYOCL_OK) {
            fail_from(P, &at, &e);
            return false;
        }
    }
    return parse_body(P);
}

/* Calls of global functions may precede the callee's definition: checked once all are in
 * (their arity and types are infer_types' to check). */
static bool check_global_calls(parser *P)
{
    for (int f = 0; f < byocl_module_num_functions(P->mod); f++) {
        const byocl_function *fn = byocl_module_function_at(P->mod, f);
        for (int id = 0; id < byocl_function_num_nodes(fn); id++) {
            const char *callee_name = byocl_node_callee(fn, id);
            if (!callee_name)
                continue;
            int line, col;
            byocl_node_pos(fn, id, &line, &col);
            if (!byocl_module_find(P->mod, callee_name)) {
                fail_at(P, line, col, BYOCL_ERR_NOT_FOUND, "unknown function '@%s'", callee_name);
                return false;
            }
        }
    }
    return true;
}

/* '#' '[' word ... : the version header or the metadata section. */
static bool at_hash_section(parser *P, const char *word)
{
    return at_kind(P, TOK_HASH) && peek(P, 1)->kind == TOK_LBRACKET && at_word(P, 2, word);
}

static bool parse_module(parser *P)
{
    if (at_hash_section(P, "version")) {
        next(P);
        next(P);
        next(P);
        if (!expect(P, TOK_EQUAL, "'='", NULL) || !expect(P, TOK_STRING, "a version string", NULL) ||
            !expect(P, TOK_RBRACKET, "']'", NULL))
            return false;
    }
    for (;;) {
        if (at_kind(P, TOK_EOF))
            break;
        if (at_hash_section(P, "metadata")) {
            next(P);
            next(P);
            next(P);
            if (!expect(P, TOK_RBRACKET, "']'", NULL))
                return false;
            break; /* TVM's JSON: read at the first meta constant (load_metadata_section) */
        }
        if (!at_word(P, 0, "def")) {
            fail_expected(P, peek(P, 0), "'def'");
            return false;
        }
        if (!parse_function(P))
            return false;
    }
    return check_global_calls(P);
}

static void parser_init(parser *P, const char *text, size_t len, const char *filename,
                        const byocl_params *meta, byocl_module *mod)
{
    memset(P, 0, sizeof *P);
    text_lexer_init(&P->lx, text, len);
    P->filename = filename ? filename : "<input>";
    P->meta = meta;
    P->mod = mod;
    text_names_init(&P->scope);
}

/* Hands the parser's error to the caller. */
static byocl_status parser_finish(parser *P, byocl_error *err)
{
    text_names_free(&P->scope);
    byocl_params_free(P->section);
    if (!P->failed)
        return BYOCL_OK;
    if (err)
        *err = P->err;
    return P->err.status;
}

byocl_status byocl_text_parse(const char *text, size_t len, const char *filename,
                              const byocl_params *meta, byocl_module **out, byocl_error *err)
{
    *out = NULL;
    byocl_module *mod = byocl_module_new();
    if (!mod)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    parser P;
    parser_init(&P, text, len, filename, meta, mod);
    parse_module(&P);
    byocl_status status = parser_finish(&P, err);
    if (status != BYOCL_OK) {
        byocl_module_free(mod);
        return status;
    }
    *out = mod;
    return BYOCL_OK;
}

byocl_status byocl_text_parse_file(const char *path, const byocl_params *meta,
                                   byocl_module **out, byocl_error *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return byocl_error_set(err, BYOCL_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            size_t new_cap = cap ? cap * 2 : 65536;
            char *grown = new_cap > cap ? realloc(text, new_cap) : NULL;
            if (!grown) {
                free(text);
                fclose(f);
                return byocl_error_set(err, BYOCL_ERR_NOMEM, "'%s' is too large to read", path);
            }
            text = grown;
            cap = new_cap;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    bool read_failed = ferror(f);
    fclose(f);
    if (read_failed) {
        free(text);
        return byocl_error_set(err, BYOCL_ERR_IO, "cannot read '%s'", path);
    }
    byocl_status status = byocl_text_parse(text, len, path, meta, out, err);
    free(text);
    return status;
}

byocl_status byocl_text_parse_attrs(byocl_module *m, const char *text, byocl_attrs *out,
                                    byocl_error *err)
{
    parser P;
    if (!text)
        text = "";
    parser_init(&P, text, strlen(text), "attributes", NULL, m);
    while (!at_kind(&P, TOK_EOF) && !P.failed) {
        const text_token *tok = peek(&P, 0);
        if (tok->kind != TOK_IDENT || peek(&P, 1)->kind != TOK_EQUAL) {
            fail_expected(&P, tok, "'key=value'");
            break;
        }
        byocl_attr attr;
        text_token key_tok;
        if (!parse_keyword_attr(&P, &attr, &key_tok) || !add_attr(&P, out, &attr, &key_tok))
            break;
        if (!accept(&P, TOK_COMMA) && !at_kind(&P, TOK_EOF))
            fail_expected(&P, peek(&P, 0), "',' or the end of the attributes");
    }
    return parser_finish(&P, err);
}
