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
#include "archive/archive.h"
#include "parse/parse.h"
#include "cluster/cluster.h"

static void parse_usage(FILE *out)
{
	fprintf(out,
		"usage: prof parse [-v] [-j N] [--archive FORMAT] [-h] RUN_DIR|CLUSTER_DIR|ARCHIVE\n\n"
		"Reads RUN_DIR/raw/ (what `prof run` recorded, also after a crash) and\n"
		"writes RUN_DIR/PROFILER_OUTPUT/: trace_view.json, step_trace_time.csv,\n"
		"host_usage.csv, then parse.done; and RUN_DIR/profiler_metadata.json.\n"
		"Damaged raw data is skipped and named on standard error.\n\n"
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
	printf("prof parse: %s: %" PRIu64 " streams, %" PRIu64 " records, %" PRIu64
	       " steps, %" PRIu64 " operators, %" PRIu64 " trace events", dir, r->streams,
	       r->records, r->steps, r->ops, r->events_written);
	if (r->dev_tasks || r->dev_apis)
		printf(", %" PRIu64 " device tasks, %" PRIu64 " device calls", r->dev_tasks,
		       r->dev_apis);
	if (r->lost)
		printf(", %" PRIu64 " records lost while recording", r->lost);
	if (st == PARSE_DAMAGED)
		printf("; DAMAGED: skipped %" PRIu64 " streams, %" PRIu64 " chunks, %" PRIu64
		       " records, %" PRIu64 " bytes", r->skipped_streams, r->skipped_chunks,
		       r->bad_records, r->skipped_bytes);
	printf(" -> %s/PROFILER_OUTPUT\n", dir);
}

/* A directory without raw/ that holds run directories is a cluster: 1 and
 * its status in *st; 0 when dir is to be parsed as one run. */
static int parse_cluster_dir(const char *dir, int jobs, const struct parse_opts *o, int *st)
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
	*st = cluster_parse(dir, runs, n, jobs, o, summary);
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

int cmd_parse(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "archive", required_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ "jobs", required_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct parse_opts o = { .log = stderr };
	int c, jobs = 0;
	enum arc_format pack = ARC_NONE;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+vhj:", longopts, NULL)) != -1) {
		if (c == 'v') {
			o.verbose = 1;
		} else if (c == 'A') {
			if (arc_format_from_name(optarg, &pack) != 0) {
				fprintf(stderr, "prof parse: --archive: unknown format \"%s\"; "
					"allowed: tar.gz, tar.zst, zip\n", optarg);
				return 2;
			}
		} else if (c == 'j') {
			char *end;
			long n = strtol(optarg, &end, 10);
			if (*end || n < 1 || n > 4096) {
				fprintf(stderr, "prof parse: -j wants a number of jobs from 1 "
					"to 4096, not '%s'\n", optarg);
				return 2;
			}
			jobs = (int)n;
		} else if (c == 'h') {
			parse_usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "prof parse: unknown option '%s'; see 'prof parse --help'\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "prof parse: %s; see 'prof parse --help'\n",
			argc - optind < 1 ? "a run directory is needed" : "one run directory only");
		return 2;
	}
	char *unpacked;
	int urc = parse_unpack(argv[optind], &unpacked);
	if (urc)
		return urc;
	const char *dir = unpacked ? unpacked : argv[optind];
	struct stat sb;
	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "prof parse: %s: %s (a run directory or a .tar.gz, .tgz, "
			".tar.zst or .zip archive of one is needed)\n", dir,
			stat(dir, &sb) != 0 ? strerror(errno) : "not a directory");
		free(unpacked);
		return PARSE_FAILED;
	}
	int st;
	if (!parse_cluster_dir(dir, jobs, &o, &st)) {
		struct parse_report r;
		st = parse_run_dir(dir, &o, &r);
		if (st != PARSE_FAILED)
			summary(dir, st, &r);
	}
	if (st != PARSE_FAILED && pack != ARC_NONE && parse_pack(dir, pack))
		st = PARSE_FAILED;
	free(unpacked);
	return st;
}
