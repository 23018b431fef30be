/*
 * Reading the operators out of Kineto's trace JSON, the file torch 2.x's
 * _ProfilerResult.save() writes (what torch.profiler's export_chrome_trace
 * writes): its "traceEvents" whose "ph" is "X" and "cat" "cpu_op" or
 * "user_annotation", with the fields prof keeps. A scanner of that one
 * shape, not a JSON library: one pass, no tree, strings unescaped in
 * place, libc only (so that the agent could use it too).
 *
 * Times: "ts" and "dur" are microseconds written with up to three
 * decimals (Kineto prints nanoseconds as "{us}.{ns:03}"), read as integer
 * nanoseconds without a double in between; "ts" is relative to the file's
 * "baseTimeNanoseconds" in Kineto from 2024 on, absolute before, and
 * prof's reader needs neither: the clock marks in the same file give the
 * offset onto CLOCK_MONOTONIC.
 */
#ifndef PROF_KINETO_READ_H
#define PROF_KINETO_READ_H

#include <stddef.h>
#include <stdint.h>

struct kineto_op {
	const char *name;     /* inside the caller's buffer, unescaped, NUL-ended */
	int64_t start_ns;     /* the file's clock */
	int64_t dur_ns;
	int64_t tid;          /* the OS thread id (Kineto's "tid" of a CPU op) */
	int64_t seq;          /* "Sequence number", -1 when absent */
	int64_t fwd_tid;      /* "Fwd thread id": torch's thread id, 0 when absent */
	int user;             /* "cat": "user_annotation" (record_function) */
	int backward;         /* not read: kineto_convert's, from nesting */
	/* record_shapes: "Input Dims" and "Input type" as their JSON text in
	 * the caller's buffer (offset, length; 0 long: absent), the layout
	 * prof's shapes and types have */
	uint32_t shapes_at, shapes_len, types_at, types_len;
};

struct kineto_ops {
	const char *buf;      /* what kineto_read read: the kept texts are in it */
	struct kineto_op *v;
	size_t n, cap;
	size_t skipped;       /* traceEvents that are not operators (other "ph" or "cat") */
};

/* Scans buf (len bytes, NUL at buf[len], modified: strings are unescaped
 * in place) and appends its operators to out. Returns 0, -EINVAL when the
 * text is not the JSON of a trace (*at: the byte offset where it went
 * wrong), -ENOMEM. */
int kineto_read(char *buf, size_t len, struct kineto_ops *out, size_t *at);
void kineto_ops_free(struct kineto_ops *o);

#endif
