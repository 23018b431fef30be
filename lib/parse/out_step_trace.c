#include "parse/out_step_trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/csv_out.h"
#include "parse/out_file.h"

struct iset {
	struct out_interval *v;
	size_t n;
};

/* First index whose start is >= t (the list is sorted by start). */
static size_t lower_bound(const struct out_interval *v, size_t n, uint64_t t)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].start_ns < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The union of the intervals of v that start in [s, e), merged, in order. */
static int union_in(const struct out_interval *v, size_t n, uint64_t s, uint64_t e,
		    struct iset *out)
{
	size_t i = lower_bound(v, n, s), j = lower_bound(v, n, e);
	out->n = 0;
	out->v = malloc((j > i ? j - i : 1) * sizeof *out->v);
	if (!out->v)
		return -ENOMEM;
	for (; i < j; i++) {
		struct out_interval x = v[i];
		if (x.end_ns < x.start_ns)
			x.end_ns = x.start_ns;
		if (out->n && x.start_ns <= out->v[out->n - 1].end_ns) {
			if (x.end_ns > out->v[out->n - 1].end_ns)
				out->v[out->n - 1].end_ns = x.end_ns;
		} else {
			out->v[out->n++] = x;
		}
	}
	return 0;
}

static uint64_t length(const struct iset *a)
{
	uint64_t t = 0;
	for (size_t i = 0; i < a->n; i++)
		t += a->v[i].end_ns - a->v[i].start_ns;
	return t;
}

/* Length of the intersection of two merged sets. */
static uint64_t overlap(const struct iset *a, const struct iset *b)
{
	uint64_t t = 0;
	size_t i = 0, j = 0;
	while (i < a->n && j < b->n) {
		uint64_t s = a->v[i].start_ns > b->v[j].start_ns ? a->v[i].start_ns : b->v[j].start_ns;
		uint64_t e = a->v[i].end_ns < b->v[j].end_ns ? a->v[i].end_ns : b->v[j].end_ns;
		if (e > s)
			t += e - s;
		if (a->v[i].end_ns < b->v[j].end_ns)
			i++;
		else
			j++;
	}
	return t;
}

/* Gaps inside the union of a and b, and its first start and last end. */
static uint64_t gaps(const struct iset *a, const struct iset *b, uint64_t *first,
		     uint64_t *last)
{
	size_t i = 0, j = 0;
	uint64_t g = 0, reach = 0;
	int any = 0;
	while (i < a->n || j < b->n) {
		const struct out_interval *x;
		if (j >= b->n || (i < a->n && a->v[i].start_ns <= b->v[j].start_ns))
			x = &a->v[i++];
		else
			x = &b->v[j++];
		if (!any) {
			*first = x->start_ns;
			reach = x->end_ns;
			any = 1;
			continue;
		}
		if (x->start_ns > reach)
			g += x->start_ns - reach;
		if (x->end_ns > reach)
			reach = x->end_ns;
	}
	*last = reach;
	return any ? g : 0;
}

static void host_only(const struct out_step *s, struct out_step_row *row)
{
	uint64_t dur = s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0;
	row->device_id = -1;
	row->free_ = row->stage = dur;
}

int out_step_trace_row(const struct out_step *s, const struct out_device *d,
		       struct out_step_row *row)
{
	memset(row, 0, sizeof *row);
	row->step = s->number;
	if (!d) {
		host_only(s, row);
		return 0;
	}
	struct iset c = {0}, m = {0}, r = {0};
	int rc = union_in(d->compute, d->ncompute, s->start_ns, s->end_ns, &c);
	rc = rc ? rc : union_in(d->comm, d->ncomm, s->start_ns, s->end_ns, &m);
	rc = rc ? rc : union_in(d->recv, d->nrecv, s->start_ns, s->end_ns, &r);
	if (rc == 0) {
		uint64_t first = 0, last = 0;
		row->device_id = d->id;
		row->computing = length(&c);
		row->comm = length(&m);
		row->comm_not_overlapped = row->comm - overlap(&m, &c);
		row->overlapped = row->comm - row->comm_not_overlapped;
		row->free_ = gaps(&c, &m, &first, &last);
		row->bubble = length(&r);
		if (c.n || m.n) {
			uint64_t span = last - first;
			row->stage = span > row->bubble ? span - row->bubble : 0;
			row->preparing = (int64_t)(first - s->start_ns);
		}
		row->comm_not_overlapped_excl_recv = row->comm_not_overlapped > row->bubble ?
			row->comm_not_overlapped - row->bubble : 0;
	}
	free(c.v);
	free(m.v);
	free(r.v);
	return rc;
}

static int step_cmp(const void *pa, const void *pb)
{
	const struct out_step *a = pa, *b = pb;
	if (a->number != b->number)
		return a->number < b->number ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

static void write_row(struct csv *c, const struct out_step_row *w)
{
	csv_int(c, w->device_id);
	csv_uint(c, w->step);
	csv_ns_us(c, (int64_t)w->computing);
	csv_ns_us(c, (int64_t)w->comm_not_overlapped);
	csv_ns_us(c, (int64_t)w->overlapped);
	csv_ns_us(c, (int64_t)w->comm);
	csv_ns_us(c, (int64_t)w->free_);
	csv_ns_us(c, (int64_t)w->stage);
	csv_ns_us(c, (int64_t)w->bubble);
	csv_ns_us(c, (int64_t)w->comm_not_overlapped_excl_recv);
	csv_ns_us(c, w->preparing);
	csv_end_row(c);
}

int out_step_trace_write(const char *dir, struct out_step *steps, size_t nsteps,
			 const struct out_device *devs, size_t ndev)
{
	struct out_file o;
	struct csv c;
	int rc = out_file_open(&o, dir, "step_trace_time.csv");
	if (rc)
		return rc;
	if (nsteps)
		qsort(steps, nsteps, sizeof *steps, step_cmp);
	csv_init(&c, o.f);
	csv_header(&c, OUT_STEP_TRACE_HEADER);
	/* Rows by device, then step, as torch_npu sorts them. */
	for (size_t d = 0; d < (ndev ? ndev : 1) && !rc; d++) {
		for (size_t i = 0; i < nsteps && !rc; i++) {
			struct out_step_row w;
			rc = out_step_trace_row(&steps[i], ndev ? &devs[d] : NULL, &w);
			if (!rc)
				write_row(&c, &w);
		}
	}
	if (rc) {
		out_file_abort(&o);
		return rc;
	}
	return out_file_commit(&o, csv_finish(&c) != 0);
}
