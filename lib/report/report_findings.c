/*
 * PROFILER_OUTPUT/findings.json: the findings report.html shows, for
 * programs and for `prof stats` (one object a finding: rule, value,
 * threshold, unit, text, advice), written beside the page by the same
 * parse.
 */
#include "report/report.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "outputs/out_file.h"
#include "stats/stats.h"

int report_findings_save(const char *out_dir, const struct report_finding *f, size_t n,
			 FILE *log)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; arr && i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(arr, o))
			break;
		cJSON_AddStringToObject(o, "rule", f[i].rule->id);
		cJSON_AddNumberToObject(o, "value", f[i].value);
		cJSON_AddNumberToObject(o, "threshold", f[i].rule->threshold);
		cJSON_AddStringToObject(o, "unit", f[i].rule->unit);
		cJSON_AddStringToObject(o, "text", f[i].text);
		cJSON_AddStringToObject(o, "advice", f[i].rule->advice);
	}
	char *text = arr ? cJSON_Print(arr) : NULL;
	cJSON_Delete(arr);
	int rc = text ? out_file_write(out_dir, STATS_FINDINGS_FILE, text, strlen(text)) : -ENOMEM;
	free(text);
	if (rc)
		fprintf(log, "prof parse: %s/%s: %s\n", out_dir, STATS_FINDINGS_FILE, strerror(-rc));
	return rc;
}
