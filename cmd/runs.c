#include "runs.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "archive/archive.h"

#define RUNS_LISTED 8

/* The time in a run directory's name (<host>_<pid>_<time>_prof), for
 * ordering runs; the whole name when it has none. */
static const char *run_time(const char *path)
{
	const char *end = strrchr(path, '_'), *p = end;
	while (p && p > path && p[-1] != '_')
		p--;
	return p ? p : path;
}

static int cmp_runs(const void *a, const void *b)
{
	return strcmp(run_time(*(char *const *)a), run_time(*(char *const *)b));
}

void cmd_list_runs(FILE *out, const char *cmd, const char *dir, char **runs, size_t n)
{
	qsort(runs, n, sizeof *runs, cmp_runs);
	fprintf(out, "%s: %s holds %zu runs; name one (oldest first):\n", cmd, dir, n);
	for (size_t i = n > RUNS_LISTED ? n - RUNS_LISTED : 0; i < n; i++)
		fprintf(out, "  %s%s\n", runs[i], i == n - 1 ? "   (the newest)" : "");
	if (n > RUNS_LISTED)
		fprintf(out, "  (and %zu older)\n", n - RUNS_LISTED);
}

/* The temporary directories archives went to (prof diff has two), for a
 * signal that ends prof to remove first: a Ctrl-C, a closed pipe (`prof
 * stats big.tar.zst | head`) or a kill while a run is read must not leave
 * its copy behind. Only async-signal-safe calls in the handler. */
#define TEMPS 2
static char temps[TEMPS][4096];
static const int temp_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };

static void rm_rf(char *dir)
{
	char *argv[] = { "rm", "-rf", "--", dir, NULL };
	pid_t pid = fork();
	if (pid == 0) {
		execve("/bin/rm", argv, (char *[]){ NULL });
		execve("/usr/bin/rm", argv, (char *[]){ NULL });
		_exit(127);
	}
	int st;
	if (pid > 0)
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
}

static void temps_remove_and_die(int sig)
{
	for (int i = 0; i < TEMPS; i++)
		if (temps[i][0])
			rm_rf(temps[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* `dir` is removed if a signal ends prof before cmd_remove_tree does. */
static void temps_add(const char *dir)
{
	for (int i = 0; i < TEMPS; i++) {
		if (temps[i][0])
			continue;
		snprintf(temps[i], sizeof temps[i], "%s", dir);
		break;
	}
	struct sigaction sa = { .sa_handler = temps_remove_and_die }, old;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof temp_signals / sizeof temp_signals[0]; i++)
		if (sigaction(temp_signals[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(temp_signals[i], &sa, NULL);
}

int cmd_unpack_temp(const char *cmd, const char *archive, char **tmp, char **dir)
{
	char tmpl[4096];
	const char *base = getenv("TMPDIR");
	int n = snprintf(tmpl, sizeof tmpl, "%s/", base && *base ? base : "/tmp");
	snprintf(tmpl + n, sizeof tmpl - (size_t)n, "%s-XXXXXX", cmd);
	for (char *p = tmpl + n; *p; p++)   /* "prof diff" -> prof-diff-XXXXXX */
		*p = *p == ' ' ? '-' : *p;
	if (!mkdtemp(tmpl)) {
		fprintf(stderr, "%s: %s: cannot make a temporary directory: %s\n", cmd, tmpl,
			strerror(errno));
		return -1;
	}
	temps_add(tmpl);
	*tmp = strdup(tmpl);
	struct arc_error err;
	if (!*tmp || arc_extract(archive, *tmp, NULL, dir, &err) != ARC_OK) {
		fprintf(stderr, "%s: %s\n", cmd, *tmp ? err.msg : "out of memory");
		return -1;
	}
	return 0;
}

void cmd_remove_tree(const char *dir)
{
	char copy[4096];
	snprintf(copy, sizeof copy, "%s", dir);
	rm_rf(copy);
	for (int i = 0; i < TEMPS; i++)
		if (strcmp(temps[i], dir) == 0)
			temps[i][0] = '\0';
}
