/*
 * Writing CSV (RFC 4180): fields holding a comma, a double quote, CR or LF
 * are quoted, with quotes doubled; lines end with "\n". Writes to a FILE as
 * it goes, so a large table never sits in memory.
 */
#ifndef PROF_CSV_OUT_H
#define PROF_CSV_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct csv {
	FILE *f;
	int col;          /* fields written on the current line */
	int error;        /* a write failed */
	uint64_t rows;    /* lines ended, the header included */
	size_t blen;      /* bytes of the current row in buf */
	char buf[2048];
};

void csv_init(struct csv *c, FILE *f);

/* Writes `header` as it is (already comma-separated) and ends the line. */
void csv_header(struct csv *c, const char *header);

void csv_str(struct csv *c, const char *s);       /* NULL: empty field */
void csv_strn(struct csv *c, const char *s, size_t n);
/* A string literal: its length known without a strlen per row. */
#define csv_lit(c, lit) csv_strn((c), "" lit "", sizeof(lit) - 1)
void csv_int(struct csv *c, int64_t v);
void csv_uint(struct csv *c, uint64_t v);
/* A double with `decimals` digits after the point; NaN/inf: empty field. */
void csv_fixed(struct csv *c, double v, int decimals);
/* Nanoseconds as microseconds with exactly three decimals (integer math). */
void csv_ns_us(struct csv *c, int64_t ns);
void csv_end_row(struct csv *c);

/* Flushes; 0, or -1 when a write failed. */
int csv_finish(struct csv *c);

#endif
