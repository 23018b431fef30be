#include "outputs/tables/out_op_details.h"

#include <string.h>

int out_op_details_open(struct out_op_details *d, const char *dir)
{
	memset(d, 0, sizeof *d);
	int rc = out_stepwait_init(&d->wait, &d->c, dir, OUT_STEP_LAST, OUT_OP_DETAILS_WAIT_MAX);
	if (rc)
		return rc;
	rc = out_file_open(&d->file, dir, "operator_details.csv");
	if (rc) {
		out_stepwait_free(&d->wait);
		return rc;
	}
	csv_init(&d->c, d->file.f);
	csv_background(&d->c);
	csv_header(&d->c, OUT_OP_DETAILS_HEADER);
	return 0;
}

/* A row's text, its step left out. */
static void render(struct csv *c, const void *row, const void *ctx)
{
	const struct out_op *op = row;
	(void)ctx;
	csv_str(c, op->name);
	csv_str(c, op->shapes);
	csv_str(c, op->stack);
	csv_ns_us(c, (int64_t)op->self_ns);
	csv_ns_us(c, (int64_t)(op->end_ns - op->start_ns));
	csv_ns_us(c, (int64_t)op->dev_self_ns);
	csv_ns_us(c, (int64_t)op->dev_total_ns);
	csv_ns_us(c, (int64_t)op->kernel_self_ns);
	csv_ns_us(c, (int64_t)op->kernel_total_ns);
	if (op->flops)
		csv_uint(c, op->flops);
	else
		csv_str(c, NULL);   /* none counted (with_flops off, or not a counted op) */
	csv_end_row(c);
}

void out_op_details_row(struct out_op_details *d, const struct out_op *op)
{
	out_stepwait_row(&d->wait, op->pid, op->start_ns, render, op, NULL);
}

void out_op_details_settle(struct out_op_details *d, out_stepwait_step_fn step, void *ctx,
			   const uint64_t *want, size_t nwant)
{
	out_stepwait_settle(&d->wait, step, ctx, want, nwant);
}

int out_op_details_close(struct out_op_details *d, const struct out_step_find *f)
{
	int err = out_stepwait_finish(&d->wait, d->file.f, f);
	out_stepwait_free(&d->wait);
	return out_file_commit(&d->file, err);
}

void out_op_details_abort(struct out_op_details *d)
{
	csv_abort(&d->c);
	out_stepwait_free(&d->wait);
	out_file_abort(&d->file);
}
