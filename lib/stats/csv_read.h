/*
 * Reading CSV (RFC 4180) into memory: fields may be quoted ("a,b", quotes
 * doubled inside), lines end with LF, CRLF or a lone CR, the last line may
 * lack its end. The first line is the header; a data row with fewer fields
 * than the header is padded with empty fields, one with more is cut to the
 * header's width; blank lines are skipped. Errors are returned, never
 * printed.
 */
#ifndef PROF_STATS_CSV_READ_H
#define PROF_STATS_CSV_READ_H

#include <stddef.h>

#define CSV_ABSENT 1     /* csv_table_load: the file does not exist */

struct csv_table {
	size_t ncols;    /* header fields */
	size_t nrows;    /* data rows (the header excluded) */
	char **cells;    /* (nrows + 1) * ncols, row-major; row 0 the header */
	char *arena;     /* the fields' text */
};

/* Parses `len` bytes; 0, or -1 with a message in err (a quote never
 * closed, text after a closing quote, an empty input). */
int csv_table_parse(struct csv_table *t, const char *buf, size_t len, char *err, size_t errlen);

/* Reads and parses a file: 0, CSV_ABSENT when it does not exist, or -1
 * with a message in err. */
int csv_table_load(struct csv_table *t, const char *path, char *err, size_t errlen);

/* Index of the header field `name`, or -1. */
int csv_column(const struct csv_table *t, const char *name);

/* Data row `row` (0-based), column `col`: never NULL. */
const char *csv_cell(const struct csv_table *t, size_t row, size_t col);

void csv_table_free(struct csv_table *t);

#endif
