/*
 * gc_record.csv: one row per Python garbage collection (gc_detect), as
 * torch_npu's GC_RECORD table keeps them, written as they end (so in the
 * order they end). The file
 * is made at the first row: a run without gc_detect has none, and a parse
 * without collections removes one an earlier parse left.
 *
 *   Process ID, Thread ID   where it ran
 *   Start Time(us)          µs since ts 0 (as in trace_view.json)
 *   Duration(us)            three decimals
 *   Generation              the oldest generation collected (0, 1, 2)
 *   Collected, Uncollectable  what it freed, what it found and could not
 */
#ifndef PROF_OUT_GC_H
#define PROF_OUT_GC_H

#include <stdint.h>
#include "common/csv_out.h"
#include "outputs/out_file.h"
#include "raw/raw_format.h"

#define OUT_GC_HEADER "Process ID,Thread ID,Start Time(us),Duration(us),Generation," \
	"Collected,Uncollectable"

struct out_gc {
	const char *dir;
	uint64_t base;
	int open;                    /* 1: the file is being written; -1: it failed */
	struct out_file file;
	struct csv c;
	uint64_t rows;
};

void out_gc_init(struct out_gc *g, const char *dir, uint64_t base_mono_ns);
/* One collection; `stop` holds what it found. */
void out_gc_row(struct out_gc *g, int32_t pid, int32_t tid, uint64_t start_ns, uint64_t end_ns,
		const struct raw_gc *stop);
/* Renames the file into place, or removes an old one when there was no
 * row. 0 or a negative errno. */
int out_gc_close(struct out_gc *g);
void out_gc_abort(struct out_gc *g);

#endif
