/*
 * kernel_details.csv (share/prof/doc/outputs.md): one row per device task
 * (kernel, copy, set, collective), in start order per device stream. The
 * header is Ascend's Level1 header as the user guide documents it, without
 * the optional Context ID and metric columns; what prof does not know is
 * "N/A" (Model ID, OP State, Mix Block Num, HF32 Eligible, the formats and
 * output columns).
 *
 * Step Id is the step whose [start, end) holds the start of the API call
 * that launched the task (the task's own start when the launch is not
 * known), empty outside every step. Rows wait for their step as
 * out_stepwait.h says, in at most OUT_KERNEL_WAIT_MAX bytes of memory.
 */
#ifndef PROF_OUT_KERNEL_H
#define PROF_OUT_KERNEL_H

#include <stdint.h>
#include <stdio.h>
#include "common/csv_out.h"
#include "outputs/out_file.h"
#include "outputs/out_sink.h"   /* struct out_kernel_row */
#include "outputs/out_step_find.h"
#include "outputs/out_stepwait.h"

#define OUT_KERNEL_HEADER "Step Id,Device_id,Model ID,Task ID,Stream ID,Name,Type,OP State," \
	"Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Num,Mix Block Num," \
	"HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes," \
	"Output Data Types,Output Formats"

#define OUT_KERNEL_WAIT_MAX (8u << 20)

struct out_kernel {
	struct out_file out;         /* kernel_details.csv */
	struct csv oc;               /* writing it */
	struct out_stepwait wait;    /* rows until their step is known */
	uint64_t base;               /* monotonic ns of ts 0 */
	uint64_t rows;
};

/* Creates dir/kernel_details.csv.tmp. 0 or a negative errno. */
int out_kernel_open(struct out_kernel *k, const char *dir, uint64_t base_mono_ns);
void out_kernel_row(struct out_kernel *k, const struct out_kernel_row *r);
/* Writes the waiting rows, oldest first, while `step` knows their step;
 * those of steps --step-list (want, nwant; NULL: all) leaves out go. */
void out_kernel_settle(struct out_kernel *k, out_stepwait_step_fn step, void *ctx,
		       const uint64_t *want, size_t nwant);
/* Writes the rest (f knows every step) and renames the file into place.
 * 0 or a negative errno. */
int out_kernel_write(struct out_kernel *k, const struct out_step_find *f);
void out_kernel_free(struct out_kernel *k);

#endif
