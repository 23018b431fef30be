/* Direct I/O for the largest outputs (common/bgwrite.h, fsutil.h
 * fs_direct_on): every byte lands, in order, whatever lengths the writer
 * hands over; where the file system supports direct I/O the output never
 * enters the page cache; what cannot go direct (a start past a whole
 * block, a scratch file, a pipe, tmpfs) is written buffered; the FILE is
 * the caller's again, buffered, once the writer stops; and a failed write
 * (a full disk) is reported with its errno, through every layer. */
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

#include "common/bgwrite.h"
#include "common/csv_out.h"
#include "common/fsutil.h"
#include "common/json_out.h"
#include "outputs/out_file.h"
#include "unit.h"

#define CAP (128u << 10)
#define TMPFS_MAGIC_ 0x01021994

static char path[4096];
static size_t total = (3u << 20) + 1234;   /* not a whole block: a buffered tail */

/* The byte at file offset i: a byte lost, doubled or moved shows. */
static char pat(size_t i)
{
	return (char)(i * 7 + i / 4093);
}

/* The test's own word on direct I/O in the test directory (statx on a
 * file there), not fsutil's. */
static int dir_takes_direct(void)
{
	int ok = 0;
#ifdef STATX_DIOALIGN
	snprintf(path, sizeof path, "%s/direct_write.probe", unit_tmp_dir());
	int fd = fs_create_file(path, O_RDWR);
	struct statx sx;
	ok = fd >= 0 && statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
	     (sx.stx_mask & STATX_DIOALIGN) && sx.stx_dio_offset_align &&
	     sx.stx_dio_offset_align <= 4096 && sx.stx_dio_mem_align <= 4096;
	if (fd >= 0)
		close(fd);
	unlink(path);
#endif
	return ok;
}

static int o_direct(int fd)
{
	return (fcntl(fd, F_GETFL) & O_DIRECT) != 0;
}

/* A producer the way the JSON and CSV writers are: pieces of uneven
 * sizes, buffers handed over when full and, now and then, part full. */
static size_t produce(struct bgw *w, char **buf, size_t blen, size_t from, size_t n)
{
	static const size_t steps[] = { 1, 4095, 4097, 333, 65536, 12345, 8192, 7 };
	size_t at = from, i = 0;
	while (at < from + n) {
		size_t k = steps[i % 8];
		if (k > from + n - at)
			k = from + n - at;
		if (blen + k > CAP || i % 11 == 10) {
			*buf = bgw_swap(w, *buf, &blen);
			CHECK(blen < 4096);   /* at most a block's part carried */
			i++;
			continue;
		}
		for (size_t b = 0; b < k; b++)
			(*buf)[blen + b] = pat(at + b);
		blen += k;
		at += k;
		i++;
	}
	return blen;
}

/* Pages of [0, len) of fd in the page cache. */
static size_t cached_pages(int fd, size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	len -= len % pg;
	if (!len)
		return 0;
	void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return (size_t)-1;
	size_t in = unit_resident(map, len);
	munmap(map, len);
	return in;
}

/* off bytes of head (through stdio), then total of pattern (through a
 * writer), then "end\n" through stdio: every byte where it belongs. */
static int file_matches(int fd, size_t off)
{
	size_t len = off + total + 4;
	struct stat st;
	if (fstat(fd, &st) != 0 || (size_t)st.st_size != len)
		return 0;
	char *got = malloc(len);
	int ok = got && pread(fd, got, len, 0) == (ssize_t)len;
	for (size_t i = 0; ok && i < off; i++)
		ok = got[i] == 'h';
	for (size_t i = 0; ok && i < total; i++)
		ok = got[off + i] == pat(i);
	ok = ok && memcmp(got + off + total, "end\n", 4) == 0;
	free(got);
	return ok;
}

/* Writes the file `name` (scratch: unlinked first) as above through a
 * writer: every byte where it belongs and, where O_DIRECT was on, none of
 * the whole blocks in the page cache (only the tail under a block and
 * "end\n" went through it). Whether O_DIRECT was on while it wrote. */
static int write_case(const char *name, size_t off, int scratch)
{
	snprintf(path, sizeof path, "%s/%s", unit_tmp_dir(), name);
	int fd = fs_create_file(path, O_RDWR), was = -1;
	CHECK(fd >= 0);
	if (scratch)
		unlink(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w+") : NULL;
	for (size_t i = 0; f && i < off; i++)
		fputc('h', f);
	char *buf = NULL;
	struct bgw *w = f ? bgw_start(f, CAP, "", 0, &buf) : NULL;
	CHECK(w != NULL);
	if (w) {
		was = o_direct(fd);
		size_t blen = produce(w, &buf, 0, 0, total);
		CHECK(bgw_stop(w, blen) == 0);
		CHECK(!o_direct(fd));   /* stdio may write again */
		CHECK(fputs("end\n", f) >= 0 && fflush(f) == 0);
		if (was)
			CHECK(cached_pages(fd, off + total - (off + total) % 4096) == 0);
		CHECK(file_matches(fd, off));
	}
	if (f)
		fclose(f);
	unlink(path);
	return was;
}

static void test_direct_round_trip(void)
{
	int want = dir_takes_direct();
	CHECK(write_case("direct_write.out", 0, 0) == want);
	if (!want)
		printf("note: %s does not report direct I/O (statx STATX_DIOALIGN): "
		       "written buffered, page cache not checked\n", unit_tmp_dir());
}

/* Whole blocks only: O_DIRECT must still go off at the end, for stdio. */
static void test_whole_blocks(void)
{
	total = 2u << 20;
	CHECK(write_case("direct_write.whole", 0, 0) == dir_takes_direct());
	total = (3u << 20) + 1234;
}

/* A start past a whole block (stdio wrote a head first) stays buffered,
 * and so does a scratch file (no name: the parse reads it back). */
static void test_buffered_cases(void)
{
	CHECK(write_case("direct_write.head", 5, 0) == 0);
	CHECK(write_case("direct_write.scratch", 0, 1) == 0);
}

/* A pipe and tmpfs: never direct. */
static void test_never_direct(void)
{
	int p[2];
	CHECK(pipe(p) == 0);
	CHECK(fs_direct_on(p[1]) == 0);
	CHECK(!o_direct(p[1]));
	close(p[0]);
	close(p[1]);

	struct statfs sf;
	if (statfs("/dev/shm", &sf) == 0 && sf.f_type == TMPFS_MAGIC_) {
		int fd = fs_create_file("/dev/shm/prof_direct_write", O_RDWR);
		CHECK(fd >= 0 && fs_direct_on(fd) == 0 && !o_direct(fd));
		close(fd);
		unlink("/dev/shm/prof_direct_write");
	}
}

/* Rows of a CSV: plain, quoted, and a block larger than a buffer. */
static void csv_rows(struct csv *c, int background)
{
	static char big[(1u << 20) + 4100];
	memset(big, 'y', sizeof big - 1);
	big[sizeof big - 2] = '\n';
	csv_header(c, "A,B,C");
	if (background)   /* after the header: what waits moves */
		csv_background(c);
	for (int i = 0; i < 200000; i++) {
		csv_int(c, i);
		csv_str(c, i % 3 ? "aten::mm" : "[[64, 1024], [1024]]");
		csv_ns_us(c, (int64_t)i * 1237);
		csv_end_row(c);
		if (i == 100000)
			csv_raw(c, big, sizeof big - 1);
	}
}

/* kernel_details.csv and operator_details.csv are written this way: the
 * same bytes as a CSV written in the caller's thread. */
static void test_csv_background(void)
{
	char *want = NULL;
	size_t wlen = 0;
	FILE *m = open_memstream(&want, &wlen);
	struct csv c;
	csv_init(&c, m);
	csv_rows(&c, 0);
	CHECK(csv_finish(&c) == 0);
	fclose(m);

	int direct = dir_takes_direct();
	snprintf(path, sizeof path, "%s/direct_write.csv", unit_tmp_dir());
	int fd = fs_create_file(path, O_RDWR);
	FILE *f = fdopen(fd, "w+");
	csv_init(&c, f);
	csv_rows(&c, 1);
	CHECK(c.bg != NULL);
	CHECK(o_direct(fd) == direct);
	CHECK(csv_finish(&c) == 0);
	CHECK(c.bg == NULL && !o_direct(fd));
	fflush(f);
	char *got = malloc(wlen + 1);
	CHECK(got && pread(fd, got, wlen + 1, 0) == (ssize_t)wlen);
	CHECK(got && wlen > (4u << 20) && memcmp(got, want, wlen) == 0);
	free(got);
	free(want);
	fclose(f);
	unlink(path);
}

/* A full disk (/dev/full: every write fails with ENOSPC) is reported as
 * that, through every writer and a background thread, not as a bare
 * failure: the user is told to free space, not to suspect the disk. */
static void test_full_disk(void)
{
	for (int background = 0; background < 2; background++) {
		FILE *f = fopen("/dev/full", "w");
		CHECK(f != NULL);
		if (!f)
			return;
		struct csv c;
		csv_init(&c, f);
		if (background)
			csv_background(&c);
		csv_rows(&c, 0);
		CHECK(csv_finish(&c) == -ENOSPC);
		fclose(f);

		f = fopen("/dev/full", "w");
		struct jo j;
		jo_init_file(&j, f, 1);
		if (background)
			jo_background(&j);
		jo_arr_begin(&j);
		for (int i = 0; i < 300000; i++)
			jo_int(&j, i);
		jo_arr_end(&j);
		CHECK(jo_finish(&j) == -ENOSPC);
		fclose(f);
	}
	struct jo j;
	FILE *m = fopen("/dev/null", "w");
	jo_init_file(&j, m, 1);
	jo_arr_begin(&j);   /* never closed */
	CHECK(jo_finish(&j) == -EINVAL);
	fclose(m);
}

/* out_file_commit returns the writer's errno, and leaves no file. */
static void test_commit_keeps_errno(void)
{
	const char *dir = unit_tmp_dir();
	struct out_file o;
	char *p = fs_join(dir, "direct_write.commit");
	struct stat st;
	CHECK(out_file_open(&o, dir, "direct_write.commit") == 0);
	fputs("part", o.f);
	CHECK(out_file_commit(&o, -ENOSPC) == -ENOSPC);
	CHECK(stat(p, &st) != 0);
	CHECK(out_file_open(&o, dir, "direct_write.commit") == 0);
	CHECK(out_file_commit(&o, 1) == -EIO);   /* failed, cause unknown */
	CHECK(out_file_open(&o, dir, "direct_write.commit") == 0);
	fputs("whole", o.f);
	CHECK(out_file_commit(&o, 0) == 0);
	CHECK(stat(p, &st) == 0 && st.st_size == 5);
	unlink(p);
	free(p);
}

int main(void)
{
	test_direct_round_trip();
	test_whole_blocks();
	test_buffered_cases();
	test_never_direct();
	test_csv_background();
	test_full_disk();
	test_commit_keeps_errno();
	return unit_done();
}
