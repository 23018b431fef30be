/*
 * Device records through parse_run_dir, on a synthetic run whose dev.raw
 * is written in completion order (not by start): the trace's device
 * events, calls, flows and nesting, and every device output byte for byte
 * (kernel_details.csv, api_statistic.csv, op_statistic.csv device rows,
 * operator_details.csv device columns, memory_record.csv,
 * operator_memory.csv, device_usage.csv, step_trace_time.csv,
 * communication.json, communication_matrix.json); then a record later than
 * the reorder window, and a damaged dev.raw.
 */
#include "unit/parsed.h"

#include "raw/raw_clock.h"
#include "outputs/tables/out_kernel.h"
#include "outputs/tables/out_step_trace.h"
#include "unit/dev_expected.h"

#define MIB (1ull << 20)

/* Steps 1..3 end at 10000, 20000, 30000; recording began at 10. */
static void main_thread(const char *run)
{
	struct raw_writer w;
	char *d = rg_path(run, "raw/700.0");
	CHECK(rg_open(&w, d, "t700.raw", 700, 700, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC,
		      "python") == 0);
	rg_process(&w, T + 0, 700, "python train.py");
	rg_recording(&w, T + 10, 1, RAW_CAUSE_START);
	rg_step(&w, T + 10000, 1);
	rg_step(&w, T + 20000, 2);
	rg_step(&w, T + 30000, 3);
	raw_writer_close(&w);
	free(d);
}

static void framework(const char *run)
{
	struct raw_writer w;
	char *d = rg_path(run, "raw/700.0");
	CHECK(rg_open(&w, d, "fw.raw", 700, 0, RAW_STREAM_FRAMEWORK, RAW_CLOCK_MONOTONIC,
		      "framework") == 0);
	rg_op(&w, T + 1000, T + 3000, 700, "aten::linear", "[[8]]", NULL, NULL, -1, 0);
	rg_op(&w, T + 1100, T + 2500, 700, "aten::addmm", "[[64, 128]]", "[\"float\"]", NULL, -1, 0);
	rg_op(&w, T + 1500, T + 1600, 700, "aten::t", NULL, NULL, NULL, -1, 0);
	rg_op(&w, T + 3500, T + 4000, 700, "aten::copy_", NULL, NULL, NULL, -1, 0);
	rg_op(&w, T + 11000, T + 12000, 700, "aten::relu", NULL, NULL, NULL, -1, 0);
	rg_op(&w, T + 13000, T + 14000, 700, "aten::sync", NULL, NULL, NULL, -1, 0);
	raw_writer_close(&w);
	free(d);
}

/* dev.raw, records in the order they completed (by end). */
static void device(const char *run)
{
	struct raw_writer w;
	char *d = rg_path(run, "raw/700.0");
	CHECK(rg_open(&w, d, "dev.raw", 700, 0, RAW_STREAM_DEVICE, RAW_CLOCK_MONOTONIC,
		      "device") == 0);
	rg_dev_info(&w, T + 5, 0, "prof sim device");
	rg_dev_mem(&w, T + 1150, 700, 0, 0x1000, 2 * MIB, 0);
	rg_dev_api(&w, T + 1200, T + 1300, 1, 700, "sim_kernel");
	rg_dev_api(&w, T + 1400, T + 1550, 2, 700, "sim_kernel");
	rg_dev_api(&w, T + 2600, T + 2700, 4, 700, "sim_kernel");
	rg_dev_api(&w, T + 2800, T + 2900, 5, 700, "sim_collective");
	rg_dev_mem(&w, T + 3650, 700, 0, 0x2000, MIB, 0);
	rg_dev_api(&w, T + 3600, T + 4100, 3, 700, "sim_memcpy");
	rg_dev_task(&w, RAW_DEV_MEMCPY, T + 3800, T + 4800, 3, 0, 2, NULL, RAW_COPY_HTOD, MIB, 0);
	rg_dev_task(&w, RAW_DEV_KERNEL, T + 2000, T + 5000, 1, 0, 1, "gemm", 0, 0, 4);
	rg_dev_task(&w, RAW_DEV_KERNEL, T + 5000, T + 6000, 2, 0, 1, "bias", 0, 0, 0);
	rg_dev_task(&w, RAW_DEV_KERNEL, T + 6000, T + 7000, 4, 0, 1, "k3", 0, 0, 0);
	rg_dev_coll(&w, T + 6500, T + 9000, 5, RAW_COLL_ALLREDUCE, 3, "allreduce", "default_group",
		    "0,1", 0, -1, 4 * MIB);
	rg_dev_api(&w, T + 11100, T + 11200, 6, 700, "sim_kernel");
	rg_dev_mem(&w, T + 12000, 700, 0, 0x1000, 0, 1);
	rg_dev_task(&w, RAW_DEV_KERNEL, T + 11500, T + 12500, 6, 0, 1, "relu_k", 0, 0, 0);
	rg_dev_api(&w, T + 12600, T + 12700, 7, 700, "sim_collective");
	rg_dev_api(&w, T + 13100, T + 13500, 9, 700, "sim_sync");
	rg_dev_coll(&w, T + 13000, T + 16000, 7, RAW_COLL_RECV, 3, NULL, "pp", "4,5", 5, 4, MIB);
	rg_dev_api(&w, T + 16000, T + 16100, 8, 700, "sim_kernel");
	rg_dev_task(&w, RAW_DEV_KERNEL, T + 19000, T + 21000, 8, 0, 1, "late_k", 0, 0, 0);
	rg_dev_marker(&w, T + 21000, T + 22000, 700, "nvtx_region", "dom", 1);
	rg_dev_marker(&w, T + 22500, 0, 700, "nvtx_mark", NULL, 0);
	rg_dev_task(&w, RAW_DEV_KERNEL, T + 25000, T + 26000, 0, 0, 1, "k5", 0, 0, 0);
	rg_dev_coll(&w, T + 26000, T + 27000, 0, RAW_COLL_SEND, 3, NULL, "pp", "4,5", 5, 4, MIB);
	raw_writer_close(&w);
	free(d);
}

static void sampler(const char *run)
{
	struct raw_writer w;
	char *d = rg_path(run, "raw/launcher");
	CHECK(rg_open(&w, d, "device.raw", 50, 50, RAW_STREAM_DEVICE_SAMPLES, RAW_CLOCK_MONOTONIC,
		      "launcher") == 0);
	rg_dev_sample(&w, T + 5000, 0, 50, 1ull << 30);
	rg_dev_sample(&w, T + 15000, 0, 80, 2ull << 30);
	raw_writer_close(&w);
	free(d);
}

static char *make_run(const char *name)
{
	char *run = rg_tmpdir(name);
	write_min_info(run);
	main_thread(run);
	framework(run);
	device(run);
	sampler(run);
	return run;
}

static void dump(const struct parsed *p)
{
	const char *v[] = { p->trace_text, p->kernel_csv, p->api_csv, p->opstat_csv, p->details_csv,
			    p->memrec_csv, p->memop_csv, p->devuse_csv, p->steps_csv, p->comm_json,
			    p->matrix_json, p->log };
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		printf("=====\n%s", v[i] ? v[i] : "(null)\n");
}

static const cJSON *args_of(const cJSON *e)
{
	return cJSON_GetObjectItemCaseSensitive(e, "args");
}

static int has(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k) != NULL;
}

/* The n-th event of category cat. */
static const cJSON *by_cat(const cJSON *trace, const char *cat, int n)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(trace, "traceEvents"))
		if (strcmp(s_of(e, "cat"), cat) == 0 && n-- == 0)
			return e;
	return NULL;
}

static int count_cat(const cJSON *trace, const char *cat)
{
	int n = 0;
	while (by_cat(trace, cat, n))
		n++;
	return n;
}

/* The event of category cat whose args.correlation is corr. */
static const cJSON *by_corr(const cJSON *trace, const char *cat, int corr)
{
	const cJSON *e;
	for (int i = 0; (e = by_cat(trace, cat, i)) != NULL; i++)
		if (n_of(args_of(e), "correlation") == corr)
			return e;
	return NULL;
}

/* Device tasks: on pid = device, tid = stream, with Kineto's args. */
static void check_tasks(const cJSON *t)
{
	CHECK(count_cat(t, "kernel") == 9);          /* 6 kernels, 3 collectives */
	CHECK(count_cat(t, "gpu_memcpy") == 1);
	CHECK(count_cat(t, "cuda_runtime") == 9);
	const cJSON *e;
	for (int i = 0; (e = by_cat(t, "kernel", i)) != NULL; i++) {
		const cJSON *a = args_of(e);
		CHECK(n_of(e, "pid") == 0 && n_of(e, "tid") == n_of(a, "stream"));
		CHECK(n_of(a, "device") == 0 && n_of(a, "correlation") >= 0);
	}
	for (int i = 0; (e = by_cat(t, "cuda_runtime", i)) != NULL; i++)
		CHECK(n_of(e, "pid") == 700 && !has(args_of(e), "stream") && has(args_of(e), "cbid"));
	const cJSON *gemm = find(t, "X", "gemm", 0), *a = args_of(gemm);
	CHECK(gemm && ns_of(gemm, "ts") == rel(2000) && ns_of(gemm, "dur") == 3000);
	CHECK(n_of(a, "registers per thread") == 32 && n_of(a, "shared memory") == 4096);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(a, "grid")) == 3);
	const cJSON *cp = find(t, "X", "Memcpy HtoD", 0);
	CHECK(cp && n_of(args_of(cp), "bytes") == MIB && n_of(cp, "tid") == 2);
	/* the simulated device's collectives under NCCL's kernel names, as
	 * HTA looks for them; their own names in the args */
	const cJSON *ar = find(t, "X", "ncclKernel_AllReduce_RING_LL_Sum_float", 0);
	CHECK_STR(s_of(args_of(ar), "Process Group Name"), "default_group");
	CHECK_STR(s_of(args_of(ar), "sim name"), "allreduce");
	CHECK(n_of(args_of(ar), "bytes") == 4 * MIB && !has(args_of(ar), "Peer"));
	const cJSON *rv = NULL;
	for (int i = 0; (rv = find(t, "X", "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", i)) != NULL; i++)
		if (strcmp(s_of(args_of(rv), "sim name"), "recv") == 0)
			break;
	CHECK(rv && n_of(args_of(rv), "Peer") == 4);
	CHECK(!has(args_of(find(t, "X", "k5", 0)), "External id"));
}

/* A call and its tasks share the External id of the op that made the call,
 * and the call lies inside that op. */
static void check_links(const cJSON *t)
{
	static const int corr_ext[][2] = { { 1, 2 }, { 2, 2 }, { 3, 4 }, { 4, 1 }, { 5, 1 },
					   { 6, 5 }, { 9, 6 } };
	for (size_t i = 0; i < sizeof corr_ext / sizeof corr_ext[0]; i++) {
		const cJSON *api = by_corr(t, "cuda_runtime", corr_ext[i][0]);
		CHECK(api && n_of(args_of(api), "External id") == corr_ext[i][1]);
		const cJSON *op, *task = by_corr(t, "kernel", corr_ext[i][0]);
		if (!task)
			task = by_corr(t, "gpu_memcpy", corr_ext[i][0]);
		CHECK(corr_ext[i][0] == 9 || (task && n_of(args_of(task), "External id") ==
						corr_ext[i][1]));
		int found = 0;
		for (int k = 0; (op = by_cat(t, "cpu_op", k)) != NULL; k++)
			if (n_of(args_of(op), "External id") == corr_ext[i][1])
				found = ns_of(op, "ts") <= ns_of(api, "ts") &&
					ns_of(api, "ts") + ns_of(api, "dur") <=
					ns_of(op, "ts") + ns_of(op, "dur");
		CHECK(found);
	}
	CHECK(!has(args_of(by_corr(t, "cuda_runtime", 7)), "External id"));   /* no op */
	/* cut for nesting: at the next op's start, at its op's end */
	CHECK(ns_of(by_corr(t, "cuda_runtime", 2), "dur") == 100);
	CHECK(ns_of(by_corr(t, "cuda_runtime", 3), "dur") == 400);
	CHECK(nests(t));
}

/* Every "s" has one "f" with its id: at the call's start and the task's. */
static void check_flows(const cJSON *t)
{
	CHECK(count(t, "s", "ac2g") == 8 && count(t, "f", "ac2g") == 8);
	const cJSON *s;
	for (int i = 0; (s = find(t, "s", "ac2g", i)) != NULL; i++) {
		int id = (int)n_of(s, "id"), matched = 0;
		const cJSON *f, *api = by_corr(t, "cuda_runtime", id);
		for (int k = 0; (f = find(t, "f", "ac2g", k)) != NULL; k++) {
			if (n_of(f, "id") != id)
				continue;
			const cJSON *task = by_corr(t, "kernel", id);
			if (!task)
				task = by_corr(t, "gpu_memcpy", id);
			matched++;
			CHECK_STR(s_of(f, "bp"), "e");
			CHECK(task && ns_of(f, "ts") == ns_of(task, "ts") && n_of(f, "pid") == 0 &&
			      n_of(f, "tid") == n_of(task, "tid"));
		}
		CHECK(matched == 1 && api && ns_of(s, "ts") == ns_of(api, "ts") &&
		      n_of(s, "tid") == 700);
	}
}

static void check_meta(const struct parsed *p)
{
	const cJSON *t = p->trace;
	const char *dp = strstr(p->trace_text, "\"deviceProperties\"");
	CHECK(dp && dp < strstr(p->trace_text, "\"traceEvents\""));
	CHECK_CONTAINS(p->trace_text, "{\"id\":0,\"name\":\"prof sim device\",\"totalGlobalMem\":"
		       "17179869184,\"computeMajor\":1,\"computeMinor\":0,\"numSms\":8}");
	CHECK_STR(meta_name(t, "process_name", 0, -1), "SIM 0");
	CHECK_STR(meta_name(t, "thread_name", 0, 3), "stream 3");
	CHECK_CONTAINS(p->trace_text, "\"name\":\"process_labels\",\"pid\":0,\"tid\":0,"
		       "\"ts\":0,\"args\":{\"labels\":\"GPU 0\"}");
	CHECK_CONTAINS(p->trace_text, "\"args\":{\"sort_index\":5000000}");
	CHECK(count(t, "C", "Device Utilization") == 2);
	CHECK(count(t, "i", "[memory]") == 3);
	const cJSON *nv = find(t, "X", "nvtx_region", 0);
	CHECK(nv && ns_of(nv, "dur") == 1000 && n_of(nv, "tid") == 700);
	CHECK_STR(s_of(args_of(nv), "domain"), "dom");
	CHECK(find(t, "i", "nvtx_mark", 0) != NULL);
}

/* Hand-computed: step 1 [10, 10000): compute gemm [2000,5000] bias k3
 * [5000,7000], comm allreduce [6500,9000]: union 7000, overlap 500.
 * Step 2 [10000, 20000): relu_k [11500,12500], recv [13000,16000],
 * late_k [19000,21000] (crosses the boundary: wholly step 2): gaps 500 +
 * 3000, bubble 3000. Step 3: k5 [25000,26000], send [26000,27000]. */
static void check_tables(const struct parsed *p)
{
	CHECK_STR(p->steps_csv, OUT_STEP_TRACE_HEADER "\n"
		  "0,1,5.000,2.000,0.500,2.500,0.000,7.000,0.000,2.000,1.990\n"
		  "0,2,3.000,3.000,0.000,3.000,3.500,6.500,3.000,0.000,1.500\n"
		  "0,3,1.000,1.000,0.000,1.000,0.000,2.000,0.000,1.000,5.000\n");
	CHECK_STR(p->kernel_csv, want_kernel);
	CHECK_STR(p->api_csv, want_api);
	CHECK_STR(p->memrec_csv, want_memrec);
	CHECK_STR(p->memop_csv, want_memop);
	CHECK_STR(p->comm_json, want_comm);
	CHECK_STR(p->matrix_json, want_matrix);
	CHECK_STR(p->devuse_csv, "Timestamp(us),Device_id,Device Type,Utilization(%),"
		  "Memory Utilization(%),Memory Used(MB),Memory Total(MB),Power(W),SM Clock(MHz),"
		  "Temperature(C)\n"
		  "10000005.000,0,SIM,50,25,1024.000,16384.000,75.500,1410,55\n"
		  "10000015.000,0,SIM,80,40,2048.000,16384.000,75.500,1410,55\n");
	/* total 16.5 µs on device 0 */
	CHECK_CONTAINS(p->opstat_csv, "-1,aten::t,CPU,1,0.100,0.100,0.100,0.100,2.22\n"
		       "0,gemm,SIM,1,3.000,3.000,3.000,3.000,18.18\n"
		       "0,recv,SIM,1,3.000,3.000,3.000,3.000,18.18\n"
		       "0,allreduce,SIM,1,2.500,2.500,2.500,2.500,15.15\n"
		       "0,late_k,SIM,1,2.000,2.000,2.000,2.000,12.12\n"
		       "0,Memcpy HtoD,SIM,1,1.000,1.000,1.000,1.000,6.06\n"
		       "0,bias,SIM,1,1.000,1.000,1.000,1.000,6.06\n");
}

/* linear's calls launched k3 (1 µs) and the allreduce (2.5 µs); its child
 * addmm's gemm (3) and bias (1). Rows wait for their tasks: addmm's is
 * written at bias (after copy_ began), aten::sync's call never launched
 * anything: it waits to the end. */
static void check_details(const struct parsed *p)
{
	CHECK_STR(p->details_csv, "Name,Input Shapes,Call Stack,Host Self Duration(us),"
		  "Host Total Duration(us),Device Self Duration(us),Device Total Duration(us),"
		  "Device Self Duration With AICore(us),Device Total Duration With AICore(us),FLOPs,Step Id\n"
		  "aten::t,,,0.100,0.100,0.000,0.000,0.000,0.000,,1\n"
		  "aten::addmm,\"[[64, 128]]\",,1.300,1.400,4.000,4.000,4.000,4.000,,1\n"
		  "aten::linear,[[8]],,0.600,2.000,3.500,7.500,1.000,5.000,,1\n"
		  "aten::copy_,,,0.500,0.500,1.000,1.000,0.000,0.000,,1\n"
		  "aten::relu,,,1.000,1.000,1.000,1.000,1.000,1.000,,2\n"
		  "aten::sync,,,1.000,1.000,0.000,0.000,0.000,0.000,,2\n");
}

static void test_device_run(void)
{
	char *run = make_run("dev-run");
	struct parsed p;
	parse(run, &p);
	CHECK(p.st == PARSE_OK && p.done && p.trace);
	if (getenv("DUMP"))
		dump(&p);
	if (p.trace) {
		check_tasks(p.trace);
		check_links(p.trace);
		check_flows(p.trace);
		check_meta(&p);
	}
	check_tables(&p);
	check_details(&p);
	CHECK(p.r.dev_tasks == 10 && p.r.dev_apis == 9 && p.r.dev_late == 0);
	parsed_free(&p);
	free(run);
}

/* A task more than the reorder window (10 s) after a later-starting one
 * is still read, out of order and said; a launch whose task starts more
 * than MODEL_LAUNCH_WAIT_NS after its op ended still links the task, but
 * the op's row was written without it. */
static void test_late(void)
{
	char *run = rg_tmpdir("dev-late");
	write_min_info(run);
	main_thread(run);
	struct raw_writer w;
	char *d = rg_path(run, "raw/700.0");
	CHECK(rg_open(&w, d, "fw.raw", 700, 0, RAW_STREAM_FRAMEWORK, RAW_CLOCK_MONOTONIC, "fw") == 0);
	rg_op(&w, T + 100, T + 200, 700, "aten::slow", NULL, NULL, NULL, -1, 0);
	raw_writer_close(&w);
	CHECK(rg_open(&w, d, "dev.raw", 700, 0, RAW_STREAM_DEVICE, RAW_CLOCK_MONOTONIC, "dev") == 0);
	rg_dev_api(&w, T + 120, T + 150, 1, 700, "sim_kernel");
	rg_dev_task(&w, RAW_DEV_KERNEL, T + 2 * SEC, T + 2 * SEC + 500, 1, 0, 1, "slow_k", 0, 0, 0);
	rg_dev_task(&w, RAW_DEV_KERNEL, T + 12 * SEC, T + 12 * SEC + 10, 0, 0, 1, "k_b", 0, 0, 0);
	rg_dev_task(&w, RAW_DEV_KERNEL, T + 1 * SEC, T + 1 * SEC + 10, 0, 0, 1, "k_a", 0, 0, 0);
	raw_writer_close(&w);
	free(d);
	struct parsed p;
	parse(run, &p);
	CHECK(p.st == PARSE_OK && p.r.dev_late == 1 && p.r.dev_tasks == 3);
	CHECK_CONTAINS(p.log, "dev.raw: 1 device records came more than 10 s after later-starting "
		       "ones; they were read out of order");
	CHECK_CONTAINS(p.details_csv, "\naten::slow,,,0.100,0.100,0.000,0.000,0.000,0.000,,1\n");
	const cJSON *k = p.trace ? find(p.trace, "X", "slow_k", 0) : NULL;
	CHECK(k && n_of(args_of(k), "External id") == 1);
	CHECK(find(p.trace, "X", "k_a", 0) && find(p.trace, "X", "k_b", 0));
	CHECK(rg_count(p.kernel_csv, "\n") == 4);
	parsed_free(&p);
	free(run);
}

#define MANY 3000

/* A run named `name` with the main thread, its dev.raw open in w; *dir is
 * the stream's directory (the caller frees it and the run's path). */
static char *dev_run(const char *name, struct raw_writer *w, char **dir)
{
	char *run = rg_tmpdir(name);
	write_min_info(run);
	main_thread(run);
	*dir = rg_path(run, "raw/700.0");
	CHECK(rg_open(w, *dir, "dev.raw", 700, 0, RAW_STREAM_DEVICE, RAW_CLOCK_MONOTONIC,
		      "dev") == 0);
	return run;
}

/* A dev.raw cut short in its second chunk: what is there is read. */
static void test_damaged(void)
{
	struct raw_writer w;
	char *d, *run = dev_run("dev-damaged", &w, &d), *dev = rg_path(d, "dev.raw");
	for (int i = 0; i < MANY; i++) {   /* pairs in reverse order */
		uint64_t t0 = T + 100 + (uint64_t)(i ^ 1) * 3;
		rg_dev_api(&w, t0, t0 + 1, (uint64_t)(i + 1), 700, "sim_kernel");
		rg_dev_task(&w, RAW_DEV_KERNEL, t0 + 1, t0 + 2, (uint64_t)(i + 1), 0, 1,
			    i % 2 ? "odd" : "even", 0, 0, 0);
	}
	raw_writer_close(&w);
	rg_truncate(dev, rg_chunk_off(1) + 5000);
	struct parsed p;
	parse(run, &p);
	CHECK(p.st == PARSE_DAMAGED && p.done && p.trace);
	CHECK_CONTAINS(p.log, "dev.raw: chunk 1 at offset 0x5000: file ends inside the chunk");
	CHECK(p.r.dev_tasks > 100 && p.r.dev_tasks < MANY);
	CHECK(rg_count(p.kernel_csv, "\n") == (int)p.r.dev_tasks + 1);
	CHECK(p.trace && count_cat(p.trace, "kernel") == (int)p.r.dev_tasks);
	CHECK(p.trace && count(p.trace, "s", "ac2g") == (int)p.r.dev_tasks);
	CHECK(p.trace && nests(p.trace));
	/* in start order, though written in pairs reversed */
	CHECK_CONTAINS(p.kernel_csv, ",0,N/A,1,1,even,KERNEL,N/A,SIM,10000000.104,");
	CHECK_CONTAINS(p.kernel_csv, "\n1,0,N/A,2,1,odd,KERNEL,N/A,SIM,10000000.101,");
	parsed_free(&p);
	free(dev);
	free(d);
	free(run);
}

static void steps_800(const char *run)
{
	struct raw_writer w;
	char *d = rg_path(run, "raw/800.0");
	CHECK(rg_open(&w, d, "t800.raw", 800, 800, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC,
		      "python") == 0);
	rg_recording(&w, T + 10, 1, RAW_CAUSE_START);
	rg_step(&w, T + 10500, 1);
	rg_step(&w, T + 20500, 2);
	raw_writer_close(&w);
	free(d);
}

static void allreduces(const char *run, int pid, const uint64_t *at, int n)
{
	struct raw_writer w;
	char dir[64];
	snprintf(dir, sizeof dir, "raw/%d.0", pid);
	char *d = rg_path(run, dir);
	CHECK(rg_open(&w, d, "dev.raw", pid, 0, RAW_STREAM_DEVICE, RAW_CLOCK_MONOTONIC, "dev") == 0);
	for (int i = n; i-- > 0;)
		rg_dev_coll(&w, T + at[i], T + at[i] + 1000, 0, RAW_COLL_ALLREDUCE, 1, "allreduce",
			    "g", "0,1", pid == 700 ? 0 : 1, -1, MIB);
	raw_writer_close(&w);
	free(d);
}

/* Two processes' collectives, merged by step number; one outside every
 * step of its process is left out. */
static void test_two_procs(void)
{
	char *run = rg_tmpdir("dev-two");
	write_min_info(run);
	main_thread(run);
	steps_800(run);
	static const uint64_t a[] = { 1000, 12000 }, b[] = { 1100, 15000, 25000 };
	allreduces(run, 700, a, 2);
	allreduces(run, 800, b, 3);
	struct parsed p;
	parse(run, &p);
	CHECK(p.st == PARSE_OK);
	cJSON *c = p.comm_json ? cJSON_Parse(p.comm_json) : NULL;
	cJSON *m = p.matrix_json ? cJSON_Parse(p.matrix_json) : NULL;
	CHECK(c && cJSON_GetArraySize(c) == 2);
	const char *keys[][2] = { { "step1", "allreduce__700_1@g" }, { "step1", "allreduce__800_1@g" },
				  { "step2", "allreduce__700_2@g" }, { "step2", "allreduce__800_2@g" } };
	for (int i = 0; i < 4; i++) {
		cJSON *st = cJSON_GetObjectItemCaseSensitive(c, keys[i][0]);
		cJSON *coll = cJSON_GetObjectItemCaseSensitive(st, "collective");
		CHECK(cJSON_GetObjectItemCaseSensitive(coll, keys[i][1]) != NULL);
		CHECK(cJSON_GetArraySize(coll) == 3);   /* two ops and the total */
	}
	cJSON *top = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(m, "step1"), "collective"), "allreduce-top1@g");
	CHECK(cJSON_GetObjectItemCaseSensitive(top, "0-0") && cJSON_GetObjectItemCaseSensitive(top, "1-1"));
	/* a row per process and step; 700's step 3 had nothing on the device */
	CHECK_CONTAINS(p.steps_csv, "\n0,2,0.000,1.000,0.000,1.000,0.000,1.000,0.000,1.000,2.000,700\n"
		       "0,2,0.000,1.000,0.000,1.000,0.000,1.000,0.000,1.000,4.500,800\n"
		       "0,3,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,700\n");
	cJSON_Delete(c);
	cJSON_Delete(m);
	parsed_free(&p);
	free(run);
}

/* No device: the device files hold their header (or {}). */
static void test_no_device(void)
{
	char *run = rg_tmpdir("dev-none");
	main_thread(run);
	struct parsed p;
	parse(run, &p);
	CHECK(p.st == PARSE_OK);
	CHECK_STR(p.kernel_csv, OUT_KERNEL_HEADER "\n");
	CHECK_STR(p.api_csv, "Device_id,Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),"
		  "Variance\n");
	CHECK(p.memrec_csv && p.memop_csv && p.devuse_csv && rg_count(p.memrec_csv, "\n") == 1 &&
	      rg_count(p.memop_csv, "\n") == 1 && rg_count(p.devuse_csv, "\n") == 1);
	CHECK_STR(p.comm_json, "{}\n");
	CHECK_STR(p.matrix_json, "{}\n");
	CHECK_CONTAINS(p.steps_csv, "\n-1,1,");
	CHECK(p.trace && !strstr(p.trace_text, "deviceProperties"));
	parsed_free(&p);
	free(run);
}

/* Calls remembered after older ones were forgotten, more than the
 * correlation ring first holds: it is doubled while its numbers wrap.
 * Every task still finds its own call: the flow's "s" is at that call's
 * start. */
static void test_corr_growth(void)
{
	enum { EARLY = 100, LATE = 300 };
	struct raw_writer w;
	char *d, *run = dev_run("dev-corr", &w, &d);
	for (uint64_t i = 0; i < EARLY; i++) {   /* forgotten once the late ones come */
		uint64_t t = T + 1000 * i;
		rg_dev_api(&w, t, t + 100, 1 + i, 700, "sim_kernel");
		rg_dev_task(&w, RAW_DEV_KERNEL, t + 200, t + 300, 1 + i, 0, 1, "early", 0, 0, 0);
	}
	uint64_t t2 = T + 20 * SEC;
	for (uint64_t i = 0; i < LATE; i++)
		rg_dev_api(&w, t2 + 1000 * i, t2 + 1000 * i + 100, EARLY + 1 + i, 700, "sim_kernel");
	for (uint64_t i = 0; i < LATE; i++) {   /* every call waits for its task */
		uint64_t t = t2 + 1000 * LATE + 100 * i;
		rg_dev_task(&w, RAW_DEV_KERNEL, t, t + 50, EARLY + 1 + i, 0, 1, "late", 0, 0, 0);
	}
	raw_writer_close(&w);
	struct parsed p;
	parse(run, &p);
	CHECK(p.st == PARSE_OK && p.trace);
	if (p.trace) {
		const cJSON *t = p.trace, *s;
		CHECK(count(t, "s", "ac2g") == EARLY + LATE && count(t, "f", "ac2g") == EARLY + LATE);
		int good = 0;
		for (int i = 0; (s = find(t, "s", "ac2g", i)) != NULL; i++) {
			const cJSON *api = by_corr(t, "cuda_runtime", (int)n_of(s, "id"));
			good += api && ns_of(s, "ts") == ns_of(api, "ts");
		}
		CHECK(good == EARLY + LATE);
	}
	parsed_free(&p);
	free(d);
	free(run);
}

/* Edits a field of dev's file header in place. */
/* The writer's late_ns (how far out of order dev.raw is) lets the parse
 * hold records back only that long. Pairs written in reverse order, one
 * record exactly late_ns late: the outputs are those of a 10 s window (an
 * older writer's file, without the flag) and nothing is late. A bound
 * set too low (a damaged header) is honoured, and what it misorders is
 * said. */
static void test_late_bound(void)
{
	struct raw_writer w;
	char *d, *run = dev_run("dev-late-bound", &w, &d), *dev = rg_path(d, "dev.raw");
	for (int i = 0; i < MANY; i++) {
		uint64_t t0 = T + 100 + (uint64_t)(i ^ 1) * 3;
		rg_dev_api(&w, t0, t0 + 1, (uint64_t)(i + 1), 700, "sim_kernel");
		rg_dev_task(&w, RAW_DEV_KERNEL, t0 + 1, t0 + 2, (uint64_t)(i + 1), 0, 1,
			    i % 2 ? "odd" : "even", 0, 0, 0);
	}
	CHECK((w.hdr->flags & RAW_FILE_LATE_BOUND) && w.hdr->late_ns == 4);
	raw_writer_close(&w);
	struct parsed bound, full, low;
	parse(run, &bound);
	CHECK(bound.st == PARSE_OK && bound.r.dev_late == 0 && bound.r.dev_tasks == MANY);
	CHECK(!strstr(bound.log, "read out of order"));

	uint32_t flags = RAW_FILE_CLOSED | RAW_FILE_DEVINFO_BOUND;
	rg_poke(dev, offsetof(struct raw_file_header, flags), &flags, sizeof flags);
	parse(run, &full);
	CHECK(full.st == PARSE_OK && full.r.dev_late == 0);
	CHECK(bound.kernel_csv && full.kernel_csv && !strcmp(bound.kernel_csv, full.kernel_csv));
	CHECK(bound.trace_text && full.trace_text && !strcmp(bound.trace_text, full.trace_text));

	flags |= RAW_FILE_LATE_BOUND;
	uint64_t one = 1;   /* the pair written second in each four goes late */
	rg_poke(dev, offsetof(struct raw_file_header, flags), &flags, sizeof flags);
	rg_poke(dev, offsetof(struct raw_file_header, late_ns), &one, sizeof one);
	parse(run, &low);
	CHECK(low.st == PARSE_OK && low.r.dev_late == MANY);
	CHECK_CONTAINS(low.log, "dev.raw: 3000 device records came later than the header's "
		       "late_ns (1 ns) allows, so the header is damaged");
	parsed_free(&bound);
	parsed_free(&full);
	parsed_free(&low);
	free(dev);
	free(d);
	free(run);
}

/* Device 1's DEV_INFO in a later chunk of a long dev.raw: the writer's
 * bound covers it, and the devices are found without reading the chunks
 * after it. A file without the bound (an older writer's) is read whole;
 * a bound is honoured (set too low, it hides device 1). */
static void test_devinfo_bound(void)
{
	struct raw_writer w;
	char *d, *run = dev_run("dev-bound", &w, &d), *dev = rg_path(d, "dev.raw");
	rg_dev_info(&w, T + 1, 0, "first device");
	for (int i = 0; i < 4000; i++) {
		if (i == 1200)
			rg_dev_info(&w, T + 2 + 2 * (uint64_t)i, 1, "second device");
		rg_dev_mem(&w, T + 2 + 2 * (uint64_t)i, 700, 0, 0x1000, 4096, i % 2);
	}
	uint64_t chunks = w.hdr->chunks, bound = w.hdr->devinfo_chunks;
	CHECK(w.hdr->flags & RAW_FILE_DEVINFO_BOUND);
	raw_writer_close(&w);
	CHECK(chunks >= 8 && bound >= 2 && bound + 3 < chunks);

	struct parsed p;
	parse(run, &p);
	CHECK(p.st == PARSE_OK && p.trace);
	const char *second = p.trace ? strstr(p.trace_text, "\"name\":\"second device\"") : NULL;
	CHECK(p.trace && strstr(p.trace_text, "\"name\":\"first device\"") && second &&
	      second < strstr(p.trace_text, "\"traceEvents\""));
	parsed_free(&p);

	uint32_t flags = 0;   /* as an older writer left it */
	rg_poke(dev, offsetof(struct raw_file_header, flags), &flags, sizeof flags);
	uint64_t zero = 0;
	rg_poke(dev, offsetof(struct raw_file_header, devinfo_chunks), &zero, sizeof zero);
	parse(run, &p);
	CHECK(p.trace && strstr(p.trace_text, "\"name\":\"second device\""));
	parsed_free(&p);

	flags = RAW_FILE_DEVINFO_BOUND;
	uint64_t one = 1;
	rg_poke(dev, offsetof(struct raw_file_header, flags), &flags, sizeof flags);
	rg_poke(dev, offsetof(struct raw_file_header, devinfo_chunks), &one, sizeof one);
	parse(run, &p);
	CHECK(p.trace && strstr(p.trace_text, "\"name\":\"first device\"") &&
	      !strstr(p.trace_text, "\"name\":\"second device\""));
	parsed_free(&p);
	free(dev);
	free(d);
	free(run);
}

/* A device's properties from two records: the agent's CUPTI one (SM
 * count, cudaDeviceProp's memory, no name here) and the launcher's NVML
 * one (name, its own memory figure, no SM count). Each field comes from
 * the first record that has it, the agent's first: a record without an
 * SM count must not make the trace say 0 SMs. */
static void test_devinfo_merge(void)
{
	struct raw_writer w;
	char *d, *run = dev_run("dev-merge", &w, &d);
	struct raw_dev_info a = { .device = 0, .vendor = RAW_VENDOR_CUDA, .sm_count = 132,
		.total_mem_bytes = 150109880320ull, .compute_major = 9 };
	raw_writer_emit(&w, RAW_REC_DEV_INFO, T + 1, &a, sizeof a);
	raw_writer_close(&w);
	char *l = rg_path(run, "raw/launcher");
	CHECK(rg_open(&w, l, "device.raw", 50, 50, RAW_STREAM_DEVICE_SAMPLES, RAW_CLOCK_MONOTONIC,
		      "launcher") == 0);
	struct raw_dev_info n = { .device = 0, .vendor = RAW_VENDOR_CUDA,
		.name_id = rg_str(&w, "NVIDIA H200", T + 1), .total_mem_bytes = 150754820096ull,
		.compute_major = 9 };
	raw_writer_emit(&w, RAW_REC_DEV_INFO, T + 1, &n, sizeof n);
	raw_writer_close(&w);
	struct parsed p;
	parse(run, &p);
	CHECK(p.st == PARSE_OK && p.trace);
	CHECK_CONTAINS(p.trace_text, "[\n    {\"id\":0,\"name\":\"NVIDIA H200\","
		       "\"totalGlobalMem\":150109880320,\"computeMajor\":9,\"computeMinor\":0,"
		       "\"numSms\":132}\n  ]");
	parsed_free(&p);
	free(l);
	free(d);
	free(run);
}

int main(void)
{
	B = raw_clock_ns(CLOCK_MONOTONIC);
	T = B + 10 * SEC;
	test_device_run();
	test_late();
	test_damaged();
	test_two_procs();
	test_no_device();
	test_devinfo_bound();
	test_late_bound();
	test_corr_growth();
	test_devinfo_merge();
	return unit_done();
}
