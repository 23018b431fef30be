/*
 * Reading raw streams back, damaged ones included. The reader trusts only
 * committed bytes, checks every record's size and type, and reports what it
 * skipped (file, chunk, offset, why) instead of stopping.
 *
 * (Interface contract; implemented in raw_reader.c.)
 */
#ifndef PROF_RAW_READER_H
#define PROF_RAW_READER_H

#include <stddef.h>
#include <stdint.h>
#include "raw/raw_format.h"

/* Totals over every stream under a run's raw/ directory: for
 * profiler_info.json at the end of a run. */
struct raw_totals {
	uint64_t streams;
	uint64_t records;
	uint64_t lost;
	uint64_t damaged_streams;  /* header unreadable or chunks skipped */
};

/* Sums the chunk headers of every *.raw file under `raw_dir` (recursively).
 * Cheap: reads headers only. Returns 0 or a negative errno. */
int raw_totals_of_dir(const char *raw_dir, struct raw_totals *out);

#endif
