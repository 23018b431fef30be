/*
 * The parse pipeline: a run directory in, PROFILER_OUTPUT/ out. The same
 * code serves `prof run` (right after the program exits) and `prof parse`.
 * lib/pipeline/ is the one place that knows every stage: parse_run.c opens
 * the streams (lib/ingest), builds the model (lib/model) and the outputs
 * (lib/outputs), runs the merge, then hands PROFILER_OUTPUT/ to lib/export.
 * Library code: it reports through `log` and returns a status; it never
 * exits.
 */
#ifndef PROF_PARSE_H
#define PROF_PARSE_H

#include <stdint.h>
#include <stdio.h>

/* Exit statuses of `prof parse` (and of the parse step of `prof run`,
 * which reports it but exits with the program's status). */
enum parse_status {
	PARSE_OK       = 0, /* everything read, outputs written */
	PARSE_DAMAGED  = 3, /* some raw data was damaged or skipped; outputs written */
	PARSE_FAILED   = 4, /* nothing could be parsed; no outputs */
};

/* export_type bits, the same as config's CFG_EXPORT_*. */
enum { PARSE_EXPORT_TEXT = 1, PARSE_EXPORT_DB = 2 };

struct parse_opts {
	FILE *log;          /* where diagnostics go (stderr from cmd/); never NULL */
	FILE *report;       /* where result lines go (cluster verdicts): stdout for
			     * prof parse, stderr for prof run, whose stdout is the
			     * program's; NULL: `log` */
	int verbose;
	unsigned export_type;          /* PARSE_EXPORT_*; 0 means text */
	const uint64_t *steps;         /* --step-list, sorted; NULL: every step */
	size_t nsteps;
	uint64_t timeline_limit;       /* bytes of trace_view.json; 0: none */
	int data_simplification;       /* delete raw/ after a clean parse */
	int pretty;                    /* indented trace_view.json */
	int no_report;                 /* no PROFILER_OUTPUT/report.html (key report false) */
	int gzip;                      /* trace_view.json.gz instead */
	int progress;                  /* PARSE_PROGRESS_*: a bar on `log` (the caller
					* checked it is a terminal), or a line now and
					* then (a CI log) */
	double progress_after_s;       /* progress shows once the parse has run this long */
	int quiet;                     /* no result lines (prof parse -q) */
	int end_info_said;             /* a run without end_info was said by the caller
					* (a cluster says it once, not once a rank) */
};

/* The parse options of a configuration (export_type, step_list,
 * timeline_limit, data_simplification, pretty, gzip) into `o`; *steps
 * is malloc'd for the caller to free after the parse. 0, or -1 with the
 * reason in why. */
struct prof_config;
int parse_opts_from_cfg(struct parse_opts *o, const struct prof_config *c, uint64_t **steps,
			char *why, size_t len);
/* Only the options of the outputs' form: export_type, timeline_limit,
 * pretty, gzip (a window's result takes these from its run). */
void parse_opts_outputs(struct parse_opts *o, const struct prof_config *c);

enum { PARSE_PROGRESS_NONE, PARSE_PROGRESS_BAR, PARSE_PROGRESS_LINES };
/* The lines' mode: the first after this many seconds, then one as often. */
#define PARSE_PROGRESS_LINE_S 30.0

/* PARSE_PROGRESS_BAR on a terminal, else LINES; NONE when quiet. */
int parse_progress_mode(int is_tty, int quiet);

/* The seconds a parse runs before its progress shows: 1 for the bar,
 * PARSE_PROGRESS_LINE_S for lines, or PROF_PROGRESS_AFTER (seconds, >= 0)
 * when that is set and valid. */
double parse_progress_after(int mode);
/* Whether the progress bar is drawn: only on a terminal, never with
 * --quiet, and only once the parse has run `after` seconds. */
int parse_progress_wanted(int is_tty, int quiet, double elapsed_s, double after_s);

#define PARSE_FINDINGS_MAX 8

struct parse_report {
	uint64_t streams, records, lost;
	uint64_t skipped_streams, skipped_chunks, skipped_bytes;
	uint64_t events_written; /* trace events in trace_view.json */
	uint64_t steps;
	uint64_t steps_seen;       /* before --step-list chose */
	uint64_t step_procs;       /* processes with steps (ranks, in a job of several) */
	uint64_t steps_min, steps_max;   /* steps of one such process */
	int step_ranks;            /* every such process names its rank */
	uint64_t step_rank_n;      /* ... and how many ranks they name */
	int64_t rank_restarted;    /* a rank stepped in several processes (torchrun's
				    * restarts), the lowest; -1: none */
	uint64_t rank_restarted_procs; /* in how many */
	uint64_t ranks_restarted;  /* how many ranks did */
	uint64_t bad_records;      /* records skipped inside readable chunks */
	uint64_t unnamed_records;  /* kept, but naming a string whose definition was lost */
	uint64_t unclosed_streams; /* ended without close (crash, kill): not damage */
	uint64_t unclosed_of_child; /* ... of those, the program's (profiler_info's child_pid) */
	uint64_t unmatched;        /* range pops/ends without a push/start */
	uint64_t unfinished;       /* ranges still open at the end, closed there */
	uint64_t host_samples;
	uint64_t ops;              /* framework operators written */
	uint64_t ops_clamped;      /* ops cut at their parent's end or a step boundary */
	uint64_t windows;          /* recording windows */
	uint64_t dev_tasks;        /* kernels, copies, sets, collectives */
	uint64_t dev_apis;         /* device API calls */
	uint64_t dev_late;         /* device records later than the reorder window */
	uint64_t events_dropped;   /* left out by --step-list or --timeline-limit */
	int truncated;             /* --timeline-limit cut trace_view.json */
	int raw_removed;           /* --data-simplification deleted raw/ */
	int storage_limit_reached; /* --storage-limit stopped some stream (raw/control) */
	uint64_t storage_limit_bytes; /* the run's --storage-limit, 0: none */
	/* report.html's findings, one line each ("Data loading takes 51.0% of
	 * the step time; try ..."), for the summary lines to say */
	char findings[PARSE_FINDINGS_MAX][320];
	size_t nfindings;
};

enum parse_status parse_run_dir(const char *run_dir, const struct parse_opts *o,
				struct parse_report *r);

/* "6 steps", or with several processes stepping "6 steps: 3 on each of 2
 * ranks" ("2-4 on each of 3 processes", "3-6 on each of 4 processes of 2
 * ranks"), or, when none was seen, how to mark them: what the summary
 * lines say. */
void parse_report_steps(const struct parse_report *r, char *buf, size_t len);

/* The note on steps of several processes of one rank (a rank that
 * stepped in several processes; several processes without a rank):
 * where their rows are and what tells them apart, for the summary lines
 * to add; 0 (and buf "") when there is none. */
int parse_report_step_note(const struct parse_report *r, char *buf, size_t len);

/* The same for the processes of one rank (their RAW_REC_PROCESS rank) and
 * the launcher's samplers only, into out_base/PROFILER_OUTPUT/, with
 * {"rank": rank} as trace_view.json's distributedInfo. raw/ is never
 * removed (data_simplification is ignored). */
enum parse_status parse_run_rank(const char *run_dir, int64_t rank, const char *out_base,
				 const struct parse_opts *o, struct parse_report *r);

#endif
