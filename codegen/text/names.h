/* A hash table from names (pointer + length, not copied) to node ids, with the position
 * where each name was defined. The parser's scope and the printer's set of used names. */
#ifndef BYOCL_TEXT_NAMES_H
#define BYOCL_TEXT_NAMES_H

#include <stdbool.h>
#include <stddef.h>

typedef struct text_name_slot {
    const char *name; /* NULL: empty slot */
    size_t len;
    int id;
    int line, col;
} text_name_slot;

typedef struct text_names {
    text_name_slot *slots;
    size_t cap, count;
} text_names;

void text_names_init(text_names *t);
void text_names_free(text_names *t);
/* Forgets every name, keeping the storage. */
void text_names_clear(text_names *t);
/* The entry for the name, or NULL. */
const text_name_slot *text_names_find(const text_names *t, const char *name, size_t len);
/* Adds a name that is not present yet; the name's characters must outlive the table.
 * Returns false when out of memory. */
bool text_names_add(text_names *t, const char *name, size_t len, int id, int line, int col);

#endif
