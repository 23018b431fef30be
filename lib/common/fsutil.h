/* Small file-system helpers with the run directory's modes and errors. */
#ifndef PROF_FSUTIL_H
#define PROF_FSUTIL_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define PROF_DIR_MODE  0750
#define PROF_FILE_MODE 0640

/* mkdir -p with PROF_DIR_MODE (past the umask) for the parts it creates.
 * 0, -ELOOP when the last component is a symbolic link, -ENOTDIR when it is
 * not a directory, or -errno. */
int fs_mkdir_p(const char *path);

/* Reads a whole file into a NUL-terminated malloc'd buffer. 0 or -errno. */
int fs_read_file(const char *path, char **out, size_t *len);

/* Writes `len` bytes to `path` through a temporary file and rename, so a
 * reader sees the old or the new content, never half. 0 or -errno. */
int fs_write_atomic(const char *path, const void *data, size_t len);

/* Creates `path` afresh (whatever was there, a link included, is unlinked
 * first; O_EXCL|O_NOFOLLOW) with PROF_FILE_MODE past the umask, opened with
 * `flags` (O_WRONLY, O_RDWR). A descriptor, or -errno. */
int fs_create_file(const char *path, int flags);

/* Writes n bytes to fd, all of them (retrying short writes and EINTR).
 * 0 or -errno. */
int fs_write_all(int fd, const void *p, size_t n);

/* Writes n bytes to f past its buffer (after what f holds), with write(2)
 * on its descriptor: a large block needs no copy into the FILE (that copy
 * was a tenth of a parse's instructions). A FILE with no descriptor
 * (open_memstream) takes them through fwrite. 0 or -1. */
int fs_fwrite_direct(FILE *f, const void *p, size_t n);

/* path joined: a + "/" + b, malloc'd (NULL on ENOMEM). */
char *fs_join(const char *a, const char *b);

#endif
