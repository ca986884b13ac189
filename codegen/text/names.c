/* Open-addressing hash table of names; see names.h. */
#include "names.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_name(const char *name, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t k = 0; k < len; k++) {
        h ^= (unsigned char)name[k];
        h *= 1099511628211ull;
    }
    return h;
}

void text_names_init(text_names *t) { memset(t, 0, sizeof *t); }

void text_names_free(text_names *t)
{
    free(t->slots);
    memset(t, 0, sizeof *t);
}

void text_names_clear(text_names *t)
{
    if (t->slots)
        memset(t->slots, 0, t->cap * sizeof t->slots[0]);
    t->count = 0;
}

/* The slot holding the name, or the empty slot where it would go (cap is a power of 2). */
static text_name_slot *probe(text_name_slot *slots, size_t cap, const char *name, size_t len)
{
    size_t k = (size_t)hash_name(name, len) & (cap - 1);
    while (slots[k].name && !(slots[k].len == len && memcmp(slots[k].name, name, len) == 0))
        k = (k + 1) & (cap - 1);
    return &slots[k];
}

const text_name_slot *text_names_find(const text_names *t, const char *name, size_t len)
{
    if (t->count == 0)
        return NULL;
    const text_name_slot *slot = probe(t->slots, t->cap, name, len);
    return slot->name ? slot : NULL;
}

static bool grow(text_names *t)
{
    size_t cap = t->cap ? t->cap * 2 : 64;
    text_name_slot *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    for (size_t k = 0; k < t->cap; k++)
        if (t->slots[k].name)
            *probe(slots, cap, t->slots[k].name, t->slots[k].len) = t->slots[k];
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return true;
}

bool text_names_add(text_names *t, const char *name, size_t len, int id, int line, int col)
{
    if ((t->count + 1) * 2 > t->cap && !grow(t))
        return false;
    text_name_slot *slot = probe(t->slots, t->cap, name, len);
    slot->name = name;
    slot->len = len;
    slot->id = id;
    slot->line = line;
    slot->col = col;
    t->count++;
    return true;
}
