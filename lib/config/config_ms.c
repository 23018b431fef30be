/*
 * MS_PROFILER_OPTIONS: MindSpore's environment switch, a JSON object of
 * MindSpore's own keys, applied between the defaults and PROF_OPTIONS.
 * Each key maps onto prof's, or, where it names something MindSpore
 * collects on Ascend only, is checked and noted. Its values are typed as
 * MindSpore types them: booleans are JSON booleans.
 */
#include "config/config_int.h"

#include <string.h>

enum ms_kind {
	MS_ALIAS,       /* prof's key `target` */
	MS_START,       /* start: false starts paused */
	MS_FLAG,        /* boolean; true cannot act here: `why` */
	MS_COMM,        /* boolean; collectives are recorded anyway: false is `why` */
	MS_AIC,         /* -1 to 5; 0 and up cannot act here */
	MS_OP_TIME,     /* boolean: device activity on or off */
	MS_FRAMEWORK,   /* "all", "time", "memory" or null */
	MS_SYNC,        /* boolean; neither value is prof's way: `why` */
};

struct ms_key {
	const char *key;
	enum ms_kind kind;
	const char *target;
	const char *why;
};

#define WHY_COMM "collectives are recorded with the device activity; they cannot be left out alone"

static const struct ms_key ms_keys[] = {
	{ "start", MS_START, "start_paused", NULL },
	{ "output_path", MS_ALIAS, "output_path", NULL },
	{ "memory", MS_ALIAS, "profile_memory", NULL },
	{ "timeline_limit", MS_ALIAS, "timeline_limit", NULL },
	{ "hccl", MS_COMM, "hccl", WHY_COMM },
	{ "profile_communication", MS_COMM, "hccl", WHY_COMM },
	{ "aicore_metrics", MS_AIC, "aic_metrics", CFG_WHY_AIC },
	{ "l2_cache", MS_FLAG, "l2_cache", CFG_WHY_L2 },
	{ "data_process", MS_FLAG, "data_process",
	  "MindSpore's dataset pipeline (minddata) is not profiled here" },
	{ "parallel_strategy", MS_FLAG, "parallel_strategy",
	  "MindSpore's parallel strategy files are not written here" },
	{ "op_time", MS_OP_TIME, "activities", NULL },
	{ "profile_framework", MS_FRAMEWORK, "profile_framework",
	  "host sampling and operator times stay on (sampling_interval 0 and activities "
	  "switch them off)" },
	{ "sync_enable", MS_SYNC, "sync_enable",
	  "device work is timed by the device's own timestamps, neither of MindSpore's two ways" },
	{ NULL, 0, NULL, NULL },
};

/* profile_framework: "time" is the operators' host times (activities
 * CPU), "memory" the host's memory use (host_sys mem), "all" both. */
static int ms_framework(struct prof_config *c, const struct ms_key *m, const cJSON *v,
			struct cfg_error *err)
{
	const char *s = cJSON_IsString(v) ? v->valuestring : NULL;
	if (!cJSON_IsNull(v) && (!s || (strcmp(s, "all") && strcmp(s, "time") &&
					strcmp(s, "memory"))))
		return cfg_fail(err, CFG_MS_SOURCE, m->key, "expected \"all\", \"time\", "
				"\"memory\" or null, got %s", s ? "another string" : cfg_json_type(v));
	if (s && strcmp(s, "memory") != 0)
		c->activities |= CFG_ACT_CPU;
	if (s && strcmp(s, "time") != 0)
		c->host_sys |= CFG_HOST_MEM;
	cfg_note(c, m->key, m->target, CFG_MS_SOURCE, s ? NULL : m->why);
	return 0;
}

static int ms_bool_key(struct prof_config *c, const struct ms_key *m, const cJSON *v,
		       struct cfg_error *err)
{
	bool on;
	if (cfg_json_bool(v, m->key, CFG_MS_SOURCE, &on, err))
		return -1;
	switch (m->kind) {
	case MS_START:
		return cfg_set_as(c, m->target, on ? "false" : "true", m->key, CFG_MS_SOURCE, err);
	case MS_OP_TIME:
		c->activities = on ? c->activities | CFG_ACT_DEVICE
				   : c->activities & ~(uint32_t)CFG_ACT_DEVICE;
		return 0;
	default:
		break;
	}
	bool noted = m->kind == MS_SYNC || (m->kind == MS_COMM ? !on : on);
	cfg_note(c, m->key, m->target, CFG_MS_SOURCE, noted ? m->why : NULL);
	return 0;
}

static int ms_member(struct prof_config *c, const cJSON *v, const char *source,
		     struct cfg_error *err)
{
	const struct ms_key *m = ms_keys;
	long n;
	(void)source;
	while (m->key && strcmp(m->key, v->string) != 0)
		m++;
	if (!m->key)
		return 1;
	switch (m->kind) {
	case MS_ALIAS:
		return cfg_apply_as(c, m->target, v, m->key, CFG_MS_SOURCE, err);
	case MS_AIC:
		if (cfg_json_int(v, m->key, -1, 5, CFG_MS_SOURCE, &n, err))
			return -1;
		cfg_note(c, m->key, m->target, CFG_MS_SOURCE, n >= 0 ? m->why : NULL);
		return 0;
	case MS_FRAMEWORK:
		return ms_framework(c, m, v, err);
	default:
		return ms_bool_key(c, m, v, err);
	}
}

int cfg_apply_ms_options(struct prof_config *c, const char *text, struct cfg_error *err)
{
	return cfg_apply_members(c, text, CFG_MS_SOURCE, ms_member, err);
}

static const struct cfg_key_doc ms_docs[] = {
	{ "start", "start_paused", "false: start paused (prof_start() starts)" },
	{ "output_path", "output_path", "" },
	{ "memory", "profile_memory", "" },
	{ "timeline_limit", "timeline_limit", "MB" },
	{ "op_time", "activities", "false: no DEVICE" },
	{ "profile_framework", "activities, host_sys", "\"time\": CPU, \"memory\": mem, \"all\": both" },
	{ "hccl, profile_communication", "note", "collectives come with DEVICE; false is named" },
	{ "aicore_metrics, l2_cache, data_process, parallel_strategy", "note",
	  "Ascend or MindSpore only: named when asked for" },
	{ "sync_enable", "note", "always named: device times are the device's own" },
	{ NULL, NULL, NULL },
};

const struct cfg_key_doc *cfg_ms_key_docs(void)
{
	return ms_docs;
}
