/*
 * Framework operators and recording windows through parse_run_dir, on
 * synthetic run directories: nesting and clamping (to parents, to step
 * boundaries), self and total times, trace args, operator_details.csv and
 * op_statistic.csv byte for byte, windows of every cause, and a damaged
 * fw.raw.
 */
#include "unit/parsed.h"

#include "outputs/tables/out_op_details.h"
#include "outputs/tables/out_op_stat.h"
#include "model/parse_model_int.h"
#include "raw/raw_clock.h"

#define SHAPES "[[64, 128], [128, 256]]"
#define TYPES  "[\"float\", \"float\"]"
#define STACK  "model.py(10): forward;train.py(5): <module>"

/* The thread that calls prof_step: steps 1, 2 recorded; a window off at
 * 2005, back on at the boundary of step 3 (not written: paused); 4, 5
 * recorded; the launcher pauses 5500..6000; step 6 recorded. */
static void main_thread(const char *run)
{
	struct raw_writer w;
	char *d = rg_path(run, "raw/700.0");
	CHECK(rg_open(&w, d, "t700.raw", 700, 700, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC,
		      "python") == 0);
	rg_process(&w, T + 0, 700, "python train.py");
	rg_recording(&w, T + 10, 1, RAW_CAUSE_START);
	rg_step(&w, T + 1000, 1);
	rg_step(&w, T + 2000, 2);
	rg_recording(&w, T + 2005, 0, RAW_CAUSE_SCHEDULE);
	rg_recording(&w, T + 3000, 1, RAW_CAUSE_DYNAMIC);
	rg_step(&w, T + 4000, 4);
	rg_step(&w, T + 5000, 5);
	rg_step(&w, T + 6500, 6);
	raw_writer_close(&w);
	free(d);
}

static void launcher(const char *run)
{
	struct raw_writer w;
	char *d = rg_path(run, "raw/launcher");
	CHECK(rg_open(&w, d, "switches.raw", 50, 50, RAW_STREAM_LAUNCHER, RAW_CLOCK_MONOTONIC,
		      "launcher") == 0);
	rg_recording(&w, T + 5500, 0, RAW_CAUSE_LAUNCHER);
	rg_recording(&w, T + 6000, 1, RAW_CAUSE_LAUNCHER);
	raw_writer_close(&w);
	free(d);
}

/* A user annotation (torch.profiler.record_function). */
static void user_op(struct raw_writer *w, uint64_t start, uint64_t end, const char *name)
{
	struct raw_op o = { .end = end, .tid = 700, .name_id = raw_writer_intern(w, name, start),
			    .flags = 0x2, .seq = -1 };
	raw_writer_emit(w, RAW_REC_OP, start, &o, sizeof o);
}

/* In start order, as the hooks write them; "aten::t" comes before its
 * parent, which starts at the same ns. */
static void framework(const char *run)
{
	struct raw_writer w;
	char *d = rg_path(run, "raw/700.0");
	CHECK(rg_open(&w, d, "fw.raw", 700, 0, RAW_STREAM_FRAMEWORK, RAW_CLOCK_MONOTONIC,
		      "framework") == 0);
	rg_op(&w, T + 100, T + 150, 700, "aten::t", NULL, NULL, NULL, -1, 0);
	rg_op(&w, T + 100, T + 600, 700, "aten::linear", SHAPES, TYPES, STACK, 7, 0);
	rg_op(&w, T + 200, T + 650, 700, "aten::addmm", "[[256], [64, 128]]", NULL, NULL, -1, 0);
	rg_op(&w, T + 300, T + 400, 700, "aten::copy_", NULL, NULL, NULL, -1, 0);
	rg_op(&w, T + 700, T + 1200, 700, "aten::relu", NULL, NULL, NULL, -1, 0);
	rg_op(&w, T + 800, T + 1100, 700, "aten::clamp_min", NULL, NULL, NULL, -1, 0);
	rg_op(&w, T + 1100, T + 1300, 700, "aten::relu", NULL, NULL, NULL, -1, 0);
	rg_op(&w, T + 1500, T + 1900, 701, "MulBackward0", NULL, NULL, NULL, 9, 1);
	rg_op(&w, T + 1600, T + 1650, -2, "aten::add", "not json [", NULL, NULL, -1, 0);
	/* valid JSON, but not ASCII (and not UTF-8): through the writer */
	rg_op(&w, T + 2000, T + 2100, 700, "aten::mul", NULL, "[\"caf\xc3\xa9\", \"\xff\"]", NULL,
	      -1, 0);
	rg_op(&w, T + 3100, T + 3300, 700, "aten::relu", NULL, NULL, NULL, -1, 0);
	rg_op(&w, T + 3400, T + 3900, 700, "aten::linear", NULL, NULL, NULL, -1, 0);
	user_op(&w, T + 4000, T + 5000, "ProfilerStep#5");   /* torch's: dropped */
	user_op(&w, T + 4100, T + 4400, "my_region");
	rg_op(&w, T + 5800, T + 6200, 700, "aten::sum", NULL, NULL, NULL, -1, 0);
	rg_op(&w, T + 6100, T + 6300, 700, "aten::sum", NULL, NULL, NULL, -1, 0);
	raw_writer_close(&w);
	free(d);
}

static char *make_run(const char *name)
{
	char *run = rg_tmpdir(name);
	write_min_info(run);
	main_thread(run);
	launcher(run);
	framework(run);
	return run;
}

/* The X event named `name` whose ts is T + off. */
static const cJSON *op_at(const cJSON *trace, const char *name, uint64_t off)
{
	const cJSON *e;
	for (int i = 0; (e = find(trace, "X", name, i)) != NULL; i++)
		if (ns_of(e, "ts") == rel(off))
			return e;
	return NULL;
}

static void check_span(const cJSON *trace, const char *name, uint64_t a, uint64_t b, int tid)
{
	const cJSON *e = op_at(trace, name, a);
	CHECK(e && ns_of(e, "dur") == (int64_t)(b - a) && n_of(e, "tid") == tid &&
	      n_of(e, "pid") == 700);
	if (!e || ns_of(e, "dur") != (int64_t)(b - a))
		fprintf(stderr, "  %s at %" PRIu64 "\n", name, a);
}

static void check_trace(const struct parsed *p)
{
	CHECK(count(p->trace, "X", NULL) == 15 + 5 + 3);   /* ops, steps, windows */
	CHECK(count(p->trace, "X", "ProfilerStep#5") == 1);
	check_span(p->trace, "aten::linear", 100, 600, 700);
	check_span(p->trace, "aten::t", 100, 150, 700);
	check_span(p->trace, "aten::addmm", 200, 600, 700);      /* clamped to its parent */
	check_span(p->trace, "aten::relu", 700, 1000, 700);      /* to step 1's end */
	check_span(p->trace, "aten::clamp_min", 800, 1000, 700);
	check_span(p->trace, "aten::mul", 2000, 2100, 700);      /* starts at a boundary */
	check_span(p->trace, "aten::sum", 5800, 6000, 700);      /* to the launcher's switch-on */
	check_span(p->trace, "aten::sum", 6100, 6300, 700);
	check_span(p->trace, "MulBackward0", 1500, 1900, 701);
	check_span(p->trace, "aten::add", 1600, 1650, 1000000002);
	check_span(p->trace, "ProfilerStep#4", 3000, 4000, 700);
	check_span(p->trace, "my_region", 4100, 4400, 700);
	CHECK_STR(s_of(op_at(p->trace, "my_region", 4100), "cat"), "user_annotation");
	check_span(p->trace, "ProfilerStep#6", 6000, 6500, 700);
	CHECK(find(p->trace, "X", "ProfilerStep#3", 0) == NULL);
	CHECK(nests(p->trace));
	CHECK(p->r.ops == 15 && p->r.ops_clamped == 4 && p->r.steps == 5);
}

static void check_args(const struct parsed *p)
{
	char want[512];
	snprintf(want, sizeof want, "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\","
		 "\"pid\":700,\"tid\":700,\"ts\":%" PRId64 ".100,\"dur\":0.500,\"args\":"
		 "{\"External id\":2,\"Input Dims\":" SHAPES ",\"Input type\":[\"float\", "
		 "\"float\"],\"Call stack\":\"" STACK "\",\"Sequence number\":7}}",
		 rel(0) / 1000);
	CHECK_CONTAINS(p->trace_text, want);
	const cJSON *bw = op_at(p->trace, "MulBackward0", 1500);
	const cJSON *args = bw ? cJSON_GetObjectItemCaseSensitive(bw, "args") : NULL;
	CHECK(args && n_of(args, "Sequence number") == 9 && n_of(args, "Fwd thread id") == 1);
	CHECK(args && cJSON_GetArraySize(args) == 3);
	const cJSON *add = op_at(p->trace, "aten::add", 1600);
	args = add ? cJSON_GetObjectItemCaseSensitive(add, "args") : NULL;
	CHECK_STR(args ? s_of(args, "Input Dims") : NULL, "not json [");
	CHECK_CONTAINS(p->trace_text, "\"Input type\":[\"caf\xc3\xa9\",\"\\ufffd\"]}}");
	const cJSON *t = op_at(p->trace, "aten::t", 100);
	args = t ? cJSON_GetObjectItemCaseSensitive(t, "args") : NULL;
	CHECK(args && cJSON_GetArraySize(args) == 1 && n_of(args, "External id") == 1);
	/* External ids: 1..15, each once */
	int seen[16] = { 0 };
	const cJSON *e;
	for (int i = 0; (e = find(p->trace, "X", NULL, i)) != NULL; i++) {
		if (strncmp(s_of(e, "name"), "ProfilerStep#", 13) == 0 || n_of(e, "tid") == 0)
			continue;
		double id = n_of(cJSON_GetObjectItemCaseSensitive(e, "args"), "External id");
		if (id >= 1 && id <= 15)
			seen[(int)id]++;
	}
	for (int i = 1; i <= 15; i++)
		CHECK(seen[i] == 1);
}

static void check_threads(const struct parsed *p)
{
	CHECK_STR(meta_name(p->trace, "thread_name", 700, 700), "thread 700 (python)");
	CHECK_STR(meta_name(p->trace, "thread_name", 700, 701), "thread 701");
	CHECK_STR(meta_name(p->trace, "thread_name", 700, 1000000002), "torch thread 2");
	CHECK_STR(meta_name(p->trace, "thread_name", 700, 0), "prof windows");
	CHECK(count(p->trace, "M", "thread_name") == 4);
	CHECK_STR(meta_name(p->trace, "process_name", 700, -1), "python train.py");
}

static void check_windows(const struct parsed *p)
{
	check_span(p->trace, "Window #1 (start)", 10, 2005, 0);
	check_span(p->trace, "Window #2 (dynamic)", 3000, 5500, 0);
	check_span(p->trace, "Window #3 (launcher)", 6000, 6500, 0);
	CHECK(p->r.windows == 3);
}

static void check_details(const struct parsed *p)
{
	CHECK_STR(p->details_csv,
		  "Name,Input Shapes,Call Stack,Host Self Duration(us),Host Total Duration(us),"
		  "Device Self Duration(us),Device Total Duration(us),"
		  "Device Self Duration With AICore(us),Device Total Duration With AICore(us),FLOPs,Step Id\n"
		  "aten::t,,,0.050,0.050,0.000,0.000,0.000,0.000,,1\n"
		  "aten::copy_,,,0.100,0.100,0.000,0.000,0.000,0.000,,1\n"
		  "aten::addmm,\"[[256], [64, 128]]\",,0.300,0.400,0.000,0.000,0.000,0.000,,1\n"
		  "aten::linear,\"" SHAPES "\"," STACK ",0.050,0.500,0.000,0.000,0.000,0.000,,1\n"
		  "aten::clamp_min,,,0.200,0.200,0.000,0.000,0.000,0.000,,1\n"
		  "aten::relu,,,0.100,0.300,0.000,0.000,0.000,0.000,,1\n"
		  "aten::relu,,,0.200,0.200,0.000,0.000,0.000,0.000,,2\n"
		  "aten::mul,,,0.100,0.100,0.000,0.000,0.000,0.000,,\n"
		  "aten::relu,,,0.200,0.200,0.000,0.000,0.000,0.000,,4\n"
		  "aten::linear,,,0.500,0.500,0.000,0.000,0.000,0.000,,4\n"
		  "my_region,,,0.300,0.300,0.000,0.000,0.000,0.000,,5\n"
		  "aten::sum,,,0.200,0.200,0.000,0.000,0.000,0.000,,\n"
		  "aten::sum,,,0.200,0.200,0.000,0.000,0.000,0.000,,6\n"
		  "MulBackward0,,,0.400,0.400,0.000,0.000,0.000,0.000,,2\n"
		  "aten::add,not json [,,0.050,0.050,0.000,0.000,0.000,0.000,,2\n");
}

/* Self times: linear 50 + 500, relu 100 + 200 + 200, MulBackward0 400,
 * sum 200 + 200, addmm 300, my_region 300, clamp_min 200, copy_ 100,
 * mul 100, t 50, add 50: 2950 ns in all. */
static void check_stat(const struct parsed *p)
{
	CHECK_STR(p->opstat_csv,
		  "Device_id,OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),"
		  "Max Time(us),Ratio(%)\n"
		  "-1,aten::linear,CPU,2,0.550,0.050,0.275,0.500,18.64\n"
		  "-1,aten::relu,CPU,3,0.500,0.100,0.167,0.200,16.95\n"
		  "-1,MulBackward0,CPU,1,0.400,0.400,0.400,0.400,13.56\n"
		  "-1,aten::sum,CPU,2,0.400,0.200,0.200,0.200,13.56\n"
		  "-1,aten::addmm,CPU,1,0.300,0.300,0.300,0.300,10.17\n"
		  "-1,my_region,CPU,1,0.300,0.300,0.300,0.300,10.17\n"
		  "-1,aten::clamp_min,CPU,1,0.200,0.200,0.200,0.200,6.78\n"
		  "-1,aten::copy_,CPU,1,0.100,0.100,0.100,0.100,3.39\n"
		  "-1,aten::mul,CPU,1,0.100,0.100,0.100,0.100,3.39\n"
		  "-1,aten::add,CPU,1,0.050,0.050,0.050,0.050,1.69\n"
		  "-1,aten::t,CPU,1,0.050,0.050,0.050,0.050,1.69\n");
}

static void test_ops(void)
{
	char *run = make_run("ops-run");
	struct parsed p;
	parse(run, &p);
	CHECK(p.st == PARSE_OK && p.done && p.trace);
	if (p.trace) {
		check_trace(&p);
		check_args(&p);
		check_threads(&p);
		check_windows(&p);
	}
	check_details(&p);
	check_stat(&p);
	CHECK_CONTAINS(p.steps_csv, "\n-1,6,0.000,0.000,0.000,0.000,0.500,0.500,");
	parsed_free(&p);
	free(run);
}

/* --step-list 4: the operators that began in step 4 ([3000, 4000), begun
 * afresh when recording came back on), in both tables. */
static void test_step_list(void)
{
	char *run = make_run("ops-steps");
	struct parsed p;
	uint64_t four = 4;
	parse_steps(run, &four, 1, &p);
	CHECK(p.st == PARSE_OK && p.done);
	CHECK_STR(p.details_csv, OUT_OP_DETAILS_HEADER "\n"
		  "aten::relu,,,0.200,0.200,0.000,0.000,0.000,0.000,,4\n"
		  "aten::linear,,,0.500,0.500,0.000,0.000,0.000,0.000,,4\n");
	CHECK_STR(p.opstat_csv, OUT_OP_STAT_HEADER "\n"
		  "-1,aten::linear,CPU,1,0.500,0.500,0.500,0.500,71.43\n"
		  "-1,aten::relu,CPU,1,0.200,0.200,0.200,0.200,28.57\n");
	parsed_free(&p);
	free(run);
}

/* Recording begins with the process: step 1 begins where the thread says
 * its loop began, after the optimizer was built (`fetch` 0) or at the
 * first batch fetched (`fetch` 1), not at the imports; step 2 at step 1's
 * end. */
static void loop_run(const char *run, int fetch)
{
	struct raw_writer w;
	char *d = rg_path(run, "raw/700.0");
	write_min_info(run);
	CHECK(rg_open(&w, d, "t700.raw", 700, 700, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC,
		      "python") == 0);
	rg_process(&w, T + 0, 700, "python train.py");
	rg_recording(&w, T + 10, 1, RAW_CAUSE_START);
	rg_mark(&w, T + 300, "Optimizer.__init__#SGD.__init__");
	if (fetch) {
		for (int i = 0; i < 2; i++) {   /* two batches a step: the first counts */
			rg_push(&w, T + 400 + 100 * (uint64_t)i,
				"enumerate(DataLoader)#_BaseDataLoaderIter.__next__");
			rg_pop(&w, T + 450 + 100 * (uint64_t)i);
		}
	}
	rg_step(&w, T + 1000, 1);
	rg_step(&w, T + 2000, 2);
	raw_writer_close(&w);
	/* a kernel while the model is set up (moving weights, say), one in step 1 */
	CHECK(rg_open(&w, d, "dev.raw", 700, 0, RAW_STREAM_DEVICE, RAW_CLOCK_MONOTONIC,
		      "device") == 0);
	rg_dev_info(&w, T + 5, 0, "prof sim device");
	rg_dev_task(&w, RAW_DEV_KERNEL, T + 100, T + 200, 1, 0, 1, "init_k", 0, 0, 0);
	rg_dev_task(&w, RAW_DEV_KERNEL, T + 600, T + 700, 2, 0, 1, "step_k", 0, 0, 0);
	raw_writer_close(&w);
	free(d);
}

static void test_loop_hints(void)
{
	for (int fetch = 0; fetch < 2; fetch++) {
		char *run = rg_tmpdir(fetch ? "ops-loop-fetch" : "ops-loop-built");
		loop_run(run, fetch);
		struct parsed p;
		parse(run, &p);
		CHECK(p.st == PARSE_OK && p.trace);
		if (p.trace) {
			check_span(p.trace, "ProfilerStep#1", fetch ? 400 : 300, 1000, 700);
			check_span(p.trace, "ProfilerStep#2", 1000, 2000, 700);
		}
		/* step 1's device row: step_k only (100 ns computing), prepared
		 * from the step's start; init_k was set-up */
		CHECK_CONTAINS(p.steps_csv, fetch ? "\n0,1,0.100,0.000,0.000,0.000,0.000,0.100,0.000,"
				"0.000,0.200\n" : "\n0,1,0.100,0.000,0.000,0.000,0.000,0.100,0.000,"
				"0.000,0.300\n");
		parsed_free(&p);
		free(run);
	}
}

/* No framework stream: both tables still have their header. */
static void test_no_ops(void)
{
	char *run = rg_tmpdir("ops-none");
	main_thread(run);
	struct parsed p;
	parse(run, &p);
	CHECK(p.st == PARSE_OK);
	CHECK_STR(p.details_csv, "Name,Input Shapes,Call Stack,Host Self Duration(us),Host Total Duration(us),"
		  "Device Self Duration(us),Device Total Duration(us),"
		  "Device Self Duration With AICore(us),Device Total Duration With AICore(us),FLOPs,Step Id\n");
	CHECK_STR(p.opstat_csv, "Device_id,OP Type,Core Type,Count,Total Time(us),Min Time(us),"
		  "Avg Time(us),Max Time(us),Ratio(%)\n");
	parsed_free(&p);
	free(run);
}

/* Issue 17 §9: an op whose only child bears its name (a redispatch:
 * aten::div_ in aten::div_) is one call, as torch's EventList counts it
 * (_remove_dup_nodes); an op with two such children, or another name
 * inside, stays. */
static void test_same_name_nesting(void)
{
	char *run = rg_tmpdir("ops-dup");
	main_thread(run);
	struct raw_writer w;
	char *d = rg_path(run, "raw/700.0");
	CHECK(rg_open(&w, d, "fw.raw", 700, 0, RAW_STREAM_FRAMEWORK, RAW_CLOCK_MONOTONIC,
		      "framework") == 0);
	rg_op(&w, T + 100, T + 500, 700, "aten::div_", NULL, NULL, NULL, -1, 0);
	rg_op(&w, T + 110, T + 490, 700, "aten::div_", NULL, NULL, NULL, -1, 0);
	rg_op(&w, T + 600, T + 900, 700, "aten::add_", NULL, NULL, NULL, -1, 0);
	rg_op(&w, T + 610, T + 700, 700, "aten::add_", NULL, NULL, NULL, -1, 0);
	rg_op(&w, T + 710, T + 800, 700, "aten::add_", NULL, NULL, NULL, -1, 0);
	rg_op(&w, T + 1000, T + 1300, 700, "aten::mul", NULL, NULL, NULL, -1, 0);
	rg_op(&w, T + 1010, T + 1200, 700, "aten::mul_", NULL, NULL, NULL, -1, 0);
	raw_writer_close(&w);
	free(d);
	struct parsed p;
	parse(run, &p);
	CHECK(p.st == PARSE_OK);
	CHECK(p.r.ops == 6);   /* 7 records, one merged */
	CHECK_CONTAINS(p.opstat_csv, "-1,aten::div_,CPU,1,0.380,");   /* the inner's time */
	CHECK_CONTAINS(p.opstat_csv, "-1,aten::add_,CPU,3,");
	CHECK_CONTAINS(p.opstat_csv, "-1,aten::mul,CPU,1,");
	CHECK_CONTAINS(p.opstat_csv, "-1,aten::mul_,CPU,1,");
	size_t rows = 0;
	for (const char *c = p.details_csv; c && (c = strstr(c, "aten::div_,")); c++)
		rows++;
	CHECK(rows == 1);
	parsed_free(&p);
	free(run);
}

/* Issue 17 §4: the bytes of a CPU backend's collective from the shapes
 * and types record_shapes gives its work range. */
static void test_fw_coll_bytes(void)
{
	CHECK(model_fw_coll_bytes("[[19210]]", "[\"float\"]") == 19210 * 4);
	CHECK(model_fw_coll_bytes("[[]]", "[\"float\"]") == 4);            /* a scalar */
	CHECK(model_fw_coll_bytes("[[4, 5], [3]]", "[\"double\", \"c10::BFloat16\"]") ==
	      4 * 5 * 8 + 3 * 2);
	CHECK(model_fw_coll_bytes("[[8]]", "[\"long int\"]") == 64);
	CHECK(model_fw_coll_bytes("[[8]]", "[\"SomeNewType\"]") == 0);      /* unknown: 0 */
	CHECK(model_fw_coll_bytes(NULL, "[\"float\"]") == 0);             /* no record_shapes */
	CHECK(model_fw_coll_bytes("not json", "[]") == 0);
	CHECK(model_fw_is_collective("gloo:all_reduce") && model_fw_is_collective("mpi:broadcast"));
	CHECK(!model_fw_is_collective("nccl:all_reduce"));   /* the device view's */
	CHECK(!model_fw_is_collective("aten::mm") && !model_fw_is_collective("gl"));
}

#define MANY 2000

/* A fw.raw cut short in its second chunk: what is there is read. */
static void test_damaged_fw(void)
{
	char *run = rg_tmpdir("ops-damaged");
	main_thread(run);
	struct raw_writer w;
	char *d = rg_path(run, "raw/700.0"), *fw = rg_path(d, "fw.raw");
	CHECK(rg_open(&w, d, "fw.raw", 700, 0, RAW_STREAM_FRAMEWORK, RAW_CLOCK_MONOTONIC,
		      "framework") == 0);
	for (int i = 0; i < MANY; i++)
		rg_op(&w, T + 20 + (uint64_t)i * 2, T + 21 + (uint64_t)i * 2, 700,
		      i % 2 ? "aten::odd" : "aten::even", SHAPES, NULL, NULL, i, 0);
	raw_writer_close(&w);
	rg_truncate(fw, rg_chunk_off(1) + 5000);
	struct parsed p;
	parse(run, &p);
	CHECK(p.st == PARSE_DAMAGED && p.done && p.trace);
	CHECK_CONTAINS(p.log, "fw.raw: chunk 1 at offset 0x5000: file ends inside the chunk");
	CHECK(p.r.ops > 250 && p.r.ops < MANY / 2);
	CHECK(p.trace && count(p.trace, "X", "aten::odd") + count(p.trace, "X", "aten::even") ==
	      (int)p.r.ops);
	CHECK(rg_count(p.details_csv, "\n") == (int)p.r.ops + 1);
	CHECK_CONTAINS(p.opstat_csv, "-1,aten::even,CPU,");
	CHECK(p.trace && nests(p.trace));
	parsed_free(&p);
	free(fw);
	free(d);
	free(run);
}

/* ---- operators begun and ended on their thread (RAW_REC_OP_BEGIN/END) ---- */

static void op_begin(struct raw_writer *w, uint64_t ts, const char *name, const char *shapes,
		     int64_t seq)
{
	struct raw_op_begin b = { raw_writer_intern(w, name, ts),
				  shapes ? raw_writer_intern(w, shapes, ts) : 0, seq };
	raw_writer_emit(w, RAW_REC_OP_BEGIN, ts, &b, sizeof b);
}

static void op_end(struct raw_writer *w, uint64_t ts)
{
	raw_writer_emit(w, RAW_REC_OP_END, ts, NULL, 0);
}

/* The training thread: an op and its child, an end with no begin (its
 * begin was lost), an annotation around an op, an op a step ends, and at
 * the last an op the program died in. */
static void at_call_main(const char *run)
{
	struct raw_writer w;
	char *d = rg_path(run, "raw/700.0");
	CHECK(rg_open(&w, d, "t700.raw", 700, 700, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC,
		      "python") == 0);
	rg_process(&w, T + 0, 700, "python train.py");
	rg_recording(&w, T + 10, 1, RAW_CAUSE_START);
	op_begin(&w, T + 100, "aten::linear", NULL, 7);
	op_begin(&w, T + 150, "aten::addmm", SHAPES, -1);
	op_end(&w, T + 300);
	op_end(&w, T + 350);
	op_end(&w, T + 400);
	op_begin(&w, T + 500, "Optimizer.step#SGD.step", NULL, -1);
	op_begin(&w, T + 550, "aten::add_", NULL, -1);
	op_end(&w, T + 600);
	op_end(&w, T + 700);
	rg_step(&w, T + 1000, 1);
	op_begin(&w, T + 1500, "aten::cross_entropy_loss", NULL, 8);   /* a step ends it */
	rg_step(&w, T + 1800, 2);
	op_end(&w, T + 1850);
	op_begin(&w, T + 1900, "aten::nll_loss", NULL, 9);
	rg_mark(&w, T + 2400, "last");
	raw_writer_close(&w);
	free(d);
}

/* torch's autograd thread: the backward of linear (seq 7); the wrapper
 * without a sequence number, as torch 2.11's NVTX observer sends it. */
static void at_call_backward(const char *run)
{
	struct raw_writer w;
	char *d = rg_path(run, "raw/700.0");
	CHECK(rg_open(&w, d, "t701.raw", 700, 701, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC,
		      "pt_autograd_0") == 0);
	op_begin(&w, T + 800, "autograd::engine::evaluate_function: AddmmBackward0", NULL, -1);
	op_begin(&w, T + 810, "AddmmBackward0", NULL, 7);
	op_begin(&w, T + 820, "aten::mm", NULL, -1);
	op_end(&w, T + 850);
	op_end(&w, T + 880);
	op_end(&w, T + 900);
	raw_writer_close(&w);
	free(d);
}

static void test_ops_at_the_call(void)
{
	char *run = rg_tmpdir("ops-at-call");
	write_min_info(run);
	at_call_main(run);
	at_call_backward(run);
	struct parsed p;
	parse(run, &p);
	CHECK(p.st == PARSE_OK && p.done && p.trace);
	CHECK(p.r.ops == 9);
	if (p.trace) {
		check_span(p.trace, "aten::linear", 100, 350, 700);
		check_span(p.trace, "aten::addmm", 150, 300, 700);
		check_span(p.trace, "Optimizer.step#SGD.step", 500, 700, 700);
		check_span(p.trace, "aten::add_", 550, 600, 700);
		check_span(p.trace, "aten::mm", 820, 850, 701);
		check_span(p.trace, "AddmmBackward0", 810, 880, 701);
		/* clamped to the step, as any op is; its end then ends nothing */
		check_span(p.trace, "aten::cross_entropy_loss", 1500, 1800, 700);
		/* open at the end: it ends with its process's last record */
		check_span(p.trace, "aten::nll_loss", 1900, 2400, 700);
		const cJSON *e = op_at(p.trace, "AddmmBackward0", 810);
		const cJSON *a = e ? cJSON_GetObjectItem(e, "args") : NULL;
		CHECK(a && n_of(a, "Fwd thread id") == 700 && n_of(a, "Sequence number") == 7);
		/* the wrapper takes its node's, as Kineto gives them */
		e = op_at(p.trace, "autograd::engine::evaluate_function: AddmmBackward0", 800);
		a = e ? cJSON_GetObjectItem(e, "args") : NULL;
		CHECK(a && n_of(a, "Fwd thread id") == 700 && n_of(a, "Sequence number") == 7);
		e = op_at(p.trace, "aten::addmm", 150);
		a = e ? cJSON_GetObjectItem(e, "args") : NULL;
		CHECK(a && cJSON_GetObjectItem(a, "Input Dims") != NULL);
		e = op_at(p.trace, "Optimizer.step#SGD.step", 500);   /* an annotation: by name */
		CHECK(e && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(e, "cat")),
				  "user_annotation") == 0);
	}
	CHECK_CONTAINS(p.opstat_csv, "aten::mm,CPU,1,0.030,");
	parsed_free(&p);
	free(run);
}

/* The operator open at a moment: innermost first; one shorter than
 * torch's clock tick (no duration) holds its start (an allocation torch
 * stamped in the same microsecond). */
static void test_op_at(void)
{
	struct model_op ops[] = { { .start_ns = 100, .end_ns = 200 },
				  { .start_ns = 150, .end_ns = 150 } };
	struct model_thread t = { .ops = ops, .nops = 2 };
	CHECK(model_op_at(&t, 100) == 0 && model_op_at(&t, 149) == 0);
	CHECK(model_op_at(&t, 150) == 1);
	CHECK(model_op_at(&t, 151) == 0 && model_op_at(&t, 200) == -1 && model_op_at(&t, 99) == -1);
}

/* A process whose agent read the recording state (off: --delay) before
 * the launcher switched it on, and whose first stream opened only after
 * (a slow start): the switch is its, and opens its window. Its stream's
 * opening alone said the process began after the switch, and the window
 * was lost (seen under TSan on a loaded machine). */
static void test_switch_before_first_stream(void)
{
	const uint64_t MS = 1000000;
	char *run = rg_tmpdir("slow-start");
	write_min_info(run);
	struct raw_writer w;
	char *d = rg_path(run, "raw/launcher");
	CHECK(rg_open(&w, d, "switches.raw", 50, 50, RAW_STREAM_LAUNCHER, RAW_CLOCK_MONOTONIC,
		      "launcher") == 0);
	rg_recording(&w, B + 1 * MS, 0, RAW_CAUSE_LAUNCHER);
	rg_recording(&w, B + 20 * MS, 1, RAW_CAUSE_LAUNCHER);
	rg_recording(&w, B + 90 * MS, 0, RAW_CAUSE_LAUNCHER);
	raw_writer_close(&w);
	free(d);
	while (raw_clock_ns(CLOCK_MONOTONIC) < B + 50 * MS)   /* the stream opens late */
		usleep(1000);
	d = rg_path(run, "raw/800.0");
	CHECK(rg_open(&w, d, "t800.raw", 800, 800, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC,
		      "python") == 0);
	rg_process(&w, B + 10 * MS, 800, "python slow.py");   /* read: off, no START */
	rg_step(&w, B + 60 * MS, 1);
	rg_step(&w, B + 70 * MS, 2);
	raw_writer_close(&w);
	free(d);
	struct parsed p;
	parse(run, &p);
	CHECK(p.st == PARSE_OK && p.trace && p.r.windows == 1);
	const cJSON *e = p.trace ? find(p.trace, "X", "Window #1 (launcher)", 0) : NULL;
	CHECK(e && ns_of(e, "ts") == (int64_t)(20 * MS) && ns_of(e, "dur") == (int64_t)(70 * MS) &&
	      n_of(e, "pid") == 800);
	parsed_free(&p);
	free(run);
}

int main(void)
{
	B = raw_clock_ns(CLOCK_MONOTONIC);
	T = B + 10 * SEC;
	test_ops();
	test_no_ops();
	test_step_list();
	test_loop_hints();
	test_same_name_nesting();
	test_fw_coll_bytes();
	test_damaged_fw();
	test_op_at();
	test_ops_at_the_call();
	test_switch_before_first_stream();
	return unit_done();
}
