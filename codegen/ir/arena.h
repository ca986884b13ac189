/* Bump allocator: many small allocations freed together (a module's names, types,
 * attributes, argument lists). */
#ifndef BYOCL_ARENA_H
#define BYOCL_ARENA_H

#include <stddef.h>

typedef struct byocl_arena_chunk byocl_arena_chunk;
typedef struct byocl_arena {
    byocl_arena_chunk *head;
} byocl_arena;

void ir_arena_init(byocl_arena *a);
void ir_arena_release(byocl_arena *a);
/* Zeroed, 16-byte aligned; NULL when out of memory. */
void *ir_arena_alloc(byocl_arena *a, size_t size);
char *ir_arena_strdup(byocl_arena *a, const char *s);
char *ir_arena_strndup(byocl_arena *a, const char *s, size_t n);
void *ir_arena_memdup(byocl_arena *a, const void *p, size_t size);

#endif
