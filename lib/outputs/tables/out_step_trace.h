/*
 * step_trace_time.csv (share/prof/doc/outputs.md): one row per step and
 * device. The columns follow torch_npu's DB-mode calculation: for each
 * step, take the device's compute, communication and receive operations
 * that START inside [host step start, host step end)
 * (each wholly, even when it runs past the step's end), and
 *   Computing      = length of the union of compute intervals
 *   Communication  = length of the union of communication intervals
 *   Communication(Not Overlapped) = Communication minus its overlap with Computing
 *   Overlapped     = Communication - Communication(Not Overlapped)
 *   Free           = gaps between the merged compute+communication intervals,
 *                    from the first to the last of them
 *   Bubble         = length of the union of receive intervals
 *   Stage          = (last end - first start of compute+communication) - Bubble
 *   Communication(Not Overlapped and Exclude Receive)
 *                  = max(Communication(Not Overlapped) - Bubble, 0)
 *   Preparing      = first device operation's start - host step start
 * With no device (host data only) a step gets one row with Device_id -1,
 * Free = Stage = the host step's duration and zeros elsewhere.
 * All values are µs with three decimals.
 *
 * The calculation streams: operations are fed in start order to an
 * accumulator of four running unions (compute, communication, both, and
 * receive), each a start, a reach and a total, so a step's row takes
 * constant memory however many operations it holds.
 */
#ifndef PROF_OUT_STEP_TRACE_H
#define PROF_OUT_STEP_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define OUT_STEP_TRACE_HEADER "Device_id,Step,Computing,Communication(Not Overlapped)," \
	"Overlapped,Communication,Free,Stage,Bubble," \
	"Communication(Not Overlapped and Exclude Receive),Preparing"
/* Appended after Ascend's columns when the rows come from several ranks
 * (a multi-rank run's combined output), so that each row says whose. */
#define OUT_STEP_TRACE_RANK ",Rank"
/* Appended last when two processes of one rank (or two without a rank)
 * have rows for one step: the rows' pid. */
#define OUT_STEP_TRACE_PID ",Pid"

/* A host step: ProfilerStep#number of process pid, on thread tid. */
struct out_step {
	int32_t pid, tid;
	uint64_t number;
	uint64_t start_ns, end_ns;
};

struct out_interval { uint64_t start_ns, end_ns; };

/* What an operation counts as. A receive is communication and bubble:
 * feed it as both. */
enum out_task { OUT_TASK_COMPUTE = 1, OUT_TASK_COMM = 2, OUT_TASK_BUBBLE = 3 };

/* A union of intervals fed in start order. */
struct out_union {
	int any;
	uint64_t first;      /* first start */
	uint64_t block;      /* start of the current merged block */
	uint64_t reach;      /* end of the current merged block */
	uint64_t total;      /* covered length */
	uint64_t gaps;       /* uncovered length between first and reach */
};

struct out_step_acc {
	struct out_union c, m, cm, r;  /* compute, communication, both, bubble */
};

void out_step_acc_reset(struct out_step_acc *a);
/* One operation. Operations come in start order; one that starts before
 * the block in progress (a record later than the reorder window) is cut
 * to the block's start. */
void out_step_acc_add(struct out_step_acc *a, enum out_task k, uint64_t start, uint64_t end);

/* One row, in ns (Preparing may be negative). */
struct out_step_row {
	int32_t device_id;
	int32_t pid;
	int64_t rank;            /* the process's; -1 unknown */
	uint64_t step;
	uint64_t computing, comm_not_overlapped, overlapped, comm, free_, stage, bubble,
		 comm_not_overlapped_excl_recv;
	int64_t preparing;
};

/* The row of step s from what `a` gathered on device `device`. */
void out_step_acc_row(const struct out_step_acc *a, const struct out_step *s, int32_t device,
		      struct out_step_row *row);
/* The host-only row of step s. */
void out_step_host_row(const struct out_step *s, struct out_step_row *row);
/* A host row that carries communication (torch.distributed's CPU
 * backends): `row`, computed as a device's, made a host row again. The
 * host's compute is not known: Computing and Overlapped 0, all
 * communication not overlapped; Stage the step's duration, Free what
 * communication leaves of it, Preparing 0. */
void out_step_host_comm(const struct out_step *s, struct out_step_row *row);

/* One device's activity as lists, each sorted by start_ns. */
struct out_device {
	int32_t id;
	const struct out_interval *compute; size_t ncompute;
	const struct out_interval *comm;    size_t ncomm;
	const struct out_interval *recv;    size_t nrecv;  /* bubble only */
};

/* The row of step `s` on device `d` (NULL: host only), through the
 * accumulator. */
void out_step_trace_row(const struct out_step *s, const struct out_device *d,
			struct out_step_row *row);

/* Sorts `rows` (by device, then step number, rank, pid) and writes
 * dir/step_trace_time.csv. 0 or a negative errno. */
int out_step_trace_write(const char *dir, struct out_step_row *rows, size_t nrows);

#endif
