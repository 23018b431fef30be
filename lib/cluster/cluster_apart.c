/*
 * Runs one after another, not the ranks of one job: `prof run` twice into
 * one output directory (./prof_data by default) leaves two run directories
 * side by side, which a parse of that directory must not take for two
 * ranks and compare step by step. The ranks of one job run at the same
 * time, or name their rank (RANK, torchrun, MindSpore's RANK_ID).
 */
#include "cluster/cluster.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "common/fsutil.h"
#include "ingest/parse_info.h"

struct span {
	uint64_t start, end;   /* realtime ns; end 0: unknown (unfinished run) */
	int rank;
};

/* profiler_info.json's rank and recorded span; -1 when unreadable. */
static int read_span(const char *run_dir, struct span *s)
{
	char *p = fs_join(run_dir, "profiler_info.json"), *text = NULL;
	size_t len;
	int rc = -1;
	s->start = s->end = 0;
	s->rank = -1;
	if (p && fs_read_file(p, &text, &len) == 0) {
		cJSON *root = cJSON_ParseWithLength(text, len);
		const cJSON *clock = cJSON_GetObjectItemCaseSensitive(root, "clock");
		const cJSON *start = cJSON_GetObjectItemCaseSensitive(clock, "start");
		const cJSON *end = cJSON_GetObjectItemCaseSensitive(clock, "end");
		if (parse_json_u64(cJSON_GetObjectItemCaseSensitive(start, "real_ns"), &s->start) == 0)
			rc = 0;
		if (parse_json_u64(cJSON_GetObjectItemCaseSensitive(end, "real_ns"), &s->end) != 0)
			s->end = 0;
		s->rank = cluster_info_rank_of(root);
		cJSON_Delete(root);
	}
	free(text);
	free(p);
	return rc;
}

static int cmp_start(const void *a, const void *b)
{
	uint64_t x = ((const struct span *)a)->start, y = ((const struct span *)b)->start;
	return (x > y) - (x < y);
}

int cluster_runs_apart(char **runs, size_t n)
{
	if (n < 2)
		return 0;
	struct span *s = calloc(n, sizeof *s);
	int apart = s != NULL;
	for (size_t i = 0; apart && i < n; i++)
		apart = read_span(runs[i], &s[i]) == 0 && s[i].rank < 0;
	if (apart)
		qsort(s, n, sizeof *s, cmp_start);
	/* each ended before the next began; an unfinished one's end is unknown */
	for (size_t i = 0; apart && i + 1 < n; i++)
		apart = s[i].end && s[i].end <= s[i + 1].start;
	free(s);
	return apart;
}
