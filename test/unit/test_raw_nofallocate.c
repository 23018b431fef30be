/*
 * The raw writer on a filesystem without fallocate (this test's own
 * fallocate says EOPNOTSUPP, as vfat's does): each chunk's blocks are
 * still allocated before the chunk is mapped (no holes: a store into a
 * hole the disk cannot fill would be a SIGBUS in the program), and when
 * the disk fills (this test's pwrite says ENOSPC past a budget) the
 * stream stops and counts what it drops, instead of crashing.
 */
#define _GNU_SOURCE
#include "unit/rawgen.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "raw/raw_reader.h"
#include "unit/unit.h"

static long space_left = -1;   /* bytes pwrite may still write; -1: no limit */
static int fallocate_calls;

int fallocate(int fd, int mode, off_t off, off_t len)
{
	(void)fd, (void)mode, (void)off, (void)len;
	fallocate_calls++;
	errno = EOPNOTSUPP;
	return -1;
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	if (space_left >= 0 && (long)n > space_left) {
		errno = ENOSPC;
		return -1;
	}
	if (space_left >= 0)
		space_left -= (long)n;
	return syscall(SYS_pwrite64, fd, buf, n, off);
}

#define CHUNK RG_CHUNK

static char *dir;

/* Whether every byte of the file has its block (no hole). */
static int no_holes(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && (off_t)st.st_blocks * 512 >= st.st_size;
}

static void read_back(const char *path, uint64_t *marks, uint64_t *lost)
{
	struct raw_file f;
	*marks = *lost = 0;
	CHECK(raw_file_open(&f, path, NULL, NULL, 0) == 0);
	struct raw_cursor c;
	struct raw_rec r;
	enum raw_next n;
	raw_cursor_init(&c, &f, 0);
	while ((n = raw_cursor_next(&c, &r)) != RAW_NEXT_END)
		*marks += n == RAW_NEXT_RECORD && r.type == RAW_REC_MARK;
	*lost = f.hdr.lost_total;
	CHECK(f.st.skipped_chunks == 0 && f.st.bad_records == 0);
	raw_cursor_free(&c);
	raw_file_close(&f);
}

/* Chunks keep coming, each with its blocks written before use. */
static void test_blocks_without_fallocate(void)
{
	struct raw_writer w;
	char *p = rg_path(dir, "zeros.raw");
	CHECK(rg_open(&w, dir, "zeros.raw", 1, 1, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC, "t") == 0);
	int holes = 0;
	for (int i = 0; i < 3000; i++) {
		rg_mark(&w, 1000 + (uint64_t)i, "m");
		holes += !no_holes(p);
	}
	CHECK(holes == 0);
	CHECK(w.chunk && w.chunk->index >= 3);
	CHECK(fallocate_calls > 0);
	raw_writer_close(&w);
	uint64_t marks, lost;
	read_back(p, &marks, &lost);
	CHECK(marks == 3000 && lost == 0);
	free(p);
}

/* The disk fills after two chunks: the stream stops, the rest is lost
 * and counted, and what was committed reads back whole. The shared count
 * of streams a full disk stopped (the launcher's live word) goes up once
 * a stream, however many records it then drops: a second stream, opened
 * on the full disk with room for its header only, makes it 2. */
static void test_full_disk_without_fallocate(void)
{
	struct raw_writer w, w2;
	char *p = rg_path(dir, "full.raw");
	uint64_t disk_full = 0;
	struct raw_writer_opts o = { .kind = RAW_STREAM_THREAD, .chunk_size = CHUNK, .pid = 1,
				     .tid = 1, .ppid = 1, .comm = "t", .disk_full = &disk_full };
	space_left = RAW_HEADER_SIZE + 2 * CHUNK;
	CHECK(rg_open_opts(&w, dir, "full.raw", &o) == 0);
	for (int i = 0; i < 3000; i++)
		rg_mark(&w, 1000 + (uint64_t)i, "m");
	CHECK(w.broken == 1);
	CHECK(w.hdr->flags & RAW_FILE_NO_SPACE);
	CHECK(disk_full == 1);
	space_left = RAW_HEADER_SIZE;
	o.tid = 2;
	CHECK(rg_open_opts(&w2, dir, "full2.raw", &o) == 0);
	CHECK(w2.broken == 1 && (w2.hdr->flags & RAW_FILE_NO_SPACE));
	rg_mark(&w2, 1000, "m");
	CHECK(disk_full == 2);
	raw_writer_close(&w2);
	CHECK(no_holes(p));
	space_left = -1;
	raw_writer_close(&w);
	uint64_t marks, lost;
	read_back(p, &marks, &lost);
	CHECK(marks > 0 && marks < 3000);
	CHECK(marks + lost == 3000);
	free(p);
}

int main(void)
{
	dir = rg_tmpdir("nofallocate");
	test_blocks_without_fallocate();
	test_full_disk_without_fallocate();
	free(dir);
	return unit_done();
}
