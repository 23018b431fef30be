/* Loading each view's data from PROFILER_OUTPUT/ CSVs: see stats.h. */
#include "stats/stats.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/num.h"
#include "stats/csv_read.h"

int stats_parse_num(const char *s, double *out)
{
	char *end;
	if (!s || !*s)
		return -1;
	double v = strtod(s, &end);
	if (end == s || *end != '\0')
		return -1;
	*out = v;
	return 0;
}

/* Opens outdir/name; resolves the named columns (all needed). */
static int open_csv(const char *outdir, const char *name, struct csv_table *t,
		    const char *const *cols, int *idx, int ncols, char *err, size_t errlen)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", outdir, name);
	int rc = csv_table_load(t, path, err, errlen);
	if (rc != 0)
		return rc == CSV_ABSENT ? STATS_ABSENT : -1;
	for (int i = 0; i < ncols; i++) {
		idx[i] = csv_column(t, cols[i]);
		if (idx[i] < 0) {
			snprintf(err, errlen, "%s: no column '%s'", path, cols[i]);
			csv_table_free(t);
			return -1;
		}
	}
	return 0;
}

/* Reads numeric cells; an empty or bad cell is an error naming it. */
static int nums(const struct csv_table *t, size_t row, const int *idx, int n, double *v,
		const char *file, char *err, size_t errlen)
{
	for (int i = 0; i < n; i++) {
		const char *c = csv_cell(t, row, (size_t)idx[i]);
		if (stats_parse_num(c, &v[i]) != 0) {
			snprintf(err, errlen, "%s: row %zu: '%s' is not a number (column %s)", file,
				 row + 2, c, t->cells[idx[i]]);
			return -1;
		}
	}
	return 0;
}

/* Column col of row r, when the file has it and the cell is not empty
 * (*v kept otherwise). */
static int opt_num(const struct csv_table *t, size_t r, int col, double *v, char *err,
		   size_t errlen)
{
	if (col < 0 || !*csv_cell(t, r, (size_t)col))
		return 0;
	return nums(t, r, &col, 1, v, "step_trace_time.csv", err, errlen);
}

int stats_load_steps(const char *outdir, struct stats_steps *s, char *err, size_t errlen)
{
	static const char *const cols[] = { "Device_id", "Step", "Computing",
		"Communication(Not Overlapped)", "Overlapped", "Communication", "Free", "Stage",
		"Bubble", "Preparing" };
	enum { NC = sizeof(cols) / sizeof(cols[0]) };
	int idx[NC];
	struct csv_table t;
	memset(s, 0, sizeof(*s));
	int rc = open_csv(outdir, "step_trace_time.csv", &t, cols, idx, NC, err, errlen);
	if (rc != 0)
		return rc;
	s->rows = calloc(t.nrows ? t.nrows : 1, sizeof(*s->rows));
	if (!s->rows) {
		snprintf(err, errlen, "out of memory");
		csv_table_free(&t);
		return -1;
	}
	int rank_col = csv_column(&t, "Rank");   /* appended by a multi-rank run */
	int pid_col = csv_column(&t, "Pid");     /* ... by several processes of one rank */
	s->has_rank = rank_col >= 0;
	s->has_pid = pid_col >= 0;
	for (size_t r = 0; r < t.nrows; r++) {
		double v[NC], rank = -1, pid = -1;
		if (nums(&t, r, idx, NC, v, "step_trace_time.csv", err, errlen) != 0 ||
		    opt_num(&t, r, rank_col, &rank, err, errlen) != 0 ||
		    opt_num(&t, r, pid_col, &pid, err, errlen) != 0) {
			csv_table_free(&t);
			stats_steps_free(s);
			return -1;
		}
		struct stats_step *st = &s->rows[s->n++];
		st->device = num_to_int(v[0]);
		st->rank = (long)num_to_i64(rank);
		st->pid = (long)num_to_i64(pid);
		st->step = (long)num_to_i64(v[1]);
		st->computing = v[2];
		st->comm_not_overlapped = v[3];
		st->overlapped = v[4];
		st->communication = v[5];
		st->free_time = v[6];
		st->stage = v[7];
		st->bubble = v[8];
		st->preparing = v[9];
		st->total = st->preparing + st->stage + st->bubble;
	}
	csv_table_free(&t);
	return 0;
}

void stats_steps_free(struct stats_steps *s)
{
	free(s->rows);
	memset(s, 0, sizeof(*s));
}

/* By step number, then file order. */
static int cmp_row_step(const void *a, const void *b)
{
	const struct stats_step *x = *(const struct stats_step *const *)a,
				*y = *(const struct stats_step *const *)b;
	if (x->step != y->step)
		return (x->step > y->step) - (x->step < y->step);
	return (x > y) - (x < y);
}

const struct stats_step **stats_steps_longest(const struct stats_steps *s, size_t *n)
{
	const struct stats_step **v = malloc((s->n ? s->n : 1) * sizeof *v);
	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < s->n; i++)
		v[i] = &s->rows[i];
	qsort(v, s->n, sizeof *v, cmp_row_step);
	size_t k = 0;
	for (size_t i = 0; i < s->n;) {
		const struct stats_step *best = v[i];
		for (i++; i < s->n && v[i]->step == best->step; i++)
			if (v[i]->total > best->total)
				best = v[i];
		v[k++] = best;   /* k <= i: what it overwrites was read */
	}
	*n = k;
	return v;
}

int stats_steps_summarize(const struct stats_steps *s, struct stats_step_summary *sum)
{
	memset(sum, 0, sizeof(*sum));
	size_t n;
	const struct stats_step **v = stats_steps_longest(s, &n);
	double *times = malloc((n ? n : 1) * sizeof *times);
	if (!v || !times) {
		free(v);
		free(times);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->n; i++) {
		const struct stats_step *r = &s->rows[i];
		sum->computing += r->computing;
		sum->communication += r->comm_not_overlapped;
		sum->free_time += r->free_time;
		sum->rows_total += r->total;
		sum->device_rows += r->device >= 0;
	}
	sum->steps = n;
	for (size_t i = 0; i < n; i++) {
		times[i] = v[i]->total;
		sum->total += v[i]->total;
	}
	sum->median = num_median(times, n);
	free(times);
	free(v);
	sum->other = sum->rows_total - sum->computing - sum->communication - sum->free_time;
	if (fabs(sum->other) < 0.0005)
		sum->other = 0;
	sum->avg = sum->steps ? sum->total / (double)sum->steps : 0;
	return 0;
}

/* operator_details.csv's Step Id column: its index, -1 when the file has
 * none (then only STATS_WHERE_ALL can be answered). */
static int step_column(const struct csv_table *t, const char *outdir, enum stats_where where,
		       char *err, size_t errlen)
{
	int i = csv_column(t, "Step Id");
	if (i < 0 && where != STATS_WHERE_ALL)
		snprintf(err, errlen, "%s/operator_details.csv has no Step Id column (an older "
			 "prof wrote it): run `prof parse` on the run again to tell operators "
			 "in steps from the others", outdir);
	return i;
}

/* Whether row r is in a step: 1, 0, or -1 when the file does not say. */
static int row_in_step(const struct csv_table *t, size_t r, int step_idx)
{
	return step_idx < 0 ? -1 : csv_cell(t, r, (size_t)step_idx)[0] != '\0';
}

static int where_takes(enum stats_where where, int in_step)
{
	return where == STATS_WHERE_ALL || in_step == (where == STATS_WHERE_STEPS);
}

int stats_load_ops(const char *outdir, enum stats_where where, struct stats_agg *a,
		   struct stats_op_split *split, char *err, size_t errlen)
{
	static const char *const cols[] = { "Name", "Host Total Duration(us)",
		"Host Self Duration(us)", "Device Total Duration(us)" };
	int idx[4];
	struct csv_table t;
	stats_agg_init(a, 3);
	if (split)
		memset(split, 0, sizeof *split);
	int rc = open_csv(outdir, "operator_details.csv", &t, cols, idx, 4, err, errlen);
	if (rc != 0)
		return rc;
	int sidx = step_column(&t, outdir, where, err, errlen);
	if (sidx < 0 && where != STATS_WHERE_ALL)
		goto fail;
	if (split)
		split->known = sidx >= 0;
	for (size_t r = 0; r < t.nrows; r++) {
		double v[3];
		if (nums(&t, r, idx + 1, 3, v, "operator_details.csv", err, errlen) != 0)
			goto fail;
		int in = row_in_step(&t, r, sidx);
		if (split && in >= 0) {
			split->calls[!in]++;
			split->self_us[!in] += v[1];
		}
		if (!where_takes(where, in))
			continue;
		if (stats_agg_add1(a, csv_cell(&t, r, (size_t)idx[0]), NULL, v) != 0) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
	}
	csv_table_free(&t);
	return 0;
fail:
	csv_table_free(&t);
	stats_agg_free(a);
	return -1;
}

int stats_load_kernels(const char *outdir, struct stats_agg *a, const char **source,
		       char *err, size_t errlen)
{
	static const char *const scols[] = { "Device_id", "OP Type", "Count", "Total Time(us)",
		"Min Time(us)", "Max Time(us)" };
	static const char *const kcols[] = { "Name", "Duration(us)" };
	int idx[6];
	struct csv_table t;
	stats_agg_init(a, 1);
	*source = "op_statistic.csv";
	int rc = open_csv(outdir, *source, &t, scols, idx, 6, err, errlen);
	if (rc == 0) {
		for (size_t r = 0; r < t.nrows; r++) {
			double dev;
			if (stats_parse_num(csv_cell(&t, r, (size_t)idx[0]), &dev) == 0 && dev < 0)
				continue;   /* host operators */
			double v[4];
			if (nums(&t, r, idx + 2, 4, v, *source, err, errlen) != 0)
				goto fail;
			if (stats_agg_add(a, csv_cell(&t, r, (size_t)idx[1]), NULL, num_to_u64(v[0]),
					  &v[1], &v[2], &v[3]) != 0)
				goto oom;
		}
		csv_table_free(&t);
		return 0;
	}
	if (rc != STATS_ABSENT)
		return -1;
	*source = "kernel_details.csv";
	rc = open_csv(outdir, *source, &t, kcols, idx, 2, err, errlen);
	if (rc != 0)
		return rc;
	for (size_t r = 0; r < t.nrows; r++) {
		double v;
		if (nums(&t, r, idx + 1, 1, &v, *source, err, errlen) != 0)
			goto fail;
		if (stats_agg_add1(a, csv_cell(&t, r, (size_t)idx[0]), NULL, &v) != 0)
			goto oom;
	}
	csv_table_free(&t);
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	csv_table_free(&t);
	stats_agg_free(a);
	return -1;
}

/* One row of range_statistic.csv into the sums. */
static int add_range_row(struct stats_agg *a, const struct csv_table *t, size_t r,
			 const int *idx, int in_step, char *err, size_t errlen)
{
	double v[5];   /* calls, total, self, max, min */
	if (nums(t, r, idx + 3, 5, v, "range_statistic.csv", err, errlen) != 0)
		return -1;
	uint64_t calls = num_to_u64(v[0]);
	double self_avg = calls ? v[2] / (double)calls : 0, step = in_step;
	double sum[3] = { v[1], v[2], step }, min[3] = { v[4], self_avg, step },
	       max[3] = { v[3], self_avg, step };
	if (stats_agg_add(a, csv_cell(t, r, (size_t)idx[1]), NULL, calls, sum, min, max) != 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

int stats_load_ranges(const char *outdir, const char *category, enum stats_where where,
		      struct stats_agg *a, char *err, size_t errlen)
{
	static const char *const cols[] = { "Category", "Name", "Step Id", "Calls",
		"Total Time(us)", "Self Time(us)", "Max Time(us)", "Min Time(us)" };
	int idx[8];
	struct csv_table t;
	stats_agg_init(a, 3);
	int rc = open_csv(outdir, "range_statistic.csv", &t, cols, idx, 8, err, errlen);
	if (rc != 0)
		return rc;
	for (size_t r = 0; r < t.nrows; r++) {
		int in_step = *csv_cell(&t, r, (size_t)idx[2]) != '\0';
		if (strcmp(csv_cell(&t, r, (size_t)idx[0]), category) != 0 ||
		    !where_takes(where, in_step))
			continue;
		if (add_range_row(a, &t, r, idx, in_step, err, errlen) != 0) {
			csv_table_free(&t);
			stats_agg_free(a);
			return -1;
		}
	}
	csv_table_free(&t);
	return 0;
}

int stats_load_api(const char *outdir, struct stats_agg *a, char *err, size_t errlen)
{
	static const char *const cols[] = { "Level", "API Name", "Count", "Time(us)", "Min(us)",
		"Max(us)" };
	int idx[6];
	struct csv_table t;
	stats_agg_init(a, 1);
	int rc = open_csv(outdir, "api_statistic.csv", &t, cols, idx, 6, err, errlen);
	if (rc != 0)
		return rc;
	for (size_t r = 0; r < t.nrows; r++) {
		double v[4];
		if (nums(&t, r, idx + 2, 4, v, "api_statistic.csv", err, errlen) != 0)
			goto fail;
		if (stats_agg_add(a, csv_cell(&t, r, (size_t)idx[1]), csv_cell(&t, r, (size_t)idx[0]),
				  num_to_u64(v[0]), &v[1], &v[2], &v[3]) != 0) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
	}
	csv_table_free(&t);
	return 0;
fail:
	csv_table_free(&t);
	stats_agg_free(a);
	return -1;
}

static int cmp_alloc(const void *pa, const void *pb)
{
	const struct stats_alloc *a = pa, *b = pb;
	if (a->size_kb != b->size_kb)
		return a->size_kb > b->size_kb ? -1 : 1;
	return a->alloc_us < b->alloc_us ? -1 : a->alloc_us > b->alloc_us;
}

/* One row into m: 0, -1 (a bad cell, named in err) or -2 (out of memory). */
typedef int mem_row_fn(struct stats_memory *m, const struct csv_table *t, size_t r,
		       const int *idx, char *err, size_t errlen);

/* The memory view's two CSVs load alike: room for an item per row, then
 * every row through `add`. */
struct mem_csv {
	const char *name;
	const char *const *cols;
	int ncols;
	int (*room)(struct stats_memory *m, size_t nrows);   /* 0, or -2 */
	mem_row_fn *add;
};

static int room_records(struct stats_memory *m, size_t nrows)
{
	m->have_records = 1;
	m->devices = calloc(nrows ? nrows : 1, sizeof(*m->devices));
	m->rows = calloc(nrows ? nrows : 1, sizeof(*m->rows));
	return m->devices && m->rows ? 0 : -2;
}

static int room_allocs(struct stats_memory *m, size_t nrows)
{
	m->have_allocs = 1;
	m->allocs = calloc(nrows ? nrows : 1, sizeof(*m->allocs));
	return m->allocs ? 0 : -2;
}

static uint64_t device_key(const char *comp, const char *dev)
{
	return parse_idmap_hash_text(parse_idmap_hash_text(PARSE_IDMAP_TEXT0, comp), dev);
}

static int is_device(const struct stats_mem_device *md, const char *comp, const char *dev)
{
	return strcmp(md->device, dev) == 0 && strcmp(md->component, comp) == 0;
}

size_t stats_memory_find(const struct stats_memory *m, const char *comp, const char *dev)
{
	size_t at = (size_t)(uintptr_t)parse_idmap_get(&m->device_at, device_key(comp, dev));
	if (!at)
		return m->ndevices;
	if (is_device(&m->devices[at - 1], comp, dev))
		return at - 1;
	size_t d = 0;        /* two names, one hash: the later one is found by a scan */
	while (d < m->ndevices && !is_device(&m->devices[d], comp, dev))
		d++;
	return d;
}

/* A memory_record.csv row: per (component, device), the total rising
 * counts as an allocation, falling as a free. */
static int add_record(struct stats_memory *m, const struct csv_table *t, size_t r,
		      const int *idx, char *err, size_t errlen)
{
	double v[2];
	if (nums(t, r, idx, 2, v, "memory_record.csv", err, errlen) != 0)
		return -1;
	const char *dev = csv_cell(t, r, (size_t)idx[2]);
	const char *comp = csv_cell(t, r, (size_t)idx[3]);
	uint64_t h = device_key(comp, dev);
	size_t d = stats_memory_find(m, comp, dev);
	struct stats_mem_device *md = &m->devices[d];
	if (d == m->ndevices) {
		md->device = strdup(dev);
		md->component = strdup(comp);
		m->ndevices++;
		if (!md->device || !md->component)
			return -2;
		void *at = (void *)(uintptr_t)(d + 1);
		if (!parse_idmap_get(&m->device_at, h) && parse_idmap_put(&m->device_at, h, at) == at)
			return -2;   /* unfound, its next row would be a device again */
	}
	m->rows[m->nrows++] = (struct stats_mem_row){ d, v[0], v[1] };
	if (v[1] >= md->final_mb)   /* final_mb: the device's total before this row */
		md->allocs++;
	else
		md->frees++;
	if (v[1] > md->peak_mb || md->allocs + md->frees == 1) {
		md->peak_mb = v[1];
		md->peak_ts_us = v[0];
	}
	md->final_mb = v[1];
	return 0;
}

static int add_alloc(struct stats_memory *m, const struct csv_table *t, size_t r,
		     const int *idx, char *err, size_t errlen)
{
	double v[2];
	if (nums(t, r, idx + 1, 2, v, "operator_memory.csv", err, errlen) != 0)
		return -1;
	struct stats_alloc *al = &m->allocs[m->nallocs++];
	al->size_kb = v[0];
	al->alloc_us = v[1];
	if (stats_parse_num(csv_cell(t, r, (size_t)idx[3]), &al->duration_us) != 0)
		al->duration_us = NAN;
	al->name = strdup(csv_cell(t, r, (size_t)idx[0]));
	al->device = strdup(csv_cell(t, r, (size_t)idx[4]));
	return al->name && al->device ? 0 : -2;
}

/* 0, STATS_ABSENT or -1; on -1 what m holds is the caller's to free. */
static int load_mem_csv(const char *outdir, const struct mem_csv *c, struct stats_memory *m,
			char *err, size_t errlen)
{
	int idx[6];
	struct csv_table t;
	int rc = open_csv(outdir, c->name, &t, c->cols, idx, c->ncols, err, errlen);
	if (rc != 0)
		return rc;
	rc = c->room(m, t.nrows);
	for (size_t r = 0; rc == 0 && r < t.nrows; r++)
		rc = c->add(m, &t, r, idx, err, errlen);
	if (rc == -2)
		snprintf(err, errlen, "out of memory");
	csv_table_free(&t);
	return rc ? -1 : 0;
}

int stats_load_memory(const char *outdir, struct stats_memory *m, char *err, size_t errlen)
{
	static const char *const rcols[] = { "Timestamp(us)", "Total Allocated(MB)", "Device Type",
		"Component" };
	static const char *const acols[] = { "Name", "Size(KB)", "Allocation Time(us)",
		"Duration(us)", "Device Type" };
	static const struct mem_csv records = { "memory_record.csv", rcols, 4, room_records,
						add_record };
	static const struct mem_csv allocs = { "operator_memory.csv", acols, 5, room_allocs,
					       add_alloc };
	memset(m, 0, sizeof(*m));
	int rc = load_mem_csv(outdir, &records, m, err, errlen);
	int arc = rc == -1 ? -1 : load_mem_csv(outdir, &allocs, m, err, errlen);
	if (arc == -1) {
		stats_memory_free(m);
		return -1;
	}
	if (arc == 0)
		qsort(m->allocs, m->nallocs, sizeof(*m->allocs), cmp_alloc);
	return rc == STATS_ABSENT && arc == STATS_ABSENT ? STATS_ABSENT : 0;
}

void stats_memory_free(struct stats_memory *m)
{
	for (size_t i = 0; i < m->ndevices; i++) {
		free(m->devices[i].device);
		free(m->devices[i].component);
	}
	free(m->rows);
	free(m->steps);
	free(m->ops);
	for (size_t i = 0; i < m->nallocs; i++) {
		free(m->allocs[i].name);
		free(m->allocs[i].device);
	}
	free(m->devices);
	free(m->allocs);
	parse_idmap_free(&m->device_at);
	memset(m, 0, sizeof(*m));
}

int stats_load_op_calls(const char *outdir, const char *name, enum stats_where where,
			struct stats_calls *c, char *err, size_t errlen)
{
	static const char *const cols[] = { "Name", "Host Total Duration(us)",
		"Host Self Duration(us)", "Device Total Duration(us)", "Input Shapes" };
	int idx[6];
	struct csv_table t;
	memset(c, 0, sizeof(*c));
	int rc = open_csv(outdir, "operator_details.csv", &t, cols, idx, 5, err, errlen);
	if (rc != 0)
		return rc;
	int sidx = step_column(&t, outdir, where, err, errlen);
	if (sidx < 0 && where != STATS_WHERE_ALL)
		goto fail;
	c->rows = calloc(t.nrows ? t.nrows : 1, sizeof(*c->rows));
	if (!c->rows)
		goto oom;
	for (size_t r = 0; r < t.nrows; r++) {
		if (strcmp(csv_cell(&t, r, (size_t)idx[0]), name) != 0 ||
		    !where_takes(where, row_in_step(&t, r, sidx)))
			continue;
		double v[3];
		if (nums(&t, r, idx + 1, 3, v, "operator_details.csv", err, errlen) != 0)
			goto fail;
		struct stats_call *call = &c->rows[c->n];
		call->shapes = strdup(csv_cell(&t, r, (size_t)idx[4]));
		call->step = sidx >= 0 ? strdup(csv_cell(&t, r, (size_t)sidx)) : NULL;
		if (!call->shapes || (sidx >= 0 && !call->step))
			goto oom_row;
		c->n++;
		call->total = v[0];
		call->self = v[1];
		call->device = v[2];
	}
	csv_table_free(&t);
	return 0;
oom_row:
	c->n++;   /* freed with the others */
oom:
	snprintf(err, errlen, "out of memory");
fail:
	csv_table_free(&t);
	stats_calls_free(c);
	return -1;
}

void stats_calls_free(struct stats_calls *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->rows[i].shapes);
		free(c->rows[i].step);
	}
	free(c->rows);
	memset(c, 0, sizeof(*c));
}
