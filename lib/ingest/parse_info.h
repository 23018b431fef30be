/*
 * What the parse needs from <run>/profiler_info.json. The file is written
 * at the start of a run and completed at its end, so after a crash it may
 * lack the end, or be missing: every field has a "not known" value.
 *
 * Keys read (all optional):
 *   "clock": {"tsc_hz": N,                       TSC rate over the whole run
 *             "start": {"mono_ns": N, "real_ns": N}}   pair taken at launch
 *   "rank": N           (or "rank_id": N)        the rank of this run
 *   "env": {"NAME": "value", ...}                copied to profiler_metadata.json
 *   "end_info": {...}   only checked for: missing after `prof run` was killed
 * Nanosecond values may be JSON numbers or decimal strings (a string keeps
 * all the digits of a realtime ns value, which a double does not).
 */
#ifndef PROF_PARSE_INFO_H
#define PROF_PARSE_INFO_H

#include <stdint.h>
#include <stdio.h>

struct cJSON;

struct parse_info {
	int present;            /* the file was read and parsed */
	int have_start;         /* start pair known */
	int have_end;           /* "end_info" present: the launcher finished the run */
	int live;               /* without end_info: rundir_live's answer; else 0 */
	int child_pid;          /* the program prof started; 0: unknown */
	char end_signal[16];    /* end_info's signal_name: what killed it; "" */
	uint64_t start_mono_ns, start_real_ns;
	uint64_t tsc_hz;        /* 0: unknown */
	int64_t rank;           /* -1: unknown */
	struct cJSON *env;      /* an object, or NULL; owned */
};

/* Reads `run_dir`/profiler_info.json. A missing or unparsable file is not
 * an error (it is said on `log` when unparsable; a missing end_info too,
 * unless `end_said`); returns 0 always. */
int parse_info_read(const char *run_dir, struct parse_info *pi, FILE *log, int end_said);

/* The line a run without end_info gets (`what`: its path, or "N runs";
 * `live`: rundir_live's answer for it, or for all of them). */
void parse_info_say_no_end(FILE *log, const char *what, int live);
void parse_info_free(struct parse_info *pi);

/* A JSON value as an unsigned ns count: a number or a decimal string.
 * Returns 0 and sets *out, or -1. */
int parse_json_u64(const struct cJSON *v, uint64_t *out);

#endif
