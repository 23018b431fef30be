/* What profiler_info.json says of the recording: the losses prof counted
 * when the run ended. */
#include "stats/stats.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"

static uint64_t num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) && v->valuedouble > 0 ? (uint64_t)v->valuedouble : 0;
}

/* profiler_info.json's command (an array of words) as one line. */
static char *join_command(const cJSON *cmd)
{
	const cJSON *w;
	size_t len = 1;
	if (!cJSON_IsArray(cmd))
		return NULL;
	cJSON_ArrayForEach(w, cmd)
		len += (cJSON_IsString(w) ? strlen(w->valuestring) : 0) + 1;
	char *out = malloc(len), *p = out;
	if (!out)
		return NULL;
	cJSON_ArrayForEach(w, cmd) {
		if (!cJSON_IsString(w))
			continue;
		size_t n = strlen(w->valuestring);
		if (p != out)
			*p++ = ' ';
		memcpy(p, w->valuestring, n);
		p += n;
	}
	*p = '\0';
	return out;
}

int stats_load_recording(const char *run_dir, struct stats_recording *r, char *err,
			 size_t errlen)
{
	memset(r, 0, sizeof *r);
	char *path = fs_join(run_dir, "profiler_info.json");
	size_t len = 0;
	char *text = NULL;
	int e = path ? fs_read_file(path, &text, &len) : -ENOMEM;
	if (e) {
		if (e != -ENOENT)
			snprintf(err, errlen, "%s: %s", path ? path : run_dir, strerror(-e));
		free(path);
		return e == -ENOENT ? STATS_ABSENT : -1;
	}
	cJSON *root = cJSON_ParseWithLength(text, len);
	r->command = join_command(cJSON_GetObjectItemCaseSensitive(root, "command"));
	const cJSON *end = cJSON_GetObjectItemCaseSensitive(root, "end_info");
	if (cJSON_IsObject(end)) {
		r->known = 1;
		r->lost = num(end, "lost");
		r->storage_limit = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(end,
							"storage_limit_reached"));
		r->disk_full_streams = num(end, "disk_full_streams");
		r->streams_not_created = num(end, "streams_not_created");
		const cJSON *n, *ns = cJSON_GetObjectItemCaseSensitive(end, "notices");
		if (!cJSON_IsArray(ns))
			ns = NULL;
		cJSON_ArrayForEach(n, ns) {
			const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(n, "text"));
			if (t && r->n_notes < STATS_NOTES_MAX && (r->notes[r->n_notes] = strdup(t)))
				r->n_notes++;
		}
	}
	int rc = 0;
	if (!root) {
		snprintf(err, errlen, "%s: not JSON", path);
		rc = -1;
	}
	cJSON_Delete(root);
	free(text);
	free(path);
	return rc;
}

void stats_free_recording(struct stats_recording *r)
{
	for (size_t i = 0; i < r->n_notes; i++)
		free(r->notes[i]);
	r->n_notes = 0;
	free(r->command);
	r->command = NULL;
}

const char *stats_recording_cause(const struct stats_recording *r)
{
	if (r->storage_limit && (r->disk_full_streams || r->streams_not_created))
		return "storage limit reached, filesystem full";
	if (r->storage_limit)
		return "storage limit reached";
	if (r->disk_full_streams || r->streams_not_created)
		return "filesystem full";
	return r->lost ? "buffers full" : "";
}
