/*
 * trace_view.json: the timeline in Chrome trace JSON object form with
 * Kineto's conventions (share/prof/doc/outputs.md): metadata keys first
 * ("schemaVersion", "deviceProperties" when a device said its properties,
 * "displayTimeUnit", "baseTimeNanoseconds", and "distributedInfo":
 * {"rank": N} when the rank is known), then
 * "traceEvents", then "traceName". Timestamps are microseconds relative to
 * baseTimeNanoseconds, printed from integer ns with three decimals.
 * Written as events arrive, one per line; nothing is kept in memory.
 */
#ifndef PROF_OUT_TRACE_H
#define PROF_OUT_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include "common/json_out.h"
#include "outputs/out_file.h"

struct out_dev_info;

struct out_trace_meta {
	const struct out_dev_info *devs;  /* "deviceProperties"; none: left out */
	size_t ndevs;
	uint64_t base_mono_ns;   /* the monotonic time of ts 0 */
	uint64_t base_real_ns;   /* the same moment in CLOCK_REALTIME */
	int64_t rank;            /* -1: unknown, no distributedInfo */
};

struct out_trace {
	struct out_file file;
	struct jo j;
	uint64_t base;
	uint64_t events;
};

int out_trace_open(struct out_trace *t, const char *dir, const struct out_trace_meta *m);
/* Ends the JSON and renames the file into place. 0 or a negative errno. */
int out_trace_close(struct out_trace *t);
void out_trace_abort(struct out_trace *t);

/* Opens one event: {"ph": ph, "cat": cat, "name": name, "pid": .., "tid": ..,
 * "ts": ..; cat NULL leaves it out. Add keys with t->j, then call
 * out_trace_end. */
void out_trace_begin(struct out_trace *t, const char *ph, const char *cat,
		     const char *name, int64_t pid, int64_t tid, uint64_t ns);
void out_trace_end(struct out_trace *t);

/* An event line written in place (json_out.h: jo_item_at): the head of
 * an "X" event through "dur", with JO_ROOM bytes of room after it; the
 * caller writes the rest of the line (event lines are tight: no spaces)
 * and hands its end to out_trace_line_end. */
char *out_trace_x_at(struct out_trace *t, const char *cat, const char *name, int64_t pid,
		     int64_t tid, uint64_t start_ns, uint64_t end_ns);
void out_trace_line_end(struct out_trace *t, char *p);
/* A complete ("X") event; step_id >= 0 adds "Step Id", unfinished adds
 * "unfinished": true to its args. */
void out_trace_complete(struct out_trace *t, int64_t pid, int64_t tid, const char *cat,
			const char *name, uint64_t start_ns, uint64_t end_ns,
			int64_t step_id, int unfinished);

/* Metadata ("M") events. */
void out_trace_process(struct out_trace *t, int64_t pid, const char *name,
		       const char *label, int64_t sort_index);
void out_trace_thread(struct out_trace *t, int64_t pid, int64_t tid, const char *name,
		      int64_t sort_index);

/* ts relative to ts 0, in ns. */
int64_t out_trace_rel(const struct out_trace *t, uint64_t ns);

#endif
