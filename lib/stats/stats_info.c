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
#include "run/rundir.h"

static uint64_t num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) && v->valuedouble > 0 ? (uint64_t)v->valuedouble : 0;
}

/* profiler_info.json's command (an array of words): its words, NULL
 * after the last; pointers and text in one block, so one free. */
static char **command_words(const cJSON *cmd, size_t *n)
{
	const cJSON *w;
	size_t len = 0, count = 0;
	*n = 0;
	if (!cJSON_IsArray(cmd))
		return NULL;
	cJSON_ArrayForEach(w, cmd)
		if (cJSON_IsString(w)) {
			len += strlen(w->valuestring) + 1;
			count++;
		}
	char **v = malloc((count + 1) * sizeof *v + len);
	if (!v)
		return NULL;
	char *p = (char *)(v + count + 1);
	cJSON_ArrayForEach(w, cmd) {
		if (!cJSON_IsString(w))
			continue;
		size_t k = strlen(w->valuestring) + 1;
		v[(*n)++] = memcpy(p, w->valuestring, k);
		p += k;
	}
	v[*n] = NULL;
	return v;
}

/* The words as one line, joined by spaces. */
static char *join_words(char *const *w, size_t n)
{
	size_t len = 1;
	for (size_t i = 0; i < n; i++)
		len += strlen(w[i]) + 1;
	char *out = w ? malloc(len) : NULL, *p = out;
	for (size_t i = 0; out && i < n; i++) {
		size_t k = strlen(w[i]);
		if (p != out)
			*p++ = ' ';
		memcpy(p, w[i], k);
		p += k;
	}
	if (out)
		*p = '\0';
	return out;
}

int stats_read_json(const char *dir, const char *name, struct cJSON **root, char **path,
		    char *err, size_t errlen)
{
	*root = NULL;
	*path = fs_join(dir, name);
	size_t len = 0;
	char *text = NULL;
	int e = *path ? fs_read_file(*path, &text, &len) : -ENOMEM;
	if (e) {
		if (e != -ENOENT)
			snprintf(err, errlen, "%s: %s", *path ? *path : dir, strerror(-e));
		free(*path);
		*path = NULL;
		return e == -ENOENT ? STATS_ABSENT : -1;
	}
	*root = cJSON_ParseWithLength(text, len);
	free(text);
	return 0;
}

int stats_load_recording(const char *run_dir, struct stats_recording *r, char *err,
			 size_t errlen)
{
	memset(r, 0, sizeof *r);
	cJSON *root;
	char *path;
	int e = stats_read_json(run_dir, "profiler_info.json", &root, &path, err, errlen);
	if (e)
		return e;
	r->words = command_words(cJSON_GetObjectItemCaseSensitive(root, "command"), &r->nwords);
	r->command = join_words(r->words, r->nwords);
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
	r->going = !r->known && rundir_live(run_dir) == 1;
	int rc = 0;
	if (!root) {
		snprintf(err, errlen, "%s: not JSON", path);
		rc = -1;
	}
	cJSON_Delete(root);
	free(path);
	return rc;
}

void stats_free_recording(struct stats_recording *r)
{
	for (size_t i = 0; i < r->n_notes; i++)
		free(r->notes[i]);
	r->n_notes = 0;
	free(r->command);
	free(r->words);
	r->command = NULL;
	r->words = NULL;
	r->nwords = 0;
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
