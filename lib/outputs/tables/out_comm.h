/*
 * communication.json and communication_matrix.json (the shape of Ascend's;
 * share/prof/doc/outputs.md), from the collectives the device backends record.
 *
 * Collectives are attributed to the step of their process whose
 * [start, end) holds their start; with no step in the run, all go under
 * the key "step"; with steps, those outside every step are left out (as
 * torch_npu does). Steps are known only when they end, so collectives wait
 * in a scratch file per process (fixed-size records, in start order); the
 * files are read back once every step is known and merged by step number,
 * holding one step's collectives at a time. Memory: the collectives of
 * one step.
 *
 * communication.json: {"step<N>": {"p2p": {...}, "collective": {...}}};
 * p2p holds send and receive, collective the rest. Each collective is one
 * entry keyed "<name>__<pid>_<k>@<group>" (name as the backend gave it, k
 * counting the process's collectives in the group from 1), then "Total Op
 * Info" when there is any. prof sees each collective whole, not its
 * transfers and waits: Transit Time = Elapse Time, Wait, Synchronization,
 * Idle and their ratios are 0, "Large Packet Ratio" is 0, and the one
 * transport, named after the device family ("SIM", "CUDA"), carries the
 * collective's bytes as one packet. Bandwidth(GB/s) = (MB / 1024) /
 * (ms / 1000). Start Timestamp(us) is µs since ts 0 (as in trace_view.json).
 *
 * communication_matrix.json: {"step<N>": {"p2p"|"collective": {
 * "<type>-top1@<group>" | -middle | -bottom1 | -bottom2 | -bottom3 | -total:
 * {"<src>-<dst>": {"Transport Type", "Transit Size(MB)", "Transit Time(ms)",
 * "Bandwidth(GB/s)", "Op Name"}}}}}, ranks local to the group (positions in
 * its rank list). A send is the link rank-peer, a receive peer-rank; a
 * collective, whose transfers prof does not see, is this rank's own link
 * rank-rank. Per (type, group, link) the instances are ranked by bandwidth:
 * top1 the highest, middle the median, bottom1..3 the lowest three (when
 * there are that many), total the sums. <type> is allreduce, allgather,
 * broadcast, reducescatter, send, receive, alltoall, reduce.
 *
 * Times in ms and sizes in MB (2^20 bytes) have six decimals, bandwidths
 * and ratios four.
 */
#ifndef PROF_OUT_COMM_H
#define PROF_OUT_COMM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "outputs/out_file.h"
#include "outputs/out_sink.h"   /* struct out_coll */
#include "outputs/out_step_find.h"

struct out_comm_src {
	const void *owner;            /* the process image */
	struct out_file spill;
};

struct out_comm {
	char *dir;
	struct out_comm_src *src;
	size_t n;
	int error;
};

int out_comm_init(struct out_comm *c, const char *dir);
/* Spills one collective of process image `owner`. */
void out_comm_add(struct out_comm *c, const void *owner, const struct out_coll *r);
/* Writes both files. `have_steps`: the run has steps (else every
 * collective is under "step"). 0 or a negative errno. */
int out_comm_write(struct out_comm *c, const struct out_step_find *f, int have_steps,
		   uint64_t base_mono_ns);
void out_comm_free(struct out_comm *c);

#endif
