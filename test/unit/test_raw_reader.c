/* The raw reader: clean streams round-trip; damaged ones are read as far
 * as they can be, and what was skipped is named. */
#include "unit/rawgen.h"

#include "raw/raw_reader.h"
#include "unit/unit.h"

#define MARKS 2000   /* about three 16 KiB chunks of 24-byte marks */
#define MARK_SIZE 24
#define STR_SIZE 32  /* the one string, "m" */

static char *dir;

/* What one loud pass over a file found. */
struct readout {
	int open_rc;
	uint64_t records, marks, chunks, last_mark_ts;
	int in_order;
	struct raw_read_stats st;
	char *log;
};

static void read_all(const char *path, struct readout *o)
{
	size_t len = 0;
	struct raw_file f;
	memset(o, 0, sizeof *o);
	o->in_order = 1;
	FILE *log = open_memstream(&o->log, &len);
	o->open_rc = raw_file_open(&f, path, log, NULL, 0);
	if (o->open_rc == 0) {
		struct raw_cursor c;
		struct raw_rec r;
		enum raw_next n;
		raw_cursor_init(&c, &f, 0);
		while ((n = raw_cursor_next(&c, &r)) != RAW_NEXT_END) {
			if (n == RAW_NEXT_CHUNK) {
				o->chunks++;
				continue;
			}
			o->records++;
			if (r.type != RAW_REC_MARK)
				continue;
			struct raw_mark m;
			memcpy(&m, r.payload, sizeof m);
			if (strcmp(raw_cursor_name(&c, m.msg_id), "m") != 0 ||
			    (o->marks && r.ts <= o->last_mark_ts))
				o->in_order = 0;
			o->marks++;
			o->last_mark_ts = r.ts;
		}
		o->st = f.st;
		raw_cursor_free(&c);
		raw_file_close(&f);
	}
	fclose(log);
}

/* A stream of the string "m" then MARKS marks at ts 1000, 1001, ... */
static char *make_marks(const char *name, int close_it)
{
	struct raw_writer w;
	char *path = rg_path(dir, name);
	CHECK(rg_open(&w, dir, name, 10, 11, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC, "t") == 0);
	for (int i = 0; i < MARKS; i++)
		rg_mark(&w, 1000 + (uint64_t)i, "m");
	if (close_it)
		raw_writer_close(&w);
	else
		raw_writer_abandon(&w);
	return path;
}

/* The records chunk i of a clean file holds, from its header. */
static uint64_t chunk_records(const char *path, unsigned i)
{
	struct raw_file f;
	struct raw_chunk_header ch;
	if (raw_file_open(&f, path, NULL, NULL, 0) != 0)
		return 0;
	memcpy(&ch, f.map + rg_chunk_off(i), sizeof ch);
	raw_file_close(&f);
	return ch.records;
}

/* Offset of mark k (0-based) in chunk 0. */
static long mark_off(int k)
{
	return rg_chunk_off(0) + (long)sizeof(struct raw_chunk_header) + STR_SIZE +
	       (long)k * MARK_SIZE;
}

static void test_roundtrip(void)
{
	char *p = make_marks("clean.raw", 1);
	struct readout o;
	read_all(p, &o);
	CHECK(o.open_rc == 0);
	CHECK(o.marks == MARKS);
	CHECK(o.records == MARKS + 1);
	CHECK(o.in_order);
	CHECK(o.chunks == 3);
	CHECK(o.st.skipped_chunks == 0 && o.st.skipped_bytes == 0 && o.st.bad_records == 0);
	CHECK(o.st.records == MARKS + 1);
	CHECK_STR(o.log, "");
	struct raw_file f;
	CHECK(raw_file_open(&f, p, NULL, NULL, 0) == 0);
	CHECK(f.hdr.flags & RAW_FILE_CLOSED);
	CHECK(f.hdr.pid == 10 && f.hdr.tid == 11 && f.hdr.chunks == 3);
	struct raw_clock_pair last;
	raw_file_last_pair(&f, &last);
	CHECK(last.mono_ns == f.hdr.close_pair.mono_ns);
	raw_file_close(&f);
	free(o.log);
	free(p);
}

/* SIGKILL leaves no close: every committed record is still there. */
static void test_unclosed(void)
{
	char *p = make_marks("unclosed.raw", 0);
	struct readout o;
	read_all(p, &o);
	CHECK(o.marks == MARKS && o.in_order);
	CHECK(o.st.skipped_chunks == 0 && o.st.bad_records == 0);
	CHECK_STR(o.log, "");
	struct raw_file f;
	CHECK(raw_file_open(&f, p, NULL, NULL, 0) == 0);
	CHECK(!(f.hdr.flags & RAW_FILE_CLOSED));
	struct raw_clock_pair last;
	raw_file_last_pair(&f, &last);     /* the last chunk's pair */
	CHECK(last.mono_ns >= f.hdr.open_pair.mono_ns && last.ticks != 0);
	raw_file_close(&f);
	free(o.log);
	free(p);
}

static void test_truncated(void)
{
	char *p = make_marks("trunc.raw", 1);
	rg_truncate(p, rg_chunk_off(1) + 1000);  /* 936 bytes of chunk 1's records */
	struct readout o;
	read_all(p, &o);
	CHECK(o.open_rc == 0);
	CHECK(o.marks > 680 && o.marks < 700 + 39);   /* chunk 0 and 39 marks of chunk 1 */
	CHECK(o.in_order);
	CHECK(o.st.skipped_chunks == 2);              /* chunk 1 in part, chunk 2 whole */
	CHECK(o.st.skipped_bytes > 0);
	CHECK_CONTAINS(o.log, "trunc.raw: chunk 1 at offset 0x5000: file ends inside the chunk");
	CHECK_CONTAINS(o.log, "header says 3 chunks were begun; 1 missing");
	free(o.log);
	/* cut inside the file header: the file is skipped and named */
	rg_truncate(p, 100);
	read_all(p, &o);
	CHECK(o.open_rc == -EINVAL);
	CHECK_CONTAINS(o.log, "trunc.raw: file too short for a header (100 bytes); file skipped");
	free(o.log);
	free(p);
}

static void test_bad_chunk_magic(void)
{
	char *p = make_marks("magic.raw", 1);
	uint64_t lost = chunk_records(p, 1);
	uint32_t junk = 0xdeadbeef;
	rg_poke(p, rg_chunk_off(1), &junk, sizeof junk);
	struct readout o;
	read_all(p, &o);
	CHECK(o.chunks == 2);
	CHECK(o.st.skipped_chunks == 1);
	CHECK(o.st.skipped_bytes == RG_CHUNK - sizeof(struct raw_chunk_header));
	CHECK(o.marks == MARKS - lost);
	CHECK_CONTAINS(o.log, "magic.raw: chunk 1 at offset 0x5000: bad chunk magic 0xdeadbeef; skipped");
	free(o.log);
	free(p);
}

static void test_bad_committed(void)
{
	char *p = make_marks("committed.raw", 1);
	uint64_t chunk0 = chunk_records(p, 0) - 1;   /* its marks, after the string */
	uint64_t big = RG_CHUNK * 2;
	rg_poke(p, rg_chunk_off(0) + (long)offsetof(struct raw_chunk_header, committed), &big,
		sizeof big);
	struct readout o;
	read_all(p, &o);
	CHECK(o.st.skipped_chunks == 1);
	CHECK(o.marks == MARKS - chunk0);
	/* the string went with chunk 0: the marks are kept without their name */
	CHECK(o.records == o.marks && o.st.unnamed_records == o.marks);
	CHECK_CONTAINS(o.log, "chunk 1 at offset 0x5038: record of type 2 names string 1, "
		       "never defined (lost with a damaged chunk?); kept without its name");
	char want[96];
	snprintf(want, sizeof want, "%llu records in all named strings never defined",
		 (unsigned long long)o.marks);
	CHECK_CONTAINS(o.log, want);
	CHECK_CONTAINS(o.log, "chunk 0 at offset 0x1000: committed 32768 bytes does not fit");
	free(o.log);
	free(p);
}

static void test_bad_record_size(void)
{
	char *p = make_marks("recsize.raw", 1);
	uint32_t bad = 12;   /* less than a record header */
	rg_poke(p, mark_off(10) + (long)offsetof(struct raw_record, size), &bad, sizeof bad);
	struct readout o;
	read_all(p, &o);
	CHECK(o.chunks == 3);
	CHECK(o.st.skipped_chunks == 1);
	CHECK(o.in_order);
	/* chunk 0 kept its first 10 marks; chunks 1 and 2 are whole */
	uint64_t chunk0 = chunk_records(p, 0) - 1;
	CHECK(o.marks == MARKS - chunk0 + 10);
	char want[128];
	snprintf(want, sizeof want, "chunk 0 at offset 0x%lx: record of type 2 has bad size 12",
		 (unsigned long)mark_off(10));
	CHECK_CONTAINS(o.log, want);
	free(o.log);
	free(p);
}

static void test_garbage(void)
{
	char *p = make_marks("garbage.raw", 1);
	unsigned char junk[200];
	memset(junk, 0xab, sizeof junk);
	rg_poke(p, mark_off(100), junk, sizeof junk);
	struct readout o;
	read_all(p, &o);
	CHECK(o.open_rc == 0);
	CHECK(o.marks >= 100 && o.marks < MARKS);
	CHECK(o.st.skipped_chunks >= 1);
	CHECK_CONTAINS(o.log, "garbage.raw: chunk 0 at offset");
	free(o.log);
	free(p);
}

static void test_bad_header(void)
{
	char *p = make_marks("hdr.raw", 1);
	struct readout o;
	rg_poke(p, 0, "NOTRAW!", 8);
	read_all(p, &o);
	CHECK(o.open_rc == -EINVAL);
	CHECK_CONTAINS(o.log, "hdr.raw: not a prof raw file (bad magic); file skipped");
	free(o.log);
	rg_poke(p, 0, RAW_MAGIC, 8);
	uint32_t v = 99;
	rg_poke(p, offsetof(struct raw_file_header, version), &v, sizeof v);
	read_all(p, &o);
	CHECK_CONTAINS(o.log, "format version 99, this prof reads version 1");
	free(o.log);
	v = RAW_VERSION;
	rg_poke(p, offsetof(struct raw_file_header, version), &v, sizeof v);
	v = 1000;
	rg_poke(p, offsetof(struct raw_file_header, chunk_size), &v, sizeof v);
	read_all(p, &o);
	CHECK_CONTAINS(o.log, "chunk size 1000 out of range");
	free(o.log);
	free(p);
}

/* A record too short for its type is dropped alone; one naming a string
 * never defined is kept; a type from a newer writer is skipped by its
 * size without being damage. */
static void test_record_content(void)
{
	struct raw_writer w;
	char *p = rg_path(dir, "content.raw");
	CHECK(rg_open(&w, dir, "content.raw", 1, 1, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC, "t") == 0);
	rg_mark(&w, 1, "m");
	struct raw_mark bad = { 77, 0 };
	raw_writer_emit(&w, RAW_REC_MARK, 2, &bad, sizeof bad);
	uint64_t future = 5;
	raw_writer_emit(&w, 200, 3, &future, sizeof future);
	raw_writer_emit(&w, RAW_REC_PROCESS, 4, &future, 8);   /* payload too short */
	rg_mark(&w, 5, "m");
	raw_writer_close(&w);
	struct readout o;
	read_all(p, &o);
	CHECK(o.marks == 3);
	CHECK(o.st.bad_records == 1);
	CHECK(o.st.unnamed_records == 1);
	CHECK(o.st.unknown_records == 1);
	CHECK(o.st.skipped_chunks == 0);
	CHECK_CONTAINS(o.log, "record of type 2 names string 77, never defined");
	CHECK_CONTAINS(o.log, "record of type 10: payload too short for the type; skipped 24 bytes");
	CHECK(rg_count(o.log, "\n") == 2);
	free(o.log);
	free(p);
}

/* A string with a NUL inside its stated length (the writer never makes
 * one) is a bad definition: its text and length would disagree. */
static void test_string_with_inner_nul(void)
{
	struct raw_writer w;
	char *p = rg_path(dir, "nul.raw");
	CHECK(rg_open(&w, dir, "nul.raw", 1, 1, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC, "t") == 0);
	char buf[sizeof(struct raw_string) + 8] = { 0 };
	struct raw_string s = { 5, 3 };
	memcpy(buf, &s, sizeof s);
	memcpy(buf + sizeof s, "a\0b", 4);     /* len 3, a NUL at 1 */
	raw_writer_emit(&w, RAW_REC_STRING, 1, buf, sizeof s + 4);
	rg_mark(&w, 2, "m");
	raw_writer_close(&w);
	struct readout o;
	read_all(p, &o);
	CHECK(o.marks == 1);
	CHECK(o.st.bad_records == 1);
	CHECK_CONTAINS(o.log, "bad string definition");
	free(o.log);
	free(p);
}

/* Anonymous memory the process holds, in KiB (pages never written, as
 * the zero page maps them, are not in it). */
static long rss_anon_kib(void)
{
	char *t = rg_read("/proc/self/status");
	const char *k = t ? strstr(t, "RssAnon:") : NULL;
	long v = k ? strtol(k + 8, NULL, 10) : -1;
	free(t);
	return v;
}

#define FAR_HEAD (RAW_HEADER_SIZE + 4096)   /* the bytes of far_string's stream that matter */

/* `size` bytes of memory (never written but for the first page: no more
 * is taken) holding a stream of RAW_CHUNK_MAX chunks with the string
 * `id` -> "far", a mark naming it and one naming id + 1 (never defined);
 * chunk slots after the first never begun, as the writer leaves them. */
static unsigned char *far_string(uint32_t id, size_t size)
{
	struct raw_writer w;
	struct raw_writer_opts o = { .clock = RAW_CLOCK_MONOTONIC, .kind = RAW_STREAM_THREAD,
				     .chunk_size = RAW_CHUNK_MAX, .pid = 1, .tid = 1, .ppid = 1,
				     .comm = "t" };
	CHECK(rg_open_opts(&w, dir, "far.raw", &o) == 0);
	char buf[sizeof(struct raw_string) + 8] = { 0 };
	struct raw_string s = { id, 3 };
	memcpy(buf, &s, sizeof s);
	memcpy(buf + sizeof s, "far", 4);
	raw_writer_emit(&w, RAW_REC_STRING, 1, buf, sizeof s + 4);
	struct raw_mark m = { id, 0 }, lost = { id + 1, 0 };
	raw_writer_emit(&w, RAW_REC_MARK, 2, &m, sizeof m);
	raw_writer_emit(&w, RAW_REC_MARK, 3, &lost, sizeof lost);
	raw_writer_close(&w);
	char *p = rg_path(dir, "far.raw");
	FILE *f = fopen(p, "rb");
	unsigned char *mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(f && mem != MAP_FAILED);
	/* the closed file ends at its last record (the writer cuts it) */
	if (mem != MAP_FAILED && (!f || fread(mem, 1, FAR_HEAD, f) < RAW_HEADER_SIZE + 64)) {
		munmap(mem, size);
		mem = MAP_FAILED;
	}
	if (f)
		fclose(f);
	remove(p);
	free(p);
	return mem == MAP_FAILED ? NULL : mem;
}

/* Reads far_string's stream: the string is there by its id, the mark
 * naming id + 1 is said, and the table took no memory for the ids below. */
static void read_far(uint32_t id, size_t size)
{
	unsigned char *mem = far_string(id, size);
	struct raw_file f;
	char *log = NULL;
	size_t len = 0;
	FILE *lf = open_memstream(&log, &len);
	CHECK(mem && raw_file_open_mem(&f, "far.raw", mem, size, lf, NULL, 0) == 0);
	if (!mem) {
		fclose(lf);
		free(log);
		return;
	}
	struct raw_cursor c;
	struct raw_rec r;
	enum raw_next n;
	uint64_t marks = 0;
	long before = rss_anon_kib();
	raw_cursor_init(&c, &f, 0);
	while ((n = raw_cursor_next(&c, &r)) != RAW_NEXT_END)
		marks += n == RAW_NEXT_RECORD && r.type == RAW_REC_MARK;
	long grew = rss_anon_kib() - before;
	uint32_t slen = 0;
	CHECK(before > 0 && grew < 16 * 1024);
	CHECK_STR(raw_cursor_str(&c, id, &slen), "far");
	CHECK(slen == 3 && raw_cursor_str(&c, id + 1, NULL) == NULL);
	CHECK(marks == 2 && f.st.bad_records == 0 && f.st.unnamed_records == 1);
	raw_cursor_free(&c);
	raw_file_close(&f);
	munmap(mem, size);
	fclose(lf);
	char want[64];
	snprintf(want, sizeof want, "names string %u, never defined", id + 1);
	CHECK_CONTAINS(log, want);
	free(log);
}

/* A damaged string id: ids count up from 1, so one far above the
 * definitions seen is damage, and must cost no more than any other
 * definition. (Bounded by the file's size alone, such an id once took
 * memory in proportion to the file: half a GiB for this 1 GiB one; and
 * one of 2^31 or more doubled the table's size past 2^32, forever.) */
static void test_far_string_ids(void)
{
	size_t gib = (size_t)1 << 30;
	unit_deadline(60);
	read_far((uint32_t)(gib / 24 - 100), gib);
	read_far((1u << 31) + 5, 52 * gib);   /* 24 bytes an id up to 2^31 + 5 */
	unit_deadline(0);
}

/* A quiet cursor sees the same records and says nothing. */
static void test_quiet(void)
{
	char *p = make_marks("quiet.raw", 1);
	uint32_t junk = 0;
	rg_poke(p, rg_chunk_off(1), &junk, sizeof junk);   /* chunk 1 zeroed magic */
	struct raw_file f;
	CHECK(raw_file_open(&f, p, NULL, NULL, 0) == 0);
	struct raw_cursor c;
	struct raw_rec r;
	enum raw_next n;
	uint64_t recs = 0, chunks = 0;
	raw_cursor_init(&c, &f, 1);
	while ((n = raw_cursor_next(&c, &r)) != RAW_NEXT_END)
		n == RAW_NEXT_CHUNK ? chunks++ : recs++;
	CHECK(chunks == 2 && recs > 0);
	CHECK(f.st.skipped_chunks == 0 && f.st.records == 0);
	raw_cursor_free(&c);
	raw_file_close(&f);
	free(p);
}

/* Random damage never crashes the reader nor yields more than was there. */
static void test_fuzz(void)
{
	char *p = make_marks("fuzz.raw", 1);
	char *orig = rg_path(dir, "fuzz.orig");
	long size = rg_size(p);
	char *bytes = malloc((size_t)size);
	FILE *f = fopen(p, "rb");
	CHECK(f && fread(bytes, 1, (size_t)size, f) == (size_t)size);
	fclose(f);
	srand(42);
	int ok = 1;
	for (int round = 0; round < 300 && ok; round++) {
		FILE *g = fopen(p, "wb");
		fwrite(bytes, 1, (size_t)size, g);
		fclose(g);
		for (int k = 0; k < 1 + round % 8; k++) {
			long off = RAW_HEADER_SIZE + rand() % (size - RAW_HEADER_SIZE);
			unsigned char b = (unsigned char)rand();
			rg_poke(p, off, &b, 1);
		}
		if (round % 5 == 0)
			rg_truncate(p, RAW_HEADER_SIZE + rand() % (size - RAW_HEADER_SIZE));
		struct readout o;
		read_all(p, &o);
		ok = o.open_rc == 0 && o.records <= MARKS + 1 + 8;
		free(o.log);
	}
	CHECK(ok);
	free(bytes);
	free(orig);
	free(p);
}

static void test_totals(void)
{
	char *d = rg_tmpdir("reader-totals");
	char *sub = rg_path(d, "1.0");
	struct raw_writer w;
	CHECK(rg_open(&w, sub, "t1.raw", 1, 1, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC, "a") == 0);
	for (int i = 0; i < 1000; i++)
		rg_mark(&w, 10 + (uint64_t)i, "m");
	raw_writer_lose(&w, 5);
	raw_writer_close(&w);
	CHECK(rg_open(&w, sub, "t2.raw", 1, 2, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC, "b") == 0);
	rg_mark(&w, 10, "m");
	raw_writer_abandon(&w);
	char *junk = rg_path(sub, "junk.raw");
	rg_write(junk, "this is not a raw file, but long enough to be read as one? no");
	char *control = rg_path(d, "control");
	rg_write(control, "x");
	free(control);
	struct raw_totals t;
	CHECK(raw_totals_of_dir(d, &t) == 0);
	CHECK(t.streams == 3);
	CHECK(t.records == 1001 + 2);    /* marks and one string each */
	CHECK(t.lost == 5);
	CHECK(t.damaged_streams == 1);
	CHECK(raw_totals_of_dir("/nonexistent/dir", &t) == -ENOENT);
	free(junk);
	free(sub);
	free(d);
}

/* Device streams and records: the new kinds open, each device record
 * type is checked for its size and the strings it names; a kind past the
 * last is refused. */
static void test_device_records(void)
{
	struct raw_writer w;
	char *p = rg_path(dir, "dev.raw");
	CHECK(rg_open(&w, dir, "dev.raw", 1, 0, RAW_STREAM_DEVICE, RAW_CLOCK_MONOTONIC, "d") == 0);
	rg_dev_task(&w, RAW_DEV_KERNEL, 10, 20, 1, 0, 1, "k", 0, 0, 4);
	rg_dev_api(&w, 5, 6, 1, 1, "sim_kernel");
	rg_dev_mem(&w, 7, 1, 0, 0x10, 64, 0);
	rg_dev_info(&w, 1, 0, "dev");
	rg_dev_marker(&w, 8, 9, 1, "m", NULL, 1);
	struct raw_dev_activity short_a = { 0 };
	raw_writer_emit(&w, RAW_REC_DEV_ACTIVITY, 30, &short_a, 40);    /* too short */
	/* as writers before the event-sync fields wrote it: whole */
	raw_writer_emit(&w, RAW_REC_DEV_ACTIVITY, 31, &short_a,
			offsetof(struct raw_dev_activity, wait_corr));
	struct raw_dev_collective c = { .end = 40, .group_id = 99, .op = RAW_COLL_ALLREDUCE };
	raw_writer_emit(&w, RAW_REC_DEV_COLLECTIVE, 35, &c, sizeof c);  /* group never defined */
	raw_writer_close(&w);
	struct readout o;
	read_all(p, &o);
	CHECK(o.open_rc == 0 && o.records == 7 + 4);   /* and 4 strings */
	CHECK(o.st.bad_records == 1 && o.st.unnamed_records == 1);
	CHECK_CONTAINS(o.log, "record of type 16: payload too short for the type");
	CHECK_CONTAINS(o.log, "record of type 19 names string 99, never defined");
	free(o.log);
	CHECK(rg_open(&w, dir, "samples.raw", 1, 1, RAW_STREAM_DEVICE_SAMPLES, RAW_CLOCK_MONOTONIC,
		      "s") == 0);
	rg_dev_sample(&w, 1, 0, 50, 1024);
	raw_writer_close(&w);
	char *q = rg_path(dir, "samples.raw");
	read_all(q, &o);
	CHECK(o.open_rc == 0 && o.records == 1 && o.st.bad_records == 0);
	free(o.log);
	uint32_t kind = RAW_STREAM_DEVICE_SAMPLES + 1;
	rg_poke(q, offsetof(struct raw_file_header, kind), &kind, sizeof kind);
	read_all(q, &o);
	CHECK(o.open_rc == -EINVAL);
	CHECK_CONTAINS(o.log, "unknown stream kind 7");
	free(o.log);
	free(q);
	free(p);
}

/* A device stream's header keeps late_ns, the most a record starts
 * before the latest start written ahead of it, as records are written (a
 * stream never closed has it too); other kinds claim no bound. */
static void test_late_bound(void)
{
	struct raw_writer w;
	char *p = rg_path(dir, "late.raw"), *q = rg_path(dir, "late-thread.raw");
	CHECK(rg_open(&w, dir, "late.raw", 1, 0, RAW_STREAM_DEVICE, RAW_CLOCK_MONOTONIC, "d") == 0);
	const uint64_t ts[] = { 100, 200, 150, 300, 120, 400, 400, 390 };
	for (size_t i = 0; i < sizeof ts / sizeof *ts; i++)
		rg_dev_mem(&w, ts[i], 1, 0, 0x10, 64, 0);
	raw_writer_abandon(&w);   /* as a killed process leaves it */
	struct raw_file f;
	CHECK(raw_file_open(&f, p, NULL, NULL, 0) == 0);
	CHECK((f.hdr.flags & RAW_FILE_LATE_BOUND) && !(f.hdr.flags & RAW_FILE_CLOSED));
	CHECK(f.hdr.late_ns == 180);
	raw_file_close(&f);
	CHECK(rg_open(&w, dir, "late-thread.raw", 1, 1, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC,
		      "t") == 0);
	rg_mark(&w, 100, "a");
	rg_mark(&w, 50, "b");
	raw_writer_close(&w);
	CHECK(raw_file_open(&f, q, NULL, NULL, 0) == 0);
	CHECK(!(f.hdr.flags & RAW_FILE_LATE_BOUND));
	raw_file_close(&f);
	free(q);
	free(p);
}

/* Names made per iteration: the writer remembers RAW_INTERN_MAX of them
 * and defines the others again at each use, counted; every mark still
 * reads back with its own name. */
static void test_intern_bound(void)
{
	enum { EXTRA = 500 };
	struct raw_writer w;
	char *p = rg_path(dir, "names.raw");
	CHECK(rg_open(&w, dir, "names.raw", 1, 1, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC, "t") == 0);
	char name[32];
	uint64_t ts = 1;
	for (unsigned i = 0; i < RAW_INTERN_MAX + EXTRA; i++) {
		snprintf(name, sizeof name, "batch %u", i);
		rg_mark(&w, ts++, name);
	}
	rg_mark(&w, ts++, "batch 0");                   /* remembered */
	snprintf(name, sizeof name, "batch %u", RAW_INTERN_MAX + 1);
	rg_mark(&w, ts++, name);                        /* not: defined again */
	CHECK(w.table_used == RAW_INTERN_MAX);
	CHECK(w.uninterned == EXTRA + 1);
	raw_writer_close(&w);
	struct raw_file f;
	CHECK(raw_file_open(&f, p, NULL, NULL, 0) == 0);
	struct raw_cursor c;
	struct raw_rec r;
	enum raw_next n;
	unsigned marks = 0, right = 0;
	raw_cursor_init(&c, &f, 0);
	while ((n = raw_cursor_next(&c, &r)) != RAW_NEXT_END) {
		if (n == RAW_NEXT_CHUNK || r.type != RAW_REC_MARK)
			continue;
		struct raw_mark m;
		memcpy(&m, r.payload, sizeof m);
		unsigned k = marks < RAW_INTERN_MAX + EXTRA ? marks
			     : marks == RAW_INTERN_MAX + EXTRA ? 0 : RAW_INTERN_MAX + 1;
		snprintf(name, sizeof name, "batch %u", k);
		right += strcmp(raw_cursor_name(&c, m.msg_id), name) == 0;
		marks++;
	}
	CHECK(marks == RAW_INTERN_MAX + EXTRA + 2);
	CHECK(right == marks);
	CHECK(f.st.bad_records == 0 && f.st.unnamed_records == 0);
	raw_cursor_free(&c);
	raw_file_close(&f);
	free(p);
}

int main(void)
{
	dir = rg_tmpdir("reader");
	test_roundtrip();
	test_unclosed();
	test_truncated();
	test_bad_chunk_magic();
	test_bad_committed();
	test_bad_record_size();
	test_garbage();
	test_bad_header();
	test_record_content();
	test_string_with_inner_nul();
	test_far_string_ids();
	test_device_records();
	test_late_bound();
	test_intern_bound();
	test_quiet();
	test_fuzz();
	test_totals();
	free(dir);
	return unit_done();
}
