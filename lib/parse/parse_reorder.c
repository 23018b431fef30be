#include "parse/parse_reorder.h"

#include <stdlib.h>
#include <string.h>

void reorder_init(struct parse_reorder *q)
{
	memset(q, 0, sizeof *q);
	q->window_ns = PARSE_REORDER_WINDOW_NS;
	q->max = PARSE_REORDER_MAX;
}

#define ARITY 4 /* see sift_down */

static inline int before(const struct reorder_ent *a, const struct reorder_ent *b)
{
	if (a->ns != b->ns)
		return a->ns < b->ns;
	return a->rec < b->rec;
}

static int heap_push(struct parse_reorder *q, struct reorder_ent e)
{
	if (q->nheap == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 256;
		struct reorder_ent *v = realloc(q->heap, cap * sizeof *v);
		if (!v)
			return -1;
		q->heap = v;
		q->cap = cap;
	}
	size_t i = q->nheap++;
	while (i > 0 && before(&e, &q->heap[(i - 1) / ARITY])) {
		q->heap[i] = q->heap[(i - 1) / ARITY];
		i = (i - 1) / ARITY;
	}
	q->heap[i] = e;
	return 0;
}

static struct reorder_ent *run_at(const struct parse_reorder *q, size_t k)
{
	return &q->run[(q->head + k) & (q->runcap - 1)];
}

/* Doubles the ring, its entries moved to the front in order. */
static int run_grow(struct parse_reorder *q)
{
	size_t cap = q->runcap ? q->runcap * 2 : 256;
	struct reorder_ent *v = malloc(cap * sizeof *v);
	if (!v)
		return -1;
	for (size_t k = 0; k < q->nrun; k++)
		v[k] = *run_at(q, k);
	free(q->run);
	q->run = v;
	q->runcap = cap;
	q->head = 0;
	return 0;
}

int reorder_push(struct parse_reorder *q, uint64_t ns, const unsigned char *rec)
{
	struct reorder_ent e = { ns, rec };
	int in_order = q->nrun == 0 || before(run_at(q, q->nrun - 1), &e);
	if (in_order) {
		if (q->nrun == q->runcap && run_grow(q) != 0)
			return -1;
		*run_at(q, q->nrun++) = e;
	} else if (heap_push(q, e) != 0) {
		return -1;
	}
	q->n++;
	if (ns > q->high)
		q->high = ns;
	return 0;
}

/* The earliest waiting record: the run's head or the heap's top. */
static const struct reorder_ent *earliest(const struct parse_reorder *q, int *from_heap)
{
	const struct reorder_ent *r = q->nrun ? run_at(q, 0) : NULL;
	const struct reorder_ent *h = q->nheap ? &q->heap[0] : NULL;
	*from_heap = h && (!r || before(h, r));
	return *from_heap ? h : r;
}

int reorder_ripe(const struct parse_reorder *q)
{
	int from_heap;
	if (q->n == 0)
		return 0;
	return q->n >= q->max || earliest(q, &from_heap)->ns + q->window_ns <= q->high;
}

/*
 * The heap is 4-ary (children of i: 4i+1 .. 4i+4): half the levels of a
 * binary heap, and a node's children share a cache line or two, which
 * matters when the window holds millions of records.
 *
 * Puts `e` in the hole at the root: the hole goes down the smallest child's
 * way to a leaf, then `e` goes back up from there (it came from the heap's
 * end, so it seldom rises far). The order is total (file positions differ),
 * so the records come out as with any heap.
 */
static void sift_down(struct parse_reorder *q, struct reorder_ent e)
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

struct reorder_ent reorder_pop(struct parse_reorder *q)
{
	int from_heap;
	struct reorder_ent top = *earliest(q, &from_heap);
	if (q->n >= q->max && top.ns + q->window_ns > q->high)
		q->forced++;
	if (!from_heap) {
		q->head = (q->head + 1) & (q->runcap - 1);
		q->nrun--;
	} else if (--q->nheap) {
		sift_down(q, q->heap[q->nheap]);
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
	free(q->heap);
	free(q->run);
	q->heap = q->run = NULL;
	q->n = q->nheap = q->cap = q->nrun = q->runcap = q->head = 0;
}
