/*
 * parse_run_dir on synthetic run directories written with the real
 * writer: the content of every output (events, names, nesting, exact
 * ts/dur text, steps, rows, metadata), then damaged and empty inputs.
 */
#include "unit/parsed.h"

#include "raw/raw_clock.h"

/* ---- the synthetic run ---- */

static void write_info(const char *run, int with_rank)
{
	char *p = rg_path(run, "profiler_info.json");
	char text[512];
	snprintf(text, sizeof text,
		 "{\"clock\": {\"raw_clock\": \"monotonic\", \"tsc_hz\": 0,\n"
		 " \"start\": {\"ticks\": %" PRIu64 ", \"mono_ns\": %" PRIu64
		 ", \"real_ns\": 1700000000000000123}},\n"
		 " \"rank\": %s, \"start_time\": \"x\",\n"
		 " \"env\": {\"OMP_NUM_THREADS\": \"4\"}}\n", B, B, with_rank ? "2" : "null");
	rg_write(p, text);
	free(p);
}

static void main_thread(const char *run)
{
	struct raw_writer w;
	char *d = rg_path(run, "raw/100.0");
	CHECK(rg_open(&w, d, "t100.raw", 100, 100, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC,
		      "python") == 0);
	rg_process(&w, T + 0, 100, "python train.py");
	rg_recording(&w, T + 5, 1, RAW_CAUSE_START);
	rg_meta(&w, T + 10, "model", "resnet", 0);
	rg_meta(&w, T + 20, "cfg", "{\"lr\": 0.1}", RAW_METADATA_JSON);
	rg_meta(&w, T + 30, "bad", "{not json", RAW_METADATA_JSON);
	rg_push(&w, T + 100, "train");
	rg_push(&w, T + 200, "fwd");
	rg_mark(&w, T + 250, "hello \"q\"\n");
	rg_pop(&w, T + 300);
	rg_step(&w, T + 1000, 1);
	rg_push(&w, T + 1100, "bwd");
	rg_pop(&w, T + 1500);
	rg_step(&w, T + 2000, 2);
	rg_pop(&w, T + 2100);            /* train */
	rg_pop(&w, T + 2200);            /* nothing open: counted, ignored */
	rg_start(&w, T + 2300, 7, "handoff");
	rg_start(&w, T + 2400, 8, "never-ends");
	rg_tname(&w, T + 2500, 101, "worker-A");
	rg_recording(&w, T + 3000, 0, RAW_CAUSE_API);
	rg_recording(&w, T + 4000, 1, RAW_CAUSE_API);   /* step 3 went unrecorded */
	rg_step(&w, T + 5000, 4);
	rg_step(&w, T + 6000, 6);        /* 5 is missing: its start is unknown */
	rg_step(&w, T + 7000, 7);
	rg_push(&w, T + 7500, "open-at-end");
	rg_mark(&w, T + 7600, "last");
	raw_writer_close(&w);
	free(d);
}

static void worker_thread(const char *run)
{
	struct raw_writer w;
	char *d = rg_path(run, "raw/100.0");
	CHECK(rg_open(&w, d, "t101.raw", 100, 101, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC,
		      "python") == 0);
	rg_push(&w, T + 150, "work");
	rg_pop(&w, T + 400);
	rg_end(&w, T + 2600, 7);
	rg_end(&w, T + 2700, 99);        /* never started: counted, ignored */
	rg_push(&w, T + 2800, "crash-open");
	rg_mark(&w, T + 2900, "m-101");
	raw_writer_abandon(&w);          /* as if killed */
	free(d);
}

static void other_streams(const char *run)
{
	struct raw_writer w;
	char *d = rg_path(run, "raw/100.1");     /* the same pid after exec */
	CHECK(rg_open(&w, d, "t100.raw", 100, 100, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC,
		      "bash") == 0);
	rg_process(&w, T + 8000, 100, "bash -c x");
	rg_mark(&w, T + 8100, "after-exec");
	raw_writer_close(&w);
	free(d);
	d = rg_path(run, "raw/200.0");
	CHECK(rg_open(&w, d, "t200.raw", 200, 200, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC,
		      "child") == 0);
	rg_recording(&w, T + 300, 1, RAW_CAUSE_START);
	rg_step(&w, T + 900, 1);
	raw_writer_close(&w);
	free(d);
	d = rg_path(run, "raw/launcher");
	CHECK(rg_open(&w, d, "host.raw", 50, 51, RAW_STREAM_HOST, RAW_CLOCK_MONOTONIC,
		      "host sampler") == 0);
	rg_host(&w, T + 0, 0.0, 100ull << 20, 0);
	rg_host(&w, T + SEC / 2, 150.0, 200ull << 20, 10240);
	raw_writer_close(&w);
	free(d);
}

static char *make_run(const char *name)
{
	char *run = rg_tmpdir(name);
	write_info(run, 1);
	main_thread(run);
	worker_thread(run);
	other_streams(run);
	return run;
}

/* ---- the clean run ---- */

static void check_top(const struct parsed *p)
{
	const char *t = p->trace_text;
	CHECK(t && strstr(t, "{\n  \"schemaVersion\": 1,\n  \"displayTimeUnit\": \"ms\",\n"
			  "  \"baseTimeNanoseconds\": 1700000000000000123,\n"
			  "  \"distributedInfo\": {\n    \"rank\": 2\n  },\n  \"traceEvents\": [\n") == t);
	CHECK_CONTAINS(t, "\n  ],\n  \"traceName\": \"trace_view.json\"\n}\n");
	CHECK(p->trace != NULL);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(p->trace, "traceEvents")) == 51);
	CHECK(p->r.events_written == 51);
}

static void check_ranges(const struct parsed *p)
{
	char want[160];
	snprintf(want, sizeof want, "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":"
		 "\"train\",\"pid\":100,\"tid\":100,\"ts\":%" PRId64 ".100,\"dur\":2.000}",
		 rel(0) / 1000);
	CHECK_CONTAINS(p->trace_text, want);
	CHECK(count(p->trace, "X", NULL) == 14);   /* 3 of them windows */
	const cJSON *fwd = find(p->trace, "X", "fwd", 0);
	CHECK(fwd && ns_of(fwd, "ts") == rel(200) && ns_of(fwd, "dur") == 100);
	const cJSON *work = find(p->trace, "X", "work", 0);
	CHECK(work && n_of(work, "tid") == 101 && ns_of(work, "dur") == 250);
	const cJSON *open = find(p->trace, "X", "open-at-end", 0);
	CHECK(open && ns_of(open, "dur") == 100);
	CHECK(open && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(open, "args"), "unfinished")));
	const cJSON *crash = find(p->trace, "X", "crash-open", 0);
	CHECK(crash && ns_of(crash, "ts") == rel(2800) && ns_of(crash, "dur") == 100);
	CHECK(nests(p->trace));
	CHECK(p->r.unmatched == 2);
	CHECK(p->r.unfinished == 3);
}

static void check_async_and_marks(const struct parsed *p)
{
	const cJSON *b = find(p->trace, "b", "handoff", 0), *e = find(p->trace, "e", "handoff", 0);
	CHECK(b && e && strcmp(s_of(b, "id"), "100.0.7") == 0 && strcmp(s_of(e, "id"), "100.0.7") == 0);
	CHECK(b && e && n_of(b, "tid") == 100 && n_of(e, "tid") == 101);
	CHECK(e && ns_of(e, "ts") == rel(2600));
	const cJSON *ne = find(p->trace, "e", "never-ends", 0);
	CHECK(ne && ns_of(ne, "ts") == rel(7600));
	CHECK(count(p->trace, "b", NULL) == 2 && count(p->trace, "e", NULL) == 2);
	const cJSON *hello = find(p->trace, "i", "hello \"q\"\n", 0);
	CHECK(hello && strcmp(s_of(hello, "s"), "t") == 0 &&
	      strcmp(s_of(hello, "cat"), "user_annotation") == 0);
	CHECK_CONTAINS(p->trace_text, "\"name\":\"hello \\\"q\\\"\\n\"");
	CHECK(find(p->trace, "i", "after-exec", 0) != NULL);
	CHECK(count(p->trace, "i", "recording resumed") == 3);
	CHECK(count(p->trace, "i", "recording paused") == 1);
	CHECK(count(p->trace, "i", NULL) == 8);
}

static void check_steps(const struct parsed *p)
{
	static const struct { const char *name; int pid; uint64_t a, b; } want[] = {
		/* step 1 starts with "train", open around it, not at T + 5 */
		{ "ProfilerStep#1", 100, 100, 1000 }, { "ProfilerStep#2", 100, 1000, 2000 },
		{ "ProfilerStep#4", 100, 4000, 5000 }, { "ProfilerStep#7", 100, 6000, 7000 },
		{ "ProfilerStep#1", 200, 300, 900 },
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		const cJSON *e = find(p->trace, "X", want[i].name, 0);
		if (e && n_of(e, "pid") != want[i].pid)
			e = find(p->trace, "X", want[i].name, 1);
		CHECK(e && n_of(e, "pid") == want[i].pid);
		CHECK(e && ns_of(e, "ts") == rel(want[i].a) &&
		      ns_of(e, "dur") == (int64_t)(want[i].b - want[i].a));
		CHECK(e && strcmp(s_of(e, "cat"), "user_annotation") == 0);
		CHECK(e && n_of(cJSON_GetObjectItemCaseSensitive(e, "args"), "Step Id") ==
		      atoi(want[i].name + 13));
	}
	CHECK(find(p->trace, "X", "ProfilerStep#6", 0) == NULL);
	CHECK(p->r.steps == 5);
	CHECK_STR(p->steps_csv,
		  "Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,"
		  "Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing,"
		  "Pid\n"
		  "-1,1,0.000,0.000,0.000,0.000,0.900,0.900,0.000,0.000,0.000,100\n"
		  "-1,1,0.000,0.000,0.000,0.000,0.600,0.600,0.000,0.000,0.000,200\n"
		  "-1,2,0.000,0.000,0.000,0.000,1.000,1.000,0.000,0.000,0.000,100\n"
		  "-1,4,0.000,0.000,0.000,0.000,1.000,1.000,0.000,0.000,0.000,100\n"
		  "-1,7,0.000,0.000,0.000,0.000,1.000,1.000,0.000,0.000,0.000,100\n");
}

static void check_names(const struct parsed *p)
{
	CHECK_STR(meta_name(p->trace, "process_name", 100, -1), "python train.py -> bash -c x");
	CHECK_STR(meta_name(p->trace, "process_name", 200, -1), "child");
	CHECK_STR(meta_name(p->trace, "process_name", 50, -1), "Host");
	CHECK_STR(meta_name(p->trace, "thread_name", 100, 100), "thread 100 (bash)");
	CHECK_STR(meta_name(p->trace, "thread_name", 100, 101), "thread 101 (worker-A)");
	CHECK_STR(meta_name(p->trace, "thread_name", 200, 200), "thread 200 (child)");
	CHECK(count(p->trace, "M", "thread_name") == 5);   /* 2 of them "prof windows" */
	CHECK_STR(meta_name(p->trace, "thread_name", 100, 0), "prof windows");
	CHECK_STR(meta_name(p->trace, "thread_name", 200, 0), "prof windows");
	CHECK(count(p->trace, "M", "process_labels") == 3);
	CHECK_CONTAINS(p->trace_text, "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":100,"
		       "\"tid\":0,\"ts\":0,\"args\":{\"labels\":\"CPU\"}}");
	CHECK_CONTAINS(p->trace_text, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":200,"
		       "\"tid\":0,\"ts\":0,\"args\":{\"sort_index\":200}}");
	CHECK(count(p->trace, "M", NULL) == 19);
}

/* Recording on (start), off (api), on (api) in pid 100; on (start) in 200. */
static void check_windows(const struct parsed *p)
{
	static const struct { const char *name; int pid; uint64_t a, b; } want[] = {
		{ "Window #1 (start)", 100, 5, 3000 }, { "Window #2 (api)", 100, 4000, 7600 },
		{ "Window #1 (start)", 200, 300, 900 },
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		const cJSON *e = find(p->trace, "X", want[i].name, 0);
		if (e && n_of(e, "pid") != want[i].pid)
			e = find(p->trace, "X", want[i].name, 1);
		CHECK(e && n_of(e, "pid") == want[i].pid && n_of(e, "tid") == 0);
		CHECK(e && strcmp(s_of(e, "cat"), "Trace") == 0);
		CHECK(e && ns_of(e, "ts") == rel(want[i].a) &&
		      ns_of(e, "dur") == (int64_t)(want[i].b - want[i].a));
	}
	CHECK(p->r.windows == 3);
}

static void check_host(const struct parsed *p)
{
	CHECK(count(p->trace, "C", NULL) == 6);
	const cJSON *cpu = find(p->trace, "C", "CPU Usage", 1);
	const cJSON *args = cpu ? cJSON_GetObjectItemCaseSensitive(cpu, "args") : NULL;
	CHECK(args && n_of(args, "process user %") == 150.0 && n_of(args, "system %") == 40.0);
	CHECK(cpu && n_of(cpu, "pid") == 50 && ns_of(cpu, "ts") == rel(SEC / 2));
	const cJSON *mem = find(p->trace, "C", "Memory Usage", 1);
	CHECK(mem && n_of(cJSON_GetObjectItemCaseSensitive(mem, "args"), "process RSS MB") == 200.0);
	char want[512];
	snprintf(want, sizeof want,
		 "Timestamp(us),Process CPU User(%%),Process CPU System(%%),Process RSS(MB),"
		 "Processes,Threads,Process Read(KB),Process Write(KB),Process Read(KB/s),"
		 "Process Write(KB/s),System CPU(%%),System Memory Used(MB),System Memory Available(MB)\n"
		 "%" PRId64 ".000,0.00,1.50,100.000,2,5,0.000,2.000,,,40.00,1024.000,3072.000\n"
		 "%" PRId64 ".000,150.00,1.50,200.000,2,5,10.000,2.000,20.000,4.000,40.00,1024.000,3072.000\n",
		 rel(0) / 1000, rel(SEC / 2) / 1000);
	CHECK_STR(p->host_csv, want);
	CHECK(p->r.host_samples == 2);
}

static void check_meta(const struct parsed *p)
{
	char *m = p->meta ? cJSON_PrintUnformatted(p->meta) : NULL;
	CHECK_STR(m, "{\"model\":\"resnet\",\"cfg\":{\"lr\":0.1},\"bad\":\"{not json\","
		  "\"ENV_VARIABLES\":{\"OMP_NUM_THREADS\":\"4\"}}");
	free(m);
	CHECK_CONTAINS(p->log, "metadata \"bad\": the value given as JSON does not parse");
}

static void test_clean_run(void)
{
	char *run = make_run("parse-clean");
	struct parsed p;
	parse(run, &p);
	CHECK(p.st == PARSE_OK);
	CHECK(p.done);
	/* t101's writer was abandoned, but image 100.1 followed 100.0: an exec
	 * ended it, not a crash (test_agent_tx covers a real SIGKILL). */
	CHECK(p.r.streams == 5 && p.r.skipped_streams == 0 && p.r.unclosed_streams == 0);
	CHECK(!strstr(p.log, "ended without close"));
	check_top(&p);
	check_ranges(&p);
	check_async_and_marks(&p);
	check_steps(&p);
	check_names(&p);
	check_windows(&p);
	check_host(&p);
	check_meta(&p);
	char *o = rg_path(run, "PROFILER_OUTPUT");
	struct stat st;
	CHECK(stat(o, &st) == 0 && (st.st_mode & 0777) == 0750);
	char *tv = out_path(run, "trace_view.json");
	CHECK(stat(tv, &st) == 0 && (st.st_mode & 0777) == 0640);
	/* A second parse gives the same bytes. */
	struct parsed again;
	parse(run, &again);
	CHECK(again.st == PARSE_OK && again.trace_text && p.trace_text &&
	      strcmp(again.trace_text, p.trace_text) == 0);
	parsed_free(&again);
	free(tv);
	free(o);
	parsed_free(&p);
	free(run);
}

/* Without profiler_info.json: ts 0 is the earliest stream's opening, no
 * env; still a clean parse. No image names a rank: a job of one, rank 0
 * (HTA then need not guess). */
static void test_no_info(void)
{
	char *run = make_run("parse-noinfo");
	char *info = rg_path(run, "profiler_info.json");
	unlink(info);
	struct parsed p;
	parse(run, &p);
	CHECK(p.st == PARSE_OK && p.done);
	CHECK(p.trace_text && strstr(p.trace_text, "\"distributedInfo\": {\n    \"rank\": 0"));
	CHECK(p.meta && !cJSON_GetObjectItemCaseSensitive(p.meta, "ENV_VARIABLES"));
	const cJSON *train = find(p.trace, "X", "train", 0);
	CHECK(train && n_of(train, "ts") > 9e6 && n_of(train, "ts") < 10.1e6);
	parsed_free(&p);
	/* half-written JSON: said, and parsed without it */
	rg_write(info, "{\"clock\": {\"tsc_hz\": 3");
	parse(run, &p);
	CHECK(p.st == PARSE_OK);
	CHECK_CONTAINS(p.log, "profiler_info.json: not a JSON object (cut short by a crash?)");
	parsed_free(&p);
	free(info);
	free(run);
}

/* User metadata stops at 50 KiB: what comes after is dropped and said. */
static void test_meta_cap(void)
{
	char *run = rg_tmpdir("parse-metacap");
	struct raw_writer w;
	char *d = rg_path(run, "raw/500.0");
	CHECK(rg_open(&w, d, "t500.raw", 500, 500, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC,
		      "m") == 0);
	char value[1024], key[16];
	memset(value, 'v', sizeof value - 1);
	value[sizeof value - 1] = '\0';
	for (int i = 0; i < 60; i++) {
		snprintf(key, sizeof key, "k%02d", i);
		rg_meta(&w, T + (uint64_t)i, key, value, 0);
	}
	rg_meta(&w, T + 100, "k00", value + 1, 0);   /* too late: over the cap */
	rg_meta(&w, T + 101, "small", "\xff", 0);   /* still fits; invalid UTF-8 */
	raw_writer_close(&w);
	struct parsed p;
	parse(run, &p);
	CHECK(p.st == PARSE_OK);
	CHECK(p.meta && cJSON_GetArraySize(p.meta) == 50);   /* 49 x 1026 bytes, and "small" */
	CHECK(p.meta && strlen(s_of(p.meta, "k00")) == 1023);
	CHECK(p.meta && !cJSON_GetObjectItemCaseSensitive(p.meta, "k49"));
	CHECK_STR(p.meta ? s_of(p.meta, "small") : NULL, "\xef\xbf\xbd");   /* U+FFFD */
	CHECK_CONTAINS(p.log, "12 metadata entries dropped: user metadata is capped at 50 KiB");
	parsed_free(&p);
	free(d);
	free(run);
}

/* ---- damaged and empty inputs ---- */

#define MARKS 2000

static char *marks_run(const char *name)
{
	char *run = rg_tmpdir(name);
	write_info(run, 0);
	struct raw_writer w;
	char *d = rg_path(run, "raw/300.0");
	CHECK(rg_open(&w, d, "t300.raw", 300, 300, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC,
		      "m") == 0);
	for (int i = 0; i < MARKS; i++)
		rg_mark(&w, T + (uint64_t)i * 10, "tick");
	raw_writer_close(&w);
	CHECK(rg_open(&w, d, "t301.raw", 300, 301, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC,
		      "n") == 0);
	rg_push(&w, T + 5, "side");
	rg_pop(&w, T + 50);
	raw_writer_close(&w);
	free(d);
	return run;
}

static char *stream_of(const char *run)
{
	return rg_path(run, "raw/300.0/t300.raw");
}

static void check_damaged(const struct parsed *p, const char *named)
{
	CHECK(p->st == PARSE_DAMAGED);
	CHECK(p->done && p->trace && p->steps_csv && p->host_csv && p->meta);
	CHECK(find(p->trace, "X", "side", 0) != NULL);   /* the other stream is whole */
	CHECK_CONTAINS(p->log, named);
}

static void test_damaged_chunk(void)
{
	char *run = marks_run("parse-chunk");
	char *s = stream_of(run);
	uint32_t junk = 0x12345678;
	rg_poke(s, rg_chunk_off(1), &junk, sizeof junk);
	struct parsed p;
	parse(run, &p);
	check_damaged(&p, "t300.raw: chunk 1 at offset 0x5000: bad chunk magic 0x12345678; "
		      "skipped 16328 bytes");
	int ticks = count(p.trace, "i", "tick");
	CHECK(ticks > 600 && ticks < MARKS - 600);
	CHECK(p.r.skipped_chunks == 1 && p.r.skipped_bytes == 16328);
	parsed_free(&p);
	free(s);
	free(run);
}

static void test_truncated_stream(void)
{
	char *run = marks_run("parse-trunc");
	char *s = stream_of(run);
	rg_truncate(s, rg_chunk_off(1) + 4000);
	struct parsed p;
	parse(run, &p);
	check_damaged(&p, "t300.raw: chunk 1 at offset 0x5000: file ends inside the chunk");
	CHECK_CONTAINS(p.log, "header says 3 chunks were begun; 1 missing");
	CHECK(count(p.trace, "i", "tick") > 600);
	parsed_free(&p);
	free(s);
	free(run);
}

static void test_bad_record(void)
{
	char *run = marks_run("parse-record");
	char *s = stream_of(run);
	uint32_t size = 4;
	long off = rg_chunk_off(0) + (long)sizeof(struct raw_chunk_header) + 32 + 50 * 24;
	rg_poke(s, off + (long)offsetof(struct raw_record, size), &size, sizeof size);
	struct parsed p;
	parse(run, &p);
	char want[96];
	snprintf(want, sizeof want, "chunk 0 at offset 0x%lx: record of type 2 has bad size 4",
		 (unsigned long)off);
	check_damaged(&p, want);
	parsed_free(&p);
	free(s);
	free(run);
}

static void test_garbage_and_bad_magic(void)
{
	char *run = marks_run("parse-garbage");
	char *s = stream_of(run);
	unsigned char junk[64];
	memset(junk, 0xee, sizeof junk);
	rg_poke(s, rg_chunk_off(2) + 100, junk, sizeof junk);
	char *bad = rg_path(run, "raw/300.0/t302.raw");
	rg_write(bad, "garbage, not a stream");
	struct parsed p;
	parse(run, &p);
	check_damaged(&p, "t302.raw: file too short for a header");
	CHECK_CONTAINS(p.log, "t300.raw: chunk 2 at offset");
	CHECK(p.r.skipped_streams == 1 && p.r.streams == 3);
	parsed_free(&p);
	free(bad);
	free(s);
	free(run);
}

static void test_failed(void)
{
	struct parsed p;
	char *run = rg_tmpdir("parse-empty");
	parse(run, &p);
	CHECK(p.st == PARSE_FAILED && !p.done && !p.trace_text);
	CHECK_CONTAINS(p.log, "parse-empty: no raw/ directory: not a prof run directory");
	parsed_free(&p);
	char *raw = rg_path(run, "raw");
	fs_mkdir_p(raw);
	parse(run, &p);
	CHECK(p.st == PARSE_FAILED);
	CHECK_CONTAINS(p.log, "raw: no raw streams (*.raw) in it");
	parsed_free(&p);
	/* only an unreadable stream; an old parse.done must not survive */
	char *d = rg_path(run, "raw/1.0"), *f = rg_path(d, "t1.raw");
	fs_mkdir_p(d);
	rg_write(f, "no");
	char *o = rg_path(run, "PROFILER_OUTPUT"), *done = rg_path(o, "parse.done");
	fs_mkdir_p(o);
	rg_write(done, "");
	parse(run, &p);
	CHECK(p.st == PARSE_FAILED && !p.done);
	CHECK_CONTAINS(p.log, "no readable raw stream");
	parsed_free(&p);
	parse("/nonexistent/run", &p);
	CHECK(p.st == PARSE_FAILED);
	CHECK_CONTAINS(p.log, "/nonexistent/run: not a directory");
	parsed_free(&p);
	free(done);
	free(o);
	free(f);
	free(d);
	free(raw);
	free(run);
}

/* TSC streams land on the monotonic clock within a few µs. */
static void test_tsc(void)
{
	char *run = rg_tmpdir("parse-tsc");
	struct raw_writer w;
	char *d = rg_path(run, "raw/400.0");
	CHECK(rg_open(&w, d, "t400.raw", 400, 400, RAW_STREAM_THREAD, RAW_CLOCK_TSC, "t") == 0);
	uint64_t mono[3];
	for (int i = 0; i < 3; i++) {
		struct timespec ms = { 0, 5000000 };
		nanosleep(&ms, NULL);
		uint64_t m0 = raw_clock_ns(CLOCK_MONOTONIC);
		uint64_t t = raw_clock_tsc();
		mono[i] = m0;
		rg_mark(&w, t, "tsc-mark");
	}
	raw_writer_close(&w);
	struct parsed p;
	parse(run, &p);   /* no profiler_info: ts 0 is the stream's open pair */
	CHECK(p.st == PARSE_OK);
	for (int i = 0; i < 3; i++) {
		const cJSON *e = find(p.trace, "i", "tsc-mark", i);
		int64_t got = e ? ns_of(e, "ts") : -1000000;
		int64_t want = (int64_t)(mono[i] - mono[0]) + ns_of(find(p.trace, "i", "tsc-mark", 0), "ts");
		CHECK(llabs(got - want) < 20000);
	}
	parsed_free(&p);
	free(d);
	free(run);
}

int main(void)
{
	B = raw_clock_ns(CLOCK_MONOTONIC);
	T = B + 10 * SEC;
	test_clean_run();
	test_no_info();
	test_meta_cap();
	test_damaged_chunk();
	test_truncated_stream();
	test_bad_record();
	test_garbage_and_bad_magic();
	test_failed();
	test_tsc();
	return unit_done();
}
