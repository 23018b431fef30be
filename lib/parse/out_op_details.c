#include "parse/out_op_details.h"

int out_op_details_open(struct out_op_details *d, const char *dir)
{
	int rc = out_file_open(&d->file, dir, "operator_details.csv");
	if (rc)
		return rc;
	csv_init(&d->c, d->file.f);
	csv_header(&d->c, OUT_OP_DETAILS_HEADER);
	return 0;
}

void out_op_details_row(struct out_op_details *d, const struct out_op *op)
{
	struct csv *c = &d->c;
	csv_str(c, op->name);
	csv_str(c, op->shapes);
	csv_str(c, op->stack);
	csv_ns_us(c, (int64_t)op->self_ns);
	csv_ns_us(c, (int64_t)(op->end_ns - op->start_ns));
	csv_ns_us(c, (int64_t)op->dev_self_ns);
	csv_ns_us(c, (int64_t)op->dev_total_ns);
	csv_ns_us(c, (int64_t)op->kernel_self_ns);
	csv_ns_us(c, (int64_t)op->kernel_total_ns);
	csv_end_row(c);
}

int out_op_details_close(struct out_op_details *d)
{
	int failed = csv_finish(&d->c) != 0;
	return out_file_commit(&d->file, failed);
}

void out_op_details_abort(struct out_op_details *d)
{
	out_file_abort(&d->file);
}
