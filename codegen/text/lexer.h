/* Tokens of TVM Relay's text format. The lexer works on demand with a few tokens of
 * lookahead, so that the parser can stop at `#[metadata]` without lexing TVM's JSON. */
#ifndef BYOCL_TEXT_LEXER_H
#define BYOCL_TEXT_LEXER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "byocl/tensor.h"

typedef enum text_tok_kind {
    TOK_EOF = 0,
    TOK_ERROR,    /* a lexical error; the message is in the lexer */
    TOK_IDENT,    /* def, Tensor, float32, nn.conv2d, True, meta, relay.Constant */
    TOK_LOCAL,    /* %name (text without '%') */
    TOK_GLOBAL,   /* @name (text without '@') */
    TOK_NUMBER,   /* 3, -1, 2f, 2e-05f, 1.5f16, 0i64, inff */
    TOK_STRING,   /* "..." (text with the quotes; see text_string_decode) */
    TOK_LPAREN,
    TOK_RPAREN,
    TOK_LBRACKET,
    TOK_RBRACKET,
    TOK_LBRACE,
    TOK_RBRACE,
    TOK_COMMA,
    TOK_COLON,
    TOK_SEMI,
    TOK_EQUAL,
    TOK_DOT,
    TOK_ARROW,    /* -> */
    TOK_HASH      /* # */
} text_tok_kind;

typedef struct text_token {
    text_tok_kind kind;
    const char *text; /* the token's characters in the source (LOCAL/GLOBAL: the name) */
    size_t len;
    int line, col;    /* 1-based position of the token's first character */
    /* NUMBER */
    bool is_float;    /* has a fraction, an exponent or a float suffix */
    bool has_suffix;  /* an explicit dtype suffix (f, f16, i64, ...) */
    byocl_dtype dtype; /* float32 for unsuffixed floats, int32 for unsuffixed ints */
    double f;         /* the value (also set for integers) */
    int64_t i;        /* integers only */
} text_token;

#define TEXT_LEX_LOOKAHEAD 3

typedef struct text_lexer {
    const char *src, *end, *p;
    const char *line_start;
    int line;
    text_token ahead[TEXT_LEX_LOOKAHEAD];
    int n_ahead;
    bool failed;      /* after an error every further token is the same error */
    text_token error_tok;
    char error[160];  /* message of the TOK_ERROR token */
} text_lexer;

void text_lexer_init(text_lexer *lx, const char *src, size_t len);
/* Token k ahead of the current position (k < TEXT_LEX_LOOKAHEAD); 0 is the next one. */
const text_token *text_lexer_peek(text_lexer *lx, int k);
/* Consumes and returns the next token. */
text_token text_lexer_next(text_lexer *lx);

/* Decodes a STRING token (escapes \" \\ \n \t) into `out`, which must hold tok->len bytes;
 * returns the decoded length. */
size_t text_string_decode(const text_token *tok, char *out);

/* True when `%name` lexes back as exactly this name (so the printer may use it). */
bool text_is_plain_local_name(const char *name);
/* True when the name is all digits ("12"): a number the printer assigns, not a name. */
bool text_is_numeric_name(const char *name);

#endif
