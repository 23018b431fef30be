/* parse_run_dir: a run directory in, PROFILER_OUTPUT/ out. */
#include "pipeline/parse.h"
#include "run/rundir.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/agent_env.h"
#include "common/fsutil.h"
#include "common/nomem.h"
#include "export/export.h"
#include "outputs/out_file.h"
#include "outputs/out_sink.h"
#include "outputs/tables/out_comm.h"
#include "outputs/tables/out_dev_usage.h"
#include "outputs/tables/out_gc.h"
#include "outputs/tables/out_ranges.h"
#include "outputs/tables/out_host.h"
#include "outputs/tables/out_host_sum.h"
#include "outputs/tables/out_kernel.h"
#include "outputs/tables/out_memory.h"
#include "outputs/tables/out_meta.h"
#include "outputs/tables/out_op_details.h"
#include "ingest/parse_devinfo.h"
#include "ingest/parse_discover.h"
#include "ingest/parse_kineto.h"
#include "ingest/parse_info.h"
#include "ingest/parse_merge.h"
#include "model/parse_model.h"
#include "report/report.h"
#include "stats/stats.h"
#include "ingest/parse_rank.h"

#define OUTPUT_DIR "PROFILER_OUTPUT"
#define DONE_FILE  "parse.done"

struct run {
	const char *dir;
	const char *out_base;        /* where PROFILER_OUTPUT/ goes: `dir` unless a rank's */
	int64_t rank;                /* >= 0: only this rank's processes; -1: all */
	const struct parse_opts *o;
	struct parse_report *r;
	struct parse_info info;
	struct parse_srcs srcs;
	struct parse_stream *streams;
	size_t nstreams;
	char *out_dir;
	struct export_span *spans;   /* the recorded steps, for the export */
	size_t nspans;
	struct report_device *devs;  /* the devices' capacities, for report.html */
	size_t ndevs;
	int64_t nomem_before;        /* allocations failed before the parse (nomem.h) */
};

int parse_progress_wanted(int is_tty, int quiet, double elapsed_s, double after_s)
{
	return is_tty && !quiet && elapsed_s >= after_s;
}

double parse_progress_after(int mode)
{
	const char *e = getenv("PROF_PROGRESS_AFTER");
	char *end;
	double v = e && *e ? strtod(e, &end) : -1;
	return e && *e && !*end && v >= 0 ? v : mode == PARSE_PROGRESS_LINES ?
		PARSE_PROGRESS_LINE_S : 1.0;
}

int parse_progress_mode(int is_tty, int quiet)
{
	return quiet ? PARSE_PROGRESS_NONE : is_tty ? PARSE_PROGRESS_BAR : PARSE_PROGRESS_LINES;
}

/* The progress bar: how far the merge has come through the run's time. */
struct progress {
	struct timespec t0;
	double after;       /* seconds before the first draw */
	uint64_t lo, hi;
	int pct;            /* last drawn; -1: none */
	int mode;           /* PARSE_PROGRESS_* */
	double next_line;   /* LINES: seconds at which the next is said */
};

static double since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Not a terminal (a CI log): a line every PARSE_PROGRESS_LINE_S, so that a
 * long parse is not taken for a hung one. */
static void progress_line(struct progress *p, FILE *log, int pct)
{
	double t = since(&p->t0);
	if (t < p->next_line)
		return;
	p->next_line = t + PARSE_PROGRESS_LINE_S;
	fprintf(log, "prof parse: %d%% of the run's time read, after %.0f s\n", pct, t);
	fflush(log);
}

static void progress_draw(struct progress *p, FILE *log, uint64_t ns)
{
	int pct = ns <= p->lo || p->hi <= p->lo ? 0 :
		  ns >= p->hi ? 100 : (int)((ns - p->lo) * 100.0 / (double)(p->hi - p->lo));
	if (p->mode == PARSE_PROGRESS_LINES) {
		progress_line(p, log, pct);
		return;
	}
	if (!parse_progress_wanted(1, 0, since(&p->t0), p->after))
		return;
	if (pct == p->pct)
		return;
	p->pct = pct;
	char bar[41];
	memset(bar, '#', 40);
	memset(bar + pct * 40 / 100, '.', 40 - (size_t)(pct * 40 / 100));
	bar[40] = '\0';
	fprintf(log, "\rprof parse: [%s] %3d%%", bar, pct);
	fflush(log);
}

/* The run's time from its first record (or stream opening, if earlier)
 * to its streams' ends; the merge has read each stream's first record. */
static void progress_span(struct progress *p, const struct run *u)
{
	clock_gettime(CLOCK_MONOTONIC, &p->t0);
	for (size_t i = 0; i < u->nstreams; i++) {
		const struct parse_stream *s = &u->streams[i];
		uint64_t a = s->open_ns, b = parse_stream_end_ns(s);
		if (s->nrec && s->ns < a)
			a = s->ns;
		p->lo = a < p->lo ? a : p->lo;
		p->hi = b > p->hi ? b : p->hi;
	}
}

static int is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Why there is no raw/: --data-simplification's note says when it
 * removed it; else this is no run directory. */
static void say_no_raw(const char *dir, FILE *log)
{
	char *note = fs_join(dir, PROF_RAW_REMOVED);
	char *text = NULL;
	size_t len = 0;
	if (note && fs_read_file(note, &text, &len) == 0) {
		fprintf(log, "prof parse: %s: %s/ was removed by --data-simplification after the "
			"parse of %.*s; PROFILER_OUTPUT/ holds that parse's outputs and there is "
			"nothing left to parse again\n", dir, PROF_RAW_DIR,
			(int)strcspn(text, "\n"), text);
	} else {
		fprintf(log, "prof parse: %s: no %s/ directory: not a prof run directory\n", dir,
			PROF_RAW_DIR);
	}
	free(text);
	free(note);
}

static enum parse_status find_streams(struct run *u)
{
	FILE *log = u->o->log;
	if (!is_dir(u->dir)) {
		fprintf(log, "prof parse: %s: not a directory\n", u->dir);
		return PARSE_FAILED;
	}
	char *raw = fs_join(u->dir, PROF_RAW_DIR);
	if (raw && is_dir(raw))
		parse_kineto_ingest(raw, log);   /* torch's own flush files, first */
	int rc = !raw ? -ENOMEM : is_dir(raw) ? parse_discover(raw, &u->srcs, log) : -ENOENT;
	if (rc == 0 && u->rank >= 0)
		rc = parse_srcs_keep_rank(&u->srcs, u->rank);
	if (rc == -ENOENT)
		say_no_raw(u->dir, log);
	else if (rc)
		fprintf(log, "prof parse: %s/%s: %s\n", u->dir, PROF_RAW_DIR, strerror(-rc));
	else if (u->srcs.n == 0)
		fprintf(log, "prof parse: %s: no raw streams (*.raw) in it\n", raw);
	free(raw);
	return rc || u->srcs.n == 0 ? PARSE_FAILED : PARSE_OK;
}

static void verbose_stream(const struct run *u, const struct parse_stream *s)
{
	static const char *const rates[] = { "", "run", "stream", "header", "none" };
	const struct raw_file_header *h = &s->file.hdr;
	fprintf(u->o->log, "prof parse: %s: pid %d tid %d %s, %s clock%s%s, %" PRIu64
		" chunks%s\n", s->file.path, h->pid, h->tid,
		h->kind == RAW_STREAM_HOST ? "host sampler" :
		h->kind == RAW_STREAM_LAUNCHER ? "launcher" :
		h->kind == RAW_STREAM_FRAMEWORK ? "framework" :
		h->kind == RAW_STREAM_DEVICE ? "device" :
		h->kind == RAW_STREAM_DEVICE_SAMPLES ? "device sampler" : "thread",
		h->clock == RAW_CLOCK_TSC ? "tsc" : "monotonic",
		h->clock == RAW_CLOCK_TSC ? ", rate from " : "",
		h->clock == RAW_CLOCK_TSC ? rates[s->rate_src] : "",
		s->file.nchunks, h->flags & RAW_FILE_CLOSED ? "" : ", not closed");
}

static enum parse_status open_streams(struct run *u)
{
	u->streams = calloc(u->srcs.n, sizeof *u->streams);
	if (!u->streams) {
		fprintf(u->o->log, "prof parse: %s: out of memory for %zu streams\n", u->dir,
			u->srcs.n);
		return PARSE_FAILED;
	}
	for (size_t i = 0; i < u->srcs.n; i++) {
		struct parse_stream *s = &u->streams[u->nstreams];
		u->r->streams++;
		if (parse_stream_open(s, &u->srcs.v[i], u->nstreams, u->info.tsc_hz,
				      u->o->log) != 0) {
			u->r->skipped_streams++;
			continue;
		}
		if (u->o->verbose)
			verbose_stream(u, s);
		u->nstreams++;
	}
	if (u->nstreams)
		return PARSE_OK;
	fprintf(u->o->log, "prof parse: %s: no readable raw stream\n", u->dir);
	return PARSE_FAILED;
}

/* ts 0 is the launch (profiler_info.json's start pair), else the earliest
 * stream's opening. */
/* The trace's distributedInfo rank: the rank parsed; else the one rank the
 * images carry (0 when none carries one: a job of one process, which HTA
 * then need not guess); -1, none, for a trace holding several ranks. */
static int64_t trace_rank(const struct run *u)
{
	if (u->rank >= 0)
		return u->rank;
	if (u->info.rank >= 0)
		return u->info.rank;
	int64_t *ranks;
	if (parse_src_ranks(&u->srcs, &ranks) != 0)
		return -1;
	int64_t one = -2;
	for (size_t i = 0; i < u->srcs.n; i++)
		if (ranks[i] >= 0)
			one = one == -2 || one == ranks[i] ? ranks[i] : -1;
	free(ranks);
	return one == -2 ? 0 : one;
}

static void pick_base(const struct run *u, struct out_trace_meta *tm)
{
	tm->rank = trace_rank(u);
	if (u->info.have_start) {
		tm->base_mono_ns = u->info.start_mono_ns;
		tm->base_real_ns = u->info.start_real_ns;
		return;
	}
	const struct raw_clock_pair *best = &u->streams[0].file.hdr.open_pair;
	for (size_t i = 1; i < u->nstreams; i++)
		if (u->streams[i].file.hdr.open_pair.mono_ns < best->mono_ns)
			best = &u->streams[i].file.hdr.open_pair;
	tm->base_mono_ns = best->mono_ns;
	tm->base_real_ns = best->real_ns;
}

static int merge_all(struct run *u, struct parse_model *m)
{
	struct parse_merge mg;
	struct parse_stream *s;
	enum merge_ev ev;
	struct progress pg = { .pct = -1, .lo = UINT64_MAX, .after = u->o->progress_after_s,
			       .mode = u->o->progress, .next_line = u->o->progress_after_s };
	uint64_t n = 0;
	if (parse_merge_init(&mg, u->streams, u->nstreams) != 0)
		return -ENOMEM;
	if (u->o->progress)
		progress_span(&pg, u);
	while ((ev = parse_merge_next(&mg, &s)) != MERGE_END) {
		if (ev == MERGE_RECORD)
			model_record(m, s);
		else
			model_stream_end(m, s);
		if (u->o->progress && (++n & 8191) == 0)
			progress_draw(&pg, u->o->log, s->ns);
	}
	parse_merge_free(&mg);
	if (pg.pct >= 0)
		fputs("\r\033[K", u->o->log);
	return 0;
}

/* exec replaces the image without running its destructors, so streams of
 * an image that a later image of the same pid followed ended by exec, not
 * by a crash. */
static int ended_by_exec(const struct run *u, const struct parse_src *src)
{
	if (src->launcher)
		return 0;
	for (size_t i = 0; i < u->nstreams; i++) {
		const struct parse_src *o = u->streams[i].src;
		if (!o->launcher && o->pid == src->pid && o->n > src->n)
			return 1;
	}
	return 0;
}

/* Device streams: records later than the reorder window (10 s, or the
 * writer's late_ns), or handed out early because it was full, are said. */
static void tally_device(struct run *u, const struct parse_stream *s)
{
	if (s->rq.late && s->rq.window_ns == PARSE_REORDER_WINDOW_NS)
		fprintf(u->o->log, "prof parse: %s: %" PRIu64 " device records came more than %llu s "
			"after later-starting ones; they were read out of order\n", s->file.path,
			s->rq.late, PARSE_REORDER_WINDOW_NS / 1000000000ull);
	else if (s->rq.late)
		fprintf(u->o->log, "prof parse: %s: %" PRIu64 " device records came later than the "
			"header's late_ns (%" PRIu64 " ns) allows, so the header is damaged; they "
			"were read out of order\n", s->file.path, s->rq.late, s->rq.window_ns);
	if (s->rq.forced)
		fprintf(u->o->log, "prof parse: %s: the reorder window was full %" PRIu64
			" times\n", s->file.path, s->rq.forced);
	u->r->dev_late += s->rq.late;
}

static void tally_stream(struct run *u, const struct parse_stream *s)
{
	struct parse_report *r = u->r;
	const struct raw_file *f = &s->file;
	r->records += f->st.records;
	r->lost += f->st.lost > f->hdr.lost_total ? f->st.lost : f->hdr.lost_total;
	r->skipped_chunks += f->st.skipped_chunks;
	r->skipped_bytes += f->st.skipped_bytes;
	r->bad_records += f->st.bad_records;
	r->unnamed_records += f->st.unnamed_records;
	bool unclosed = !(f->hdr.flags & RAW_FILE_CLOSED) && !ended_by_exec(u, s->src);
	r->unclosed_streams += unclosed;
	r->unclosed_of_child += unclosed && u->info.child_pid && f->hdr.pid == u->info.child_pid;
	if (f->st.unknown_records)
		fprintf(u->o->log, "prof parse: %s: %" PRIu64 " records of types this "
			"prof does not know were skipped (written by a newer prof?)\n",
			f->path, f->st.unknown_records);
	if (s->reorder)
		tally_device(u, s);
}

static int proc_ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;
	return x < y ? -1 : x > y;
}

static int cmp_rank(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* How many ranks the stepping processes name, and the first that several
 * of them name: a rank torchrun restarted steps again in a new process. */
static void tally_step_ranks(struct parse_report *r, int64_t *ranks, size_t n)
{
	qsort(ranks, n, sizeof *ranks, cmp_rank);
	for (size_t i = 0, end; i < n; i = end) {
		for (end = i + 1; end < n && ranks[end] == ranks[i]; end++)
			;
		r->step_rank_n++;
		if (end - i > 1 && r->ranks_restarted++ == 0) {
			r->rank_restarted = ranks[i];
			r->rank_restarted_procs = end - i;
		}
	}
}

/* The steps the outputs hold (--step-list's only), and how they fall on
 * the processes that step. */
static void tally_steps(struct parse_report *r, const struct parse_model *m,
			const struct parse_opts *o)
{
	const struct model_proc **who = malloc((m->nsteps ? m->nsteps : 1) * sizeof *who);
	size_t n = 0;
	for (size_t i = 0; who && i < m->nsteps; i++)
		if (!o->steps || out_step_listed(o->steps, o->nsteps, m->steps[i].number))
			who[n++] = m->step_procs[i];
	r->steps = who ? n : m->nsteps;
	r->steps_seen = m->nsteps;
	r->step_procs = r->steps_max = r->steps_min = r->step_rank_n = 0;
	r->step_ranks = 1;
	r->rank_restarted = -1;
	r->rank_restarted_procs = r->ranks_restarted = 0;
	if (!who)
		return;
	qsort(who, n, sizeof *who, proc_ptr_cmp);
	int64_t *ranks = malloc((n ? n : 1) * sizeof *ranks);
	for (size_t i = 0, end; i < n; i = end) {
		for (end = i + 1; end < n && who[end] == who[i]; end++)
			;
		uint64_t k = end - i;
		if (ranks)
			ranks[r->step_procs] = model_proc_rank(who[i]);
		r->step_procs++;
		r->step_ranks &= who[i]->rank != NULL;
		r->steps_min = r->step_procs == 1 || k < r->steps_min ? k : r->steps_min;
		r->steps_max = k > r->steps_max ? k : r->steps_max;
	}
	if (ranks && r->step_ranks)
		tally_step_ranks(r, ranks, r->step_procs);
	free(ranks);
	free(who);
}

void parse_report_steps(const struct parse_report *r, char *buf, size_t len)
{
	if (!r->steps_seen) {
		snprintf(buf, len, "no steps: mark each with prof_tx.step() or prof_step()");
		return;
	}
	int n = snprintf(buf, len, "%" PRIu64 " steps", r->steps);
	if (r->step_procs < 2 || n < 0 || (size_t)n >= len)
		return;
	const char *who = r->step_ranks && r->step_rank_n == r->step_procs ? "ranks" : "processes";
	if (r->steps_min == r->steps_max)
		n += snprintf(buf + n, len - (size_t)n, ": %" PRIu64 " on each of %" PRIu64 " %s",
			      r->steps_min, r->step_procs, who);
	else
		n += snprintf(buf + n, len - (size_t)n, ": %" PRIu64 "-%" PRIu64 " on each of %"
			      PRIu64 " %s", r->steps_min, r->steps_max, r->step_procs, who);
	if (r->step_ranks && r->step_rank_n < r->step_procs && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " of %" PRIu64 " ranks", r->step_rank_n);
}

int parse_report_step_note(const struct parse_report *r, char *buf, size_t len)
{
	if (len)
		*buf = '\0';
	if (!r->step_ranks && r->step_procs > 1) {
		snprintf(buf, len, "%" PRIu64 " processes without a rank stepped: "
			 "step_trace_time.csv's Pid column tells their rows apart, and `prof "
			 "stats` times each step by its longest row", r->step_procs);
		return 1;
	}
	if (r->rank_restarted < 0)
		return 0;
	if (r->ranks_restarted == 1)
		snprintf(buf, len, "rank %" PRId64 " stepped in %" PRIu64 " processes (restarted "
			 "by torchrun?): rank_%" PRId64 "/ holds them all, told apart by its "
			 "step_trace_time.csv's Pid column", r->rank_restarted,
			 r->rank_restarted_procs, r->rank_restarted);
	else
		snprintf(buf, len, "%" PRIu64 " ranks (rank %" PRId64 " and others) stepped in "
			 "several processes each (restarted by torchrun?): each rank_<r>/ holds "
			 "them all, told apart by its step_trace_time.csv's Pid column",
			 r->ranks_restarted, r->rank_restarted);
	return 1;
}

static void tally(struct run *u, const struct parse_model *m)
{
	struct parse_report *r = u->r;
	for (size_t i = 0; i < u->nstreams; i++)
		tally_stream(u, &u->streams[i]);
	tally_steps(r, m, u->o);
	r->unmatched = m->n.unmatched_pops + m->n.unmatched_ends;
	r->unfinished = m->n.unfinished_ranges + m->n.unfinished_async;
	r->host_samples = m->n.host_samples;
	r->ops = m->n.ops;
	r->ops_clamped = m->n.ops_clamped;
	r->windows = m->n.windows;
	r->dev_tasks = m->n.dev_tasks;
	r->dev_apis = m->n.dev_apis;
	if (m->n.ops_dropped)
		fprintf(u->o->log, "prof parse: %" PRIu64 " operators dropped: out of memory\n",
			m->n.ops_dropped);
}

/* The files written as the records go by. */
struct outs {
	struct out_trace trace;
	struct out_host host;
	struct out_host_sum hostsum;
	struct out_op_details details;
	struct out_op_stat opstat;
	struct out_meta meta;
	struct out_kernel kernels;
	struct out_api_stat apis;
	struct out_memory mem;
	struct out_comm comm;
	struct out_dev_usage devuse;
	struct out_gc gc;
	struct out_ranges ranges;
	struct out_sinks sinks;         /* the model's way to the outputs above but
					 * trace, opstat, apis, mem */
	int opened;                    /* how many of the files below are open */
};

static void outs_abort(struct outs *o)
{
	if (o->opened > 0)
		out_trace_abort(&o->trace);
	if (o->opened > 1)
		out_host_abort(&o->host);
	if (o->opened > 2)
		out_op_details_abort(&o->details);
	if (o->opened > 3)
		out_memory_abort(&o->mem);
	if (o->opened > 4)
		out_dev_usage_abort(&o->devuse);
	out_gc_abort(&o->gc);
	o->opened = 0;
}

static int outs_open(struct run *u, struct outs *o, const struct out_trace_meta *tm)
{
	const char *d = u->out_dir;
	int rc;
	memset(o, 0, sizeof *o);
	out_op_stat_init(&o->opstat);
	out_api_stat_init(&o->apis);
	out_host_sum_init(&o->hostsum);
	out_ranges_init(&o->ranges);
	out_gc_init(&o->gc, d, tm->base_mono_ns);
	if ((rc = out_trace_open(&o->trace, d, tm)) == 0 && ++o->opened &&
	    (rc = out_host_open(&o->host, d, tm->base_mono_ns)) == 0 && ++o->opened &&
	    (rc = out_op_details_open(&o->details, d)) == 0 && ++o->opened &&
	    (rc = out_memory_open(&o->mem, d, tm->base_mono_ns)) == 0 && ++o->opened &&
	    (rc = out_dev_usage_open(&o->devuse, d, tm->base_mono_ns)) == 0 && ++o->opened &&
	    (rc = out_kernel_open(&o->kernels, d, tm->base_mono_ns)) == 0 &&
	    (rc = out_comm_init(&o->comm, d)) == 0)
		return 0;
	outs_abort(o);
	out_kernel_free(&o->kernels);
	out_comm_free(&o->comm);
	return rc;
}

/* The outputs the model reaches through sinks (out_sink.h), in the order
 * an event reaches them. */
static void outs_sinks(struct outs *o)
{
	struct out_sinks *ss = &o->sinks;
	ss->n = 0;
	out_sinks_add(ss, &out_host_sink, &o->host);
	out_sinks_add(ss, &out_host_sum_sink, &o->hostsum);
	out_sinks_add(ss, &out_meta_sink, &o->meta);
	out_sinks_add(ss, &out_kernel_sink, &o->kernels);
	out_sinks_add(ss, &out_op_details_sink, &o->details);
	out_sinks_add(ss, &out_comm_sink, &o->comm);
	out_sinks_add(ss, &out_dev_usage_sink, &o->devuse);
	out_sinks_add(ss, &out_gc_sink, &o->gc);
	out_sinks_add(ss, &out_ranges_sink, &o->ranges);
	out_sinks_add(ss, &out_memory_sink, &o->mem);
}

static void outs_free(struct outs *o)
{
	out_meta_free(&o->meta);
	out_host_sum_free(&o->hostsum);
	out_op_stat_free(&o->opstat);
	out_api_stat_free(&o->apis);
	out_kernel_free(&o->kernels);
	out_comm_free(&o->comm);
	out_ranges_free(&o->ranges);
}

/* The files that need every step: step_trace_time.csv, kernel_details.csv,
 * operator_details.csv, communication*.json. */
static int write_step_files(struct run *u, struct outs *o, struct parse_model *m)
{
	struct out_step_row *rows;
	size_t n;
	struct out_step_find f;
	int rc = model_step_rows(m, &rows, &n);
	if (rc == 0) {
		rc = out_step_trace_write(u->out_dir, rows, n);
		free(rows);
	}
	if (rc || (rc = out_step_find_init(&f, m->steps, m->nsteps)) != 0) {
		out_op_details_abort(&o->details);
		return rc;
	}
	f.want = u->o->steps;
	f.nwant = u->o->nsteps;
	int rd = out_op_details_close(&o->details, &f);
	rc = out_kernel_write(&o->kernels, &f);
	int rm = out_comm_write(&o->comm, &f, m->nsteps > 0, o->trace.base);
	out_step_find_free(&f);
	return rd ? rd : rc ? rc : rm;
}

/* Closes the streamed files and writes the others; the first error. */
static int outs_close(struct run *u, struct outs *o, struct parse_model *m)
{
	int rc[11];
	rc[0] = out_trace_close(&o->trace);
	rc[1] = out_host_close(&o->host);
	rc[2] = out_memory_close(&o->mem);
	rc[3] = out_dev_usage_close(&o->devuse);
	o->opened = 0;
	rc[4] = out_op_stat_write(&o->opstat, u->out_dir);
	rc[5] = out_api_stat_write(&o->apis, u->out_dir);
	rc[6] = write_step_files(u, o, m);
	rc[7] = out_meta_write(&o->meta, u->out_base, u->info.env, u->o->log);
	rc[8] = out_host_sum_write(&o->hostsum, u->out_dir);
	rc[9] = out_gc_close(&o->gc);
	rc[10] = out_ranges_write(&o->ranges, u->out_dir);
	for (int i = 0; i < 11; i++)
		if (rc[i])
			return rc[i];
	return 0;
}

/* The steps' spans in trace_view.json's microseconds. */
static void keep_spans(struct run *u, const struct parse_model *m, uint64_t base)
{
	u->spans = m->nsteps ? malloc(m->nsteps * sizeof *u->spans) : NULL;
	if (!u->spans)
		return;
	for (size_t i = 0; i < m->nsteps; i++) {
		const struct out_step *s = &m->steps[i];
		u->spans[i] = (struct export_span){ s->number,
			(double)(int64_t)(s->start_ns - base) / 1e3,
			(double)(int64_t)(s->end_ns - base) / 1e3 };
	}
	u->nspans = m->nsteps;
}

/* The devices' memory capacities from their info records, named as
 * memory_record.csv names them, for report.html. Out of memory: none (the
 * rule that needs them says nothing). */
static void keep_devices(struct run *u, const struct parse_devinfo *di)
{
	u->devs = di->n ? calloc(di->n, sizeof *u->devs) : NULL;
	for (size_t i = 0; u->devs && i < di->n; i++) {
		const struct out_dev_info *v = &di->v[i];
		struct report_device *d = &u->devs[u->ndevs];
		if (!v->total_mem)
			continue;
		d->component = out_vendor_name(v->vendor);
		out_memory_device_type(d->device, sizeof d->device, v->vendor, v->device);
		d->total_mb = (double)v->total_mem / OUT_MB;
		u->ndevs++;
	}
}

/* report.html, and its findings for the summary lines. */
static void keep_findings(struct run *u)
{
	struct report_finding found[PARSE_FINDINGS_MAX];
	size_t n = 0;
	if (report_write_run(u->out_base, u->out_dir, u->devs, u->ndevs, u->o->log, found,
			     PARSE_FINDINGS_MAX, &n) != 0)
		return;
	for (size_t i = 0; i < n; i++)
		report_finding_line(&found[i], u->r->findings[i], sizeof u->r->findings[i]);
	u->r->nfindings = n;
}

/* Everything but parse.done; 0 or a negative errno. */
static int write_outputs(struct run *u)
{
	struct out_trace_meta tm;
	struct outs o;
	struct parse_model m;
	struct parse_devinfo di;
	memset(&m, 0, sizeof m);
	pick_base(u, &tm);
	int rc = parse_devinfo_scan(u->streams, u->nstreams, &di);
	tm.devs = di.v;
	tm.ndevs = di.n;
	keep_devices(u, &di);
	rc = rc ? rc : outs_open(u, &o, &tm);
	parse_devinfo_free(&di);
	if (rc)
		return rc;
	outs_sinks(&o);
	struct model_outs mo = { &o.trace, &o.opstat, &o.apis, &o.mem, &o.sinks };
	rc = out_meta_init(&o.meta);
	rc = rc ? rc : model_init(&m, u->streams, u->nstreams, &mo, u->o->log);
	m.want_steps = u->o->steps;
	m.nwant_steps = u->o->nsteps;
	rc = rc ? rc : merge_all(u, &m);
	if (rc == 0) {
		model_finish(&m);
		tally(u, &m);
		keep_spans(u, &m, tm.base_mono_ns);
		u->r->events_written = o.trace.events;
		rc = outs_close(u, &o, &m);
	} else {
		outs_abort(&o);
	}
	model_free(&m);
	outs_free(&o);
	return rc;
}

static void say_unclosed(const struct run *u)
{
	if (u->r->unclosed_streams && u->info.live == 1)
		fprintf(u->o->log, "prof parse: %" PRIu64 " of %zu streams are still being written "
			"(the run is going); what they committed so far was read\n",
			u->r->unclosed_streams, u->nstreams);
	else if (u->r->unclosed_streams && u->r->unclosed_of_child == u->r->unclosed_streams &&
		 u->info.end_signal[0])
		fprintf(u->o->log, "prof parse: %" PRIu64 " of %zu streams ended without close, "
			"as the program died of %s; their committed records were read\n",
			u->r->unclosed_streams, u->nstreams, u->info.end_signal);
	else if (u->r->unclosed_streams)
		fprintf(u->o->log, "prof parse: %" PRIu64 " of %zu streams ended without close "
			"(the process crashed, was killed, or left by _exit); their committed records "
			"were read\n",
			u->r->unclosed_streams, u->nstreams);
}

/* Whatever happens next, an earlier parse's outputs must not pass for
 * this one's. 0 or a negative errno. */
static int forget_done(struct run *u)
{
	u->out_dir = fs_join(u->out_base, OUTPUT_DIR);
	char *done = u->out_dir ? fs_join(u->out_dir, DONE_FILE) : NULL;
	int rc = done ? 0 : -ENOMEM;
	struct stat st;
	/* never through a planted link: no unlink, no output under it */
	if (done && lstat(u->out_dir, &st) == 0 && !S_ISDIR(st.st_mode))
		rc = S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;
	else if (done && unlink(done) != 0 && errno != ENOENT)
		rc = -errno;
	free(done);
	return rc;
}

static void say_steps(const struct run *u)
{
	FILE *log = u->o->log;
	for (size_t k = 0; k < u->o->nsteps; k++) {
		size_t i;
		for (i = 0; i < u->nspans && u->spans[i].step != u->o->steps[k]; i++)
			;
		if (i == u->nspans)
			fprintf(log, "prof parse: --step-list: step %llu was not recorded\n",
				(unsigned long long)u->o->steps[k]);
	}
}

static void say_truncated(const struct run *u, const struct export_trace_result *t)
{
	FILE *log = u->o->log;
	fprintf(log, "prof parse: trace_view.json cut at the timeline limit (%llu MB): kept %zu "
		"of %zu steps", (unsigned long long)(u->o->timeline_limit >> 20),
		t->nkept_steps, t->nsteps);
	if (t->nkept_steps)
		fprintf(log, " (%llu-%llu)", (unsigned long long)t->kept_steps[0],
			(unsigned long long)t->kept_steps[t->nkept_steps - 1]);
	fprintf(log, ", left out %llu events; the CSVs are whole\n",
		(unsigned long long)u->r->events_dropped);
}

static void unlink_in(const char *dir, const char *name)
{
	char *p = fs_join(dir, name);
	if (p)
		unlink(p);
	free(p);
}

/* --step-list, --timeline-limit, --export-type, --pretty, --gzip, on the
 * text outputs just written. 0 or a negative errno. */
static int post_process(struct run *u)
{
	const struct parse_opts *o = u->o;
	unsigned ex = o->export_type ? o->export_type : PARSE_EXPORT_TEXT;
	int rc = 0;
	if (o->steps)
		say_steps(u);
	if (o->steps || o->timeline_limit) {
		struct export_trace_result t;
		rc = export_trace_filter(u->out_dir, u->spans, u->nspans, o->steps, o->nsteps,
					 o->timeline_limit, &t);
		if (!rc) {
			u->r->events_written = t.kept;
			u->r->events_dropped = t.dropped;
			u->r->truncated = t.truncated;
			if (t.truncated)
				say_truncated(u, &t);
		}
		free(t.kept_steps);
	}
	if (!rc && o->steps)
		rc = export_csv_filter(u->out_dir, u->spans, u->nspans, o->steps, o->nsteps);
	/* report.html reads the CSVs as they are kept; a page that could not
	 * be written is said, and the parse stands */
	unlink_in(u->out_dir, "report.html");
	unlink_in(u->out_dir, STATS_FINDINGS_FILE);
	if (!rc && !o->no_report)
		keep_findings(u);
	/* an earlier parse's other formats must not pass for this one's */
	if (!(ex & PARSE_EXPORT_DB))
		unlink_in(u->out_dir, "profiler.db");
	if (!(ex & PARSE_EXPORT_TEXT) || !o->gzip)
		unlink_in(u->out_dir, "trace_view.json.gz");
	if (!rc && (ex & PARSE_EXPORT_DB))
		rc = export_db(u->out_dir, o->log);
	if (!rc && !(ex & PARSE_EXPORT_TEXT))
		rc = export_drop_text(u->out_dir);
	else if (!rc)
		rc = export_trace_format(u->out_dir, o->pretty, o->gzip);
	return rc;
}

/* RUN_DIR/PROF_RAW_REMOVED: when raw/ went, so that a parse to come can
 * say why it is not there. */
static void note_removed(const char *dir, FILE *log)
{
	char when[64], text[96];
	time_t now = time(NULL);
	struct tm tm;
	strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S %z", localtime_r(&now, &tm));
	int n = snprintf(text, sizeof text, "%s\n", when);
	int rc = out_file_write(dir, PROF_RAW_REMOVED, text, (size_t)n);
	if (rc)
		fprintf(log, "prof parse: data simplification: could not write %s/%s: %s\n", dir,
			PROF_RAW_REMOVED, strerror(-rc));
}

/* --data-simplification: raw/ goes only after a parse that read it all. */
static void simplify(struct run *u)
{
	char *raw = fs_join(u->dir, PROF_RAW_DIR);
	int rc = raw ? export_remove_tree(raw) : -ENOMEM;
	if (rc)
		fprintf(u->o->log, "prof parse: data simplification: could not remove %s: %s\n",
			raw ? raw : PROF_RAW_DIR, strerror(-rc));
	else
		fprintf(u->o->log, "prof parse: data simplification: removed %s\n", raw);
	u->r->raw_removed = rc == 0;
	if (rc == 0)
		note_removed(u->dir, u->o->log);
	free(raw);
}

/* One parse at a time writes a PROFILER_OUTPUT/: one of a run still going
 * and the one prof run makes at its end must not mix their files. The
 * lock goes with the returned descriptor; -1 when it cannot be had
 * (no locks on this file system), which parses unlocked as before. */
static int out_lock(const struct run *u)
{
	int fd = open(u->out_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) == 0)
		return fd;
	if (errno == EWOULDBLOCK) {
		fprintf(u->o->log, "prof parse: %s: another parse is writing there; waiting for "
			"it to end\n", u->out_dir);
		while (flock(fd, LOCK_EX) != 0)
			if (errno != EINTR)
				break;
	}
	return fd;
}

/* Memory that ran out on the way, said (common/nomem.h); 1 when it did. */
static int say_nomem(const struct run *u, int64_t notes)
{
	if (notes <= 0)
		return 0;
	fprintf(u->o->log, "prof parse: %s: memory ran out %" PRId64 " time%s during the parse: "
		"outputs may lack rows, events or names; raw/ is kept: free memory (or copy the "
		"run to a machine with more) and run `prof parse %s` again\n", u->dir, notes,
		notes == 1 ? "" : "s", u->dir);
	return 1;
}

static enum parse_status parse(struct run *u)
{
	char *raw = fs_join(u->dir, PROF_RAW_DIR);
	int rc = !raw ? -ENOMEM : is_dir(raw) ? forget_done(u) : 0;  /* only in what looks like a run */
	free(raw);
	if (rc == -ELOOP || rc == -ENOTDIR) {
		fprintf(u->o->log, "prof parse: %s/%s is %s; refusing to write there\n",
			u->out_base, OUTPUT_DIR, rc == -ELOOP ? "a symbolic link" : "not a directory");
		return PARSE_FAILED;
	}
	if (rc) {
		fprintf(u->o->log, "prof parse: %s/%s/%s: %s\n", u->out_base, OUTPUT_DIR, DONE_FILE,
			strerror(-rc));
		return PARSE_FAILED;
	}
	enum parse_status st = find_streams(u);
	if (st != PARSE_OK)
		return st;
	parse_info_read(u->dir, &u->info, u->o->log, u->o->end_info_said);
	if ((st = open_streams(u)) != PARSE_OK)
		return st;
	rc = fs_mkdir_p(u->out_dir);
	int lock = rc == 0 ? out_lock(u) : -1;
	if (rc == 0 && (rc = write_outputs(u)) == 0 && (rc = post_process(u)) == 0)
		rc = out_file_write(u->out_dir, DONE_FILE, "", 0);
	if (lock >= 0)
		close(lock);
	if (rc) {
		fprintf(u->o->log, "prof parse: %s: writing the outputs failed: %s%s\n",
			u->out_dir ? u->out_dir : u->dir, strerror(-rc),
			rc == -ENOSPC || rc == -EDQUOT ? " (the outputs take several times the "
			"size of raw/: free that much there, or copy the run to a larger disk and "
			"parse it there; no half-written file was left)" : "");
		return PARSE_FAILED;
	}
	say_unclosed(u);
	const struct parse_report *r = u->r;
	int short_of = say_nomem(u, prof_nomem_count() - u->nomem_before);
	st = r->skipped_streams || r->skipped_chunks || r->skipped_bytes || r->bad_records ||
		r->unnamed_records || short_of ? PARSE_DAMAGED : PARSE_OK;
	if (u->o->data_simplification && u->info.live == 1)
		fprintf(u->o->log, "prof parse: data simplification: %s/%s kept: the run is still "
			"going\n", u->dir, PROF_RAW_DIR);
	else if (u->o->data_simplification && st == PARSE_OK)
		simplify(u);
	else if (u->o->data_simplification)
		fprintf(u->o->log, "prof parse: data simplification: %s/%s kept: the parse "
			"found damage\n", u->dir, PROF_RAW_DIR);
	return st;
}

static enum parse_status parse_some(const char *run_dir, int64_t rank, const char *out_base,
				    const struct parse_opts *o, struct parse_report *r)
{
	struct run u = { .dir = run_dir, .out_base = out_base, .rank = rank, .o = o, .r = r,
			 .nomem_before = prof_nomem_count() };
	memset(r, 0, sizeof *r);
	enum parse_status st = parse(&u);
	prof_nomem_said(prof_nomem_count() - u.nomem_before);   /* said, or why it failed */
	for (size_t i = 0; i < u.nstreams; i++)
		parse_stream_close(&u.streams[i]);
	free(u.streams);
	free(u.out_dir);
	free(u.spans);
	free(u.devs);
	parse_srcs_free(&u.srcs);
	parse_info_free(&u.info);
	return st;
}

enum parse_status parse_run_dir(const char *run_dir, const struct parse_opts *o,
				struct parse_report *r)
{
	/* Read before the parse: --data-simplification may remove raw/. */
	uint64_t budget;
	int reached = rundir_budget_of(run_dir, &budget);
	enum parse_status st = parse_some(run_dir, -1, run_dir, o, r);
	r->storage_limit_reached = reached == 1;
	r->storage_limit_bytes = reached >= 0 ? budget : 0;
	return st;
}

enum parse_status parse_run_rank(const char *run_dir, int64_t rank, const char *out_base,
				 const struct parse_opts *o, struct parse_report *r)
{
	struct parse_opts ro = *o;
	ro.data_simplification = 0;   /* raw/ serves the other ranks and the whole run */
	return parse_some(run_dir, rank, out_base, &ro, r);
}
