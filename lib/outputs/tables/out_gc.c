#include "outputs/tables/out_gc.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/fsutil.h"

#define OUT_GC_FILE "gc_record.csv"

void out_gc_init(struct out_gc *g, const char *dir, uint64_t base_mono_ns)
{
	*g = (struct out_gc){ .dir = dir, .base = base_mono_ns };
}

static int out_gc_open(struct out_gc *g)
{
	if (g->open)
		return g->open > 0 ? 0 : -1;
	g->open = out_file_open(&g->file, g->dir, OUT_GC_FILE) == 0 ? 1 : -1;
	if (g->open < 0)
		return -1;
	csv_init(&g->c, g->file.f);
	csv_header(&g->c, OUT_GC_HEADER);
	return 0;
}

void out_gc_row(struct out_gc *g, int32_t pid, int32_t tid, uint64_t start_ns, uint64_t end_ns,
		const struct raw_gc *stop)
{
	if (out_gc_open(g))
		return;
	struct csv *c = &g->c;
	csv_int(c, pid);
	csv_int(c, tid);
	csv_ns_us(c, (int64_t)(start_ns - g->base));
	csv_ns_us(c, end_ns > start_ns ? (int64_t)(end_ns - start_ns) : 0);
	csv_uint(c, stop->generation);
	csv_uint(c, stop->collected);
	csv_uint(c, stop->uncollectable);
	csv_end_row(c);
	g->rows++;
}

int out_gc_close(struct out_gc *g)
{
	if (g->open > 0) {
		g->open = 0;
		return out_file_commit(&g->file, csv_finish(&g->c));
	}
	if (g->open < 0)
		return -EIO;
	char *p = fs_join(g->dir, OUT_GC_FILE);
	int rc = !p ? -ENOMEM : unlink(p) == 0 || errno == ENOENT ? 0 : -errno;
	free(p);
	return rc;
}

void out_gc_abort(struct out_gc *g)
{
	if (g->open > 0) {
		csv_abort(&g->c);
		out_file_abort(&g->file);
	}
	g->open = 0;
}
