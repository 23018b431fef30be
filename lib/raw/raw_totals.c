/* raw_totals_of_dir: record and loss counts from chunk headers alone. */
#include "raw/raw_reader.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH 8

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int pread_full(int fd, void *buf, size_t n, off_t off)
{
	ssize_t r;
	do
		r = pread(fd, buf, n, off);
	while (r < 0 && errno == EINTR);
	return r == (ssize_t)n ? 0 : -1;
}

/* Adds one stream; returns 1 if it is damaged. */
static int add_stream(int fd, struct raw_totals *t)
{
	struct raw_file_header h;
	struct stat st;
	memset(&h, 0, sizeof h);
	if (fstat(fd, &st) != 0 || pread_full(fd, &h, sizeof h, 0) != 0 ||
	    raw_header_check(&h, (uint64_t)st.st_size, NULL, 0) != 0)
		return 1;
	uint64_t size = (uint64_t)st.st_size, lost = 0, i;
	int damaged = 0;
	for (i = 0;; i++) {
		uint64_t off = RAW_HEADER_SIZE + i * (uint64_t)h.chunk_size;
		struct raw_chunk_header ch;
		if (off >= size)
			break;
		if (pread_full(fd, &ch, sizeof ch, (off_t)off) != 0) {
			damaged |= i + 1 <= h.chunks;
			break;
		}
		if (ch.magic == RAW_CHUNK_MAGIC && ch.index == i) {
			t->records += ch.records;
			lost += ch.lost;
		} else if (ch.magic != 0 || i + 1 < h.chunks) {
			damaged = 1;
		}
	}
	damaged |= h.chunks > i;
	t->no_space_streams += (h.flags & RAW_FILE_NO_SPACE) != 0;
	t->lost += lost > h.lost_total ? lost : h.lost_total;
	return damaged;
}

static int walk(int dirfd, struct raw_totals *t, int depth)
{
	DIR *d = fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		return -errno;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		int fd = openat(dirfd, e->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		struct stat st;
		if (fd < 0)
			continue;
		if (fstat(fd, &st) != 0) {
			close(fd);
			continue;
		}
		if (S_ISDIR(st.st_mode) && depth < MAX_DEPTH) {
			walk(fd, t, depth + 1); /* closes fd */
			continue;
		}
		if (S_ISREG(st.st_mode) && ends_with(e->d_name, ".raw")) {
			t->streams++;
			t->damaged_streams += (uint64_t)add_stream(fd, t);
		}
		close(fd);
	}
	closedir(d);
	return 0;
}

int raw_totals_of_dir(const char *raw_dir, struct raw_totals *out)
{
	memset(out, 0, sizeof *out);
	int fd = open(raw_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return walk(fd, out, 0);
}
