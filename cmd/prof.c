/*
 * prof: the command table. Each command lives in cmd/<name>.c, parses its
 * own options and returns the process's exit status.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "common/nomem.h"
#include "launcher/embed_cache.h"
#include "prof_build.h"

struct prof_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	int nomem_status;   /* the least exit status when memory ran out unsaid;
			     * 0: the status is kept (run's is the program's) */
};

static const struct prof_cmd commands[] = {
	{ "run",   cmd_run,   "run a program under the profiler, then parse what it recorded", 0 },
	{ "parse", cmd_parse, "turn a run directory into PROFILER_OUTPUT/ (also after a crash)",
	  3 },
	{ "stats", cmd_stats, "summary tables of a parsed run (steps, operators, kernels, memory)",
	  1 },
	{ "diff",  cmd_diff,  "compare two runs (BASE NEW): step time, operators, kernels; a CI gate",
	  4 },
	{ "session", cmd_session, "serve a Python program that profiles itself (the prof package)",
	  0 },
	{ "window", cmd_window, "write one recording window's result (prof run and session do)",
	  3 },
	{ NULL, NULL, NULL, 0 },
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: prof <command> [options] ...\n"
		"       prof --version | --help\n\n"
		"A profiler for machine-learning programs: `prof run -- python train.py`.\n\n"
		"Commands:\n");
	for (const struct prof_cmd *c = commands; c->name; c++)
		fprintf(out, "  %-8s %s\n", c->name, c->summary);
	fprintf(out, "\n`prof <command> --help` lists a command's options.\n");
}

static void version(void)
{
	printf("prof %s\nfeatures: %s\n", PROF_VERSION, PROF_FEATURES);
	const struct embed_table *t = embed_table();
	if (!t) {
		printf("build: dynamic (agent and share files beside bin/prof)\n");
		return;
	}
	size_t bytes = 0, py = 0;
	printf("build: static %s (libraries linked in: %s)\nembedded:", t->build_id,
	       PROF_STATIC_LIBS);
	for (size_t i = 0; i < t->n; i++) {
		bytes += t->files[i].size;
		if (strncmp(t->files[i].path, "share/prof/python/", 18) == 0)
			py++;
		else
			printf(" %s", t->files[i].path);
	}
	printf(" share/prof/python (%zu files); %zu bytes, unpacked into "
	       "$XDG_CACHE_HOME/prof/%s on first use\n", py, bytes, t->build_id);
}

/* Output that could not be written is an error, as in git and perf: a
 * script piping `prof ... | head` must not think all went well silently. */
static int check_stdout(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno != EPIPE)
			fprintf(stderr, "prof: cannot write to standard output: %s\n", strerror(errno));
		return status ? status : 1;
	}
	return status;
}

/* Allocations that failed and that nothing has said yet (a parse says its
 * own): what the command printed or wrote may lack rows, and a CI gate
 * must not pass on it. */
static int say_nomem(const struct prof_cmd *c, int status)
{
	int64_t n = prof_nomem_unsaid();
	if (n <= 0)
		return status;
	fprintf(stderr, "prof %s: memory ran out %" PRId64 " time%s: what it printed or wrote may "
		"be incomplete; free memory and run it again\n", c->name, n, n == 1 ? "" : "s");
	return status < c->nomem_status ? c->nomem_status : status;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *name = argv[1];
	if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
		version();
		return check_stdout(0);
	}
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
		usage(stdout);
		return check_stdout(0);
	}
	for (const struct prof_cmd *c = commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return check_stdout(say_nomem(c, c->fn(argc - 1, argv + 1)));
	fprintf(stderr, "prof: '%s' is not a prof command; see 'prof --help'\n", name);
	return 2;
}
