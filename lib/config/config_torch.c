/*
 * torch_npu's profiler_config.json keys in prof's JSON sources. Those that
 * share prof's names (activities, analyse, record_shapes, profile_memory,
 * with_stack, with_flops, with_modules, is_rank, rank_list) are prof's keys
 * already; here are the others. active, warmup and start_step make one
 * window as dynamic_profile does (schedule(warmup, active), repeat 1)
 * beginning at step start_step: dynamic_profile labels that step
 * ProfilerStep#start_step, and prof, numbering from 1, gives the same label
 * to the step it records.
 */
#include "config/config_torch.h"
#include "config/config_int.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

enum exp_kind {
	EXP_ALIAS,      /* prof's key `target`, same meaning */
	EXP_FLAG,       /* boolean; true cannot act here: `why` */
	EXP_AIC,        /* one of aic_names; other than AiCoreNone: `why` */
	EXP_GC_LIMIT,   /* gc_detect_threshold: null or ms >= 0, onto gc_detect */
	EXP_HOST_SYS,   /* prof's host_sys, less "osrt": `why` */
};

struct exp_key {
	const char *key;
	enum exp_kind kind;
	const char *target;
	const char *why;
};

static const struct exp_key exp_keys[] = {
	{ "profiler_level", EXP_ALIAS, "profiler_level", NULL },
	{ "export_type", EXP_ALIAS, "export_type", NULL },
	{ "data_simplification", EXP_ALIAS, "data_simplification", NULL },
	{ "msprof_tx", EXP_ALIAS, "msprof_tx", NULL },
	{ "mstx", EXP_ALIAS, "msprof_tx", NULL },   /* its newer name */
	{ "gc_detect", EXP_ALIAS, "gc_detect", NULL },
	{ "mstx_domain_include", EXP_ALIAS, "mstx_domain_include", NULL },
	{ "mstx_domain_exclude", EXP_ALIAS, "mstx_domain_exclude", NULL },
	{ "host_sys", EXP_HOST_SYS, "host_sys",
	  "OS runtime calls (osrt) are not traced; the other values are sampled" },
	{ "gc_detect_threshold", EXP_GC_LIMIT, "gc_detect",
	  "every collection is recorded, however short: the threshold is not applied" },
	{ "aic_metrics", EXP_AIC, "aic_metrics", CFG_WHY_AIC },
	{ "l2_cache", EXP_FLAG, "l2_cache", CFG_WHY_L2 },
	{ "op_attr", EXP_FLAG, "op_attr",
	  "operator attributes are those of Ascend's aclnn operators; none are recorded here" },
	{ "record_op_args", EXP_FLAG, "record_op_args",
	  "operator arguments for Ascend's AOE tuner are not recorded here" },
	{ "sys_io", EXP_FLAG, "sys_io",
	  "NIC and RoCE counters of Ascend NPUs are not recorded here (host_sys \"network\" "
	  "samples the host's interfaces)" },
	{ "sys_interconnection", EXP_FLAG, "sys_interconnection",
	  "HCCS, PCIe and SIO bandwidth of Ascend NPUs is not recorded here" },
	{ NULL, 0, NULL, NULL },
};

static const char *const aic_names[] = {
	"AiCoreNone", "PipeUtilization", "ArithmeticUtilization", "Memory", "MemoryL0",
	"ResourceConflictRatio", "MemoryUB", "L2Cache", "MemoryAccess", NULL };

static int exp_aic(struct prof_config *c, const struct exp_key *x, const cJSON *v,
		   const char *shown, const char *source, struct cfg_error *err)
{
	size_t i = 0;
	while (cJSON_IsString(v) && aic_names[i] && strcasecmp(aic_names[i], v->valuestring))
		i++;
	if (!cJSON_IsString(v) || !aic_names[i])
		return cfg_fail(err, source, shown, "expected one of AiCoreNone, PipeUtilization, "
				"ArithmeticUtilization, Memory, MemoryL0, ResourceConflictRatio, "
				"MemoryUB, L2Cache, MemoryAccess");
	cfg_note(c, shown, x->target, source, i ? x->why : NULL);
	return 0;
}

static int exp_gc_limit(struct prof_config *c, const struct exp_key *x, const cJSON *v,
			const char *shown, const char *source, struct cfg_error *err)
{
	if (!cJSON_IsNull(v) && (!cJSON_IsNumber(v) || v->valuedouble < 0))
		return cfg_fail(err, source, shown, "expected null or milliseconds >= 0, got %s",
				cJSON_IsNumber(v) ? "a negative number" : cfg_json_type(v));
	cJSON *on = cJSON_CreateBool(!cJSON_IsNull(v));
	int rc = cfg_apply_as(c, x->target, on, shown, source, err);
	cJSON_Delete(on);
	if (!rc)
		cfg_note(c, shown, "gc_detect_threshold", source,
			 cJSON_IsNumber(v) && v->valuedouble > 0 ? x->why : NULL);
	return rc;
}

/* host_sys as torch_npu lists it: prof's values and "osrt". */
static int exp_host_sys(struct prof_config *c, const struct exp_key *x, const cJSON *v,
			const char *shown, const char *source, struct cfg_error *err)
{
	cJSON *kept = cJSON_IsArray(v) ? cJSON_CreateArray() : NULL;
	int osrt = 0;
	for (const cJSON *e = kept ? v->child : NULL; e; e = e->next) {
		int is_osrt = cJSON_IsString(e) && strcasecmp(e->valuestring, "osrt") == 0;
		osrt |= is_osrt;
		if (!is_osrt)
			cJSON_AddItemToArray(kept, cJSON_Duplicate(e, 1));
	}
	int rc = cfg_apply_as(c, x->target, kept ? kept : v, shown, source, err);
	cJSON_Delete(kept);
	if (!rc)
		cfg_note(c, shown, "host_sys.osrt", source, osrt ? x->why : NULL);
	return rc;
}

static int exp_apply(struct prof_config *c, const struct exp_key *x, const cJSON *v,
		     const char *shown, const char *source, struct cfg_error *err)
{
	bool on;
	switch (x->kind) {
	case EXP_ALIAS:
		return cfg_apply_as(c, x->target, v, shown, source, err);
	case EXP_FLAG:
		if (cfg_json_bool(v, shown, source, &on, err))
			return -1;
		cfg_note(c, shown, x->target, source, on ? x->why : NULL);
		return 0;
	case EXP_AIC:
		return exp_aic(c, x, v, shown, source, err);
	case EXP_GC_LIMIT:
		return exp_gc_limit(c, x, v, shown, source, err);
	case EXP_HOST_SYS:
		return exp_host_sys(c, x, v, shown, source, err);
	}
	return -1;
}

int cfg_apply_experimental(struct prof_config *c, const cJSON *obj, const char *source,
			   struct cfg_error *err)
{
	if (cJSON_IsNull(obj))
		return 0;
	if (!cJSON_IsObject(obj))
		return cfg_fail(err, source, "experimental_config", "expected an object, got %s",
				cfg_json_type(obj));
	const cJSON *v;
	cJSON_ArrayForEach(v, obj) {
		char shown[128];
		snprintf(shown, sizeof shown, "experimental_config.%s", v->string);
		const struct exp_key *x = exp_keys;
		while (x->key && strcmp(x->key, v->string) != 0)
			x++;
		if (!x->key)
			return cfg_fail(err, source, shown, "%s",
					"unknown key (prof run --help lists the keys)");
		if (exp_apply(c, x, v, shown, source, err))
			return -1;
	}
	return 0;
}

bool cfg_experimental_maps(const char *key)
{
	for (const struct exp_key *x = exp_keys; x->key; x++)
		if (strcmp(x->key, key) == 0)
			return x->kind == EXP_ALIAS || x->kind == EXP_GC_LIMIT ||
			       x->kind == EXP_HOST_SYS;
	return false;
}

/* active, warmup, start_step: one window of the schedule. A window needs
 * `active` steps; dynamic_profile's default is 1. */
static int torch_window(struct prof_config *c, const cJSON *v, const char *source,
			struct cfg_error *err)
{
	const char *key = v->string;
	bool is_active = strcmp(key, "active") == 0, is_start = strcmp(key, "start_step") == 0;
	long n;
	char num[32];
	if (cfg_json_int(v, key, is_active ? 1 : is_start ? -1 : 0, UINT32_MAX, source, &n, err))
		return -1;
	if (is_start)   /* -1 (start at once) and 0 as 1: the first step */
		n = n > 1 ? n - 1 : 0;
	snprintf(num, sizeof num, "%ld", n);
	const char *target = is_active ? "schedule.active" : is_start ? "schedule.skip_first"
					: "schedule.warmup";
	if (cfg_set_as(c, target, num, key, source, err))
		return -1;
	if (!is_active && c->schedule.active == 0 &&
	    cfg_set_as(c, "schedule.active", "1", key, source, err))
		return -1;
	return cfg_set_as(c, "schedule.repeat", "1", key, source, err);
}

int cfg_torch_member(struct prof_config *c, const cJSON *v, const char *source,
		     struct cfg_error *err)
{
	const char *key = v->string;
	if (strcmp(key, "prof_dir") == 0)
		return cfg_apply_as(c, "output_path", v, key, source, err);
	if (strcmp(key, "active") == 0 || strcmp(key, "warmup") == 0 ||
	    strcmp(key, "start_step") == 0)
		return torch_window(c, v, source, err);
	if (strcmp(key, "experimental_config") == 0)
		return cfg_apply_experimental(c, v, source, err);
	return 1;
}

static const struct cfg_key_doc torch_docs[] = {
	{ "prof_dir", "output_path", "where the run directory is made" },
	{ "active", "schedule.active", "steps recorded (one window: schedule.repeat 1)" },
	{ "warmup", "schedule.warmup", "steps warmed up before them" },
	{ "start_step", "schedule.skip_first", "the window's first step (start_step - 1 skipped)" },
	{ "experimental_config.profiler_level", "profiler_level", "" },
	{ "experimental_config.export_type", "export_type", "" },
	{ "experimental_config.data_simplification", "data_simplification", "" },
	{ "experimental_config.msprof_tx, .mstx", "msprof_tx", "" },
	{ "experimental_config.gc_detect", "gc_detect", "" },
	{ "experimental_config.gc_detect_threshold", "gc_detect", "a number: on (no threshold)" },
	{ "experimental_config.host_sys", "host_sys", "\"osrt\" noted" },
	{ "experimental_config.mstx_domain_include", "mstx_domain_include", "" },
	{ "experimental_config.mstx_domain_exclude", "mstx_domain_exclude", "" },
	{ "experimental_config.aic_metrics, .l2_cache, .op_attr", "note",
	  "Ascend only: checked, named when asked for" },
	{ "experimental_config.record_op_args, .sys_io, .sys_interconnection", "note",
	  "Ascend only: checked, named when asked for" },
	{ NULL, NULL, NULL },
};

const struct cfg_key_doc *cfg_torch_key_docs(void)
{
	return torch_docs;
}
