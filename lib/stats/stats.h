/*
 * prof stats: summaries of a run's PROFILER_OUTPUT/ CSVs. This library
 * reads and aggregates; cmd/stats.c prints. Functions return 0,
 * STATS_ABSENT when the CSV they read does not exist, or -1 with a message
 * in err. Times are microseconds, as in the CSVs.
 */
#ifndef PROF_STATS_STATS_H
#define PROF_STATS_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "common/idmap.h"

#define STATS_ABSENT 1
#define STATS_METRICS 3

/* ---- aggregation by name ---- */

struct stats_row {
	char *name;
	char *extra;           /* a second key shown with the name (API level), or NULL */
	uint64_t count;
	double sum[STATS_METRICS], min[STATS_METRICS], max[STATS_METRICS];
};

struct stats_agg {
	struct stats_row *rows;
	size_t n, cap;
	size_t *slots;         /* open addressing: row index + 1, 0 = empty */
	size_t nslots;
	int nmetrics;
};

/* SELF: an operator's self time total (the metric after the sorted one);
 * for rows without one, as TOTAL. */
enum stats_sort { STATS_SORT_TOTAL, STATS_SORT_AVG, STATS_SORT_MAX, STATS_SORT_MIN,
		  STATS_SORT_COUNT, STATS_SORT_SELF };

void stats_agg_init(struct stats_agg *a, int nmetrics);
/* Adds `count` samples already summed (sum/min/max per metric) under
 * (name, extra); extra may be NULL. 0, or -1 when out of memory. */
int stats_agg_add(struct stats_agg *a, const char *name, const char *extra, uint64_t count,
		  const double *sum, const double *min, const double *max);
/* One sample: count 1, sum = min = max = v. */
int stats_agg_add1(struct stats_agg *a, const char *name, const char *extra, const double *v);
/* Orders the rows by `key` of metric `metric`: largest first, except
 * STATS_SORT_MIN, smallest first; ties by name. */
void stats_agg_sort(struct stats_agg *a, enum stats_sort key, int metric);
double stats_row_avg(const struct stats_row *r, int metric);
double stats_agg_total(const struct stats_agg *a, int metric);
void stats_agg_free(struct stats_agg *a);

/* ---- what each view reads ---- */

/* A whole number or decimal ("12", "-1.500", "3e2"); 0, or -1 when s is
 * empty or not a number. */
int stats_parse_num(const char *s, double *out);

struct stats_step {
	int device;            /* -1: host only */
	long rank;             /* -1: not said (a run of one rank) */
	long pid;              /* -1: not said (one process a rank) */
	long step;
	double total;          /* Preparing + Stage + Bubble: host step start to the last device end */
	double computing, comm_not_overlapped, overlapped, communication, free_time,
	       stage, bubble, preparing;
};

struct stats_steps {
	struct stats_step *rows;
	size_t n;
	int has_rank;          /* the file has a Rank column (a multi-rank run) */
	int has_pid;           /* ... a Pid column (several processes of one rank, or of none) */
};

/* step_trace_time.csv, in file order. */
int stats_load_steps(const char *outdir, struct stats_steps *s, char *err, size_t errlen);
void stats_steps_free(struct stats_steps *s);

struct stats_step_summary {
	size_t steps;          /* distinct step numbers */
	double total, avg;     /* per step: its longest row (device) */
	double median;         /* of the steps' times: the first step begins
				* where recording began (imports and set-up
				* included), which the average feels and this
				* does not */
	double computing, communication, free_time, other;   /* sums over rows */
	double rows_total;     /* the sum of every row's total (for shares) */
	size_t device_rows;    /* rows of a device; 0: host-only steps */
};
/* Per step number its longest row (the first of equal ones), by step
 * number: *n of them in an array to free; NULL when memory ran out. */
const struct stats_step **stats_steps_longest(const struct stats_steps *s, size_t *n);
/* -ENOMEM, *sum zeroed, when memory ran out. */
int stats_steps_summarize(const struct stats_steps *s, struct stats_step_summary *sum);

/* Which operators: all, those in a step (operator_details.csv's Step Id
 * set), those outside every step (model set-up, evaluation). */
enum stats_where { STATS_WHERE_ALL, STATS_WHERE_STEPS, STATS_WHERE_OUTSIDE };

/* Operators in steps and outside every step, apart: calls and self time
 * (µs). known 0: the file has no Step Id (an older prof wrote it). */
struct stats_op_split {
	int known;
	uint64_t calls[2];         /* [0] in steps, [1] outside */
	double self_us[2];
};

/* Operators by name from operator_details.csv, those `where` takes.
 * Metrics: 0 host total, 1 host self, 2 device total. split (NULL: not
 * wanted) gets every operator's in-step and outside-step sums. Asking for
 * steps or outside of a file without Step Id is an error that says to
 * parse again. */
#define STATS_OP_TOTAL 0
#define STATS_OP_SELF 1
#define STATS_OP_DEVICE 2
int stats_load_ops(const char *outdir, enum stats_where where, struct stats_agg *a,
		   struct stats_op_split *split, char *err, size_t errlen);

/* Device tasks by name (over devices), metric 0 the duration: from
 * op_statistic.csv's device rows, or when that file is absent from
 * kernel_details.csv. *source gets the file read. */
int stats_load_kernels(const char *outdir, struct stats_agg *a, const char **source,
		       char *err, size_t errlen);

/* range_statistic.csv's rows of `category` ("user_annotation",
 * "nn.Module") by name over the steps `where` takes. Metrics: 0 total,
 * 1 self, 2 the steps it ran in (its sum). */
#define STATS_RANGE_TOTAL 0
#define STATS_RANGE_SELF 1
#define STATS_RANGE_STEPS 2
int stats_load_ranges(const char *outdir, const char *category, enum stats_where where,
		      struct stats_agg *a, char *err, size_t errlen);

/* dir/name read and parsed (a small JSON file: profiler_info.json,
 * findings.json): 0 with *root (NULL when not JSON) and *path (malloc'd,
 * for the caller's messages), STATS_ABSENT when the file is absent, or -1
 * with err said. */
struct cJSON;
int stats_read_json(const char *dir, const char *name, struct cJSON **root, char **path,
		    char *err, size_t errlen);

/* findings.json: report.html's findings (lib/report/report.h). */
#define STATS_FINDINGS_FILE "findings.json"
struct stats_finding {
	char *rule, *text, *advice;
	double value;
};
struct stats_findings {
	struct stats_finding *v;
	size_t n;
};
/* 0, STATS_ABSENT (no findings.json: --no-report, or an older prof), or
 * -1 with err said. */
int stats_load_findings(const char *outdir, struct stats_findings *out, char *err,
			size_t errlen);
void stats_findings_free(struct stats_findings *f);

/* The time (µs) steps spent taking DataLoader batches ("enumerate(
 * DataLoader)#...", an operator or a range). 0, or STATS_ABSENT when
 * neither file can say (no Step Id: parsed by an older prof). */
int stats_data_loading(const char *outdir, double *us);

/* with_flops: operator_details.csv's FLOPs summed per step, with the
 * step's time (µs, its longest step_trace_time.csv row; 0: not there).
 * STATS_ABSENT when no operator in a step has FLOPs. */
struct stats_flops_step { long step; double flops, time_us; };
struct stats_flops { struct stats_flops_step *rows; size_t n; };
int stats_load_flops(const char *outdir, struct stats_flops *f, char *err, size_t errlen);
void stats_flops_free(struct stats_flops *f);

/* api_statistic.csv: name, extra = Level, metric 0 the duration. */
int stats_load_api(const char *outdir, struct stats_agg *a, char *err, size_t errlen);

struct stats_mem_device {
	char *component;       /* "SIM", "CUDA", "PTA" (profile_memory: torch's allocator) */
	char *device;          /* "SIM:0", "CPU" */
	double peak_mb, peak_ts_us, final_mb;
	uint64_t allocs, frees;
};

struct stats_alloc {
	char *name, *device;
	double size_kb, alloc_us, duration_us;   /* duration: NaN when never freed */
};

/* A memory_record.csv row: its (component, device) in devices, time, total. */
struct stats_mem_row { size_t dev; double ts_us, mb; };
/* The peak of a (component, device) within a step's span. */
struct stats_mem_step { size_t dev; long step; double peak_mb; };
/* operator_memory.csv summed by Name. */
struct stats_mem_op { const char *name; uint64_t allocs; double mb; };

struct stats_memory {
	int have_records, have_allocs;             /* which files exist */
	struct stats_mem_device *devices;          /* by (component, device) */
	size_t ndevices;
	struct stats_mem_row *rows;
	size_t nrows;
	struct stats_alloc *allocs;                /* largest first */
	size_t nallocs;
	struct stats_mem_step *steps;              /* by step, then device; stats_memory_derive */
	size_t nsteps;
	int steps_known;                           /* the trace gave step spans */
	struct stats_mem_op *ops;                  /* most bytes first; stats_memory_derive */
	size_t nops;
	/* (component, device) -> position in devices + 1: a damaged run can
	 * name a device in every row, and a scan per row was quadratic */
	struct parse_idmap device_at;
};

/* memory_record.csv and operator_memory.csv; STATS_ABSENT only when both
 * are absent. */
int stats_load_memory(const char *outdir, struct stats_memory *m, char *err, size_t errlen);
void stats_memory_free(struct stats_memory *m);
/* The position of (component, device) in m->devices; m->ndevices when
 * absent. By hash: a damaged run can name a device in every row. */
size_t stats_memory_find(const struct stats_memory *m, const char *comp, const char *dev);
/* After stats_load_memory: the peaks per step (the steps' spans from
 * trace_view.json's ProfilerStep#N events; none from a gzipped or pretty
 * trace: steps_known 0) and the operators' sums. 0, or -2 out of memory. */
int stats_memory_derive(const char *outdir, struct stats_memory *m);

struct stats_call {
	double total, self, device;
	char *shapes;
	char *step;                /* Step Id: "" outside every step, NULL: not known */
};

struct stats_calls {
	struct stats_call *rows;
	size_t n;
};

/* Every row of operator_details.csv named `name` that `where` takes, in
 * file order. */
int stats_load_op_calls(const char *outdir, const char *name, enum stats_where where,
			struct stats_calls *c, char *err, size_t errlen);
void stats_calls_free(struct stats_calls *c);

/* ---- text helpers for tables ---- */

/* Columns `s` takes on a terminal (UTF-8 code points). */
size_t stats_text_width(const char *s);
/* Copies s into out (size outsz), cut to `width` columns with an ellipsis
 * ("…") in the middle when longer. Returns out. */
char *stats_ellipsize(const char *s, size_t width, char *out, size_t outsz);
/* A name cut to `width` where names still tell apart: a signature loses
 * its arguments first ("f(…)"), a qualified name its qualifiers' head
 * ("autograd::engi…: AddmmBackward0"), anything else its middle. */
char *stats_cut_name(const char *s, size_t width, char *out, size_t outsz);
/* v with `decimals` decimals, fewer when that does not fit in `width`
 * characters (and exponent form as a last resort). Returns out. */
char *stats_fmt_num(double v, int decimals, int width, char *out, size_t outsz);

/* ---- the recording, from RUN_DIR/profiler_info.json ---- */

#define STATS_NOTES_MAX 32

struct stats_recording {
	int known;                 /* end_info present: prof finished the run */
	int going;                 /* not known: its prof run still holds it */
	uint64_t lost;             /* records the agents dropped */
	int storage_limit;         /* --storage-limit was reached */
	uint64_t disk_full_streams, streams_not_created;   /* a full filesystem */
	char *notes[STATS_NOTES_MAX];  /* end_info.notices' texts (lib/run/notices.h) */
	size_t n_notes;
	char *command;             /* the command recorded, its words joined by spaces;
				    * NULL when profiler_info.json does not say */
	char **words;              /* the same word by word, NULL after the last (one
				    * allocation); nwords of them */
	size_t nwords;
};

/* 0 (r->known 0 when prof did not finish the run), STATS_ABSENT, or -1. */
int stats_load_recording(const char *run_dir, struct stats_recording *r, char *err,
			 size_t errlen);
void stats_free_recording(struct stats_recording *r);
/* Why records were lost, in words ("" when none were). */
const char *stats_recording_cause(const struct stats_recording *r);

#endif
