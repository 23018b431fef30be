/*
 * A framework operator as the outputs see it: closed (its end clamped to
 * its parent's and to its step's), with its self time known. Strings point
 * into the stream's mapping.
 */
#ifndef PROF_OUT_OP_H
#define PROF_OUT_OP_H

#include <stdint.h>

struct out_op {
	int32_t pid;
	int64_t tid;                 /* as written in the trace */
	uint64_t id;                 /* "External id": unique in the trace */
	const char *name;
	const char *shapes;          /* JSON text; NULL: not recorded */
	const char *types;           /* JSON text; NULL: not recorded */
	const char *stack;           /* frames joined by ';'; NULL: not recorded */
	uint64_t start_ns, end_ns;
	uint64_t self_ns;            /* end - start less its children's durations */
	int64_t seq;                 /* autograd sequence number; < 0: none */
	int32_t fwd_tid;             /* 0: none */
	int user;                    /* a user annotation (record_function), not an ATen op */
	int merged;                  /* it only wraps one op of its own name: not written
				      * (its row, trace event and count are that op's) */
	/* Device time of the tasks its calls launched (self) and its
	 * descendants' too (total): all tasks, and kernels only. */
	uint64_t dev_self_ns, dev_total_ns, kernel_self_ns, kernel_total_ns;
	uint64_t flops;              /* with_flops: torch's count; 0: none */
};

#endif
