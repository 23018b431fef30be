/*
 * The configuration model: one table of keys drives JSON sources, flags,
 * validation, the JSON dump and the help text, so a key cannot be known to
 * one of them and not the others.
 */
#include "config/config.h"
#include "config/config_int.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/domain_filter.h"
#include "common/fsutil.h"

enum cfg_type { T_STRING, T_BOOL, T_UINT, T_SECONDS, T_SET, T_ENUM, T_OBJECT, T_NAMES };

struct cfg_name { const char *name; uint32_t value; };

struct cfg_key {
	const char *key;
	enum cfg_type type;
	size_t off;
	uint32_t min, max;              /* T_UINT bounds; T_SECONDS max */
	const struct cfg_name *names;   /* T_SET, T_ENUM */
	const char *type_doc;
	const char *help;
	bool pending;                   /* checked and kept, not yet acted on */
};

static const struct cfg_name activity_names[] = {
	{ "CPU", CFG_ACT_CPU }, { "DEVICE", CFG_ACT_DEVICE },
	/* The seeds' spellings, so configs written for them load. */
	{ "NPU", CFG_ACT_DEVICE }, { "CUDA", CFG_ACT_DEVICE }, { "GPU", CFG_ACT_DEVICE },
	{ NULL, 0 } };
static const struct cfg_name export_names[] = {
	{ "text", CFG_EXPORT_TEXT }, { "db", CFG_EXPORT_DB }, { NULL, 0 } };
static const struct cfg_name host_names[] = {
	{ "cpu", CFG_HOST_CPU }, { "mem", CFG_HOST_MEM }, { "disk", CFG_HOST_DISK },
	{ "network", CFG_HOST_NETWORK }, { NULL, 0 } };
static const struct cfg_name level_names[] = {
	{ "Level_none", CFG_LEVEL_NONE }, { "Level0", CFG_LEVEL_0 },
	{ "Level1", CFG_LEVEL_1 }, { "Level2", CFG_LEVEL_2 }, { NULL, 0 } };
/* Canonical names first: the JSON dump writes the first name of a value.
 * "true"/"false" keep configs written when `archive` was a boolean. */
static const struct cfg_name archive_names[] = {
	{ "none", CFG_ARCHIVE_NONE }, { "tar.gz", CFG_ARCHIVE_TAR_GZ },
	{ "tar.zst", CFG_ARCHIVE_TAR_ZST }, { "zip", CFG_ARCHIVE_ZIP },
	{ "tgz", CFG_ARCHIVE_TAR_GZ }, { "true", CFG_ARCHIVE_TAR_GZ },
	{ "false", CFG_ARCHIVE_NONE }, { NULL, 0 } };

#define OFF(f) offsetof(struct prof_config, f)
#define MB_MAX (1u << 20) /* 1 TiB */

static const struct cfg_key cfg_keys[] = {
	{ "output_path", T_STRING, OFF(output_path), 0, 0, NULL, "string",
	  "directory that receives the run directory (default ./prof_data)", false },
	{ "activities", T_SET, OFF(activities), 0, 0, activity_names, "list: CPU, DEVICE",
	  "what to record: host/framework activity, device activity (default both; [] for steps only)", false },
	{ "schedule", T_OBJECT, 0, 0, 0, NULL, "object",
	  "record only some steps: skip_first, wait, warmup, active, repeat", false },
	{ "schedule.skip_first", T_UINT, OFF(schedule.skip_first), 0, UINT32_MAX, NULL, "integer >= 0",
	  "steps to skip before the first cycle", false },
	{ "schedule.wait", T_UINT, OFF(schedule.wait), 0, UINT32_MAX, NULL, "integer >= 0",
	  "steps to wait at the start of each cycle", false },
	{ "schedule.warmup", T_UINT, OFF(schedule.warmup), 0, UINT32_MAX, NULL, "integer >= 0",
	  "steps to warm up before recording in each cycle", false },
	{ "schedule.active", T_UINT, OFF(schedule.active), 1, UINT32_MAX, NULL, "integer >= 1",
	  "steps recorded in each cycle", false },
	{ "schedule.repeat", T_UINT, OFF(schedule.repeat), 0, UINT32_MAX, NULL, "integer >= 0",
	  "cycles to run, 0 for as long as the program runs", false },
	{ "record_shapes", T_BOOL, OFF(record_shapes), 0, 0, NULL, "boolean",
	  "record operator input shapes and types", false },
	{ "profile_memory", T_BOOL, OFF(profile_memory), 0, 0, NULL, "boolean",
	  "record the framework allocator's allocations and frees (torch's), with their operator",
	  false },
	{ "with_stack", T_BOOL, OFF(with_stack), 0, 0, NULL, "boolean",
	  "record the Python call stack of operators", false },
	{ "with_modules", T_BOOL, OFF(with_modules), 0, 0, NULL, "boolean",
	  "record nn.Module forward calls as nested ranges (\"nn.Module: Linear_0\")", false },
	{ "with_flops", T_BOOL, OFF(with_flops), 0, 0, NULL, "boolean",
	  "count operators' floating-point operations (torch's count; records shapes too)",
	  false },
	{ "analyse", T_BOOL, OFF(analyse), 0, 0, NULL, "boolean",
	  "parse right after the program exits (default true; --no-parse sets false)", false },
	{ "export_type", T_SET, OFF(export_type), 0, 0, export_names, "list: text, db",
	  "output formats: CSV/JSON files, PROFILER_OUTPUT/profiler.db (default text)", false },
	{ "profiler_level", T_ENUM, OFF(profiler_level), 0, 0, level_names,
	  "Level_none, Level0, Level1, Level2",
	  "device detail: Level_none records no device activity (default Level0)", false },
	{ "msprof_tx", T_BOOL, OFF(msprof_tx), 0, 0, NULL, "boolean",
	  "record prof_tx and NVTX marks and ranges (default true)", false },
	{ "data_simplification", T_BOOL, OFF(data_simplification), 0, 0, NULL, "boolean",
	  "delete raw/ after a parse that read everything (default false)", false },
	{ "timeline_limit", T_UINT, OFF(timeline_limit_mb), 0, MB_MAX, NULL, "integer MB, 0 = none",
	  "largest trace_view.json to write: whole steps from the start", false },
	{ "step_list", T_STRING, OFF(step_list), 0, 0, NULL, "list of step numbers, e.g. \"3,4,5\"",
	  "parse only these steps (default every step)", false },
	{ "pretty", T_BOOL, OFF(pretty), 0, 0, NULL, "boolean",
	  "write trace_view.json indented", false },
	{ "report", T_BOOL, OFF(report), 0, 0, NULL, "boolean",
	  "write PROFILER_OUTPUT/report.html after the parse (default true)", false },
	{ "gzip", T_BOOL, OFF(gzip), 0, 0, NULL, "boolean",
	  "write trace_view.json.gz instead of trace_view.json", false },
	{ "storage_limit", T_UINT, OFF(storage_limit_mb), 0, MB_MAX, NULL, "integer MB, 0 = none",
	  "raw data the whole tree may record; past it streams stop recording and count losses", false },
	{ "host_sys", T_SET, OFF(host_sys), 0, 0, host_names, "list: cpu, mem, disk, network",
	  "host data to sample (default cpu, mem)", false },
	{ "is_rank", T_BOOL, OFF(is_rank), 0, 0, NULL, "boolean",
	  "record only the processes whose rank (RANK, ...) is in rank_list", false },
	{ "rank_list", T_STRING, OFF(rank_list), 0, 0, NULL, "list of ranks, e.g. [0, 3]",
	  "the ranks that record under is_rank (0 to 8191)", false },
	{ "archive", T_ENUM, OFF(archive), 0, 0, archive_names, "none, tar.gz, tar.zst, zip",
	  "pack the run directory into RUN_DIR.<format> after the parse (default none)", false },
	{ "delay", T_SECONDS, OFF(delay_s), 0, 1000000, NULL, "seconds >= 0",
	  "start recording this long after the program starts", false },
	{ "duration", T_SECONDS, OFF(duration_s), 0, 1000000, NULL, "seconds >= 0, 0 = no limit",
	  "stop recording this long after recording starts; the program runs on", false },
	{ "sampling_interval", T_UINT, OFF(sampling_interval_ms), 0, 60000, NULL,
	  "integer ms, 0..60000, 0 = off", "host sampling period (default 20)", false },
	{ "start_paused", T_BOOL, OFF(start_paused), 0, 0, NULL, "boolean",
	  "record nothing until the program calls prof_start()", false },
	{ "cycle_results", T_BOOL, OFF(cycle_results), 0, 0, NULL, "boolean",
	  "with a schedule: each cycle's steps parsed into RUN_DIR/cycles/ while the job runs", false },
	{ "gc_detect", T_BOOL, OFF(gc_detect), 0, 0, NULL, "boolean",
	  "record Python garbage collections as ranges on their thread (default false)", false },
	{ "mstx_domain_include", T_NAMES, OFF(mstx_domain_include), 0, 0, NULL, "list of strings",
	  "record only these domains' prof_tx and NVTX ranges and marks (\"default\": no domain)",
	  false },
	{ "mstx_domain_exclude", T_NAMES, OFF(mstx_domain_exclude), 0, 0, NULL, "list of strings",
	  "drop these domains' prof_tx and NVTX ranges and marks (not with the include list)",
	  false },
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL, false },
};
_Static_assert(sizeof cfg_keys / sizeof cfg_keys[0] <= 64, "set_keys holds 64 keys");

void cfg_defaults(struct prof_config *c)
{
	memset(c, 0, sizeof *c);
	c->output_path = strdup("./prof_data");
	c->activities = CFG_ACT_CPU | CFG_ACT_DEVICE;
	c->analyse = true;
	c->export_type = CFG_EXPORT_TEXT;
	c->profiler_level = CFG_LEVEL_0;
	c->msprof_tx = true;
	c->report = true;
	c->host_sys = CFG_HOST_CPU | CFG_HOST_MEM;
	c->sampling_interval_ms = 20;
}

void cfg_free(struct prof_config *c)
{
	free(c->output_path);
	c->output_path = NULL;
	free(c->step_list);
	c->step_list = NULL;
	free(c->mstx_domain_include);
	c->mstx_domain_include = NULL;
	free(c->mstx_domain_exclude);
	c->mstx_domain_exclude = NULL;
	free(c->rank_list);
	c->rank_list = NULL;
	cfg_notes_free(c);
}

uint32_t cfg_activities(const struct prof_config *c)
{
	return c->profiler_level == CFG_LEVEL_NONE ? c->activities & ~(uint32_t)CFG_ACT_DEVICE
						   : c->activities;
}

static const struct cfg_key *cfg_find(const char *key)
{
	for (const struct cfg_key *k = cfg_keys; k->key; k++)
		if (strcmp(k->key, key) == 0)
			return k;
	return NULL;
}

/* Sub-keys count as their object: "schedule.wait" sets "schedule". */
static void note_set(struct prof_config *c, const struct cfg_key *k)
{
	const struct cfg_key *top = strncmp(k->key, "schedule.", 9) == 0 ? cfg_find("schedule") : k;
	c->set_keys |= 1ull << (top - cfg_keys);
}

/* Why the value of `k` just set cannot act as asked, or NULL: a key a
 * later release acts on, when its value asks for something (true, a
 * list), or a profiler_level above what exists here. */
static const char *key_why(const struct prof_config *c, const struct cfg_key *k)
{
	const void *field = (const char *)c + k->off;
	if (k->off == OFF(profiler_level))
		return c->profiler_level > CFG_LEVEL_0 ?
			"Level1 and Level2 add Ascend detail (AscendCL, AI Core metrics, AI CPU); "
			"here they record what Level0 does: kernels, copies, memory, API calls, "
			"collectives" : NULL;
	if (k->off == OFF(with_flops))
		return c->with_flops ? "records operators' input shapes too: FLOPs are counted "
				       "from them (as torch counts them)" : NULL;
	if (!k->pending || (k->type == T_BOOL && !*(const bool *)field))
		return NULL;
	return "checked and recorded, but not acted on in this release";
}

/* After `k` was set: its note, as the source spelled the key. */
static void key_note(struct prof_config *c, const struct cfg_key *k, const char *shown,
		     const char *source)
{
	cfg_note(c, shown, k->key, source, key_why(c, k));
}

int cfg_fail(struct cfg_error *err, const char *source, const char *key, const char *fmt, ...)
{
	char what[CFG_ERR_MAX / 2];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	snprintf(err->msg, sizeof err->msg, "%s%skey \"%s\": %s", source, *source ? ": " : "",
		 key, what);
	return -1;
}

/* An error about prof's key `target` names the key the source wrote. */
static int rename_key(struct cfg_error *err, const char *source, const char *target,
		      const char *shown)
{
	char was[CFG_ERR_MAX];
	int n = snprintf(was, sizeof was, "%s%skey \"%s\": ", source, *source ? ": " : "", target);
	if (strcmp(target, shown) == 0 || n < 0 || strncmp(err->msg, was, (size_t)n) != 0)
		return -1;
	snprintf(was, sizeof was, "%s", err->msg + n);
	return cfg_fail(err, source, shown, "%s", was);
}

static int name_lookup(const struct cfg_name *names, const char *s, size_t n, uint32_t *out)
{
	for (const struct cfg_name *nm = names; nm->name; nm++)
		if (strlen(nm->name) == n && strncasecmp(nm->name, s, n) == 0) {
			*out = nm->value;
			return 0;
		}
	return -1;
}

static void names_list(const struct cfg_name *names, char *buf, size_t len)
{
	buf[0] = '\0';
	for (const struct cfg_name *nm = names; nm->name; nm++) {
		if (buf[0])
			strncat(buf, ", ", len - strlen(buf) - 1);
		strncat(buf, nm->name, len - strlen(buf) - 1);
	}
}

/* Adds the comma-separated names in `s` to *set. */
static int set_add_text(const struct cfg_key *k, const char *s, uint32_t *set,
			const char *source, struct cfg_error *err)
{
	while (*s) {
		size_t n = strcspn(s, ",");
		while (n && (*s == ' ')) { s++; n--; }
		size_t m = n;
		while (m && s[m - 1] == ' ')
			m--;
		uint32_t v;
		if (m == 0 || name_lookup(k->names, s, m, &v) != 0) {
			char allowed[120], got[200];
			names_list(k->names, allowed, sizeof allowed);
			snprintf(got, sizeof got, "unknown value \"%.*s\"; allowed: %s",
				 (int)(m > 40 ? 40 : m), s, allowed);
			return cfg_fail(err, source, k->key, "%s", got);
		}
		*set |= v;
		s += n;
		if (*s == ',')
			s++;
	}
	return 0;
}

static int parse_uint_text(const struct cfg_key *k, const char *s, uint32_t *out,
			   const char *source, struct cfg_error *err)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (!*s || *end || errno || s[0] == '-' || v > UINT32_MAX)
		return cfg_fail(err, source, k->key, "expected %s", k->type_doc);
	if (v < k->min || v > k->max)
		return cfg_fail(err, source, k->key, "value out of range (%s)", k->type_doc);
	*out = (uint32_t)v;
	return 0;
}

static int check_seconds(const struct cfg_key *k, double v, const char *source,
			 struct cfg_error *err)
{
	if (!isfinite(v) || v < 0 || v > k->max)
		return cfg_fail(err, source, k->key, "value out of range (%s)", k->type_doc);
	return 0;
}

static int parse_bool_text(const char *s, bool *out)
{
	static const char *yes[] = { "true", "1", "on", "yes" }, *no[] = { "false", "0", "off", "no" };
	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0) { *out = true; return 0; }
		if (strcasecmp(s, no[i]) == 0) { *out = false; return 0; }
	}
	return -1;
}

/* One name of a T_NAMES list, spaces around it dropped, appended to buf
 * (comma-separated) at *len. 0 or -1 with err filled. */
static int names_add(const struct cfg_key *k, const char *s, size_t n, char *buf, size_t *len,
		     uint32_t *count, const char *source, struct cfg_error *err)
{
	while (n && *s == ' ') { s++; n--; }
	while (n && s[n - 1] == ' ')
		n--;
	if (!n || memchr(s, ',', n))
		return cfg_fail(err, source, k->key, "%s", "a name must be neither empty nor hold a comma");
	if (++*count > DOMAIN_FILTER_MAX || *len + n + 1 >= DOMAIN_FILTER_TEXT)
		return cfg_fail(err, source, k->key, "more than %d names or %d bytes",
				DOMAIN_FILTER_MAX, DOMAIN_FILTER_TEXT - 1);
	if (*len)
		buf[(*len)++] = ',';
	memcpy(buf + *len, s, n);
	*len += n;
	buf[*len] = '\0';
	return 0;
}

/* A T_NAMES key from its text, names separated by commas ("" for none):
 * kept comma-joined, as the agent takes it (common/domain_filter.h). */
static int names_set(struct prof_config *c, const struct cfg_key *k, const char *text,
		     const char *source, struct cfg_error *err)
{
	char buf[DOMAIN_FILTER_TEXT] = "";
	size_t len = 0;
	uint32_t count = 0;
	for (const char *s = text; *s; ) {
		size_t n = strcspn(s, ",");
		if (names_add(k, s, n, buf, &len, &count, source, err))
			return -1;
		s += n + (s[n] == ',');
	}
	char **field = (char **)((char *)c + k->off);
	free(*field);
	*field = len ? strdup(buf) : NULL;
	return 0;
}

static void mark_schedule(struct prof_config *c, const struct cfg_key *k)
{
	if (strncmp(k->key, "schedule.", 9) == 0)
		c->schedule.set = true;
}

static bool is_numlist(const struct cfg_key *k)
{
	return k->off == OFF(step_list) || k->off == OFF(rank_list);
}

/* step_list and rank_list as text: "3,4,5" or "3-5"; rank_list may be
 * empty (no rank records) and holds ranks below CFG_RANKS. */
static int check_numlist(const struct cfg_key *k, const char *value, const char *source,
			 struct cfg_error *err)
{
	uint64_t *v;
	size_t n;
	char why[160];
	bool ranks = k->off == OFF(rank_list);
	if (ranks && !*value)
		return 0;
	if (cfg_parse_step_list(value, &v, &n, why, sizeof why))
		return cfg_fail(err, source, k->key, "%s", why);
	uint64_t last = v[n - 1];
	free(v);
	if (ranks && last >= CFG_RANKS)
		return cfg_fail(err, source, k->key, "ranks are from 0 to %u, not %llu",
				CFG_RANKS - 1, (unsigned long long)last);
	return 0;
}

static int set_string(const struct cfg_key *k, void *field, const char *value,
		      const char *source, struct cfg_error *err)
{
	if (is_numlist(k) ? check_numlist(k, value, source, err) != 0 : !*value)
		return is_numlist(k) ? -1 : cfg_fail(err, source, k->key, "%s", "must not be empty");
	free(*(char **)field);
	*(char **)field = strdup(value);
	return 0;
}

static int set_text(struct prof_config *c, const struct cfg_key *k, const char *value,
		    const char *source, struct cfg_error *err)
{
	void *field = (char *)c + k->off;
	mark_schedule(c, k);
	note_set(c, k);
	switch (k->type) {
	case T_STRING:
		return set_string(k, field, value, source, err);
	case T_BOOL:
		if (parse_bool_text(value, field) != 0)
			return cfg_fail(err, source, k->key, "expected true or false, got \"%.40s\"", value);
		return 0;
	case T_UINT:
		return parse_uint_text(k, value, field, source, err);
	case T_SECONDS: {
		char *end;
		double v = strtod(value, &end);
		if (!*value || *end)
			return cfg_fail(err, source, k->key, "expected %s", k->type_doc);
		if (check_seconds(k, v, source, err))
			return -1;
		*(double *)field = v;
		return 0;
	}
	case T_SET: {
		uint32_t set = 0;
		if (set_add_text(k, value, &set, source, err))
			return -1;
		*(uint32_t *)field = set;
		return 0;
	}
	case T_ENUM: {
		uint32_t v;
		if (name_lookup(k->names, value, strlen(value), &v) != 0)
			return cfg_fail(err, source, k->key, "expected one of %s", k->type_doc);
		if (k->names == archive_names)
			*(enum cfg_archive *)field = (enum cfg_archive)v;
		else
			*(enum cfg_level *)field = (enum cfg_level)v;
		return 0;
	}
	case T_NAMES:
		return names_set(c, k, value, source, err);
	case T_OBJECT:
		break;
	}
	return -1;
}

int cfg_set_as(struct prof_config *c, const char *target, const char *value, const char *shown,
	       const char *source, struct cfg_error *err)
{
	const struct cfg_key *k = cfg_find(target);
	if (!k || k->type == T_OBJECT)
		return cfg_fail(err, source, shown, "%s", "unknown key (prof run --help lists the keys)");
	if (set_text(c, k, value, source, err))
		return rename_key(err, source, k->key, shown);
	key_note(c, k, shown, source);
	return 0;
}

int cfg_set(struct prof_config *c, const char *key, const char *value,
	    const char *source, struct cfg_error *err)
{
	return cfg_set_as(c, key, value, key, source, err);
}

const char *cfg_json_type(const cJSON *v)
{
	if (cJSON_IsBool(v)) return "a boolean";
	if (cJSON_IsNumber(v)) return "a number";
	if (cJSON_IsString(v)) return "a string";
	if (cJSON_IsArray(v)) return "an array";
	if (cJSON_IsObject(v)) return "an object";
	return "null";
}

static int wrong_type(const struct cfg_key *k, const cJSON *v, const char *source,
		      struct cfg_error *err)
{
	char what[160];
	snprintf(what, sizeof what, "expected %s, got %s", k->type_doc, cfg_json_type(v));
	return cfg_fail(err, source, k->key, "%s", what);
}

static int apply_set_json(struct prof_config *c, const struct cfg_key *k, const cJSON *v,
			  const char *source, struct cfg_error *err)
{
	uint32_t set = 0;
	if (cJSON_IsString(v))
		return set_text(c, k, v->valuestring, source, err);
	if (!cJSON_IsArray(v))
		return wrong_type(k, v, source, err);
	const cJSON *e;
	cJSON_ArrayForEach(e, v) {
		if (!cJSON_IsString(e))
			return wrong_type(k, e, source, err);
		if (set_add_text(k, e->valuestring, &set, source, err))
			return -1;
	}
	*(uint32_t *)((char *)c + k->off) = set;
	return 0;
}

static int apply_object(struct prof_config *c, const cJSON *obj, const char *prefix,
			const char *source, struct cfg_error *err);

/* step_list or rank_list as a JSON number or array of numbers: [3, 4, 5];
 * null: none (what cfg_to_json writes back for it). */
static int numlist_json(struct prof_config *c, const struct cfg_key *k, const cJSON *v,
			const char *source, struct cfg_error *err)
{
	char buf[4096] = "";
	size_t len = 0;
	if (cJSON_IsNull(v)) {
		free(*(char **)((char *)c + k->off));
		*(char **)((char *)c + k->off) = NULL;
		return 0;
	}
	const cJSON *e = v;
	int one = cJSON_IsNumber(v);
	if (!one)
		e = v->child;
	for (; e; e = one ? NULL : e->next) {
		if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble > 1e15 ||
		    e->valuedouble != floor(e->valuedouble))
			return wrong_type(k, e, source, err);
		int w = snprintf(buf + len, sizeof buf - len, "%s%.0f", len ? "," : "", e->valuedouble);
		if (w < 0 || (size_t)w >= sizeof buf - len)
			return cfg_fail(err, source, k->key, "%s", "too many numbers");
		len += (size_t)w;
	}
	if (!len && k->off == OFF(step_list))
		return cfg_fail(err, source, k->key, "%s", "an empty list names no step");
	return set_text(c, k, buf, source, err);
}

static int apply_uint_json(struct prof_config *c, const struct cfg_key *k, const cJSON *v,
			   const char *source, struct cfg_error *err)
{
	char num[64];
	if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble))
		return wrong_type(k, v, source, err);
	if (v->valuedouble < 0 || v->valuedouble > UINT32_MAX)
		return cfg_fail(err, source, k->key, "value out of range (%s)", k->type_doc);
	snprintf(num, sizeof num, "%.0f", v->valuedouble);
	return set_text(c, k, num, source, err);
}

/* A T_NAMES key from a JSON array of strings. */
static int names_json(struct prof_config *c, const struct cfg_key *k, const cJSON *v,
		      const char *source, struct cfg_error *err)
{
	char buf[DOMAIN_FILTER_TEXT] = "";
	size_t len = 0;
	uint32_t count = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, v) {
		if (!cJSON_IsString(e))
			return wrong_type(k, e, source, err);
		if (names_add(k, e->valuestring, strlen(e->valuestring), buf, &len, &count, source,
			      err))
			return -1;
	}
	return names_set(c, k, buf, source, err);
}

static int apply_value(struct prof_config *c, const struct cfg_key *k, const cJSON *v,
		       const char *source, struct cfg_error *err)
{
	note_set(c, k);
	switch (k->type) {
	case T_ENUM:
		if (cJSON_IsBool(v) && k->names == archive_names)   /* the old boolean */
			return set_text(c, k, cJSON_IsTrue(v) ? "true" : "false", source, err);
		/* fall through */
	case T_STRING:
		if (is_numlist(k) && (cJSON_IsArray(v) || cJSON_IsNumber(v) || cJSON_IsNull(v)))
			return numlist_json(c, k, v, source, err);
		if (!cJSON_IsString(v))
			return wrong_type(k, v, source, err);
		return set_text(c, k, v->valuestring, source, err);
	case T_BOOL:
		if (!cJSON_IsBool(v))
			return wrong_type(k, v, source, err);
		*(bool *)((char *)c + k->off) = cJSON_IsTrue(v);
		return 0;
	case T_UINT:
		return apply_uint_json(c, k, v, source, err);
	case T_SECONDS:
		if (!cJSON_IsNumber(v))
			return wrong_type(k, v, source, err);
		if (check_seconds(k, v->valuedouble, source, err))
			return -1;
		*(double *)((char *)c + k->off) = v->valuedouble;
		return 0;
	case T_SET:
		return apply_set_json(c, k, v, source, err);
	case T_NAMES:
		if (cJSON_IsNull(v))
			return names_set(c, k, "", source, err);
		if (cJSON_IsString(v))
			return names_set(c, k, v->valuestring, source, err);
		if (!cJSON_IsArray(v))
			return wrong_type(k, v, source, err);
		return names_json(c, k, v, source, err);
	case T_OBJECT:
		if (cJSON_IsNull(v))
			return 0;
		if (!cJSON_IsObject(v))
			return wrong_type(k, v, source, err);
		if (strcmp(k->key, "schedule") == 0)
			c->schedule.set = true;
		return apply_object(c, v, k->key, source, err);
	}
	return -1;
}

int cfg_apply_as(struct prof_config *c, const char *target, const cJSON *v, const char *shown,
		 const char *source, struct cfg_error *err)
{
	const struct cfg_key *k = cfg_find(target);
	if (!k)
		return cfg_fail(err, source, shown, "%s", "unknown key (prof run --help lists the keys)");
	if (apply_value(c, k, v, source, err))
		return rename_key(err, source, k->key, shown);
	key_note(c, k, shown, source);
	return 0;
}

static int apply_object(struct prof_config *c, const cJSON *obj, const char *prefix,
			const char *source, struct cfg_error *err)
{
	const cJSON *v;
	cJSON_ArrayForEach(v, obj) {
		char key[128];
		if (prefix)
			snprintf(key, sizeof key, "%s.%s", prefix, v->string);
		else
			snprintf(key, sizeof key, "%s", v->string);
		if (cfg_apply_as(c, key, v, key, source, err))
			return -1;
	}
	return 0;
}

/* A member of a prof JSON source: prof's key, or torch_npu's. */
static int prof_member(struct prof_config *c, const cJSON *v, const char *source,
		       struct cfg_error *err)
{
	int rc = cfg_torch_member(c, v, source, err);
	if (rc <= 0)
		return rc;
	return cfg_find(v->string) ? cfg_apply_as(c, v->string, v, v->string, source, err) : 1;
}

static int check_schedule(const struct prof_config *c, const char *source, struct cfg_error *err)
{
	if (c->schedule.set && c->schedule.active == 0)
		return cfg_fail(err, source, "schedule.active", "%s",
				"must be >= 1 when a schedule is given");
	return 0;
}

/* Ascend's msprof refuses both lists at once: a domain kept by one and
 * dropped by the other would mean nothing. */
static int check_domains(const struct prof_config *c, const char *source, struct cfg_error *err)
{
	if (!c->mstx_domain_include || !c->mstx_domain_exclude)
		return 0;
	snprintf(err->msg, sizeof err->msg, "%s: keys \"mstx_domain_include\" and "
		 "\"mstx_domain_exclude\" exclude each other: give one of them", source);
	return -1;
}

int cfg_validate(const struct prof_config *c, struct cfg_error *err)
{
	int rc = check_schedule(c, "configuration", err);
	return rc ? rc : check_domains(c, "configuration", err);
}

int cfg_apply_members(struct prof_config *c, const char *text, const char *source,
		      cfg_member_fn each, struct cfg_error *err)
{
	cJSON *root = cJSON_Parse(text);
	if (!root) {
		const char *at = cJSON_GetErrorPtr();
		size_t off = at && at >= text ? (size_t)(at - text) : 0;
		snprintf(err->msg, sizeof err->msg,
			 "%s: invalid JSON near byte %zu (expected an object like {\"delay\": 2})",
			 source, off);
		return -1;
	}
	int rc = 0;
	if (!cJSON_IsObject(root)) {
		snprintf(err->msg, sizeof err->msg, "%s: expected a JSON object, got %s",
			 source, cfg_json_type(root));
		rc = -1;
	}
	const cJSON *v;
	for (v = rc ? NULL : root->child; v && !rc; v = v->next)
		if ((rc = each(c, v, source, err)) > 0)
			rc = cfg_fail(err, source, v->string, "%s",
				      "unknown key (prof run --help lists the keys)");
	cJSON_Delete(root);
	return rc;
}

int cfg_apply_json(struct prof_config *c, const char *text, const char *source,
		   struct cfg_error *err)
{
	if (cfg_apply_members(c, text, source, prof_member, err))
		return -1;
	int rc = check_schedule(c, source, err);
	return rc ? rc : check_domains(c, source, err);
}

int cfg_apply_file(struct prof_config *c, const char *path, struct cfg_error *err)
{
	char *text;
	int rc = fs_read_file(path, &text, NULL);
	if (rc) {
		snprintf(err->msg, sizeof err->msg, "%s: cannot read config file: %s", path, strerror(-rc));
		return -1;
	}
	rc = cfg_apply_json(c, text, path, err);
	free(text);
	return rc;
}

int cfg_json_bool(const cJSON *v, const char *key, const char *source, bool *out,
		  struct cfg_error *err)
{
	if (!cJSON_IsBool(v))
		return cfg_fail(err, source, key, "expected boolean, got %s", cfg_json_type(v));
	*out = cJSON_IsTrue(v);
	return 0;
}

int cfg_json_int(const cJSON *v, const char *key, long min, long max, const char *source,
		 long *out, struct cfg_error *err)
{
	if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble))
		return cfg_fail(err, source, key, "expected an integer from %ld to %ld, got %s",
				min, max, cJSON_IsNumber(v) ? "a fraction" : cfg_json_type(v));
	if (v->valuedouble < (double)min || v->valuedouble > (double)max)
		return cfg_fail(err, source, key, "value out of range (an integer from %ld to %ld)",
				min, max);
	*out = (long)v->valuedouble;
	return 0;
}

static cJSON *set_to_json(const struct cfg_name *names, uint32_t set)
{
	cJSON *a = cJSON_CreateArray();
	for (const struct cfg_name *nm = names; nm->name; nm++)
		if (set & nm->value) {
			cJSON_AddItemToArray(a, cJSON_CreateString(nm->name));
			set &= ~nm->value; /* aliases share a value: list it once */
		}
	return a;
}

static cJSON *names_to_json(const char *joined)
{
	cJSON *a = cJSON_CreateArray();
	for (const char *s = joined; s && *s; ) {
		size_t n = strcspn(s, ",");
		char name[DOMAIN_FILTER_TEXT];
		snprintf(name, sizeof name, "%.*s", (int)n, s);
		cJSON_AddItemToArray(a, cJSON_CreateString(name));
		s += n + (s[n] == ',');
	}
	return a;
}

static const char *enum_name(const struct cfg_key *k, const void *field)
{
	uint32_t v = k->names == archive_names ? (uint32_t)*(const enum cfg_archive *)field
					      : (uint32_t)*(const enum cfg_level *)field;
	for (const struct cfg_name *nm = k->names; nm->name; nm++)
		if (nm->value == v)
			return nm->name;
	return "?";
}

static void key_to_json(cJSON *obj, const struct cfg_key *k, const struct prof_config *c)
{
	const void *field = (const char *)c + k->off;
	const char *name = strchr(k->key, '.') ? strchr(k->key, '.') + 1 : k->key;
	switch (k->type) {
	case T_STRING:
		if (*(char *const *)field)
			cJSON_AddStringToObject(obj, name, *(char *const *)field);
		else
			cJSON_AddNullToObject(obj, name);
		break;
	case T_BOOL: cJSON_AddBoolToObject(obj, name, *(const bool *)field); break;
	case T_UINT: cJSON_AddNumberToObject(obj, name, *(const uint32_t *)field); break;
	case T_SECONDS: cJSON_AddNumberToObject(obj, name, *(const double *)field); break;
	case T_SET: cJSON_AddItemToObject(obj, name, set_to_json(k->names, *(const uint32_t *)field)); break;
	case T_ENUM: cJSON_AddStringToObject(obj, name, enum_name(k, field)); break;
	case T_NAMES: cJSON_AddItemToObject(obj, name, names_to_json(*(char *const *)field)); break;
	case T_OBJECT: break;
	}
}

char *cfg_to_json(const struct prof_config *c)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *sched = c->schedule.set ? cJSON_CreateObject() : cJSON_CreateNull();
	for (const struct cfg_key *k = cfg_keys; k->key; k++) {
		if (k->type == T_OBJECT)
			cJSON_AddItemToObject(root, k->key, sched);
		else if (strncmp(k->key, "schedule.", 9) == 0) {
			if (c->schedule.set)
				key_to_json(sched, k, c);
		} else
			key_to_json(root, k, c);
	}
	char *s = cJSON_Print(root);
	cJSON_Delete(root);
	return s;
}

const struct cfg_key_doc *cfg_key_docs(void)
{
	static struct cfg_key_doc docs[sizeof cfg_keys / sizeof cfg_keys[0]];
	if (!docs[0].key)
		for (size_t i = 0; cfg_keys[i].key; i++)
			docs[i] = (struct cfg_key_doc){ cfg_keys[i].key, cfg_keys[i].type_doc, cfg_keys[i].help };
	return docs;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

#define STEP_LIST_MAX 1000000

/* One "N" or "N-M" at *pp, which it moves past: 0, or -1 when there is none. */
static int parse_step_range(const char **pp, unsigned long long *a, unsigned long long *b)
{
	const char *p = *pp;
	char *end;
	if (*p < '0' || *p > '9')
		return -1;
	errno = 0;
	*a = *b = strtoull(p, &end, 10);
	if (errno)
		return -1;
	p = end;
	if (*p == '-') {
		if (p[1] < '0' || p[1] > '9')
			return -1;
		*b = strtoull(p + 1, &end, 10);
		if (errno || *b < *a)
			return -1;
		p = end;
	}
	*pp = p;
	return 0;
}

struct step_vec {
	uint64_t *v;
	size_t n, cap;
};

/* Appends a..b, bounded first so that one range cannot ask for more
 * memory than STEP_LIST_MAX steps take. */
static int push_step_range(struct step_vec *sv, unsigned long long a, unsigned long long b,
			   char *why, size_t len)
{
	if (b - a >= STEP_LIST_MAX || sv->n + (b - a) >= STEP_LIST_MAX) {
		snprintf(why, len, "more than %d steps", STEP_LIST_MAX);
		return -1;
	}
	for (unsigned long long x = a; ; x++) {
		if (sv->n == sv->cap) {
			sv->cap = sv->cap ? sv->cap * 2 : 16;
			uint64_t *nw = realloc(sv->v, sv->cap * sizeof *sv->v);
			if (!nw) {
				snprintf(why, len, "out of memory");
				return -1;
			}
			sv->v = nw;
		}
		sv->v[sv->n++] = x;
		if (x == b)
			break;
	}
	return 0;
}

int cfg_parse_step_list(const char *s, uint64_t **steps, size_t *n, char *why, size_t len)
{
	struct step_vec sv = { 0 };
	const char *p = s;
	*steps = NULL;
	*n = 0;
	while (*p) {
		unsigned long long a, b;
		while (*p == ' ')
			p++;
		if (parse_step_range(&p, &a, &b) != 0)
			goto bad;
		if (push_step_range(&sv, a, b, why, len) != 0) {
			free(sv.v);
			return -1;
		}
		while (*p == ' ')
			p++;
		if (*p == ',' && p[1])   /* "3," and "3, " name nothing after the comma */
			p++;
		else if (*p)
			goto bad;
	}
	if (!sv.n) {
		snprintf(why, len, "an empty list names no step");
		return -1;
	}
	qsort(sv.v, sv.n, sizeof *sv.v, cmp_u64);
	size_t m = 1;
	for (size_t i = 1; i < sv.n; i++)
		if (sv.v[i] != sv.v[m - 1])
			sv.v[m++] = sv.v[i];
	*steps = sv.v;
	*n = m;
	return 0;
bad:
	snprintf(why, len, "expected step numbers like \"3,4,5\" or \"3-5\", got \"%.40s\"", s);
	free(sv.v);
	return -1;
}
