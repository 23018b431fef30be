#define _GNU_SOURCE
#include "outputs/out_spill.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_out.h"
#include "outputs/out_file.h"

int out_spill_open(struct out_file *spill, const char *dir)
{
	return out_file_scratch(spill, dir);
}

/* The key as 12 bytes, not text: formatting and scanning it with stdio
 * was a tenth of writing kernel_details.csv. */
void out_spill_key(struct csv *c, int32_t pid, uint64_t ns)
{
	unsigned char k[12];
	memcpy(k, &pid, 4);
	memcpy(k + 4, &ns, 8);
	csv_raw(c, k, sizeof k);
}

static int read_key(FILE *spill, int32_t *pid, uint64_t *ns)
{
	unsigned char k[12];
	if (fread_unlocked(k, 1, sizeof k, spill) != sizeof k)
		return -1;
	memcpy(pid, k, 4);
	memcpy(ns, k + 4, 8);
	return 0;
}

/* Copies (out NULL: skips) the rest of a row, through its newline, which
 * `end` (NULL: none) replaces; one inside quotes is part of a field, so
 * lines are joined while a quote is open. A line at a time: a byte at a
 * time was a tenth of the whole parse. 0, or -1 at the end of the spill. */
static int copy_row(FILE *in, struct csv *out, const char *end, size_t end_len,
		    char **line, size_t *cap)
{
	int quoted = 0, any = 0;
	ssize_t n;
	while ((n = getline(line, cap, in)) > 0) {
		any = 1;
		for (const char *q = *line; (q = memchr(q, '"', (size_t)(*line + n - q))); q++)
			quoted = !quoted;
		int last = !quoted && (*line)[n - 1] == '\n';
		if (out && last && end) {
			csv_raw(out, *line, (size_t)n - 1);
			csv_raw(out, end, end_len);
		} else if (out) {
			csv_raw(out, *line, (size_t)n);
		}
		if (last)
			return 0;
	}
	return any ? 0 : -1;
}

size_t out_spill_step_field(char *b, int64_t step)
{
	size_t n = step >= 0 ? jo_fmt_int(b, step) : 0;
	b[n++] = ',';
	return n;
}

size_t out_spill_step_end(char *b, int64_t step)
{
	size_t n = 1;
	b[0] = ',';
	if (step >= 0)
		n += jo_fmt_int(b + 1, step);
	b[n++] = '\n';
	return n;
}

/* The rows go out through a CSV writer for its flush-behind (common/
 * fsutil.h): kernel_details.csv can be gigabytes. */
int out_spill_replay(FILE *spill, FILE *out, const struct out_step_find *f,
		     enum out_spill_step where)
{
	int32_t pid;
	uint64_t ns;
	char *line = NULL;
	size_t cap = 0;
	struct csv *c = malloc(sizeof *c);
	if (!c)
		return -ENOMEM;
	csv_init(c, out);
	rewind(spill);
	while (read_key(spill, &pid, &ns) == 0) {
		int64_t step = out_step_find(f, pid, ns);
		struct csv *to = out_step_find_wanted(f, step) ? c : NULL;
		char b[24];
		size_t bn = 0;
		if (to && where == OUT_STEP_FIRST)
			csv_raw(to, b, out_spill_step_field(b, step));
		else if (where == OUT_STEP_LAST)
			bn = out_spill_step_end(b, step);
		if (copy_row(spill, to, bn ? b : NULL, bn, &line, &cap) != 0)
			break;
	}
	free(line);
	int rc = csv_finish(c);
	if (!rc && ferror(spill))
		rc = -EIO;
	free(c);
	return rc;
}
