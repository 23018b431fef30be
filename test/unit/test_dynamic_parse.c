/* --dynamic edits: warmup, start_step, prof_dir and analyse kept for the
 * activation's own result, and experimental_config checked as --config
 * checks it (an unknown sub-key rejects the edit). */
#include "run/dynamic.h"
#include "unit.h"

static int noted(const struct dyn_request *q, const char *key)
{
	for (size_t i = 0; i < q->exp.nnotes; i++)
		if (strcmp(q->exp.notes[i].key, key) == 0)
			return 1;
	return 0;
}

static void test_window_and_kept_keys(void)
{
	struct dyn_request q;
	char why[256] = "";
	CHECK(dyn_parse("{\"active\": 3, \"warmup\": 2, \"start_step\": 40, \"prof_dir\": \"/r\", "
			"\"analyse\": true}", &q, why, sizeof why) == 0);
	CHECK_STR(why, "");
	CHECK(q.active == 3 && q.warmup == 2 && q.start_step == 40);
	CHECK_STR(q.prof_dir, "/r");
	CHECK(q.analyse == 1 && !q.has_exp && q.exp.nnotes == 0);
	dyn_request_free(&q);
	CHECK(dyn_parse("{\"start_step\": -1}", &q, why, sizeof why) == 0);
	CHECK(q.start_step == 0 && q.warmup == 0 && q.active == 1 && !q.prof_dir && q.analyse == -1);
	dyn_request_free(&q);
}

static void test_experimental_config(void)
{
	struct dyn_request q;
	char why[256] = "";
	CHECK(dyn_parse("{\"with_flops\": true, \"experimental_config\": {\"profiler_level\": "
			"\"Level1\", \"aic_metrics\": \"Memory\", \"export_type\": \"db\", "
			"\"l2_cache\": false}}", &q, why, sizeof why) == 0);
	CHECK_STR(why, "");
	CHECK(q.has_exp && q.exp.profiler_level == CFG_LEVEL_1 && q.exp.export_type == CFG_EXPORT_DB);
	CHECK(noted(&q, "with_flops") && noted(&q, "experimental_config.aic_metrics"));
	CHECK(noted(&q, "experimental_config.profiler_level"));
	CHECK(!noted(&q, "experimental_config.l2_cache"));
	CHECK_STR(q.exp_keys, "profiler_level, export_type");
	dyn_request_free(&q);
}

static void rejected(const char *edit, const char *needle)
{
	struct dyn_request q;
	char why[256] = "";
	CHECK(dyn_parse(edit, &q, why, sizeof why) == -1);
	CHECK_CONTAINS(why, needle);
	dyn_request_free(&q);
}

static void test_rejected(void)
{
	rejected("{\"experimental_config\": {\"bogus\": 1}}",
		 "key \"experimental_config.bogus\": unknown key");
	rejected("{\"experimental_config\": {\"l2_cache\": \"no\"}}",
		 "key \"experimental_config.l2_cache\": expected boolean");
	rejected("{\"experimental_config\": 1}", "key \"experimental_config\": expected an object");
	rejected("{\"warmup\": -1}", "key \"warmup\": expected an integer from 0");
	rejected("{\"start_step\": -2}", "key \"start_step\": expected an integer from -1");
	rejected("{\"prof_dir\": 1}", "key \"prof_dir\": expected a directory");
	rejected("{\"analyse\": \"yes\"}", "key \"analyse\": expected true or false");
	rejected("{\"with_flops\": 1}", "key \"with_flops\": expected true or false");
}

int main(void)
{
	test_window_and_kept_keys();
	test_experimental_config();
	test_rejected();
	return unit_done();
}
