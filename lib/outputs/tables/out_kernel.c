#include "outputs/tables/out_kernel.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "outputs/out_file.h"

#define NA "N/A"

int out_kernel_open(struct out_kernel *k, const char *dir, uint64_t base_mono_ns)
{
	memset(k, 0, sizeof *k);
	k->base = base_mono_ns;
	int rc = out_stepwait_init(&k->wait, &k->oc, dir, OUT_STEP_FIRST, OUT_KERNEL_WAIT_MAX);
	if (rc)
		return rc;
	rc = out_file_open(&k->out, dir, "kernel_details.csv");
	if (rc) {
		out_stepwait_free(&k->wait);
		return rc;
	}
	csv_init(&k->oc, k->out.f);
	csv_background(&k->oc);
	csv_header(&k->oc, OUT_KERNEL_HEADER);
	return 0;
}

/* A row's text, Step Id left out. */
static void row_text(const struct out_kernel *k, struct csv *c, const struct out_kernel_row *r)
{
	csv_uint(c, r->device);
	csv_lit(c, NA);
	csv_uint(c, r->correlation);
	csv_uint(c, r->stream);
	csv_str(c, r->name);
	csv_str(c, r->type);
	csv_lit(c, NA);
	csv_str(c, r->core);
	csv_ns_us(c, (int64_t)(r->start_ns - k->base));
	csv_ns_us(c, (int64_t)(r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0));
	csv_ns_us(c, (int64_t)r->wait_ns);
	csv_uint(c, r->blocks);
	csv_lit(c, NA "," NA);
	csv_str(c, r->shapes ? r->shapes : NA);
	csv_str(c, r->types ? r->types : NA);
	csv_lit(c, NA "," NA "," NA "," NA);
	csv_end_row(c);
}

static void render(struct csv *c, const void *row, const void *ctx)
{
	row_text(ctx, c, row);
}

void out_kernel_row(struct out_kernel *k, const struct out_kernel_row *r)
{
	k->rows++;
	out_stepwait_row(&k->wait, r->pid, r->attr_ns, render, r, k);
}

void out_kernel_settle(struct out_kernel *k, out_stepwait_step_fn step, void *ctx,
		       const uint64_t *want, size_t nwant)
{
	out_stepwait_settle(&k->wait, step, ctx, want, nwant);
}

int out_kernel_write(struct out_kernel *k, const struct out_step_find *f)
{
	int err = out_stepwait_finish(&k->wait, k->out.f, f);
	return out_file_commit(&k->out, err);
}

void out_kernel_free(struct out_kernel *k)
{
	csv_abort(&k->oc);
	if (k->out.f)
		out_file_abort(&k->out);
	out_stepwait_free(&k->wait);
}
