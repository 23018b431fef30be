/* Small file-system helpers with the run directory's modes and errors. */
#ifndef PROF_FSUTIL_H
#define PROF_FSUTIL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
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

/*
 * Flush-behind, for an output written front to back and not read back
 * (trace_view.json, the CSVs). Each time another window has been written,
 * the kernel is asked to start writing that window to disk, and to drop
 * from its cache the two windows before it: each window is asked twice,
 * so one still being written the first time goes the second. Neither
 * call waits, and only clean pages are dropped, so no data is at risk; a
 * page still being written when asked stays cached, as it would have
 * anyway.
 *
 * Why: a parse of 50 M events writes 10 GB. Kept in the page cache, that
 * much output pushes out what the machine's other work had cached, counts
 * against the job's cgroup memory limit, and on a virtual machine is
 * 10 GB of memory the host must hand the guest page by page: six to
 * eight times the cost of the writes themselves, measured. Dropped behind, the same
 * few windows of pages are used over and over. (PostgreSQL's *_flush_after
 * and `dd oflag=nocache` do the same.)
 *
 * Off for what is not a regular file with a name: a pipe, a terminal, a
 * scratch file (unlinked already, and read back by the parse). On tmpfs,
 * where the file is its pages, the kernel ignores both calls.
 */
#define FS_BEHIND_WINDOW (32u << 20)
struct fs_behind {
	int state;         /* 0: not looked at yet, 1: on, -1: off */
	uint64_t window;   /* 0: FS_BEHIND_WINDOW (tests use small ones) */
	uint64_t put;      /* the descriptor's offset, as far as we wrote */
	uint64_t next;     /* put at which the next window is complete */
};

/* Writes n bytes to f past its buffer (after what f holds), with write(2)
 * on its descriptor: a large block needs no copy into the FILE (that copy
 * was a tenth of a parse's instructions). A FILE with no descriptor
 * (open_memstream) takes them through fwrite. `b` (zeroed at first)
 * flushes behind the writes. 0 or -errno. */
int fs_fwrite_direct(FILE *f, const void *p, size_t n, struct fs_behind *b);

/*
 * Direct I/O (O_DIRECT), for the largest outputs, written front to back by
 * a background writer (common/bgwrite.h): their bytes go from the writer's
 * buffers to the disk, never through the page cache. Even dropped behind
 * (above), each page of a buffered write is allocated, filled by a copy,
 * put on the LRU, written back and freed. Measured on ext4, 10 M events
 * held to one core: system time 1.4 s of 2.9 buffered, 0.3 s of 1.7
 * direct, the disk's time overlapping the parse.
 *
 * On only where the file system says how to do it (statx's
 * STATX_DIOALIGN, Linux 6.1) with an alignment FS_DIRECT_ALIGN covers,
 * for a regular file with a name whose offset is aligned. Elsewhere
 * (tmpfs, where the page cache is the file; older kernels) the output
 * stays buffered, flushed behind.
 */
#define FS_DIRECT_ALIGN 4096u
/* Turns O_DIRECT on for fd when that is possible and worth it:
 * FS_DIRECT_ALIGN, or 0 when fd stays as it was. Writes must then keep
 * their buffer's address, their length and the offset multiples of it. */
size_t fs_direct_on(int fd);
/* Back to buffered writes (for the tail that is not a whole block). */
void fs_direct_off(int fd);

/* A writer's first failure is the one to report (a full disk, say, not
 * the errors that follow from it): *err, 0 or a positive errno, takes e
 * (a positive errno; 0 counts as EIO) unless it holds one already. */
static inline void fs_err_keep(int *err, int e)
{
	if (!*err)
		*err = e > 0 ? e : EIO;
}

/* path joined: a + "/" + b, malloc'd (NULL on ENOMEM). */
char *fs_join(const char *a, const char *b);

#endif
