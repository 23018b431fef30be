/*
 * prof stats [options] RUN_DIR: summary tables of a parsed run, computed
 * from PROFILER_OUTPUT/'s CSVs (lib/stats reads and aggregates; this file
 * prints). Table output fits in 80 columns.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmds.h"
#include "common/csv_out.h"
#include "common/json_out.h"
#include "stats/stats.h"

#define WIDTH_DEFAULT 80   /* not a terminal: what a report or a log is read at */

enum view { V_OVERVIEW, V_STEPS, V_OPS, V_KERNELS, V_API, V_MEMORY, V_RANGES, V_MODULES,
	    V_FLOPS, V_ALL };
static const char *const view_names[] = { "overview", "steps", "ops", "kernels", "api",
					  "memory", "ranges", "modules", "flops", "all", NULL };
static const char *const sort_names[] = { "total", "avg", "max", "min", "count", "self",
					  NULL };
enum fmt { FMT_TABLE, FMT_CSV, FMT_JSON };
static const char *const fmt_names[] = { "table", "csv", "json", NULL };
static const char *const unit_names[] = { "s", "ms", "us", "ns", NULL };
static const char *const where_names[] = { "all", "steps", "outside", NULL };
static const double unit_per_us[] = { 1e-6, 1e-3, 1, 1e3 };
static const int unit_decimals[] = { 6, 3, 3, 0 };

struct ctx {
	const char *outdir;
	const char *dir;
	size_t rows;           /* rows of the table being written */
	enum view view;
	enum stats_sort sort;
	long top;              /* 0: every row */
	int unit;
	enum fmt fmt;
	const char *op;
	enum stats_where where;   /* which operators: --where */
	double peak_tflops;       /* --peak-tflops: the device's peak; 0: not given */
	struct stats_op_split *split;  /* emit_ops fills it when set (the overview) */
	FILE *out;
	int width;             /* table lines: the terminal's columns, else 80 */
	struct csv csv;
	struct jo jo;
	int error;
};

/* The terminal's columns when stdout is one (40 to 400), else 80. */
static int terminal_width(void)
{
	struct winsize ws;
	if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 || !ws.ws_col)
		return WIDTH_DEFAULT;
	return ws.ws_col < 40 ? 40 : ws.ws_col > 400 ? 400 : ws.ws_col;
}

static void stats_usage(FILE *out)
{
	fprintf(out,
		"usage: prof stats [options] RUN_DIR\n\n"
		"Summary tables of a parsed run, from RUN_DIR/PROFILER_OUTPUT/'s CSVs (run\n"
		"`prof parse RUN_DIR` first if the run was not parsed).\n\n"
		"Options:\n"
		"  --view VIEW     overview (default), steps, ops, kernels, api, memory,\n"
		"                  ranges, modules, flops, all\n"
		"                    overview: steps, step time split, top 5 operators/kernels\n"
		"                    steps:    one row per step and device (step_trace_time.csv)\n"
		"                    ops:      operators by name (operator_details.csv)\n"
		"                    kernels:  device tasks by name (op_statistic.csv, else\n"
		"                              kernel_details.csv)\n"
		"                    api:      device API calls (api_statistic.csv)\n"
		"                    memory:   peak per component and device, and per step\n"
		"                              (memory_record.csv), largest allocations, the\n"
		"                              operators that allocate most, allocations alive\n"
		"                              at the end (operator_memory.csv)\n"
		"                    ranges:   the program's ranges by name: prof_tx,\n"
		"                              RecordEvent (range_statistic.csv)\n"
		"                    modules:  nn.Module forward calls by module path\n"
		"                              (with_modules; range_statistic.csv)\n"
		"                    flops:    FLOPs and TFLOP/s per step (with_flops;\n"
		"                              operator_details.csv, step_trace_time.csv)\n"
		"  --peak-tflops X the device's peak TFLOP/s: the flops view adds the\n"
		"                  model FLOPs utilisation, MFU(%%) = TFLOP/s / X\n"
		"  --sort KEY      order of ops, kernels and api rows: total (default), avg,\n"
		"                  max, min (smallest first), count, or self (operators'\n"
		"                  self time; the others by total)\n"
		"  --top N         rows per table (default 15; 0: all); not for steps\n"
		"  --unit U        time unit: s, ms (default), us, ns\n"
		"  --op NAME       every call of operator NAME (operator_details.csv), in\n"
		"                  file order: duration, self time, device time, step,\n"
		"                  shapes\n"
		"  --where W       which operators (ranges) the ops, ranges and modules\n"
		"                  views and --op count: all\n"
		"                  (default), steps (those in a training step) or outside\n"
		"                  (outside every step: model set-up, evaluation)\n"
		"  --format F      table (default), csv (one view, not all) or json\n"
		"  -h, --help      show this help\n\n"
		"Exit status: 0 success; 1 the run cannot be read (not parsed: no\n"
		"PROFILER_OUTPUT/parse.done; a damaged CSV; --op NAME with no call);\n"
		"2 usage error (bad option or value).\n");
}

/* ---- printing helpers ---- */

static void note_error(struct ctx *c, int bad)
{
	if (bad)
		c->error = 1;
}

/* A line of text cut to the table width. */
__attribute__((format(printf, 2, 3)))
static void tline(struct ctx *c, const char *fmt, ...)
{
	char buf[1024], cut[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	note_error(c, fprintf(c->out, "%s\n", stats_ellipsize(buf, (size_t)c->width, cut,
							       sizeof(cut))) < 0);
}

/* A sentence to be read whole: folded at spaces to the width, never cut;
 * later lines indented under the first's text. */
static void tpara(struct ctx *c, const char *head, const char *text)
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
		note_error(c, fprintf(c->out, "%*s%.*s\n", (int)indent, first ? head : "",
				      (int)n, p) < 0);
		p += n;
		while (*p == ' ')
			p++;
	}
}

static double conv(const struct ctx *c, double us)
{
	return us * unit_per_us[c->unit];
}

static const char *unit(const struct ctx *c)
{
	return unit_names[c->unit];
}

/* Fields of a table. F_TIME values are µs, shown in the chosen unit. */
#define TABLE_COLS 10   /* the most fields a table has (the steps view: 9) */
enum ftype { F_STR, F_TIME, F_INT, F_PCT, F_NUM };
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

static int field_width(const struct ctx *c, const struct field *f, int n, int i)
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

static void title_of(const struct ctx *c, const struct field *f, char *buf, size_t n)
{
	if (f->type == F_TIME)
		snprintf(buf, n, "%s(%s)", f->title, unit(c));
	else
		snprintf(buf, n, "%s", f->title);
}

static void table_cells(struct ctx *c, const struct field *f, int n, char cells[][256])
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
	note_error(c, fputc('\n', c->out) == EOF);
}

static void emit_begin(struct ctx *c, const char *key, const char *title,
		       const struct field *f, int n)
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
		tline(c, "%s", title);
		for (int i = 0; i < n && i < TABLE_COLS; i++)
			title_of(c, &f[i], cells[i], sizeof(cells[i]));
		table_cells(c, f, n, cells);
		char rule[512];
		int rw = c->width < (int)sizeof rule ? c->width : (int)sizeof rule - 1;
		memset(rule, '-', (size_t)rw);
		rule[rw] = '\0';
		tline(c, "%s", rule);
	}
}

static void emit_row(struct ctx *c, const struct field *f, int n, const struct val *v)
{
	c->rows++;
	if (c->fmt == FMT_JSON) {
		jo_obj_begin(&c->jo);
		for (int i = 0; i < n; i++) {
			switch (f[i].type) {
			case F_STR: jo_kstr(&c->jo, f[i].key, v[i].s); break;
			case F_INT: jo_kint(&c->jo, f[i].key, (int64_t)v[i].d); break;
			case F_TIME:
				jo_kfixed(&c->jo, f[i].key, conv(c, v[i].d), unit_decimals[c->unit]);
				break;
			case F_PCT: jo_kfixed(&c->jo, f[i].key, v[i].d, 2); break;
			case F_NUM: jo_kfixed(&c->jo, f[i].key, v[i].d, 3); break;
			}
		}
		jo_obj_end(&c->jo);
		return;
	}
	if (c->fmt == FMT_CSV) {
		for (int i = 0; i < n; i++) {
			switch (f[i].type) {
			case F_STR: csv_str(&c->csv, v[i].s); break;
			case F_INT: csv_int(&c->csv, (int64_t)v[i].d); break;
			case F_TIME: csv_fixed(&c->csv, conv(c, v[i].d), unit_decimals[c->unit]); break;
			case F_PCT: csv_fixed(&c->csv, v[i].d, 2); break;
			case F_NUM: csv_fixed(&c->csv, v[i].d, 3); break;
			}
		}
		csv_end_row(&c->csv);
		return;
	}
	char cells[TABLE_COLS][256];
	for (int i = 0; i < n && i < TABLE_COLS; i++) {
		int w = f[i].width > 0 ? f[i].width : 255;
		switch (f[i].type) {
		case F_STR: snprintf(cells[i], sizeof(cells[i]), "%s", v[i].s ? v[i].s : ""); break;
		case F_INT: snprintf(cells[i], sizeof(cells[i]), "%.0f", v[i].d); break;
		case F_TIME:
			stats_fmt_num(conv(c, v[i].d), unit_decimals[c->unit], w, cells[i],
				      sizeof(cells[i]));
			break;
		case F_PCT: stats_fmt_num(v[i].d, 2, w, cells[i], sizeof(cells[i])); break;
		case F_NUM: stats_fmt_num(v[i].d, 3, w, cells[i], sizeof(cells[i])); break;
		}
	}
	table_cells(c, f, n, cells);
}

static void emit_end(struct ctx *c)
{
	if (c->fmt == FMT_JSON) {
		jo_arr_end(&c->jo);
	} else if (c->fmt == FMT_TABLE) {
		if (c->rows == 0)
			tline(c, "%s", "(none)");
		tline(c, "%s", "");
	}
}

/* A view whose CSV does not exist. */
/* `why`: what is missing, "file absent: X" or another reason. */
static void no_data_why(struct ctx *c, const char *key, const char *what, const char *why)
{
	if (c->fmt == FMT_JSON) {
		jo_key(&c->jo, key);
		jo_null(&c->jo);
	} else if (c->fmt == FMT_CSV) {
		fprintf(stderr, "prof stats: %s: no data (%s)\n", what, why);
	} else {
		tline(c, "%s: no data (%s)", what, why);
		tline(c, "%s", "");
	}
}

static void no_data(struct ctx *c, const char *key, const char *what, const char *file)
{
	char why[200];
	snprintf(why, sizeof why, c->fmt == FMT_CSV ? "%s absent" : "file absent: %s", file);
	no_data_why(c, key, what, why);
}

static int load_failed(const char *err)
{
	fprintf(stderr, "prof stats: %s\n", err);
	return 1;
}

static size_t shown(const struct ctx *c, size_t n, long top)
{
	return top > 0 && (size_t)top < n ? (size_t)top : n;
}

static const char *sort_title(const struct ctx *c)
{
	static const char *const t[] = { "total", "average", "max", "min", "calls", "self" };
	return t[c->sort];
}

/* ---- views ---- */

static const char *const where_title[] = { "", " in steps", " outside every step" };

static int emit_ops(struct ctx *c, long top, const char *key)
{
	char err[512];
	struct stats_agg a;
	int rc = stats_load_ops(c->outdir, c->where, &a, c->split, err, sizeof(err));
	if (rc == STATS_ABSENT) {
		no_data(c, key, "Operators", "operator_details.csv");
		return 0;
	}
	if (rc != 0)
		return load_failed(err);
	stats_agg_sort(&a, c->sort, STATS_OP_TOTAL);
	int table = c->fmt == FMT_TABLE, mn = c->sort == STATS_SORT_MIN;
	/* a CPU-only run: no Device column of zeros in the table */
	int dev = !table || stats_agg_total(&a, STATS_OP_DEVICE) > 0;
	const struct field f[] = {
		{ "Name", "name", F_STR, 0 },
		{ "Calls", "calls", F_INT, 6 },
		{ "Total", "total", F_TIME, 10 },
		{ "Avg", "avg", F_TIME, 10 },
		{ "Min", "min", F_TIME, table && !mn ? -1 : 10 },
		{ "Max", "max", F_TIME, table && mn ? -1 : 10 },
		{ "Self", "self_total", F_TIME, 10 },
		{ "Self Avg", "self_avg", F_TIME, -1 },
		{ "Self Min", "self_min", F_TIME, -1 },
		{ "Self Max", "self_max", F_TIME, -1 },
		{ "Device", "device_total", F_TIME, dev ? 10 : -1 },
	};
	/* table rows hold at most 8 cells: the table leaves out the self
	 * min/avg/max columns (csv and json have them) */
	const struct field tf[] = { f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[10] };
	int nf = table ? 8 : 11;
	char title[200];
	snprintf(title, sizeof(title), "Operators%s by %s %stime (%zu names, operator_details.csv)",
		 where_title[c->where], sort_title(c), c->sort == STATS_SORT_SELF ? "" : "host ",
		 a.n);
	emit_begin(c, key, title, table ? tf : f, nf);
	for (size_t i = 0; i < shown(c, a.n, top); i++) {
		const struct stats_row *r = &a.rows[i];
		struct val v[11] = {
			{ r->name, 0 }, { NULL, (double)r->count },
			{ NULL, r->sum[0] }, { NULL, stats_row_avg(r, 0) },
			{ NULL, r->min[0] }, { NULL, r->max[0] },
			{ NULL, r->sum[1] }, { NULL, stats_row_avg(r, 1) },
			{ NULL, r->min[1] }, { NULL, r->max[1] },
			{ NULL, r->sum[2] },
		};
		if (table) {
			struct val tv[8] = { v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[10] };
			emit_row(c, tf, nf, tv);
		} else {
			emit_row(c, f, nf, v);
		}
	}
	emit_end(c);
	stats_agg_free(&a);
	return 0;
}

static int emit_kernels(struct ctx *c, long top, const char *key)
{
	char err[512];
	const char *src;
	struct stats_agg a;
	int rc = stats_load_kernels(c->outdir, &a, &src, err, sizeof(err));
	if (rc == STATS_ABSENT) {
		no_data(c, key, "Kernels", "op_statistic.csv and kernel_details.csv");
		return 0;
	}
	if (rc != 0)
		return load_failed(err);
	stats_agg_sort(&a, c->sort == STATS_SORT_SELF ? STATS_SORT_TOTAL : c->sort, 0);
	double all = stats_agg_total(&a, 0);
	const struct field f[] = {
		{ "Name", "name", F_STR, 0 },
		{ "Calls", "calls", F_INT, 6 },
		{ "Total", "total", F_TIME, 10 },
		{ "Avg", "avg", F_TIME, 10 },
		{ "Min", "min", F_TIME, 10 },
		{ "Max", "max", F_TIME, 10 },
		{ "Ratio(%)", "ratio", F_PCT, 8 },
	};
	char title[200];
	snprintf(title, sizeof(title), "Device tasks by %s time (%zu names, %s)", sort_title(c),
		 a.n, src);
	emit_begin(c, key, title, f, 7);
	for (size_t i = 0; i < shown(c, a.n, top); i++) {
		const struct stats_row *r = &a.rows[i];
		struct val v[7] = {
			{ r->name, 0 }, { NULL, (double)r->count }, { NULL, r->sum[0] },
			{ NULL, stats_row_avg(r, 0) }, { NULL, r->min[0] }, { NULL, r->max[0] },
			{ NULL, all > 0 ? 100.0 * r->sum[0] / all : 0 },
		};
		emit_row(c, f, 7, v);
	}
	emit_end(c);
	stats_agg_free(&a);
	return 0;
}

static int emit_api(struct ctx *c, long top, const char *key)
{
	char err[512];
	struct stats_agg a;
	int rc = stats_load_api(c->outdir, &a, err, sizeof(err));
	if (rc == STATS_ABSENT) {
		no_data(c, key, "Device API calls", "api_statistic.csv");
		return 0;
	}
	if (rc != 0)
		return load_failed(err);
	stats_agg_sort(&a, c->sort == STATS_SORT_SELF ? STATS_SORT_TOTAL : c->sort, 0);
	const struct field f[] = {
		{ "Name", "name", F_STR, 0 },
		{ "Level", "level", F_STR, 7 },
		{ "Calls", "calls", F_INT, 6 },
		{ "Total", "total", F_TIME, 10 },
		{ "Avg", "avg", F_TIME, 10 },
		{ "Min", "min", F_TIME, 10 },
		{ "Max", "max", F_TIME, 10 },
	};
	char title[200];
	snprintf(title, sizeof(title), "Device API calls by %s time (%zu names, api_statistic.csv)",
		 sort_title(c), a.n);
	emit_begin(c, key, title, f, 7);
	for (size_t i = 0; i < shown(c, a.n, top); i++) {
		const struct stats_row *r = &a.rows[i];
		struct val v[7] = {
			{ r->name, 0 }, { r->extra, 0 }, { NULL, (double)r->count },
			{ NULL, r->sum[0] }, { NULL, stats_row_avg(r, 0) }, { NULL, r->min[0] },
			{ NULL, r->max[0] },
		};
		emit_row(c, f, 7, v);
	}
	emit_end(c);
	stats_agg_free(&a);
	return 0;
}

/* The ranges view (prof_tx ranges) and the modules view (paddle's Model
 * view): range_statistic.csv by name, over the steps --where takes. */
static int emit_ranges(struct ctx *c, long top, const char *key, int modules)
{
	char err[512];
	struct stats_agg a;
	const char *what = modules ? "Modules" : "Ranges";
	int rc = stats_load_ranges(c->outdir, modules ? "nn.Module" : "user_annotation", c->where,
				   &a, err, sizeof(err));
	const char *none = modules ? "no module ranges: record with --with-modules"
				   : "the program opened no ranges (prof_tx.range, RecordEvent)";
	if (rc == STATS_ABSENT || (rc == 0 && a.n == 0)) {
		if (rc == 0)
			stats_agg_free(&a);
		no_data_why(c, key, what, none);
		return 0;
	}
	if (rc != 0)
		return load_failed(err);
	int self = c->sort == STATS_SORT_SELF;
	stats_agg_sort(&a, self ? STATS_SORT_TOTAL : c->sort, self ? STATS_RANGE_SELF : 0);
	const struct field f[] = {
		{ modules ? "Module" : "Name", "name", F_STR, 0 },
		{ "Calls", "calls", F_INT, 6 },
		{ "Total", "total", F_TIME, 10 },
		{ "Self", "self", F_TIME, 10 },
		{ "Avg", "avg", F_TIME, 10 },
		{ "Max", "max", F_TIME, 10 },
		{ "Steps", "steps", F_INT, 6 },
		{ "Per step", "per_step", F_TIME, 12 },
	};
	char title[200];
	snprintf(title, sizeof(title), "%s%s by %s time (%zu names, range_statistic.csv)", what,
		 where_title[c->where], sort_title(c), a.n);
	emit_begin(c, key, title, f, 8);
	for (size_t i = 0; i < shown(c, a.n, top); i++) {
		const struct stats_row *r = &a.rows[i];
		double steps = r->sum[STATS_RANGE_STEPS];
		struct val v[8] = {
			{ r->name, 0 }, { NULL, (double)r->count }, { NULL, r->sum[0] },
			{ NULL, r->sum[STATS_RANGE_SELF] }, { NULL, stats_row_avg(r, 0) },
			{ NULL, r->max[0] }, { NULL, steps },
			{ NULL, steps > 0 ? r->sum[0] / steps : 0 },
		};
		emit_row(c, f, 8, v);
	}
	emit_end(c);
	stats_agg_free(&a);
	return 0;
}

/* with_flops: FLOPs and TFLOP/s per step; MFU with --peak-tflops. */
static int emit_flops(struct ctx *c, const char *key)
{
	char err[512];
	struct stats_flops f;
	int rc = stats_load_flops(c->outdir, &f, err, sizeof(err));
	if (rc == STATS_ABSENT) {
		no_data_why(c, key, "FLOPs", "no operator in a step has FLOPs: record with "
			    "--with-flops");
		return 0;
	}
	if (rc != 0)
		return load_failed(err);
	const struct field fl[] = {
		{ "Step", "step", F_INT, 6 },
		{ "GFLOPs", "gflops", F_NUM, 14 },
		{ "Time", "time", F_TIME, 12 },
		{ "TFLOP/s", "tflops", F_NUM, 12 },
		{ "MFU(%)", "mfu", F_PCT, 8 },
	};
	size_t nf = c->peak_tflops > 0 ? 5 : 4;
	emit_begin(c, key, "FLOPs per step (operator_details.csv; time: step_trace_time.csv)",
		   fl, nf);
	for (size_t i = 0; i < f.n; i++) {
		const struct stats_flops_step *s = &f.rows[i];
		double tflops = s->time_us > 0 ? s->flops / (s->time_us * 1e-6) / 1e12 : 0;
		struct val v[5] = { { NULL, (double)s->step }, { NULL, s->flops / 1e9 },
				    { NULL, s->time_us }, { NULL, tflops },
				    { NULL, c->peak_tflops > 0 ? 100.0 * tflops / c->peak_tflops : 0 } };
		emit_row(c, fl, nf, v);
	}
	emit_end(c);
	stats_flops_free(&f);
	return 0;
}

static int emit_steps(struct ctx *c, const char *key)
{
	char err[512];
	struct stats_steps s;
	int rc = stats_load_steps(c->outdir, &s, err, sizeof(err));
	if (rc == STATS_ABSENT) {
		no_data(c, key, "Steps", "step_trace_time.csv");
		return 0;
	}
	if (rc != 0)
		return load_failed(err);
	/* A multi-rank run's rows say their rank; Total takes what is left */
	int w = s.has_rank ? 10 : 11;   /* room for the Rank column in 80 */
	const struct field f[] = {
		{ "Step", "step", F_INT, 5 },
		{ "Rank", "rank", F_INT, 4 },
		{ "Dev", "device", F_INT, 3 },
		{ "Total", "total", F_TIME, 0 },
		{ "Compute", "computing", F_TIME, w },
		{ "Comm", "communication_not_overlapped", F_TIME, w },
		{ "Overlap", "overlapped", F_TIME, w },
		{ "Free", "free", F_TIME, w },
		{ "Other", "other", F_TIME, w },
	};
	size_t skip = s.has_rank ? 0 : 1;   /* the Rank field, when no row says one */
	struct field g[9];
	size_t nf = 0;
	for (size_t i = 0; i < 9; i++)
		if (!(skip && i == 1))
			g[nf++] = f[i];
	emit_begin(c, key, "Steps (step_trace_time.csv): Dev -1 host, Comm not overlapped,"
		   " Other preparing", g, nf);
	for (size_t i = 0; i < s.n; i++) {
		const struct stats_step *r = &s.rows[i];
		struct val v[9] = {
			{ NULL, (double)r->step }, { NULL, (double)r->rank }, { NULL, r->device },
			{ NULL, r->total }, { NULL, r->computing }, { NULL, r->comm_not_overlapped },
			{ NULL, r->overlapped }, { NULL, r->free_time },
			{ NULL, r->total - r->computing - r->comm_not_overlapped - r->free_time },
		};
		if (skip)
			memmove(&v[1], &v[2], 7 * sizeof v[0]);
		emit_row(c, g, nf, v);
	}
	emit_end(c);
	stats_steps_free(&s);
	return 0;
}

static int emit_memory(struct ctx *c, long top, const char *key)
{
	char err[512];
	struct stats_memory m;
	int rc = stats_load_memory(c->outdir, &m, err, sizeof(err));
	if (rc == STATS_ABSENT) {
		no_data(c, key, "Memory", "memory_record.csv and operator_memory.csv");
		return 0;
	}
	if (rc != 0)
		return load_failed(err);
	if (stats_memory_derive(c->outdir, &m) != 0) {
		stats_memory_free(&m);
		return load_failed("out of memory");
	}
	if (c->fmt == FMT_JSON) {
		jo_key(&c->jo, key);
		jo_obj_begin(&c->jo);
	}
	const struct field df[] = {
		{ "Component", "component", F_STR, 10 },
		{ "Device", "device", F_STR, 0 },
		{ "Peak(MB)", "peak_mb", F_NUM, 12 },
		{ "Peak at", "peak_time", F_TIME, 14 },
		{ "Allocs", "allocs", F_INT, 8 },
		{ "Frees", "frees", F_INT, 8 },
		{ "Final(MB)", "final_mb", F_NUM, 12 },
	};
	const struct field af[] = {
		{ "Name", "name", F_STR, 0 },
		{ "Device", "device", F_STR, 8 },
		{ "Size(KB)", "size_kb", F_NUM, 12 },
		{ "Allocated at", "allocation_time", F_TIME, 16 },
		{ "Held", "duration", F_TIME, 12 },
	};
	if (!m.have_records) {
		no_data(c, "devices", "Memory per device", "memory_record.csv");
	} else if (c->fmt != FMT_CSV) {
		emit_begin(c, "devices", "Memory per component (memory_record.csv; PTA: torch's; "
			   "times since the launch)", df, 7);
		for (size_t i = 0; i < m.ndevices; i++) {
			const struct stats_mem_device *d = &m.devices[i];
			struct val v[7] = { { d->component, 0 }, { d->device, 0 }, { NULL, d->peak_mb },
					    { NULL, d->peak_ts_us }, { NULL, (double)d->allocs },
					    { NULL, (double)d->frees }, { NULL, d->final_mb } };
			emit_row(c, df, 7, v);
		}
		emit_end(c);
		const struct field sf[] = {
			{ "Step", "step", F_INT, 6 },
			{ "Component", "component", F_STR, 10 },
			{ "Device", "device", F_STR, 0 },
			{ "Peak(MB)", "peak_mb", F_NUM, 12 },
		};
		if (!m.steps_known) {
			no_data_why(c, "steps", "Memory per step",
				    "no ProfilerStep spans in trace_view.json (no steps, or gzipped/pretty)");
		} else if (c->fmt != FMT_CSV) {
			emit_begin(c, "steps", "Peak per step and component", sf, 4);
			for (size_t i = 0; i < m.nsteps; i++) {
				const struct stats_mem_step *st = &m.steps[i];
				const struct stats_mem_device *d = &m.devices[st->dev];
				struct val v[4] = { { NULL, (double)st->step }, { d->component, 0 },
						    { d->device, 0 }, { NULL, st->peak_mb } };
				emit_row(c, sf, 4, v);
			}
			emit_end(c);
		}
	}
	if (!m.have_allocs) {
		no_data(c, "allocations", "Allocations", "operator_memory.csv");
	} else {
		char title[200];
		snprintf(title, sizeof(title), "Largest allocations (%zu in operator_memory.csv;"
			 " Held: until freed)", m.nallocs);
		emit_begin(c, "allocations", title, af, 5);
		for (size_t i = 0; i < shown(c, m.nallocs, top); i++) {
			const struct stats_alloc *al = &m.allocs[i];
			struct val v[5] = { { al->name, 0 }, { al->device, 0 }, { NULL, al->size_kb },
					    { NULL, al->alloc_us }, { NULL, al->duration_us } };
			emit_row(c, af, 5, v);
		}
		emit_end(c);
		const struct field of[] = {
			{ "Operator", "name", F_STR, 0 },
			{ "Allocations", "allocations", F_INT, 12 },
			{ "Allocated(MB)", "allocated_mb", F_NUM, 14 },
		};
		emit_begin(c, "operators", "Operators that allocate most (operator_memory.csv)", of, 3);
		for (size_t i = 0; i < shown(c, m.nops, top); i++) {
			const struct stats_mem_op *o = &m.ops[i];
			struct val v[3] = { { o->name, 0 }, { NULL, (double)o->allocs }, { NULL, o->mb } };
			emit_row(c, of, 3, v);
		}
		emit_end(c);
		size_t alive = 0;
		for (size_t i = 0; i < m.nallocs; i++)
			alive += isnan(m.allocs[i].duration_us);
		snprintf(title, sizeof(title), "Alive at the end: never freed while recorded (%zu; "
			 "leak candidates)", alive);
		emit_begin(c, "alive_at_end", title, af, 4);
		for (size_t i = 0, n = 0; i < m.nallocs && n < shown(c, alive, top); i++) {
			const struct stats_alloc *al = &m.allocs[i];
			if (!isnan(al->duration_us))
				continue;
			struct val v[4] = { { al->name, 0 }, { al->device, 0 }, { NULL, al->size_kb },
					    { NULL, al->alloc_us } };
			emit_row(c, af, 4, v);
			n++;
		}
		emit_end(c);
	}
	if (c->fmt == FMT_JSON)
		jo_obj_end(&c->jo);
	stats_memory_free(&m);
	return 0;
}

struct split_row {
	const char *name, *key;
	double v;
};

static void overview_split(const struct stats_step_summary *sum, struct split_row *split)
{
	split[0] = (struct split_row){ "Computing", "computing", sum->computing };
	split[1] = (struct split_row){ "Communication (not overlapped)",
				       "communication_not_overlapped", sum->communication };
	split[2] = (struct split_row){ "Free (device idle)", "free", sum->free_time };
	split[3] = (struct split_row){ "Other (preparing)", "other", sum->other };
}

static void csv_metric(struct ctx *c, const char *name, double v, int decimals,
		       const double *share)
{
	csv_str(&c->csv, name);
	csv_fixed(&c->csv, v, decimals);
	if (share)
		csv_fixed(&c->csv, *share, 2);
	else
		csv_str(&c->csv, NULL);
	csv_end_row(&c->csv);
}

static void overview_csv(struct ctx *c, const struct stats_step_summary *sum,
			 const struct stats_recording *rec)
{
	struct split_row split[4];
	char name[80];
	double base = sum->rows_total > 0 ? sum->rows_total : 1;
	overview_split(sum, split);
	csv_header(&c->csv, "Metric,Value,Share(%)");
	csv_metric(c, "Steps", (double)sum->steps, 0, NULL);
	snprintf(name, sizeof(name), "Total step time(%s)", unit(c));
	csv_metric(c, name, conv(c, sum->total), unit_decimals[c->unit], NULL);
	snprintf(name, sizeof(name), "Average step time(%s)", unit(c));
	csv_metric(c, name, conv(c, sum->avg), unit_decimals[c->unit], NULL);
	snprintf(name, sizeof(name), "Median step time(%s)", unit(c));
	csv_metric(c, name, conv(c, sum->median), unit_decimals[c->unit], NULL);
	for (size_t i = 0; i < 4; i++) {
		double share = 100.0 * split[i].v / base;
		snprintf(name, sizeof(name), "%s(%s)", split[i].name, unit(c));
		csv_metric(c, name, conv(c, split[i].v), unit_decimals[c->unit], &share);
	}
	if (rec->known)
		csv_metric(c, "Lost records", (double)rec->lost, 0, NULL);
}

static void overview_json(struct ctx *c, const struct stats_step_summary *sum,
			  const struct stats_recording *rec)
{
	struct split_row split[4];
	overview_split(sum, split);
	jo_obj_begin(&c->jo);
	jo_kuint(&c->jo, "steps", sum->steps);
	jo_kfixed(&c->jo, "total", conv(c, sum->total), unit_decimals[c->unit]);
	jo_kfixed(&c->jo, "avg", conv(c, sum->avg), unit_decimals[c->unit]);
	jo_kfixed(&c->jo, "median", conv(c, sum->median), unit_decimals[c->unit]);
	jo_key(&c->jo, "device_activity");
	jo_bool(&c->jo, sum->device_rows > 0);
	for (size_t i = 0; i < 4; i++)
		jo_kfixed(&c->jo, split[i].key, conv(c, split[i].v), unit_decimals[c->unit]);
	jo_key(&c->jo, "lost_records");   /* null: prof did not finish the run */
	if (rec->known)
		jo_uint(&c->jo, rec->lost);
	else
		jo_null(&c->jo);
	jo_key(&c->jo, "storage_limit_reached");
	jo_bool(&c->jo, rec->storage_limit);
	jo_key(&c->jo, "notices");
	jo_arr_begin(&c->jo);
	for (size_t i = 0; i < rec->n_notes; i++)
		jo_str(&c->jo, rec->notes[i]);
	jo_arr_end(&c->jo);
	jo_obj_end(&c->jo);
}

static void overview_lost(struct ctx *c, const struct stats_recording *rec)
{
	if (!rec->known)
		tline(c, "Lost records: unknown (prof did not finish this run; "
		      "'prof parse' counts what the streams say)");
	else if (rec->lost)
		tline(c, "Lost records: %llu (%s)", (unsigned long long)rec->lost,
		      stats_recording_cause(rec));
	else
		tline(c, "Lost records: none");
	for (size_t i = 0; i < rec->n_notes; i++)
		tpara(c, "Note: ", rec->notes[i]);
}

static void overview_text(struct ctx *c, const struct stats_step_summary *sum,
			  const struct stats_recording *rec)
{
	struct split_row split[4];
	char a[32], b[32], m[32];
	double base = sum->rows_total > 0 ? sum->rows_total : 1;
	int d = unit_decimals[c->unit];
	overview_split(sum, split);
	tline(c, "Run: %s", c->dir);
	if (!sum->steps) {
		/* not "average 0.000 ms": there is no step to average */
		tline(c, "Steps: none were seen (mark each step with prof_tx.step(), or see "
		      "the notes)");
		overview_lost(c, rec);
		tline(c, "%s", "");
		return;
	}
	tline(c, "Steps: %zu   total %s %s   average %s %s   median %s %s", sum->steps,
	      stats_fmt_num(conv(c, sum->total), d, 16, a, sizeof(a)), unit(c),
	      stats_fmt_num(conv(c, sum->avg), d, 16, b, sizeof(b)), unit(c),
	      stats_fmt_num(conv(c, sum->median), d, 16, m, sizeof(m)), unit(c));
	overview_lost(c, rec);
	if (!sum->device_rows && sum->communication > 0) {
		/* host rows with torch.distributed's CPU collectives (gloo) */
		tline(c, "Step time split (step_trace_time.csv, host: collectives of a CPU backend):");
		tline(c, "  %-32s %14s %-2s %6.2f%%", "Communication",
		      stats_fmt_num(conv(c, sum->communication), d, 14, a, sizeof(a)), unit(c),
		      100.0 * sum->communication / base);
		tline(c, "  %-32s %14s %-2s %6.2f%%", "Other (host)",
		      stats_fmt_num(conv(c, sum->rows_total - sum->communication), d, 14, a,
				    sizeof(a)), unit(c),
		      100.0 * (sum->rows_total - sum->communication) / base);
	} else if (!sum->device_rows)
		/* Host-only rows hold the whole step in Free: calling that
		 * "device idle" would mislead. */
		tline(c, "Step time split: no device activity was recorded "
		      "(steps are host time only)");
	else
		tline(c, "Step time split (step_trace_time.csv, all devices):");
	for (size_t i = 0; sum->device_rows && i < 4; i++)
		tline(c, "  %-32s %14s %-2s %6.2f%%", split[i].name,
		      stats_fmt_num(conv(c, split[i].v), unit_decimals[c->unit], 14, a, sizeof(a)),
		      unit(c), 100.0 * split[i].v / base);
	tline(c, "%s", "");
}

/* Operators' self time in steps and outside every step (set-up, an
 * evaluation loop): the table above mixes them. */
static void overview_op_split(struct ctx *c, const struct stats_op_split *sp)
{
	if (!sp->known || c->where != STATS_WHERE_ALL)
		return;
	if (c->fmt == FMT_JSON) {
		static const char *const keys[] = { "in_steps", "outside_steps" };
		jo_key(&c->jo, "operators_split");
		jo_obj_begin(&c->jo);
		for (int i = 0; i < 2; i++) {
			jo_key(&c->jo, keys[i]);
			jo_obj_begin(&c->jo);
			jo_kint(&c->jo, "calls", (int64_t)sp->calls[i]);
			jo_kfixed(&c->jo, "self", conv(c, sp->self_us[i]), unit_decimals[c->unit]);
			jo_obj_end(&c->jo);
		}
		jo_obj_end(&c->jo);
		return;
	}
	if (c->fmt != FMT_TABLE || sp->calls[0] + sp->calls[1] == 0)
		return;
	char a[32], b[32], text[400];
	int d = unit_decimals[c->unit];
	double all = sp->self_us[0] + sp->self_us[1];
	int n = snprintf(text, sizeof text, "self time %s %s in steps (%" PRIu64 " calls), %s %s "
			 "outside every step (%" PRIu64 " calls, %.0f%%)",
			 stats_fmt_num(conv(c, sp->self_us[0]), d, 16, a, sizeof a), unit(c),
			 sp->calls[0], stats_fmt_num(conv(c, sp->self_us[1]), d, 16, b, sizeof b),
			 unit(c), sp->calls[1], all > 0 ? 100.0 * sp->self_us[1] / all : 0.0);
	if (sp->calls[1] && n > 0 && (size_t)n < sizeof text)
		snprintf(text + n, sizeof text - (size_t)n, ": set-up, evaluation, between "
			 "steps; `prof stats --view ops --where outside` lists them");
	tpara(c, "Operators: ", text);
	tline(c, "%s", "");
}

static int emit_overview(struct ctx *c)
{
	char err[512];
	struct stats_steps s;
	struct stats_recording rec;
	int rc = stats_load_steps(c->outdir, &s, err, sizeof(err));
	if (rc != 0 && rc != STATS_ABSENT)
		return load_failed(err);
	struct stats_step_summary sum = { 0 };
	if (rc == 0) {
		stats_steps_summarize(&s, &sum);
		stats_steps_free(&s);
	}
	if (stats_load_recording(c->dir, &rec, err, sizeof(err)) < 0)
		return load_failed(err);
	if (c->fmt == FMT_CSV) {
		if (rc == STATS_ABSENT) {
			csv_header(&c->csv, "Metric,Value,Share(%)");
			fprintf(stderr, "prof stats: Steps: no data (step_trace_time.csv absent)\n");
			stats_free_recording(&rec);
			return 0;
		}
		overview_csv(c, &sum, &rec);
		stats_free_recording(&rec);
		return 0;
	}
	if (c->fmt == FMT_JSON) {
		jo_key(&c->jo, "overview");
		if (rc == STATS_ABSENT)
			jo_null(&c->jo);
		else
			overview_json(c, &sum, &rec);
	} else if (rc == STATS_ABSENT) {
		no_data(c, "overview", "Steps", "step_trace_time.csv");
	} else {
		overview_text(c, &sum, &rec);
	}
	stats_free_recording(&rec);
	/* by self time: totals list the wrappers first (aten::conv2d holds
	 * aten::convolution holds ...); self time is where the time goes */
	enum stats_sort keep = c->sort;
	struct stats_op_split split;
	c->sort = STATS_SORT_SELF;
	c->split = &split;
	int r1 = emit_ops(c, 5, "top_operators");
	c->split = NULL;
	if (!r1)
		overview_op_split(c, &split);
	c->sort = STATS_SORT_TOTAL;
	int r2 = c->fmt == FMT_TABLE && !sum.device_rows ? 0 : emit_kernels(c, 5, "top_kernels");
	c->sort = keep;
	return r1 ? r1 : r2;
}

static int emit_op_calls(struct ctx *c)
{
	char err[512];
	struct stats_calls calls;
	int rc = stats_load_op_calls(c->outdir, c->op, c->where, &calls, err, sizeof(err));
	if (rc == STATS_ABSENT) {
		fprintf(stderr, "prof stats: --op: no data (operator_details.csv absent)\n");
		return 1;
	}
	if (rc != 0)
		return load_failed(err);
	if (calls.n == 0) {
		fprintf(stderr, "prof stats: --op: no operator named '%s'%s in operator_details.csv\n",
			c->op, where_title[c->where]);
		stats_calls_free(&calls);
		return 1;
	}
	const struct field f[] = {
		{ "#", "call", F_INT, 6 },
		{ "Total", "total", F_TIME, 10 },
		{ "Self", "self", F_TIME, 10 },
		{ "Device", "device", F_TIME, 10 },
		{ "Step", "step", F_STR, 6 },
		{ "Input Shapes", "input_shapes", F_STR, 0 },
	};
	char title[300];
	snprintf(title, sizeof(title), "%zu calls of %s%s (operator_details.csv)", calls.n, c->op,
		 where_title[c->where]);
	if (c->fmt == FMT_JSON)
		jo_kstr(&c->jo, "operator", c->op);
	emit_begin(c, "calls", title, f, 6);
	for (size_t i = 0; i < calls.n; i++) {
		const struct stats_call *r = &calls.rows[i];
		struct val v[6] = { { NULL, (double)(i + 1) }, { NULL, r->total }, { NULL, r->self },
				    { NULL, r->device }, { r->step, 0 }, { r->shapes, 0 } };
		emit_row(c, f, 6, v);
	}
	emit_end(c);
	stats_calls_free(&calls);
	return 0;
}

/* ---- options ---- */

static int pick(const char *opt, const char *arg, const char *const *names)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(arg, names[i]) == 0)
			return i;
	fprintf(stderr, "prof stats: %s: '%s' is not one of", opt, arg);
	for (int i = 0; names[i]; i++)
		fprintf(stderr, "%s %s", i ? "," : "", names[i]);
	fprintf(stderr, "\n");
	return -1;
}

enum { O_VIEW = 256, O_SORT, O_TOP, O_UNIT, O_OP, O_FORMAT, O_WHERE, O_PEAK };

static int parse_top(const char *arg, long *top)
{
	char *end;
	long v = strtol(arg, &end, 10);
	if (!*arg || *end || v < 0 || v > 1000000000) {
		fprintf(stderr, "prof stats: --top: '%s' is not a whole number >= 0\n", arg);
		return 2;
	}
	*top = v;
	return 0;
}

/* One option into `c`: 0, or the exit status. */
static int stats_option(struct ctx *c, int ch, char **argv)
{
	int k;
	switch (ch) {
	case O_VIEW:
		if ((k = pick("--view", optarg, view_names)) < 0)
			return 2;
		c->view = (enum view)k;
		return 0;
	case O_SORT:
		if ((k = pick("--sort", optarg, sort_names)) < 0)
			return 2;
		c->sort = (enum stats_sort)k;
		return 0;
	case O_UNIT:
		if ((k = pick("--unit", optarg, unit_names)) < 0)
			return 2;
		c->unit = k;
		return 0;
	case O_FORMAT:
		if ((k = pick("--format", optarg, fmt_names)) < 0)
			return 2;
		c->fmt = (enum fmt)k;
		return 0;
	case O_WHERE:
		if ((k = pick("--where", optarg, where_names)) < 0)
			return 2;
		c->where = (enum stats_where)k;
		return 0;
	case O_TOP:
		return parse_top(optarg, &c->top);
	case O_OP:
		c->op = optarg;
		return 0;
	case O_PEAK:
		if (stats_parse_num(optarg, &c->peak_tflops) != 0 || !(c->peak_tflops > 0)) {
			fprintf(stderr, "prof stats: --peak-tflops: '%s' is not a number above 0 "
				"(the device's peak TFLOP/s, e.g. 989 for an H100's dense BF16)\n",
				optarg);
			return 2;
		}
		return 0;
	}
	if (optopt)
		fprintf(stderr, "prof stats: option '%s' needs a value; see 'prof stats --help'\n",
			argv[optind - 1]);
	else
		fprintf(stderr, "prof stats: unknown option '%s'; see 'prof stats --help'\n",
			argv[optind - 1]);
	return 2;
}

/* Options and the run directory: 0 to go on, -1 after --help, else the
 * exit status. */
static int stats_args(int argc, char **argv, struct ctx *c)
{
	static const struct option longopts[] = {
		{ "view", required_argument, NULL, O_VIEW },
		{ "peak-tflops", required_argument, NULL, O_PEAK },
		{ "sort", required_argument, NULL, O_SORT },
		{ "top", required_argument, NULL, O_TOP },
		{ "unit", required_argument, NULL, O_UNIT },
		{ "op", required_argument, NULL, O_OP },
		{ "format", required_argument, NULL, O_FORMAT },
		{ "where", required_argument, NULL, O_WHERE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch, rc;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		if (ch == 'h') {
			stats_usage(stdout);
			return -1;
		}
		if ((rc = stats_option(c, ch, argv)) != 0)
			return rc;
	}
	if (argc - optind != 1) {
		fprintf(stderr, "prof stats: %s; see 'prof stats --help'\n",
			argc - optind < 1 ? "a run directory is needed" : "one run directory only");
		return 2;
	}
	if (c->fmt == FMT_CSV && c->view == V_ALL && !c->op) {
		fprintf(stderr, "prof stats: --format csv writes one view; --view all needs "
			"--format table or json\n");
		return 2;
	}
	c->dir = argv[optind];
	return 0;
}

/* The run must have been parsed: its PROFILER_OUTPUT/parse.done. */
static int stats_check_run(struct ctx *c, char *outdir, size_t len)
{
	struct stat sb;
	char done[4200];
	if (stat(c->dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "prof stats: %s: not a run directory\n", c->dir);
		return 1;
	}
	snprintf(outdir, len, "%s/PROFILER_OUTPUT", c->dir);
	snprintf(done, sizeof(done), "%s/parse.done", outdir);
	if (stat(done, &sb) != 0) {
		fprintf(stderr, "prof stats: %s has not been parsed (no PROFILER_OUTPUT/parse.done);"
			" run 'prof parse %s' first\n", c->dir, c->dir);
		return 1;
	}
	c->outdir = outdir;
	return 0;
}

static int stats_emit_views(struct ctx *c)
{
	int rc = 0, all = c->view == V_ALL;
	if (c->op)
		return emit_op_calls(c);
	if (!rc && (all || c->view == V_OVERVIEW))
		rc = emit_overview(c);
	if (!rc && (all || c->view == V_STEPS))
		rc = emit_steps(c, "steps");
	if (!rc && (all || c->view == V_OPS))
		rc = emit_ops(c, c->top, "operators");
	if (!rc && (all || c->view == V_KERNELS))
		rc = emit_kernels(c, c->top, "kernels");
	if (!rc && (all || c->view == V_API))
		rc = emit_api(c, c->top, "api");
	if (!rc && (all || c->view == V_MEMORY))
		rc = emit_memory(c, c->top, "memory");
	if (!rc && (all || c->view == V_RANGES))
		rc = emit_ranges(c, c->top, "ranges", 0);
	if (!rc && (all || c->view == V_MODULES))
		rc = emit_ranges(c, c->top, "modules", 1);
	if (!rc && (all || c->view == V_FLOPS))
		rc = emit_flops(c, "flops");
	return rc;
}

int cmd_stats(int argc, char **argv)
{
	struct ctx c = { .view = V_OVERVIEW, .sort = STATS_SORT_TOTAL, .top = 15, .unit = 1,
			 .fmt = FMT_TABLE, .out = stdout, .width = terminal_width() };
	char outdir[4096];
	int rc = stats_args(argc, argv, &c);
	if (rc)
		return rc < 0 ? 0 : rc;
	if ((rc = stats_check_run(&c, outdir, sizeof outdir)) != 0)
		return rc;
	if (c.fmt == FMT_CSV)
		csv_init(&c.csv, stdout);
	if (c.fmt == FMT_JSON) {
		jo_init_file(&c.jo, stdout, 2);
		jo_obj_begin(&c.jo);
		jo_kstr(&c.jo, "run", c.dir);
		jo_kstr(&c.jo, "unit", unit(&c));
	}
	rc = stats_emit_views(&c);
	if (c.fmt == FMT_JSON) {
		jo_obj_end(&c.jo);
		if (jo_finish(&c.jo) != 0)
			c.error = 1;
		putchar('\n');
	}
	if (c.fmt == FMT_CSV && csv_finish(&c.csv) != 0)
		c.error = 1;
	if (!rc && c.error)
		rc = 1;
	return rc;
}
