/*
 * Building raw streams and run directories for tests, with the real
 * writer, and damaging them on purpose. Header-only: each test is its own
 * program.
 */
#ifndef PROF_TEST_RAWGEN_H
#define PROF_TEST_RAWGEN_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "raw/raw_writer.h"

#define RG_CHUNK (16u << 10)

static inline int rg_rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(p);
}

static inline void rg_rmrf(const char *path)
{
	nftw(path, rg_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A fresh directory PROF_TEST_TMP/<name> (malloc'd path). */
static inline char *rg_tmpdir(const char *name)
{
	const char *base = getenv("PROF_TEST_TMP");
	char *p = fs_join(base && *base ? base : "/tmp", name);
	rg_rmrf(p);
	fs_mkdir_p(p);
	return p;
}

static inline char *rg_path(const char *a, const char *b)
{
	return fs_join(a, b);
}

/* Opens dir/file (creating dir) as a stream of o. */
static inline int rg_open_opts(struct raw_writer *w, const char *dir, const char *file,
			       const struct raw_writer_opts *o)
{
	fs_mkdir_p(dir);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	int rc = raw_writer_open(w, dfd, file, o);
	close(dfd);
	return rc;
}

/* Opens dir/file (creating dir) as a stream of RG_CHUNK chunks. */
static inline int rg_open(struct raw_writer *w, const char *dir, const char *file, int pid, int tid,
		   uint32_t kind, uint32_t clock, const char *comm)
{
	struct raw_writer_opts o = { .clock = clock, .kind = kind, .chunk_size = RG_CHUNK,
				     .pid = pid, .tid = tid, .ppid = 1, .tsc_hz = 0, .comm = comm };
	return rg_open_opts(w, dir, file, &o);
}

static inline void rg_mark(struct raw_writer *w, uint64_t ts, const char *msg)
{
	struct raw_mark m = { raw_writer_intern(w, msg, ts), 0 };
	raw_writer_emit(w, RAW_REC_MARK, ts, &m, sizeof m);
}

static inline void rg_push(struct raw_writer *w, uint64_t ts, const char *name)
{
	struct raw_range_push p = { raw_writer_intern(w, name, ts), 0 };
	raw_writer_emit(w, RAW_REC_RANGE_PUSH, ts, &p, sizeof p);
}

static inline void rg_pop(struct raw_writer *w, uint64_t ts)
{
	static const char none;
	raw_writer_emit(w, RAW_REC_RANGE_POP, ts, &none, 0);
}

static inline void rg_start(struct raw_writer *w, uint64_t ts, uint64_t id, const char *name)
{
	struct raw_range_start s = { id, raw_writer_intern(w, name, ts), 0 };
	raw_writer_emit(w, RAW_REC_RANGE_START, ts, &s, sizeof s);
}

static inline void rg_end(struct raw_writer *w, uint64_t ts, uint64_t id)
{
	struct raw_range_end e = { id };
	raw_writer_emit(w, RAW_REC_RANGE_END, ts, &e, sizeof e);
}

static inline void rg_step(struct raw_writer *w, uint64_t ts, uint64_t n)
{
	struct raw_step s = { n };
	raw_writer_emit(w, RAW_REC_STEP, ts, &s, sizeof s);
}

static inline void rg_tname(struct raw_writer *w, uint64_t ts, int tid, const char *name)
{
	struct raw_thread_name t = { tid, raw_writer_intern(w, name, ts) };
	raw_writer_emit(w, RAW_REC_THREAD_NAME, ts, &t, sizeof t);
}

static inline void rg_meta(struct raw_writer *w, uint64_t ts, const char *k, const char *v,
		    uint32_t flags)
{
	struct raw_metadata m = { raw_writer_intern(w, k, ts), raw_writer_intern(w, v, ts),
				  flags, 0 };
	raw_writer_emit(w, RAW_REC_METADATA, ts, &m, sizeof m);
}

static inline void rg_process(struct raw_writer *w, uint64_t ts, int pid, const char *cmdline)
{
	struct raw_process p = { pid, 1, raw_writer_intern(w, cmdline, ts),
				 raw_writer_intern(w, "/bin/x", ts), 0, 0 };
	raw_writer_emit(w, RAW_REC_PROCESS, ts, &p, sizeof p);
}

static inline void rg_recording(struct raw_writer *w, uint64_t ts, uint32_t on, uint32_t cause)
{
	struct raw_recording r = { on, cause };
	raw_writer_emit(w, RAW_REC_RECORDING, ts, &r, sizeof r);
}

static inline void rg_host(struct raw_writer *w, uint64_t ts, double user_pct, uint64_t rss,
		    uint64_t read_bytes)
{
	struct raw_host_sample h = { .processes = 2, .threads = 5, .proc_cpu_user_pct = user_pct,
				     .proc_cpu_sys_pct = 1.5, .proc_rss_bytes = rss,
				     .proc_read_bytes = read_bytes, .proc_write_bytes = 2048,
				     .sys_cpu_pct = 40.0, .sys_mem_used_bytes = 1ull << 30,
				     .sys_mem_avail_bytes = 3ull << 30 };
	raw_writer_emit(w, RAW_REC_HOST_SAMPLE, ts, &h, sizeof h);
}

/* A framework operator; NULL strings are not recorded. */
static inline void rg_op(struct raw_writer *w, uint64_t start, uint64_t end, int32_t tid,
			 const char *name, const char *shapes, const char *types,
			 const char *stack, int64_t seq, int32_t fwd_tid)
{
	struct raw_op o = { .end = end, .tid = tid, .name_id = raw_writer_intern(w, name, start),
			    .shapes_id = shapes ? raw_writer_intern(w, shapes, start) : 0,
			    .types_id = types ? raw_writer_intern(w, types, start) : 0,
			    .stack_id = stack ? raw_writer_intern(w, stack, start) : 0,
			    .flags = seq >= 0 && fwd_tid ? RAW_OP_BACKWARD : 0, .seq = seq,
			    .fwd_tid = fwd_tid };
	raw_writer_emit(w, RAW_REC_OP, start, &o, sizeof o);
}

static inline int rg_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static inline char *rg_read(const char *path)
{
	char *t = NULL;
	return fs_read_file(path, &t, NULL) == 0 ? t : NULL;
}

static inline void rg_poke(const char *path, long off, const void *bytes, size_t n)
{
	int fd = open(path, O_WRONLY);
	if (fd >= 0) {
		if (pwrite(fd, bytes, n, off) != (ssize_t)n)
			perror("pwrite");
		close(fd);
	}
}

static inline void rg_truncate(const char *path, long size)
{
	if (truncate(path, size) != 0)
		perror("truncate");
}

static inline long rg_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* Occurrences of needle in hay, not overlapping. A loop of its own, not
 * strstr: ASan's strstr measures the rest of the text at every call, so
 * counting the lines of a large output took it minutes. */
static inline int rg_count(const char *hay, const char *needle)
{
	int n = 0;
	size_t len = strlen(needle);
	for (const char *p = hay; p && *p;) {
		if (*p == *needle && strncmp(p, needle, len) == 0) {
			n++;
			p += len;
		} else {
			p++;
		}
	}
	return n;
}

/* Where chunk i begins. */
static inline long rg_chunk_off(unsigned i)
{
	return (long)RAW_HEADER_SIZE + (long)i * RG_CHUNK;
}

/* ---- device records (dev.raw, the device sampler) ---- */

static inline uint32_t rg_str(struct raw_writer *w, const char *s, uint64_t ts)
{
	return s ? raw_writer_intern(w, s, ts) : 0;
}

/* A kernel (grid 0: unknown), copy or set of the sim device. */
static inline void rg_dev_task(struct raw_writer *w, uint32_t kind, uint64_t start, uint64_t end,
			       uint64_t corr, uint32_t device, uint32_t stream, const char *name,
			       uint32_t copy_kind, uint64_t bytes, uint32_t grid)
{
	struct raw_dev_activity a = { .end = end, .correlation = corr, .bytes = bytes,
		.kind = kind, .vendor = RAW_VENDOR_SIM, .device = device, .stream = stream,
		.name_id = rg_str(w, name, start), .copy_kind = copy_kind,
		.grid = { grid, grid ? 2 : 0, grid ? 1 : 0 }, .block = { grid ? 128 : 0, 1, 1 },
		.registers = grid ? 32 : 0, .shared_bytes = grid ? 4096 : 0 };
	raw_writer_emit(w, RAW_REC_DEV_ACTIVITY, start, &a, sizeof a);
}

static inline void rg_dev_api(struct raw_writer *w, uint64_t start, uint64_t end, uint64_t corr,
			      int32_t tid, const char *name)
{
	struct raw_dev_api a = { .end = end, .correlation = corr, .tid = tid,
		.name_id = rg_str(w, name, start), .domain = RAW_API_SIM, .vendor = RAW_VENDOR_SIM };
	raw_writer_emit(w, RAW_REC_DEV_API, start, &a, sizeof a);
}

static inline void rg_dev_mem(struct raw_writer *w, uint64_t ts, int32_t tid, uint32_t device,
			      uint64_t address, uint64_t bytes, int is_free)
{
	struct raw_dev_memory m = { .address = address, .bytes = bytes, .tid = tid,
		.device = device, .vendor = RAW_VENDOR_SIM, .flags = is_free ? RAW_MEM_FREE : 0 };
	raw_writer_emit(w, RAW_REC_DEV_MEMORY, ts, &m, sizeof m);
}

static inline void rg_dev_coll(struct raw_writer *w, uint64_t start, uint64_t end, uint64_t corr,
			       uint32_t op, uint32_t stream, const char *name, const char *group,
			       const char *ranks, int32_t rank, int32_t peer, uint64_t bytes)
{
	struct raw_dev_collective c = { .end = end, .bytes = bytes, .correlation = corr, .op = op,
		.vendor = RAW_VENDOR_SIM, .device = 0, .stream = stream,
		.name_id = rg_str(w, name, start), .group_id = rg_str(w, group, start),
		.ranks_id = rg_str(w, ranks, start), .rank = rank, .peer = peer };
	raw_writer_emit(w, RAW_REC_DEV_COLLECTIVE, start, &c, sizeof c);
}

static inline void rg_dev_sample(struct raw_writer *w, uint64_t ts, uint32_t device,
				 uint32_t util, uint64_t used)
{
	struct raw_dev_sample d = { .device = device, .vendor = RAW_VENDOR_SIM, .util_pct = util,
		.mem_util_pct = util / 2, .mem_used_bytes = used, .mem_total_bytes = 16ull << 30,
		.power_mw = 75500, .sm_clock_mhz = 1410, .temperature_c = 55 };
	raw_writer_emit(w, RAW_REC_DEV_SAMPLE, ts, &d, sizeof d);
}

static inline void rg_dev_info(struct raw_writer *w, uint64_t ts, uint32_t device, const char *name)
{
	struct raw_dev_info d = { .device = device, .vendor = RAW_VENDOR_SIM,
		.name_id = rg_str(w, name, ts), .sm_count = 8, .total_mem_bytes = 16ull << 30,
		.compute_major = 1, .compute_minor = 0 };
	raw_writer_emit(w, RAW_REC_DEV_INFO, ts, &d, sizeof d);
}

static inline void rg_dev_marker(struct raw_writer *w, uint64_t start, uint64_t end, int32_t tid,
				 const char *name, const char *domain, int range)
{
	struct raw_dev_marker m = { .end = end, .tid = tid, .name_id = rg_str(w, name, start),
		.domain_id = rg_str(w, domain, start), .flags = range ? RAW_MARKER_RANGE : 0 };
	raw_writer_emit(w, RAW_REC_DEV_MARKER, start, &m, sizeof m);
}

#endif
