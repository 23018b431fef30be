/*
 * Cluster analysis: a directory holding several run directories (one per
 * rank) in, DIR/cluster_analysis_output/ out: cluster_step_trace_time.csv,
 * cluster_communication_matrix.json and the slow-rank report
 * cluster_slow_rank.txt / .json. Library code: it reports through `log`
 * and returns a status; it never exits (the parse workers it forks do).
 */
#ifndef PROF_CLUSTER_H
#define PROF_CLUSTER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pipeline/parse.h"

/* Where `prof parse` writes the analysis, in the cluster (or multi-rank
 * run) directory. */
#define CLUSTER_OUT_DIR "cluster_analysis_output"

/* The step_trace_time.csv columns after Device_id and Step, in order. */
enum {
	CLUSTER_COMPUTING, CLUSTER_COMM_NOT_OVERLAPPED, CLUSTER_OVERLAPPED,
	CLUSTER_COMMUNICATION, CLUSTER_FREE, CLUSTER_STAGE, CLUSTER_BUBBLE,
	CLUSTER_COMM_EXCL_RECEIVE, CLUSTER_PREPARING, CLUSTER_NCOLS
};

struct cluster_step {
	int64_t step;                 /* -1: the run had no step */
	double v[CLUSTER_NCOLS];      /* µs */
	int device_row;               /* 1 a device's row, 0 the host's (no device
				       * activity); -1 not known (read back) */
};

struct cluster_rank {
	int rank;
	char *dir;                    /* the run directory */
	struct cluster_step *steps;   /* sorted by step */
	size_t nsteps;
};

struct cluster {
	struct cluster_rank *ranks;   /* sorted by rank */
	size_t n;
	size_t skipped_rows;          /* read back: rows that were not a rank's step */
};

/* The run directories under `dir` (children named *_prof holding raw/, up
 * to three levels down; cluster_analysis_output/ is not entered), sorted.
 * 0 with *n == 0 when there is none; -errno on failure. */
int cluster_find_runs(const char *dir, char ***runs, size_t *n);
void cluster_free_runs(char **runs, size_t n);

/* "rank" of run_dir/profiler_info.json, or -1; of its parsed text. */
int cluster_info_rank(const char *run_dir);
struct cJSON;
int cluster_info_rank_of(const struct cJSON *root);

/* 1 when `runs` are separate runs made one after another (none names a
 * rank, each ended before the next began: `prof run` twice into one
 * output directory), not the ranks of one job; else 0. */
int cluster_runs_apart(char **runs, size_t n);

/* Reads a step_trace_time.csv (text) into r->steps (none on entry),
 * sorted by step: one row per step;
 * several rows of a step (devices, processes) give the device row with the
 * largest Stage, a host row (Device_id -1) only when no device row has the
 * step. 0, or -1 when the header is not step_trace_time.csv's. */
int cluster_read_step_csv(const char *text, struct cluster_rank *r);

/* Writes cluster_step_trace_time.csv into out_dir. 0 or -errno. */
int cluster_write_step_trace(const char *out_dir, const struct cluster *c);
/* Reads its text back into c (empty on entry): the ranks with their steps,
 * sorted, no run directory. 0, -EINVAL when the header is not the file's,
 * -ENOMEM (c holds what was read; cluster_free it either way). Rows that
 * are not a rank's step are skipped and counted (c->skipped_rows). */
int cluster_read_cluster_csv(const char *text, struct cluster *c);

/* DIR/cluster_analysis_output/ read back into c: the ranks and steps of
 * its cluster_step_trace_time.csv, each rank's run directory (DIR/...)
 * from its hta/ link, NULL where there is none. 0; -ENOENT when DIR has
 * no analysis; -EINVAL when the file is not that CSV; another -errno.
 * cluster_free(c) in every case. */
int cluster_load(const char *dir, struct cluster *c);

/* The slow-rank rule: a rank is slow in a phase when its typical step (the
 * median over its steps) exceeds the median of the ranks' typical steps by
 * more than max(CLUSTER_SLOW_RATIO x median, CLUSTER_SLOW_MIN_US). */
#define CLUSTER_SLOW_RATIO  0.10
#define CLUSTER_SLOW_MIN_US 1000.0
#define CLUSTER_NPHASES 3
enum { CLUSTER_PHASE_COMPUTING, CLUSTER_PHASE_COMM, CLUSTER_PHASE_FREE };
extern const int cluster_phase_col[CLUSTER_NPHASES];
extern const char *const cluster_phase_name[CLUSTER_NPHASES];

struct cluster_verdict {
	int rank, phase;              /* phase: index into cluster_phase_* */
	double value, median, excess; /* µs; excess = value - median */
	double pct;                   /* excess / median x 100; < 0 when median is 0 */
};

struct cluster_slow {
	/* per step and phase: the rank furthest above the median (lowest rank on
	 * a tie; rank -1 when no rank is above it) */
	size_t nsteps;
	int64_t *steps;
	struct cluster_verdict *worst;   /* nsteps x CLUSTER_NPHASES */
	/* the slow ranks, by phase then excess (largest first) then rank; one
	 * slow in Communication(Not Overlapped) waits longer in collectives
	 * than the others: for a late rank, or on a slower link */
	struct cluster_verdict *slow;
	size_t nslow;
	/* the late ranks: those whose typical Communication(Not Overlapped)
	 * is below the ranks' median by the same margin, since they arrive
	 * last at the collectives and the others wait for them (the reading
	 * of msprof-analyze's slow_rank recipe); excess = median - value,
	 * the wait they cost, largest first */
	struct cluster_verdict *late;
	size_t nlate;
	/* per phase: the median of the ranks' typical steps */
	double median[CLUSTER_NPHASES];
};

int cluster_slow_analyse(const struct cluster *c, struct cluster_slow *s);
/* A rank's mean step (µs) in out[CLUSTER_MEAN_*]: Computing,
 * Communication(Not Overlapped), Free, and Other (the rest of Preparing +
 * Stage + Bubble); all 0 for a rank without steps. */
enum { CLUSTER_MEAN_COMPUTING, CLUSTER_MEAN_COMM, CLUSTER_MEAN_FREE, CLUSTER_MEAN_OTHER,
       CLUSTER_MEAN_N };
void cluster_rank_mean(const struct cluster_rank *r, double out[CLUSTER_MEAN_N]);
void cluster_slow_free(struct cluster_slow *s);
/* Writes cluster_slow_rank.txt and cluster_slow_rank.json. 0 or -errno. */
int cluster_write_slow(const char *out_dir, const struct cluster *c,
		       const struct cluster_slow *s);

/* out_dir/report.html: each rank's mean step with the slow ranks marked,
 * and the findings (lib/report), also as out_dir/findings.json. 0 or
 * -errno (said on log). */
int cluster_write_report(const char *out_dir, const struct cluster *c,
			 const struct cluster_slow *s, FILE *log);

/* Merges the ranks' communication_matrix.json into
 * cluster_communication_matrix.json, local ranks mapped to global ones
 * through the groups' rank lists found in trace_view.json. 0 or -errno. */
int cluster_write_matrix(const char *out_dir, const struct cluster *c, FILE *log);

/* out_dir/hta/rank-<r>.json: a link to each rank's trace, the folder HTA
 * loads (cluster_hta.c). 0 or a negative errno. */
int cluster_write_hta(const char *out_dir, const struct cluster *c);
/* Read back: the run directory hta/rank-<rank>.json(.gz) under `hta`
 * leads to ("../../REL/PROFILER_OUTPUT/..."), as DIR/REL (malloc'd);
 * NULL when the link is not there or not one of cluster_write_hta's. */
char *cluster_hta_run(const char *dir, const char *hta, int rank);

/* Called in the worker after each run's parse (to print a summary). */
typedef void (*cluster_done_fn)(const char *run_dir, enum parse_status st,
				const struct parse_report *r);

/* The whole of `prof parse CLUSTER_DIR`: parses the runs with up to `jobs`
 * worker processes at a time, then writes cluster_analysis_output/.
 * PARSE_OK, PARSE_DAMAGED (some run damaged or failed; the outputs were
 * written from the rest) or PARSE_FAILED (nothing parsed or written). */
enum parse_status cluster_parse(const char *dir, char **runs, size_t nruns, int jobs,
				const struct parse_opts *o, cluster_done_fn done);

/* The same with another parse of each run than parse_run_dir. */
typedef enum parse_status (*cluster_parse_fn)(const char *run_dir, const struct parse_opts *o,
					      struct parse_report *r);
enum parse_status cluster_parse_with(const char *dir, char **runs, size_t nruns, int jobs,
				     const struct parse_opts *o, cluster_done_fn done,
				     cluster_parse_fn parse);

/* One run directory whose processes carry several ranks (RAW_REC_PROCESS;
 * one `prof run -- torchrun ...`): each rank r's processes, with the
 * launcher's samplers, are parsed into RUN_DIR/rank_<r>/PROFILER_OUTPUT/
 * (RUN_DIR/rank_<r>/profiler_info.json: the run's, with "rank": r), then
 * RUN_DIR/cluster_analysis_output/ is written over those ranks. The
 * combined RUN_DIR/PROFILER_OUTPUT/ is the caller's (parse_run_dir; after
 * this, since --data-simplification may remove raw/). Returns 0 when the
 * run has fewer than two ranks (nothing done), else 1 and the status in
 * *st. `jobs` < 1: one worker per CPU. */
int cluster_split_run(const char *run_dir, int jobs, const struct parse_opts *o,
		      cluster_done_fn done, enum parse_status *st);

void cluster_free(struct cluster *c);

#endif
