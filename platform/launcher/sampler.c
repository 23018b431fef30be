#define _GNU_SOURCE
#include "launcher/ticker.h"
#include "launcher/sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "raw/raw_clock.h"
#include "raw/raw_writer.h"

void sampler_state_init(struct sampler_state *st, pid_t root, uint32_t parts)
{
	memset(st, 0, sizeof *st);
	st->root = root;
	st->parts = parts;
	st->clk_tck = sysconf(_SC_CLK_TCK);
	if (st->clk_tck <= 0)
		st->clk_tck = 100;
}

void sampler_state_free(struct sampler_state *st)
{
	free(st->prev);
	st->prev = NULL;
	st->nprev = 0;
}

static int sampler_prev_cmp(const void *a, const void *b)
{
	pid_t x = ((const struct sampler_prev *)a)->pid;
	pid_t y = ((const struct sampler_prev *)b)->pid;
	return (x > y) - (x < y);
}

static uint64_t sampler_delta(uint64_t now, uint64_t before)
{
	return now > before ? now - before : 0;
}

/* Adds one process to the sample and to the next sample's table. */
static void sampler_add_proc(struct sampler_state *st, const struct procfs_proc *p,
			     struct raw_host_sample *out, uint64_t *cpu_ticks,
			     struct sampler_prev *next)
{
	out->processes++;
	out->threads += p->threads;
	out->proc_rss_bytes += p->rss_bytes;
	*next = (struct sampler_prev){ p->pid, p->start_ticks, p->utime, p->stime,
				       p->read_bytes, p->write_bytes };
	/* The first sample has no table yet (bsearch's base must not be NULL). */
	struct sampler_prev *old = st->nprev ? bsearch(next, st->prev, st->nprev, sizeof *next,
						       sampler_prev_cmp) : NULL;
	/* A reused pid is another process: nothing to differ from. */
	if (!old || old->start_ticks != p->start_ticks)
		return;
	cpu_ticks[0] += sampler_delta(p->utime, old->utime);
	cpu_ticks[1] += sampler_delta(p->stime, old->stime);
	out->proc_read_bytes += sampler_delta(p->read_bytes, old->read_bytes);
	out->proc_write_bytes += sampler_delta(p->write_bytes, old->write_bytes);
}

static int sampler_tree(struct sampler_state *st, uint64_t now_ns, struct raw_host_sample *out)
{
	struct procfs_pids pids = { 0 };
	int rc = procfs_descendants(st->root, &pids);
	/* Under prof session the root is the program (the Python process that
	 * started prof), not prof: it counts, and prof does not. */
	if (rc == 0 && st->root != getpid())
		rc = procfs_pids_self_not(&pids, st->root, getpid());
	struct sampler_prev *next = calloc(pids.n ? pids.n : 1, sizeof *next);
	if (rc || !next) {
		procfs_pids_free(&pids);
		free(next);
		return rc ? rc : -ENOMEM;
	}
	size_t n = 0;
	uint64_t cpu_ticks[2] = { 0, 0 };
	for (size_t i = 0; i < pids.n; i++) {
		struct procfs_proc p;
		if (procfs_read_proc(pids.v[i], &p, st->parts & RAW_HOST_DISK) == 0)
			sampler_add_proc(st, &p, out, cpu_ticks, &next[n++]);
	}
	if (st->prev_ns && now_ns > st->prev_ns) {
		double secs = (double)(now_ns - st->prev_ns) / 1e9;
		out->proc_cpu_user_pct = 100.0 * (double)cpu_ticks[0] / (double)st->clk_tck / secs;
		out->proc_cpu_sys_pct = 100.0 * (double)cpu_ticks[1] / (double)st->clk_tck / secs;
	}
	qsort(next, n, sizeof *next, sampler_prev_cmp);
	free(st->prev);
	st->prev = next;
	st->nprev = n;
	procfs_pids_free(&pids);
	return 0;
}

static void sampler_system(struct sampler_state *st, struct raw_host_sample *out)
{
	struct procfs_cpu cpu;
	uint64_t total, avail;
	if ((st->parts & RAW_HOST_CPU) && procfs_sys_cpu(&cpu) == 0) {
		uint64_t dt = sampler_delta(cpu.total, st->prev_cpu.total);
		uint64_t di = sampler_delta(cpu.idle, st->prev_cpu.idle);
		if (st->prev_ns && dt > 0)
			out->sys_cpu_pct = 100.0 * (double)sampler_delta(dt, di) / (double)dt;
		st->prev_cpu = cpu;
	}
	if ((st->parts & RAW_HOST_MEM) && procfs_meminfo(&total, &avail) == 0) {
		out->sys_mem_used_bytes = sampler_delta(total, avail);
		out->sys_mem_avail_bytes = avail;
	}
}

/* The tree's counters come from the same reads whatever is asked (its
 * /proc/<pid>/stat gives the processes and threads): what was not asked
 * is cleared, so that a 0 in the record never reads as a measurement. */
static void sampler_keep_parts(struct raw_host_sample *out, uint32_t parts)
{
	if (!(parts & RAW_HOST_CPU))
		out->proc_cpu_user_pct = out->proc_cpu_sys_pct = 0;
	if (!(parts & RAW_HOST_MEM))
		out->proc_rss_bytes = 0;
	out->parts = parts & RAW_HOST_ALL;
}

int sampler_take(struct sampler_state *st, uint64_t now_ns, struct raw_host_sample *out)
{
	memset(out, 0, sizeof *out);
	int rc = sampler_tree(st, now_ns, out);
	if (rc)
		return rc;
	sampler_system(st, out);
	sampler_keep_parts(out, st->parts);
	st->prev_ns = now_ns;
	return 0;
}

struct sampler {
	pthread_t thread;
	int stop_fd[2];
	sem_t opened;
	int open_rc;
	int dirfd;
	uint64_t interval_ns;
	uint64_t *disk_full;
	struct raw_writer w;
	struct sampler_state st;
	uint64_t samples;
};

static int sampler_open_stream(struct sampler *s)
{
	struct raw_writer_opts o = {
		.clock = RAW_CLOCK_MONOTONIC,
		.kind = RAW_STREAM_HOST,
		.chunk_size = 64u << 10,   /* ~600 samples: a short run stays small */
		.pid = (int32_t)getpid(),
		.tid = (int32_t)gettid(),
		.ppid = (int32_t)getppid(),
		.comm = "host sampler",
		.disk_full = s->disk_full,
	};
	return raw_writer_open(&s->w, s->dirfd, SAMPLER_STREAM, &o);
}

static void sampler_emit_net(struct sampler *s, uint64_t now)
{
	struct raw_host_net v[SAMPLER_NET_MAX];
	const char *names[SAMPLER_NET_MAX];
	size_t n = sampler_net_take(&s->st, now, v, names);
	for (size_t i = 0; i < n; i++) {
		v[i].name_id = raw_writer_intern(&s->w, names[i], now);
		if (v[i].name_id)
			raw_writer_emit(&s->w, RAW_REC_HOST_NET, now, &v[i], sizeof v[i]);
	}
}

static void *sampler_main(void *arg)
{
	struct sampler *s = arg;
	s->open_rc = sampler_open_stream(s);
	sem_post(&s->opened);
	if (s->open_rc)
		return NULL;
	uint64_t next = raw_clock_ns(CLOCK_MONOTONIC);
	do {
		uint64_t now = raw_clock_ns(CLOCK_MONOTONIC);
		struct raw_host_sample hs;
		if ((s->st.parts & RAW_HOST_ALL) && sampler_take(&s->st, now, &hs) == 0 &&
		    raw_writer_emit(&s->w, RAW_REC_HOST_SAMPLE, now, &hs, sizeof hs) == 0)
			s->samples++;
		if (s->st.parts & SAMPLER_NET)
			sampler_emit_net(s, now);
		next = ticker_next(next, now, s->interval_ns);
	} while (!ticker_wait(s->stop_fd[0], next));
	return NULL;
}

static void sampler_free(struct sampler *s)
{
	close(s->stop_fd[0]);
	close(s->stop_fd[1]);
	sem_destroy(&s->opened);
	sampler_state_free(&s->st);
	free(s);
}

int sampler_start(struct sampler **out, int dirfd, uint32_t interval_ms, pid_t root,
		  uint32_t parts, uint64_t *disk_full)
{
	struct sampler *s = calloc(1, sizeof *s);
	if (!s)
		return -ENOMEM;
	if (pipe2(s->stop_fd, O_CLOEXEC) != 0) {
		int rc = -errno;
		free(s);
		return rc;
	}
	sem_init(&s->opened, 0, 0);
	s->dirfd = dirfd;
	s->disk_full = disk_full;
	s->interval_ns = (uint64_t)interval_ms * 1000000u;
	sampler_state_init(&s->st, root, parts);
	int rc = -pthread_create(&s->thread, NULL, sampler_main, s);
	if (rc == 0) {
		pthread_setname_np(s->thread, "prof-sampler");
		while (sem_wait(&s->opened) != 0 && errno == EINTR)
			;
		rc = s->open_rc;
		if (rc)
			pthread_join(s->thread, NULL);
	}
	if (rc) {
		sampler_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

uint64_t sampler_stop(struct sampler *s)
{
	if (!s)
		return 0;
	ticker_stop(s->stop_fd[1], s->thread);
	raw_writer_close(&s->w);
	uint64_t n = s->samples;
	sampler_free(s);
	return n;
}
