#define _GNU_SOURCE   /* sync_file_range, statx, O_DIRECT */
#include "common/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int fs_mkdir_p(const char *path)
{
	char *p = strdup(path);
	if (!p)
		return -ENOMEM;
	int rc = 0;
	for (char *s = p + 1; ; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, PROF_DIR_MODE) == 0) {
			/* mkdir's mode went through the umask; ours are fixed. */
			int fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0 || fchmod(fd, PROF_DIR_MODE) != 0)
				rc = -errno;
			if (fd >= 0)
				close(fd);
		} else if (errno != EEXIST) {
			rc = -errno;
		}
		*s = c;
		if (rc || c == '\0')
			break;
	}
	/* Files are then opened by name under the last directory: it must be
	 * a directory, never a link to one somebody planted. */
	struct stat st;
	if (!rc && lstat(p, &st) != 0)
		rc = -errno;
	else if (!rc && S_ISLNK(st.st_mode))
		rc = -ELOOP;
	else if (!rc && !S_ISDIR(st.st_mode))
		rc = -ENOTDIR;
	free(p);
	return rc;
}

int fs_read_file(const char *path, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	int rc = 0;
	while (buf) {
		if (n + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb) { free(buf); buf = NULL; break; }
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) { rc = -errno; break; }
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (!buf)
		return -ENOMEM;
	if (rc) {
		free(buf);
		return rc;
	}
	buf[n] = '\0';
	*out = buf;
	if (len)
		*len = n;
	return 0;
}

int fs_write_atomic(const char *path, const void *data, size_t len)
{
	size_t plen = strlen(path);
	char *tmp = malloc(plen + 16);
	if (!tmp)
		return -ENOMEM;
	snprintf(tmp, plen + 16, "%s.tmp%d", path, (int)getpid());
	int fd = fs_create_file(tmp, O_WRONLY);
	int rc = 0;
	if (fd < 0) {
		free(tmp);
		return fd;
	}
	rc = fs_write_all(fd, data, len);
	if (close(fd) != 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) != 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

int fs_write_all(int fd, const void *data, size_t n)
{
	const char *p = data;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Once per output, before its first write through us: where it stands. */
static void behind_look(struct fs_behind *b, int fd)
{
	struct stat st;
	off_t at = lseek(fd, 0, SEEK_CUR);
	int on = at >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink > 0;
	if (!b->window)
		b->window = FS_BEHIND_WINDOW;
	b->state = on ? 1 : -1;
	b->put = on ? (uint64_t)at : 0;
	b->next = (b->put / b->window + 1) * b->window;
}

/* Windows are whole multiples of `window` from the file's start; the
 * newest complete one ends at `next`. */
static void behind_wrote(struct fs_behind *b, int fd, size_t n)
{
	uint64_t w = b->window;
	b->put += n;
	for (; b->put >= b->next; b->next += w) {
		sync_file_range(fd, (off_t)(b->next - w), (off_t)w, SYNC_FILE_RANGE_WRITE);
		if (b->next < 3 * w)
			continue;
		posix_fadvise(fd, (off_t)(b->next - 3 * w), (off_t)(2 * w), POSIX_FADV_DONTNEED);
	}
}

/* errno as a result, EIO when a stdio call failed without one */
static int errno_rc(void)
{
	return errno ? -errno : -EIO;
}

int fs_fwrite_direct(FILE *f, const void *p, size_t n, struct fs_behind *b)
{
	int fd = fileno(f);
	errno = 0;
	if (fd < 0)
		return fwrite(p, 1, n, f) == n ? 0 : errno_rc();
	if (fflush(f) != 0)
		return errno_rc();
	if (!b->state)
		behind_look(b, fd);
	int rc = fs_write_all(fd, p, n);
	if (rc)
		return rc;
	if (b->state > 0)
		behind_wrote(b, fd, n);
	return 0;
}

/* The file system's own word that direct I/O works, with an alignment we
 * keep: without it (tmpfs takes O_DIRECT but gains nothing; an old kernel
 * cannot say) the output stays buffered. */
static int direct_supported(int fd)
{
#ifdef STATX_DIOALIGN
	struct statx sx;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) != 0 ||
	    !(sx.stx_mask & STATX_DIOALIGN))
		return 0;
	return sx.stx_dio_offset_align && sx.stx_dio_offset_align <= FS_DIRECT_ALIGN &&
	       sx.stx_dio_mem_align && sx.stx_dio_mem_align <= FS_DIRECT_ALIGN;
#else
	(void)fd;
	return 0;
#endif
}

size_t fs_direct_on(int fd)
{
	struct stat st;
	off_t at = lseek(fd, 0, SEEK_CUR);
	if (at < 0 || at % FS_DIRECT_ALIGN || fstat(fd, &st) != 0 ||
	    !S_ISREG(st.st_mode) || st.st_nlink == 0 || !direct_supported(fd))
		return 0;
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_DIRECT) != 0)
		return 0;
	return FS_DIRECT_ALIGN;
}

void fs_direct_off(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0 && (fl & O_DIRECT))
		fcntl(fd, F_SETFL, fl & ~O_DIRECT);
}

int fs_create_file(const char *path, int flags)
{
	unlink(path);   /* a leftover, or a planted link: never written through */
	int fd = open(path, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, PROF_FILE_MODE);
	if (fd < 0)
		return -errno;
	/* open's mode went through the umask; the run dir's modes are fixed. */
	if (fchmod(fd, PROF_FILE_MODE) != 0) {
		int rc = -errno;
		close(fd);
		unlink(path);
		return rc;
	}
	return fd;
}

char *fs_join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *r = malloc(la + lb + 2);
	if (!r)
		return NULL;
	memcpy(r, a, la);
	r[la] = '/';
	memcpy(r + la + 1, b, lb + 1);
	return r;
}
