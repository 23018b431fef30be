/*
 * cluster_analysis_output/ read back (prof stats): the ranks and their
 * steps from cluster_step_trace_time.csv, each rank's run directory from
 * its hta/ link (cluster_hta.c), so that what is shown of a cluster is
 * what `prof parse` analysed, without parsing it again.
 */
#include "cluster/cluster.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fsutil.h"

/* The run directory hta/rank-<r>.json(.gz) leads to, "../../REL/
 * PROFILER_OUTPUT/...", as DIR/REL; NULL when the link is not there. */
static char *rank_run(const char *dir, const char *hta, int rank)
{
	static const char *const ext[] = { "json", "json.gz" };
	static const char up[] = "../../", mid[] = "/PROFILER_OUTPUT/";
	for (size_t i = 0; i < 2; i++) {
		char link[4200], target[4096];
		snprintf(link, sizeof link, "%s/rank-%d.%s", hta, rank, ext[i]);
		ssize_t n = readlink(link, target, sizeof target - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		char *end = strstr(target, mid);
		if (strncmp(target, up, sizeof up - 1) != 0 || !end)
			return NULL;
		*end = '\0';
		return fs_join(dir, target + sizeof up - 1);
	}
	return NULL;
}

int cluster_load(const char *dir, struct cluster *c)
{
	memset(c, 0, sizeof *c);
	char *out = fs_join(dir, CLUSTER_OUT_DIR);
	char *csv = out ? fs_join(out, "cluster_step_trace_time.csv") : NULL;
	char *hta = out ? fs_join(out, "hta") : NULL, *text = NULL;
	size_t len;
	int rc = csv && hta ? fs_read_file(csv, &text, &len) : -ENOMEM;
	if (!rc)
		rc = cluster_read_cluster_csv(text, c);
	for (size_t i = 0; !rc && i < c->n; i++)
		c->ranks[i].dir = rank_run(dir, hta, c->ranks[i].rank);
	free(text);
	free(hta);
	free(csv);
	free(out);
	return rc;
}
