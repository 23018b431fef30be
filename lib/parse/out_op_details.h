/*
 * operator_details.csv (reference/ascend.md §2.3): one row per framework
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
 * operator's end. With --step-list the rows wait in a spill
 * (out_spill.h), keyed by their operator's start, and only the listed
 * steps' are written.
 */
#ifndef PROF_OUT_OP_DETAILS_H
#define PROF_OUT_OP_DETAILS_H

#include "common/csv_out.h"
#include "parse/out_file.h"
#include "parse/out_op.h"
#include "parse/out_step_find.h"

#define OUT_OP_DETAILS_HEADER "Name,Input Shapes,Call Stack,Host Self Duration(us)," \
	"Host Total Duration(us),Device Self Duration(us),Device Total Duration(us)," \
	"Device Self Duration With AICore(us),Device Total Duration With AICore(us)"

struct out_op_details {
	struct out_file file;
	struct csv c;
	struct out_file spill;       /* by_step: the rows until the steps are known */
};

/* 0 or a negative errno. */
int out_op_details_open(struct out_op_details *d, const char *dir, int by_step);
void out_op_details_row(struct out_op_details *d, const struct out_op *op);
/* f: the steps, for by_step. */
int out_op_details_close(struct out_op_details *d, const struct out_step_find *f);
void out_op_details_abort(struct out_op_details *d);

#endif
