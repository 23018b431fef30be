#include "outputs/tables/out_step_trace.h"

#include <stdlib.h>
#include <string.h>

#include "common/csv_out.h"
#include "outputs/out_file.h"

void out_step_acc_reset(struct out_step_acc *a)
{
	memset(a, 0, sizeof *a);
}

static void union_add(struct out_union *u, uint64_t start, uint64_t end)
{
	if (!u->any) {
		*u = (struct out_union){ .any = 1, .first = start, .block = start, .reach = end,
					 .total = end - start };
		return;
	}
	if (start < u->block)          /* late: cut to the block in progress */
		start = u->block;
	if (end <= start)
		return;
	if (start > u->reach) {
		u->gaps += start - u->reach;
		u->block = start;
		u->total += end - start;
		u->reach = end;
	} else if (end > u->reach) {
		u->total += end - u->reach;
		u->reach = end;
	}
}

void out_step_acc_add(struct out_step_acc *a, enum out_task k, uint64_t start, uint64_t end)
{
	if (end < start)
		end = start;
	switch (k) {
	case OUT_TASK_COMPUTE:
		union_add(&a->c, start, end);
		union_add(&a->cm, start, end);
		break;
	case OUT_TASK_COMM:
		union_add(&a->m, start, end);
		union_add(&a->cm, start, end);
		break;
	case OUT_TASK_BUBBLE:
		union_add(&a->r, start, end);
		break;
	}
}

void out_step_host_row(const struct out_step *s, struct out_step_row *row)
{
	uint64_t dur = s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0;
	memset(row, 0, sizeof *row);
	row->device_id = -1;
	row->rank = -1;
	row->pid = s->pid;
	row->step = s->number;
	row->free_ = row->stage = dur;
}

void out_step_host_comm(const struct out_step *s, struct out_step_row *row)
{
	uint64_t dur = s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0;
	row->computing = row->overlapped = 0;
	row->comm_not_overlapped = row->comm;
	row->comm_not_overlapped_excl_recv = row->comm > row->bubble ? row->comm - row->bubble : 0;
	row->stage = dur;
	row->free_ = dur > row->comm ? dur - row->comm : 0;
	row->preparing = 0;
}

void out_step_acc_row(const struct out_step_acc *a, const struct out_step *s, int32_t device,
		      struct out_step_row *row)
{
	memset(row, 0, sizeof *row);
	row->device_id = device;
	row->rank = -1;
	row->pid = s->pid;
	row->step = s->number;
	row->computing = a->c.total;
	row->comm = a->m.total;
	uint64_t both = a->c.total + a->m.total;
	uint64_t overlap = both > a->cm.total ? both - a->cm.total : 0;
	row->comm_not_overlapped = row->comm - (overlap < row->comm ? overlap : row->comm);
	row->overlapped = row->comm - row->comm_not_overlapped;
	row->free_ = a->cm.gaps;
	row->bubble = a->r.total;
	if (a->cm.any) {
		uint64_t span = a->cm.reach - a->cm.first;
		row->stage = span > row->bubble ? span - row->bubble : 0;
		row->preparing = (int64_t)(a->cm.first - s->start_ns);
	}
	row->comm_not_overlapped_excl_recv = row->comm_not_overlapped > row->bubble ?
		row->comm_not_overlapped - row->bubble : 0;
}

/* Feeds the intervals of the three lists that start in [s, e), by start. */
static void feed(struct out_step_acc *a, const struct out_device *d, uint64_t s, uint64_t e)
{
	const struct out_interval *v[3] = { d->compute, d->comm, d->recv };
	size_t n[3] = { d->ncompute, d->ncomm, d->nrecv }, i[3] = { 0, 0, 0 };
	static const enum out_task kind[3] = { OUT_TASK_COMPUTE, OUT_TASK_COMM, OUT_TASK_BUBBLE };
	for (;;) {
		int best = -1;
		for (int k = 0; k < 3; k++)
			if (i[k] < n[k] && (best < 0 || v[k][i[k]].start_ns < v[best][i[best]].start_ns))
				best = k;
		if (best < 0)
			return;
		const struct out_interval *x = &v[best][i[best]++];
		if (x->start_ns >= s && x->start_ns < e)
			out_step_acc_add(a, kind[best], x->start_ns, x->end_ns);
	}
}

void out_step_trace_row(const struct out_step *s, const struct out_device *d,
			struct out_step_row *row)
{
	if (!d) {
		out_step_host_row(s, row);
		return;
	}
	struct out_step_acc a;
	out_step_acc_reset(&a);
	feed(&a, d, s->start_ns, s->end_ns);
	out_step_acc_row(&a, s, d->id, row);
}

static int row_cmp(const void *pa, const void *pb)
{
	const struct out_step_row *a = pa, *b = pb;
	if (a->device_id != b->device_id)
		return a->device_id < b->device_id ? -1 : 1;
	if (a->step != b->step)
		return a->step < b->step ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

/* Rows of more than one rank: the combined output of a multi-rank run. */
static int several_ranks(const struct out_step_row *rows, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (rows[i].rank != rows[0].rank)
			return 1;
	return 0;
}

/* Rows of several processes of one rank (or of none), which Rank does not
 * tell apart: a rank torchrun restarted, workers that each train (Hogwild),
 * a sweep of trainings. Sorted rows: a rank's processes are adjacent
 * within each device and step. */
static int several_procs_of_a_rank(const struct out_step_row *rows, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (rows[i].rank == rows[i - 1].rank && rows[i].pid != rows[i - 1].pid &&
		    rows[i].device_id == rows[i - 1].device_id && rows[i].step == rows[i - 1].step)
			return 1;
	return 0;
}

static void write_row(struct csv *c, const struct out_step_row *w, int rank_col, int pid_col)
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
	if (rank_col) {
		if (w->rank >= 0)
			csv_int(c, w->rank);
		else
			csv_str(c, "");
	}
	if (pid_col)
		csv_int(c, w->pid);
	csv_end_row(c);
}

int out_step_trace_write(const char *dir, struct out_step_row *rows, size_t nrows)
{
	struct out_file o;
	struct csv c;
	int rc = out_file_open(&o, dir, "step_trace_time.csv");
	if (rc)
		return rc;
	if (nrows)   /* stable enough: ties are equal rows of one pid */
		qsort(rows, nrows, sizeof *rows, row_cmp);
	int rank_col = several_ranks(rows, nrows), pid_col = several_procs_of_a_rank(rows, nrows);
	static const char *const header[2][2] = {
		{ OUT_STEP_TRACE_HEADER, OUT_STEP_TRACE_HEADER OUT_STEP_TRACE_PID },
		{ OUT_STEP_TRACE_HEADER OUT_STEP_TRACE_RANK,
		  OUT_STEP_TRACE_HEADER OUT_STEP_TRACE_RANK OUT_STEP_TRACE_PID },
	};
	csv_init(&c, o.f);
	csv_header(&c, header[rank_col][pid_col]);
	for (size_t i = 0; i < nrows; i++)
		write_row(&c, &rows[i], rank_col, pid_col);
	return out_file_commit(&o, csv_finish(&c));
}
