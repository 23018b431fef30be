/* The seeds' configuration in prof's model: torch_npu's
 * profiler_config.json keys in the JSON sources (the template exactly as
 * the seed prints it), MindSpore's MS_PROFILER_OPTIONS, the notes for what
 * cannot act here, and an error naming the key and the source for every
 * wrong type or value. */
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "unit.h"

/* torch_npu's profiler_config.json, as the seed (001) prints it. */
static const char seed_template[] =
	"{\n"
	"    \"activities\": [\"CPU\", \"NPU\"],\n"
	"    \"prof_dir\": \"./\",\n"
	"    \"analyse\": false,\n"
	"    \"record_shapes\": false,\n"
	"    \"profile_memory\": false,\n"
	"    \"with_stack\": false,\n"
	"    \"with_flops\": false,\n"
	"    \"with_modules\": false,\n"
	"    \"active\": 1,\n"
	"    \"experimental_config\": {\n"
	"        \"profiler_level\": \"Level0\",\n"
	"        \"aic_metrics\": \"AiCoreNone\",\n"
	"        \"l2_cache\": false,\n"
	"        \"op_attr\": false,\n"
	"        \"data_simplification\": true,\n"
	"        \"record_op_args\": false,\n"
	"        \"export_type\": \"text\",\n"
	"        \"msprof_tx\": false\n"
	"    }\n"
	"}\n";

/* MS_PROFILER_OPTIONS, the seed's (003) example. */
static const char seed_ms[] = "{\"start\": true, \"output_path\": \"/XXX\", \"memory\": false, "
			      "\"hccl\": false, \"aicore_metrics\": 0, \"l2_cache\": false}";

static void test_torch_template(void)
{
	struct prof_config c;
	struct cfg_error e = { "" };
	char noted[256];
	cfg_defaults(&c);
	CHECK(cfg_apply_json(&c, seed_template, "profiler_config.json", &e) == 0);
	CHECK_STR(e.msg, "");
	CHECK_STR(c.output_path, "./");
	CHECK(c.activities == (CFG_ACT_CPU | CFG_ACT_DEVICE) && !c.analyse);
	CHECK(c.schedule.set && c.schedule.active == 1 && c.schedule.repeat == 1 &&
	      c.schedule.skip_first == 0 && c.schedule.warmup == 0);
	CHECK(c.profiler_level == CFG_LEVEL_0 && c.data_simplification);
	CHECK(c.export_type == CFG_EXPORT_TEXT && !c.msprof_tx && !c.with_flops);
	cfg_pending_keys(&c, noted, sizeof noted);
	CHECK_STR(noted, "");   /* it asks for nothing prof cannot do */
	CHECK(cfg_validate(&c, &e) == 0);
	cfg_free(&c);
}

static void window(const char *json, uint32_t skip, uint32_t warmup, uint32_t active)
{
	struct prof_config c;
	struct cfg_error e = { "" };
	cfg_defaults(&c);
	CHECK(cfg_apply_json(&c, json, "f.json", &e) == 0);
	CHECK_STR(e.msg, "");
	CHECK(c.schedule.set && c.schedule.skip_first == skip && c.schedule.warmup == warmup &&
	      c.schedule.active == active && c.schedule.repeat == 1 && c.schedule.wait == 0);
	cfg_free(&c);
}

/* start_step is the window's first step, as dynamic_profile labels it. */
static void test_torch_window(void)
{
	window("{\"start_step\": 10, \"warmup\": 2, \"active\": 3}", 9, 2, 3);
	window("{\"active\": 4, \"start_step\": 1}", 0, 0, 4);
	window("{\"start_step\": -1}", 0, 0, 1);   /* -1: at once */
	window("{\"warmup\": 1}", 0, 1, 1);        /* active's default: 1 */
}

/* Notes naming `key`, as the source spelled it. */
static int noted(const struct prof_config *c, const char *key)
{
	int n = 0;
	for (size_t i = 0; i < c->nnotes; i++)
		n += strcmp(c->notes[i].key, key) == 0;
	return n;
}

static const char *const ascend_only[] = {
	"experimental_config.aic_metrics", "experimental_config.l2_cache",
	"experimental_config.op_attr", "experimental_config.record_op_args",
	"experimental_config.sys_io", "experimental_config.sys_interconnection", NULL };

static void test_experimental_maps_and_notes(void)
{
	struct prof_config c;
	struct cfg_error e = { "" };
	cfg_defaults(&c);
	CHECK(cfg_apply_json(&c, "{\"experimental_config\": {\"profiler_level\": \"Level_none\", "
			     "\"export_type\": [\"text\", \"db\"], \"mstx\": false, "
			     "\"gc_detect\": true, \"host_sys\": [\"cpu\", \"network\", \"osrt\"], "
			     "\"mstx_domain_include\": [\"a\", \"b\"], \"aic_metrics\": "
			     "\"PipeUtilization\", \"l2_cache\": true, \"op_attr\": true, "
			     "\"record_op_args\": true, \"sys_io\": true, \"sys_interconnection\": "
			     "true, \"gc_detect_threshold\": 5}}", "f.json", &e) == 0);
	CHECK_STR(e.msg, "");
	CHECK(cfg_activities(&c) == CFG_ACT_CPU && c.activities == (CFG_ACT_CPU | CFG_ACT_DEVICE));
	CHECK(c.export_type == (CFG_EXPORT_TEXT | CFG_EXPORT_DB) && !c.msprof_tx && c.gc_detect);
	CHECK(c.host_sys == (CFG_HOST_CPU | CFG_HOST_NETWORK));
	CHECK(c.mstx_domain_include && !strcmp(c.mstx_domain_include, "a,b"));
	for (const char *const *k = ascend_only; *k; k++)
		CHECK(noted(&c, *k) == 1);
	CHECK(noted(&c, "experimental_config.host_sys") == 1);   /* "osrt" */
	CHECK(noted(&c, "experimental_config.gc_detect_threshold") >= 1);
	CHECK(noted(&c, "experimental_config.profiler_level") == 0);
	CHECK(noted(&c, "experimental_config.export_type") == 0);
	CHECK_STR(c.notes[0].source, "f.json");
	/* a later source that asks for nothing takes the notes back */
	CHECK(cfg_apply_json(&c, "{\"experimental_config\": {\"l2_cache\": false, \"aic_metrics\": "
			     "\"AiCoreNone\", \"host_sys\": [\"cpu\"], \"gc_detect_threshold\": "
			     "null}}", "PROF_OPTIONS", &e) == 0);
	CHECK(noted(&c, "experimental_config.l2_cache") == 0);
	CHECK(noted(&c, "experimental_config.aic_metrics") == 0);
	CHECK(noted(&c, "experimental_config.host_sys") == 0);
	CHECK(noted(&c, "experimental_config.gc_detect_threshold") == 0 && !c.gc_detect);
	CHECK(noted(&c, "experimental_config.op_attr") == 1);
	cfg_free(&c);
}

static void expect(const char *json, const char *source, const char *needle)
{
	struct prof_config c;
	struct cfg_error e = { "" };
	cfg_defaults(&c);
	int rc = strcmp(source, CFG_MS_SOURCE) == 0 ? cfg_apply_ms_options(&c, json, &e)
						    : cfg_apply_json(&c, json, source, &e);
	CHECK(rc == -1);
	CHECK_CONTAINS(e.msg, source);
	CHECK_CONTAINS(e.msg, needle);
	cfg_free(&c);
}

static void test_torch_errors(void)
{
	expect("{\"prof_dir\": 3}", "f.json", "key \"prof_dir\": expected string");
	expect("{\"prof_dir\": \"\"}", "f.json", "key \"prof_dir\": must not be empty");
	expect("{\"active\": 0}", "f.json", "key \"active\": value out of range");
	expect("{\"active\": \"1\"}", "f.json", "key \"active\": expected an integer");
	expect("{\"warmup\": -1}", "f.json", "key \"warmup\": value out of range");
	expect("{\"warmup\": 1.5}", "f.json", "key \"warmup\": expected an integer");
	expect("{\"start_step\": -2}", "f.json", "key \"start_step\": value out of range");
	expect("{\"with_flops\": 1}", "f.json", "key \"with_flops\": expected boolean");
	expect("{\"is_rank\": \"yes\"}", "f.json", "key \"is_rank\": expected boolean");
	expect("{\"rank_list\": [8192]}", "f.json", "key \"rank_list\": ranks are from 0 to 8191");
	expect("{\"rank_list\": [\"a\"]}", "f.json", "key \"rank_list\": expected list of ranks");
	expect("{\"experimental_config\": []}", "f.json",
	       "key \"experimental_config\": expected an object");
	expect("{\"experimental_config\": {\"bogus\": 1}}", "f.json",
	       "key \"experimental_config.bogus\": unknown key");
	expect("{\"metadata\": {}}", "PROF_OPTIONS", "key \"metadata\": unknown key");
}

static void test_experimental_errors(void)
{
	static const struct { const char *sub, *needle; } bad[] = {
		{ "\"profiler_level\": \"Level3\"", "expected one of Level_none" },
		{ "\"aic_metrics\": \"Fast\"", "expected one of AiCoreNone" },
		{ "\"aic_metrics\": 1", "expected one of AiCoreNone" },
		{ "\"l2_cache\": \"false\"", "expected boolean, got a string" },
		{ "\"op_attr\": 0", "expected boolean, got a number" },
		{ "\"data_simplification\": null", "expected boolean, got null" },
		{ "\"record_op_args\": []", "expected boolean, got an array" },
		{ "\"export_type\": \"json\"", "unknown value \"json\"" },
		{ "\"msprof_tx\": 1", "expected boolean" },
		{ "\"mstx\": \"on\"", "expected boolean" },
		{ "\"gc_detect\": 1", "expected boolean" },
		{ "\"gc_detect_threshold\": -1", "expected null or milliseconds >= 0" },
		{ "\"gc_detect_threshold\": \"5\"", "expected null or milliseconds >= 0" },
		{ "\"host_sys\": [\"cpu\", \"gpu\"]", "unknown value \"gpu\"" },
		{ "\"host_sys\": 1", "expected list: cpu, mem, disk, network" },
		{ "\"mstx_domain_include\": [1]", "expected list of strings" },
		{ "\"mstx_domain_exclude\": {}", "expected list of strings" },
		{ "\"sys_io\": \"true\"", "expected boolean" },
		{ "\"sys_interconnection\": 1", "expected boolean" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char json[256], key[64];
		snprintf(json, sizeof json, "{\"experimental_config\": {%s}}", bad[i].sub);
		snprintf(key, sizeof key, "key \"experimental_config.%.*s\": ",
			 (int)(strchr(bad[i].sub + 1, '"') - bad[i].sub - 1), bad[i].sub + 1);
		expect(json, "f.json", key);
		expect(json, "f.json", bad[i].needle);
	}
}

static void test_ms_seed_example(void)
{
	struct prof_config c;
	struct cfg_error e = { "" };
	char noted[256];
	cfg_defaults(&c);
	CHECK(cfg_apply_ms_options(&c, seed_ms, &e) == 0);
	CHECK_STR(e.msg, "");
	CHECK_STR(c.output_path, "/XXX");
	CHECK(!c.start_paused && !c.profile_memory);
	cfg_pending_keys(&c, noted, sizeof noted);
	CHECK_STR(noted, "hccl, aicore_metrics");
	CHECK_STR(c.notes[0].source, CFG_MS_SOURCE);
	cfg_free(&c);
}

static void test_ms_keys_act(void)
{
	struct prof_config c;
	struct cfg_error e = { "" };
	char noted[256];
	cfg_defaults(&c);
	c.host_sys = CFG_HOST_CPU;
	CHECK(cfg_apply_ms_options(&c, "{\"start\": false, \"op_time\": false, \"memory\": true, "
				   "\"timeline_limit\": 500, \"profile_framework\": \"memory\", "
				   "\"hccl\": true, \"aicore_metrics\": -1, \"l2_cache\": true, "
				   "\"data_process\": false, \"parallel_strategy\": true, "
				   "\"sync_enable\": true, \"profile_communication\": true}", &e) == 0);
	CHECK_STR(e.msg, "");
	CHECK(c.start_paused && c.activities == CFG_ACT_CPU && c.profile_memory);
	CHECK(c.timeline_limit_mb == 500 && c.host_sys == (CFG_HOST_CPU | CFG_HOST_MEM));
	cfg_pending_keys(&c, noted, sizeof noted);
	CHECK_STR(noted, "l2_cache, parallel_strategy, sync_enable");   /* memory acts */
	/* PROF_OPTIONS comes after: its keys win, and take their notes back */
	CHECK(cfg_apply_json(&c, "{\"experimental_config\": {\"l2_cache\": false}, "
			     "\"start_paused\": false}",
			     "PROF_OPTIONS", &e) == 0);
	cfg_pending_keys(&c, noted, sizeof noted);
	CHECK_STR(noted, "parallel_strategy, sync_enable");
	CHECK(!c.start_paused);
	cfg_free(&c);
}

static void test_ms_errors(void)
{
	const char *src = CFG_MS_SOURCE;
	expect("{\"start\": true", src, "invalid JSON");
	expect("[true]", src, "expected a JSON object");
	expect("{\"delay\": 2}", src, "key \"delay\": unknown key");   /* MindSpore's keys only */
	expect("{\"start\": \"true\"}", src, "key \"start\": expected boolean, got a string");
	expect("{\"output_path\": 1}", src, "key \"output_path\": expected string");
	expect("{\"memory\": 1}", src, "key \"memory\": expected boolean");
	expect("{\"hccl\": null}", src, "key \"hccl\": expected boolean");
	expect("{\"profile_communication\": 0}", src, "key \"profile_communication\": expected");
	expect("{\"aicore_metrics\": 6}", src, "key \"aicore_metrics\": value out of range");
	expect("{\"aicore_metrics\": \"0\"}", src, "key \"aicore_metrics\": expected an integer");
	expect("{\"l2_cache\": 1}", src, "key \"l2_cache\": expected boolean");
	expect("{\"profile_framework\": \"some\"}", src, "key \"profile_framework\": expected \"all\"");
	expect("{\"data_process\": []}", src, "key \"data_process\": expected boolean");
	expect("{\"op_time\": \"yes\"}", src, "key \"op_time\": expected boolean");
	expect("{\"timeline_limit\": -1}", src, "key \"timeline_limit\": value out of range");
	expect("{\"sync_enable\": 2}", src, "key \"sync_enable\": expected boolean");
	expect("{\"parallel_strategy\": {}}", src, "key \"parallel_strategy\": expected boolean");
}

/* What cfg_to_json writes of the new keys, cfg_apply_json reads back. */
static void test_round_trip(void)
{
	struct prof_config c, d;
	struct cfg_error e;
	cfg_defaults(&c);
	cfg_defaults(&d);
	CHECK(cfg_apply_json(&c, "{\"is_rank\": true, \"rank_list\": [3, 0, 1], \"msprof_tx\": false, "
			     "\"mstx_domain_exclude\": [\"x\"], \"rank_list\": []}", "f", &e) == 0);
	CHECK_STR(c.rank_list, "");   /* the last one wins: none */
	CHECK(cfg_apply_json(&c, "{\"rank_list\": [3, 0, 1]}", "f", &e) == 0);
	char *a = cfg_to_json(&c);
	CHECK(cfg_apply_json(&d, a, "f", &e) == 0);
	char *b = cfg_to_json(&d);
	CHECK_STR(a, b);
	CHECK_STR(d.rank_list, "3,0,1");
	free(a);
	free(b);
	cfg_free(&c);
	cfg_free(&d);
}

int main(void)
{
	test_torch_template();
	test_torch_window();
	test_experimental_maps_and_notes();
	test_torch_errors();
	test_experimental_errors();
	test_ms_seed_example();
	test_ms_keys_act();
	test_ms_errors();
	test_round_trip();
	return unit_done();
}
