#include "parse/parse_reorder.h"

#include <stdlib.h>
#include <string.h>

void reorder_init(struct parse_reorder *q)
{
	memset(q, 0, sizeof *q);
	q->window_ns = PARSE_REORDER_WINDOW_NS;
	q->max = PARSE_REORDER_MAX;
}

static int before(const struct reorder_ent *a, const struct reorder_ent *b)
{
	if (a->ns != b->ns)
		return a->ns < b->ns;
	return a->rec < b->rec;
}

static void swap(struct reorder_ent *a, struct reorder_ent *b)
{
	struct reorder_ent t = *a;
	*a = *b;
	*b = t;
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
	q->heap[i] = (struct reorder_ent){ ns, rec };
	while (i > 0 && before(&q->heap[i], &q->heap[(i - 1) / 2])) {
		swap(&q->heap[i], &q->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
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

static void sift_down(struct parse_reorder *q)
{
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, best = i;
		if (l < q->n && before(&q->heap[l], &q->heap[best]))
			best = l;
		if (r < q->n && before(&q->heap[r], &q->heap[best]))
			best = r;
		if (best == i)
			return;
		swap(&q->heap[i], &q->heap[best]);
		i = best;
	}
}

struct reorder_ent reorder_pop(struct parse_reorder *q)
{
	struct reorder_ent top = q->heap[0];
	if (q->n >= q->max && top.ns + q->window_ns > q->high)
		q->forced++;
	q->heap[0] = q->heap[--q->n];
	sift_down(q);
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
