/*
 * Putting a device stream back in time order. A backend writes dev.raw in
 * the order its buffers complete, not by start time: a record reaches the
 * file after its activity ended, so a long kernel comes after the short
 * ones that started while it ran. The parse reads such a stream through a
 * reorder window of records, ordered by start then file position, that
 * hands out its earliest record once the stream has been read past
 * that record's start + window_ns, or once the stream is read to its end.
 * window_ns is the writer's late_ns when the header keeps one (no record
 * starts more than that before one written ahead of it, so the order is
 * exact), else PARSE_REORDER_WINDOW_NS (10 s of device time).
 *
 * Records are mostly in order, and those that are not are seldom far out
 * of it (a long kernel is reported a few records late), so the window is
 * kept as sorted runs, not one heap (whose lower levels, over a window of
 * a million records, were a cache miss each: a twentieth of a parse):
 * - the open run takes the newest records: appended when in order, else
 *   put in place if that is within PARSE_REORDER_SCAN entries of its
 *   end;
 * - a full open run is closed; the closed runs sit in a small min-heap by
 *   their first records;
 * - the rest (records further out of order) go to a 4-ary heap.
 * The earliest record is the earliest of the three heads, so the records
 * come out in exactly the order one heap over all of them would give.
 *
 * Memory: one 16-byte entry (start ns and the record's place in the
 * mapping) per record in the window, at most PARSE_REORDER_MAX entries
 * (32 MiB), held in runs of PARSE_REORDER_RUN; and the file's pages the
 * window spans (the page cache's). A closed run that is overtaken (an
 * earlier record waits elsewhere) when a quarter of it or less is left
 * gives those records to the heap: a few stray records cannot pin whole
 * runs. A full window hands out its earliest record early (counted in
 * `forced`). A record that arrives later than the window allows is still
 * handed out, after records that started later than it (counted in
 * `late`).
 */
#ifndef PROF_PARSE_REORDER_H
#define PROF_PARSE_REORDER_H

#include <stddef.h>
#include <stdint.h>

#define PARSE_REORDER_WINDOW_NS (10ull * 1000000000ull)
#define PARSE_REORDER_MAX (1u << 21)

#define PARSE_REORDER_RUN 8192   /* entries of a run (128 KiB) */
#define PARSE_REORDER_SCAN 64    /* how far back the open run puts a record */

struct reorder_ent {
	uint64_t ns;
	const unsigned char *rec;  /* the record's header, in the mapping */
};

/* Sorted entries, v[pos] the earliest still waiting. */
struct reorder_run {
	struct reorder_ent *v;
	size_t pos, len, cap;
};

struct reorder_node {
	struct reorder_ent head;   /* run->v[run->pos], here for the heap's compares */
	struct reorder_run *run;
};

struct parse_reorder {
	struct reorder_run open;   /* the newest records */
	struct reorder_node *runs; /* the closed runs, a min-heap by head */
	size_t nruns, runs_cap;
	struct reorder_ent *heap;  /* the records far out of order */
	size_t nheap, cap;
	struct reorder_ent *spare; /* a run's array, kept for the next open run */
	size_t n;                  /* records waiting, in all three */
	uint64_t window_ns;        /* PARSE_REORDER_WINDOW_NS, or the header's late_ns */
	size_t max;                /* PARSE_REORDER_MAX unless a test sets it */
	size_t run_cap;            /* PARSE_REORDER_RUN unless a test sets it */
	uint64_t high;             /* latest start read so far */
	uint64_t last;             /* latest start handed out */
	uint64_t late, forced;
};

void reorder_init(struct parse_reorder *q);
/* Adds a record. 0, or -1 when out of memory (then nothing was added). */
int reorder_push(struct parse_reorder *q, uint64_t ns, const unsigned char *rec);
/* May the earliest record go now (the window is past it, or full)? */
int reorder_ripe(const struct parse_reorder *q);
/* Takes the earliest record; the window must not be empty. */
struct reorder_ent reorder_pop(struct parse_reorder *q);
void reorder_free(struct parse_reorder *q);

#endif
