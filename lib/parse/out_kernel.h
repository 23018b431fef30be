/*
 * kernel_details.csv (reference/ascend.md §2.2): one row per device task
 * (kernel, copy, set, collective), in start order per device stream. The
 * header is Ascend's Level1 header as the user guide documents it, without
 * the optional Context ID and metric columns; what prof does not know is
 * "N/A" (Model ID, OP State, Mix Block Num, HF32 Eligible, the formats and
 * output columns).
 *
 * Step Id is the step whose [start, end) holds the start of the API call
 * that launched the task (the task's own start when the launch is not
 * known), empty outside every step. Steps are known only when they end, so
 * rows wait, in memory, in the order they came, and go to the file as the
 * model says their step is settled (out_kernel_settle). Rows that would
 * wait for more than OUT_KERNEL_WAIT_MAX bytes (a process that never
 * marks steps, a very long step) go to a spill (out_spill.h) instead, with
 * every row after them, and are written at the end: the file is the same
 * either way. Memory: at most OUT_KERNEL_WAIT_MAX.
 */
#ifndef PROF_OUT_KERNEL_H
#define PROF_OUT_KERNEL_H

#include <stdint.h>
#include <stdio.h>
#include "common/csv_out.h"
#include "parse/out_file.h"
#include "parse/out_step_find.h"

#define OUT_KERNEL_HEADER "Step Id,Device_id,Model ID,Task ID,Stream ID,Name,Type,OP State," \
	"Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Num,Mix Block Num," \
	"HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes," \
	"Output Data Types,Output Formats"

struct out_kernel_row {
	int32_t pid;
	uint64_t attr_ns;            /* the moment that picks the step */
	uint32_t device, stream;
	uint64_t correlation;        /* Task ID */
	const char *name;
	const char *type;            /* KERNEL, MEMCPY, MEMSET, COMMUNICATION */
	const char *core;            /* SIM, CUDA */
	uint64_t start_ns, end_ns;
	uint64_t wait_ns;            /* since the previous task on the stream ended */
	uint64_t blocks;             /* grid size; 0 when not a kernel or not known */
	const char *shapes, *types;  /* the launching operator's; NULL: not known */
};

#define OUT_KERNEL_WAIT_MAX (8u << 20)

/* Rows waiting for their step: each a struct out_kernel_wait, then its
 * text; [head, len) of buf. */
struct out_kernel_wait {
	int32_t pid;
	uint32_t len;
	uint64_t ns;
};

struct out_kernel {
	struct out_file out;         /* kernel_details.csv */
	struct csv oc;               /* writing it */
	struct csv c;                /* a row's text: in memory, or into the spill */
	unsigned char *wait;
	size_t head, len, cap;
	int spilling;                /* rows go to the spill from now on */
	int failed;                  /* a row could not be kept: the -errno why */
	char *dir;
	struct out_file spill;
	uint64_t base;               /* monotonic ns of ts 0 */
	uint64_t rows;
};

/* A waiting row's step: OUT_KERNEL_WAIT while it may still change, else
 * its number or -1 (in no step), as out_step_find will say at the end. */
#define OUT_KERNEL_WAIT INT64_MIN
typedef int64_t (*out_kernel_step_fn)(void *ctx, int32_t pid, uint64_t ns);

/* Creates dir/kernel_details.csv.tmp. 0 or a negative errno. */
int out_kernel_open(struct out_kernel *k, const char *dir, uint64_t base_mono_ns);
void out_kernel_row(struct out_kernel *k, const struct out_kernel_row *r);
/* Writes the waiting rows, oldest first, while `step` knows their step;
 * those of steps --step-list (want, nwant; NULL: all) leaves out go. */
void out_kernel_settle(struct out_kernel *k, out_kernel_step_fn step, void *ctx,
		       const uint64_t *want, size_t nwant);
/* Writes the rest (f knows every step) and renames the file into place.
 * 0 or a negative errno. */
int out_kernel_write(struct out_kernel *k, const struct out_step_find *f);
void out_kernel_free(struct out_kernel *k);

#endif
