#define _GNU_SOURCE
#include "run/info.h"
#include "run/notices.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/fsutil.h"
#include "common/rank.h"
#include "prof_build.h"
#include "run/rundir.h"

const char *const info_env_vars[] = { PROF_ENV_VARS, NULL };

int info_rank(void)
{
	return prof_env_rank();
}

/* uint64 as an exact JSON integer: a double would round wall-clock ns. */
static void info_add_u64(cJSON *o, const char *key, uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof buf, "%" PRIu64, v);
	cJSON_AddRawToObject(o, key, buf);
}

static void info_add_pair(cJSON *o, const char *key, const struct raw_clock_pair *p)
{
	cJSON *j = cJSON_AddObjectToObject(o, key);
	info_add_u64(j, "ticks", p->ticks);
	info_add_u64(j, "mono_ns", p->mono_ns);
	info_add_u64(j, "real_ns", p->real_ns);
}

/* ISO 8601 local time with milliseconds and offset. */
static void info_iso_time(uint64_t real_ns, char *buf, size_t len)
{
	time_t secs = (time_t)(real_ns / 1000000000u);
	struct tm tm;
	localtime_r(&secs, &tm);
	char date[32], zone[8];
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
	strftime(zone, sizeof zone, "%z", &tm);   /* +hhmm; ISO wants +hh:mm */
	snprintf(buf, len, "%s.%03u%.3s:%.2s", date, (unsigned)(real_ns / 1000000u % 1000u),
		 zone, zone + 3);
}

static void info_add_clock(cJSON *root, const struct run_info *ri)
{
	cJSON *c = cJSON_AddObjectToObject(root, "clock");
	cJSON_AddStringToObject(c, "raw_clock", ri->clock == RAW_CLOCK_TSC ? "tsc" : "monotonic");
	cJSON_AddNumberToObject(c, "tsc_hz", ri->tsc_hz);
	info_add_pair(c, "start", &ri->start);
	if (ri->complete)
		info_add_pair(c, "end", &ri->end);
}

static void info_add_env(cJSON *root)
{
	cJSON *e = cJSON_AddObjectToObject(root, "env");
	for (const char *const *v = info_env_vars; *v; v++) {
		const char *val = getenv(*v);
		if (val)
			cJSON_AddStringToObject(e, *v, val);
	}
}

static void info_add_int_or_null(cJSON *o, const char *key, bool have, double v)
{
	if (have)
		cJSON_AddNumberToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

static void info_add_total(cJSON *o, const char *key, bool ok, uint64_t v)
{
	if (ok)
		info_add_u64(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

static void info_add_end(cJSON *root, const struct info_end *e)
{
	cJSON *o = cJSON_AddObjectToObject(root, "end_info");
	info_add_int_or_null(o, "exit_code", e->exit_code >= 0, e->exit_code);
	info_add_int_or_null(o, "signal", e->signal > 0, e->signal);
	if (e->signal > 0 && e->signal_name)
		cJSON_AddStringToObject(o, "signal_name", e->signal_name);
	else
		cJSON_AddNullToObject(o, "signal_name");
	info_add_u64(o, "duration_ns", e->duration_ns);
	info_add_total(o, "streams", e->totals_ok, e->totals.streams);
	info_add_total(o, "records", e->totals_ok, e->totals.records);
	info_add_total(o, "lost", e->totals_ok, e->totals.lost);
	info_add_total(o, "damaged_streams", e->totals_ok, e->totals.damaged_streams);
	info_add_total(o, "disk_full_streams", e->totals_ok, e->totals.no_space_streams);
	info_add_u64(o, "streams_not_created", e->streams_no_space);
	cJSON_AddBoolToObject(o, "storage_limit_reached", e->storage_limit_reached);
	cJSON *ns = cJSON_AddArrayToObject(o, "notices");
	for (size_t i = 0; e->notices && ns && i < e->notices->n; i++) {
		const struct run_notice *n = &e->notices->v[i];
		cJSON *it = cJSON_CreateObject();
		cJSON_AddStringToObject(it, "text", n->text);
		cJSON_AddNumberToObject(it, "pid", n->pid);
		cJSON_AddNumberToObject(it, "processes", n->processes);
		cJSON_AddItemToArray(ns, it);
	}
}

static void info_add_head(cJSON *root, const struct run_info *ri)
{
	cJSON_AddStringToObject(root, "prof_version", PROF_VERSION);
	cJSON *cmd = cJSON_AddArrayToObject(root, "command");
	for (char *const *a = ri->argv; a && *a; a++)
		cJSON_AddItemToArray(cmd, cJSON_CreateString(*a));
	cJSON_AddStringToObject(root, "host", ri->host);
	cJSON_AddNumberToObject(root, "launcher_pid", ri->launcher_pid);
	info_add_int_or_null(root, "child_pid", ri->child_pid > 0, ri->child_pid);
	int rank = info_rank();
	info_add_int_or_null(root, "rank", rank >= 0, rank);
	char *cfg = ri->cfg ? cfg_to_json(ri->cfg) : NULL;
	cJSON *cj = cfg ? cJSON_Parse(cfg) : NULL;
	free(cfg);
	cJSON_AddItemToObject(root, "config", cj ? cj : cJSON_CreateNull());
}

char *info_to_json(const struct run_info *ri)
{
	cJSON *root = cJSON_CreateObject();
	if (!root)
		return NULL;
	info_add_head(root, ri);
	info_add_env(root);
	info_add_clock(root, ri);
	char when[64];
	info_iso_time(ri->start.real_ns, when, sizeof when);
	cJSON_AddStringToObject(root, "start_time", when);
	if (ri->complete)
		info_add_end(root, &ri->end_info);
	char *text = cJSON_Print(root);
	cJSON_Delete(root);
	return text;
}

int info_write(const struct run_info *ri, const char *run_dir)
{
	char *text = info_to_json(ri);
	char *path = fs_join(run_dir, RUNDIR_INFO_FILE);
	int rc = text && path ? 0 : -ENOMEM;
	if (!rc) {
		size_t len = strlen(text);
		text[len] = '\n';   /* replaces the NUL: written by length */
		rc = fs_write_atomic(path, text, len + 1);
	}
	free(text);
	free(path);
	return rc;
}
