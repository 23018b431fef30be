/*
 * An operator in trace_view.json, as Kineto writes one:
 *   {"ph": "X", "cat": "cpu_op", "name", "pid", "tid", "ts", "dur",
 *    "args": {"External id": N, "Input Dims": [...], "Input type": [...],
 *             "Call stack": "a;b", "Sequence number": N, "Fwd thread id": N}}
 * with the optional args only when recorded; "cat" is "user_annotation"
 * for a user annotation (torch.profiler.record_function), as in Kineto. Shapes and types are JSON
 * texts from the Python hooks; one that does not parse is written as a
 * string. Each distinct text (by address: strings are interned per
 * stream) is checked once; `seen` remembers the verdicts.
 */
#ifndef PROF_OUT_TRACE_OP_H
#define PROF_OUT_TRACE_OP_H

#include "outputs/out_op.h"
#include "outputs/trace/out_trace.h"
#include "common/idmap.h"

void out_trace_op(struct out_trace *t, struct parse_idmap *seen, const struct out_op *op);

#endif
