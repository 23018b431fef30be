/*
 * prof diff: two runs compared, BASE and NEW. Each side is one run's
 * PROFILER_OUTPUT/ or a cluster's runs taken together (operators, kernels
 * and ranges summed over the ranks; a step's time is its slowest row, so
 * the slowest rank's). This library loads, matches names and judges
 * whether the runs can be compared; cmd/diff.c prints. Times are
 * microseconds, as in the CSVs.
 */
#ifndef PROF_STATS_DIFF_H
#define PROF_STATS_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "stats/stats.h"

struct diff_side {
	size_t runs;                  /* run directories read (a cluster's ranks) */
	int have_steps;               /* step_trace_time.csv was found */
	struct stats_step_summary steps;
	struct stats_agg ops;         /* operator_details.csv: STATS_OP_* metrics */
	struct stats_agg kernels;     /* op_statistic.csv / kernel_details.csv: metric 0 */
	struct stats_agg ranges;      /* range_statistic.csv's user ranges: STATS_RANGE_* */
	int have_ops, have_kernels, have_ranges;
	double peak_mb;               /* the largest device's peak (memory_record.csv); NaN: none */
	char devices[256];            /* memory_record.csv's devices, "SIM:0,SIM:1"; "": none */
	int lost_known;               /* every run's profiler_info.json has end_info */
	uint64_t lost;                /* records lost while recording, over the runs */
	struct stats_findings findings;   /* report.html's, of a single run */
	int have_findings;            /* its findings.json was read */
	char *command;                /* the first run's command; NULL: not known */
	char **words;                 /* ... word by word (stats_recording's) */
	size_t nwords;
};

/* Loads the runs' PROFILER_OUTPUT/ (every one parsed already), and the
 * findings.json of `findings_dir` (a cluster's cluster_analysis_output/;
 * NULL: the one run's PROFILER_OUTPUT/, none for several). 0, or -1 with
 * a message in err naming the file that cannot be read. */
int diff_side_load(struct diff_side *s, char *const *run_dirs, size_t n,
		   const char *findings_dir, char *err, size_t errlen);
void diff_side_free(struct diff_side *s);

/* NEW - BASE in percent of BASE; NaN when BASE is 0 and NEW is not. */
double diff_pct(double base, double new_value);

enum diff_status { DIFF_BOTH, DIFF_APPEARED, DIFF_VANISHED };

/* One name of BASE or NEW ([0] BASE, [1] NEW; zero where it is absent). */
struct diff_row {
	const char *name;             /* borrowed from the sides' aggregations */
	enum diff_status status;
	uint64_t calls[2];
	double total[2], self[2];
	double change;                /* NEW - BASE of the metric the rows are ordered by */
};

struct diff_rows {
	struct diff_row *rows;
	size_t n, appeared, vanished;
};

/* The names of base and new matched; total and self are metric indexes
 * (self < 0: no self time, it repeats the total). Ordered by the size of
 * the change (absolute) in self time when by_self, else in total time;
 * ties by name. 0, or -1 when out of memory. */
int diff_rows_build(const struct stats_agg *base, const struct stats_agg *new_agg, int total,
		    int self, int by_self, struct diff_rows *out);
void diff_rows_free(struct diff_rows *d);

/* Step counts further apart than this ratio make runs hard to compare. */
#define DIFF_STEPS_RATIO 2.0
#define DIFF_NOTES_MAX 8

/* Why two runs may not compare: different programs, devices, numbers of
 * runs (ranks), step counts more than DIFF_STEPS_RATIO apart, no steps.
 * The same program with other arguments is no such reason (a model size
 * compared is what the user asked for) but is said: args holds the words
 * that differ, each side's. */
struct diff_check {
	size_t n;
	char notes[DIFF_NOTES_MAX][512];
	int no_steps;                 /* BASE or NEW has no step: no step time to compare */
	int args_differ;
	char args[2][256];            /* BASE's and NEW's differing words; "" where none */
};
void diff_check_runs(const struct diff_side *base, const struct diff_side *new_side,
		     struct diff_check *c);

#endif
