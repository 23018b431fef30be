/*
 * prof stats [options] RUN_DIR: summary tables of a parsed run, computed
 * from PROFILER_OUTPUT/'s CSVs (lib/stats reads and aggregates; this file
 * prints). Table output fits in 80 columns.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/archive.h"
#include "cmds.h"
#include "options.h"
#include "runs.h"
#include "common/csv_out.h"
#include "cluster/cluster.h"
#include "common/json_out.h"
#include "run/notices.h"
#include "stats/stats.h"
#include "table.h"

enum view { V_OVERVIEW, V_STEPS, V_OPS, V_KERNELS, V_API, V_MEMORY, V_RANGES, V_MODULES,
	    V_FLOPS, V_RANKS, V_ALL };
static const char *const view_names[] = { "overview", "steps", "ops", "kernels", "api",
					  "memory", "ranges", "modules", "flops", "ranks", "all",
					  NULL };
static const char *const sort_names[] = { "total", "avg", "max", "min", "count", "self",
					  NULL };
static const char *const where_names[] = { "all", "steps", "outside", NULL };

struct ctx {
	const char *outdir;
	const char *dir;
	enum view view;
	enum stats_sort sort;
	long top;              /* 0: every row */
	const char *op;
	enum stats_where where;   /* which operators: --where */
	double peak_tflops;       /* --peak-tflops: the device's peak; 0: not given */
	struct stats_op_split *split;  /* emit_ops fills it when set (the overview) */
	/* dir holds several ranks' runs that `prof parse` analysed: their
	 * ranks are shown (the overview, ranks); one of them, to name */
	int cluster;
	const char *a_run;
	/* An archive given (c->dir is then the run extracted into tmp, which
	 * goes at the end): what the user is told about. */
	const char *archive;
	char *tmp, *unpacked;
	struct tab t;          /* the output: format, unit, width */
};

/* The run (or cluster) as the user named it. */
static const char *stats_name(const struct ctx *c)
{
	return c->archive ? c->archive : c->dir;
}

static void stats_usage(FILE *out)
{
	fprintf(out,
		"usage: prof stats [options] RUN_DIR|ARCHIVE\n"
		"       prof stats [--view overview|ranks] [options] CLUSTER_DIR\n\n"
		"Summary tables of a parsed run, from RUN_DIR/PROFILER_OUTPUT/'s CSVs (run\n"
		"`prof parse RUN_DIR` first if the run was not parsed); an archive of one\n"
		"(.tar.gz, .tgz, .tar.zst, .zip: prof run --archive's) is read from a\n"
		"temporary copy. A directory of several ranks' runs that `prof parse\n"
		"CLUSTER_DIR` analysed shows its ranks (cluster_analysis_output/); name one\n"
		"rank's run for the other views.\n\n"
		"Options:\n"
		"  --view VIEW     overview (default), steps, ops, kernels, api, memory,\n"
		"                  ranges, modules, flops, ranks, all\n"
		"                    overview: steps, step time split, top 5 operators/kernels\n"
		"                    steps:    one row per step and device (step_trace_time.csv)\n"
		"                    ops:      operators by name (operator_details.csv)\n"
		"                    kernels:  device tasks by name (op_statistic.csv, else\n"
		"                              kernel_details.csv)\n"
		"                    api:      device API calls (api_statistic.csv)\n"
		"                    memory:   peak per component and device, and per step\n"
		"                              (memory_record.csv), largest allocations, the\n"
		"                              operators that allocate most, allocations alive\n"
		"                              at the end (operator_memory.csv)\n"
		"                    ranges:   the program's ranges by name: prof_tx,\n"
		"                              RecordEvent (range_statistic.csv)\n"
		"                    modules:  nn.Module forward calls by module path\n"
		"                              (with_modules; range_statistic.csv)\n"
		"                    flops:    FLOPs and TFLOP/s per step (with_flops;\n"
		"                              operator_details.csv, step_trace_time.csv)\n"
		"                    ranks:    a multi-rank run's or cluster's ranks: each\n"
		"                              one's mean step split, the slow ranks\n"
		"                              (cluster_analysis_output/)\n"
		"  --peak-tflops X the device's peak TFLOP/s: the flops view adds the\n"
		"                  model FLOPs utilisation, MFU(%%) = TFLOP/s / X\n"
		"  --sort KEY      order of ops, kernels and api rows: total (default), avg,\n"
		"                  max, min (smallest first), count, or self (operators'\n"
		"                  self time; the others by total)\n"
		"  --top N         rows per table (default 15; 0: all); not for steps\n"
		"  --unit U        time unit: s, ms (default), us, ns\n"
		"  --op NAME       every call of operator NAME (operator_details.csv), in\n"
		"                  file order: duration, self time, device time, step,\n"
		"                  shapes\n"
		"  --where W       which operators (ranges) the ops, ranges and modules\n"
		"                  views and --op count: all\n"
		"                  (default), steps (those in a training step) or outside\n"
		"                  (outside every step: model set-up, evaluation)\n"
		"  --format F      table (default), csv (one view, not all) or json\n"
		"  -h, --help      show this help\n\n"
		"Exit status: 0 success; 1 the run cannot be read (not parsed: no\n"
		"PROFILER_OUTPUT/parse.done; a damaged CSV; --op NAME with no call);\n"
		"2 usage error (bad option or value).\n");
}

/* A view whose CSV does not exist. */
/* `why`: what is missing, "file absent: X" or another reason. */
static void no_data_why(struct ctx *c, const char *key, const char *what, const char *why)
{
	if (c->t.fmt == FMT_JSON) {
		jo_key(&c->t.jo, key);
		jo_null(&c->t.jo);
	} else if (c->t.fmt == FMT_CSV) {
		fprintf(stderr, "prof stats: %s: no data (%s)\n", what, why);
	} else {
		tab_line(&c->t, "%s: no data (%s)", what, why);
		tab_line(&c->t, "%s", "");
	}
}

static void no_data(struct ctx *c, const char *key, const char *what, const char *file)
{
	char why[200];
	snprintf(why, sizeof why, c->t.fmt == FMT_CSV ? "%s absent" : "file absent: %s", file);
	no_data_why(c, key, what, why);
}

static int load_failed(const char *err)
{
	fprintf(stderr, "prof stats: %s\n", err);
	return 1;
}

static size_t shown(const struct ctx *c, size_t n, long top)
{
	return top > 0 && (size_t)top < n ? (size_t)top : n;
}

static const char *sort_title(const struct ctx *c)
{
	static const char *const t[] = { "total", "average", "max", "min", "calls", "self" };
	return t[c->sort];
}

/* ---- views ---- */

static const char *const where_title[] = { "", " in steps", " outside every step" };

static int emit_ops(struct ctx *c, long top, const char *key)
{
	char err[512];
	struct stats_agg a;
	int rc = stats_load_ops(c->outdir, c->where, &a, c->split, err, sizeof(err));
	if (rc == STATS_ABSENT) {
		no_data(c, key, "Operators", "operator_details.csv");
		return 0;
	}
	if (rc != 0)
		return load_failed(err);
	stats_agg_sort(&a, c->sort, STATS_OP_TOTAL);
	int table = c->t.fmt == FMT_TABLE, mn = c->sort == STATS_SORT_MIN;
	/* a CPU-only run: no Device column of zeros in the table */
	int dev = !table || stats_agg_total(&a, STATS_OP_DEVICE) > 0;
	const struct field f[] = {
		{ "Name", "name", F_STR, 0 },
		{ "Calls", "calls", F_INT, 6 },
		{ "Total", "total", F_TIME, 10 },
		{ "Avg", "avg", F_TIME, 10 },
		{ "Min", "min", F_TIME, table && !mn ? -1 : 10 },
		{ "Max", "max", F_TIME, table && mn ? -1 : 10 },
		{ "Self", "self_total", F_TIME, 10 },
		{ "Self Avg", "self_avg", F_TIME, -1 },
		{ "Self Min", "self_min", F_TIME, -1 },
		{ "Self Max", "self_max", F_TIME, -1 },
		{ "Device", "device_total", F_TIME, dev ? 10 : -1 },
	};
	/* table rows hold at most 8 cells: the table leaves out the self
	 * min/avg/max columns (csv and json have them) */
	const struct field tf[] = { f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[10] };
	int nf = table ? 8 : 11;
	char title[200];
	snprintf(title, sizeof(title), "Operators%s by %s %stime (%zu names, operator_details.csv)",
		 where_title[c->where], sort_title(c), c->sort == STATS_SORT_SELF ? "" : "host ",
		 a.n);
	tab_begin(&c->t, key, title, table ? tf : f, nf);
	for (size_t i = 0; i < shown(c, a.n, top); i++) {
		const struct stats_row *r = &a.rows[i];
		struct val v[11] = {
			{ r->name, 0 }, { NULL, (double)r->count },
			{ NULL, r->sum[0] }, { NULL, stats_row_avg(r, 0) },
			{ NULL, r->min[0] }, { NULL, r->max[0] },
			{ NULL, r->sum[1] }, { NULL, stats_row_avg(r, 1) },
			{ NULL, r->min[1] }, { NULL, r->max[1] },
			{ NULL, r->sum[2] },
		};
		if (table) {
			struct val tv[8] = { v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[10] };
			tab_row(&c->t, tf, nf, tv);
		} else {
			tab_row(&c->t, f, nf, v);
		}
	}
	tab_end(&c->t);
	stats_agg_free(&a);
	return 0;
}

static int emit_kernels(struct ctx *c, long top, const char *key)
{
	char err[512];
	const char *src;
	struct stats_agg a;
	int rc = stats_load_kernels(c->outdir, &a, &src, err, sizeof(err));
	if (rc == STATS_ABSENT) {
		no_data(c, key, "Kernels", "op_statistic.csv and kernel_details.csv");
		return 0;
	}
	if (rc != 0)
		return load_failed(err);
	stats_agg_sort(&a, c->sort == STATS_SORT_SELF ? STATS_SORT_TOTAL : c->sort, 0);
	double all = stats_agg_total(&a, 0);
	const struct field f[] = {
		{ "Name", "name", F_STR, 0 },
		{ "Calls", "calls", F_INT, 6 },
		{ "Total", "total", F_TIME, 10 },
		{ "Avg", "avg", F_TIME, 10 },
		{ "Min", "min", F_TIME, 10 },
		{ "Max", "max", F_TIME, 10 },
		{ "Ratio(%)", "ratio", F_PCT, 8 },
	};
	char title[200];
	snprintf(title, sizeof(title), "Device tasks by %s time (%zu names, %s)", sort_title(c),
		 a.n, src);
	tab_begin(&c->t, key, title, f, 7);
	for (size_t i = 0; i < shown(c, a.n, top); i++) {
		const struct stats_row *r = &a.rows[i];
		struct val v[7] = {
			{ r->name, 0 }, { NULL, (double)r->count }, { NULL, r->sum[0] },
			{ NULL, stats_row_avg(r, 0) }, { NULL, r->min[0] }, { NULL, r->max[0] },
			{ NULL, all > 0 ? 100.0 * r->sum[0] / all : 0 },
		};
		tab_row(&c->t, f, 7, v);
	}
	tab_end(&c->t);
	stats_agg_free(&a);
	return 0;
}

static int emit_api(struct ctx *c, long top, const char *key)
{
	char err[512];
	struct stats_agg a;
	int rc = stats_load_api(c->outdir, &a, err, sizeof(err));
	if (rc == STATS_ABSENT) {
		no_data(c, key, "Device API calls", "api_statistic.csv");
		return 0;
	}
	if (rc != 0)
		return load_failed(err);
	stats_agg_sort(&a, c->sort == STATS_SORT_SELF ? STATS_SORT_TOTAL : c->sort, 0);
	const struct field f[] = {
		{ "Name", "name", F_STR, 0 },
		{ "Level", "level", F_STR, 7 },
		{ "Calls", "calls", F_INT, 6 },
		{ "Total", "total", F_TIME, 10 },
		{ "Avg", "avg", F_TIME, 10 },
		{ "Min", "min", F_TIME, 10 },
		{ "Max", "max", F_TIME, 10 },
	};
	char title[200];
	snprintf(title, sizeof(title), "Device API calls by %s time (%zu names, api_statistic.csv)",
		 sort_title(c), a.n);
	tab_begin(&c->t, key, title, f, 7);
	for (size_t i = 0; i < shown(c, a.n, top); i++) {
		const struct stats_row *r = &a.rows[i];
		struct val v[7] = {
			{ r->name, 0 }, { r->extra, 0 }, { NULL, (double)r->count },
			{ NULL, r->sum[0] }, { NULL, stats_row_avg(r, 0) }, { NULL, r->min[0] },
			{ NULL, r->max[0] },
		};
		tab_row(&c->t, f, 7, v);
	}
	tab_end(&c->t);
	stats_agg_free(&a);
	return 0;
}

/* The ranges view (prof_tx ranges) and the modules view (paddle's Model
 * view): range_statistic.csv by name, over the steps --where takes. */
static int emit_ranges(struct ctx *c, long top, const char *key, int modules)
{
	char err[512];
	struct stats_agg a;
	const char *what = modules ? "Modules" : "Ranges";
	int rc = stats_load_ranges(c->outdir, modules ? "nn.Module" : "user_annotation", c->where,
				   &a, err, sizeof(err));
	const char *none = modules ? "no module ranges: record with --with-modules"
				   : "the program opened no ranges (prof_tx.range, RecordEvent)";
	if (rc == STATS_ABSENT || (rc == 0 && a.n == 0)) {
		if (rc == 0)
			stats_agg_free(&a);
		no_data_why(c, key, what, none);
		return 0;
	}
	if (rc != 0)
		return load_failed(err);
	int self = c->sort == STATS_SORT_SELF;
	stats_agg_sort(&a, self ? STATS_SORT_TOTAL : c->sort, self ? STATS_RANGE_SELF : 0);
	const struct field f[] = {
		{ modules ? "Module" : "Name", "name", F_STR, 0 },
		{ "Calls", "calls", F_INT, 6 },
		{ "Total", "total", F_TIME, 10 },
		{ "Self", "self", F_TIME, 10 },
		{ "Avg", "avg", F_TIME, 10 },
		{ "Max", "max", F_TIME, 10 },
		{ "Steps", "steps", F_INT, 6 },
		{ "Per step", "per_step", F_TIME, 12 },
	};
	char title[200];
	snprintf(title, sizeof(title), "%s%s by %s time (%zu names, range_statistic.csv)", what,
		 where_title[c->where], sort_title(c), a.n);
	tab_begin(&c->t, key, title, f, 8);
	for (size_t i = 0; i < shown(c, a.n, top); i++) {
		const struct stats_row *r = &a.rows[i];
		double steps = r->sum[STATS_RANGE_STEPS];
		struct val v[8] = {
			{ r->name, 0 }, { NULL, (double)r->count }, { NULL, r->sum[0] },
			{ NULL, r->sum[STATS_RANGE_SELF] }, { NULL, stats_row_avg(r, 0) },
			{ NULL, r->max[0] }, { NULL, steps },
			{ NULL, steps > 0 ? r->sum[0] / steps : 0 },
		};
		tab_row(&c->t, f, 8, v);
	}
	tab_end(&c->t);
	stats_agg_free(&a);
	return 0;
}

/* with_flops: FLOPs and TFLOP/s per step; MFU with --peak-tflops. */
static int emit_flops(struct ctx *c, const char *key)
{
	char err[512];
	struct stats_flops f;
	int rc = stats_load_flops(c->outdir, &f, err, sizeof(err));
	if (rc == STATS_ABSENT) {
		no_data_why(c, key, "FLOPs", "no operator in a step has FLOPs: record with "
			    "--with-flops");
		return 0;
	}
	if (rc != 0)
		return load_failed(err);
	const struct field fl[] = {
		{ "Step", "step", F_INT, 6 },
		{ "GFLOPs", "gflops", F_NUM, 14 },
		{ "Time", "time", F_TIME, 12 },
		{ "TFLOP/s", "tflops", F_NUM, 12 },
		{ "MFU(%)", "mfu", F_PCT, 8 },
	};
	size_t nf = c->peak_tflops > 0 ? 5 : 4;
	tab_begin(&c->t, key, "FLOPs per step (operator_details.csv; time: step_trace_time.csv)",
		   fl, nf);
	for (size_t i = 0; i < f.n; i++) {
		const struct stats_flops_step *s = &f.rows[i];
		double tflops = s->time_us > 0 ? s->flops / (s->time_us * 1e-6) / 1e12 : 0;
		struct val v[5] = { { NULL, (double)s->step }, { NULL, s->flops / 1e9 },
				    { NULL, s->time_us }, { NULL, tflops },
				    { NULL, c->peak_tflops > 0 ? 100.0 * tflops / c->peak_tflops : 0 } };
		tab_row(&c->t, fl, nf, v);
	}
	tab_end(&c->t);
	stats_flops_free(&f);
	return 0;
}

static int emit_steps(struct ctx *c, const char *key)
{
	char err[512];
	struct stats_steps s;
	int rc = stats_load_steps(c->outdir, &s, err, sizeof(err));
	if (rc == STATS_ABSENT) {
		no_data(c, key, "Steps", "step_trace_time.csv");
		return 0;
	}
	if (rc != 0)
		return load_failed(err);
	/* A multi-rank run's rows say their rank, several processes of one
	 * rank their pid; Total takes what is left */
	int w = 11 - s.has_rank - 2 * s.has_pid;   /* room for the columns in 80 */
	const struct field f[] = {
		{ "Step", "step", F_INT, 5 },
		{ "Rank", "rank", F_INT, 4 },
		{ "Pid", "pid", F_INT, 7 },
		{ "Dev", "device", F_INT, 3 },
		{ "Total", "total", F_TIME, 0 },
		{ "Compute", "computing", F_TIME, w },
		{ "Comm", "communication_not_overlapped", F_TIME, w },
		{ "Overlap", "overlapped", F_TIME, w },
		{ "Free", "free", F_TIME, w },
		{ "Other", "other", F_TIME, w },
	};
	enum { NF = sizeof f / sizeof f[0] };
	int keep[NF];   /* the Rank and Pid fields only when the file has them */
	struct field g[NF];
	size_t nf = 0;
	for (size_t i = 0; i < NF; i++)
		if ((keep[i] = (i != 1 || s.has_rank) && (i != 2 || s.has_pid)))
			g[nf++] = f[i];
	tab_begin(&c->t, key, "Steps (step_trace_time.csv): Dev -1 host, Comm not overlapped,"
		   " Other preparing", g, nf);
	for (size_t i = 0; i < s.n; i++) {
		const struct stats_step *r = &s.rows[i];
		const double all[NF] = {
			(double)r->step, (double)r->rank, (double)r->pid, r->device, r->total,
			r->computing, r->comm_not_overlapped, r->overlapped, r->free_time,
			r->total - r->computing - r->comm_not_overlapped - r->free_time,
		};
		struct val v[NF];
		size_t k = 0;
		for (size_t j = 0; j < NF; j++)
			if (keep[j])
				v[k++] = (struct val){ NULL, all[j] };
		tab_row(&c->t, g, nf, v);
	}
	tab_end(&c->t);
	stats_steps_free(&s);
	return 0;
}

/* ---- ranks: a multi-rank run's or a cluster's (cluster_analysis_output/) ---- */

static const char *const rank_phase_short[CLUSTER_NPHASES] = { "Compute", "Comm", "Free" };

/* The phases `rank` is slow in, as the table's column titles name them. */
static void rank_slow_in(const struct cluster_slow *s, int rank, char *out, size_t len)
{
	size_t n = 0;
	out[0] = '\0';
	for (size_t i = 0; i < s->nslow && n < len; i++)
		if (s->slow[i].rank == rank)
			n += (size_t)snprintf(out + n, len - n, "%s%s", n ? "," : "",
					      rank_phase_short[s->slow[i].phase]);
	for (size_t i = 0; i < s->nlate && n < len; i++)
		if (s->late[i].rank == rank)
			n += (size_t)snprintf(out + n, len - n, "%slate", n ? "," : "");
}

static void ranks_table(struct ctx *c, const char *key, const struct cluster *cl,
			const struct cluster_slow *s)
{
	static const struct field f[] = {
		{ "Rank", "rank", F_INT, 5 },
		{ "Steps", "steps", F_INT, 5 },
		{ "Step", "step", F_TIME, 0 },
		{ "Compute", "computing", F_TIME, 11 },
		{ "Comm", "communication_not_overlapped", F_TIME, 10 },
		{ "Free", "free", F_TIME, 10 },
		{ "Other", "other", F_TIME, 10 },
		{ "Slow in", "slow_in", F_STR, 12 },
		{ "Run", "run", F_STR, -1 },
	};
	enum { NF = sizeof f / sizeof f[0] };
	tab_begin(&c->t, key, "Ranks, their mean step (cluster_analysis_output/)", f, NF);
	for (size_t i = 0; i < cl->n; i++) {
		const struct cluster_rank *r = &cl->ranks[i];
		double m[CLUSTER_MEAN_N];
		char slow[64];
		cluster_rank_mean(r, m);
		rank_slow_in(s, r->rank, slow, sizeof slow);
		const struct val v[NF] = {
			{ NULL, r->rank }, { NULL, (double)r->nsteps },
			{ NULL, m[0] + m[1] + m[2] + m[3] }, { NULL, m[CLUSTER_MEAN_COMPUTING] },
			{ NULL, m[CLUSTER_MEAN_COMM] }, { NULL, m[CLUSTER_MEAN_FREE] },
			{ NULL, m[CLUSTER_MEAN_OTHER] }, { slow, 0 }, { r->dir, 0 },
		};
		tab_row(&c->t, f, NF, v);
	}
	tab_end(&c->t);
}

static int has_comm_slow(const struct cluster_slow *s)
{
	for (size_t i = 0; i < s->nslow; i++)
		if (s->slow[i].phase == CLUSTER_PHASE_COMM)
			return 1;
	return 0;
}

/* The slow ranks, by the rule `prof parse` applied (lib/cluster): a table
 * of their own, not for CSV (one table a view). */
static void ranks_slow_table(struct ctx *c, const struct cluster_slow *s)
{
	static const struct field f[] = {
		{ "Rank", "rank", F_INT, 5 },
		{ "Phase", "phase", F_STR, 30 },
		{ "Its median", "median", F_TIME, 14 },
		{ "Ranks' median", "ranks_median", F_TIME, 17 },
		{ "Above(%)", "above_pct", F_PCT, 0 },
		{ "Late", "late", F_INT, -1 },   /* JSON: 1 for a late rank's row */
	};
	enum { NF = sizeof f / sizeof f[0] };
	char rule[120];
	snprintf(rule, sizeof rule, "a phase's median step over the ranks' by %.0f%% and %.0f ms",
		 CLUSTER_SLOW_RATIO * 100, CLUSTER_SLOW_MIN_US / 1000);
	if (c->t.fmt == FMT_TABLE && !s->nslow && !s->nlate) {
		tab_line(&c->t, "Slow ranks: none (%s)", rule);
		tab_line(&c->t, "%s", "");
		return;
	}
	char title[160];
	snprintf(title, sizeof title, "Slow ranks (%s)", rule);
	tab_begin(&c->t, "slow_ranks", title, f, NF);
	for (size_t i = 0; i < s->nslow + s->nlate; i++) {
		/* a late rank: its communication below the median, by -pct */
		int late = i >= s->nslow;
		const struct cluster_verdict *d = late ? &s->late[i - s->nslow] : &s->slow[i];
		double pct = d->pct >= 0 ? (late ? -d->pct : d->pct) : NAN;
		/* the table says it in words; JSON keeps the phase's name */
		const char *phase = late && c->t.fmt == FMT_TABLE ? "late at the collectives (Comm)" :
				    cluster_phase_name[d->phase];
		const struct val v[NF] = {
			{ NULL, d->rank }, { phase, 0 }, { NULL, d->value }, { NULL, d->median },
			{ NULL, pct }, { NULL, late },
		};
		tab_row(&c->t, f, NF, v);
	}
	if (c->t.fmt == FMT_TABLE && (s->nlate || has_comm_slow(s)))
		tab_para(&c->t, "", "A rank slow in Comm waits longer in collectives: for a late "
			 "rank (the one that waits least), or on a slower link.");
	tab_end(&c->t);
}

/* The ranks of c->dir's analysis. `quiet`: nothing when there is none
 * (the overview of a run of one rank). */
static int emit_ranks(struct ctx *c, const char *key, int quiet)
{
	struct cluster cl;
	struct cluster_slow s = { 0 };
	int rc = cluster_load(c->dir, &cl);
	if (rc == -ENOENT) {
		cluster_free(&cl);
		if (!quiet)
			no_data_why(c, key, "Ranks", "no cluster_analysis_output/: a run of one "
				    "rank");
		return 0;
	}
	char err[600];
	if (!rc && cl.skipped_rows)   /* said, as a damaged run CSV is: not left out silently */
		fprintf(stderr, "prof stats: %s/%s/cluster_step_trace_time.csv: %zu row%s skipped "
			"(not a rank's step: edited or cut short?); run `prof parse %s` again to "
			"rewrite it\n", c->dir, CLUSTER_OUT_DIR, cl.skipped_rows,
			cl.skipped_rows == 1 ? "" : "s", c->dir);
	if (!rc && (rc = cluster_slow_analyse(&cl, &s)) == 0) {
		ranks_table(c, key, &cl, &s);
		if (c->t.fmt != FMT_CSV)
			ranks_slow_table(c, &s);
	} else {
		snprintf(err, sizeof err, "%s/%s/cluster_step_trace_time.csv: %s", c->dir,
			 CLUSTER_OUT_DIR, rc == -EINVAL ? "not a cluster step table" : strerror(-rc));
	}
	cluster_slow_free(&s);
	cluster_free(&cl);
	return rc ? load_failed(err) : 0;
}

static const struct field mem_alloc_fields[] = {
	{ "Name", "name", F_STR, 0 },
	{ "Device", "device", F_STR, 8 },
	{ "Size(KB)", "size_kb", F_NUM, 12 },
	{ "Allocated at", "allocation_time", F_TIME, 16 },
	{ "Held", "duration", F_TIME, 12 },
};

static void memory_devices_part(struct ctx *c, const struct stats_memory *m)
{
	const struct field df[] = {
		{ "Component", "component", F_STR, 10 },
		{ "Device", "device", F_STR, 0 },
		{ "Peak(MB)", "peak_mb", F_NUM, 12 },
		{ "Peak at", "peak_time", F_TIME, 14 },
		{ "Allocs", "allocs", F_INT, 8 },
		{ "Frees", "frees", F_INT, 8 },
		{ "Final(MB)", "final_mb", F_NUM, 12 },
	};
	tab_begin(&c->t, "devices", "Memory per component (memory_record.csv; PTA: torch's; "
		   "times since the launch)", df, 7);
	for (size_t i = 0; i < m->ndevices; i++) {
		const struct stats_mem_device *d = &m->devices[i];
		struct val v[7] = { { d->component, 0 }, { d->device, 0 }, { NULL, d->peak_mb },
				    { NULL, d->peak_ts_us }, { NULL, (double)d->allocs },
				    { NULL, (double)d->frees }, { NULL, d->final_mb } };
		tab_row(&c->t, df, 7, v);
	}
	tab_end(&c->t);
}

static void memory_steps_part(struct ctx *c, const struct stats_memory *m)
{
	const struct field sf[] = {
		{ "Step", "step", F_INT, 6 },
		{ "Component", "component", F_STR, 10 },
		{ "Device", "device", F_STR, 0 },
		{ "Peak(MB)", "peak_mb", F_NUM, 12 },
	};
	if (!m->steps_known) {
		no_data_why(c, "steps", "Memory per step",
			    "no ProfilerStep spans in trace_view.json (no steps, or gzipped/pretty)");
		return;
	}
	tab_begin(&c->t, "steps", "Peak per step and component", sf, 4);
	for (size_t i = 0; i < m->nsteps; i++) {
		const struct stats_mem_step *st = &m->steps[i];
		const struct stats_mem_device *d = &m->devices[st->dev];
		struct val v[4] = { { NULL, (double)st->step }, { d->component, 0 },
				    { d->device, 0 }, { NULL, st->peak_mb } };
		tab_row(&c->t, sf, 4, v);
	}
	tab_end(&c->t);
}

static void memory_largest_part(struct ctx *c, const struct stats_memory *m, long top)
{
	char title[200];
	snprintf(title, sizeof(title), "Largest allocations (%zu in operator_memory.csv;"
		 " Held: until freed)", m->nallocs);
	tab_begin(&c->t, "allocations", title, mem_alloc_fields, 5);
	for (size_t i = 0; i < shown(c, m->nallocs, top); i++) {
		const struct stats_alloc *al = &m->allocs[i];
		struct val v[5] = { { al->name, 0 }, { al->device, 0 }, { NULL, al->size_kb },
				    { NULL, al->alloc_us }, { NULL, al->duration_us } };
		tab_row(&c->t, mem_alloc_fields, 5, v);
	}
	tab_end(&c->t);
}

static void memory_ops_part(struct ctx *c, const struct stats_memory *m, long top)
{
	const struct field of[] = {
		{ "Operator", "name", F_STR, 0 },
		{ "Allocations", "allocations", F_INT, 12 },
		{ "Allocated(MB)", "allocated_mb", F_NUM, 14 },
	};
	tab_begin(&c->t, "operators", "Operators that allocate most (operator_memory.csv)", of, 3);
	for (size_t i = 0; i < shown(c, m->nops, top); i++) {
		const struct stats_mem_op *o = &m->ops[i];
		struct val v[3] = { { o->name, 0 }, { NULL, (double)o->allocs }, { NULL, o->mb } };
		tab_row(&c->t, of, 3, v);
	}
	tab_end(&c->t);
}

/* Allocations never freed while recorded: the largest first, as they are
 * sorted; no Held column (they have none). */
static void memory_alive_part(struct ctx *c, const struct stats_memory *m, long top)
{
	size_t alive = 0;
	for (size_t i = 0; i < m->nallocs; i++)
		alive += isnan(m->allocs[i].duration_us);
	char title[200];
	snprintf(title, sizeof(title), "Alive at the end: never freed while recorded (%zu; "
		 "leak candidates)", alive);
	tab_begin(&c->t, "alive_at_end", title, mem_alloc_fields, 4);
	for (size_t i = 0, n = 0; i < m->nallocs && n < shown(c, alive, top); i++) {
		const struct stats_alloc *al = &m->allocs[i];
		if (!isnan(al->duration_us))
			continue;
		struct val v[4] = { { al->name, 0 }, { al->device, 0 }, { NULL, al->size_kb },
				    { NULL, al->alloc_us } };
		tab_row(&c->t, mem_alloc_fields, 4, v);
		n++;
	}
	tab_end(&c->t);
}

static int emit_memory(struct ctx *c, long top, const char *key)
{
	char err[512];
	struct stats_memory m;
	int rc = stats_load_memory(c->outdir, &m, err, sizeof(err));
	if (rc == STATS_ABSENT) {
		no_data(c, key, "Memory", "memory_record.csv and operator_memory.csv");
		return 0;
	}
	if (rc != 0)
		return load_failed(err);
	if (stats_memory_derive(c->outdir, &m) != 0) {
		stats_memory_free(&m);
		return load_failed("out of memory");
	}
	if (c->t.fmt == FMT_JSON) {
		jo_key(&c->t.jo, key);
		jo_obj_begin(&c->t.jo);
	}
	if (!m.have_records) {
		no_data(c, "devices", "Memory per device", "memory_record.csv");
	} else if (c->t.fmt != FMT_CSV) {
		memory_devices_part(c, &m);
		memory_steps_part(c, &m);
	}
	if (!m.have_allocs) {
		no_data(c, "allocations", "Allocations", "operator_memory.csv");
	} else {
		memory_largest_part(c, &m, top);
		memory_ops_part(c, &m, top);
		memory_alive_part(c, &m, top);
	}
	if (c->t.fmt == FMT_JSON)
		jo_obj_end(&c->t.jo);
	stats_memory_free(&m);
	return 0;
}

struct split_row {
	const char *name, *key;
	double v;
};

static void overview_split(const struct stats_step_summary *sum, struct split_row *split)
{
	split[0] = (struct split_row){ "Computing", "computing", sum->computing };
	split[1] = (struct split_row){ "Communication (not overlapped)",
				       "communication_not_overlapped", sum->communication };
	split[2] = (struct split_row){ "Free (device idle)", "free", sum->free_time };
	split[3] = (struct split_row){ "Other (preparing)", "other", sum->other };
}

static void csv_metric(struct ctx *c, const char *name, double v, int decimals,
		       const double *share)
{
	csv_str(&c->t.csv, name);
	csv_fixed(&c->t.csv, v, decimals);
	if (share)
		csv_fixed(&c->t.csv, *share, 2);
	else
		csv_str(&c->t.csv, NULL);
	csv_end_row(&c->t.csv);
}

static void overview_csv(struct ctx *c, const struct stats_step_summary *sum,
			 const struct stats_recording *rec)
{
	struct split_row split[4];
	char name[80];
	double base = sum->rows_total > 0 ? sum->rows_total : 1;
	overview_split(sum, split);
	csv_header(&c->t.csv, "Metric,Value,Share(%)");
	csv_metric(c, "Steps", (double)sum->steps, 0, NULL);
	snprintf(name, sizeof(name), "Total step time(%s)", tab_unit(&c->t));
	csv_metric(c, name, tab_conv(&c->t, sum->total), tab_unit_decimals[c->t.unit], NULL);
	snprintf(name, sizeof(name), "Average step time(%s)", tab_unit(&c->t));
	csv_metric(c, name, tab_conv(&c->t, sum->avg), tab_unit_decimals[c->t.unit], NULL);
	snprintf(name, sizeof(name), "Median step time(%s)", tab_unit(&c->t));
	csv_metric(c, name, tab_conv(&c->t, sum->median), tab_unit_decimals[c->t.unit], NULL);
	for (size_t i = 0; i < 4; i++) {
		double share = 100.0 * split[i].v / base;
		snprintf(name, sizeof(name), "%s(%s)", split[i].name, tab_unit(&c->t));
		csv_metric(c, name, tab_conv(&c->t, split[i].v), tab_unit_decimals[c->t.unit], &share);
	}
	if (rec->known)
		csv_metric(c, "Lost records", (double)rec->lost, 0, NULL);
}

static void overview_json(struct ctx *c, const struct stats_step_summary *sum,
			  const struct stats_recording *rec)
{
	struct split_row split[4];
	overview_split(sum, split);
	jo_obj_begin(&c->t.jo);
	jo_kuint(&c->t.jo, "steps", sum->steps);
	jo_kfixed(&c->t.jo, "total", tab_conv(&c->t, sum->total), tab_unit_decimals[c->t.unit]);
	jo_kfixed(&c->t.jo, "avg", tab_conv(&c->t, sum->avg), tab_unit_decimals[c->t.unit]);
	jo_kfixed(&c->t.jo, "median", tab_conv(&c->t, sum->median), tab_unit_decimals[c->t.unit]);
	jo_key(&c->t.jo, "device_activity");
	jo_bool(&c->t.jo, sum->device_rows > 0);
	for (size_t i = 0; i < 4; i++)
		jo_kfixed(&c->t.jo, split[i].key, tab_conv(&c->t, split[i].v), tab_unit_decimals[c->t.unit]);
	jo_key(&c->t.jo, "lost_records");   /* null: prof did not finish the run */
	if (rec->known)
		jo_uint(&c->t.jo, rec->lost);
	else
		jo_null(&c->t.jo);
	jo_key(&c->t.jo, "storage_limit_reached");
	jo_bool(&c->t.jo, rec->storage_limit);
	jo_key(&c->t.jo, "notices");
	jo_arr_begin(&c->t.jo);
	for (size_t i = 0; i < rec->n_notes; i++)
		jo_str(&c->t.jo, rec->notes[i]);
	jo_arr_end(&c->t.jo);
	jo_obj_end(&c->t.jo);
}

static void overview_lost(struct ctx *c, const struct stats_recording *rec)
{
	if (rec->going)
		tab_para(&c->t, "Lost records: ", "not known yet: the run is still going, and "
			 "PROFILER_OUTPUT/ holds a parse of what it recorded so far");
	else if (!rec->known)
		tab_para(&c->t, "Lost records: ", "unknown (prof did not finish this run; "
			 "'prof parse' counts what the streams say)");
	else if (rec->lost)
		tab_line(&c->t, "Lost records: %llu (%s)", (unsigned long long)rec->lost,
		      stats_recording_cause(rec));
	else
		tab_line(&c->t, "Lost records: none");
	for (size_t i = 0; i < rec->n_notes; i++)
		tab_para(&c->t, "Note: ", rec->notes[i]);
}

static void overview_text(struct ctx *c, const struct stats_step_summary *sum,
			  const struct stats_recording *rec)
{
	struct split_row split[4];
	char a[32], b[32], m[32];
	double base = sum->rows_total > 0 ? sum->rows_total : 1;
	int d = tab_unit_decimals[c->t.unit];
	overview_split(sum, split);
	tab_line(&c->t, "Run: %s", stats_name(c));
	if (!sum->steps) {
		/* not "average 0.000 ms": there is no step to average */
		tab_line(&c->t, "Steps: none were seen (mark each step with prof_tx.step(), or see "
		      "the notes)");
		overview_lost(c, rec);
		tab_line(&c->t, "%s", "");
		return;
	}
	tab_line(&c->t, "Steps: %zu   total %s %s   average %s %s   median %s %s", sum->steps,
	      stats_fmt_num(tab_conv(&c->t, sum->total), d, 16, a, sizeof(a)), tab_unit(&c->t),
	      stats_fmt_num(tab_conv(&c->t, sum->avg), d, 16, b, sizeof(b)), tab_unit(&c->t),
	      stats_fmt_num(tab_conv(&c->t, sum->median), d, 16, m, sizeof(m)), tab_unit(&c->t));
	overview_lost(c, rec);
	if (!sum->device_rows && sum->communication > 0) {
		/* host rows with torch.distributed's CPU collectives (gloo) */
		tab_line(&c->t, "Step time split (step_trace_time.csv, host: collectives of a CPU backend):");
		tab_line(&c->t, "  %-32s %14s %-2s %6.2f%%", "Communication",
		      stats_fmt_num(tab_conv(&c->t, sum->communication), d, 14, a, sizeof(a)), tab_unit(&c->t),
		      100.0 * sum->communication / base);
		tab_line(&c->t, "  %-32s %14s %-2s %6.2f%%", "Other (host)",
		      stats_fmt_num(tab_conv(&c->t, sum->rows_total - sum->communication), d, 14, a,
				    sizeof(a)), tab_unit(&c->t),
		      100.0 * (sum->rows_total - sum->communication) / base);
	} else if (!sum->device_rows)
		/* Host-only rows hold the whole step in Free: calling that
		 * "device idle" would mislead. */
		tab_line(&c->t, "Step time split: no device activity was recorded "
		      "(steps are host time only)");
	else
		tab_line(&c->t, "Step time split (step_trace_time.csv, all devices):");
	for (size_t i = 0; sum->device_rows && i < 4; i++)
		tab_line(&c->t, "  %-32s %14s %-2s %6.2f%%", split[i].name,
		      stats_fmt_num(tab_conv(&c->t, split[i].v), tab_unit_decimals[c->t.unit], 14, a, sizeof(a)),
		      tab_unit(&c->t), 100.0 * split[i].v / base);
	tab_line(&c->t, "%s", "");
}

/* Operators' self time in steps and outside every step (set-up, an
 * evaluation loop): the table above mixes them. */
static void overview_op_split(struct ctx *c, const struct stats_op_split *sp)
{
	if (!sp->known || c->where != STATS_WHERE_ALL)
		return;
	if (c->t.fmt == FMT_JSON) {
		static const char *const keys[] = { "in_steps", "outside_steps" };
		jo_key(&c->t.jo, "operators_split");
		jo_obj_begin(&c->t.jo);
		for (int i = 0; i < 2; i++) {
			jo_key(&c->t.jo, keys[i]);
			jo_obj_begin(&c->t.jo);
			jo_kint(&c->t.jo, "calls", (int64_t)sp->calls[i]);
			jo_kfixed(&c->t.jo, "self", tab_conv(&c->t, sp->self_us[i]), tab_unit_decimals[c->t.unit]);
			jo_obj_end(&c->t.jo);
		}
		jo_obj_end(&c->t.jo);
		return;
	}
	if (c->t.fmt != FMT_TABLE || sp->calls[0] + sp->calls[1] == 0)
		return;
	char a[32], b[32], text[400];
	int d = tab_unit_decimals[c->t.unit];
	double all = sp->self_us[0] + sp->self_us[1];
	int n = snprintf(text, sizeof text, "self time %s %s in steps (%" PRIu64 " calls), %s %s "
			 "outside every step (%" PRIu64 " calls, %.0f%%)",
			 stats_fmt_num(tab_conv(&c->t, sp->self_us[0]), d, 16, a, sizeof a), tab_unit(&c->t),
			 sp->calls[0], stats_fmt_num(tab_conv(&c->t, sp->self_us[1]), d, 16, b, sizeof b),
			 tab_unit(&c->t), sp->calls[1], all > 0 ? 100.0 * sp->self_us[1] / all : 0.0);
	if (sp->calls[1] && n > 0 && (size_t)n < sizeof text)
		snprintf(text + n, sizeof text - (size_t)n, ": set-up, evaluation, between "
			 "steps; `prof stats --view ops --where outside` lists them");
	tab_para(&c->t, "Operators: ", text);
	tab_line(&c->t, "%s", "");
}

static int finding_in(const struct stats_findings *f, const char *rule)
{
	for (size_t i = 0; f && i < f->n; i++)
		if (f->v[i].rule && rule && strcmp(f->v[i].rule, rule) == 0)
			return 1;
	return 0;
}

/* Findings under `title` (`page`: the report.html they come from); in the
 * table, those whose rule `said` has already are left out, and nothing is
 * shown when that leaves none. */
static void findings_part(struct ctx *c, const struct stats_findings *f, const char *key,
			  const char *title, const char *page, const struct stats_findings *said)
{
	if (c->t.fmt == FMT_JSON) {
		jo_key(&c->t.jo, key);
		jo_arr_begin(&c->t.jo);
		for (size_t i = 0; i < f->n; i++) {
			jo_obj_begin(&c->t.jo);
			jo_kstr(&c->t.jo, "rule", f->v[i].rule);
			jo_kfixed(&c->t.jo, "value", f->v[i].value, 1);
			jo_kstr(&c->t.jo, "text", f->v[i].text);
			jo_kstr(&c->t.jo, "advice", f->v[i].advice);
			jo_obj_end(&c->t.jo);
		}
		jo_arr_end(&c->t.jo);
		return;
	}
	size_t n = 0;
	for (size_t i = 0; i < f->n; i++)
		n += !finding_in(said, f->v[i].rule);
	if (c->t.fmt != FMT_TABLE || (said && !n))
		return;
	tab_line(&c->t, "%s (%s)%s", title, page, n ? ":" : ": none; no rule fired");
	for (size_t i = 0; i < f->n; i++) {
		char text[640];
		snprintf(text, sizeof text, "%s; try %s", f->v[i].text, f->v[i].advice);
		if (!finding_in(said, f->v[i].rule))
			tab_para(&c->t, "  ", text);
	}
	tab_line(&c->t, "%s", "");
}

/* report.html's findings (PROFILER_OUTPUT/findings.json; with
 * `cluster_only`, none) and, when several ranks were analysed, the
 * cluster's (cluster_analysis_output/findings.json) that add to them:
 * what stands out and what to try, last in the overview; nothing when
 * the parse wrote no report. */
static int overview_findings(struct ctx *c, int cluster_only)
{
	struct stats_findings run = { 0 }, cl = { 0 };
	char err[512], dir[4200];
	snprintf(dir, sizeof dir, "%s/%s", c->dir, CLUSTER_OUT_DIR);
	int rc = cluster_only ? STATS_ABSENT : stats_load_findings(c->outdir, &run, err, sizeof err);
	if (rc != STATS_ABSENT && rc)
		return load_failed(err);
	if (rc == 0)
		findings_part(c, &run, "findings", "Findings", "report.html", NULL);
	int crc = c->t.fmt == FMT_CSV ? STATS_ABSENT : stats_load_findings(dir, &cl, err, sizeof err);
	if (crc == 0)
		findings_part(c, &cl, "cluster_findings", "Cluster findings",
			      CLUSTER_OUT_DIR "/report.html", rc == 0 ? &run : NULL);
	stats_findings_free(&run);
	stats_findings_free(&cl);
	return crc != STATS_ABSENT && crc ? load_failed(err) : 0;
}

/* A process's "no steps were seen" in a run whose other processes
 * stepped (lib/run/notices.h). */
static void drop_moot_notes(struct stats_recording *rec, int run_has_steps)
{
	size_t k = 0;
	for (size_t i = 0; i < rec->n_notes; i++) {
		if (run_notice_moot(rec->notes[i], run_has_steps))
			free(rec->notes[i]);
		else
			rec->notes[k++] = rec->notes[i];
	}
	rec->n_notes = k;
}

static int emit_overview(struct ctx *c)
{
	char err[512];
	struct stats_steps s;
	struct stats_recording rec;
	int rc = stats_load_steps(c->outdir, &s, err, sizeof(err));
	if (rc != 0 && rc != STATS_ABSENT)
		return load_failed(err);
	struct stats_step_summary sum = { 0 };
	if (rc == 0) {
		int nomem = stats_steps_summarize(&s, &sum);
		stats_steps_free(&s);
		if (nomem)
			return load_failed("out of memory");
	}
	if (stats_load_recording(c->dir, &rec, err, sizeof(err)) < 0)
		return load_failed(err);
	drop_moot_notes(&rec, sum.steps > 0);
	if (c->t.fmt == FMT_CSV) {
		if (rc == STATS_ABSENT) {
			csv_header(&c->t.csv, "Metric,Value,Share(%)");
			fprintf(stderr, "prof stats: Steps: no data (step_trace_time.csv absent)\n");
			stats_free_recording(&rec);
			return 0;
		}
		overview_csv(c, &sum, &rec);
		stats_free_recording(&rec);
		return 0;
	}
	if (c->t.fmt == FMT_JSON) {
		jo_key(&c->t.jo, "overview");
		if (rc == STATS_ABSENT)
			jo_null(&c->t.jo);
		else
			overview_json(c, &sum, &rec);
	} else if (rc == STATS_ABSENT) {
		no_data(c, "overview", "Steps", "step_trace_time.csv");
	} else {
		overview_text(c, &sum, &rec);
	}
	stats_free_recording(&rec);
	int r0 = c->t.fmt == FMT_CSV ? 0 : emit_ranks(c, "ranks", 1);
	/* by self time: totals list the wrappers first (aten::conv2d holds
	 * aten::convolution holds ...); self time is where the time goes */
	enum stats_sort keep = c->sort;
	struct stats_op_split split;
	c->sort = STATS_SORT_SELF;
	c->split = &split;
	int r1 = emit_ops(c, 5, "top_operators");
	c->split = NULL;
	if (!r1)
		overview_op_split(c, &split);
	c->sort = STATS_SORT_TOTAL;
	int r2 = c->t.fmt == FMT_TABLE && !sum.device_rows ? 0 : emit_kernels(c, 5, "top_kernels");
	c->sort = keep;
	int r3 = overview_findings(c, 0);
	return r0 ? r0 : r1 ? r1 : r2 ? r2 : r3;
}

static int emit_op_calls(struct ctx *c)
{
	char err[512];
	struct stats_calls calls;
	int rc = stats_load_op_calls(c->outdir, c->op, c->where, &calls, err, sizeof(err));
	if (rc == STATS_ABSENT) {
		fprintf(stderr, "prof stats: --op: no data (operator_details.csv absent)\n");
		return 1;
	}
	if (rc != 0)
		return load_failed(err);
	if (calls.n == 0) {
		fprintf(stderr, "prof stats: --op: no operator named '%s'%s in operator_details.csv\n",
			c->op, where_title[c->where]);
		stats_calls_free(&calls);
		return 1;
	}
	const struct field f[] = {
		{ "#", "call", F_INT, 6 },
		{ "Total", "total", F_TIME, 10 },
		{ "Self", "self", F_TIME, 10 },
		{ "Device", "device", F_TIME, 10 },
		{ "Step", "step", F_STR, 6 },
		{ "Input Shapes", "input_shapes", F_STR, 0 },
	};
	char title[300];
	snprintf(title, sizeof(title), "%zu calls of %s%s (operator_details.csv)", calls.n, c->op,
		 where_title[c->where]);
	if (c->t.fmt == FMT_JSON)
		jo_kstr(&c->t.jo, "operator", c->op);
	tab_begin(&c->t, "calls", title, f, 6);
	for (size_t i = 0; i < calls.n; i++) {
		const struct stats_call *r = &calls.rows[i];
		struct val v[6] = { { NULL, (double)(i + 1) }, { NULL, r->total }, { NULL, r->self },
				    { NULL, r->device }, { r->step, 0 }, { r->shapes, 0 } };
		tab_row(&c->t, f, 6, v);
	}
	tab_end(&c->t);
	stats_calls_free(&calls);
	return 0;
}

/* ---- options ---- */

enum { O_VIEW = 256, O_SORT, O_TOP, O_UNIT, O_OP, O_FORMAT, O_WHERE, O_PEAK };

static int parse_top(const char *arg, long *top)
{
	char *end;
	long v = strtol(arg, &end, 10);
	if (!*arg || *end || v < 0 || v > 1000000000) {
		fprintf(stderr, "prof stats: --top: '%s' is not a whole number >= 0\n", arg);
		return 2;
	}
	*top = v;
	return 0;
}

/* One option into the struct ctx: 0, or the exit status. */
static int stats_option(void *ctx, int ch)
{
	struct ctx *c = ctx;
	int k;
	switch (ch) {
	case O_VIEW:
		if ((k = tab_pick("prof stats", "--view", optarg, view_names)) < 0)
			return 2;
		c->view = (enum view)k;
		return 0;
	case O_SORT:
		if ((k = tab_pick("prof stats", "--sort", optarg, sort_names)) < 0)
			return 2;
		c->sort = (enum stats_sort)k;
		return 0;
	case O_UNIT:
		if ((k = tab_pick("prof stats", "--unit", optarg, tab_unit_names)) < 0)
			return 2;
		c->t.unit = k;
		return 0;
	case O_FORMAT:
		if ((k = tab_pick("prof stats", "--format", optarg, tab_fmt_names)) < 0)
			return 2;
		c->t.fmt = (enum tab_fmt)k;
		return 0;
	case O_WHERE:
		if ((k = tab_pick("prof stats", "--where", optarg, where_names)) < 0)
			return 2;
		c->where = (enum stats_where)k;
		return 0;
	case O_TOP:
		return parse_top(optarg, &c->top);
	case O_OP:
		c->op = optarg;
		return 0;
	case O_PEAK:
		if (stats_parse_num(optarg, &c->peak_tflops) != 0 || !(c->peak_tflops > 0)) {
			fprintf(stderr, "prof stats: --peak-tflops: '%s' is not a number above 0 "
				"(the device's peak TFLOP/s, e.g. 989 for an H100's dense BF16)\n",
				optarg);
			return 2;
		}
		return 0;
	}
	return 2;   /* not in longopts */
}

/* Options and the run directory: 0 to go on, -1 after --help, else the
 * exit status. */
static int stats_args(int argc, char **argv, struct ctx *c)
{
	static const struct option longopts[] = {
		{ "view", required_argument, NULL, O_VIEW },
		{ "peak-tflops", required_argument, NULL, O_PEAK },
		{ "sort", required_argument, NULL, O_SORT },
		{ "top", required_argument, NULL, O_TOP },
		{ "unit", required_argument, NULL, O_UNIT },
		{ "op", required_argument, NULL, O_OP },
		{ "format", required_argument, NULL, O_FORMAT },
		{ "where", required_argument, NULL, O_WHERE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int rc = cmd_options("stats", argc, argv, longopts, stats_usage, stats_option, c);
	if (rc)
		return rc;
	if (argc - optind != 1) {
		fprintf(stderr, "prof stats: %s; see 'prof stats --help'\n",
			argc - optind < 1 ? "a run directory is needed" : "one run directory only");
		return 2;
	}
	if (c->t.fmt == FMT_CSV && c->view == V_ALL && !c->op) {
		fprintf(stderr, "prof stats: --format csv writes one view; --view all needs "
			"--format table or json\n");
		return 2;
	}
	c->dir = argv[optind];
	return 0;
}

/* Whether `dir` has an analysis of several ranks. */
static int has_cluster_analysis(const char *dir)
{
	char p[4200];
	struct stat sb;
	snprintf(p, sizeof p, "%s/%s/cluster_step_trace_time.csv", dir, CLUSTER_OUT_DIR);
	return stat(p, &sb) == 0;
}

/* DIR holds runs rather than being one (./prof_data after a few `prof
 * run`s, or a cluster's ranks): its only run is taken; several that
 * `prof parse` analysed as ranks show their ranks (c->cluster) in the
 * views that have them; else they are named for the user to pick. 0 with
 * c->dir the run (in `picked`) or the cluster, 1 when DIR holds none,
 * else the exit status. */
static int stats_pick_run(struct ctx *c, char *picked, size_t len)
{
	char **runs = NULL;
	size_t n = 0;
	if (cluster_find_runs(c->dir, &runs, &n) != 0 || n == 0) {
		free(runs);
		return 1;
	}
	int rc = 0, analysed = n > 1 && has_cluster_analysis(c->dir);
	if (n == 1) {
		snprintf(picked, len, "%s", runs[0]);
		c->dir = picked;
	} else if (analysed && !c->op &&
		   (c->view == V_OVERVIEW || c->view == V_RANKS || c->view == V_ALL)) {
		snprintf(picked, len, "%s", runs[0]);
		c->a_run = picked;
		c->cluster = 1;
	} else if (c->archive) {   /* its runs' paths are gone at the end */
		fprintf(stderr, "prof stats: %s holds %zu runs: extract it and name one\n",
			c->archive, n);
		rc = 2;
	} else {
		cmd_list_runs(stderr, "prof stats", c->dir, runs, n);
		fprintf(stderr, "prof diff BASE NEW compares two\n");
		if (analysed)
			fprintf(stderr, "`prof stats %s` shows them as the ranks `prof parse` "
				"analysed\n", c->dir);
		rc = 2;
	}
	cluster_free_runs(runs, n);
	return rc;
}

/* An archive (prof run --archive's, a CI artefact) is read from a
 * temporary copy, removed at the end (stats_close): 0, or the exit
 * status. */
static int stats_unpack(struct ctx *c)
{
	struct stat sb;
	if (!arc_is_archive_name(c->dir) || stat(c->dir, &sb) != 0 || !S_ISREG(sb.st_mode))
		return 0;
	c->archive = c->dir;
	if (cmd_unpack_temp("prof stats", c->archive, &c->tmp, &c->unpacked) != 0)
		return 1;
	c->dir = c->unpacked;
	return 0;
}

static void stats_close(struct ctx *c)
{
	if (c->tmp)
		cmd_remove_tree(c->tmp);
	free(c->tmp);
	free(c->unpacked);
}

/* The run must have been parsed: its PROFILER_OUTPUT/parse.done. */
static int stats_check_run(struct ctx *c, char *outdir, size_t len, char *picked, size_t plen)
{
	struct stat sb;
	char done[4200];
	if (stat(c->dir, &sb) != 0) {
		fprintf(stderr, "prof stats: %s: not a run directory: %s\n", c->dir,
			strerror(errno));
		return 1;
	}
	if (!S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "prof stats: %s: not a run directory (nor a .tar.gz, .tgz, "
			".tar.zst or .zip archive of one)\n", c->dir);
		return 1;
	}
	snprintf(done, sizeof done, "%s/raw", c->dir);
	snprintf(outdir, len, "%s/PROFILER_OUTPUT", c->dir);
	if (stat(outdir, &sb) != 0 && stat(done, &sb) != 0) {
		int rc = stats_pick_run(c, picked, plen);
		if (rc == 1)
			fprintf(stderr, "prof stats: %s: not a run directory (no raw/, no "
				"PROFILER_OUTPUT/), nor one that holds runs\n", stats_name(c));
		if (rc || c->cluster)
			return rc;
	}
	snprintf(outdir, len, "%s/PROFILER_OUTPUT", c->dir);
	snprintf(done, sizeof(done), "%s/parse.done", outdir);
	if (stat(done, &sb) != 0 && c->archive) {
		fprintf(stderr, "prof stats: %s holds a run that has not been parsed (no "
			"PROFILER_OUTPUT/parse.done); 'prof parse %s' extracts and parses it: "
			"then 'prof stats' the directory it names\n", c->archive, c->archive);
		return 1;
	}
	if (stat(done, &sb) != 0) {
		fprintf(stderr, "prof stats: %s has not been parsed (no PROFILER_OUTPUT/parse.done);"
			" run 'prof parse %s' first\n", c->dir, c->dir);
		return 1;
	}
	c->outdir = outdir;
	return 0;
}

/* A cluster's overview: its ranks, the slow ones, its findings, and how
 * to see one rank's. */
static int emit_cluster(struct ctx *c)
{
	if (c->t.fmt == FMT_TABLE && c->view != V_RANKS) {
		tab_line(&c->t, "Cluster: %s", stats_name(c));
		tab_line(&c->t, "%s", "");
	}
	int rc = emit_ranks(c, "ranks", 0);
	if (rc || c->view == V_RANKS || c->t.fmt == FMT_CSV)
		return rc;
	rc = overview_findings(c, 1);
	if (!rc && c->t.fmt == FMT_TABLE)
		tab_para(&c->t, "One rank's views: ", "name its run (`--view ranks --format csv` "
			 "lists each rank's)");
	return rc;
}

static int stats_emit_views(struct ctx *c)
{
	int rc = 0, all = c->view == V_ALL;
	if (c->cluster)
		return emit_cluster(c);
	if (c->op)
		return emit_op_calls(c);
	if (!rc && (all || c->view == V_OVERVIEW))
		rc = emit_overview(c);
	if (!rc && (all || c->view == V_STEPS))
		rc = emit_steps(c, "steps");
	if (!rc && (all || c->view == V_OPS))
		rc = emit_ops(c, c->top, "operators");
	if (!rc && (all || c->view == V_KERNELS))
		rc = emit_kernels(c, c->top, "kernels");
	if (!rc && (all || c->view == V_API))
		rc = emit_api(c, c->top, "api");
	if (!rc && (all || c->view == V_MEMORY))
		rc = emit_memory(c, c->top, "memory");
	if (!rc && (all || c->view == V_RANGES))
		rc = emit_ranges(c, c->top, "ranges", 0);
	if (!rc && (all || c->view == V_MODULES))
		rc = emit_ranges(c, c->top, "modules", 1);
	if (!rc && (all || c->view == V_FLOPS))
		rc = emit_flops(c, "flops");
	if (!rc && c->view == V_RANKS)   /* all: the overview has them */
		rc = emit_ranks(c, "ranks", 0);
	return rc;
}

int cmd_stats(int argc, char **argv)
{
	struct ctx c = { .view = V_OVERVIEW, .sort = STATS_SORT_TOTAL, .top = 15,
			 .t = { .unit = 1, .fmt = FMT_TABLE, .out = stdout,
				.width = tab_terminal_width() } };
	char outdir[4096], picked[4096];
	int rc = stats_args(argc, argv, &c);
	if (rc)
		return rc < 0 ? 0 : rc;
	if ((rc = stats_unpack(&c)) != 0 ||
	    (rc = stats_check_run(&c, outdir, sizeof outdir, picked, sizeof picked)) != 0) {
		stats_close(&c);
		return rc;
	}
	if (c.t.fmt == FMT_CSV)
		csv_init(&c.t.csv, stdout);
	if (c.t.fmt == FMT_JSON) {
		jo_init_file(&c.t.jo, stdout, 2);
		jo_obj_begin(&c.t.jo);
		jo_kstr(&c.t.jo, "run", stats_name(&c));
		jo_kstr(&c.t.jo, "unit", tab_unit(&c.t));
	}
	rc = stats_emit_views(&c);
	if (c.t.fmt == FMT_JSON) {
		jo_obj_end(&c.t.jo);
		if (jo_finish(&c.t.jo) != 0)
			c.t.error = 1;
		putchar('\n');
	}
	if (c.t.fmt == FMT_CSV && csv_finish(&c.t.csv) != 0)
		c.t.error = 1;
	if (!rc && c.t.error)
		rc = 1;
	stats_close(&c);
	return rc;
}
