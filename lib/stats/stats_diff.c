/* Two runs compared: see stats_diff.h. */
#include "stats/stats_diff.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"

/* Adds every row of `from` to `into` (the same metrics). */
static int agg_merge(struct stats_agg *into, const struct stats_agg *from)
{
	for (size_t i = 0; i < from->n; i++) {
		const struct stats_row *r = &from->rows[i];
		if (stats_agg_add(into, r->name, r->extra, r->count, r->sum, r->min, r->max) != 0)
			return -1;
	}
	return 0;
}

/* The steps of every run in one table, summarized. */
static int load_steps(struct diff_side *s, char *const *outdirs, size_t n, char *err,
		      size_t errlen)
{
	struct stats_steps all = { 0 };
	for (size_t i = 0; i < n; i++) {
		struct stats_steps one;
		int rc = stats_load_steps(outdirs[i], &one, err, errlen);
		if (rc == STATS_ABSENT)
			continue;
		if (rc != 0)
			goto fail;
		struct stats_step *rows = realloc(all.rows, (all.n + one.n + 1) * sizeof(*rows));
		if (!rows) {
			stats_steps_free(&one);
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		all.rows = rows;
		memcpy(all.rows + all.n, one.rows, one.n * sizeof(*rows));
		all.n += one.n;
		all.has_rank |= one.has_rank;
		all.has_pid |= one.has_pid;
		s->have_steps = 1;
		stats_steps_free(&one);
	}
	if (stats_steps_summarize(&all, &s->steps)) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	stats_steps_free(&all);
	return 0;
fail:
	stats_steps_free(&all);
	return -1;
}

enum { T_OPS, T_KERNELS, T_RANGES };

/* One of the by-name tables of one run, added to the side's. */
static int load_named(struct diff_side *s, int which, const char *outdir, char *err,
		      size_t errlen)
{
	struct stats_agg a;
	const char *src;
	int rc = which == T_OPS ? stats_load_ops(outdir, STATS_WHERE_ALL, &a, NULL, err, errlen)
		 : which == T_KERNELS ? stats_load_kernels(outdir, &a, &src, err, errlen)
		 : stats_load_ranges(outdir, "user_annotation", STATS_WHERE_ALL, &a, err, errlen);
	if (rc == STATS_ABSENT)
		return 0;
	if (rc != 0)
		return -1;
	struct stats_agg *into = which == T_OPS ? &s->ops : which == T_KERNELS ? &s->kernels
			       : &s->ranges;
	int *have = which == T_OPS ? &s->have_ops : which == T_KERNELS ? &s->have_kernels
		    : &s->have_ranges;
	*have = 1;
	rc = agg_merge(into, &a);
	stats_agg_free(&a);
	if (rc != 0)
		snprintf(err, errlen, "out of memory");
	return rc;
}

static void add_device(struct diff_side *s, const char *dev)
{
	size_t len = strlen(s->devices), n = strlen(dev);
	for (const char *p = s->devices; (p = strstr(p, dev)) != NULL; p += n)
		if ((p == s->devices || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return;
	if (len + n + 2 < sizeof s->devices)
		snprintf(s->devices + len, sizeof s->devices - len, "%s%s", len ? "," : "", dev);
}

static int load_memory(struct diff_side *s, const char *outdir, char *err, size_t errlen)
{
	struct stats_memory m;
	int rc = stats_load_memory(outdir, &m, err, errlen);
	if (rc == STATS_ABSENT)
		return 0;
	if (rc != 0)
		return -1;
	for (size_t i = 0; i < m.ndevices; i++) {
		add_device(s, m.devices[i].device);
		if (isnan(s->peak_mb) || m.devices[i].peak_mb > s->peak_mb)
			s->peak_mb = m.devices[i].peak_mb;
	}
	stats_memory_free(&m);
	return 0;
}

static int load_run(struct diff_side *s, const char *run_dir, const char *outdir, size_t i,
		    char *err, size_t errlen)
{
	struct stats_recording rec;
	int rc = stats_load_recording(run_dir, &rec, err, errlen);
	if (rc < 0)
		return -1;
	if (rc == STATS_ABSENT || !rec.known)
		s->lost_known = 0;
	s->lost += rec.lost;
	if (i == 0) {
		s->command = rec.command;
		s->words = rec.words;
		s->nwords = rec.nwords;
		rec.command = NULL;
		rec.words = NULL;
	}
	stats_free_recording(&rec);
	for (int t = T_OPS; t <= T_RANGES; t++)
		if (load_named(s, t, outdir, err, errlen) != 0)
			return -1;
	return load_memory(s, outdir, err, errlen);
}

int diff_side_load(struct diff_side *s, char *const *run_dirs, size_t n,
		   const char *findings_dir, char *err, size_t errlen)
{
	memset(s, 0, sizeof *s);
	stats_agg_init(&s->ops, 3);
	stats_agg_init(&s->kernels, 1);
	stats_agg_init(&s->ranges, 3);
	s->peak_mb = NAN;
	s->lost_known = 1;
	s->runs = n;
	char **outdirs = calloc(n ? n : 1, sizeof(*outdirs));
	int rc = outdirs ? 0 : -1;
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (!(outdirs[i] = fs_join(run_dirs[i], "PROFILER_OUTPUT")))
			rc = -1;
	if (rc != 0)
		snprintf(err, errlen, "out of memory");
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = load_run(s, run_dirs[i], outdirs[i], i, err, errlen);
	if (rc == 0)
		rc = load_steps(s, outdirs, n, err, errlen);
	if (!findings_dir && n == 1)
		findings_dir = outdirs[0];
	if (rc == 0 && findings_dir) {   /* a cluster's are its report's, not its ranks' */
		int f = stats_load_findings(findings_dir, &s->findings, err, errlen);
		s->have_findings = f == 0;
		rc = f == -1 ? -1 : 0;
	}
	for (size_t i = 0; outdirs && i < n; i++)
		free(outdirs[i]);
	free(outdirs);
	if (rc != 0)
		diff_side_free(s);
	return rc;
}

void diff_side_free(struct diff_side *s)
{
	stats_agg_free(&s->ops);
	stats_agg_free(&s->kernels);
	stats_agg_free(&s->ranges);
	stats_findings_free(&s->findings);
	free(s->command);
	free(s->words);
	s->command = NULL;
	s->words = NULL;
	s->nwords = 0;
}

double diff_pct(double base, double new_value)
{
	if (base == 0)
		return new_value == 0 ? 0 : NAN;
	return 100.0 * (new_value - base) / base;
}

/* ---- names matched ---- */

struct side_ref {
	const struct stats_row *row;
	int side;                     /* 0 BASE, 1 NEW */
};

static int cmp_ref(const void *pa, const void *pb)
{
	const struct side_ref *a = pa, *b = pb;
	int c = strcmp(a->row->name, b->row->name);
	return c ? c : a->side - b->side;
}

static int cmp_change(const void *pa, const void *pb)
{
	const struct diff_row *a = pa, *b = pb;
	double x = fabs(a->change), y = fabs(b->change);
	if (x != y)
		return x > y ? -1 : 1;
	return strcmp(a->name, b->name);
}

static void fill(struct diff_row *d, const struct stats_row *r, int side, int total, int self)
{
	d->name = r->name;
	d->calls[side] = r->count;
	d->total[side] = r->sum[total];
	d->self[side] = r->sum[self < 0 ? total : self];
}

int diff_rows_build(const struct stats_agg *base, const struct stats_agg *new_agg, int total,
		    int self, int by_self, struct diff_rows *out)
{
	memset(out, 0, sizeof *out);
	size_t n = base->n + new_agg->n;
	struct side_ref *refs = malloc((n ? n : 1) * sizeof(*refs));
	out->rows = calloc(n ? n : 1, sizeof(*out->rows));
	if (!refs || !out->rows) {
		free(refs);
		diff_rows_free(out);
		return -1;
	}
	for (size_t i = 0; i < base->n; i++)
		refs[i] = (struct side_ref){ &base->rows[i], 0 };
	for (size_t i = 0; i < new_agg->n; i++)
		refs[base->n + i] = (struct side_ref){ &new_agg->rows[i], 1 };
	qsort(refs, n, sizeof(*refs), cmp_ref);
	for (size_t i = 0; i < n; i++) {
		struct diff_row *d = &out->rows[out->n++];
		fill(d, refs[i].row, refs[i].side, total, self);
		if (i + 1 < n && refs[i].side == 0 && refs[i + 1].side == 1 &&
		    strcmp(refs[i].row->name, refs[i + 1].row->name) == 0) {
			fill(d, refs[++i].row, 1, total, self);
			d->status = DIFF_BOTH;
		} else {
			d->status = refs[i].side ? DIFF_APPEARED : DIFF_VANISHED;
			out->appeared += refs[i].side == 1;
			out->vanished += refs[i].side == 0;
		}
		d->change = by_self ? d->self[1] - d->self[0] : d->total[1] - d->total[0];
	}
	free(refs);
	qsort(out->rows, out->n, sizeof(*out->rows), cmp_change);
	return 0;
}

void diff_rows_free(struct diff_rows *d)
{
	free(d->rows);
	memset(d, 0, sizeof *d);
}

/* ---- can they be compared ---- */

__attribute__((format(printf, 2, 3)))
static void note(struct diff_check *c, const char *fmt, ...);

static void note(struct diff_check *c, const char *fmt, ...)
{
	if (c->n >= DIFF_NOTES_MAX)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->notes[c->n++], sizeof c->notes[0], fmt, ap);
	va_end(ap);
}

/* How many of a command's first words name the program: its path and, for
 * a Python interpreter, what it runs (the script, or -m MODULE, -c CODE)
 * past the interpreter's own options. */
static size_t program_words(char *const *w, size_t n)
{
	const char *base = n ? strrchr(w[0], '/') : NULL;
	base = base ? base + 1 : n ? w[0] : "";
	if (strncmp(base, "python", 6) != 0)
		return n ? 1 : 0;
	for (size_t i = 1; i < n; i++) {
		if (!strcmp(w[i], "-m") || !strcmp(w[i], "-c"))
			return i + 2 < n ? i + 2 : n;
		if (!strcmp(w[i], "-W") || !strcmp(w[i], "-X"))
			i++;                        /* their value */
		else if (w[i][0] != '-' || !strncmp(w[i], "-m", 2) || !strncmp(w[i], "-c", 2))
			return i + 1;
	}
	return n;
}

/* words [from, to) joined by spaces into out ("" when none). */
static void join_range(char *out, size_t len, char *const *w, size_t from, size_t to)
{
	size_t at = 0;
	out[0] = '\0';
	for (size_t i = from; i < to && at < len; i++) {
		int k = snprintf(out + at, len - at, "%s%s", i > from ? " " : "", w[i]);
		at += k > 0 ? (size_t)k : 0;
	}
}

/* The commands compared word by word: another program is a reason the
 * runs may not compare; the same program with other arguments is not, and
 * the words that differ are kept (with the option before a differing
 * value: `--hidden 64`). */
static void check_commands(const struct diff_side *b, const struct diff_side *n,
			   struct diff_check *c)
{
	size_t nb = b->nwords, nn = n->nwords, pre = 0, suf = 0;
	while (pre < nb && pre < nn && !strcmp(b->words[pre], n->words[pre]))
		pre++;
	if (pre == nb && pre == nn)
		return;
	if (pre < program_words(b->words, nb) || pre < program_words(n->words, nn)) {
		note(c, "the programs differ: BASE ran `%.200s`, NEW ran `%.200s`", b->command,
		     n->command);
		return;
	}
	while (suf < nb - pre && suf < nn - pre &&
	       !strcmp(b->words[nb - 1 - suf], n->words[nn - 1 - suf]))
		suf++;
	if (b->words[pre - 1][0] == '-' && pre > program_words(b->words, nb))
		pre--;                              /* the option the value belongs to */
	c->args_differ = 1;
	join_range(c->args[0], sizeof c->args[0], b->words, pre, nb - suf);
	join_range(c->args[1], sizeof c->args[1], n->words, pre, nn - suf);
}

void diff_check_runs(const struct diff_side *b, const struct diff_side *n, struct diff_check *c)
{
	memset(c, 0, sizeof *c);
	const struct diff_side *sides[2] = { b, n };
	static const char *const who[2] = { "BASE", "NEW" };
	for (int i = 0; i < 2; i++)
		if (!sides[i]->have_steps || sides[i]->steps.steps == 0) {
			c->no_steps = 1;
			note(c, "%s has no steps (%s): there is no step time to compare; mark "
			     "each step (prof_tx.step(), an optimizer step under torch)", who[i],
			     sides[i]->have_steps ? "step_trace_time.csv is empty"
						  : "no step_trace_time.csv");
		}
	if (b->command && n->command && b->words && n->words)
		check_commands(b, n, c);
	if (strcmp(b->devices, n->devices) != 0)
		note(c, "the devices differ: BASE %s, NEW %s", *b->devices ? b->devices : "none",
		     *n->devices ? n->devices : "none");
	else if ((b->steps.device_rows > 0) != (n->steps.device_rows > 0))
		note(c, "device activity was recorded in %s only", b->steps.device_rows ? "BASE"
		     : "NEW");
	if (b->runs != n->runs)
		note(c, "BASE holds %zu runs (ranks), NEW %zu", b->runs, n->runs);
	size_t lo = b->steps.steps < n->steps.steps ? b->steps.steps : n->steps.steps;
	size_t hi = b->steps.steps < n->steps.steps ? n->steps.steps : b->steps.steps;
	if (lo > 0 && (double)hi > DIFF_STEPS_RATIO * (double)lo)
		note(c, "the step counts are far apart: BASE %zu steps, NEW %zu (more than "
		     "%.0fx): the first step holds the set-up, so the means compare badly; the "
		     "medians are steadier", b->steps.steps, n->steps.steps, DIFF_STEPS_RATIO);
}
