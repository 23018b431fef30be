#include "parse/out_op_details.h"

#include <string.h>

#include "parse/out_spill.h"

int out_op_details_open(struct out_op_details *d, const char *dir, int by_step)
{
	memset(&d->spill, 0, sizeof d->spill);
	int rc = by_step ? out_spill_open(&d->spill, dir) : 0;
	if (rc)
		return rc;
	rc = out_file_open(&d->file, dir, "operator_details.csv");
	if (rc) {
		if (d->spill.f)
			out_file_abort(&d->spill);
		return rc;
	}
	csv_init(&d->c, d->spill.f ? d->spill.f : d->file.f);
	if (!d->spill.f) {
		csv_background(&d->c);
		csv_header(&d->c, OUT_OP_DETAILS_HEADER);
	}
	return 0;
}

void out_op_details_row(struct out_op_details *d, const struct out_op *op)
{
	struct csv *c = &d->c;
	if (d->spill.f)
		out_spill_key(c, op->pid, op->start_ns);
	csv_name(c, op->name);
	csv_name(c, op->shapes);
	csv_name(c, op->stack);
	csv_ns_us(c, (int64_t)op->self_ns);
	csv_ns_us(c, (int64_t)(op->end_ns - op->start_ns));
	csv_ns_us(c, (int64_t)op->dev_self_ns);
	csv_ns_us(c, (int64_t)op->dev_total_ns);
	csv_ns_us(c, (int64_t)op->kernel_self_ns);
	csv_ns_us(c, (int64_t)op->kernel_total_ns);
	csv_end_row(c);
}

static int replay(struct out_op_details *d, const struct out_step_find *f)
{
	struct csv c;
	csv_init(&c, d->file.f);
	csv_header(&c, OUT_OP_DETAILS_HEADER);
	int err = csv_finish(&c);
	if (!err)
		err = out_spill_replay(d->spill.f, d->file.f, f, OUT_STEP_NONE);
	out_file_abort(&d->spill);
	return err;
}

int out_op_details_close(struct out_op_details *d, const struct out_step_find *f)
{
	int err = csv_finish(&d->c);
	if (d->spill.f && !err)
		err = replay(d, f);
	else if (d->spill.f)
		out_file_abort(&d->spill);
	return out_file_commit(&d->file, err);
}

void out_op_details_abort(struct out_op_details *d)
{
	csv_abort(&d->c);
	if (d->spill.f)
		out_file_abort(&d->spill);
	out_file_abort(&d->file);
}
