/*
 * Operator flushes that torch wrote itself: with PROF_OPS_KINETO_SAVE=1 on
 * torch 2.x, prof's Python hooks end a flush with torch's own C++ export
 * (_ProfilerResult.save) into raw/<image>/kineto-<n>.json and a note of
 * prof's, kineto-<n>.meta, instead of converting each event in Python on
 * the program's thread. prof's launcher turns them into a framework
 * stream, raw/<image>/fwk.raw, the same records the agent's fw.raw holds,
 * while the program runs (launcher/fw_ingest.h); the parse does the same
 * with what is left, before the streams are found, into fwk.<i>.raw. The
 * JSON and the note are removed once their records are in a stream.
 *
 * The note (text, a line each): "pid P", "tid T" (the OS thread that ran
 * the profiler), "keep_from NS" (operators starting earlier are warm-up,
 * on CLOCK_MONOTONIC), and one "mark T0 T1" per clock mark: the
 * monotonic times around each aten::empty the hooks called inside the
 * "prof::clock_sync" range (ops.py says why).
 */
#ifndef PROF_PARSE_KINETO_H
#define PROF_PARSE_KINETO_H

#include <stdint.h>
#include <stdio.h>

#include "ingest/kineto_read.h"
#include "raw/raw_writer.h"

#define KINETO_MARKS_MAX 32

struct kineto_meta {
	int32_t pid, tid;
	uint64_t keep_from;
	unsigned nmarks;
	uint64_t marks[KINETO_MARKS_MAX][2];
};

/* Reads a note; 0, or -EINVAL naming the bad line in *line. */
int kineto_meta_parse(const char *text, struct kineto_meta *m, unsigned *line);

/* One flush's operators (reordered) onto CLOCK_MONOTONIC into w, as the
 * agent writes them: backward flags from nesting, forward threads found
 * by sequence number. Returns the operators written, or -EINVAL (*why
 * says what is missing), -ENOMEM. */
long kineto_convert(struct kineto_ops *ops, const struct kineto_meta *m, struct raw_writer *w,
		    const char **why);

/* The flushes waiting in an image directory: their numbers n (of
 * kineto-<n>.meta, whose JSON is whole: the note is written after it) in
 * order, in malloc'd *ks; *orphans: JSON files without a note (a save
 * cut short, or one in progress). Returns the count, or -ENOMEM. */
long kineto_list(int dirfd, long **ks, long *orphans);

/* Flush n of the image directory dirfd (named `image` in what log is
 * told; NULL: nothing said) into w; 0, or -1 with its files left. */
int kineto_flush_into(int dirfd, const char *image, long n, struct raw_writer *w, FILE *log,
		      long *ops);

/* Its two files, once converted. */
void kineto_flush_remove(int dirfd, long n);

/* Every image directory of raw_dir: its flushes converted, in their
 * order, into one new stream. What cannot be read is said on log and left
 * in place. Returns the flushes converted (0: none there). */
long parse_kineto_ingest(const char *raw_dir, FILE *log);

#endif
