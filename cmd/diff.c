/*
 * prof diff [options] BASE NEW: two runs compared (step time and its
 * split, operators, kernels, user ranges, peak memory, lost records,
 * findings), and with --fail-above a gate for CI on the median step time.
 * BASE and NEW are run directories, archives of one, or cluster
 * directories; those not parsed yet are parsed first. lib/stats/stats_diff.h loads and matches;
 * this file prints.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/archive.h"
#include "cluster/cluster.h"
#include "cmds.h"
#include "options.h"
#include "runs.h"
#include "common/fsutil.h"
#include "pipeline/parse.h"
#include "stats/stats_diff.h"
#include "table.h"

#define DIFF_FAILED 1        /* NEW slower than --fail-above allows */
#define DIFF_USAGE 2
#define DIFF_NO_STEPS 3      /* --fail-above, and no step time to judge */
#define DIFF_UNREADABLE 4

static void diff_usage(FILE *out)
{
	fprintf(out,
		"usage: prof diff [options] BASE NEW\n\n"
		"Compares two runs: median and mean step time and the step time split\n"
		"(step_trace_time.csv), each rank's mean step when both are clusters (or\n"
		"multi-rank runs) `prof parse` analysed, operators (operator_details.csv),\n"
		"device tasks (op_statistic.csv) and user ranges (range_statistic.csv) by\n"
		"name, with calls, total and self time, ordered by the size of the change;\n"
		"names found in one run only are marked new or gone; peak memory and lost\n"
		"records; report.html's findings (findings.json), new, gone or in both.\n"
		"Changes are NEW against BASE, in percent of BASE.\n\n"
		"BASE and NEW are run directories, archives of one (.tar.gz, .tgz,\n"
		".tar.zst, .zip, as `prof run --archive` writes; extracted into a\n"
		"temporary directory and removed afterwards) or cluster directories (the\n"
		"ranks taken together: times summed, a step's time its slowest rank's;\n"
		"a directory of runs made one after another, naming no rank, is no\n"
		"cluster: its runs are listed to pick one).\n"
		"A run not parsed yet is parsed first (said on standard error).\n"
		"Runs that compare badly (other programs, devices or numbers of ranks,\n"
		"step counts more than %.0fx apart, no steps) are said first (\"Not\n"
		"comparable\"). The same program with other arguments is a note that\n"
		"names the words that differ (\"--hidden 64\", \"--hidden 512\"), not a\n"
		"doubt: two model sizes compared is a fair question. A Python program\n"
		"is the interpreter and its script (or -m MODULE, -c CODE).\n\n"
		"Options:\n"
		"  --fail-above PCT  exit 1 when NEW's median step time exceeds BASE's by\n"
		"                    more than PCT percent (a CI gate)\n"
		"  --top N           rows per table (default 10; 0: all)\n"
		"  --unit U          time unit: s, ms (default), us, ns\n"
		"  --format F        table (default), csv or json\n"
		"  -h, --help        show this help\n\n"
		"The last line of the table (standard error with csv and json) says the\n"
		"verdict in words.\n\n"
		"Exit status:\n"
		"  0  compared (with --fail-above: NEW within the limit)\n"
		"  1  --fail-above: NEW's median step time is more than PCT%% above BASE's\n"
		"  2  usage error\n"
		"  3  --fail-above, but BASE or NEW has no steps: nothing to judge\n"
		"  4  BASE or NEW cannot be read (not a run, a damaged archive or CSV,\n"
		"     a parse that failed)\n", DIFF_STEPS_RATIO);
}

struct diff_opts {
	struct tab t;
	long top;
	int gate;                  /* --fail-above given */
	double fail_above;
	const char *arg[2];        /* BASE, NEW as given */
};

/* One side as found on disk. */
struct input {
	const char *arg;
	char *tmp;                 /* the temporary directory an archive went to */
	char *dir;                 /* the run or cluster directory */
	char **runs;               /* the run directories read */
	size_t nruns;
	int cluster;
};

static const char *const who[2] = { "BASE", "NEW" };

static int is_dir(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int has(const char *dir, const char *name)
{
	char *p = fs_join(dir, name);
	struct stat sb;
	int r = p && stat(p, &sb) == 0;
	free(p);
	return r;
}

/* An archive is extracted into a temporary directory: 0, or the status. */
static int unpack(struct input *in)
{
	return cmd_unpack_temp("prof diff", in->arg, &in->tmp, &in->dir) ? DIFF_UNREADABLE : 0;
}

/* Every run of the directory parsed? */
static int all_parsed(char **runs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!has(runs[i], "PROFILER_OUTPUT/parse.done"))
			return 0;
	return 1;
}

/* BASE or NEW: unpacked, found (a run or a cluster), parsed when not yet.
 * 0, or the exit status (said). */
static int resolve(struct input *in)
{
	struct stat sb;
	if (arc_is_archive_name(in->arg) && stat(in->arg, &sb) == 0 && S_ISREG(sb.st_mode)) {
		int rc = unpack(in);
		if (rc)
			return rc;
	} else if (!(in->dir = strdup(in->arg))) {
		return DIFF_UNREADABLE;
	}
	if (!is_dir(in->dir)) {
		fprintf(stderr, "prof diff: %s: %s (a run directory, a cluster directory or a "
			".tar.gz, .tgz, .tar.zst or .zip archive of one is needed)\n", in->arg,
			stat(in->dir, &sb) != 0 ? strerror(errno) : "not a directory");
		return DIFF_UNREADABLE;
	}
	int single = has(in->dir, "raw") || has(in->dir, "PROFILER_OUTPUT");
	if (!single && cluster_find_runs(in->dir, &in->runs, &in->nruns) == 0 && in->nruns) {
		in->cluster = 1;
		if (cluster_runs_apart(in->runs, in->nruns)) {
			/* runs made one after another, not a job's ranks */
			cmd_list_runs(stderr, "prof diff", in->arg, in->runs, in->nruns);
			fprintf(stderr, "prof diff: they ran one after another, naming no rank: "
				"not the ranks of one job, which prof diff compares as a whole\n");
			return DIFF_UNREADABLE;
		}
	} else {
		if (in->runs)
			cluster_free_runs(in->runs, in->nruns);
		in->nruns = 1;
		in->runs = malloc(sizeof(*in->runs));
		if (!in->runs || !(in->runs[0] = strdup(in->dir)))
			return DIFF_UNREADABLE;
	}
	if (all_parsed(in->runs, in->nruns))
		return 0;
	if (!in->cluster && !has(in->dir, "raw")) {
		fprintf(stderr, "prof diff: %s: not a run directory (no raw/ and no "
			"PROFILER_OUTPUT/parse.done) and no run directories inside\n", in->arg);
		return DIFF_UNREADABLE;
	}
	fprintf(stderr, "prof diff: %s was not parsed; parsing it first\n", in->arg);
	int st = parse_for_reading(in->dir);
	if (st == PARSE_FAILED || !all_parsed(in->runs, in->nruns)) {
		fprintf(stderr, "prof diff: %s: the parse failed (see above)\n", in->arg);
		return DIFF_UNREADABLE;
	}
	if (st == PARSE_DAMAGED)
		fprintf(stderr, "prof diff: %s: some raw data was damaged and skipped\n", in->arg);
	return 0;
}

static void input_free(struct input *in)
{
	if (in->runs)
		cluster_free_runs(in->runs, in->nruns);
	if (in->tmp)
		cmd_remove_tree(in->tmp);
	free(in->tmp);
	free(in->dir);
}

/* ---- printing ---- */

static const char *status_name(enum diff_status s)
{
	return s == DIFF_APPEARED ? "new" : s == DIFF_VANISHED ? "gone" : "both";
}

/* CSV: one long table, a row per (section, name, metric). */
static void csv_metric(struct tab *t, const char *section, const char *name,
		       const char *status, const char *metric, double b, double n, int time)
{
	char m[64];
	snprintf(m, sizeof m, time ? "%s(%s)" : "%s", metric, tab_unit(t));
	csv_str(&t->csv, section);
	csv_str(&t->csv, name);
	csv_str(&t->csv, status);
	csv_str(&t->csv, m);
	int d = time ? tab_unit_decimals[t->unit] : strcmp(metric, "MB") == 0 ? 3 : 0;
	double k = time ? tab_conv(t, 1) : 1, pct = diff_pct(b, n);
	csv_fixed(&t->csv, b * k, d);
	csv_fixed(&t->csv, n * k, d);
	csv_fixed(&t->csv, (n - b) * k, d);
	if (isnan(pct))
		csv_str(&t->csv, NULL);
	else
		csv_fixed(&t->csv, pct, 2);
	csv_end_row(&t->csv);
}

/* Step time: median, mean and the split per step. */
static void print_steps(struct tab *t, const struct diff_side *s)
{
	const struct stats_step_summary *b = &s[0].steps, *n = &s[1].steps;
	double nb = b->steps ? (double)b->steps : 1, nn = n->steps ? (double)n->steps : 1;
	struct { const char *name, *key; double b, n; } r[] = {
		{ "Median step", "median", b->median, n->median },
		{ "Mean step", "mean", b->avg, n->avg },
		{ "Computing", "computing", b->computing / nb, n->computing / nn },
		{ "Communication (not overlapped)", "communication_not_overlapped",
		  b->communication / nb, n->communication / nn },
		{ "Free (device idle)", "free", b->free_time / nb, n->free_time / nn },
		{ "Other (preparing)", "other", b->other / nb, n->other / nn },
	};
	size_t rows = b->device_rows || n->device_rows ? 6 : 2;
	if (!b->steps || !n->steps)
		rows = 0;
	if (t->fmt == FMT_CSV) {
		csv_metric(t, "steps", "Steps", "", "count", (double)b->steps, (double)n->steps, 0);
		for (size_t i = 0; i < rows; i++)
			csv_metric(t, "steps", r[i].name, "", i < 2 ? "time" : "time per step", r[i].b,
				   r[i].n, 1);
		return;
	}
	const struct field f[] = {
		{ "Step time", "name", F_STR, 0 },
		{ "BASE", "base", F_TIME, 12 },
		{ "NEW", "new", F_TIME, 12 },
		{ "Change", "change", F_TIME, 12 },
		{ "Change", "change_pct", F_CHG, 9 },
	};
	char title[200];
	snprintf(title, sizeof title, "Step time (step_trace_time.csv; BASE %zu steps, NEW %zu "
		 "steps%s)", b->steps, n->steps, rows > 2 ? "; the split per step" : "");
	tab_begin(t, "step_time", title, f, 5);
	for (size_t i = 0; i < rows; i++) {
		struct val v[5] = { { r[i].name, 0 }, { NULL, r[i].b }, { NULL, r[i].n },
				    { NULL, r[i].n - r[i].b }, { NULL, diff_pct(r[i].b, r[i].n) } };
		v[0].s = t->fmt == FMT_JSON ? r[i].key : r[i].name;
		tab_row(t, f, 5, v);
	}
	tab_end(t);
	if (t->fmt == FMT_TABLE && rows == 2)
		tab_line(t, "(no device activity in either run: steps are host time only)\n");
}

/* A rank's mean step (µs); NaN for a rank without steps. */
static double rank_step(const struct cluster_rank *r)
{
	double m[CLUSTER_MEAN_N];
	cluster_rank_mean(r, m);
	return r->nsteps ? m[0] + m[1] + m[2] + m[3] : NAN;
}

/* Each rank's mean step in both, ranks matched by number (one only in
 * BASE or NEW shows "-" on the other side). */
static void print_ranks_of(struct tab *t, const struct cluster *c)
{
	static const struct field f[] = {
		{ "Rank", "rank", F_INT, 6 },
		{ "BASE", "base", F_TIME, 18 },
		{ "NEW", "new", F_TIME, 18 },
		{ "Change", "change", F_TIME, 18 },
		{ "Change", "change_pct", F_CHG, 0 },
	};
	if (t->fmt != FMT_CSV)
		tab_begin(t, "ranks", "Each rank's mean step (cluster_analysis_output/)", f, 5);
	for (size_t i = 0, j = 0; i < c[0].n || j < c[1].n;) {
		const struct cluster_rank *b = i < c[0].n ? &c[0].ranks[i] : NULL;
		const struct cluster_rank *n = j < c[1].n ? &c[1].ranks[j] : NULL;
		if (b && n && b->rank != n->rank) {   /* both sorted: the smaller goes alone */
			if (b->rank < n->rank)
				n = NULL;
			else
				b = NULL;
		}
		int rank = b ? b->rank : n->rank;
		double vb = b ? rank_step(b) : NAN, vn = n ? rank_step(n) : NAN;
		i += b != NULL;
		j += n != NULL;
		if (t->fmt == FMT_CSV) {
			char name[32];
			snprintf(name, sizeof name, "rank %d", rank);
			csv_metric(t, "ranks", name, !b ? "new" : !n ? "gone" : "both",
				   "mean step", vb, vn, 1);
			continue;
		}
		struct val v[5] = { { NULL, rank }, { NULL, vb }, { NULL, vn }, { NULL, vn - vb },
				    { NULL, diff_pct(vb, vn) } };
		tab_row(t, f, 5, v);
	}
	if (t->fmt != FMT_CSV)
		tab_end(t);
}

/* Which rank got slower, when both are clusters (or multi-rank runs) that
 * `prof parse` analysed; nothing otherwise. */
static void print_ranks(struct tab *t, const struct input *in)
{
	struct cluster c[2];
	int both = cluster_load(in[0].dir, &c[0]) == 0;
	both = cluster_load(in[1].dir, &c[1]) == 0 && both;
	if (both)
		print_ranks_of(t, c);
	cluster_free(&c[0]);
	cluster_free(&c[1]);
}

struct named {
	const char *key, *section, *what, *source;
	int self;                  /* has self time */
};

static void csv_named(struct tab *t, const struct named *w, const struct diff_row *r)
{
	const char *st = status_name(r->status);
	csv_metric(t, w->section, r->name, st, "calls", (double)r->calls[0], (double)r->calls[1], 0);
	csv_metric(t, w->section, r->name, st, "total", r->total[0], r->total[1], 1);
	if (w->self)
		csv_metric(t, w->section, r->name, st, "self", r->self[0], r->self[1], 1);
}

/* One by-name table. */
static int print_named(struct tab *t, long top, const struct named *w,
		       const struct stats_agg *b, const struct stats_agg *n, int have)
{
	struct diff_rows d;
	if (diff_rows_build(b, n, 0, w->self ? 1 : -1, w->self, &d) != 0) {
		fprintf(stderr, "prof diff: out of memory\n");
		return DIFF_UNREADABLE;
	}
	size_t shown = top > 0 && (size_t)top < d.n ? (size_t)top : d.n;
	if (t->fmt == FMT_CSV) {
		for (size_t i = 0; i < shown; i++)
			csv_named(t, w, &d.rows[i]);
		diff_rows_free(&d);
		return 0;
	}
	int table = t->fmt == FMT_TABLE, self = w->self ? 9 : -1;
	const struct field f[] = {
		{ "Name", "name", F_STR, 0 },
		{ "Status", "status", F_STR, -1 },
		{ "Calls", "calls_base", F_INT, 6 },
		{ "→New", "calls_new", F_INT, 6 },
		{ "Self", "self_base", F_TIME, self },
		{ "→New", "self_new", F_TIME, self },
		{ "Total", "total_base", F_TIME, 9 },
		{ "→New", "total_new", F_TIME, 9 },
		{ "Change", "change", F_TIME, -1 },
		{ "Change", "change_pct", table ? F_RSTR : F_CHG, 7 },
	};
	char title[300];
	snprintf(title, sizeof title, "%s by %s time change: %zu names, %zu new, %zu gone (%s)",
		 w->what, w->self ? "self" : "total", d.n, d.appeared, d.vanished, w->source);
	if (t->fmt == FMT_TABLE && d.n == 0) {
		tab_line(t, "%s: none in either run (%s)", w->what, have ? w->source
			 : "no such file");
		tab_line(t, "%s", "");
		diff_rows_free(&d);
		return 0;
	}
	tab_begin(t, w->key, title, f, 10);
	for (size_t i = 0; i < shown; i++) {
		const struct diff_row *r = &d.rows[i];
		double by = w->self ? r->self[0] : r->total[0];
		double pct = diff_pct(by, w->self ? r->self[1] : r->total[1]);
		char chg[32];
		if (r->status != DIFF_BOTH)
			snprintf(chg, sizeof chg, "%s", status_name(r->status));
		else if (isnan(pct))
			snprintf(chg, sizeof chg, "+inf");
		else if (fabs(pct) < 0.05)
			snprintf(chg, sizeof chg, "0.0%%");
		else
			snprintf(chg, sizeof chg, fabs(pct) < 1000 ? "%+.1f%%" : "%+.0f%%", pct);
		struct val v[10] = {
			{ r->name, 0 }, { status_name(r->status), 0 },
			{ NULL, (double)r->calls[0] }, { NULL, (double)r->calls[1] },
			{ NULL, w->self ? r->self[0] : NAN }, { NULL, w->self ? r->self[1] : NAN },
			{ NULL, r->total[0] }, { NULL, r->total[1] }, { NULL, r->change },
			{ chg, r->status == DIFF_BOTH ? pct : NAN },
		};
		tab_row(t, f, 10, v);
	}
	tab_end(t);
	diff_rows_free(&d);
	return 0;
}

static void lost_text(const struct diff_side *s, char *out, size_t n)
{
	if (!s->lost_known)
		snprintf(out, n, "unknown (prof did not finish the run)");
	else if (s->lost)
		snprintf(out, n, "%llu", (unsigned long long)s->lost);
	else
		snprintf(out, n, "none");
}

/* Peak memory and lost records. */
static void print_recording(struct tab *t, const struct diff_side *s)
{
	if (t->fmt == FMT_CSV) {
		if (!isnan(s[0].peak_mb) || !isnan(s[1].peak_mb))
			csv_metric(t, "memory", "Peak memory", "", "MB", s[0].peak_mb, s[1].peak_mb, 0);
		if (s[0].lost_known && s[1].lost_known)
			csv_metric(t, "recording", "Lost records", "", "count", (double)s[0].lost,
				   (double)s[1].lost, 0);
		return;
	}
	if (t->fmt == FMT_JSON) {
		jo_key(&t->jo, "peak_memory_mb");
		jo_obj_begin(&t->jo);
		for (int i = 0; i < 2; i++) {
			jo_key(&t->jo, i ? "new" : "base");
			if (isnan(s[i].peak_mb))
				jo_null(&t->jo);
			else
				jo_fixed(&t->jo, s[i].peak_mb, 3);
		}
		jo_obj_end(&t->jo);
		jo_key(&t->jo, "lost_records");
		jo_obj_begin(&t->jo);
		for (int i = 0; i < 2; i++) {
			jo_key(&t->jo, i ? "new" : "base");
			if (s[i].lost_known)
				jo_uint(&t->jo, s[i].lost);
			else
				jo_null(&t->jo);
		}
		jo_obj_end(&t->jo);
		return;
	}
	if (isnan(s[0].peak_mb) && isnan(s[1].peak_mb)) {
		tab_line(t, "Peak memory: not recorded in either run");
	} else {
		char b[32], n[32], pct[32] = "";
		double p = diff_pct(s[0].peak_mb, s[1].peak_mb);
		if (!isnan(s[0].peak_mb) && !isnan(s[1].peak_mb) && !isnan(p))
			snprintf(pct, sizeof pct, " (%+.1f%%)", p);
		snprintf(b, sizeof b, isnan(s[0].peak_mb) ? "-" : "%.3f MB", s[0].peak_mb);
		snprintf(n, sizeof n, isnan(s[1].peak_mb) ? "-" : "%.3f MB", s[1].peak_mb);
		tab_line(t, "Peak memory (memory_record.csv): BASE %s, NEW %s%s", b, n, pct);
	}
	char lb[64], ln[64];
	lost_text(&s[0], lb, sizeof lb);
	lost_text(&s[1], ln, sizeof ln);
	tab_line(t, "Lost records: BASE %s, NEW %s", lb, ln);
	tab_line(t, "%s", "");
}

static int has_rule(const struct stats_findings *f, const char *rule)
{
	for (size_t i = 0; i < f->n; i++)
		if (strcmp(f->v[i].rule, rule) == 0)
			return 1;
	return 0;
}

/* report.html's findings of each run: those NEW has that BASE had not
 * come first, then those gone, then those in both. */
static void print_findings(struct tab *t, const struct diff_side *s)
{
	if (t->fmt == FMT_CSV)
		return;
	if (t->fmt == FMT_JSON) {
		jo_key(&t->jo, "findings");
		jo_obj_begin(&t->jo);
		for (int i = 0; i < 2; i++) {
			jo_key(&t->jo, i ? "new" : "base");
			if (!s[i].have_findings) {
				jo_null(&t->jo);
				continue;
			}
			jo_arr_begin(&t->jo);
			for (size_t k = 0; k < s[i].findings.n; k++)
				jo_str(&t->jo, s[i].findings.v[k].rule);
			jo_arr_end(&t->jo);
		}
		jo_obj_end(&t->jo);
		return;
	}
	if (!s[0].have_findings || !s[1].have_findings) {
		char why[160];
		snprintf(why, sizeof why, "not compared: %s has no findings.json (--no-report or "
			 "an older prof)", !s[0].have_findings ? "BASE" : "NEW");
		tab_para(t, "Findings: ", why);
		tab_line(t, "%s", "");
		return;
	}
	tab_line(t, "Findings (report.html): BASE %zu, NEW %zu", s[0].findings.n, s[1].findings.n);
	static const char *const tag[] = { "new in NEW", "gone", "in both" };
	for (int pass = 0; pass < 3; pass++) {
		const struct stats_findings *f = &s[pass == 1 ? 0 : 1].findings;
		for (size_t k = 0; k < f->n; k++) {
			int other = has_rule(&s[pass == 1 ? 1 : 0].findings, f->v[k].rule);
			if ((pass == 2) == other)
				tab_line(t, "  %-11s %s", tag[pass], f->v[k].text);
		}
	}
	tab_line(t, "%s", "");
}

static void print_sides(struct tab *t, const struct input *in, const struct diff_side *s)
{
	for (int i = 0; i < 2; i++) {
		char line[600];
		snprintf(line, sizeof line, "%s%s, %zu steps%s%s", in[i].arg,
			 in[i].cluster ? " (a cluster)" : "", s[i].steps.steps,
			 s[i].command ? ": " : "", s[i].command ? s[i].command : "");
		if (t->fmt == FMT_TABLE) {
			tab_para(t, i ? "NEW:  " : "BASE: ", line);
			continue;
		}
		jo_key(&t->jo, i ? "new" : "base");
		jo_obj_begin(&t->jo);
		jo_kstr(&t->jo, "path", in[i].arg);
		jo_kstr(&t->jo, "dir", in[i].tmp ? NULL : in[i].dir);
		jo_key(&t->jo, "cluster");
		jo_bool(&t->jo, in[i].cluster);
		jo_kuint(&t->jo, "runs", s[i].runs);
		jo_kstr(&t->jo, "command", s[i].command);
		jo_kstr(&t->jo, "devices", s[i].devices);
		jo_kuint(&t->jo, "steps", s[i].steps.steps);
		jo_obj_end(&t->jo);
	}
}

/* The same program with other arguments: said, not held against the
 * comparison (two model sizes compared is a question worth asking). */
static void print_args(struct tab *t, const struct diff_check *ck)
{
	if (t->fmt == FMT_JSON) {
		jo_key(&t->jo, "arguments_differ");
		if (!ck->args_differ) {
			jo_null(&t->jo);
			return;
		}
		jo_obj_begin(&t->jo);
		jo_kstr(&t->jo, "base", ck->args[0]);
		jo_kstr(&t->jo, "new", ck->args[1]);
		jo_obj_end(&t->jo);
		return;
	}
	if (!ck->args_differ)
		return;
	char side[2][280], text[720];
	for (int i = 0; i < 2; i++)
		snprintf(side[i], sizeof side[i], "%s%s%s", *ck->args[i] ? "`" : "",
			 *ck->args[i] ? ck->args[i] : "(none)", *ck->args[i] ? "`" : "");
	snprintf(text, sizeof text, "the same program with other arguments: BASE %s, NEW %s",
		 side[0], side[1]);
	if (t->fmt == FMT_CSV)
		fprintf(stderr, "prof diff: note: %s\n", text);
	else
		tab_para(t, "Note: ", text);
}

static void print_notes(struct tab *t, const struct diff_check *ck)
{
	if (t->fmt == FMT_JSON) {
		jo_key(&t->jo, "comparable");
		jo_bool(&t->jo, ck->n == 0);
		jo_key(&t->jo, "notes");
		jo_arr_begin(&t->jo);
		for (size_t i = 0; i < ck->n; i++)
			jo_str(&t->jo, ck->notes[i]);
		jo_arr_end(&t->jo);
		print_args(t, ck);
		return;
	}
	for (size_t i = 0; i < ck->n; i++) {
		if (t->fmt == FMT_CSV)
			fprintf(stderr, "prof diff: not comparable: %s\n", ck->notes[i]);
		else
			tab_para(t, "Not comparable: ", ck->notes[i]);
	}
	print_args(t, ck);
	if (t->fmt == FMT_TABLE)
		tab_line(t, "%s", "");
}

/* The verdict in words (*text) and the exit status. */
static int verdict(const struct diff_opts *o, const struct diff_side *s,
		   const struct diff_check *ck, double *pct, char *text, size_t n)
{
	char b[32], nw[32];
	const struct tab *t = &o->t;
	*pct = NAN;
	if (ck->no_steps) {
		snprintf(text, n, "no verdict: %s has no steps, so there is no step time to "
			 "compare%s", !s[0].steps.steps ? "BASE" : "NEW",
			 o->gate ? " (exit 3)" : "");
		return o->gate ? DIFF_NO_STEPS : 0;
	}
	*pct = diff_pct(s[0].steps.median, s[1].steps.median);
	snprintf(b, sizeof b, "%.3f %s", tab_conv(t, s[0].steps.median), tab_unit(t));
	snprintf(nw, sizeof nw, "%.3f %s", tab_conv(t, s[1].steps.median), tab_unit(t));
	const char *how = isnan(*pct) ? "slower than (BASE's median is 0)" : *pct > 0
			  ? "slower than" : *pct < 0 ? "faster than" : "as fast as";
	if (fabs(*pct) < 0.05)
		how = "about as fast as";
	char amount[48] = "";
	if (!isnan(*pct) && fabs(*pct) >= 0.05)
		snprintf(amount, sizeof amount, "%.1f%% ", fabs(*pct));
	int fail = o->gate && (isnan(*pct) || *pct > o->fail_above);
	char gate[96] = "";
	if (o->gate)
		snprintf(gate, sizeof gate, "; %s the %g%% limit: %s", fail ? "above" : "within",
			 o->fail_above, fail ? "FAIL" : "PASS");
	snprintf(text, n, "NEW is %s%s BASE by median step time (%s -> %s)%s%s", amount,
		 how, b, nw, gate, ck->n ? "; the runs may not be comparable (see above)" : "");
	return fail ? DIFF_FAILED : 0;
}

static int print_diff(struct diff_opts *o, const struct input *in, const struct diff_side *s)
{
	struct tab *t = &o->t;
	struct diff_check ck;
	static const struct named w[] = {
		{ "operators", "operator", "Operators", "operator_details.csv", 1 },
		{ "kernels", "kernel", "Device tasks", "op_statistic.csv", 0 },
		{ "ranges", "range", "User ranges", "range_statistic.csv", 1 },
	};
	diff_check_runs(&s[0], &s[1], &ck);
	if (t->fmt == FMT_CSV) {
		csv_header(&t->csv, "Section,Name,Status,Metric,Base,New,Change,Change(%)");
	} else if (t->fmt == FMT_JSON) {
		jo_init_file(&t->jo, stdout, 2);
		jo_obj_begin(&t->jo);
		jo_kstr(&t->jo, "unit", tab_unit(t));
	}
	if (t->fmt != FMT_CSV)
		print_sides(t, in, s);
	print_notes(t, &ck);
	print_steps(t, s);
	print_ranks(t, in);
	int rc = print_named(t, o->top, &w[0], &s[0].ops, &s[1].ops, s[0].have_ops || s[1].have_ops);
	if (!rc && (s[0].kernels.n || s[1].kernels.n || t->fmt != FMT_TABLE))
		rc = print_named(t, o->top, &w[1], &s[0].kernels, &s[1].kernels,
				 s[0].have_kernels || s[1].have_kernels);
	if (!rc && (s[0].ranges.n || s[1].ranges.n || t->fmt != FMT_TABLE))
		rc = print_named(t, o->top, &w[2], &s[0].ranges, &s[1].ranges,
				 s[0].have_ranges || s[1].have_ranges);
	if (rc)
		return rc;
	print_recording(t, s);
	print_findings(t, s);
	char text[600];
	double pct;
	int status = verdict(o, s, &ck, &pct, text, sizeof text);
	if (t->fmt == FMT_JSON) {
		jo_key(&t->jo, "verdict");
		jo_obj_begin(&t->jo);
		jo_key(&t->jo, "median_change_pct");
		if (isnan(pct))
			jo_null(&t->jo);
		else
			jo_fixed(&t->jo, pct, 2);
		jo_key(&t->jo, "fail_above");
		if (o->gate)
			jo_fixed(&t->jo, o->fail_above, 2);
		else
			jo_null(&t->jo);
		jo_key(&t->jo, "failed");
		jo_bool(&t->jo, status == DIFF_FAILED);
		jo_kint(&t->jo, "exit_status", status);
		jo_kstr(&t->jo, "text", text);
		jo_obj_end(&t->jo);
		jo_obj_end(&t->jo);
		if (jo_finish(&t->jo) != 0)
			t->error = 1;
		putchar('\n');
	}
	if (t->fmt == FMT_CSV && csv_finish(&t->csv) != 0)
		t->error = 1;
	if (t->fmt == FMT_TABLE)   /* one line, never cut: what a CI log shows last */
		tab_note_error(t, fprintf(t->out, "Verdict: %s\n", text) < 0);
	else
		fprintf(stderr, "prof diff: %s\n", text);
	return status;
}

/* ---- options ---- */

enum { O_FAIL = 256, O_TOP, O_UNIT, O_FORMAT };

static int diff_option(void *ctx, int ch)
{
	struct diff_opts *o = ctx;
	char *end;
	int k;
	switch (ch) {
	case O_FAIL:
		if (stats_parse_num(optarg, &o->fail_above) != 0 || !(o->fail_above >= 0) ||
		    !isfinite(o->fail_above)) {
			fprintf(stderr, "prof diff: --fail-above: '%s' is not a percentage >= 0\n",
				optarg);
			return DIFF_USAGE;
		}
		o->gate = 1;
		return 0;
	case O_TOP:
		o->top = strtol(optarg, &end, 10);
		if (!*optarg || *end || o->top < 0 || o->top > 1000000000) {
			fprintf(stderr, "prof diff: --top: '%s' is not a whole number >= 0\n", optarg);
			return DIFF_USAGE;
		}
		return 0;
	case O_UNIT:
		if ((k = tab_pick("prof diff", "--unit", optarg, tab_unit_names)) < 0)
			return DIFF_USAGE;
		o->t.unit = k;
		return 0;
	case O_FORMAT:
		if ((k = tab_pick("prof diff", "--format", optarg, tab_fmt_names)) < 0)
			return DIFF_USAGE;
		o->t.fmt = (enum tab_fmt)k;
		return 0;
	}
	return DIFF_USAGE;   /* not in longopts */
}

/* 0 to go on, -1 after --help, else the exit status. */
static int diff_args(int argc, char **argv, struct diff_opts *o)
{
	static const struct option longopts[] = {
		{ "fail-above", required_argument, NULL, O_FAIL },
		{ "top", required_argument, NULL, O_TOP },
		{ "unit", required_argument, NULL, O_UNIT },
		{ "format", required_argument, NULL, O_FORMAT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int rc = cmd_options("diff", argc, argv, longopts, diff_usage, diff_option, o);
	if (rc)
		return rc;
	if (argc - optind != 2) {
		fprintf(stderr, "prof diff: two runs are needed, BASE and NEW (%d given); see "
			"'prof diff --help'\n", argc - optind);
		return DIFF_USAGE;
	}
	o->arg[0] = argv[optind];
	o->arg[1] = argv[optind + 1];
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_opts o = { .top = 10, .t = { .unit = 1, .fmt = FMT_TABLE, .out = stdout,
						 .width = tab_terminal_width() } };
	int rc = diff_args(argc, argv, &o);
	if (rc)
		return rc < 0 ? 0 : rc;
	struct input in[2] = { { .arg = o.arg[0] }, { .arg = o.arg[1] } };
	struct diff_side s[2];
	int loaded = 0;
	for (int i = 0; !rc && i < 2; i++)
		rc = resolve(&in[i]);
	for (int i = 0; !rc && i < 2; i++) {
		char err[600], *cl = in[i].cluster ? fs_join(in[i].dir, CLUSTER_OUT_DIR) : NULL;
		int bad = diff_side_load(&s[i], in[i].runs, in[i].nruns, cl, err, sizeof err);
		free(cl);
		if (bad) {
			fprintf(stderr, "prof diff: %s (%s) cannot be read: %s\n", who[i], in[i].arg,
				err);
			rc = DIFF_UNREADABLE;
		} else {
			loaded++;
		}
	}
	if (!rc) {
		if (o.t.fmt == FMT_CSV)
			csv_init(&o.t.csv, stdout);
		rc = print_diff(&o, in, s);
		if (o.t.error && rc != DIFF_UNREADABLE)
			fprintf(stderr, "prof diff: cannot write to standard output\n");
	}
	for (int i = 0; i < loaded; i++)
		diff_side_free(&s[i]);
	for (int i = 0; i < 2; i++)
		input_free(&in[i]);
	return rc;
}
