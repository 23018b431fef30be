/*
 * prof parse [-v] [--archive FORMAT] RUN_DIR|ARCHIVE: turn a run
 * directory's raw streams into PROFILER_OUTPUT/, also after a crash. Exits
 * with the parse status.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmds.h"
#include "options.h"
#include "archive/archive.h"
#include "pipeline/parse.h"
#include "config/config.h"
#include "cluster/cluster.h"

static void parse_usage(FILE *out)
{
	fprintf(out,
		"usage: prof parse [-v] [-q] [-j N] [--archive FORMAT] [--export-type text|db|text,db]\n"
		"       [--step-list N,..] [--timeline-limit MB] [--data-simplification]\n"
		"       [--pretty] [--gzip] [--no-report] [-h] RUN_DIR|CLUSTER_DIR|ARCHIVE\n\n"
		"Reads RUN_DIR/raw/ (what `prof run` recorded, also after a crash) and\n"
		"writes RUN_DIR/PROFILER_OUTPUT/: trace_view.json (the timeline),\n"
		"step_trace_time.csv, operator_details.csv, op_statistic.csv,\n"
		"kernel_details.csv, api_statistic.csv, communication.json,\n"
		"communication_matrix.json, device_usage.csv, host_usage.csv,\n"
		"memory_record.csv and operator_memory.csv (host_disk_usage.csv,\n"
		"host_network_usage.csv, gc_record.csv and range_statistic.csv when\n"
		"host_sys, gc_detect or the program's ranges gave them), report.html\n"
		"and findings.json (unless --no-report), then parse.done; and\n"
		"RUN_DIR/profiler_metadata.json (share/prof/doc/outputs.md says what\n"
		"each holds).\n"
		"Damaged raw data is skipped and named on standard error. When its\n"
		"processes carry several ranks (torchrun's children), each rank also gets\n"
		"RUN_DIR/rank_<r>/PROFILER_OUTPUT/, and RUN_DIR/cluster_analysis_output/\n"
		"is written over them as for a CLUSTER_DIR.\n\n"
		"CLUSTER_DIR (no raw/ of its own) holds several run directories\n"
		"(*_prof, e.g. one `prof run -o CLUSTER_DIR` per rank): each is parsed,\n"
		"then CLUSTER_DIR/cluster_analysis_output/ gets\n"
		"cluster_step_trace_time.csv, cluster_communication_matrix.json and\n"
		"the slow-rank report cluster_slow_rank.txt/.json.\n\n"
		"An ARCHIVE (RUN_DIR.tar.gz, .tgz, .tar.zst or .zip, as written by\n"
		"--archive) is first extracted next to itself (under $TMPDIR when that\n"
		"directory cannot be written); links, device files, paths leaving the\n"
		"archive's one top-level directory and oversized entries are refused.\n\n"
		"Options:\n"
		"  -v, --verbose  describe every stream read\n"
		"  -j, --jobs N   parse up to N runs of a CLUSTER_DIR at once\n"
		"                 (default: the number of CPUs)\n"
		"  --archive FORMAT  after the parse, pack the directory into\n"
		"                 DIR.FORMAT (tar.gz, tar.zst or zip)\n"
		"  -q, --quiet    no progress (a bar, or a line every 30 s off a terminal)\n"
		"                 and no summary line\n"
		"  --export-type LIST  text (the CSV/JSON files, default), db\n"
		"                 (PROFILER_OUTPUT/profiler.db, SQLite) or text,db\n"
		"  --step-list N,..  only these steps (\"3,4,5\" or \"3-5\"): events outside\n"
		"                 their spans leave trace_view.json, per-step and timed CSV\n"
		"                 rows are filtered, and the statistics (op_statistic.csv,\n"
		"                 api_statistic.csv) count those steps only\n"
		"  --timeline-limit MB  keep trace_view.json within about MB, whole steps\n"
		"                 from the start; what is left out is said there\n"
		"                 (\"prof_truncated\") and on standard error\n"
		"  --data-simplification  delete raw/ after a parse that read everything\n"
		"  --pretty       write trace_view.json indented\n"
		"  --gzip         write trace_view.json.gz instead of trace_view.json\n"
		"  --no-report    write no report.html nor findings.json (key report; a\n"
		"                 cluster's report too)\n"
		"  -h, --help     show this help\n\n"
		"Exit status:\n"
		"  0  everything was read and the outputs written\n"
		"  2  usage error (bad option, missing or extra argument)\n"
		"  3  some raw data was damaged and skipped; the outputs were written\n"
		"     from the rest\n"
		"  4  nothing could be parsed: RUN_DIR is not a directory, has no raw/\n"
		"     directory or no readable stream, or the outputs could not be\n"
		"     written; no outputs (parse.done absent); or ARCHIVE was refused or\n"
		"     unreadable, or the --archive could not be written\n");
}

static void summary(const char *dir, enum parse_status st, const struct parse_report *r)
{
	char steps[96];
	parse_report_steps(r, steps, sizeof steps);
	printf("prof parse: %s: %" PRIu64 " streams, %" PRIu64 " records, %s, %" PRIu64
	       " operators, %" PRIu64 " trace events", dir, r->streams, r->records, steps, r->ops,
	       r->events_written);
	if (r->dev_tasks || r->dev_apis)
		printf(", %" PRIu64 " device tasks, %" PRIu64 " device calls", r->dev_tasks,
		       r->dev_apis);
	if (r->lost)
		printf(", %" PRIu64 " records lost while recording", r->lost);
	if (r->storage_limit_reached)
		printf("; storage limit of %" PRIu64 " MB reached: streams stopped recording there",
		       r->storage_limit_bytes >> 20);
	if (st == PARSE_DAMAGED)
		printf("; DAMAGED: skipped %" PRIu64 " streams, %" PRIu64 " chunks, %" PRIu64
		       " records, %" PRIu64 " bytes", r->skipped_streams, r->skipped_chunks,
		       r->bad_records, r->skipped_bytes);
	printf(" -> %s/PROFILER_OUTPUT\n", dir);
}

/* A directory without raw/ that holds run directories is a cluster: 1 and
 * its status in *st; 0 when dir is to be parsed as one run. */
static int parse_cluster_dir(const char *dir, int jobs, const struct parse_opts *o, int *st,
			     cluster_done_fn done)
{
	char *raw = malloc(strlen(dir) + 5);
	struct stat sb;
	if (!raw)
		return 0;
	sprintf(raw, "%s/raw", dir);
	int single = stat(raw, &sb) == 0;
	free(raw);
	char **runs;
	size_t n;
	if (single || cluster_find_runs(dir, &runs, &n) != 0)
		return 0;
	if (n == 0) {
		free(runs);
		return 0;
	}
	if (jobs < 1) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		jobs = cpus > 0 ? (int)cpus : 1;
	}
	struct parse_opts co = *o;
	co.progress = 0;   /* runs are parsed side by side */
	*st = cluster_parse(dir, runs, n, jobs, &co, done);
	cluster_free_runs(runs, n);
	return 1;
}

/* An archive argument becomes the directory it is extracted into
 * (*dir, malloc'd); anything else is left to the directory code below.
 * 0 to go on, else the exit status. */
static int parse_unpack(const char *arg, char **dir)
{
	struct stat sb;
	*dir = NULL;
	if (!arc_is_archive_name(arg) || stat(arg, &sb) != 0 || !S_ISREG(sb.st_mode))
		return 0;
	struct arc_error err;
	if (arc_extract(arg, NULL, NULL, dir, &err) != ARC_OK) {
		fprintf(stderr, "prof parse: %s\n", err.msg);
		return PARSE_FAILED;
	}
	fprintf(stderr, "prof parse: extracted %s into %s\n", arg, *dir);
	return 0;
}

/* --archive FORMAT: packs the run directory next to itself. */
static int parse_pack(const char *dir, enum arc_format f)
{
	char *out;
	struct arc_error err;
	if (arc_pack(dir, f, &out, NULL, &err) != ARC_OK) {
		fprintf(stderr, "prof parse: no archive: %s\n", err.msg);
		return PARSE_FAILED;
	}
	fprintf(stderr, "prof parse: archived %s into %s\n", dir, out);
	free(out);
	return 0;
}

/* The options that are configuration keys, checked by config's own
 * code: 0 taken, 2 bad value (said), -1 not one of them. */
static int parse_cfg_opt(struct prof_config *cfg, int c, const char *arg)
{
	static const struct { int c; const char *opt, *key, *fixed; } m[] = {
		{ 'E', "--export-type", "export_type", NULL },
		{ 'S', "--step-list", "step_list", NULL },
		{ 'T', "--timeline-limit", "timeline_limit", NULL },
		{ 'D', "--data-simplification", "data_simplification", "true" },
		{ 'P', "--pretty", "pretty", "true" },
		{ 'Z', "--gzip", "gzip", "true" },
		{ 'N', "--no-report", "report", "false" },
	};
	for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
		if (m[i].c != c)
			continue;
		struct cfg_error err;
		if (cfg_set(cfg, m[i].key, m[i].fixed ? m[i].fixed : arg, m[i].opt, &err) == 0)
			return 0;
		fprintf(stderr, "prof parse: %s\n", err.msg);
		return 2;
	}
	return -1;
}

/* What the options ask besides the parse options proper. */
struct parse_args {
	int jobs, quiet;
	enum arc_format pack;
	const char *target;        /* the run directory, archive or cluster */
};

static int parse_jobs(const char *arg, int *jobs)
{
	char *end;
	long n = strtol(arg, &end, 10);
	if (*end || n < 1 || n > 4096) {
		fprintf(stderr, "prof parse: -j wants a number of jobs from 1 to 4096, not '%s'\n",
			arg);
		return 2;
	}
	*jobs = (int)n;
	return 0;
}

/* One option that is not a configuration key: 0, -1 after --help, or the
 * exit status. */
static int parse_other_opt(int c, char **argv, struct parse_opts *o, struct parse_args *a)
{
	switch (c) {
	case 'q':
		a->quiet = 1;
		return 0;
	case 'v':
		o->verbose = 1;
		return 0;
	case 'A':
		if (arc_format_from_name(optarg, &a->pack) == 0)
			return 0;
		fprintf(stderr, "prof parse: --archive: unknown format \"%s\"; "
			"allowed: tar.gz, tar.zst, zip\n", optarg);
		return 2;
	case 'j':
		return parse_jobs(optarg, &a->jobs);
	case 'h':
		parse_usage(stdout);
		return -1;
	}
	return cmd_bad_option("parse", argv, c == ':');
}

/* Options into `o` and `a`: 0 to go on, -1 after --help, else the exit
 * status. `steps` receives --step-list's array (the caller frees it). */
static int parse_args(int argc, char **argv, struct parse_opts *o, struct parse_args *a,
		      uint64_t **steps)
{
	static const struct option longopts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "archive", required_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "export-type", required_argument, NULL, 'E' },
		{ "step-list", required_argument, NULL, 'S' },
		{ "timeline-limit", required_argument, NULL, 'T' },
		{ "data-simplification", no_argument, NULL, 'D' },
		{ "pretty", no_argument, NULL, 'P' },
		{ "gzip", no_argument, NULL, 'Z' },
		{ "no-report", no_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	struct prof_config cfg;
	int c, rc = 0;
	cfg_defaults(&cfg);
	optind = 1;
	opterr = 0;
	while (!rc && (c = getopt_long(argc, argv, "+:vqhj:", longopts, NULL)) != -1)
		if ((rc = parse_cfg_opt(&cfg, c, optarg)) < 0)
			rc = parse_other_opt(c, argv, o, a);
	if (!rc && argc - optind != 1) {
		fprintf(stderr, "prof parse: %s; see 'prof parse --help'\n",
			argc - optind < 1 ? "a run directory is needed" : "one run directory only");
		rc = 2;
	}
	char why[256];
	if (!rc && parse_opts_from_cfg(o, &cfg, steps, why, sizeof why) != 0) {
		fprintf(stderr, "prof: %s\n", why);
		rc = 2;
	}
	cfg_free(&cfg);
	a->target = rc ? NULL : argv[optind];
	return rc;
}

/* A single run: split by rank when its processes carry several, then the
 * whole run. Returns the worse status. */
static int parse_one_run(const char *dir, const struct parse_args *a, const struct parse_opts *o)
{
	struct parse_report r;
	enum parse_status sst = PARSE_OK;
	int split = cluster_split_run(dir, a->jobs, o, a->quiet ? NULL : summary, &sst);
	int st = parse_run_dir(dir, o, &r);
	char note[512];
	if (st != PARSE_FAILED && !a->quiet) {
		summary(dir, st, &r);
		for (size_t i = 0; i < r.nfindings; i++)
			printf("prof parse: finding: %s (report.html)\n", r.findings[i]);
		fflush(stdout);
		if (parse_report_step_note(&r, note, sizeof note))
			fprintf(stderr, "prof parse: note: %s\n", note);
	}
	if (split && (int)sst > st)
		st = (int)sst;
	return st;
}

int cmd_parse(int argc, char **argv)
{
	struct parse_opts o = { .log = stderr, .report = stdout };
	struct parse_args a = { .pack = ARC_NONE };
	uint64_t *steps = NULL;
	int rc = parse_args(argc, argv, &o, &a, &steps);
	if (rc)
		return rc < 0 ? 0 : rc;
	o.progress = parse_progress_mode(isatty(STDERR_FILENO), a.quiet);
	o.quiet = a.quiet;
	o.progress_after_s = parse_progress_after(o.progress);
	char *unpacked;
	int st = parse_unpack(a.target, &unpacked);
	if (st) {
		free(steps);
		return st;
	}
	const char *dir = unpacked ? unpacked : a.target;
	struct stat sb;
	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "prof parse: %s: %s (a run directory or a .tar.gz, .tgz, "
			".tar.zst or .zip archive of one is needed)\n", dir,
			stat(dir, &sb) != 0 ? strerror(errno) : "not a directory");
		st = PARSE_FAILED;
	} else if (!parse_cluster_dir(dir, a.jobs, &o, &st, summary)) {
		st = parse_one_run(dir, &a, &o);
	}
	if (st != PARSE_FAILED && a.pack != ARC_NONE && parse_pack(dir, a.pack))
		st = PARSE_FAILED;
	free(unpacked);
	free(steps);
	return st;
}

int parse_for_reading(const char *dir)
{
	struct parse_opts o = { .log = stderr, .report = stderr, .quiet = 1 };
	struct parse_args a = { .pack = ARC_NONE, .quiet = 1 };
	int st;
	if (!parse_cluster_dir(dir, a.jobs, &o, &st, NULL))
		st = parse_one_run(dir, &a, &o);
	return st;
}
