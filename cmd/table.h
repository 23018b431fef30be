/*
 * Tables for the commands that print them (prof stats, prof diff): one set
 * of rows written as an aligned text table cut to the line's width, as
 * CSV, or as JSON arrays of objects. Times are given in microseconds and
 * shown in the chosen unit.
 */
#ifndef PROF_CMD_TABLE_H
#define PROF_CMD_TABLE_H

#include <stddef.h>
#include <stdio.h>

#include "common/csv_out.h"
#include "common/json_out.h"

enum tab_fmt { FMT_TABLE, FMT_CSV, FMT_JSON };
extern const char *const tab_fmt_names[];     /* "table", "csv", "json", NULL */
extern const char *const tab_unit_names[];    /* "s", "ms", "us", "ns", NULL */
extern const double tab_unit_per_us[];
extern const int tab_unit_decimals[];

struct tab {
	FILE *out;
	int width;             /* table lines: the terminal's columns, else 80 */
	enum tab_fmt fmt;
	int unit;              /* index into tab_unit_names */
	struct csv csv;
	struct jo jo;
	size_t rows;           /* rows of the table being written */
	int error;             /* a write failed */
};

/* Fields of a table. F_TIME values are µs, shown in the chosen unit.
 * F_RSTR: a string, right-aligned in the table. F_CHG: a change in
 * percent, signed in the table ("+12.5%"). A numeric value that is NaN is
 * null in JSON, empty in CSV and "-" in the table. */
#define TABLE_COLS 12   /* the most fields a table has */
enum ftype { F_STR, F_TIME, F_INT, F_PCT, F_NUM, F_RSTR, F_CHG };
struct field {
	const char *title;
	const char *key;       /* JSON */
	enum ftype type;
	int width;             /* table: 0 the rest of the line, -1 not shown */
};
struct val {
	const char *s;
	double d;
};

/* The terminal's columns when stdout is one (40 to 400), else 80. */
int tab_terminal_width(void);
void tab_note_error(struct tab *c, int bad);
/* A line of text cut to the table width. */
__attribute__((format(printf, 2, 3)))
void tab_line(struct tab *c, const char *fmt, ...);
/* A sentence to be read whole: folded at spaces to the width, never cut;
 * later lines indented under the first's text. */
void tab_para(struct tab *c, const char *head, const char *text);
double tab_conv(const struct tab *c, double us);
const char *tab_unit(const struct tab *c);
/* A table: its title and header (table), header row (CSV), or `key` and
 * the array's start (JSON). */
void tab_begin(struct tab *c, const char *key, const char *title, const struct field *f, int n);
void tab_row(struct tab *c, const struct field *f, int n, const struct val *v);
/* "(none)" under a table without rows, then a blank line. */
void tab_end(struct tab *c);

/* Option `opt`'s value `arg` as an index into names (NULL-ended), or -1
 * after saying on stderr which values are allowed. */
int tab_pick(const char *cmd, const char *opt, const char *arg, const char *const *names);

#endif
