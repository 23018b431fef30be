#include "ingest/parse_reorder.h"

#include <stdlib.h>
#include <string.h>

void reorder_init(struct parse_reorder *q)
{
	memset(q, 0, sizeof *q);
	q->window_ns = PARSE_REORDER_WINDOW_NS;
	q->max = PARSE_REORDER_MAX;
	q->run_cap = PARSE_REORDER_RUN;
}

static inline int before(const struct reorder_ent *a, const struct reorder_ent *b)
{
	if (a->ns != b->ns)
		return a->ns < b->ns;
	return a->rec < b->rec;
}

/* The records far out of order: a 4-ary heap (children of i: 4i+1 ..
 * 4i+4), half the levels of a binary one, a node's children sharing a
 * cache line or two. */
#define ARITY 4

static int heap_reserve(struct parse_reorder *q, size_t more)
{
	if (q->nheap + more <= q->cap)
		return 0;
	size_t cap = q->cap ? q->cap : 256;
	while (cap < q->nheap + more)
		cap *= 2;
	struct reorder_ent *v = realloc(q->heap, cap * sizeof *v);
	if (!v)
		return -1;
	q->heap = v;
	q->cap = cap;
	return 0;
}

static void heap_push(struct parse_reorder *q, struct reorder_ent e)
{
	size_t i = q->nheap++;
	while (i > 0 && before(&e, &q->heap[(i - 1) / ARITY])) {
		q->heap[i] = q->heap[(i - 1) / ARITY];
		i = (i - 1) / ARITY;
	}
	q->heap[i] = e;
}

/* Puts `e` in the hole at the root: the hole goes down the smallest
 * child's way to a leaf, then `e` goes back up from there (it came from
 * the heap's end, so it seldom rises far). */
static void heap_sift_down(struct parse_reorder *q, struct reorder_ent e)
{
	struct reorder_ent *h = q->heap;
	size_t n = q->nheap, i = 0;
	for (;;) {
		size_t c = ARITY * i + 1;
		if (c >= n)
			break;
		size_t last = c + ARITY < n ? c + ARITY : n, best = c;
		for (size_t k = c + 1; k < last; k++)
			if (before(&h[k], &h[best]))
				best = k;
		h[i] = h[best];
		i = best;
	}
	while (i > 0) {
		size_t parent = (i - 1) / ARITY;
		if (!before(&e, &h[parent]))
			break;
		h[i] = h[parent];
		i = parent;
	}
	h[i] = e;
}

/* The closed runs: a binary min-heap of a few hundred nodes at most, by
 * each run's head. The run at the top usually stays there for many
 * records, so sifting down stops at the first compare. */
static void runs_sift_up(struct parse_reorder *q, size_t i)
{
	struct reorder_node x = q->runs[i];
	while (i > 0 && before(&x.head, &q->runs[(i - 1) / 2].head)) {
		q->runs[i] = q->runs[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	q->runs[i] = x;
}

static void runs_sift_down(struct parse_reorder *q)
{
	struct reorder_node x = q->runs[0], *h = q->runs;
	size_t n = q->nruns, i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && before(&h[c + 1].head, &h[c].head))
			c++;
		if (!before(&h[c].head, &x.head))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

/* A run's array: the spare one if there is one. */
static struct reorder_ent *run_array(struct parse_reorder *q)
{
	struct reorder_ent *v = q->spare;
	q->spare = NULL;
	return v ? v : malloc(q->run_cap * sizeof *v);
}

static void run_array_done(struct parse_reorder *q, struct reorder_ent *v, size_t cap)
{
	if (!q->spare && cap == q->run_cap)
		q->spare = v;
	else
		free(v);
}

/* The open run joins the closed runs, if it still holds records. */
static int open_close(struct parse_reorder *q)
{
	struct reorder_run *o = &q->open;
	if (o->pos == o->len) {
		run_array_done(q, o->v, o->cap);
		return 0;
	}
	struct reorder_run *r = malloc(sizeof *r);
	if (!r)
		return -1;
	if (q->nruns == q->runs_cap) {
		size_t cap = q->runs_cap ? q->runs_cap * 2 : 16;
		struct reorder_node *v = realloc(q->runs, cap * sizeof *v);
		if (!v) {
			free(r);
			return -1;
		}
		q->runs = v;
		q->runs_cap = cap;
	}
	*r = *o;
	q->runs[q->nruns] = (struct reorder_node){ r->v[r->pos], r };
	runs_sift_up(q, q->nruns++);
	return 0;
}

/* Room for one more record in the open run: its handed-out front given
 * back when that is most of it, else a new open run. */
static int open_room(struct parse_reorder *q)
{
	struct reorder_run *o = &q->open;
	if (o->len < o->cap)
		return 0;
	if (o->pos && o->pos >= o->len / 2) {
		memmove(o->v, o->v + o->pos, (o->len - o->pos) * sizeof *o->v);
		o->len -= o->pos;
		o->pos = 0;
		return 0;
	}
	if (q->run_cap == 0)
		q->run_cap = 1;
	struct reorder_ent *v = run_array(q);
	if (!v)
		return -1;
	if (o->v && open_close(q) != 0) {
		run_array_done(q, v, q->run_cap);
		return -1;
	}
	*o = (struct reorder_run){ v, 0, 0, q->run_cap };
	return 0;
}

/* Puts e in the open run, in order, if it belongs within the last
 * PARSE_REORDER_SCAN entries; 0 if it belongs further back. */
static int open_put(struct reorder_run *o, struct reorder_ent e)
{
	if (o->len == o->pos || !before(&e, &o->v[o->len - 1])) {
		o->v[o->len++] = e;   /* in order, as most are: no memmove call */
		return 1;
	}
	size_t i = o->len;
	size_t stop = o->len - o->pos > PARSE_REORDER_SCAN ? o->len - PARSE_REORDER_SCAN : o->pos;
	while (i > stop && before(&e, &o->v[i - 1]))
		i--;
	if (i == stop && stop > o->pos && before(&e, &o->v[stop - 1]))
		return 0;
	memmove(o->v + i + 1, o->v + i, (o->len - i) * sizeof e);
	o->v[i] = e;
	o->len++;
	return 1;
}

int reorder_push(struct parse_reorder *q, uint64_t ns, const unsigned char *rec)
{
	struct reorder_ent e = { ns, rec };
	if (open_room(q) != 0)
		return -1;
	if (!open_put(&q->open, e)) {
		if (heap_reserve(q, 1) != 0)
			return -1;
		heap_push(q, e);
	}
	q->n++;
	if (ns > q->high)
		q->high = ns;
	return 0;
}

enum { FROM_OPEN, FROM_RUNS, FROM_HEAP };

/* The earliest waiting record: the earliest of the three heads. */
static const struct reorder_ent *earliest(const struct parse_reorder *q, int *from)
{
	const struct reorder_ent *best = NULL;
	if (q->open.pos < q->open.len) {
		best = &q->open.v[q->open.pos];
		*from = FROM_OPEN;
	}
	if (q->nruns && (!best || before(&q->runs[0].head, best))) {
		best = &q->runs[0].head;
		*from = FROM_RUNS;
	}
	if (q->nheap && (!best || before(&q->heap[0], best))) {
		best = &q->heap[0];
		*from = FROM_HEAP;
	}
	return best;
}

int reorder_ripe(const struct parse_reorder *q)
{
	int from;
	if (q->n == 0)
		return 0;
	return q->n >= q->max || earliest(q, &from)->ns + q->window_ns <= q->high;
}

/* Is a record waiting elsewhere earlier than h, the top run's head? */
static int overtaken(const struct parse_reorder *q, const struct reorder_ent *h)
{
	if (q->open.pos < q->open.len && before(&q->open.v[q->open.pos], h))
		return 1;
	if (q->nheap && before(&q->heap[0], h))
		return 1;
	for (size_t c = 1; c <= 2 && c < q->nruns; c++)
		if (before(&q->runs[c].head, h))
			return 1;
	return 0;
}

/* The top run's head is gone. A run overtaken with a quarter of it left
 * gives its records to the heap: a few records late by far must not hold
 * a whole run's memory while the window moves on. */
static void runs_advance(struct parse_reorder *q)
{
	struct reorder_run *r = q->runs[0].run;
	size_t left = r->len - ++r->pos;
	int gone = left == 0;
	if (!gone) {
		q->runs[0].head = r->v[r->pos];
		if (left * 4 <= r->cap && overtaken(q, &q->runs[0].head) &&
		    heap_reserve(q, left) == 0) {
			for (size_t k = r->pos; k < r->len; k++)
				heap_push(q, r->v[k]);
			gone = 1;
		}
	}
	if (gone) {
		run_array_done(q, r->v, r->cap);
		free(r);
		q->runs[0] = q->runs[--q->nruns];
	}
	if (q->nruns)
		runs_sift_down(q);
}

struct reorder_ent reorder_pop(struct parse_reorder *q)
{
	int from = FROM_OPEN;
	struct reorder_ent top = *earliest(q, &from);
	if (q->n >= q->max && top.ns + q->window_ns > q->high)
		q->forced++;
	if (from == FROM_OPEN) {
		if (++q->open.pos == q->open.len)
			q->open.pos = q->open.len = 0;
	} else if (from == FROM_RUNS) {
		runs_advance(q);
	} else if (--q->nheap) {
		heap_sift_down(q, q->heap[q->nheap]);
	}
	q->n--;
	if (top.ns < q->last)
		q->late++;
	else
		q->last = top.ns;
	return top;
}

void reorder_free(struct parse_reorder *q)
{
	for (size_t i = 0; i < q->nruns; i++) {
		free(q->runs[i].run->v);
		free(q->runs[i].run);
	}
	free(q->runs);
	free(q->open.v);
	free(q->spare);
	free(q->heap);
	q->runs = NULL;
	q->heap = q->spare = NULL;
	q->open = (struct reorder_run){ 0 };
	q->n = q->nruns = q->runs_cap = q->nheap = q->cap = 0;
}
