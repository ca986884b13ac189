/* Bump allocator for a module's small objects: freed all at once with the module. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

struct byocl_arena_chunk {
    byocl_arena_chunk *next;
    size_t used, size;
    _Alignas(16) unsigned char data[];
};

#define ARENA_CHUNK_MIN 16384

void ir_arena_init(byocl_arena *a) { a->head = NULL; }

void ir_arena_release(byocl_arena *a)
{
    byocl_arena_chunk *c = a->head;
    while (c) {
        byocl_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
}

void *ir_arena_alloc(byocl_arena *a, size_t size)
{
    if (size > SIZE_MAX - 64)
        return NULL;
    size = (size + 15) & ~(size_t)15;
    byocl_arena_chunk *c = a->head;
    if (!c || c->size - c->used < size) {
        size_t cap = size > ARENA_CHUNK_MIN ? size : ARENA_CHUNK_MIN;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->size = cap;
        c->used = 0;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

void *ir_arena_memdup(byocl_arena *a, const void *p, size_t size)
{
    void *q = ir_arena_alloc(a, size ? size : 1);
    if (q && size)
        memcpy(q, p, size);
    return q;
}

char *ir_arena_strndup(byocl_arena *a, const char *s, size_t n)
{
    char *q = ir_arena_alloc(a, n + 1);
    if (q) {
        memcpy(q, s, n);
        q[n] = '\0';
    }
    return q;
}

char *ir_arena_strdup(byocl_arena *a, const char *s)
{
    return s ? ir_arena_strndup(a, s, strlen(s)) : NULL;
}
