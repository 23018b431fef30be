/*
 * lib/ingest/: a run directory in, one time-ordered record stream out.
 * parse_discover.h finds the streams, parse_info.h reads
 * profiler_info.json, parse_stream.h opens a stream and maps its ticks onto
 * ns, parse_reorder.h puts a device stream back in start order,
 * parse_devinfo.h picks out the devices' properties ahead of the merge,
 * parse_rank.h says which rank each process image is; this merge hands
 * every stream's records to the model (lib/model) in time order.
 *
 * The k-way merge of all streams in time order: a binary heap of streams
 * keyed by their current record's time (ties: stream order), so memory is
 * one entry per stream whatever the length of the run. A stream's end is
 * an item of the merge too, at the stream's last moment, so whoever closes
 * what a stream left open does it in time order. At the same ns, records
 * of framework streams (operators, stamped with their start) come after
 * the others', so an op that starts at a step boundary is seen after it;
 * device streams come last, so a device call or kernel starting with an
 * operator is seen inside it, and one starting at a step boundary after
 * the boundary.
 */
#ifndef PROF_PARSE_MERGE_H
#define PROF_PARSE_MERGE_H

#include <stddef.h>
#include <stdint.h>
#include "ingest/parse_stream.h"

struct merge_item {
	uint64_t key;       /* ns of the record, or of the stream's end */
	uint64_t tie;       /* at the same key, smaller first: MERGE_TIE */
	struct parse_stream *s;
};

/* The order at the same ns, as one number: a stream's records before
 * stream ends; then by rank (0 first, then 1: framework, 2: device); then
 * by the stream's position. One comparison of two words instead of four
 * fields was a third of merging. */
#define MERGE_TIE(ended, rank, order) \
	((uint64_t)(ended) << 62 | (uint64_t)(rank) << 56 | (uint64_t)(order))

struct parse_merge {
	struct merge_item *heap;
	size_t n;
	struct parse_stream *pending;  /* returned last; advanced on the next call */
};

enum merge_ev {
	MERGE_END = 0,        /* every stream is done */
	MERGE_RECORD = 1,     /* (*s)->rec and (*s)->ns hold the next record */
	MERGE_STREAM_END = 2, /* *s has no more records */
};

/* Takes the streams (not owned) and reads the first record of each.
 * Returns 0 or -ENOMEM. */
int parse_merge_init(struct parse_merge *m, struct parse_stream *streams, size_t n);
enum merge_ev parse_merge_next(struct parse_merge *m, struct parse_stream **s);
void parse_merge_free(struct parse_merge *m);

#endif
