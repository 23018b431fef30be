/*
 * Tables for the commands that print them (prof stats, prof diff): the
 * same rows as an aligned text table cut to the terminal's width, as CSV
 * or as JSON. Times are given in microseconds and shown in the chosen
 * unit.
 */
#include "table.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "stats/stats.h"

#define WIDTH_DEFAULT 80   /* not a terminal: what a report or a log is read at */

const char *const tab_fmt_names[] = { "table", "csv", "json", NULL };
const char *const tab_unit_names[] = { "s", "ms", "us", "ns", NULL };
const double tab_unit_per_us[] = { 1e-6, 1e-3, 1, 1e3 };
const int tab_unit_decimals[] = { 6, 3, 3, 0 };

/* The terminal's columns when stdout is one (40 to 400), else 80. */
int tab_terminal_width(void)
{
	struct winsize ws;
	if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 || !ws.ws_col)
		return WIDTH_DEFAULT;
	return ws.ws_col < 40 ? 40 : ws.ws_col > 400 ? 400 : ws.ws_col;
}


void tab_note_error(struct tab *c, int bad)
{
	if (bad)
		c->error = 1;
}

/* A line of text cut to the table width. */
__attribute__((format(printf, 2, 3)))
void tab_line(struct tab *c, const char *fmt, ...)
{
	char buf[1024], cut[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	tab_note_error(c, fprintf(c->out, "%s\n", stats_ellipsize(buf, (size_t)c->width, cut,
							       sizeof(cut))) < 0);
}

/* A sentence to be read whole: folded at spaces to the width, never cut;
 * later lines indented under the first's text. */
void tab_para(struct tab *c, const char *head, const char *text)
{
	size_t width = (size_t)c->width, indent = strlen(head);
	size_t room = width > indent + 20 ? width - indent : 20;
	const char *p = text;
	for (int first = 1; *p; first = 0) {
		size_t n = strlen(p);
		if (n > room) {
			n = room;
			while (n > 0 && p[n] != ' ')
				n--;
			if (n == 0)
				n = strcspn(p, " ");
		}
		tab_note_error(c, fprintf(c->out, "%*s%.*s\n", (int)indent, first ? head : "",
				      (int)n, p) < 0);
		p += n;
		while (*p == ' ')
			p++;
	}
}

double tab_conv(const struct tab *c, double us)
{
	return us * tab_unit_per_us[c->unit];
}

const char *tab_unit(const struct tab *c)
{
	return tab_unit_names[c->unit];
}

static int field_width(const struct tab *c, const struct field *f, int n, int i)
{
	if (f[i].width)
		return f[i].width;
	int used = 0, shown = 0;
	for (int k = 0; k < n; k++)
		if (f[k].width > 0) {
			used += f[k].width;
			shown++;
		}
	return c->width - used - shown;   /* one space between columns */
}

static void title_of(const struct tab *c, const struct field *f, char *buf, size_t n)
{
	if (f->type == F_TIME)
		snprintf(buf, n, "%s(%s)", f->title, tab_unit(c));
	else
		snprintf(buf, n, "%s", f->title);
}

static void table_cells(struct tab *c, const struct field *f, int n, char cells[][256])
{
	char cut[512];
	int first = 1;
	for (int i = 0; i < n && i < TABLE_COLS; i++) {
		if (f[i].width < 0)
			continue;
		int w = field_width(c, f, n, i);
		if (f[i].type == F_STR && strcmp(f[i].key, "name") == 0)
			stats_cut_name(cells[i], (size_t)w, cut, sizeof(cut));
		else
			stats_ellipsize(cells[i], (size_t)w, cut, sizeof(cut));
		int pad = w - (int)stats_text_width(cut);
		int left = f[i].type == F_STR;
		if (!first)
			fputc(' ', c->out);
		first = 0;
		int last = 1;
		for (int k = i + 1; k < n; k++)
			if (f[k].width >= 0)
				last = 0;
		if (left)
			fprintf(c->out, "%s%*s", cut, last ? 0 : pad, "");
		else
			fprintf(c->out, "%*s%s", pad, "", cut);
	}
	tab_note_error(c, fputc('\n', c->out) == EOF);
}

void tab_begin(struct tab *c, const char *key, const char *title, const struct field *f, int n)
{
	char t[64];
	c->rows = 0;
	if (c->fmt == FMT_JSON) {
		jo_key(&c->jo, key);
		jo_arr_begin(&c->jo);
	} else if (c->fmt == FMT_CSV) {
		for (int i = 0; i < n; i++) {
			title_of(c, &f[i], t, sizeof(t));
			csv_str(&c->csv, t);
		}
		csv_end_row(&c->csv);
	} else {
		char cells[TABLE_COLS][256];
		tab_line(c, "%s", title);
		for (int i = 0; i < n && i < TABLE_COLS; i++)
			title_of(c, &f[i], cells[i], sizeof(cells[i]));
		table_cells(c, f, n, cells);
		char rule[512];
		int rw = c->width < (int)sizeof rule ? c->width : (int)sizeof rule - 1;
		memset(rule, '-', (size_t)rw);
		rule[rw] = '\0';
		tab_line(c, "%s", rule);
	}
}

/* A change in percent: "+12.5%", "-3.0%", "0.0%". */
static void fmt_change(double v, char *out, size_t n)
{
	if (fabs(v) < 0.05)
		snprintf(out, n, "0.0%%");
	else if (fabs(v) >= 10000)
		snprintf(out, n, "%s%.0e%%", v > 0 ? "+" : "", v);
	else
		snprintf(out, n, "%+.1f%%", v);
}

static int numeric(enum ftype t)
{
	return t != F_STR && t != F_RSTR;
}

static void json_cell(struct tab *c, const struct field *f, const struct val *v)
{
	if (numeric(f->type) && isnan(v->d)) {
		jo_key(&c->jo, f->key);
		jo_null(&c->jo);
		return;
	}
	switch (f->type) {
	case F_STR: case F_RSTR: jo_kstr(&c->jo, f->key, v->s); break;
	case F_INT: jo_kint(&c->jo, f->key, (int64_t)v->d); break;
	case F_TIME:
		jo_kfixed(&c->jo, f->key, tab_conv(c, v->d), tab_unit_decimals[c->unit]);
		break;
	case F_PCT: case F_CHG: jo_kfixed(&c->jo, f->key, v->d, 2); break;
	case F_NUM: jo_kfixed(&c->jo, f->key, v->d, 3); break;
	}
}

static void csv_cell(struct tab *c, const struct field *f, const struct val *v)
{
	if (numeric(f->type) && isnan(v->d)) {
		csv_str(&c->csv, NULL);
		return;
	}
	switch (f->type) {
	case F_STR: case F_RSTR: csv_str(&c->csv, v->s); break;
	case F_INT: csv_int(&c->csv, (int64_t)v->d); break;
	case F_TIME: csv_fixed(&c->csv, tab_conv(c, v->d), tab_unit_decimals[c->unit]); break;
	case F_PCT: case F_CHG: csv_fixed(&c->csv, v->d, 2); break;
	case F_NUM: csv_fixed(&c->csv, v->d, 3); break;
	}
}

static void text_cell(struct tab *c, const struct field *f, const struct val *v, char *out,
		      size_t n)
{
	int w = f->width > 0 ? f->width : 255;
	if (numeric(f->type) && isnan(v->d)) {
		snprintf(out, n, "-");
		return;
	}
	switch (f->type) {
	case F_STR: case F_RSTR: snprintf(out, n, "%s", v->s ? v->s : ""); break;
	case F_INT: snprintf(out, n, "%.0f", v->d); break;
	case F_TIME:
		stats_fmt_num(tab_conv(c, v->d), tab_unit_decimals[c->unit], w, out, n);
		break;
	case F_PCT: stats_fmt_num(v->d, 2, w, out, n); break;
	case F_NUM: stats_fmt_num(v->d, 3, w, out, n); break;
	case F_CHG: fmt_change(v->d, out, n); break;
	}
}

void tab_row(struct tab *c, const struct field *f, int n, const struct val *v)
{
	c->rows++;
	if (c->fmt == FMT_JSON) {
		jo_obj_begin(&c->jo);
		for (int i = 0; i < n; i++)
			json_cell(c, &f[i], &v[i]);
		jo_obj_end(&c->jo);
		return;
	}
	if (c->fmt == FMT_CSV) {
		for (int i = 0; i < n; i++)
			csv_cell(c, &f[i], &v[i]);
		csv_end_row(&c->csv);
		return;
	}
	char cells[TABLE_COLS][256];
	for (int i = 0; i < n && i < TABLE_COLS; i++)
		text_cell(c, &f[i], &v[i], cells[i], sizeof(cells[i]));
	table_cells(c, f, n, cells);
}

void tab_end(struct tab *c)
{
	if (c->fmt == FMT_JSON) {
		jo_arr_end(&c->jo);
	} else if (c->fmt == FMT_TABLE) {
		if (c->rows == 0)
			tab_line(c, "%s", "(none)");
		tab_line(c, "%s", "");
	}
}


int tab_pick(const char *cmd, const char *opt, const char *arg, const char *const *names)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(arg, names[i]) == 0)
			return i;
	fprintf(stderr, "%s: %s: '%s' is not one of", cmd, opt, arg);
	for (int i = 0; names[i]; i++)
		fprintf(stderr, "%s %s", i ? "," : "", names[i]);
	fprintf(stderr, "\n");
	return -1;
}
