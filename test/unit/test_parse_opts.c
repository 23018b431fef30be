/* The parse options' pieces: the step list, the progress decision, the
 * CSV reader and the timeline limit on a small trace. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "config/config.h"
#include "export/export.h"
#include "pipeline/parse.h"

static void test_step_list(void)
{
	uint64_t *v;
	size_t n;
	char why[200];
	CHECK(cfg_parse_step_list("5, 3,4,3", &v, &n, why, sizeof why) == 0);
	CHECK(n == 3 && v[0] == 3 && v[1] == 4 && v[2] == 5);
	free(v);
	CHECK(cfg_parse_step_list("2-4,9", &v, &n, why, sizeof why) == 0);
	CHECK(n == 4 && v[0] == 2 && v[2] == 4 && v[3] == 9);
	free(v);
	CHECK(cfg_parse_step_list("", &v, &n, why, sizeof why) != 0);
	CHECK(cfg_parse_step_list("3,x", &v, &n, why, sizeof why) != 0);
	CHECK(cfg_parse_step_list("3,", &v, &n, why, sizeof why) != 0);
	CHECK(cfg_parse_step_list("3, ", &v, &n, why, sizeof why) != 0);
	CHECK(cfg_parse_step_list("5-3", &v, &n, why, sizeof why) != 0);
	CHECK(cfg_parse_step_list("-1", &v, &n, why, sizeof why) != 0);
	struct prof_config c;
	struct cfg_error e;
	cfg_defaults(&c);
	CHECK(!c.data_simplification && !c.pretty && !c.gzip && c.step_list == NULL);
	CHECK(cfg_apply_json(&c, "{\"step_list\": [4, 2], \"pretty\": true, \"gzip\": true}",
			     "PROF_OPTIONS", &e) == 0);
	CHECK_STR(c.step_list, "4,2");
	CHECK(c.pretty && c.gzip);
	CHECK(cfg_apply_json(&c, "{\"step_list\": \"a\"}", "PROF_OPTIONS", &e) != 0);
	CHECK_CONTAINS(e.msg, "step_list");
	char pending[256];
	cfg_pending_keys(&c, pending, sizeof pending);
	CHECK_STR(pending, "");
	cfg_free(&c);
}

static void test_progress(void)
{
	CHECK(parse_progress_wanted(1, 0, 1.5, 1.0));
	CHECK(!parse_progress_wanted(1, 0, 0.5, 1.0));
	CHECK(!parse_progress_wanted(0, 0, 5, 1.0));
	CHECK(!parse_progress_wanted(1, 1, 5, 1.0));
	CHECK(parse_progress_wanted(1, 0, 0.0, 0.0));
	unsetenv("PROF_PROGRESS_AFTER");
	CHECK(parse_progress_after(PARSE_PROGRESS_BAR) == 1.0);
	CHECK(parse_progress_after(PARSE_PROGRESS_LINES) == PARSE_PROGRESS_LINE_S);
	setenv("PROF_PROGRESS_AFTER", "0", 1);
	CHECK(parse_progress_after(PARSE_PROGRESS_BAR) == 0.0);
	CHECK(parse_progress_after(PARSE_PROGRESS_LINES) == 0.0);
	setenv("PROF_PROGRESS_AFTER", "x", 1);
	CHECK(parse_progress_after(PARSE_PROGRESS_BAR) == 1.0);
	setenv("PROF_PROGRESS_AFTER", "-2", 1);
	CHECK(parse_progress_after(PARSE_PROGRESS_BAR) == 1.0);
	unsetenv("PROF_PROGRESS_AFTER");
	CHECK(parse_progress_mode(1, 0) == PARSE_PROGRESS_BAR);
	CHECK(parse_progress_mode(0, 0) == PARSE_PROGRESS_LINES);
	CHECK(parse_progress_mode(1, 1) == PARSE_PROGRESS_NONE);
}

static void test_csv_read(void)
{
	FILE *f = tmpfile();
	fputs("a,\"b,c\",\"say \"\"hi\"\"\"\r\n1,,x\n", f);
	rewind(f);
	struct export_csv_row r = { 0 };
	CHECK(export_csv_read(f, &r) == 1);
	CHECK(r.n == 3);
	CHECK_STR(r.buf + r.off[1], "b,c");
	CHECK_STR(r.buf + r.off[2], "say \"hi\"");
	CHECK(export_csv_read(f, &r) == 1);
	CHECK(r.n == 3 && !*(r.buf + r.off[1]));
	CHECK(r.rawlen == 5);
	CHECK(export_csv_read(f, &r) == 0);
	export_csv_row_free(&r);
	fclose(f);
}

/* Four steps of 100 us, each with 40 events of ~100 bytes; a limit that
 * holds about two steps keeps steps 1 and 2. */
static void test_limit(void)
{
	char dir[] = "/tmp/prof_unit_optsXXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char path[256];
	snprintf(path, sizeof path, "%s/trace_view.json", dir);
	FILE *f = fopen(path, "w");
	fputs("{\n  \"schemaVersion\": 1,\n  \"traceEvents\": [\n", f);
	fputs("    {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"tid\": 0, \"ts\": 0, "
	      "\"args\": {\"name\": \"x\"}}", f);
	for (int s = 0; s < 4; s++)
		for (int i = 0; i < 40; i++)
			fprintf(f, ",\n    {\"ph\": \"X\", \"name\": \"work-%03d-padding-padding-padding\", "
				"\"pid\": 1, \"tid\": 1, \"ts\": %d.000, \"dur\": 1.000}", i, 100 * s + i);
	fputs("\n  ],\n  \"traceName\": \"trace_view.json\"\n}\n", f);
	fclose(f);
	struct export_span spans[4];
	for (int s = 0; s < 4; s++)
		spans[s] = (struct export_span){ (uint64_t)s + 1, 100.0 * s, 100.0 * s + 99 };
	struct export_trace_result res;
	CHECK(export_trace_filter(dir, spans, 4, NULL, 0, 10000, &res) == 0);
	CHECK(res.truncated);
	CHECK(res.nkept_steps == 2 && res.kept_steps && res.kept_steps[1] == 2);
	CHECK(res.kept == 81 && res.dropped == 80);
	free(res.kept_steps);
	char *text = NULL;
	size_t cap = 0;
	f = fopen(path, "r");
	CHECK(f && getdelim(&text, &cap, '\0', f) > 0);
	fclose(f);
	CHECK_CONTAINS(text, "\"prof_truncated\": {\"limit_bytes\": 10000, \"kept_steps\": [1, 2], "
			     "\"dropped_events\": 80}");
	free(text);
	/* --step-list 3 on what is left: nothing of step 3 remains but metadata */
	uint64_t sel[] = { 2 };
	CHECK(export_trace_filter(dir, spans, 4, sel, 1, 0, &res) == 0);
	CHECK(!res.truncated && res.kept == 41 && res.dropped == 40);
	free(res.kept_steps);
	CHECK(export_trace_format(dir, 1, 1) == 0);
	snprintf(path, sizeof path, "%s/trace_view.json.gz", dir);
	CHECK(access(path, F_OK) == 0);
	CHECK(export_remove_tree(dir) == 0);
	CHECK(access(dir, F_OK) != 0);
}

int main(void)
{
	test_step_list();
	test_progress();
	test_csv_read();
	test_limit();
	return unit_done();
}
