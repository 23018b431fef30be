#include "parse/out_kernel.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "parse/out_file.h"
#include "parse/out_spill.h"

#define NA "N/A"

int out_kernel_open(struct out_kernel *k, const char *dir, uint64_t base_mono_ns)
{
	memset(k, 0, sizeof *k);
	k->base = base_mono_ns;
	int rc = out_spill_open(&k->spill, dir);
	if (rc)
		return rc;
	csv_init(&k->c, k->spill.f);
	return 0;
}

void out_kernel_row(struct out_kernel *k, const struct out_kernel_row *r)
{
	struct csv *c = &k->c;
	out_spill_key(c, r->pid, r->attr_ns);
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
	csv_lit(c, NA);
	csv_lit(c, NA);
	csv_str(c, r->shapes ? r->shapes : NA);
	csv_str(c, r->types ? r->types : NA);
	for (int i = 0; i < 4; i++)
		csv_lit(c, NA);
	csv_end_row(c);
	k->rows++;
}

int out_kernel_write(struct out_kernel *k, const char *dir, const struct out_step_find *f)
{
	struct out_file o;
	struct csv c;
	int rc = out_file_open(&o, dir, "kernel_details.csv");
	if (rc)
		return rc;
	csv_init(&c, o.f);
	csv_header(&c, OUT_KERNEL_HEADER);
	int failed = csv_finish(&c) != 0;   /* the header before the rows */
	failed |= csv_finish(&k->c) != 0;
	if (!failed && k->spill.f)
		failed = out_spill_replay(k->spill.f, o.f, f, 1) != 0;
	return out_file_commit(&o, failed);
}

void out_kernel_free(struct out_kernel *k)
{
	if (k->spill.f)
		out_file_abort(&k->spill);
}
