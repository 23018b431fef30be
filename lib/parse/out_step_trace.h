/*
 * step_trace_time.csv (reference/ascend.md §2.5, §4): one row per step and
 * device. The columns come from interval sets, following torch_npu's
 * DB-mode calculation (ascend.md §4.3): for each step, take the device's
 * compute, communication and receive operations that START inside
 * [host step start, host step end), and
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
 */
#ifndef PROF_OUT_STEP_TRACE_H
#define PROF_OUT_STEP_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define OUT_STEP_TRACE_HEADER "Device_id,Step,Computing,Communication(Not Overlapped)," \
	"Overlapped,Communication,Free,Stage,Bubble," \
	"Communication(Not Overlapped and Exclude Receive),Preparing"

/* A host step: ProfilerStep#number of process pid, on thread tid. */
struct out_step {
	int32_t pid, tid;
	uint64_t number;
	uint64_t start_ns, end_ns;
};

struct out_interval { uint64_t start_ns, end_ns; };

/* One device's activity; each list sorted by start_ns. */
struct out_device {
	int32_t id;
	const struct out_interval *compute; size_t ncompute;
	const struct out_interval *comm;    size_t ncomm;
	const struct out_interval *recv;    size_t nrecv;  /* receive ops: the bubble */
};

/* One row, in ns (Preparing may be negative). */
struct out_step_row {
	int32_t device_id;
	uint64_t step;
	uint64_t computing, comm_not_overlapped, overlapped, comm, free_, stage, bubble,
		 comm_not_overlapped_excl_recv;
	int64_t preparing;
};

/* The row of step `s` on device `d` (NULL: host only). 0 or -ENOMEM. */
int out_step_trace_row(const struct out_step *s, const struct out_device *d,
		       struct out_step_row *row);

/* Sorts `steps` (by step number, then pid, then start) and writes
 * dir/step_trace_time.csv with a row per step and device (a row per step
 * when ndev is 0). 0 or a negative errno. */
int out_step_trace_write(const char *dir, struct out_step *steps, size_t nsteps,
			 const struct out_device *devs, size_t ndev);

#endif
