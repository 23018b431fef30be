#include "ingest/parse_merge.h"

#include <errno.h>
#include <stdlib.h>

static inline int less(const struct merge_item *a, const struct merge_item *b)
{
	return a->key != b->key ? a->key < b->key : a->tie < b->tie;
}

/* Puts `it` in the hole at i, moving smaller children up. */
static inline __attribute__((always_inline)) void sift_down(struct parse_merge *m, size_t i,
							    struct merge_item it)
{
	struct merge_item *h = m->heap;
	size_t n = m->n;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && less(&h[c + 1], &h[c]))
			c++;
		if (!less(&h[c], &it))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = it;
}

/* Reads the stream's next record into its item: a record or its end. */
static void load(struct merge_item *it)
{
	if (parse_stream_next(it->s)) {
		it->key = it->s->ns;
	} else {
		it->tie |= MERGE_TIE(1, 0, 0);
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
		int rank = kind == RAW_STREAM_FRAMEWORK ? 1 : kind == RAW_STREAM_DEVICE ? 2 : 0;
		m->heap[i] = (struct merge_item){ .tie = MERGE_TIE(0, rank, streams[i].index),
						  .s = &streams[i] };
		load(&m->heap[i]);
	}
	for (size_t i = n / 2; i-- > 0;)
		sift_down(m, i, m->heap[i]);
	return 0;
}

enum merge_ev parse_merge_next(struct parse_merge *m, struct parse_stream **s)
{
	if (m->pending) {
		/* Loaded into a copy that stays in registers (sift_down inlined):
		 * storing the key, then reading the item back whole, stalled on
		 * the store (a third of merging's time). */
		struct merge_item it = m->heap[0];
		load(&it);
		sift_down(m, 0, it);
		m->pending = NULL;
	}
	if (m->n == 0)
		return MERGE_END;
	struct merge_item *top = &m->heap[0];
	*s = top->s;
	if (!(top->tie & MERGE_TIE(1, 0, 0))) {
		m->pending = top->s;
		return MERGE_RECORD;
	}
	m->n--;
	sift_down(m, 0, m->heap[m->n]);
	return MERGE_STREAM_END;
}

void parse_merge_free(struct parse_merge *m)
{
	free(m->heap);
	m->heap = NULL;
	m->n = 0;
}
