/*
 * cluster_analysis_output/ read back (prof stats): the ranks and their
 * steps from cluster_step_trace_time.csv, each rank's run directory from
 * its hta/ link (cluster_hta_run), so that what is shown of a cluster is
 * what `prof parse` analysed, without parsing it again.
 */
#include "cluster/cluster.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fsutil.h"

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
		c->ranks[i].dir = cluster_hta_run(dir, hta, c->ranks[i].rank);
	free(text);
	free(hta);
	free(csv);
	free(out);
	return rc;
}
