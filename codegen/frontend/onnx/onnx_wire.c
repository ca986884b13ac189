/* Protobuf's wire format, just enough to set a model's weights aside. protobuf-c copies
 * every bytes field it unpacks, so a model unpacked whole holds its weights twice (the
 * file's bytes and raw_data's copies) before byocl copies them into tensors. Almost all of
 * a real model is its initializers' raw_data: onnx_wire_strip copies the ModelProto
 * without those, walking ModelProto.graph (field 7) -> GraphProto.initializer (field 5)
 * -> TensorProto.raw_data (field 9) and rewriting the two enclosing lengths, and records
 * where each raw_data lies, for the importer to copy each one once, straight from the
 * file, when it needs it. Everything else is copied as it is, so the skeleton unpacks to
 * the same message as the whole file, less raw_data.
 *
 * The walk is stricter than protobuf-c (no groups, lengths below 2^31, one graph field):
 * whatever it does not handle is left to unpacking the model whole, which reports what is
 * wrong or reads it the slow way. */
#include "onnx_wire.h"

#include <stdlib.h>
#include <string.h>

enum { MODEL_GRAPH = 7, GRAPH_INITIALIZER = 5, TENSOR_RAW_DATA = 9 };
enum { DEPTH_MODEL, DEPTH_GRAPH, DEPTH_TENSOR };
enum { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_BYTES = 2, WIRE_FIXED32 = 5 };

typedef struct strip_state {
    const uint8_t *in;
    onnx_wire_skeleton *out;
    size_t cap, cap_inits;
    int n_graphs;
} strip_state;

/* A varint of at most `max` bytes at in[*pos, end). */
static bool read_varint(const uint8_t *in, size_t end, size_t *pos, int max, uint64_t *v)
{
    *v = 0;
    for (int i = 0; i < max && *pos < end; i++) {
        uint8_t b = in[(*pos)++];
        *v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80))
            return true;
    }
    return false;
}

static byocl_status append(strip_state *s, const uint8_t *bytes, size_t n)
{
    onnx_wire_skeleton *o = s->out;
    if (o->len + n > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < o->len + n)
            cap *= 2;
        uint8_t *d = realloc(o->data, cap);
        if (!d)
            return BYOCL_ERR_NOMEM;
        o->data = d;
        s->cap = cap;
    }
    memcpy(o->data + o->len, bytes, n);
    o->len += n;
    return BYOCL_OK;
}

/* Puts the length of what was appended since `from` before it, as a varint. */
static byocl_status prefix_length(strip_state *s, size_t from)
{
    size_t n = s->out->len - from;
    uint8_t v[10];
    int k = 0;
    for (size_t x = n; k == 0 || x; x >>= 7)
        v[k++] = (uint8_t)((x & 0x7f) | (x >> 7 ? 0x80 : 0));
    byocl_status st = append(s, v, (size_t)k); /* grows the buffer by k */
    if (st != BYOCL_OK)
        return st;
    memmove(s->out->data + from + k, s->out->data + from, n);
    memcpy(s->out->data + from, v, (size_t)k);
    return BYOCL_OK;
}

static byocl_status add_init(strip_state *s)
{
    onnx_wire_skeleton *o = s->out;
    if (o->n_inits == s->cap_inits) {
        size_t cap = s->cap_inits ? 2 * s->cap_inits : 64;
        onnx_wire_init *p = realloc(o->inits, sizeof *p * cap);
        if (!p)
            return BYOCL_ERR_NOMEM;
        o->inits = p;
        s->cap_inits = cap;
    }
    o->inits[o->n_inits++] = (onnx_wire_init){0};
    return BYOCL_OK;
}

/* Copies the fields of the message in[start, end) at `depth`, the nested graph and
 * initializers stripped in turn, raw_data left out. */
static byocl_status strip_message(strip_state *s, size_t start, size_t end, int depth)
{
    size_t pos = start;
    while (pos < end) {
        size_t field_at = pos;
        uint64_t tag, v;
        if (!read_varint(s->in, end, &pos, 5, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff)
            return BYOCL_ERR_INVALID;
        uint64_t field = tag >> 3;
        size_t tag_end = pos, body = pos, body_len = 0;
        switch (tag & 7) {
        case WIRE_VARINT:
            if (!read_varint(s->in, end, &pos, 10, &v))
                return BYOCL_ERR_INVALID;
            break;
        case WIRE_FIXED64:
        case WIRE_FIXED32: {
            size_t n = (tag & 7) == WIRE_FIXED64 ? 8 : 4;
            if (end - pos < n)
                return BYOCL_ERR_INVALID;
            pos += n;
            break;
        }
        case WIRE_BYTES:
            if (!read_varint(s->in, end, &pos, 5, &v) || v > INT32_MAX || end - pos < v)
                return BYOCL_ERR_INVALID;
            body = pos;
            body_len = (size_t)v;
            pos += body_len;
            break;
        default: /* groups, and wire types protobuf does not define */
            return BYOCL_ERR_INVALID;
        }
        bool bytes = (tag & 7) == WIRE_BYTES;
        if (bytes && depth == DEPTH_TENSOR && field == TENSOR_RAW_DATA) {
            /* The last one counts, as protobuf's rule for a repeated scalar field says. */
            onnx_wire_init *init = &s->out->inits[s->out->n_inits - 1];
            *init = (onnx_wire_init){.offset = body, .len = body_len, .has_raw = true};
            continue;
        }
        bool nested = bytes && ((depth == DEPTH_MODEL && field == MODEL_GRAPH) ||
                                (depth == DEPTH_GRAPH && field == GRAPH_INITIALIZER));
        byocl_status st;
        if (!nested) {
            st = append(s, s->in + field_at, pos - field_at);
        } else {
            /* Pieces of one graph would merge: each piece's initializers would need
             * matching up again. Exporters write one; the rare other case reads whole. */
            if (depth == DEPTH_MODEL && ++s->n_graphs > 1)
                return BYOCL_ERR_INVALID;
            if (depth == DEPTH_GRAPH && (st = add_init(s)) != BYOCL_OK)
                return st;
            st = append(s, s->in + field_at, tag_end - field_at);
            size_t from = s->out->len;
            if (st == BYOCL_OK)
                st = strip_message(s, body, body + body_len, depth + 1);
            if (st == BYOCL_OK)
                st = prefix_length(s, from);
        }
        if (st != BYOCL_OK)
            return st;
    }
    return BYOCL_OK;
}

byocl_status onnx_wire_strip(const uint8_t *data, size_t len, onnx_wire_skeleton *out)
{
    *out = (onnx_wire_skeleton){0};
    strip_state s = {.in = data, .out = out};
    byocl_status st = strip_message(&s, 0, len, DEPTH_MODEL);
    if (st != BYOCL_OK)
        onnx_wire_skeleton_free(out);
    return st;
}

void onnx_wire_skeleton_free(onnx_wire_skeleton *s)
{
    free(s->data);
    free(s->inits);
    *s = (onnx_wire_skeleton){0};
}
