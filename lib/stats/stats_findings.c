/* PROFILER_OUTPUT/findings.json (lib/report/report_findings.c) read back. */
#include "stats/stats.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_str(const cJSON *o, const char *key)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
	return strdup(s ? s : "");
}

static int read_one(const cJSON *o, struct stats_finding *f)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "value");
	f->rule = dup_str(o, "rule");
	f->text = dup_str(o, "text");
	f->advice = dup_str(o, "advice");
	f->value = cJSON_IsNumber(v) ? v->valuedouble : 0;
	return f->rule && f->text && f->advice ? 0 : -ENOMEM;
}

int stats_load_findings(const char *outdir, struct stats_findings *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	cJSON *arr;
	char *path;
	int rc = stats_read_json(outdir, STATS_FINDINGS_FILE, &arr, &path, err, errlen);
	if (rc)
		return rc;
	size_t n = cJSON_IsArray(arr) ? (size_t)cJSON_GetArraySize(arr) : 0;
	out->v = calloc(n ? n : 1, sizeof *out->v);
	rc = !cJSON_IsArray(arr) ? -EINVAL : out->v ? 0 : -ENOMEM;
	const cJSON *o, *items = rc ? NULL : arr;
	cJSON_ArrayForEach(o, items) {
		if (!cJSON_IsObject(o))
			continue;
		if ((rc = read_one(o, &out->v[out->n++])) != 0)
			break;
	}
	if (rc)
		snprintf(err, errlen, "%s: %s", path, rc == -EINVAL ? "not a JSON array" :
			 strerror(-rc));
	cJSON_Delete(arr);
	free(path);
	if (rc)
		stats_findings_free(out);
	return rc ? -1 : 0;
}

void stats_findings_free(struct stats_findings *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].rule);
		free(f->v[i].text);
		free(f->v[i].advice);
	}
	free(f->v);
	memset(f, 0, sizeof *f);
}
