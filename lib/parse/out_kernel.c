#include "parse/out_kernel.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "parse/out_file.h"

#define NA "N/A"

int out_kernel_open(struct out_kernel *k, const char *dir, uint64_t base_mono_ns)
{
	memset(k, 0, sizeof *k);
	k->base = base_mono_ns;
	k->spill = out_file_scratch(dir);
	if (!k->spill)
		return errno ? -errno : -EIO;
	csv_init(&k->c, k->spill);
	return 0;
}

void out_kernel_row(struct out_kernel *k, const struct out_kernel_row *r)
{
	struct csv *c = &k->c;
	if (fprintf(k->spill, "%" PRId32 ",%" PRIu64 ",", r->pid, r->attr_ns) < 0)
		c->error = 1;
	csv_uint(c, r->device);
	csv_str(c, NA);
	csv_uint(c, r->correlation);
	csv_uint(c, r->stream);
	csv_str(c, r->name);
	csv_str(c, r->type);
	csv_str(c, NA);
	csv_str(c, r->core);
	csv_ns_us(c, (int64_t)(r->start_ns - k->base));
	csv_ns_us(c, (int64_t)(r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0));
	csv_ns_us(c, (int64_t)r->wait_ns);
	csv_uint(c, r->blocks);
	csv_str(c, NA);
	csv_str(c, NA);
	csv_str(c, r->shapes ? r->shapes : NA);
	csv_str(c, r->types ? r->types : NA);
	for (int i = 0; i < 4; i++)
		csv_str(c, NA);
	csv_end_row(c);
	k->rows++;
}

/* Copies the rest of a spilled row, through its newline (one inside
 * quotes is part of a field, so lines are joined while a quote is open).
 * A line at a time: a byte at a time was a tenth of the whole parse.
 * 0, or -1 at the end of the spill. */
static int copy_row(FILE *in, FILE *out, char **line, size_t *cap)
{
	int quoted = 0, any = 0;
	ssize_t n;
	while ((n = getline(line, cap, in)) > 0) {
		any = 1;
		fwrite(*line, 1, (size_t)n, out);
		for (const char *q = *line; (q = memchr(q, '"', (size_t)(*line + n - q))); q++)
			quoted = !quoted;
		if (!quoted && (*line)[n - 1] == '\n')
			return 0;
	}
	return any ? 0 : -1;
}

static int write_rows(struct out_kernel *k, FILE *out, const struct out_step_find *f)
{
	int32_t pid;
	uint64_t ns;
	char *line = NULL;
	size_t cap = 0;
	rewind(k->spill);
	while (fscanf(k->spill, "%" SCNd32 ",%" SCNu64 ",", &pid, &ns) == 2) {
		int64_t step = f ? out_step_find(f, pid, ns) : -1;
		if (step >= 0)
			fprintf(out, "%" PRId64, step);
		putc(',', out);
		if (copy_row(k->spill, out, &line, &cap) != 0)
			break;
	}
	free(line);
	return ferror(k->spill) ? -EIO : 0;
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
	int failed = csv_finish(&k->c) != 0;
	if (!failed && k->spill)
		failed = write_rows(k, o.f, f) != 0;
	return out_file_commit(&o, csv_finish(&c) != 0 || failed);
}

void out_kernel_free(struct out_kernel *k)
{
	if (k->spill)
		fclose(k->spill);
	k->spill = NULL;
}
