/*
 * One run directory holding several ranks' processes, split into one
 * output per rank (RUN_DIR/rank_<r>/) and analysed as a cluster.
 */
#define _GNU_SOURCE
#include "cluster/cluster.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/agent_env.h"
#include "common/fsutil.h"
#include "export/export.h"
#include "outputs/out_file.h"
#include "ingest/parse_rank.h"

#define INFO_NAME "profiler_info.json"

/* The worker's parse: rank_dir is RUN_DIR/rank_<r>, its profiler_info.json
 * names r. */
static enum parse_status parse_rank_dir(const char *rank_dir, const struct parse_opts *o,
					struct parse_report *r)
{
	char *run = strdup(rank_dir);
	char *slash = run ? strrchr(run, '/') : NULL;
	int rank = cluster_info_rank(rank_dir);
	enum parse_status st = PARSE_FAILED;
	memset(r, 0, sizeof *r);
	if (slash && rank >= 0) {
		*slash = '\0';
		st = parse_run_rank(run, rank, rank_dir, o, r);
	}
	free(run);
	return st;
}

/* The run's profiler_info.json text with its top-level "rank" set, edited
 * as text: a cJSON round trip would turn integers past 2^53 (real_ns)
 * into floats. NULL when the text is not prof's layout (one top-level key
 * a line, "rank" among them); the caller then rewrites it through cJSON. */
static char *info_text_with_rank(const char *text, size_t len, int64_t rank)
{
	static const char key[] = "\n\t\"rank\":\t";
	const char *at = memmem(text, len, key, sizeof key - 1);
	if (!at || memmem(text, len, "\"rank_id\"", 9))
		return NULL;
	const char *val = at + sizeof key - 1, *end = memchr(val, '\n', len - (size_t)(val - text));
	if (!end)
		return NULL;
	int comma = end > val && end[-1] == ',';
	char num[32];
	int n = snprintf(num, sizeof num, "%" PRId64 "%s", rank, comma ? "," : "");
	size_t head = (size_t)(val - text), tail = len - (size_t)(end - text);
	char *out = malloc(head + (size_t)n + tail + 1);
	if (!out)
		return NULL;
	memcpy(out, text, head);
	memcpy(out + head, num, (size_t)n);
	memcpy(out + head + (size_t)n, end, tail);
	out[head + (size_t)n + tail] = 0;
	cJSON *check = cJSON_Parse(out);
	int ok = cJSON_IsObject(check);
	cJSON_Delete(check);
	if (!ok) {
		free(out);
		return NULL;
	}
	return out;
}

/* rank_dir/profiler_info.json: the run's, with "rank": rank. 0 or -errno. */
static int write_info(const char *run_dir, const char *rank_dir, int64_t rank)
{
	char *p = fs_join(run_dir, INFO_NAME), *text = NULL;
	size_t len = 0;
	int have = p && fs_read_file(p, &text, &len) == 0;
	free(p);
	char *edited = have ? info_text_with_rank(text, len, rank) : NULL;
	if (edited) {
		free(text);
		int rc = out_file_write(rank_dir, INFO_NAME, edited, strlen(edited));
		free(edited);
		return rc;
	}
	cJSON *root = have ? cJSON_ParseWithLength(text, len) : NULL;
	free(text);
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		root = cJSON_CreateObject();
	}
	cJSON_DeleteItemFromObjectCaseSensitive(root, "rank");
	cJSON_DeleteItemFromObjectCaseSensitive(root, "rank_id");
	char *out = cJSON_AddNumberToObject(root, "rank", (double)rank) ? cJSON_Print(root) : NULL;
	int rc = out ? out_file_write(rank_dir, INFO_NAME, out, strlen(out)) : -ENOMEM;
	cJSON_free(out);
	cJSON_Delete(root);
	return rc;
}

/* RUN_DIR/rank_<r>, created, with its profiler_info.json; NULL on failure
 * (said on `log`). */
static char *make_rank_dir(const char *run_dir, int64_t rank, FILE *log)
{
	char name[32];
	snprintf(name, sizeof name, "rank_%lld", (long long)rank);
	char *d = fs_join(run_dir, name);
	int rc = d ? fs_mkdir_p(d) : -ENOMEM;
	if (rc == 0)
		rc = write_info(run_dir, d, rank);
	if (rc == 0)
		return d;
	fprintf(log, "prof parse: %s/%s: %s\n", run_dir, name, strerror(-rc));
	free(d);
	return NULL;
}

/* Whether name is "rank_<r>" for an r not among ranks[0..n). */
static int stale_rank_name(const char *name, const int64_t *ranks, size_t n)
{
	char *end;
	if (strncmp(name, "rank_", 5) != 0 || name[5] < '0' || name[5] > '9')
		return 0;
	long long r = strtoll(name + 5, &end, 10);
	if (*end)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (ranks[i] == r)
			return 0;
	return 1;
}

/* An earlier parse's rank_<r>/ for a rank this run does not hold (its raw
 * data went, or was replaced) must not pass for this parse's: removed, and
 * said. Links are left alone: prof never makes them. */
static void drop_stale_ranks(const char *run_dir, const int64_t *ranks, size_t n, FILE *log)
{
	DIR *d = opendir(run_dir);
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		if (e->d_type != DT_DIR || !stale_rank_name(e->d_name, ranks, n))
			continue;
		char *p = fs_join(run_dir, e->d_name);
		int rc = p ? export_remove_tree(p) : -ENOMEM;
		fprintf(log, "prof parse: %s/%s: %s (this run has no rank %s)\n", run_dir,
			e->d_name, rc ? strerror(-rc) : "removed, from an earlier parse",
			e->d_name + 5);
		free(p);
	}
	if (d)
		closedir(d);
}

int cluster_split_run(const char *run_dir, int jobs, const struct parse_opts *o,
		      cluster_done_fn done, enum parse_status *st)
{
	char *raw = fs_join(run_dir, PROF_RAW_DIR);
	int64_t *ranks = NULL;
	size_t n = 0;
	int rc = raw ? parse_raw_ranks(raw, &ranks, &n) : -ENOMEM;
	free(raw);
	if (rc || n < 2) {
		free(ranks);
		return 0;
	}
	drop_stale_ranks(run_dir, ranks, n, o->log);
	char **dirs = calloc(n, sizeof *dirs);
	size_t k = 0;
	for (size_t i = 0; dirs && i < n; i++)
		if ((dirs[k] = make_rank_dir(run_dir, ranks[i], o->log)) != NULL)
			k++;
	if (jobs < 1) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		jobs = cpus > 0 ? (int)cpus : 1;
	}
	struct parse_opts co = *o;
	co.progress = 0;   /* the ranks are parsed side by side */
	co.end_info_said = 1;   /* their profiler_info.json is the run's: its parse says it */
	*st = k ? cluster_parse_with(run_dir, dirs, k, jobs, &co, done, parse_rank_dir)
		: PARSE_FAILED;
	if (k && k < n && *st == PARSE_OK)
		*st = PARSE_DAMAGED;
	cluster_free_runs(dirs, k);
	free(ranks);
	return 1;
}
