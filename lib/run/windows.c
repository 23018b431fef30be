#define _GNU_SOURCE
#include "run/windows.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "common/grow.h"
#include "raw/raw_clock.h"

extern char **environ;

static int req_fail(char *why, size_t len, const char *what)
{
	snprintf(why, len, "%s", what);
	return -1;
}

static int req_step(const cJSON *v, uint64_t *out)
{
	if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 9.0e15 ||
	    v->valuedouble != (double)(uint64_t)v->valuedouble)
		return -1;
	*out = (uint64_t)v->valuedouble;
	return 0;
}

static char *req_string(const cJSON *root, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
	return cJSON_IsString(v) && v->valuestring[0] ? strdup(v->valuestring) : NULL;
}

static int req_fill(const cJSON *root, struct win_request *r, char *why, size_t len)
{
	const cJSON *steps = cJSON_GetObjectItemCaseSensitive(root, "steps");
	if (steps && (!cJSON_IsArray(steps) || cJSON_GetArraySize(steps) != 2 ||
		      req_step(cJSON_GetArrayItem(steps, 0), &r->first) ||
		      req_step(cJSON_GetArrayItem(steps, 1), &r->last) || r->last < r->first))
		return req_fail(why, len, "\"steps\": expected [first, last], step numbers from 1");
	const cJSON *pid = cJSON_GetObjectItemCaseSensitive(root, "pid");
	const cJSON *win = cJSON_GetObjectItemCaseSensitive(root, "window");
	r->pid = cJSON_IsNumber(pid) ? (int)pid->valuedouble : 0;
	r->window = cJSON_IsNumber(win) && win->valuedouble >= 0 ? (uint32_t)win->valuedouble : 0;
	const cJSON *act = cJSON_GetObjectItemCaseSensitive(root, "activation");
	r->activation = cJSON_IsNumber(act) && act->valuedouble >= 1 &&
			act->valuedouble < 4294967296.0 ? (uint32_t)act->valuedouble : 0;
	r->out = req_string(root, "out");
	const cJSON *ex = cJSON_GetObjectItemCaseSensitive(root, "export_type");
	r->export_type = ex ? cJSON_PrintUnformatted(ex) : NULL;
	r->label = req_string(root, "label");
	if (r->out && r->out[0] != '/')
		return req_fail(why, len, "\"out\": expected an absolute path");
	return 0;
}

int win_request_read(const char *path, struct win_request *r, char *why, size_t len)
{
	char *text;
	size_t n;
	memset(r, 0, sizeof *r);
	int rc = fs_read_file(path, &text, &n);
	if (rc) {
		snprintf(why, len, "cannot read it: %s", strerror(-rc));
		return -1;
	}
	cJSON *root = cJSON_Parse(text);
	free(text);
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return req_fail(why, len, "not a JSON object");
	}
	rc = req_fill(root, r, why, len);
	cJSON_Delete(root);
	if (rc)
		win_request_free(r);
	return rc;
}

void win_request_free(struct win_request *r)
{
	free(r->out);
	free(r->label);
	free(r->export_type);
	memset(r, 0, sizeof *r);
}

int win_start(struct win_queue *q, const char *run_dir, const char *default_out,
	      char *err, size_t len)
{
	memset(q, 0, sizeof *q);
	q->run_dir = strdup(run_dir);
	q->dir = fs_join(run_dir, WIN_DIR);
	q->default_out = default_out ? strdup(default_out) : fs_join(run_dir, "cycles");
	q->prof_exe = realpath("/proc/self/exe", NULL);
	int rc = q->run_dir && q->dir && q->default_out && q->prof_exe ? fs_mkdir_p(q->dir) : -ENOMEM;
	if (rc) {
		snprintf(err, len, "%s: %s", q->dir ? q->dir : WIN_DIR, strerror(-rc));
		win_stop(q);
	}
	return rc;
}

static int win_is_request(const struct dirent *e)
{
	size_t n = strlen(e->d_name), s = strlen(WIN_REQ_SUFFIX);
	return e->d_name[0] != '.' && n > s && strcmp(e->d_name + n - s, WIN_REQ_SUFFIX) == 0;
}

static int win_seen(const struct win_queue *q, const char *name)
{
	for (size_t i = 0; i < q->nseen; i++)
		if (strcmp(q->seen[i], name) == 0)
			return 1;
	return 0;
}

/* New requests, in name order, behind those already taken. */
static void win_scan(struct win_queue *q)
{
	struct dirent **v;
	int n = scandir(q->dir, &v, win_is_request, alphasort);
	for (int i = 0; i < n; i++) {
		char **grown;
		if (!win_seen(q, v[i]->d_name) &&
		    (grown = grow_room(q->seen, q->nseen, &q->cap, sizeof *q->seen)) != NULL) {
			q->seen = grown;
			if ((q->seen[q->nseen] = strdup(v[i]->d_name)) != NULL)
				q->nseen++;
		}
		free(v[i]);
	}
	if (n >= 0)
		free(v);
}

/* <dir>/<name> with its .req suffix replaced by `suffix`. */
static char *win_sibling(const struct win_queue *q, const char *name, const char *suffix)
{
	size_t stem = strlen(name) - strlen(WIN_REQ_SUFFIX);
	char *p = malloc(strlen(q->dir) + stem + strlen(suffix) + 2);
	if (p)
		sprintf(p, "%s/%.*s%s", q->dir, (int)stem, name, suffix);
	return p;
}

/* What a parse that could not say it (it was killed, or never ran) says. */
static void win_write_failed(const struct win_queue *q, const char *name, const char *why)
{
	char *done = win_sibling(q, name, WIN_DONE_SUFFIX);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "status", 4);
	cJSON_AddStringToObject(o, "error", why);
	char *text = cJSON_PrintUnformatted(o);
	if (done && text)
		fs_write_atomic(done, text, strlen(text));
	free(text);
	cJSON_Delete(o);
	free(done);
}

int win_dynamic_out(struct win_queue *q, uint32_t activation, const char *dir)
{
	if (activation >= q->ndyn_out) {
		char **v = realloc(q->dyn_out, (activation + 1) * sizeof *v);
		if (!v)
			return -ENOMEM;
		memset(v + q->ndyn_out, 0, (activation + 1 - q->ndyn_out) * sizeof *v);
		q->dyn_out = v;
		q->ndyn_out = activation + 1;
	}
	free(q->dyn_out[activation]);
	q->dyn_out[activation] = dir ? strdup(dir) : NULL;
	return dir && !q->dyn_out[activation] ? -ENOMEM : 0;
}

/* Where a request without "out" goes: its activation's prof_dir, or the
 * queue's default. */
static const char *win_out_of(const struct win_queue *q, const char *req)
{
	struct win_request r;
	char why[128];
	const char *out = q->default_out;
	if (q->ndyn_out && win_request_read(req, &r, why, sizeof why) == 0) {
		if (r.activation && r.activation < q->ndyn_out && q->dyn_out[r.activation])
			out = q->dyn_out[r.activation];
		win_request_free(&r);
	}
	return out;
}

static void win_launch(struct win_queue *q)
{
	const char *name = q->seen[q->next];
	char *req = fs_join(q->dir, name);
	posix_spawnattr_t at;
	posix_spawnattr_init(&at);
	/* Out of the terminal's process group: a Ctrl-C meant for the program
	 * must not cut a result short. */
	posix_spawnattr_setpgroup(&at, 0);
	sigset_t none;
	sigemptyset(&none);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
	char *argv[] = { q->prof_exe, "window", "--default-out",
			 (char *)(req ? win_out_of(q, req) : q->default_out), req, NULL };
	pid_t pid;
	int rc = req ? posix_spawn(&pid, q->prof_exe, NULL, &at, argv, environ) : ENOMEM;
	posix_spawnattr_destroy(&at);
	free(req);
	if (rc) {
		win_write_failed(q, name, strerror(rc));
		q->failed++;
		q->next++;
		return;
	}
	q->child = pid;
}

#define WIN_SKIPPED "skipped at the user's Ctrl-C"

void win_poll(struct win_queue *q)
{
	if (!q->dir)
		return;
	win_scan(q);
	while (!q->child && q->next < q->nseen) {
		if (!q->skipping) {
			win_launch(q);
			continue;
		}
		win_write_failed(q, q->seen[q->next++], WIN_SKIPPED);
		q->skipped++;
	}
}

void win_skip(struct win_queue *q)
{
	q->skipping = 1;
	if (q->child)
		kill(-q->child, SIGTERM);   /* its process group: the parse and anything it runs */
	win_poll(q);
}

/* The outcome, from the .done file `prof window` wrote. */
static void win_account(struct win_queue *q, const char *name, int status)
{
	char *done = win_sibling(q, name, WIN_DONE_SUFFIX), *text = NULL;
	size_t n;
	cJSON *o = NULL;
	if (!WIFEXITED(status))
		win_write_failed(q, name, "the parse was killed by a signal");
	else if (done && fs_read_file(done, &text, &n) == 0)
		o = cJSON_Parse(text);
	else if (done) {
		/* it ended without saying: whoever waits for the result must
		 * hear it will not come */
		char why[96];
		snprintf(why, sizeof why, "the parse ended (exit status %d) without a result",
			 WEXITSTATUS(status));
		win_write_failed(q, name, why);
	}
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "status");
	const cJSON *out = cJSON_GetObjectItemCaseSensitive(o, "out");
	if (cJSON_IsNumber(st) && st->valuedouble != 4 && cJSON_IsString(out)) {
		q->ok++;
		free(q->last_out);
		q->last_out = strdup(out->valuestring);
	} else {
		q->failed++;
		if (!q->first_failed)
			q->first_failed = fs_join(q->dir, name);
	}
	cJSON_Delete(o);
	free(text);
	free(done);
}

int win_reaped(struct win_queue *q, pid_t pid, int status)
{
	if (!q->child || pid != q->child)
		return 0;
	q->child = 0;
	if (q->skipping && WIFSIGNALED(status)) {
		win_write_failed(q, q->seen[q->next++], WIN_SKIPPED);
		q->skipped++;
	} else {
		win_account(q, q->seen[q->next++], status);
	}
	win_poll(q);
	return 1;
}

size_t win_left(const struct win_queue *q)
{
	return q->nseen - q->next + (q->child ? 1 : 0);
}

void win_say_left(const struct win_queue *q, FILE *out, int skippable)
{
	size_t left = win_left(q);
	fprintf(out, "prof: writing the result%s of %zu recording window%s still queued, then "
		"the run's own parse%s%s\n", left == 1 ? "" : "s", left, left == 1 ? "" : "s",
		skippable ? "; Ctrl-C skips " : "", skippable ? (left == 1 ? "it" : "them") : "");
}

#define WIN_DRAIN_QUIET_NS 1000000000ull   /* a drain longer than this is said */
#define WIN_DRAIN_POLL_NS  5000000l

void win_drain(struct win_queue *q, FILE *say)
{
	if (!q->dir)
		return;
	uint64_t since = raw_clock_ns(CLOCK_MONOTONIC);
	bool said = false;
	for (;;) {
		win_poll(q);
		if (!q->child)
			return;
		int st;
		pid_t p = waitpid(q->child, &st, WNOHANG);
		if (p < 0 && errno == EINTR)
			continue;
		if (p == 0) {
			if (!said && say && raw_clock_ns(CLOCK_MONOTONIC) - since > WIN_DRAIN_QUIET_NS) {
				said = true;
				win_say_left(q, say, 0);   /* a signal now ends prof */
			}
			nanosleep(&(struct timespec){ .tv_nsec = WIN_DRAIN_POLL_NS }, NULL);
			continue;
		}
		if (p < 0)
			st = 0x7f;   /* lost: reaped elsewhere; counted as failed */
		win_reaped(q, q->child, st);
	}
}

void win_report(const struct win_queue *q, FILE *out)
{
	if (q->ok)
		fprintf(out, "prof: %u window result%s written (the last: %s)\n", q->ok,
			q->ok == 1 ? "" : "s", q->last_out);
	if (q->skipped)
		fprintf(out, "prof: %u window result%s skipped at Ctrl-C (the request%s stay%s in "
			"%s)\n", q->skipped, q->skipped == 1 ? "" : "s", q->skipped == 1 ? "" : "s",
			q->skipped == 1 ? "s" : "", q->dir);
	if (q->failed)
		fprintf(out, "prof: %u window result%s could not be written; see %s and the "
			".done file beside it (the whole run's PROFILER_OUTPUT is not affected)\n",
			q->failed, q->failed == 1 ? "" : "s", q->first_failed ? q->first_failed : q->dir);
}

void win_stop(struct win_queue *q)
{
	for (size_t i = 0; i < q->nseen; i++)
		free(q->seen[i]);
	free(q->seen);
	free(q->run_dir);
	free(q->dir);
	free(q->default_out);
	free(q->prof_exe);
	free(q->last_out);
	free(q->first_failed);
	for (size_t i = 0; i < q->ndyn_out; i++)
		free(q->dyn_out[i]);
	free(q->dyn_out);
	memset(q, 0, sizeof *q);
}
