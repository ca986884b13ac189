/* Whole-file reads and atomic writes, shared by the tensor file formats. */
#ifndef BYOCL_FILE_UTIL_H
#define BYOCL_FILE_UTIL_H

#include <stddef.h>

#include "byocl/error.h"

/* One piece of a file to write (so that a header and a tensor's data need no joining). */
typedef struct byocl_file_part {
    const void *data;
    size_t len;
} byocl_file_part;

/* Reads the whole file into a malloc'ed buffer (NUL-terminated for convenience; *len
 * excludes the NUL). Errors name the path. */
byocl_status base_file_read_all(const char *path, void **out, size_t *len, byocl_error *err);

/* Writes the parts to "<path>.tmp.<pid>.<n>" and renames it over `path`: the file appears
 * whole or not at all, and the temporary is removed on failure. */
byocl_status base_file_write_atomic(const char *path, const byocl_file_part *parts,
                                    int n_parts, byocl_error *err);

/* "dir/name" in a malloc'ed string (NULL when out of memory). */
char *base_path_join(const char *dir, const char *name);

/* Removes the files directly in `dir`, then `dir` itself (the temporary or replaced
 * folder of an atomic folder write; such folders hold no subfolders). */
void base_dir_remove_files(const char *dir);

#endif
