/*
 * prof parse [-v] RUN_DIR: turn a run directory's raw streams into
 * PROFILER_OUTPUT/, also after a crash. Exits with the parse status.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cmds.h"
#include "parse/parse.h"

static void parse_usage(FILE *out)
{
	fprintf(out,
		"usage: prof parse [-v] [-h] RUN_DIR\n\n"
		"Reads RUN_DIR/raw/ (what `prof run` recorded, also after a crash) and\n"
		"writes RUN_DIR/PROFILER_OUTPUT/: trace_view.json, step_trace_time.csv,\n"
		"host_usage.csv, then parse.done; and RUN_DIR/profiler_metadata.json.\n"
		"Damaged raw data is skipped and named on standard error.\n\n"
		"Options:\n"
		"  -v, --verbose  describe every stream read\n"
		"  -h, --help     show this help\n\n"
		"Exit status:\n"
		"  0  everything was read and the outputs written\n"
		"  2  usage error (bad option, missing or extra argument)\n"
		"  3  some raw data was damaged and skipped; the outputs were written\n"
		"     from the rest\n"
		"  4  nothing could be parsed: RUN_DIR is not a directory, has no raw/\n"
		"     directory or no readable stream, or the outputs could not be\n"
		"     written; no outputs (parse.done absent)\n");
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

int cmd_parse(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct parse_opts o = { .log = stderr };
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+vh", longopts, NULL)) != -1) {
		if (c == 'v') {
			o.verbose = 1;
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
	const char *dir = argv[optind];
	struct stat sb;
	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "prof parse: %s: %s (a run directory is needed; archives are "
			"not read yet)\n", dir, stat(dir, &sb) != 0 ? strerror(errno) :
			"not a directory");
		return PARSE_FAILED;
	}
	struct parse_report r;
	enum parse_status st = parse_run_dir(dir, &o, &r);
	if (st != PARSE_FAILED)
		summary(dir, st, &r);
	return st;
}
