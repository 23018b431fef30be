/*
 * What the parse does to PROFILER_OUTPUT/ after the text outputs are
 * written (prof parse --step-list, --timeline-limit, --export-type db,
 * --pretty, --gzip, --data-simplification). Each step reads the files
 * back a line or a row at a time, so memory stays bounded whatever their
 * size; each output is replaced by renaming a complete temporary file.
 * All return 0 or a negative errno.
 */
#ifndef PROF_EXPORT_H
#define PROF_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A recorded step's time span, in trace_view.json's microseconds. */
struct export_span {
	uint64_t step;
	double start_us, end_us;
};

struct export_trace_result {
	uint64_t kept, dropped;       /* trace events (metadata "M" events count too) */
	int truncated;                /* the limit cut the timeline */
	uint64_t *kept_steps;         /* malloc'd: the steps the limit left in */
	size_t nkept_steps;
	size_t nsteps;                /* the steps there were before the limit */
};

/* Rewrites dir/trace_view.json keeping only events that overlap a span of
 * a step in `sel` (NULL: every event) and metadata events; then, with
 * limit_bytes, whole steps from the start while the file stays within
 * limit_bytes, noting what was left out in a top-level "prof_truncated"
 * key. */
int export_trace_filter(const char *dir, const struct export_span *spans, size_t nspans,
			const uint64_t *sel, size_t nsel, uint64_t limit_bytes,
			struct export_trace_result *res);

/* Keeps only the rows of steps in `sel` in the CSVs with a "Step" or
 * "Step Id" column, and the rows stamped within those steps' spans in the
 * CSVs with a time column; the aggregate CSVs are left whole. */
int export_csv_filter(const char *dir, const struct export_span *spans, size_t nspans,
		      const uint64_t *sel, size_t nsel);

/* dir/profiler.db: a table per CSV and the "timeline" table from
 * trace_view.json (which must still be one event a line). */
int export_db(const char *dir, FILE *log);

/* Removes the CSVs and trace_view.json (db-only export). */
int export_drop_text(const char *dir);

/* Rewrites trace_view.json indented and/or as trace_view.json.gz. */
int export_trace_format(const char *dir, int pretty, int gzip);

/* Removes a directory tree. */
int export_remove_tree(const char *path);

/* Reads one CSV record (quoted fields, "" inside quotes, CRLF) from f.
 * 1: a row; 0: end of file; negative errno. Fields are NUL-terminated
 * strings in r->buf at r->off[i]; r->raw holds the record's bytes as read. */
struct export_csv_row {
	char *buf; size_t len, cap;
	char *raw; size_t rawlen, rawcap;
	size_t *off; size_t n, capn;
};
int export_csv_read(FILE *f, struct export_csv_row *r);
void export_csv_row_free(struct export_csv_row *r);

/* The *.csv in dir, sorted (scandir's list). Their count or a negative errno. */
struct dirent;
int export_csv_list(const char *dir, struct dirent ***list);

#endif
