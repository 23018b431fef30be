/*
 * operator_details.csv (share/prof/doc/outputs.md): one row per framework
 * operator, written as each one closes (so a child's row comes before its
 * parent's: rows are in the order operators end on their thread).
 * Input Shapes is the shapes text as recorded (a JSON array, "" when not
 * recorded); Call Stack the frames joined by ';'. Host Total is the
 * operator's duration, Host Self that less its direct children's on the
 * same thread. Device Self is the duration of the device tasks (kernels,
 * copies, sets, collectives) launched by the operator's own device calls,
 * Device Total that and its descendants'; the "With AICore" columns count
 * kernels only. 0 for host-only operators. µs with three decimals.
 * The row of an operator that launched device work is written once that
 * work is known (parse_model.h), so such rows come later than their
 * operator's end.
 * Step Id, a column after Ascend's, is the step whose [start, end) holds
 * the operator's start (an operator never overlaps a step partially:
 * parse_model.h), empty outside every step (model set-up, evaluation).
 * Rows wait for it as out_stepwait.h says, in at most
 * OUT_OP_DETAILS_WAIT_MAX bytes of memory; with --step-list only the
 * listed steps' rows are written.
 */
#ifndef PROF_OUT_OP_DETAILS_H
#define PROF_OUT_OP_DETAILS_H

#include "common/csv_out.h"
#include "outputs/out_file.h"
#include "outputs/out_op.h"
#include "outputs/out_step_find.h"
#include "outputs/out_stepwait.h"

#define OUT_OP_DETAILS_HEADER "Name,Input Shapes,Call Stack,Host Self Duration(us)," \
	"Host Total Duration(us),Device Self Duration(us),Device Total Duration(us)," \
	"Device Self Duration With AICore(us),Device Total Duration With AICore(us),FLOPs,Step Id"

/* A step of a large model's operators with their stacks: 30 000 rows of
 * 1 KiB. */
#define OUT_OP_DETAILS_WAIT_MAX (32u << 20)

struct out_op_details {
	struct out_file file;
	struct csv c;
	struct out_stepwait wait;    /* rows until their step is known */
};

/* 0 or a negative errno. */
int out_op_details_open(struct out_op_details *d, const char *dir);
void out_op_details_row(struct out_op_details *d, const struct out_op *op);
/* As out_kernel_settle. */
void out_op_details_settle(struct out_op_details *d, out_stepwait_step_fn step, void *ctx,
			   const uint64_t *want, size_t nwant);
/* f: every step, and --step-list's. */
int out_op_details_close(struct out_op_details *d, const struct out_step_find *f);
void out_op_details_abort(struct out_op_details *d);

#endif
