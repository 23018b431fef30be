/*
 * with_flops per step: operator_details.csv's FLOPs summed by Step Id,
 * against the step's time from step_trace_time.csv (its longest row: the
 * host step start to the last device end).
 */
#include "stats/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats/csv_read.h"

static struct stats_flops_step *flops_step(struct stats_flops *f, long step)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->rows[i].step == step)
			return &f->rows[i];
	struct stats_flops_step *v = realloc(f->rows, (f->n + 1) * sizeof *v);
	if (!v)
		return NULL;
	f->rows = v;
	v[f->n] = (struct stats_flops_step){ step, 0, 0 };
	return &v[f->n++];
}

/* FLOPs by step; STATS_ABSENT when nothing was counted. */
static int flops_sum(const char *outdir, struct stats_flops *f, char *err, size_t errlen)
{
	char path[4096];
	struct csv_table t;
	snprintf(path, sizeof path, "%s/operator_details.csv", outdir);
	int rc = csv_table_load(&t, path, err, errlen);
	if (rc != 0)
		return rc == CSV_ABSENT ? STATS_ABSENT : -1;
	int fc = csv_column(&t, "FLOPs"), sc = csv_column(&t, "Step Id");
	for (size_t r = 0; fc >= 0 && sc >= 0 && r < t.nrows; r++) {
		const char *fv = csv_cell(&t, r, (size_t)fc), *sv = csv_cell(&t, r, (size_t)sc);
		double flops, step;
		if (!*fv || !*sv || stats_parse_num(fv, &flops) || stats_parse_num(sv, &step))
			continue;   /* not counted, or outside every step */
		struct stats_flops_step *s = flops_step(f, (long)step);
		if (!s) {
			snprintf(err, errlen, "out of memory");
			csv_table_free(&t);
			return -1;
		}
		s->flops += flops;
	}
	csv_table_free(&t);
	return f->n ? 0 : STATS_ABSENT;
}

static int flops_cmp(const void *a, const void *b)
{
	long x = ((const struct stats_flops_step *)a)->step;
	long y = ((const struct stats_flops_step *)b)->step;
	return (x > y) - (x < y);
}

int stats_load_flops(const char *outdir, struct stats_flops *f, char *err, size_t errlen)
{
	memset(f, 0, sizeof *f);
	int rc = flops_sum(outdir, f, err, errlen);
	struct stats_steps s;
	int src = rc == 0 ? stats_load_steps(outdir, &s, err, errlen) : STATS_ABSENT;
	if (src < 0)
		rc = -1;
	for (size_t i = 0; src == 0 && i < s.n; i++)
		for (size_t k = 0; k < f->n; k++)
			if (f->rows[k].step == s.rows[i].step && s.rows[i].total > f->rows[k].time_us)
				f->rows[k].time_us = s.rows[i].total;
	if (src == 0)
		stats_steps_free(&s);
	if (rc != 0) {
		stats_flops_free(f);
		return rc;
	}
	qsort(f->rows, f->n, sizeof *f->rows, flops_cmp);
	return 0;
}

void stats_flops_free(struct stats_flops *f)
{
	free(f->rows);
	memset(f, 0, sizeof *f);
}
