/*
 * prof window [--default-out DIR] RUN_DIR/windows/NAME.req
 *
 * One window's result (lib/run/windows.h): the steps the request names, of
 * the requesting process's rank, parsed from the run's raw/ (also while the
 * program still writes it: readers trust committed records only) into
 * OUT/PROFILER_OUTPUT, with OUT/profiler_info.json naming the window, and
 * NAME.done beside the request. Run by prof run and prof session, one at a
 * time, at the lowest priority; the parse's messages go to OUT/logs/.
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "common/agent_env.h"
#include "common/fsutil.h"
#include "ingest/parse_rank.h"
#include "config/config.h"
#include "pipeline/parse.h"
#include "raw/raw_clock.h"
#include "run/rundir.h"
#include "run/windows.h"

static void window_usage(FILE *out)
{
	fprintf(out,
		"usage: prof window [--default-out DIR] RUN_DIR/windows/NAME.req\n\n"
		"Writes one recording window's result while the program runs: prof run and\n"
		"prof session start it for each request (a torch-style on_trace_ready, a\n"
		"paddle RECORD_AND_RETURN cycle, --cycle-results, a --dynamic activation\n"
		"with \"analyse\": true). The window's steps (without \"steps\": all its rank\n"
		"recorded) are parsed into the request's \"out\" directory (default:\n"
		"DIR/<host>_<pid>_<time>_prof), then NAME.done says the outcome. Exit\n"
		"status as for prof parse.\n");
}

/* The run directory: the request's directory's parent. */
static char *window_run_dir(const char *req)
{
	char *copy = strdup(req), *dir = copy ? realpath(dirname(copy), NULL) : NULL;
	free(copy);
	if (!dir)
		return NULL;
	char *run = strdup(dirname(dir));
	free(dir);
	return run;
}

static char *window_default_out(const char *base, const struct win_request *r)
{
	char host[256] = "localhost", name[512];
	if (gethostname(host, sizeof host - 1) != 0)
		strcpy(host, "localhost");
	rundir_name(name, sizeof name, host, r->pid, raw_clock_ns(CLOCK_REALTIME));
	return fs_join(base, name);
}

/* OUT/profiler_info.json: the run's, and which window this is. */
static int window_write_info(const char *run, const char *out, const struct win_request *r,
			     int64_t rank)
{
	char *src = fs_join(run, RUNDIR_INFO_FILE), *text = NULL, *dst = fs_join(out, RUNDIR_INFO_FILE);
	size_t n;
	cJSON *info = src && fs_read_file(src, &text, &n) == 0 ? cJSON_Parse(text) : NULL;
	if (!cJSON_IsObject(info)) {
		cJSON_Delete(info);
		info = cJSON_CreateObject();
	}
	cJSON *w = cJSON_AddObjectToObject(info, "window");
	if (r->first) {
		cJSON *steps = cJSON_AddArrayToObject(w, "steps");
		cJSON_AddItemToArray(steps, cJSON_CreateNumber((double)r->first));
		cJSON_AddItemToArray(steps, cJSON_CreateNumber((double)r->last));
	} else {
		cJSON_AddNullToObject(w, "steps");   /* all the rank recorded */
	}
	cJSON_AddNumberToObject(w, "pid", r->pid);
	cJSON_AddNumberToObject(w, "rank", (double)rank);
	cJSON_AddNumberToObject(w, "window", r->window);
	cJSON_AddStringToObject(w, "requested_by", r->label ? r->label : "");
	cJSON_AddStringToObject(w, "run_dir", run);
	char *json = cJSON_Print(info);
	int rc = json && dst ? fs_write_atomic(dst, json, strlen(json)) : -ENOMEM;
	free(json);
	cJSON_Delete(info);
	free(text);
	free(src);
	free(dst);
	return rc;
}

static void window_write_done(const char *req, const char *out, int st,
			      const struct parse_report *rep, const char *error)
{
	size_t n = strlen(req) - strlen(WIN_REQ_SUFFIX);
	char *done = malloc(n + strlen(WIN_DONE_SUFFIX) + 1);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "status", st);
	if (out)
		cJSON_AddStringToObject(o, "out", out);
	if (error)
		cJSON_AddStringToObject(o, "error", error);
	cJSON_AddNumberToObject(o, "steps", rep ? (double)rep->steps : 0);
	cJSON_AddNumberToObject(o, "events", rep ? (double)rep->events_written : 0);
	char *text = cJSON_PrintUnformatted(o);
	if (done && text) {
		sprintf(done, "%.*s%s", (int)n, req, WIN_DONE_SUFFIX);
		fs_write_atomic(done, text, strlen(text));
	}
	free(text);
	cJSON_Delete(o);
	free(done);
}

/* The run's output options (export_type, pretty, gzip, timeline_limit,
 * as its profiler_info.json records them) with the request's export_type
 * over them, into `o`. Unreadable or odd: the defaults, and a line in the
 * log. */
static void window_outputs(const char *run, const struct win_request *r, struct parse_opts *o)
{
	static const char *keys[] = { "export_type", "pretty", "gzip", "timeline_limit", NULL };
	char *path = fs_join(run, RUNDIR_INFO_FILE), *text = NULL, *json = NULL;
	size_t n;
	cJSON *info = path && fs_read_file(path, &text, &n) == 0 ? cJSON_Parse(text) : NULL;
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(info, "config");
	cJSON *pick = cJSON_CreateObject();
	for (const char **k = keys; *k; k++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, *k);
		if (v)
			cJSON_AddItemToObject(pick, *k, cJSON_Duplicate(v, 1));
	}
	if (r->export_type)
		cJSON_ReplaceItemInObject(pick, "export_type", cJSON_Parse(r->export_type));
	json = cJSON_PrintUnformatted(pick);
	struct prof_config cfg;
	struct cfg_error err = { "" };
	cfg_defaults(&cfg);
	if (json && cfg_apply_json(&cfg, json, "the run's profiler_info.json", &err) == 0) {
		parse_opts_outputs(o, &cfg);
	} else if (err.msg[0]) {
		fprintf(o->log, "prof window: %s; default outputs\n", err.msg);
	}
	cfg_free(&cfg);
	free(json);
	cJSON_Delete(pick);
	cJSON_Delete(info);
	free(text);
	free(path);
}

/* The parse itself, its messages in OUT/logs/parse.log. */
static int window_parse(const char *run, const char *out, const struct win_request *r,
			int64_t rank, struct parse_report *rep)
{
	char *logs = fs_join(out, "logs"), *path = logs ? fs_join(logs, "parse.log") : NULL;
	int rc = path ? fs_mkdir_p(logs) : -ENOMEM;
	FILE *log = rc == 0 ? fopen(path, "w") : NULL;
	free(path);
	free(logs);
	size_t n = r->first ? (size_t)(r->last - r->first + 1) : 0;
	uint64_t *steps = n <= 1000000 ? malloc((n ? n : 1) * sizeof *steps) : NULL;
	if (!log || !steps) {
		if (log)
			fclose(log);
		free(steps);
		return PARSE_FAILED;
	}
	for (size_t i = 0; i < n; i++)
		steps[i] = r->first + i;
	struct parse_opts o = { .log = log, .quiet = 1, .steps = n ? steps : NULL, .nsteps = n };
	window_outputs(run, r, &o);
	int st = parse_run_rank(run, rank, out, &o, rep);
	fclose(log);
	free(steps);
	return st;
}

static int window_run(const char *req, const char *default_out)
{
	struct win_request r;
	char why[256];
	char *run = window_run_dir(req), *out = NULL;
	int st = PARSE_FAILED;
	struct parse_report rep = { 0 };
	if (!run) {
		fprintf(stderr, "prof window: %s: not inside RUN_DIR/%s/\n", req, WIN_DIR);
		return PARSE_FAILED;
	}
	if (win_request_read(req, &r, why, sizeof why)) {
		fprintf(stderr, "prof window: %s: %s\n", req, why);
		window_write_done(req, NULL, st, NULL, why);
		free(run);
		return st;
	}
	out = r.out ? strdup(r.out) : default_out ? window_default_out(default_out, &r) : NULL;
	/* the requester's rank as its agent recorded it, the one source of it */
	char *raw = fs_join(run, PROF_RAW_DIR);
	int64_t rank = raw && r.pid > 0 ? parse_raw_pid_rank(raw, r.pid) : -1;
	free(raw);
	int rc = out ? fs_mkdir_p(out) : -EINVAL;
	if (rc == 0)
		st = window_parse(run, out, &r, rank, &rep);
	if (rc == 0 && st != PARSE_FAILED && (rc = window_write_info(run, out, &r, rank)) != 0)
		st = PARSE_FAILED;
	if (rc)
		snprintf(why, sizeof why, "%s: %s", out ? out : "no output directory",
			 strerror(-rc));
	else if (st == PARSE_FAILED)
		snprintf(why, sizeof why, "the parse failed: see %s/logs/parse.log", out);
	window_write_done(req, out, st, &rep, st == PARSE_FAILED ? why : NULL);
	win_request_free(&r);
	free(out);
	free(run);
	return st;
}

int cmd_window(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "default-out", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	const char *default_out = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'o') {
			default_out = optarg;
		} else if (c == 'h') {
			window_usage(stdout);
			return 0;
		} else {
			window_usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		window_usage(stderr);
		return 2;
	}
	/* Never in the program's way: the lowest CPU and I/O priority. */
	if (setpriority(PRIO_PROCESS, 0, 19) != 0)
		fprintf(stderr, "prof window: cannot lower the priority: %s\n", strerror(errno));
#ifdef SYS_ioprio_set
	/* IOPRIO_WHO_PROCESS, this process, the idle class (linux/ioprio.h) */
	syscall(SYS_ioprio_set, 1, 0, 3 << 13);
#endif
	return window_run(argv[optind], default_out);
}
