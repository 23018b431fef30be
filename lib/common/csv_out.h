/*
 * Writing CSV (RFC 4180): fields holding a comma, a double quote, CR or LF
 * are quoted, with quotes doubled; lines end with "\n". Writes to a FILE as
 * it goes, so a large table never sits in memory: rows gather in the
 * writer's buffer and go to the FILE when it is full (a call per row was
 * a twentieth of a parse), so the FILE is the writer's until csv_finish.
 */
#ifndef PROF_CSV_OUT_H
#define PROF_CSV_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/fsutil.h"
#include "common/json_out.h"

struct csv {
	FILE *f;
	int col;          /* fields written on the current line */
	int error;        /* the first failure's errno (ENOBUFS: a row lost), or 0 */
	uint64_t rows;    /* lines ended, the header included */
	char *out;        /* buf, or a background writer's buffer */
	size_t cap;       /* out's size */
	size_t blen;      /* bytes waiting in out */
	struct bgw *bg;   /* csv_background's writer, or NULL */
	struct fs_behind behind;   /* f's flush-behind, while there is no bg */
	char buf[16384];
};

/* f NULL: the rows stay in the writer for csv_take (a row that does not
 * fit its buffer sets `error`). */
void csv_init(struct csv *c, FILE *f);
/* f written by a thread of its own, a megabyte at a time and direct
 * where it can be (common/bgwrite.h), for the largest tables; stays as it
 * was when no thread can be had. Until csv_finish the FILE is the
 * writer's. */
void csv_background(struct csv *c);
/* A FILE-less writer's bytes since the last take: handed over (valid
 * until the next call) and forgotten. */
const char *csv_take(struct csv *c, size_t *n);

/* Writes `header` as it is (already comma-separated) and ends the line. */
void csv_header(struct csv *c, const char *header);

void csv_str(struct csv *c, const char *s);       /* NULL: empty field */
void csv_strn(struct csv *c, const char *s, size_t n);
/* A string literal that needs no quotes, written as it is; one with commas
 * is that many fields at once ("N/A,N/A": two). */
#define csv_lit(c, lit) csv_plain((c), "" lit "", sizeof(lit) - 1)
void csv_plain(struct csv *c, const char *s, size_t n);
/* Bytes in the output between rows, not a field (a spill's keys). */
void csv_raw(struct csv *c, const void *p, size_t n);
void csv_int(struct csv *c, int64_t v);
void csv_uint(struct csv *c, uint64_t v);
/* A double with `decimals` digits after the point; NaN/inf: empty field. */
void csv_fixed(struct csv *c, double v, int decimals);
/* Nanoseconds as microseconds with exactly three decimals (integer math). */
void csv_ns_us(struct csv *c, int64_t ns);
void csv_end_row(struct csv *c);

/* Flushes; 0, or the first failure's -errno (a full disk: -ENOSPC). */
int csv_finish(struct csv *c);
/* Stops writing (a background writer's thread included) before the FILE
 * is thrown away; what was not written is lost. */
void csv_abort(struct csv *c);

#endif
