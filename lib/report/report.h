/*
 * report.html: a page a person opens from disk. After a parse, the run's
 * own PROFILER_OUTPUT/ CSVs (read with lib/stats) and the devices'
 * capacities the parse found in, PROFILER_OUTPUT/report.html out; for a
 * cluster, lib/cluster's step table and slow-rank verdicts in,
 * cluster_analysis_output/report.html out. One file: styles and charts
 * (SVG that report_svg.c writes) inline, no script, nothing fetched.
 * Findings come from the rule table of report_rules.c, whose thresholds
 * outputs.md ("report.html") documents. Library code: it reports through
 * `log` and returns a status.
 */
#ifndef PROF_REPORT_H
#define PROF_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "common/strbuf.h"

/* ---- findings ---- */

/* What the rules look at; NaN: not known (the rule says nothing). Times
 * are µs. */
struct report_facts {
	double step_us;            /* the steps' time: each step's longest row, summed */
	double data_us;            /* the program waiting for DataLoader batches in steps */
	double device_us;          /* the device rows' step time, summed */
	double free_us;            /* their Free */
	double comm_exposed_us;    /* their Communication(Not Overlapped) */
	double gc_us;              /* garbage collections (gc_record.csv) */
	double gc_count;
	double mem_peak_mb, mem_total_mb;   /* the fullest device: peak and capacity */
	double ops_in_us, ops_out_us;       /* operators' self time in and outside steps */
	double slow_pct;           /* cluster: the slowest rank's excess over the median, % */
	double slow_excess_us;     /* ... and in µs (NaN: not known) */
	int slow_rank;
	const char *slow_phase;
	int slow_late;             /* the rank arrives late at the collectives: the
				    * excess is the others' wait for it */
};

/* Every fact NaN (slow_rank -1, slow_phase NULL). */
void report_facts_init(struct report_facts *f);

/* A rule fires when its value exceeds its threshold (both in `unit`). */
struct report_rule {
	const char *id;
	double threshold;
	const char *unit;          /* "%" */
	double (*value)(const struct report_facts *f);   /* NaN: does not apply */
	const char *what, *after;  /* the words before and after the value */
	const char *advice;        /* what to try */
};

extern const struct report_rule report_rules[];
extern const size_t report_nrules;

struct report_finding {
	const struct report_rule *rule;
	double value;
	char text[200];            /* `what` with the number filled in */
};

/* The rules that fire on f, in the table's order, at most max. */
size_t report_findings(const struct report_facts *f, struct report_finding *out, size_t max);

/* ---- the page ---- */

/* A device's memory capacity, as its device info record says it: the
 * parse hands these over (no CSV holds them). Without NVML samples
 * (device_usage.csv) they are the memory_capacity rule's capacity, set
 * against the device's peak in memory_record.csv. */
struct report_device {
	const char *component;     /* memory_record.csv's Component: "SIM", "CUDA" */
	char device[48];           /* its Device Type: "SIM:0" */
	double total_mb;
};

/* RUN_DIR's profiler_info.json, OUT_DIR's CSVs and the devices' capacities
 * (n may be 0) -> OUT_DIR/report.html and OUT_DIR/findings.json; the
 * findings it shows into `found` (at most `max`; NULL: not wanted), their
 * number in *nfound. 0, or a negative errno (said on log). */
int report_write_run(const char *run_dir, const char *out_dir,
		     const struct report_device *devs, size_t ndevs, FILE *log,
		     struct report_finding *found, size_t max, size_t *nfound);

/* OUT_DIR/findings.json (STATS_FINDINGS_FILE, which lib/stats reads
 * back): the findings as a JSON array (rule, value, threshold, unit, text,
 * advice); [] when none fired. 0, or a negative errno (said on log). */
int report_findings_save(const char *out_dir, const struct report_finding *f, size_t n,
			 FILE *log);

/* A finding as one line: its text, then "; try " and the rule's advice. */
void report_finding_line(const struct report_finding *f, char *buf, size_t len);

/* What the page's pieces share (report_html.c). */
void report_html_begin(struct strbuf *sb, const char *title);
void report_html_end(struct strbuf *sb);
void report_html_text(struct strbuf *sb, const char *s);   /* escaped */
void report_html_findings(struct strbuf *sb, const struct report_finding *f, size_t n);
int report_html_save(struct strbuf *sb, const char *dir, FILE *log);

/* ---- charts (report_svg.c): bars and polylines, nothing more ---- */

#define REPORT_MAX_POINTS 2000     /* a line chart's points at most */

struct report_series {
	const char *name;
	const char *color;         /* CSS colour */
	const double *v;           /* n values */
};

/* Stacked bars, one per label, the series stacked bottom to top. mark[i]
 * (NULL: none) draws bar i's label in red with "slow". */
void report_svg_bars(struct strbuf *sb, const char *title, const char *unit,
		     const char *const *labels, size_t n, const struct report_series *s,
		     size_t ns, const int *mark);
/* Lines over x (n points, ascending), each series its own polyline;
 * more than REPORT_MAX_POINTS points are reduced to the largest value of
 * each of REPORT_MAX_POINTS buckets (peaks are kept); fewer than two
 * points: a line of text instead. */
void report_svg_lines(struct strbuf *sb, const char *title, const char *xunit,
		      const char *unit, const double *x, size_t n,
		      const struct report_series *s, size_t ns);

#endif
