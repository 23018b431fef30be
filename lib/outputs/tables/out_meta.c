#include "outputs/tables/out_meta.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_out.h"
#include "common/rank.h"
#include "outputs/out_file.h"

int out_meta_init(struct out_meta *m)
{
	memset(m, 0, sizeof *m);
	m->user = cJSON_CreateObject();
	return m->user ? 0 : -ENOMEM;
}

static cJSON *value_of(struct out_meta *m, const char *key, const char *value,
		       int is_json, FILE *log)
{
	if (!is_json)
		return cJSON_CreateString(value);
	cJSON *v = cJSON_Parse(value);
	if (v)
		return v;
	m->bad_json++;
	fprintf(log, "prof parse: metadata \"%s\": the value given as JSON does not parse; "
		"kept as a string\n", key);
	return cJSON_CreateString(value);
}

/* A process's own distributed-job variables (platform/agent, PROF_ENV_KEY). */
static void add_proc_env(struct out_meta *m, const char *value)
{
	cJSON *v = cJSON_Parse(value);
	if (!cJSON_IsObject(v)) {
		cJSON_Delete(v);
		return;
	}
	if (!m->proc_env)
		m->proc_env = v;
	else {
		m->env_disagree |= !cJSON_Compare(m->proc_env, v, 1);
		cJSON_Delete(v);
	}
}

void out_meta_add(struct out_meta *m, const char *key, const char *value, int is_json,
		  FILE *log)
{
	if (is_json && strcmp(key, PROF_ENV_KEY) == 0) {
		add_proc_env(m, value);
		return;
	}
	size_t n = strlen(key) + strlen(value);
	if (!m->user || m->bytes + n > OUT_META_CAP) {
		m->dropped++;
		return;
	}
	cJSON *v = value_of(m, key, value, is_json, log);
	if (!v)
		return;
	m->bytes += n;
	m->entries++;
	if (cJSON_GetObjectItemCaseSensitive(m->user, key))
		cJSON_ReplaceItemInObjectCaseSensitive(m->user, key, v);
	else
		cJSON_AddItemToObject(m->user, key, v);
}

int out_meta_write(struct out_meta *m, const char *run_dir, const cJSON *env, FILE *log)
{
	if (m->dropped)
		fprintf(log, "prof parse: %llu metadata entries dropped: user metadata is "
			"capped at %d KiB\n", (unsigned long long)m->dropped, OUT_META_CAP / 1024);
	cJSON *root = cJSON_Duplicate(m->user, 1);
	if (!root)
		return -ENOMEM;
	cJSON *e = env ? cJSON_Duplicate(env, 1) : NULL;
	if (m->proc_env && !m->env_disagree) {
		if (!e)
			e = cJSON_CreateObject();
		for (const cJSON *v = e ? m->proc_env->child : NULL; v; v = v->next) {
			cJSON *dup = cJSON_Duplicate(v, 1);
			if (!dup)
				break;
			if (cJSON_GetObjectItemCaseSensitive(e, v->string))
				cJSON_ReplaceItemInObjectCaseSensitive(e, v->string, dup);
			else
				cJSON_AddItemToObject(e, v->string, dup);
		}
	}
	if (e)
		cJSON_AddItemToObject(root, PROF_ENV_KEY, e);
	struct strbuf sb = STRBUF_INIT;
	struct jo j;
	jo_init_sb(&j, &sb, 1);
	jo_cjson(&j, root);
	cJSON_Delete(root);
	sb_putc(&sb, '\n');
	int rc = jo_finish(&j) != 0 ? -ENOMEM :
		out_file_write(run_dir, "profiler_metadata.json", sb.buf, sb.len);
	sb_free(&sb);
	return rc;
}

void out_meta_free(struct out_meta *m)
{
	cJSON_Delete(m->user);
	cJSON_Delete(m->proc_env);
	m->proc_env = NULL;
	m->user = NULL;
}
