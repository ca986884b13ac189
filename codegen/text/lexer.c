/* Lexer for TVM Relay's text format (see parser.c for the grammar). */
#include "lexer.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"

static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }

/* Variable names as TVM prints them, e.g. `block5_conv3/convolution/ReadVariableOp:0`:
 * letters, digits and '_', plus '/', ':' and '-' inside the name (followed by a letter,
 * digit or '_') and '.' followed by a letter or '_' (so `%8.0` stays item 0 of %8).
 * A name that starts with a digit is a number: digits only. Returns the end of the name. */
static const char *scan_name(const char *p, const char *end)
{
    if (p < end && is_digit(*p)) {
        while (p < end && is_digit(*p))
            p++;
        return p;
    }
    if (p >= end || !is_alpha(*p))
        return p;
    while (p < end) {
        if (is_alnum(*p)) {
            p++;
        } else if ((*p == '/' || *p == ':' || *p == '-') && p + 1 < end && is_alnum(p[1])) {
            p++;
        } else if (*p == '.' && p + 1 < end && is_alpha(p[1])) {
            p++;
        } else {
            break;
        }
    }
    return p;
}

/* Identifiers: op names (`nn.conv2d`), keywords, dtypes. */
static const char *scan_ident(const char *p, const char *end)
{
    if (p >= end || !is_alpha(*p))
        return p;
    while (p < end && (is_alnum(*p) || (*p == '.' && p + 1 < end && is_alpha(p[1]))))
        p++;
    return p;
}

bool text_is_numeric_name(const char *name)
{
    if (!name || !*name)
        return false;
    for (const char *p = name; *p; p++)
        if (!is_digit(*p))
            return false;
    return true;
}

bool text_is_plain_local_name(const char *name)
{
    if (!name || !*name)
        return false;
    const char *end = name + strlen(name);
    return scan_name(name, end) == end;
}

void text_lexer_init(text_lexer *lx, const char *src, size_t len)
{
    memset(lx, 0, sizeof *lx);
    lx->src = src;
    lx->end = src + len;
    lx->p = src;
    lx->line_start = src;
    lx->line = 1;
}

static int col_of(const text_lexer *lx, const char *p) { return (int)(p - lx->line_start) + 1; }

/* Records a lexical error at line:col; the lexer then returns it forever. */
static text_token lex_error_v(text_lexer *lx, int line, int col, const char *fmt, va_list ap)
{
    vsnprintf(lx->error, sizeof lx->error, fmt, ap);
    memset(&lx->error_tok, 0, sizeof lx->error_tok);
    lx->error_tok.kind = TOK_ERROR;
    lx->error_tok.text = lx->end;
    lx->error_tok.line = line;
    lx->error_tok.col = col;
    lx->failed = true;
    lx->p = lx->end;
    return lx->error_tok;
}

/* An error at `at`, which lies on the current line. */
static text_token lex_error(text_lexer *lx, const char *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static text_token lex_error(text_lexer *lx, const char *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    text_token tok = lex_error_v(lx, lx->line, col_of(lx, at), fmt, ap);
    va_end(ap);
    return tok;
}

static text_token lex_error_at(text_lexer *lx, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static text_token lex_error_at(text_lexer *lx, int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    text_token tok = lex_error_v(lx, line, col, fmt, ap);
    va_end(ap);
    return tok;
}

static void newline(text_lexer *lx, const char *after)
{
    lx->line++;
    lx->line_start = after;
}

/* Skips blanks and comments: line comments (`// ...`) and block comments (slash-star to
 * star-slash), which nest as in TVM's lexer.
 * Returns false (with the error recorded) for an unterminated comment. */
static bool skip_blanks(text_lexer *lx)
{
    const char *p = lx->p, *end = lx->end;
    while (p < end) {
        if (*p == '\n') {
            p++;
            newline(lx, p);
        } else if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v') {
            p++;
        } else if (*p == '/' && p + 1 < end && p[1] == '/') {
            while (p < end && *p != '\n')
                p++;
        } else if (*p == '/' && p + 1 < end && p[1] == '*') {
            int start_line = lx->line, start_col = col_of(lx, p);
            int depth = 1;
            p += 2;
            while (p < end && depth > 0) {
                if (*p == '*' && p + 1 < end && p[1] == '/') {
                    depth--;
                    p += 2;
                } else if (*p == '/' && p + 1 < end && p[1] == '*') {
                    depth++;
                    p += 2;
                } else if (*p == '\n') {
                    p++;
                    newline(lx, p);
                } else {
                    p++;
                }
            }
            if (depth > 0) {
                lex_error_at(lx, start_line, start_col, "unterminated comment");
                return false;
            }
        } else {
            break;
        }
    }
    lx->p = p;
    return true;
}

/* Maps a literal suffix ("f", "f16", "i64", ...) to a dtype. */
static bool suffix_dtype(const char *s, size_t n, byocl_dtype *dtype, bool *is_float)
{
    static const struct {
        const char *suffix;
        byocl_dtype dtype;
        bool is_float;
    } table[] = {
        {"f", BYOCL_FLOAT32, true},  {"f32", BYOCL_FLOAT32, true}, {"f16", BYOCL_FLOAT16, true},
        {"i32", BYOCL_INT32, false}, {"i64", BYOCL_INT64, false},  {"i8", BYOCL_INT8, false},
        {"u8", BYOCL_UINT8, false},  {"f64", BYOCL_FLOAT64, true}, {"i16", BYOCL_INT16, false},
        {"u16", BYOCL_UINT16, false}, {"u32", BYOCL_UINT32, false}, {"u64", BYOCL_UINT64, false},
        {"bf16", BYOCL_BFLOAT16, true},
    };
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
        if (strlen(table[k].suffix) == n && memcmp(table[k].suffix, s, n) == 0) {
            *dtype = table[k].dtype;
            *is_float = table[k].is_float;
            return true;
        }
    }
    return false;
}

/* `inff`, `nanf16`, ...: non-finite floats as the printer writes them. `p` is after an
 * optional '-'. Returns the end of the literal or NULL. */
static const char *scan_special_float(const char *p, const char *end, text_token *tok)
{
    const char *word_end = scan_ident(p, end);
    size_t n = (size_t)(word_end - p);
    if (n < 4 || (memcmp(p, "inf", 3) != 0 && memcmp(p, "nan", 3) != 0))
        return NULL;
    bool is_float = false;
    if (!suffix_dtype(p + 3, n - 3, &tok->dtype, &is_float) || !is_float)
        return NULL;
    tok->is_float = true;
    tok->has_suffix = true;
    tok->f = p[0] == 'i' ? HUGE_VAL : NAN;
    return word_end;
}

static text_token lex_number(text_lexer *lx, text_token tok)
{
    const char *p = lx->p, *end = lx->end, *start = p;
    bool negative = false;
    if (*p == '-') {
        negative = true;
        p++;
    }
    if (p < end && !is_digit(*p)) {
        const char *lit_end = scan_special_float(p, end, &tok);
        if (!lit_end)
            return lex_error(lx, start, "unexpected character '-'");
        if (negative)
            tok.f = -tok.f;
        tok.kind = TOK_NUMBER;
        tok.len = (size_t)(lit_end - start);
        lx->p = lit_end;
        return tok;
    }
    /* Right after a '.' (as in `%8.0.1`) a number is a tuple index: digits only. */
    bool index_only = start > lx->src && start[-1] == '.';
    while (p < end && is_digit(*p))
        p++;
    if (!index_only) {
        if (p + 1 < end && *p == '.' && is_digit(p[1])) {
            tok.is_float = true;
            p++;
            while (p < end && is_digit(*p))
                p++;
        }
        if (p < end && (*p == 'e' || *p == 'E')) {
            const char *q = p + 1;
            if (q < end && (*q == '+' || *q == '-'))
                q++;
            if (q < end && is_digit(*q)) {
                tok.is_float = true;
                p = q;
                while (p < end && is_digit(*p))
                    p++;
            }
        }
    }
    const char *num_end = p;
    if (!index_only && p < end && is_alpha(*p)) {
        const char *suffix = p;
        while (p < end && is_alpha(*p))
            p++;
        while (p < end && is_digit(*p))
            p++;
        bool suffix_float = false;
        if (!suffix_dtype(suffix, (size_t)(p - suffix), &tok.dtype, &suffix_float))
            return lex_error(lx, suffix, "unknown literal suffix '%.*s' (expected f, f16, f64, i32, i64, i16, i8, "
                             "u64, u32, u16 or u8)",
                             (int)(p - suffix), suffix);
        if (tok.is_float && !suffix_float)
            return lex_error(lx, suffix, "a float literal cannot have the integer suffix '%.*s'",
                             (int)(p - suffix), suffix);
        tok.is_float = suffix_float;
        tok.has_suffix = true;
    } else {
        tok.dtype = tok.is_float ? BYOCL_FLOAT32 : BYOCL_INT32;
    }
    if (p < end && is_alnum(*p))
        return lex_error(lx, start, "malformed number '%.*s'", (int)(p - start + 1), start);

    char buf[72];
    size_t n = (size_t)(num_end - start);
    if (n >= sizeof buf)
        return lex_error(lx, start, "number too long");
    memcpy(buf, start, n);
    buf[n] = '\0';
    errno = 0;
    if (tok.is_float) {
        tok.f = strtod(buf, NULL);
    } else if (tok.dtype == BYOCL_UINT64) { /* up to 2^64 - 1: its bits in tok.i */
        unsigned long long v = negative ? 0 : strtoull(buf, NULL, 10);
        if (negative || errno == ERANGE)
            return lex_error(lx, start, "integer literal %s does not fit uint64", buf);
        tok.i = (int64_t)v;
        tok.f = (double)v;
    } else {
        long long v = strtoll(buf, NULL, 10);
        if (errno == ERANGE)
            return lex_error(lx, start, "integer literal %s is out of range", buf);
        tok.i = v;
        tok.f = (double)v;
    }
    tok.kind = TOK_NUMBER;
    tok.len = (size_t)(p - start);
    lx->p = p;
    return tok;
}

static text_token lex_string(text_lexer *lx, text_token tok)
{
    const char *p = lx->p + 1, *end = lx->end;
    while (p < end && *p != '"') {
        if (*p == '\n')
            break;
        if (*p == '\\') {
            if (p + 1 >= end)
                break;
            char e = p[1];
            if (e != '"' && e != '\\' && e != 'n' && e != 't' && e != 'r') {
                char what[24];
                base_char_describe(e, what, sizeof what);
                return lex_error(lx, p, "unknown escape '\\' followed by %s in string", what);
            }
            p += 2;
            continue;
        }
        p++;
    }
    if (p >= end || *p != '"')
        return lex_error(lx, lx->p, "unterminated string");
    p++;
    tok.kind = TOK_STRING;
    tok.len = (size_t)(p - lx->p);
    lx->p = p;
    return tok;
}

size_t text_string_decode(const text_token *tok, char *out)
{
    size_t n = 0;
    for (size_t k = 1; k + 1 < tok->len; k++) {
        char c = tok->text[k];
        if (c == '\\' && k + 2 < tok->len) {
            char e = tok->text[++k];
            c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
        }
        out[n++] = c;
    }
    out[n] = '\0';
    return n;
}

static text_token lex_one(text_lexer *lx)
{
    if (lx->failed)
        return lx->error_tok;
    text_token tok;
    memset(&tok, 0, sizeof tok);
    if (!skip_blanks(lx))
        return lx->error_tok;
    const char *p = lx->p, *end = lx->end;
    tok.text = p;
    tok.line = lx->line;
    tok.col = col_of(lx, p);
    if (p >= end) {
        tok.kind = TOK_EOF;
        return tok;
    }
    char c = *p;
    static const struct {
        char c;
        text_tok_kind kind;
    } punct[] = {
        {'(', TOK_LPAREN}, {')', TOK_RPAREN}, {'[', TOK_LBRACKET}, {']', TOK_RBRACKET},
        {'{', TOK_LBRACE}, {'}', TOK_RBRACE}, {',', TOK_COMMA},    {':', TOK_COLON},
        {';', TOK_SEMI},   {'=', TOK_EQUAL},  {'.', TOK_DOT},      {'#', TOK_HASH},
    };
    for (size_t k = 0; k < sizeof punct / sizeof punct[0]; k++) {
        if (c == punct[k].c) {
            tok.kind = punct[k].kind;
            tok.len = 1;
            lx->p = p + 1;
            return tok;
        }
    }
    if (c == '-' && p + 1 < end && p[1] == '>') {
        tok.kind = TOK_ARROW;
        tok.len = 2;
        lx->p = p + 2;
        return tok;
    }
    if (c == '%' || c == '@') {
        const char *name_end = scan_name(p + 1, end);
        if (name_end == p + 1)
            return lex_error(lx, p, "expected a name after '%c'", c);
        tok.kind = c == '%' ? TOK_LOCAL : TOK_GLOBAL;
        tok.text = p + 1;
        tok.len = (size_t)(name_end - (p + 1));
        lx->p = name_end;
        return tok;
    }
    if (is_digit(c) || c == '-')
        return lex_number(lx, tok);
    if (c == '"')
        return lex_string(lx, tok);
    if (is_alpha(c)) {
        const char *lit_end = scan_special_float(p, end, &tok);
        if (lit_end) {
            tok.kind = TOK_NUMBER;
            tok.len = (size_t)(lit_end - p);
            lx->p = lit_end;
            return tok;
        }
        const char *word_end = scan_ident(p, end);
        tok.kind = TOK_IDENT;
        tok.len = (size_t)(word_end - p);
        lx->p = word_end;
        return tok;
    }
    char what[24];
    base_char_describe(c, what, sizeof what);
    return lex_error(lx, p, "unexpected character %s", what);
}

const text_token *text_lexer_peek(text_lexer *lx, int k)
{
    while (lx->n_ahead <= k)
        lx->ahead[lx->n_ahead++] = lex_one(lx);
    return &lx->ahead[k];
}

text_token text_lexer_next(text_lexer *lx)
{
    text_token tok = *text_lexer_peek(lx, 0);
    lx->n_ahead--;
    memmove(&lx->ahead[0], &lx->ahead[1], (size_t)lx->n_ahead * sizeof lx->ahead[0]);
    return tok;
}
