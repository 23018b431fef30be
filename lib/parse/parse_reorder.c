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

int reorder_push(struct parse_reorder *q, uint64_t ns, const unsigned char *rec)
{
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 256;
		struct reorder_ent *v = realloc(q->heap, cap * sizeof *v);
		if (!v)
			return -1;
		q->heap = v;
		q->cap = cap;
	}
	size_t i = q->n++;
	struct reorder_ent e = { ns, rec };
	while (i > 0 && before(&e, &q->heap[(i - 1) / ARITY])) {
		q->heap[i] = q->heap[(i - 1) / ARITY];
		i = (i - 1) / ARITY;
	}
	q->heap[i] = e;
	if (ns > q->high)
		q->high = ns;
	return 0;
}

int reorder_ripe(const struct parse_reorder *q)
{
	if (q->n == 0)
		return 0;
	return q->n >= q->max || q->heap[0].ns + q->window_ns <= q->high;
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
	size_t n = q->n, i = 0;
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
	struct reorder_ent top = q->heap[0];
	if (q->n >= q->max && top.ns + q->window_ns > q->high)
		q->forced++;
	if (--q->n)
		sift_down(q, q->heap[q->n]);
	if (top.ns < q->last)
		q->late++;
	else
		q->last = top.ns;
	return top;
}

void reorder_free(struct parse_reorder *q)
{
	free(q->heap);
	q->heap = NULL;
	q->n = q->cap = 0;
}
