/*
 * From merged records to timeline events: per process image and per thread
 * state (range stacks, cross-thread ranges waiting for their end, the step
 * boundary, thread names), fed one record at a time in time order. What it
 * keeps grows with the processes, threads, open ranges and steps, never
 * with the number of records.
 *
 * Rules (share/prof/doc/outputs.md says them for users):
 *  - RANGE_PUSH/POP on a thread -> "X" user_annotation; nesting is exact
 *    because a stream's timestamps never go back. A pop with an empty
 *    stack is counted and ignored. Ranges open when the stream ends close
 *    at its last moment with "unfinished": true.
 *  - RANGE_START/END, matched by id within a process image, -> async "b" /
 *    "e" pairs (string id "<pid>.<image>.<id>"). An end without a start is
 *    counted and ignored; a start without an end ends at the process's last
 *    moment, "unfinished".
 *  - STEP n ends step n of the process: "ProfilerStep#n" X on the calling
 *    thread, from the previous boundary (the first: from when recording
 *    began in the process) to this record. Recording switched (back) on
 *    moves the boundary to that moment. The agent numbers steps while
 *    paused too but records none, so a step whose number does not follow
 *    the previous one, with no switch-on since, has an unknown start: it
 *    is only a boundary (counted in steps_unknown_start). RECORDING records
 *    in a stream of no process (the launcher's) apply to every process.
 *    A step starting where recording began starts no earlier than the
 *    innermost range still open on its thread (a range around the whole
 *    loop would otherwise overlap step 1 partially). Ranges that cross a
 *    step boundary (pushed in step n, popped in step n+1) do overlap the
 *    steps partially, as in Kineto traces.
 *  - HOST_SAMPLE -> counters on a process "Host" (the launcher's pid) and a
 *    host_usage.csv row.
 */
#ifndef PROF_PARSE_MODEL_H
#define PROF_PARSE_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "parse/out_host.h"
#include "parse/out_meta.h"
#include "parse/out_step_trace.h"
#include "parse/out_trace.h"
#include "parse/parse_idmap.h"
#include "parse/parse_stream.h"

struct model_range {
	const char *name;          /* in the stream's mapping */
	uint64_t start_ns;
};

struct model_thread {
	int32_t tid;
	int has_stream;
	struct model_range *stack;
	size_t depth, cap;
	char comm[RAW_NAME_MAX + 1];   /* from the stream header */
	const char *name;              /* latest RAW_REC_THREAD_NAME, or NULL */
};

struct model_proc {
	const char *image;             /* "<pid>.<n>", from the source */
	int32_t pid;
	long n;
	const char *cmdline, *exe, *rank;   /* RAW_REC_PROCESS; NULL if none */
	char comm[RAW_NAME_MAX + 1];
	uint64_t first_ns, last_ns;
	int recording, seen_recording;
	int resumed;                   /* switched on since the last boundary */
	uint64_t step_from, steps, last_step;
	struct parse_idmap async;      /* id -> struct model_async */
	struct model_thread **threads;
	size_t nthreads, capthreads;
};

struct model_counts {
	uint64_t unmatched_pops, unmatched_ends;
	uint64_t unfinished_ranges, unfinished_async;
	uint64_t steps_unknown_start, lost_records, host_samples;
};

struct parse_model {
	struct model_proc **procs;
	size_t nprocs;
	struct out_trace *trace;
	struct out_host *host;
	struct out_meta *meta;
	FILE *log;
	struct out_step *steps;        /* one per recorded step: for step_trace_time.csv */
	size_t nsteps, capsteps;
	int32_t host_pids[8];
	size_t nhost;
	struct model_counts n;
};

/* Builds the processes and threads of the streams and links each stream
 * to them. 0 or -ENOMEM. */
int model_init(struct parse_model *m, struct parse_stream *streams, size_t n,
	       struct out_trace *trace, struct out_host *host, struct out_meta *meta,
	       FILE *log);
/* One record: s->rec at s->ns. */
void model_record(struct parse_model *m, struct parse_stream *s);
/* The stream has no more records. */
void model_stream_end(struct parse_model *m, struct parse_stream *s);
/* Closes what is still open and writes the process and thread metadata. */
void model_finish(struct parse_model *m);
void model_free(struct parse_model *m);

#endif
