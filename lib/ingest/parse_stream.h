/*
 * One raw stream as the parse sees it: the file, a cursor over its records,
 * and the mapping of their ticks onto monotonic ns. A second, quiet cursor
 * runs ahead of the first collecting clock pairs for the time map, so the
 * stream is read in one pass with constant memory (besides its strings).
 *
 * Timestamps handed out strictly increase within a stream: a record
 * stamped no later than the one before it is moved to 1 ns after it. So a
 * thread's ranges nest exactly however the clock mapping rounds, and a
 * child never ends (or starts) at the very ns of its parent, which
 * consumers that add ts + dur in floating point would misjudge. (A coarse
 * virtual TSC gives equal stamps to back-to-back records; the shift is a
 * few ns at most.) A framework stream is the exception: its records are
 * operators stamped with their start, and a parent and its first child
 * often start at the same ns, so there equal stamps stay equal (only a
 * stamp that goes back is raised to the one before it). A device stream
 * (dev.raw) is written out of order: it is read through a reorder window
 * (parse_reorder.h) as deep as the header's late_ns says the stream is
 * out of order, and its stamps are handed out as they are, equal or, for
 * the rare record later than the window, going back. The window
 * reads its records from the mapping again when it hands them out, so the
 * pages of the chunks before the oldest one with a record in the window
 * are given back as that one moves on (the cursor gives each chunk back
 * as it passes it, too).
 */
#ifndef PROF_PARSE_STREAM_H
#define PROF_PARSE_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "raw/raw_reader.h"
#include "raw/raw_timemap.h"
#include "ingest/parse_discover.h"
#include "ingest/parse_reorder.h"

struct model_proc;
struct model_thread;

struct parse_stream {
	struct raw_file file;
	struct raw_cursor cur;
	struct raw_cursor look;      /* clock pairs ahead of `cur` */
	int look_state;
	struct timemap tm;
	enum timemap_rate_src rate_src;
	const struct parse_src *src;
	size_t index;                /* position among the streams: breaks ties */
	uint64_t open_ns;            /* when the writer opened it (monotonic) */
	uint64_t last_ns;            /* latest timestamp handed out */
	uint64_t nrec;               /* records handed out */
	struct raw_rec rec;          /* the current record ... */
	uint64_t ns;                 /* ... and its monotonic time */
	struct model_proc *proc;     /* owned by the model */
	struct model_thread *thr;
	uint64_t host_prev_ns;       /* host streams: time of the previous sample */
	int reorder;                 /* a device stream: read through `rq` */
	int read_all;                /* `cur` reached the end */
	struct parse_reorder rq;
	uint32_t *chunk_refs;        /* records of each chunk in the window */
	uint64_t chunk_low;          /* chunks below it are done with */
};

/* Opens src->path. `run_tsc_hz` is the run's TSC rate, 0 if unknown.
 * Returns 0, or a negative errno (the file is named on `log`). */
int parse_stream_open(struct parse_stream *s, const struct parse_src *src,
		      size_t index, uint64_t run_tsc_hz, FILE *log);

/* Moves to the next event record (strings and clock pairs are used here,
 * not handed out): 1 (s->rec, s->ns set) or 0 at the end. */
int parse_stream_next(struct parse_stream *s);

/* The stream's last moment: its close pair when closed cleanly, else its
 * last record (else its open pair). */
uint64_t parse_stream_end_ns(const struct parse_stream *s);

/* The text of string `id` of this stream: "" for id 0, RAW_STRING_LOST
 * when its definition was lost. */
const char *parse_stream_str(const struct parse_stream *s, uint32_t id);

void parse_stream_close(struct parse_stream *s);

/* Gives the pages of chunks [from, to) of a mapped file back (the file
 * keeps them; a later read faults them in again), and the 64 KiB before
 * them: a page fault maps its neighbours in too. */
void parse_file_release(const struct raw_file *f, uint64_t from, uint64_t to);

#endif
