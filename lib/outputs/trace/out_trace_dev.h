/*
 * Device events in trace_view.json, as Kineto writes them
 * (share/prof/doc/outputs.md, trace_view.json):
 *   kernel / gpu_memcpy / gpu_memset / cuda_sync: "X" on pid = device
 *     index, tid = stream, args "External id" (when the launching operator
 *     is known), "device", "stream", "correlation", then "bytes" and
 *     "memory bandwidth (GB/s)" for copies and sets, "registers per
 *     thread", "shared memory", "grid", "block" for kernels whose launch
 *     shape is known;
 *   collectives: "X" "kernel" on the device track with "bytes",
 *     "Collective name", "Process Group Name", "Process Group Ranks",
 *     "Rank" and, for send and receive, "Peer";
 *   cuda_runtime / cuda_driver: "X" on the calling thread with args
 *     "External id", "cbid", "correlation" (never "stream");
 *   ac2g flows: "s" at the call's start on its thread, "f" with "bp": "e"
 *     at the task's start on the device track, "id" = correlation.
 * "deviceProperties" (top level, before "traceEvents") holds one object
 * per device: "id", "name", "totalGlobalMem", "computeMajor",
 * "computeMinor", "numSms".
 */
#ifndef PROF_OUT_TRACE_DEV_H
#define PROF_OUT_TRACE_DEV_H

#include <stddef.h>
#include <stdint.h>
#include "outputs/trace/out_trace.h"
#include "raw/raw_format.h"

/* A device's properties (RAW_REC_DEV_INFO), for "deviceProperties". */
struct out_dev_info {
	uint32_t device, vendor;
	char *name, *uuid;
	uint64_t total_mem;
	uint32_t major, minor, sms;
};

void out_trace_dev_props(struct jo *j, const struct out_dev_info *d, size_t n);

/* What links a task to the host: 0 ids are left out (External id) or
 * written as 0 (correlation). */
struct out_dev_link { uint64_t correlation, ext_id; };

void out_trace_activity(struct out_trace *t, const struct raw_dev_activity *a, const char *cat,
			const char *name, int64_t tid, uint64_t start_ns,
			const struct out_dev_link *l);
/* sim_name: the simulated device's own name, kept as "sim name" in the
 * args when `name` is CUDA's for it (out_trace_sim.c); NULL: none. */
void out_trace_collective(struct out_trace *t, const struct raw_dev_collective *c,
			  const char *name, const char *sim_name, const char *group,
			  const char *ranks, uint64_t start_ns, const struct out_dev_link *l);
void out_trace_api(struct out_trace *t, int64_t pid, int64_t tid, const char *cat,
		   const char *name, const char *sim_name, uint64_t start_ns, uint64_t end_ns,
		   uint32_t cbid, const struct out_dev_link *l);
/* CUDA's name of a simulated device's API call, NULL when it has none;
 * NCCL's kernel name of a collective op (RAW_COLL_*) (out_trace_sim.c). */
const char *out_trace_sim_api(const char *name);
const char *out_trace_sim_coll(uint32_t op);
/* ph "s" (on the host) or "f" (on the device, "bp": "e"). */
void out_trace_flow(struct out_trace *t, const char *ph, uint64_t id, int64_t pid, int64_t tid,
		    uint64_t ns);
/* A counter ("C") event with n numeric args, three decimals. */
void out_trace_counter(struct out_trace *t, int64_t pid, uint64_t ns, const char *name,
		       const char *const *keys, const double *vals, int n);

#endif
