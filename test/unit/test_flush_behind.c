/* Flush-behind (common/fsutil.h): an output's older windows leave the page
 * cache once on disk, every byte still lands in the file, and scratch
 * files, pipes and terminals are left alone. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "common/csv_out.h"
#include "common/fsutil.h"
#include "common/json_out.h"
#include "unit.h"

#define WIN (256u << 10)
#define TMPFS_MAGIC_ 0x01021994
#define RAMFS_MAGIC_ 0x858458f6

static char path[4096];

/* Window w's bytes: each byte says which window and where, so a byte
 * lost or moved shows. */
static void fill(char *buf, unsigned w)
{
	for (size_t i = 0; i < WIN; i++)
		buf[i] = (char)(w * 31 + i % 251);
}

static int windows_match(const char *map, unsigned nwin)
{
	char *want = malloc(WIN);
	int ok = 1;
	for (unsigned w = 0; ok && w < nwin; w++) {
		fill(want, w);
		ok = memcmp(map + (size_t)w * WIN, want, WIN) == 0;
	}
	free(want);
	return ok;
}

/* Pages of window w in the page cache, of WIN / page size. */
static size_t resident(const char *map, unsigned w)
{
	return unit_resident(map + (size_t)w * WIN, WIN);
}

static void write_windows(FILE *f, struct fs_behind *b, unsigned from, unsigned to)
{
	char *buf = malloc(WIN);
	for (unsigned w = from; w < to; w++) {
		fill(buf, w);
		CHECK(fs_fwrite_direct(f, buf, WIN, b) == 0);
	}
	free(buf);
}

/* Windows 0-3 written and made clean (fdatasync), then 4-7: finishing
 * window 4 asks for windows 2 and 3 to go, and being clean they must. */
static void test_drops_behind(void)
{
	snprintf(path, sizeof path, "%s/flush_behind.out", unit_tmp_dir());
	int fd = fs_create_file(path, O_RDWR);
	CHECK(fd >= 0);
	FILE *f = fdopen(fd, "w+");
	struct fs_behind b = { .window = WIN };
	write_windows(f, &b, 0, 4);
	CHECK(b.state == 1);
	CHECK(b.put == 4 * WIN);
	CHECK(fdatasync(fd) == 0);
	write_windows(f, &b, 4, 8);
	CHECK(b.put == 8 * WIN);
	CHECK(b.next == 9 * WIN);

	const char *map = mmap(NULL, 8 * WIN, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(map != MAP_FAILED);
	/* The control: window 0, clean, dropped by hand. A file system that
	 * ignores the advice (tmpfs, where the file is its pages) skips. */
	posix_fadvise(fd, 0, WIN, POSIX_FADV_DONTNEED);
	struct statfs sf;
	int memfs = fstatfs(fd, &sf) == 0 &&
		    (sf.f_type == TMPFS_MAGIC_ || sf.f_type == RAMFS_MAGIC_);
	if (map != MAP_FAILED && (memfs || resident(map, 0) != 0)) {
		printf("note: %s keeps clean pages it is asked to drop (tmpfs?): residency "
		       "not checked\n", unit_tmp_dir());
	} else if (map != MAP_FAILED) {
		CHECK(resident(map, 2) == 0);
		CHECK(resident(map, 3) == 0);
	}
	if (map != MAP_FAILED) {
		CHECK(windows_match(map, 8));   /* read back from disk where dropped */
		munmap((void *)map, 8 * WIN);
	}
	fclose(f);
	unlink(path);
}

/* The offset is learned at the first write, past what stdio wrote before. */
static void test_starts_where_the_file_is(void)
{
	snprintf(path, sizeof path, "%s/flush_behind.head", unit_tmp_dir());
	int fd = fs_create_file(path, O_WRONLY);
	FILE *f = fdopen(fd, "w");
	fputs("head\n", f);
	struct fs_behind b = { .window = WIN };
	CHECK(fs_fwrite_direct(f, "row\n", 4, &b) == 0);
	CHECK(b.state == 1);
	CHECK(b.put == 9);
	CHECK(b.next == WIN);
	fclose(f);
	unlink(path);
}

/* A scratch file (no name: the parse reads it back) and a pipe: off. */
static void test_off_for_scratch_and_pipes(void)
{
	snprintf(path, sizeof path, "%s/flush_behind.scratch", unit_tmp_dir());
	int fd = fs_create_file(path, O_RDWR);
	unlink(path);
	FILE *f = fdopen(fd, "w+");
	struct fs_behind b = { .window = WIN };
	write_windows(f, &b, 0, 4);
	CHECK(b.state == -1);
	CHECK(b.put == 0);
	fclose(f);

	int p[2];
	CHECK(pipe(p) == 0);
	FILE *w = fdopen(p[1], "w");
	struct fs_behind pb = { 0 };
	CHECK(fs_fwrite_direct(w, "x", 1, &pb) == 0);
	CHECK(pb.state == -1);
	CHECK(pb.window == FS_BEHIND_WINDOW);
	fclose(w);
	close(p[0]);
}

/* The CSV and JSON writers flush behind their files. */
static void test_writers_use_it(void)
{
	snprintf(path, sizeof path, "%s/flush_behind.csv", unit_tmp_dir());
	int fd = fs_create_file(path, O_WRONLY);
	FILE *f = fdopen(fd, "w");
	struct csv c;
	csv_init(&c, f);
	c.behind.window = 4096;
	for (int i = 0; i < 10000; i++) {
		csv_int(&c, i);
		csv_end_row(&c);
	}
	CHECK(csv_finish(&c) == 0);
	CHECK(c.behind.state == 1);
	CHECK(c.behind.put == (uint64_t)ftell(f));
	CHECK(c.behind.next > c.behind.put);
	fclose(f);
	unlink(path);

	fd = fs_create_file(path, O_WRONLY);
	f = fdopen(fd, "w");
	struct jo j;
	jo_init_file(&j, f, 1);
	jo_arr_begin(&j);
	for (int i = 0; i < 10000; i++)
		jo_int(&j, i);
	jo_arr_end(&j);
	CHECK(jo_finish(&j) == 0);
	CHECK(j.behind.state == 1);
	CHECK(j.behind.put == (uint64_t)ftell(f));
	fclose(f);
	unlink(path);
}

int main(void)
{
	test_drops_behind();
	test_starts_where_the_file_is();
	test_off_for_scratch_and_pipes();
	test_writers_use_it();
	return unit_done();
}
