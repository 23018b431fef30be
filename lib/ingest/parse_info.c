#include "ingest/parse_info.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "run/rundir.h"

int parse_json_u64(const cJSON *v, uint64_t *out)
{
	if (cJSON_IsNumber(v)) {
		double d = v->valuedouble;
		if (!(d >= 0) || d >= 18446744073709551616.0)
			return -1;
		*out = (uint64_t)d;
		return 0;
	}
	if (cJSON_IsString(v) && v->valuestring[0] >= '0' && v->valuestring[0] <= '9') {
		char *end;
		errno = 0;
		unsigned long long x = strtoull(v->valuestring, &end, 10);
		if (errno || *end)
			return -1;
		*out = x;
		return 0;
	}
	return -1;
}

static void read_clock(const cJSON *root, struct parse_info *pi)
{
	const cJSON *clock = cJSON_GetObjectItemCaseSensitive(root, "clock");
	uint64_t hz;
	if (!cJSON_IsObject(clock))
		return;
	if (parse_json_u64(cJSON_GetObjectItemCaseSensitive(clock, "tsc_hz"), &hz) == 0)
		pi->tsc_hz = hz;
	const cJSON *start = cJSON_GetObjectItemCaseSensitive(clock, "start");
	if (cJSON_IsObject(start) &&
	    parse_json_u64(cJSON_GetObjectItemCaseSensitive(start, "mono_ns"),
			   &pi->start_mono_ns) == 0 &&
	    parse_json_u64(cJSON_GetObjectItemCaseSensitive(start, "real_ns"),
			   &pi->start_real_ns) == 0)
		pi->have_start = 1;
}

/* cJSON holds numbers as doubles, which round a realtime ns count (about
 * 2^60) by up to 128 ns. The digits are exact in the text: find them after
 * `"start"` and keep them when they agree with the parsed value. */
static void exact_start_real(const char *text, struct parse_info *pi)
{
	const char *p = strstr(text, "\"start\"");
	p = p ? strstr(p, "\"real_ns\"") : NULL;
	if (!p)
		return;
	p += strlen("\"real_ns\"");
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ':' || *p == '"')
		p++;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(p, &end, 10);
	uint64_t d = v > pi->start_real_ns ? v - pi->start_real_ns : pi->start_real_ns - v;
	if (!errno && end != p && d <= 1024)
		pi->start_real_ns = v;
}

static void read_rank(const cJSON *root, struct parse_info *pi)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(root, "rank");
	if (!r)
		r = cJSON_GetObjectItemCaseSensitive(root, "rank_id");
	uint64_t v;
	if (r && parse_json_u64(r, &v) == 0 && v <= INT32_MAX)
		pi->rank = (int64_t)v;
}

/* Who the program was and what killed it, for the parse's words on
 * streams that ended without close. */
static void read_end(const cJSON *root, const cJSON *end, struct parse_info *pi)
{
	uint64_t pid;
	if (parse_json_u64(cJSON_GetObjectItemCaseSensitive(root, "child_pid"), &pid) == 0 &&
	    pid <= INT32_MAX)
		pi->child_pid = (int)pid;
	const char *sig = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(end, "signal_name"));
	if (sig)
		snprintf(pi->end_signal, sizeof pi->end_signal, "%s", sig);
}

void parse_info_say_no_end(FILE *log, const char *what, int live)
{
	if (live == 1)
		fprintf(log, "prof parse: %s: the run is still going (its prof run holds it): this "
			"parse shows what was recorded so far, and prof run parses the run again "
			"when it ends\n", what);
	else
		fprintf(log, "prof parse: %s: no end_info: prof did not finish the run (%s); exit "
			"status and loss totals are unknown, the raw streams are read as they are\n",
			what, live == 0 ? "it was killed, or its machine went down"
					: "it was killed, or the run is still going");
}

int parse_info_read(const char *run_dir, struct parse_info *pi, FILE *log, int end_said)
{
	memset(pi, 0, sizeof *pi);
	pi->rank = -1;
	char *path = fs_join(run_dir, "profiler_info.json");
	char *text = NULL;
	int rc = path ? fs_read_file(path, &text, NULL) : -ENOMEM;
	if (rc) {
		if (rc != -ENOENT)   /* a run without one is said by what lacks it */
			fprintf(log, "prof parse: %s/profiler_info.json: %s; going on without it\n",
				run_dir, strerror(-rc));
		free(path);
		return 0;
	}
	cJSON *root = cJSON_Parse(text);
	if (!cJSON_IsObject(root)) {
		fprintf(log, "prof parse: %s: not a JSON object (cut short by a crash?); "
			"going on without it\n", path);
	} else {
		pi->present = 1;
		read_clock(root, pi);
		if (pi->have_start)
			exact_start_real(text, pi);
		read_rank(root, pi);
		const cJSON *end = cJSON_GetObjectItemCaseSensitive(root, "end_info");
		pi->have_end = cJSON_IsObject(end);
		read_end(root, end, pi);
		pi->live = pi->have_end ? 0 : rundir_live(run_dir);
		if (!pi->have_end && !end_said)
			parse_info_say_no_end(log, pi->live == 1 ? run_dir : path, pi->live);
		cJSON *env = cJSON_GetObjectItemCaseSensitive(root, "env");
		if (cJSON_IsObject(env))
			pi->env = cJSON_Duplicate(env, 1);
	}
	cJSON_Delete(root);
	free(text);
	free(path);
	return 0;
}

void parse_info_free(struct parse_info *pi)
{
	cJSON_Delete(pi->env);
	pi->env = NULL;
}
