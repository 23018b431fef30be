/*
 * cluster_analysis_output/hta/: a folder Holistic Trace Analysis can load
 * as it stands. HTA takes every *.json of the folder it is given as one
 * rank's trace, so PROFILER_OUTPUT/ (communication.json beside the trace)
 * reads as zero ranks; here each rank's trace_view.json is linked as
 * rank-<r>.json (relative links, so the directory can move or be
 * archived whole). Its rank comes from the trace's distributedInfo.
 */
#define _GNU_SOURCE
#include "cluster/cluster.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fsutil.h"

/* A link's target: up from hta/ and cluster_analysis_output/ to the
 * cluster directory, the run below it, then its trace. */
#define HTA_UP  "../../"
#define HTA_MID "/PROFILER_OUTPUT/"

/* rank-<r>.json(.gz) links an earlier parse left: a rank gone must not stay. */
static void hta_clear(const char *hta)
{
	DIR *d = opendir(hta);
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "rank-", 5) != 0)
			continue;
		char *p = fs_join(hta, e->d_name);
		struct stat st;
		if (p && lstat(p, &st) == 0 && S_ISLNK(st.st_mode))
			unlink(p);
		free(p);
	}
	if (d)
		closedir(d);
}

/* The run's path below the cluster directory (out_dir's parent), where
 * it was found, up to three levels down (a folder a node): its name alone
 * would miss those below a folder. Its name when it is not below it. */
static const char *run_below(const char *out_dir, const char *run)
{
	const char *slash = strrchr(out_dir, '/');
	size_t n = slash ? (size_t)(slash - out_dir) : 0;
	if (slash && strncmp(run, out_dir, n) == 0 && run[n] == '/')
		return run + n + 1;
	slash = strrchr(run, '/');
	return slash ? slash + 1 : run;
}

/* One rank's link, to whichever trace its parse wrote; 0 when it has none. */
static int hta_link(const char *out_dir, const char *hta, const struct cluster_rank *r)
{
	static const char *const names[] = { "trace_view.json", "trace_view.json.gz" };
	const char *run = run_below(out_dir, r->dir);
	int rc = 0;
	for (size_t i = 0; i < 2 && rc == 0; i++) {
		char target[4096], link[4096], *have = fs_join(r->dir, "PROFILER_OUTPUT");
		char *file = have ? fs_join(have, names[i]) : NULL;
		struct stat st;
		if (file && stat(file, &st) == 0) {
			snprintf(target, sizeof target, HTA_UP "%s" HTA_MID "%s", run, names[i]);
			snprintf(link, sizeof link, "%s/rank-%d.%s", hta, r->rank,
				 i ? "json.gz" : "json");
			if (symlink(target, link) != 0 && errno != EEXIST)
				rc = -errno;
			i = 2;
		}
		free(file);
		free(have);
	}
	return rc;
}

int cluster_write_hta(const char *out_dir, const struct cluster *c)
{
	char *hta = fs_join(out_dir, "hta");
	int rc = hta ? fs_mkdir_p(hta) : -ENOMEM;
	if (rc == 0)
		hta_clear(hta);
	for (size_t i = 0; rc == 0 && i < c->n; i++)
		rc = hta_link(out_dir, hta, &c->ranks[i]);
	free(hta);
	return rc;
}

char *cluster_hta_run(const char *dir, const char *hta, int rank)
{
	static const char *const ext[] = { "json", "json.gz" };
	static const char up[] = HTA_UP, mid[] = HTA_MID;
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
