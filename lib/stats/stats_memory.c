/* The memory view's derived tables (stats.h, stats_memory_derive): peaks
 * per step and the operators' sums. */
#include "stats/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct span { long step; double from, to; };

/* The ProfilerStep#N spans of trace_view.json as prof writes it (one
 * event a line), merged over processes; 0 spans when it is absent,
 * gzipped or indented. */
static int step_spans(const char *outdir, struct span **out, size_t *n)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/trace_view.json", outdir);
	*out = NULL;
	*n = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t cap = 0;
	char *line = NULL;
	size_t len = 0;
	while (getline(&line, &len, f) > 0) {
		const char *p = strstr(line, "\"name\":\"ProfilerStep#");
		const char *ts = p ? strstr(p, "\"ts\":") : NULL, *dur = p ? strstr(p, "\"dur\":") : NULL;
		if (!ts || !dur || !strstr(line, "\"ph\":\"X\""))
			continue;
		long step = strtol(p + strlen("\"name\":\"ProfilerStep#"), NULL, 10);
		double a = strtod(ts + 5, NULL), d = strtod(dur + 6, NULL);
		size_t i = 0;
		while (i < *n && (*out)[i].step != step)
			i++;
		if (i == *n) {
			if (*n == cap) {
				cap = cap ? cap * 2 : 16;
				struct span *v = realloc(*out, cap * sizeof *v);
				if (!v) {
					free(line);
					fclose(f);
					return -2;
				}
				*out = v;
			}
			(*out)[(*n)++] = (struct span){ step, a, a + d };
		} else {
			struct span *s = &(*out)[i];
			s->from = a < s->from ? a : s->from;
			s->to = a + d > s->to ? a + d : s->to;
		}
	}
	free(line);
	fclose(f);
	return 0;
}

static int cmp_span(const void *pa, const void *pb)
{
	const struct span *a = pa, *b = pb;
	return (a->step > b->step) - (a->step < b->step);
}

static int cmp_op(const void *pa, const void *pb)
{
	const struct stats_mem_op *a = pa, *b = pb;
	if (a->mb != b->mb)
		return a->mb > b->mb ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Each (component, device)'s peak within each step: the highest total of
 * its rows inside the span, or the level it entered the span at. */
static int step_peaks(struct stats_memory *m, const struct span *sp, size_t nsp)
{
	m->steps = calloc(nsp * m->ndevices + 1, sizeof *m->steps);
	double *level = calloc(m->ndevices + 1, sizeof *level);
	if (!m->steps || !level) {
		free(level);
		return -2;
	}
	for (size_t s = 0; s < nsp; s++) {
		for (size_t d = 0; d < m->ndevices; d++)
			level[d] = NAN;
		for (size_t r = 0; r < m->nrows; r++) {
			const struct stats_mem_row *row = &m->rows[r];
			if (row->ts_us < sp[s].from) {
				level[row->dev] = row->mb;   /* the level entering the step */
				continue;
			}
			if (row->ts_us > sp[s].to)
				continue;
			if (isnan(level[row->dev]) || row->mb > level[row->dev])
				level[row->dev] = row->mb;
		}
		/* level now holds max(entry level, rows inside); rows after the
		 * entry but before the span lowered nothing: the scan is in time order */
		for (size_t d = 0; d < m->ndevices; d++)
			if (!isnan(level[d]))
				m->steps[m->nsteps++] = (struct stats_mem_step){ d, sp[s].step, level[d] };
	}
	free(level);
	return 0;
}

int stats_memory_derive(const char *outdir, struct stats_memory *m)
{
	struct span *sp;
	size_t nsp;
	if (step_spans(outdir, &sp, &nsp) != 0)
		return -2;
	qsort(sp, nsp, sizeof *sp, cmp_span);
	m->steps_known = nsp > 0;
	int rc = m->have_records ? step_peaks(m, sp, nsp) : 0;
	free(sp);
	if (rc)
		return rc;
	m->ops = calloc(m->nallocs + 1, sizeof *m->ops);
	if (!m->ops)
		return -2;
	for (size_t i = 0; i < m->nallocs; i++) {
		const struct stats_alloc *a = &m->allocs[i];
		const char *name = a->name[0] ? a->name : "(no operator)";
		size_t k = 0;
		while (k < m->nops && strcmp(m->ops[k].name, name) != 0)
			k++;
		if (k == m->nops)
			m->ops[m->nops++] = (struct stats_mem_op){ name, 0, 0 };
		m->ops[k].allocs++;
		m->ops[k].mb += a->size_kb / 1024.0;
	}
	qsort(m->ops, m->nops, sizeof *m->ops, cmp_op);
	return 0;
}
