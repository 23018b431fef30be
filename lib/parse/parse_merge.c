#include "parse/parse_merge.h"

#include <errno.h>
#include <stdlib.h>

static int less(const struct merge_item *a, const struct merge_item *b)
{
	if (a->key != b->key)
		return a->key < b->key;
	if (a->ended != b->ended)      /* a stream's records before ends at the same ns */
		return a->ended < b->ended;
	if (a->rank != b->rank)        /* an op starting at a step boundary is in the next step */
		return a->rank < b->rank;
	return a->order < b->order;
}

static void swap(struct merge_item *a, struct merge_item *b)
{
	struct merge_item t = *a;
	*a = *b;
	*b = t;
}

static void sift_down(struct parse_merge *m, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, best = i;
		if (l < m->n && less(&m->heap[l], &m->heap[best]))
			best = l;
		if (r < m->n && less(&m->heap[r], &m->heap[best]))
			best = r;
		if (best == i)
			return;
		swap(&m->heap[i], &m->heap[best]);
		i = best;
	}
}

/* Reads the stream's next record into its item: a record or its end. */
static void load(struct merge_item *it)
{
	if (parse_stream_next(it->s)) {
		it->key = it->s->ns;
	} else {
		it->ended = 1;
		it->key = parse_stream_end_ns(it->s);
	}
}

int parse_merge_init(struct parse_merge *m, struct parse_stream *streams, size_t n)
{
	m->n = n;
	m->pending = NULL;
	m->heap = calloc(n ? n : 1, sizeof *m->heap);
	if (!m->heap)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint32_t kind = streams[i].file.hdr.kind;
		m->heap[i] = (struct merge_item){ .order = streams[i].index, .s = &streams[i],
			.rank = kind == RAW_STREAM_FRAMEWORK ? 1 : kind == RAW_STREAM_DEVICE ? 2 : 0 };
		load(&m->heap[i]);
	}
	for (size_t i = n / 2; i-- > 0;)
		sift_down(m, i);
	return 0;
}

enum merge_ev parse_merge_next(struct parse_merge *m, struct parse_stream **s)
{
	if (m->pending) {
		load(&m->heap[0]);
		sift_down(m, 0);
		m->pending = NULL;
	}
	if (m->n == 0)
		return MERGE_END;
	struct merge_item *top = &m->heap[0];
	*s = top->s;
	if (!top->ended) {
		m->pending = top->s;
		return MERGE_RECORD;
	}
	m->heap[0] = m->heap[--m->n];
	sift_down(m, 0);
	return MERGE_STREAM_END;
}

void parse_merge_free(struct parse_merge *m)
{
	free(m->heap);
	m->heap = NULL;
	m->n = 0;
}
