/*
 * The NVTX ranges torch's own NVTX observer pushes around every operator
 * (torch.autograd.profiler.emit_nvtx; ProfilerState.NVTX), told apart from
 * a program's ranges by their message, which torch 2.x builds as
 *
 *     <name>[, seq = <n>], op_id = <id>[, sizes = <shapes>][, input_op_ids = <ids>]
 *
 * (torch/csrc/profiler/util.cpp, getNvtxStr: seq when the op has an
 * autograd sequence number, op_id always, the observer asks for ids;
 * sizes and input_op_ids with record_shapes). torch 1.13 writes no op_id:
 * its ranges stay NVTX ranges. The agent reads these so that an
 * operator's record holds its name, not a message unique to each call.
 */
#ifndef PROF_TORCH_NVTX_H
#define PROF_TORCH_NVTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct torch_nvtx_op {
	size_t name_len;        /* the op's name: msg[0, name_len) */
	int64_t seq;            /* -1: none */
	uint64_t op_id;
	size_t sizes_at, sizes_len;   /* the shapes' JSON-like text; sizes_len 0: none */
};

/* Whether `msg` is such a range's message; fills *op when it is. */
bool torch_nvtx_op_parse(const char *msg, struct torch_nvtx_op *op);

/* The operator that runs an autograd node: it and what it calls are the
 * backward pass (torch's autograd engine names it so). */
#define TORCH_BACKWARD_PREFIX "autograd::engine::evaluate_function"

/* torch's record_function around a DataLoader's __next__: prof's own span
 * of the batch covers it (one, not two). */
#define TORCH_NEXT_PREFIX "enumerate(DataLoader)#"
/* torch.profiler's step annotation: the steps are prof's. */
#define TORCH_STEP_PREFIX "ProfilerStep#"

/* Whether an operator's name (or a message that starts with it) is one of
 * those two: not made an operator. */
bool torch_nvtx_left_out(const char *name);

/* Whether a forward name read from an NVTX range, which carries no
 * RecordScope, is a record_function annotation ("Optimizer.step#SGD.step",
 * a program's own region) rather than an operator: torch's operators are
 * "namespace::op", its autograd nodes "<Name>Backward[N]". */
bool torch_nvtx_is_annotation(const char *name);

#endif
