/* The configuration model: sources in order, and an error that names the
 * key and the source for every bad input. */
#include <stdlib.h>

#include "common/domain_filter.h"
#include "config/config.h"
#include "unit.h"

static int apply(struct prof_config *c, const char *json, struct cfg_error *e)
{
	return cfg_apply_json(c, json, "PROF_OPTIONS", e);
}

static void test_defaults(void)
{
	struct prof_config c;
	cfg_defaults(&c);
	CHECK_STR(c.output_path, "./prof_data");
	CHECK(c.activities == (CFG_ACT_CPU | CFG_ACT_DEVICE));
	CHECK(c.analyse);
	CHECK(c.sampling_interval_ms == 20);
	CHECK(!c.schedule.set);
	cfg_free(&c);
}

static void test_sources_override(void)
{
	struct prof_config c;
	struct cfg_error e;
	cfg_defaults(&c);
	CHECK(apply(&c, "{\"delay\": 2, \"sampling_interval\": 50, \"activities\": [\"CPU\"]}", &e) == 0);
	CHECK(c.delay_s == 2 && c.sampling_interval_ms == 50 && c.activities == CFG_ACT_CPU);
	CHECK(cfg_set(&c, "delay", "0.5", "--delay", &e) == 0);
	CHECK(c.delay_s == 0.5);
	CHECK(cfg_set(&c, "activities", "cpu, device", "--activities", &e) == 0);
	CHECK(c.activities == (CFG_ACT_CPU | CFG_ACT_DEVICE));
	CHECK(apply(&c, "{\"schedule\": {\"wait\": 1, \"active\": 3, \"repeat\": 2}}", &e) == 0);
	CHECK(c.schedule.set && c.schedule.wait == 1 && c.schedule.active == 3 && c.schedule.repeat == 2);
	CHECK(apply(&c, "{\"profiler_level\": \"Level1\", \"export_type\": \"text,db\"}", &e) == 0);
	CHECK(c.profiler_level == CFG_LEVEL_1 && c.export_type == (CFG_EXPORT_TEXT | CFG_EXPORT_DB));
	cfg_free(&c);
}

static void expect_error(const char *json, const char *needle1, const char *needle2)
{
	struct prof_config c;
	struct cfg_error e = { "" };
	cfg_defaults(&c);
	CHECK(apply(&c, json, &e) == -1);
	CHECK_CONTAINS(e.msg, "PROF_OPTIONS");
	CHECK_CONTAINS(e.msg, needle1);
	if (needle2)
		CHECK_CONTAINS(e.msg, needle2);
	cfg_free(&c);
}

static void test_errors_name_key_and_source(void)
{
	expect_error("{\"delay\": 2", "invalid JSON", NULL);
	expect_error("[1, 2]", "expected a JSON object", NULL);
	expect_error("{\"dleay\": 2}", "\"dleay\"", "unknown key");
	expect_error("{\"delay\": \"soon\"}", "\"delay\"", "got a string");
	expect_error("{\"delay\": -1}", "\"delay\"", "out of range");
	expect_error("{\"record_shapes\": 1}", "\"record_shapes\"", "boolean");
	expect_error("{\"sampling_interval\": 2.5}", "\"sampling_interval\"", "integer");
	expect_error("{\"sampling_interval\": 70000}", "\"sampling_interval\"", "out of range");
	expect_error("{\"activities\": [\"TPU\"]}", "\"activities\"", "unknown value \"TPU\"");
	expect_error("{\"schedule\": {\"wait\": 1}}", "\"schedule.active\"", ">= 1");
	expect_error("{\"schedule\": {\"active\": 0}}", "\"schedule.active\"", "out of range");
	expect_error("{\"schedule\": {\"sleep\": 1}}", "\"schedule.sleep\"", "unknown key");
	expect_error("{\"profiler_level\": \"Level9\"}", "\"profiler_level\"", "Level0");
	expect_error("{\"output_path\": \"\"}", "\"output_path\"", "empty");
}

static void test_flag_errors(void)
{
	struct prof_config c;
	struct cfg_error e;
	cfg_defaults(&c);
	CHECK(cfg_set(&c, "delay", "abc", "--delay", &e) == -1);
	CHECK_CONTAINS(e.msg, "--delay");
	CHECK(cfg_set(&c, "sampling_interval", "-5", "--sampling-interval", &e) == -1);
	CHECK_CONTAINS(e.msg, "--sampling-interval");
	CHECK(cfg_set(&c, "start_paused", "maybe", "--start-paused", &e) == -1);
	cfg_free(&c);
}

/* What cfg_to_json writes, cfg_apply_json reads back unchanged. */
static void test_round_trip(void)
{
	struct prof_config c, d;
	struct cfg_error e;
	cfg_defaults(&c);
	cfg_defaults(&d);
	CHECK(apply(&c, "{\"delay\": 1.5, \"schedule\": {\"wait\": 1, \"active\": 2}}", &e) == 0);
	char *a = cfg_to_json(&c);
	CHECK(apply(&d, a, &e) == 0);
	char *b = cfg_to_json(&d);
	CHECK_STR(a, b);
	free(a);
	free(b);
	cfg_free(&c);
	cfg_free(&d);
}

static void test_file_source(void)
{
	struct prof_config c;
	struct cfg_error e;
	cfg_defaults(&c);
	CHECK(cfg_apply_file(&c, "/nonexistent/prof.json", &e) == -1);
	CHECK_CONTAINS(e.msg, "/nonexistent/prof.json");
	cfg_free(&c);
}

static void test_dump_and_pending(void)
{
	struct prof_config c;
	struct cfg_error e;
	char pending[256];
	cfg_defaults(&c);
	cfg_pending_keys(&c, pending, sizeof pending);
	CHECK_STR(pending, "");
	CHECK(apply(&c, "{\"record_shapes\": true, \"delay\": 1, \"schedule\": {\"active\": 2}}", &e) == 0);
	cfg_pending_keys(&c, pending, sizeof pending);
	CHECK_STR(pending, "");
	CHECK(apply(&c, "{\"profile_memory\": true, \"with_modules\": false}", &e) == 0);
	cfg_pending_keys(&c, pending, sizeof pending);
	CHECK_STR(pending, "");   /* profile_memory acts; false asks for nothing */
	CHECK(apply(&c, "{\"with_modules\": true, \"with_flops\": true}", &e) == 0);
	cfg_pending_keys(&c, pending, sizeof pending);
	CHECK_STR(pending, "with_flops");   /* with_modules acts; with_flops says it adds shapes */
	CHECK(apply(&c, "{\"with_flops\": false}", &e) == 0);   /* a later value replaces it */
	cfg_pending_keys(&c, pending, sizeof pending);
	CHECK_STR(pending, "");
	char *json = cfg_to_json(&c);
	CHECK_CONTAINS(json, "\"record_shapes\":\ttrue");
	CHECK_CONTAINS(json, "\"active\":\t2");
	CHECK_CONTAINS(json, "\"activities\":\t[\"CPU\", \"DEVICE\"]");
	free(json);
	cfg_free(&c);
}

/* gc_detect, mstx_domain_include / mstx_domain_exclude (issue 19 §3),
 * under the names and types torch_npu's experimental_config maps onto. */
static void test_seed_keys(void)
{
	struct prof_config c;
	struct cfg_error e;
	cfg_defaults(&c);
	CHECK(!c.gc_detect && !c.mstx_domain_include && !c.mstx_domain_exclude);
	CHECK(apply(&c, "{\"gc_detect\": true, \"mstx_domain_include\": [\"a\", \" b c \"]}",
		    &e) == 0);
	CHECK(c.gc_detect);
	CHECK_STR(c.mstx_domain_include, "a,b c");
	char *json = cfg_to_json(&c);
	CHECK_CONTAINS(json, "\"mstx_domain_include\":\t[\"a\", \"b c\"]");
	CHECK_CONTAINS(json, "\"mstx_domain_exclude\":\t[]");
	free(json);
	CHECK(apply(&c, "{\"mstx_domain_include\": []}", &e) == 0);   /* none again */
	CHECK(c.mstx_domain_include == NULL);
	CHECK(cfg_set(&c, "mstx_domain_exclude", "x, y", "--config", &e) == 0);
	CHECK_STR(c.mstx_domain_exclude, "x,y");
	CHECK(cfg_validate(&c, &e) == 0);
	CHECK(apply(&c, "{\"mstx_domain_include\": \"a\"}", &e) == -1);   /* with exclude */
	CHECK_CONTAINS(e.msg, "PROF_OPTIONS: keys \"mstx_domain_include\" and "
		       "\"mstx_domain_exclude\" exclude each other");
	CHECK(cfg_validate(&c, &e) == -1);
	CHECK_CONTAINS(e.msg, "configuration: keys");
	cfg_free(&c);
	static const char *const bad[][3] = {   /* JSON, the key named, what is said */
		{ "{\"gc_detect\": \"yes\"}", "\"gc_detect\"", "boolean" },
		{ "{\"mstx_domain_include\": [1]}", "\"mstx_domain_include\"", "a number" },
		{ "{\"mstx_domain_exclude\": [\"a,b\"]}", "\"mstx_domain_exclude\"", "comma" },
		{ "{\"mstx_domain_exclude\": [\"\"]}", "\"mstx_domain_exclude\"", "empty" },
		{ "{\"mstx_domain_exclude\": 3}", "\"mstx_domain_exclude\"", "list of strings" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		expect_error(bad[i][0], bad[i][1], bad[i][2]);
}

/* The agent's reading of the lists the launcher passes. */
static void test_domain_filter(void)
{
	struct domain_filter f;
	CHECK(domain_filter_init(&f, NULL, NULL) == 0 && f.mode == DOMAIN_ALL);
	CHECK(domain_filter_keeps(&f, "x") && domain_filter_keeps(&f, NULL));
	CHECK(domain_filter_init(&f, "a,default", NULL) == 0 && f.mode == DOMAIN_INCLUDE);
	CHECK(domain_filter_keeps(&f, "a") && !domain_filter_keeps(&f, "b"));
	CHECK(domain_filter_keeps(&f, NULL) && domain_filter_keeps(&f, ""));
	CHECK(!domain_filter_keeps(&f, "ab") && !domain_filter_keeps(&f, "defaults"));
	CHECK(domain_filter_init(&f, "", "b") == 0 && f.mode == DOMAIN_EXCLUDE);
	CHECK(!domain_filter_keeps(&f, "b") && domain_filter_keeps(&f, "a"));
	CHECK(domain_filter_keeps(&f, NULL));
	char many[DOMAIN_FILTER_TEXT + 8];
	memset(many, 'x', sizeof many - 1);
	many[sizeof many - 1] = '\0';
	CHECK(domain_filter_init(&f, many, NULL) == -1 && f.mode == DOMAIN_ALL);
	CHECK(domain_filter_init(&f, ",,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,a,b,c", NULL) == 0);
	CHECK(f.n == 3);
}

int main(void)
{
	test_defaults();
	test_sources_override();
	test_errors_name_key_and_source();
	test_flag_errors();
	test_file_source();
	test_round_trip();
	test_dump_and_pending();
	test_seed_keys();
	test_domain_filter();
	return unit_done();
}
