/* Whole-file reads and atomic (temporary file + rename) writes. */
#include "file_util.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "textbuf.h"

byocl_status base_file_read_all(const char *path, void **out, size_t *len, byocl_error *err)
{
    *out = NULL;
    *len = 0;
    if (!path)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "no file name given");
    FILE *f = fopen(path, "rb");
    if (!f)
        return byocl_error_set(err, BYOCL_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    /* Sized from fstat when it can be (one read, no regrowth: the size and one byte more,
     * to see the end); pipes grow as needed. */
    struct stat sb;
    size_t want = 1 << 16;
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size < SIZE_MAX - 2)
        want = (size_t)sb.st_size + 1;
    byocl_textbuf b = {0};
    while (base_textbuf_reserve(&b, want)) {
        size_t room = b.cap - b.len - 1, got = fread(b.data + b.len, 1, room, f);
        b.len += got;
        b.data[b.len] = '\0';
        if (got < room)
            break;
        want = b.cap; /* full: at least double */
    }
    bool failed = ferror(f);
    int saved = errno;
    fclose(f);
    if (b.oom) {
        base_textbuf_free(&b);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory reading %s", path);
    }
    if (failed) {
        base_textbuf_free(&b);
        return byocl_error_set(err, BYOCL_ERR_IO, "cannot read %s: %s", path, strerror(saved));
    }
    *len = b.len;
    *out = base_textbuf_take(&b);
    return BYOCL_OK;
}

static bool write_fully(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return false;
        }
        p += w;
        len -= (size_t)w;
    }
    return true;
}

byocl_status base_file_write_atomic(const char *path, const byocl_file_part *parts,
                                    int n_parts, byocl_error *err)
{
    if (!path)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "no file name given");
    size_t tmp_len = strlen(path) + 32;
    char *tmp = malloc(tmp_len);
    if (!tmp)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory writing %s", path);
    /* pid and a per-process count: threads writing the same path (two builds of one
     * model filling a cache) each write a file of their own. */
    static atomic_uint writes;
    snprintf(tmp, tmp_len, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&writes, 1));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0) {
        byocl_error_set(err, BYOCL_ERR_IO, "cannot write %s: %s", path, strerror(errno));
        free(tmp);
        return BYOCL_ERR_IO;
    }
    bool ok = true;
    for (int i = 0; ok && i < n_parts; i++)
        ok = write_fully(fd, parts[i].data, parts[i].len);
    /* fsync before rename: after a crash the file is either the old one or whole. */
    ok = ok && fsync(fd) == 0;
    int saved = errno;
    if (close(fd) != 0 && ok) {
        ok = false;
        saved = errno;
    }
    if (ok && rename(tmp, path) != 0) {
        ok = false;
        saved = errno;
    }
    if (!ok) {
        remove(tmp);
        byocl_error_set(err, BYOCL_ERR_IO, "cannot write %s: %s", path, strerror(saved));
    }
    free(tmp);
    return ok ? BYOCL_OK : BYOCL_ERR_IO;
}

char *base_path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    if (path)
        snprintf(path, n, "%s/%s", dir, name);
    return path;
}

void base_dir_remove_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char *path = base_path_join(dir, e->d_name);
            if (path)
                unlink(path);
            free(path);
        }
        closedir(d);
    }
    rmdir(dir);
}
