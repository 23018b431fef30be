#include "runs.h"

#include <stdlib.h>
#include <string.h>

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
