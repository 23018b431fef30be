/* report.html of one run: what profiler_info.json says of the run, the
 * findings, the step breakdown, the top tables and the series over time,
 * all from the run's own CSVs. */
#include "report/report.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "outputs/out_file.h"
#include "stats/csv_read.h"
#include "stats/stats.h"

#define TOP 15                   /* rows of each table */
#define C_COMP "#4c78a8"
#define C_COMM "#e45756"
#define C_FREE "#bab0ac"
#define C_OTHER "#f2cf5b"

void report_html_text(struct strbuf *sb, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': sb_puts(sb, "&lt;"); break;
		case '>': sb_puts(sb, "&gt;"); break;
		case '&': sb_puts(sb, "&amp;"); break;
		case '"': sb_puts(sb, "&quot;"); break;
		default: sb_putc(sb, *s);
		}
	}
}

void report_html_begin(struct strbuf *sb, const char *title)
{
	sb_puts(sb, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>");
	report_html_text(sb, title);
	sb_puts(sb, "</title><style>\n"
		"body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:1040px;"
		"color:#222;padding:0 1em}\n"
		"h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}\n"
		"table{border-collapse:collapse;margin:.5em 0}td,th{padding:2px 8px;"
		"border-bottom:1px solid #eee;text-align:right}td:first-child,th:first-child"
		"{text-align:left;max-width:560px;overflow-wrap:anywhere}\n"
		"th{background:#f4f4f4}dl{display:grid;grid-template-columns:max-content auto;"
		"gap:2px 12px}dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}\n"
		"figure{margin:.8em 0}figcaption{color:#555;font-size:.9em}svg{background:#fff}\n"
		".grid{stroke:#ddd}.ax{font-size:11px;fill:#444}.slow{fill:#c00;font-weight:700}\n"
		".finding{background:#fff4e5;border-left:4px solid #f28e2b;padding:4px 10px;"
		"margin:4px 0}.ok{background:#eef7ee;border-left:4px solid #59a14f;padding:4px 10px}\n"
		".try{color:#555}\n</style></head><body>\n<h1>");
	report_html_text(sb, title);
	sb_puts(sb, "</h1>\n");
}

void report_html_end(struct strbuf *sb)
{
	sb_puts(sb, "<p class=\"try\">Written by prof. The numbers come from the CSVs beside "
		"this file; outputs.md says what each means.</p>\n</body></html>\n");
}

void report_html_findings(struct strbuf *sb, const struct report_finding *f, size_t n)
{
	sb_puts(sb, "<h2>Findings</h2>\n");
	if (!n)
		sb_puts(sb, "<p class=\"ok\">No rule fired: nothing stands out.</p>\n");
	for (size_t i = 0; i < n; i++) {
		sb_puts(sb, "<div class=\"finding\"><b>");
		report_html_text(sb, f[i].text);
		sb_printf(sb, "</b> (rule %s: above %g%s)<br><span class=\"try\">Try: ",
			  f[i].rule->id, f[i].rule->threshold, f[i].rule->unit);
		report_html_text(sb, f[i].rule->advice);
		sb_puts(sb, ".</span></div>\n");
	}
}

int report_html_save(struct strbuf *sb, const char *dir, FILE *log)
{
	int rc = sb->oom ? -ENOMEM : out_file_write(dir, "report.html", sb->buf, sb->len);
	if (rc)
		fprintf(log, "prof parse: %s/report.html: %s\n", dir, strerror(-rc));
	return rc;
}

/* ---- the run ---- */

static void info_row(struct strbuf *sb, const char *key, const char *val)
{
	sb_printf(sb, "<dt>%s</dt><dd>", key);
	report_html_text(sb, val);
	sb_puts(sb, "</dd>");
}

static void run_info(struct strbuf *sb, const char *run_dir)
{
	struct stats_recording rec;
	char err[256], buf[256];
	int have = stats_load_recording(run_dir, &rec, err, sizeof err) == 0;
	char *path = fs_join(run_dir, "profiler_info.json"), *text = NULL;
	size_t len = 0;
	cJSON *root = path && fs_read_file(path, &text, &len) == 0 ?
		cJSON_ParseWithLength(text, len) : NULL;
	const cJSON *end = cJSON_GetObjectItemCaseSensitive(root, "end_info");
	const cJSON *host = cJSON_GetObjectItemCaseSensitive(root, "host");
	const cJSON *when = cJSON_GetObjectItemCaseSensitive(root, "start_time");
	const cJSON *dur = cJSON_GetObjectItemCaseSensitive(end, "duration_ns");
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(end, "exit_code");
	const cJSON *sig = cJSON_GetObjectItemCaseSensitive(end, "signal_name");
	sb_puts(sb, "<h2>The run</h2><dl>");
	info_row(sb, "Command", have && rec.command ? rec.command : "(not said)");
	info_row(sb, "Host", cJSON_IsString(host) ? host->valuestring : "(not said)");
	if (cJSON_IsString(when))
		info_row(sb, "Started", when->valuestring);
	if (cJSON_IsNumber(dur)) {
		snprintf(buf, sizeof buf, "%.3f s", dur->valuedouble / 1e9);
		info_row(sb, "Duration", buf);
	}
	if (cJSON_IsString(sig))
		snprintf(buf, sizeof buf, "killed by %s", sig->valuestring);
	else if (cJSON_IsNumber(code))
		snprintf(buf, sizeof buf, "%d", code->valueint);
	else
		snprintf(buf, sizeof buf, "not known (prof did not see the run end)");
	info_row(sb, "Exit status", buf);
	if (have && rec.lost)
		snprintf(buf, sizeof buf, "%llu (%s)", (unsigned long long)rec.lost,
			 stats_recording_cause(&rec));
	else
		snprintf(buf, sizeof buf, have && rec.known ? "none" : "not known");
	info_row(sb, "Records lost", buf);
	for (size_t i = 0; have && i < rec.n_notes; i++)
		info_row(sb, "Notice", rec.notes[i]);
	sb_puts(sb, "</dl>\n");
	cJSON_Delete(root);
	free(text);
	free(path);
	if (have)
		stats_free_recording(&rec);
}

/* The device rows' Free and exposed communication, over the steps but the
 * first when there are 3 or more: the first begins where recording began
 * (imports, set-up, the first batch), which makes a share of it say
 * little about the loop. */
static void device_facts(const struct stats_steps *st, size_t nsteps, struct report_facts *f)
{
	long first = LONG_MAX;
	for (size_t i = 0; i < st->n; i++)
		if (st->rows[i].device >= 0 && st->rows[i].step < first)
			first = st->rows[i].step;
	f->device_us = f->free_us = f->comm_exposed_us = 0;
	for (size_t i = 0; i < st->n; i++) {
		const struct stats_step *r = &st->rows[i];
		if (r->device < 0 || (nsteps >= 3 && r->step == first))
			continue;
		f->device_us += r->total;
		f->free_us += r->free_time;
		f->comm_exposed_us += r->comm_not_overlapped;
	}
}

/* Per step (ascending numbers) its longest row: the breakdown drawn. */
static void steps_part(struct strbuf *sb, const char *out_dir, struct report_facts *f)
{
	struct stats_steps st;
	char err[256];
	if (stats_load_steps(out_dir, &st, err, sizeof err) != 0 || !st.n) {
		sb_puts(sb, "<h2>Steps</h2><p>No steps were recorded.</p>\n");
		if (st.rows)
			stats_steps_free(&st);
		return;
	}
	struct stats_step_summary sum;
	size_t n;
	const struct stats_step **pick = stats_steps_longest(&st, &n);
	if (!pick || stats_steps_summarize(&st, &sum)) {
		/* the parse says that memory ran out; the page, where */
		sb_puts(sb, "<h2>Steps</h2><p>Not shown: memory ran out.</p>\n");
		free(pick);
		stats_steps_free(&st);
		return;
	}
	f->step_us = sum.total;
	if (sum.device_rows)
		device_facts(&st, sum.steps, f);
	if (n > REPORT_MAX_POINTS)
		n = REPORT_MAX_POINTS;          /* whole steps, the first ones */
	double *v = calloc(4 * (n ? n : 1), sizeof *v);
	char (*lab)[24] = calloc(n ? n : 1, sizeof *lab);
	const char **labels = calloc(n ? n : 1, sizeof *labels);
	sb_printf(sb, "<h2>Steps</h2><p>%zu steps; median %.3f ms, mean %.3f ms.</p>\n",
		  sum.steps, sum.median / 1000, sum.avg / 1000);
	if (v && lab && labels) {
		for (size_t i = 0; i < n; i++) {
			const struct stats_step *r = pick[i];
			snprintf(lab[i], sizeof lab[i], "%ld", r->step);
			labels[i] = lab[i];
			if (r->device < 0) {
				v[i] = r->total / 1000;
				continue;
			}
			double other = r->total - r->computing - r->comm_not_overlapped - r->free_time;
			v[i] = r->computing / 1000;
			v[n + i] = r->comm_not_overlapped / 1000;
			v[2 * n + i] = r->free_time / 1000;
			v[3 * n + i] = other > 0 ? other / 1000 : 0;
		}
		struct report_series dev[] = {
			{ "Computing", C_COMP, v }, { "Communication (not overlapped)", C_COMM, v + n },
			{ "Free (device idle)", C_FREE, v + 2 * n },
			{ "Other (host before the device starts)", C_OTHER, v + 3 * n } };
		struct report_series host[] = { { "Step (host only: no device)", C_COMP, v } };
		report_svg_bars(sb, "Step time per step, as step_trace_time.csv splits it "
				"(the slowest device or rank of each step)", "ms", labels, n,
				sum.device_rows ? dev : host, sum.device_rows ? 4 : 1, NULL);
	}
	free(v);
	free(lab);
	free(labels);
	free(pick);
	stats_steps_free(&st);
}

static void table(struct strbuf *sb, const char *title, struct stats_agg *a, int self_metric,
		  int total_metric)
{
	sb_printf(sb, "<h3>%s</h3><table><tr><th>Name</th><th>Calls</th>", title);
	if (self_metric >= 0)
		sb_puts(sb, "<th>Self (ms)</th>");
	sb_puts(sb, "<th>Total (ms)</th><th>Avg (µs)</th></tr>\n");
	for (size_t i = 0; i < a->n && i < TOP; i++) {
		const struct stats_row *r = &a->rows[i];
		sb_puts(sb, "<tr><td>");
		report_html_text(sb, r->name);
		sb_printf(sb, "</td><td>%llu</td>", (unsigned long long)r->count);
		if (self_metric >= 0)
			sb_printf(sb, "<td>%.3f</td>", r->sum[self_metric] / 1000);
		sb_printf(sb, "<td>%.3f</td><td>%.1f</td></tr>\n", r->sum[total_metric] / 1000,
			  stats_row_avg(r, total_metric));
	}
	sb_puts(sb, "</table>\n");
}

static void tables_part(struct strbuf *sb, const char *out_dir, struct report_facts *f)
{
	struct stats_agg a;
	struct stats_op_split split;
	const char *src;
	char err[256];
	sb_puts(sb, "<h2>Where the time goes</h2>\n");
	stats_agg_init(&a, 3);
	if (stats_load_ops(out_dir, STATS_WHERE_ALL, &a, &split, err, sizeof err) == 0 && a.n) {
		stats_agg_sort(&a, STATS_SORT_TOTAL, STATS_OP_SELF);
		table(sb, "Operators, by self time", &a, STATS_OP_SELF, STATS_OP_TOTAL);
		if (split.known) {
			f->ops_in_us = split.self_us[0];
			f->ops_out_us = split.self_us[1];
		}
	}
	stats_agg_free(&a);
	stats_agg_init(&a, 1);
	if (stats_load_kernels(out_dir, &a, &src, err, sizeof err) == 0 && a.n) {
		stats_agg_sort(&a, STATS_SORT_TOTAL, 0);
		table(sb, "Device kernels and tasks, by total time", &a, -1, 0);
	}
	stats_agg_free(&a);
	stats_agg_init(&a, 3);
	if (stats_load_ranges(out_dir, "user_annotation", STATS_WHERE_ALL, &a, err,
			      sizeof err) == 0 && a.n) {
		stats_agg_sort(&a, STATS_SORT_TOTAL, STATS_RANGE_SELF);
		table(sb, "User ranges, by self time", &a, STATS_RANGE_SELF, STATS_RANGE_TOTAL);
	}
	stats_agg_free(&a);
	double data;
	if (stats_data_loading(out_dir, &data) == 0)
		f->data_us = data;
}

/* Columns of a CSV as doubles (NaN where empty); NULL when absent. */
static double *column(const struct csv_table *t, const char *name)
{
	int c = csv_column(t, name);
	double *v = c < 0 ? NULL : malloc((t->nrows ? t->nrows : 1) * sizeof *v);
	for (size_t r = 0; v && r < t->nrows; r++)
		if (stats_parse_num(csv_cell(t, r, (size_t)c), &v[r]))
			v[r] = NAN;
	return v;
}

static int load(const char *out_dir, const char *name, struct csv_table *t)
{
	char err[256];
	char *path = fs_join(out_dir, name);
	int rc = path ? csv_table_load(t, path, err, sizeof err) : -1;
	free(path);
	if (rc == 0 && !t->nrows) {
		csv_table_free(t);
		rc = -1;
	}
	return rc;
}

static void host_part(struct strbuf *sb, const char *out_dir)
{
	struct csv_table t;
	if (load(out_dir, "host_usage.csv", &t))
		return;
	double *x = column(&t, "Timestamp(us)"), *u = column(&t, "Process CPU User(%)");
	double *s = column(&t, "Process CPU System(%)"), *sys = column(&t, "System CPU(%)");
	double *rss = column(&t, "Process RSS(MB)"), *used = column(&t, "System Memory Used(MB)");
	sb_puts(sb, "<h2>Host</h2>\n");
	if (x && u && s && sys) {
		for (size_t i = 0; i < t.nrows; i++) {
			x[i] /= 1e6;
			u[i] = (isnan(u[i]) ? 0 : u[i]) + (isnan(s[i]) ? 0 : s[i]);
		}
		struct report_series cpu[] = { { "Process tree CPU (% of one CPU)", C_COMP, u },
					       { "Machine CPU (% of all CPUs)", C_COMM, sys } };
		report_svg_lines(sb, "Host CPU over time", "s", "%", x, t.nrows, cpu, 2);
	}
	if (x && rss && used) {
		struct report_series mem[] = { { "Process tree RSS", C_COMP, rss },
					       { "Machine memory used", C_COMM, used } };
		report_svg_lines(sb, "Host memory over time", "s", "MB", x, t.nrows, mem, 2);
	}
	free(x); free(u); free(s); free(sys); free(rss); free(used);
	csv_table_free(&t);
}

static void device_part(struct strbuf *sb, const char *out_dir, struct report_facts *f)
{
	struct csv_table t;
	if (load(out_dir, "device_usage.csv", &t))
		return;
	double *x = column(&t, "Timestamp(us)"), *dev = column(&t, "Device_id");
	double *ut = column(&t, "Utilization(%)"), *mu = column(&t, "Memory Used(MB)");
	double *mt = column(&t, "Memory Total(MB)");
	sb_puts(sb, "<h2>Device</h2>\n");
	if (x && dev && ut && mu && mt) {
		size_t n = 0;              /* the first device's rows only, packed */
		for (size_t i = 0; i < t.nrows; i++) {
			if (dev[i] != dev[0])
				continue;
			x[n] = x[i] / 1e6, ut[n] = ut[i], mu[n] = mu[i], mt[n] = mt[i];
			if (mt[n] > 0 && (isnan(f->mem_peak_mb) || mu[n] > f->mem_peak_mb)) {
				f->mem_peak_mb = mu[n];
				f->mem_total_mb = mt[n];
			}
			n++;
		}
		char title[96];
		snprintf(title, sizeof title, "Device %.0f: utilisation over time", dev[0]);
		struct report_series s1[] = { { "Utilization", C_COMP, ut } };
		report_svg_lines(sb, title, "s", "%", x, n, s1, 1);
		snprintf(title, sizeof title, "Device %.0f: memory used over time", dev[0]);
		struct report_series s2[] = { { "Memory used", C_COMP, mu },
					      { "Memory total", C_FREE, mt } };
		report_svg_lines(sb, title, "s", "MB", x, n, s2, 2);
	}
	free(x); free(dev); free(ut); free(mu); free(mt);
	csv_table_free(&t);
}

/* The capacity of a (component, device) of memory_record.csv: the device's
 * own allocations only (torch's PTA rows are a share of them); NULL when
 * no device info record gave it. */
static const struct report_device *capacity_of(const struct stats_mem_device *md,
					       const struct report_device *devs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (devs[i].total_mb > 0 && strcmp(md->component, devs[i].component) == 0 &&
		    strcmp(md->device, devs[i].device) == 0)
			return &devs[i];
	return NULL;
}

/* The fullest device by what prof recorded. NVML's samples (device_part,
 * which runs first), when there are any, win: they see everything on the
 * device, prof only what it recorded. */
static void memory_facts(const struct stats_memory *m, const struct report_device *devs,
			 size_t n, struct report_facts *f)
{
	if (!isnan(f->mem_peak_mb))
		return;
	double best = -1;
	for (size_t i = 0; i < n; i++) {   /* by the map: both lists can be long */
		size_t d = stats_memory_find(m, devs[i].component, devs[i].device);
		if (d == m->ndevices || !(devs[i].total_mb > 0))
			continue;
		if (m->devices[d].peak_mb / devs[i].total_mb > best) {
			best = m->devices[d].peak_mb / devs[i].total_mb;
			f->mem_peak_mb = m->devices[d].peak_mb;
			f->mem_total_mb = devs[i].total_mb;
		}
	}
}

/* memory_record.csv: one chart per (component, device), at most four. */
static void memory_part(struct strbuf *sb, const char *out_dir, const struct report_device *devs,
			size_t ndevs, struct report_facts *f)
{
	struct stats_memory m;
	char err[256];
	if (stats_load_memory(out_dir, &m, err, sizeof err) != 0)
		return;
	memory_facts(&m, devs, ndevs, f);
	double *x = malloc((m.nrows ? m.nrows : 1) * sizeof *x);
	double *y = malloc((m.nrows ? m.nrows : 1) * sizeof *y);
	if (m.nrows && x && y)
		sb_puts(sb, "<h2>Memory recorded (memory_record.csv)</h2>\n");
	for (size_t d = 0; m.nrows && x && y && d < m.ndevices && d < 4; d++) {
		size_t n = 0;
		for (size_t i = 0; i < m.nrows; i++)
			if (m.rows[i].dev == d) {
				x[n] = m.rows[i].ts_us / 1e6;
				y[n++] = m.rows[i].mb;
			}
		const struct stats_mem_device *md = &m.devices[d];
		const struct report_device *cap = capacity_of(md, devs, ndevs);
		char title[200], of[48] = "";
		if (cap)
			snprintf(of, sizeof of, " of %.1f MB", cap->total_mb);
		snprintf(title, sizeof title, "%s %s allocated over time (peak %.1f MB%s)",
			 strcmp(md->component, "PTA") ? md->component : "Framework (PTA)",
			 md->device, md->peak_mb, of);
		struct report_series s[] = { { "Allocated", C_COMP, y } };
		report_svg_lines(sb, title, "s", "MB", x, n, s, 1);
	}
	free(x);
	free(y);
	stats_memory_free(&m);
}

static void gc_part(const char *out_dir, struct report_facts *f)
{
	struct csv_table t;
	if (load(out_dir, "gc_record.csv", &t))
		return;
	double *d = column(&t, "Duration(us)");
	f->gc_us = f->gc_count = 0;
	for (size_t i = 0; d && i < t.nrows; i++)
		if (!isnan(d[i])) {
			f->gc_us += d[i];
			f->gc_count++;
		}
	free(d);
	csv_table_free(&t);
}

int report_write_run(const char *run_dir, const char *out_dir,
		     const struct report_device *devs, size_t ndevs, FILE *log,
		     struct report_finding *out, size_t max, size_t *nfound)
{
	struct strbuf body = STRBUF_INIT, page = STRBUF_INIT;
	struct report_facts f;
	report_facts_init(&f);
	run_info(&body, run_dir);
	struct strbuf parts = STRBUF_INIT;   /* the charts, after the findings they feed */
	steps_part(&parts, out_dir, &f);
	tables_part(&parts, out_dir, &f);
	host_part(&parts, out_dir);
	device_part(&parts, out_dir, &f);
	memory_part(&parts, out_dir, devs, ndevs, &f);
	gc_part(out_dir, &f);
	struct report_finding found[16];
	size_t n = report_findings(&f, found, 16);
	report_html_begin(&page, "prof report");
	sb_add(&page, body.buf ? body.buf : "", body.len);
	report_html_findings(&page, found, n);
	sb_add(&page, parts.buf ? parts.buf : "", parts.len);
	report_html_end(&page);
	int rc = report_html_save(&page, out_dir, log);
	if (!rc)
		rc = report_findings_save(out_dir, found, n, log);
	sb_free(&body);
	sb_free(&parts);
	sb_free(&page);
	if (out && nfound) {
		*nfound = rc ? 0 : n < max ? n : max;
		for (size_t i = 0; i < *nfound; i++)
			out[i] = found[i];
	}
	return rc;
}
