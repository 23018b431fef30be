/*
 * Putting a device stream back in time order. A backend writes dev.raw in
 * the order its buffers complete, not by start time: a record reaches the
 * file after its activity ended, so a long kernel comes after the short
 * ones that started while it ran. The parse reads such a stream through a
 * reorder window: a min-heap of records (by start, then file position)
 * that hands out its earliest record once the stream has been read past
 * that record's start + PARSE_REORDER_WINDOW_NS (10 s of device time), or
 * once the stream is read to its end.
 *
 * Most records come in order: those later than every record still waiting
 * go to a queue (already sorted, no heap work: the heap was a twentieth of
 * a parse's instructions); only the others go to the heap. The earliest
 * record is the earlier of the two heads.
 *
 * Memory: one 16-byte entry (start ns and the record's place in the
 * mapping) per record in the window, at most PARSE_REORDER_MAX entries
 * (32 MiB), and the file's pages the window spans (the page cache's); a full window hands out its earliest record early (counted in
 * `forced`). A record that arrives later than the window allows is still
 * handed out, after records that started later than it (counted in `late`).
 */
#ifndef PROF_PARSE_REORDER_H
#define PROF_PARSE_REORDER_H

#include <stddef.h>
#include <stdint.h>

#define PARSE_REORDER_WINDOW_NS (10ull * 1000000000ull)
#define PARSE_REORDER_MAX (1u << 21)

struct reorder_ent {
	uint64_t ns;
	const unsigned char *rec;  /* the record's header, in the mapping */
};

struct parse_reorder {
	struct reorder_ent *heap;  /* the records that came out of order */
	size_t nheap, cap;
	struct reorder_ent *run;   /* the in-order ones: a ring, oldest at head */
	size_t head, nrun, runcap; /* runcap: 0 or a power of two */
	size_t n;                  /* records waiting: nheap + nrun */
	uint64_t window_ns;        /* PARSE_REORDER_WINDOW_NS unless a test sets it */
	size_t max;                /* PARSE_REORDER_MAX unless a test sets it */
	uint64_t high;             /* latest start read so far */
	uint64_t last;             /* latest start handed out */
	uint64_t late, forced;
};

void reorder_init(struct parse_reorder *q);
/* Adds a record. 0, or -1 when out of memory (then nothing was added). */
int reorder_push(struct parse_reorder *q, uint64_t ns, const unsigned char *rec);
/* May the earliest record go now (the window is past it, or full)? */
int reorder_ripe(const struct parse_reorder *q);
/* Takes the earliest record; the heap must not be empty. */
struct reorder_ent reorder_pop(struct parse_reorder *q);
void reorder_free(struct parse_reorder *q);

#endif
