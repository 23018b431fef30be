/* torch's own trace of an operator flush (Kineto's JSON, as torch 2.x's
 * _ProfilerResult.save writes it) turned into the agent's operator
 * records by the parse: times onto CLOCK_MONOTONIC through prof's clock
 * marks, warm-up dropped, backward by nesting, forward threads by
 * sequence number, damaged or unfinished files said and kept. */
#include "rawgen.h"
#include "unit.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>

#include "ingest/kineto_read.h"
#include "ingest/parse_kineto.h"
#include "launcher/fw_ingest.h"
#include "raw/raw_format.h"
#include "raw/raw_reader.h"

#define OFF 5000000000000LL   /* monotonic = the file's time + OFF (ns) */

/* Kineto's layout (libkineto output_json.cpp, torch 2.x): a header, then
 * events with "ts"/"dur" in us with three decimals, relative to
 * baseTimeNanoseconds; CPU ops' tid is the OS thread. */
static const char TRACE[] =
	"{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n  ],\n"
	"  \"record_shapes\": 0,\n  \"displayTimeUnit\": \"ms\",\n"
	"  \"baseTimeNanoseconds\": 1743521598000000000,\n  \"traceEvents\": [\n"
	"  {\n    \"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"prof::clock_sync\", "
	"\"pid\": 4242, \"tid\": 4242,\n    \"ts\": 1000.000, \"dur\": 10.000,\n    \"args\": {\n"
	"      \"External id\": 1, \"Record function id\": 0, \"Ev Idx\": 0\n    }\n  },\n"
	"  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::empty\", \"pid\": 4242, \"tid\": 4242,"
	" \"ts\": 1001.000, \"dur\": 0.500, \"args\": {\"External id\": 2}},\n"
	"  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::empty\", \"pid\": 4242, \"tid\": 4250,"
	" \"ts\": 1002.000, \"dur\": 0.500, \"args\": {}},\n"
	"  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::empty\", \"pid\": 4242, \"tid\": 4242,"
	" \"ts\": 1003.000, \"dur\": 0.500},\n"
	"  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::empty\", \"pid\": 4242, \"tid\": 4242,"
	" \"ts\": 1005.000, \"dur\": 0.500},\n"
	"  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::warm\", \"pid\": 4242, \"tid\": 4242,"
	" \"ts\": 1020.000, \"dur\": 1.000},\n"
	"  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"my_region\", \"pid\": 4242,"
	" \"tid\": 4242, \"ts\": 1060.000, \"dur\": 200.000},\n"
	"  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": "
	"\"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__\", \"pid\": 4242, \"tid\": 4242,"
	" \"ts\": 1070.000, \"dur\": 1.000},\n"
	"  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::linear\", \"pid\": 4242, \"tid\": 4242,"
	" \"ts\": 1100.000, \"dur\": 50.000, \"args\": {\"External id\": 9, \"Sequence number\": 7,"
	" \"Fwd thread id\": 0, \"Input Dims\": [[16, 1024], [512, 1024], [512]],"
	" \"Input type\": [\"float\", \"float\", \"float\"], \"Ev Idx\": 8}},\n"
	"  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\", \"pid\": 4242, \"tid\": 4242,"
	" \"ts\": 1110.000, \"dur\": 30.000, \"args\": {\"Sequence number\": 8, \"Fwd thread id\": 0,"
	" \"Input Dims\": [], \"Input type\": []}},\n"
	"  {\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"train.py(12): step\", \"pid\": 4242,"
	" \"tid\": 4242, \"ts\": 1100.000, \"dur\": 300.000, \"args\": {\"Python id\": 3}},\n"
	"  {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\","
	" \"pid\": 4242, \"tid\": 4242, \"ts\": 1120.250, \"args\": {\"Bytes\": 2048}},\n"
	"  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"autograd::engine::evaluate_function: "
	"AddmmBackward0\", \"pid\": 4242, \"tid\": 4250, \"ts\": 1300.000, \"dur\": 40.000},\n"
	"  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"AddmmBackward0\", \"pid\": 4242,"
	" \"tid\": 4250, \"ts\": 1301.000, \"dur\": 30.000,"
	" \"args\": {\"Sequence number\": 8, \"Fwd thread id\": 1}},\n"
	"  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 4242, \"tid\": 4250,"
	" \"ts\": 1302.000, \"dur\": 10.000},\n"
	"  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"autograd::engine::evaluate_function: "
	"XBackward0\", \"pid\": 4242, \"tid\": 4250, \"ts\": 1341.000, \"dur\": 5.000,"
	" \"args\": {\"Sequence number\": 99, \"Fwd thread id\": 3}},\n"
	"  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add_\", \"pid\": 4242, \"tid\": 4250,"
	" \"ts\": 1350.000, \"dur\": 1.000, \"args\": {\"Input Dims\": [[2, 3], [], [[1], [4]]],"
	" \"Input type\": [\"float\", \"Sc\\\"alar\", \"\"]}},\n"
	"  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::\\\"odd\\\"\\u00e9\\/x\", \"pid\": 4242,"
	" \"tid\": 4242, \"ts\": 1400.123, \"dur\": 0.877},\n"
	"  {\n    \"ph\": \"X\", \"cat\": \"Trace\", \"ts\": 1000.000, \"dur\": 500.000,\n"
	"    \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\",\n"
	"    \"name\": \"PyTorch Profiler (0)\",\n    \"args\": {\n      \"Op count\": 0\n    }\n  },\n"
	"  {\n    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n"
	"    \"pid\": \"\", \"tid\": \"\", \"ts\": 1500.000\n  }\n],\n"
	"  \"traceName\": \"/tmp/x.json\"\n}\n";

/* The marks' monotonic pairs: the second is the tightest, centred on its
 * aten::empty (1003.000..1003.500 us in the file). */
static const char META[] =
	"pid 4242\ntid 4242\nkeep_from 5000001050000\n"
	"mark 5000001000600 5000001001900\n"
	"mark 5000001002900 5000001003600\n"
	"mark 5000001004600 5000001005900\n";

struct got {
	char name[96], shapes[96], types[96];
	int64_t start, end;
	int32_t tid, fwd;
	uint32_t flags;
	int64_t seq;
};

static int read_ops(const char *path, struct got *g, int max)
{
	struct raw_file f;
	if (raw_file_open(&f, path, NULL, NULL, 0) != 0)
		return -1;
	struct raw_cursor c;
	struct raw_rec r;
	enum raw_next n;
	int k = 0;
	raw_cursor_init(&c, &f, 0);
	while ((n = raw_cursor_next(&c, &r)) != RAW_NEXT_END) {
		if (n != RAW_NEXT_RECORD || r.type != RAW_REC_OP || k == max)
			continue;
		struct raw_op op;
		memcpy(&op, r.payload, sizeof op);
		const char *name = raw_cursor_name(&c, op.name_id);
		snprintf(g[k].name, sizeof g[k].name, "%s", name ? name : "?");
		const char *sh = op.shapes_id ? raw_cursor_name(&c, op.shapes_id) : "";
		const char *ty = op.types_id ? raw_cursor_name(&c, op.types_id) : "";
		snprintf(g[k].shapes, sizeof g[k].shapes, "%s", sh ? sh : "?");
		snprintf(g[k].types, sizeof g[k].types, "%s", ty ? ty : "?");
		g[k].start = (int64_t)r.ts;
		g[k].end = (int64_t)op.end;
		g[k].tid = op.tid;
		g[k].fwd = op.fwd_tid;
		g[k].flags = op.flags;
		g[k++].seq = op.seq;
	}
	raw_cursor_free(&c);
	raw_file_close(&f);
	return k;
}

static void put(const char *dir, const char *name, const char *text)
{
	char *p = fs_join(dir, name);
	CHECK(fs_write_atomic(p, text, strlen(text)) == 0);
	free(p);
}

static int exists(const char *dir, const char *name)
{
	char *p = fs_join(dir, name);
	int rc = access(p, F_OK) == 0;
	free(p);
	return rc;
}

static const struct got *find(const struct got *g, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(g[i].name, name) == 0)
			return &g[i];
	return NULL;
}

/* A run directory PROF_TEST_TMP/<test>/raw/<image>/ (its paths, malloc'd). */
struct kdir {
	char *run, *raw, *img;
};

static struct kdir make_run(const char *test, const char *image)
{
	struct kdir r = { rg_tmpdir(test), NULL, NULL };
	r.raw = fs_join(r.run, "raw");
	r.img = fs_join(r.raw, image);
	CHECK(fs_mkdir_p(r.img) == 0);
	return r;
}

/* parse_kineto_ingest over it: its result; what it said in *said (malloc'd). */
static long ingest(const struct kdir *r, char **said)
{
	size_t len = 0;
	FILE *log = open_memstream(said, &len);
	long n = parse_kineto_ingest(r->raw, log);
	fclose(log);
	return n;
}

static void run_free(struct kdir *r)
{
	free(r->img);
	free(r->raw);
	free(r->run);
}

static void test_flush_converted(void)
{
	struct kdir rd = make_run("kineto_flush", "4242.0");
	char *img = rd.img, *buf = NULL;
	put(img, "kineto-1.json", TRACE);
	put(img, "kineto-1.meta", META);
	CHECK(ingest(&rd, &buf) == 1);
	CHECK(buf && buf[0] == '\0');   /* nothing to say */
	CHECK(!exists(img, "kineto-1.json") && !exists(img, "kineto-1.meta"));
	CHECK(!exists(img, ".fwk.partial"));
	char *fwk = fs_join(img, "fwk.raw");
	struct got g[32];
	int n = read_ops(fwk, g, 32);
	CHECK(n == 9);
	/* time order; warm-up, the marks, the range and DataLoader's span gone */
	static const char *const order[] = {
		"my_region", "aten::linear", "aten::addmm",
		"autograd::engine::evaluate_function: AddmmBackward0", "AddmmBackward0", "aten::mm",
		"autograd::engine::evaluate_function: XBackward0", "aten::add_",
		"aten::\"odd\"\xc3\xa9/x",
	};
	for (int i = 0; i < 9 && i < n; i++)
		CHECK_STR(g[i].name, order[i]);
	const struct got *o = find(g, n, "my_region");
	CHECK(o && o->start == OFF + 1060000 && o->end == OFF + 1260000);
	CHECK(o && o->flags == RAW_OP_USER && o->tid == 4242 && o->seq == -1);
	o = find(g, n, "aten::addmm");
	CHECK(o && o->flags == 0 && o->seq == 8 && o->fwd == 0);
	o = find(g, n, "AddmmBackward0");
	CHECK(o && o->flags == RAW_OP_BACKWARD && o->tid == 4250 && o->seq == 8);
	CHECK(o && o->fwd == 4242);   /* aten::addmm's thread, found by its sequence number */
	o = find(g, n, "aten::mm");
	CHECK(o && o->flags == RAW_OP_BACKWARD && o->fwd == 0);   /* inside the node */
	o = find(g, n, "autograd::engine::evaluate_function: XBackward0");
	CHECK(o && o->fwd == -3);   /* no forward op: torch's id, negated */
	o = find(g, n, "aten::add_");
	CHECK(o && o->flags == 0);
	/* record_shapes: torch's JSON texts kept as they are, prof's layout */
	CHECK_STR(o ? o->shapes : NULL, "[[2, 3], [], [[1], [4]]]");
	CHECK_STR(o ? o->types : NULL, "[\"float\", \"Sc\\\"alar\", \"\"]");
	o = find(g, n, "aten::linear");
	CHECK_STR(o ? o->shapes : NULL, "[[16, 1024], [512, 1024], [512]]");
	CHECK_STR(o ? o->types : NULL, "[\"float\", \"float\", \"float\"]");
	o = find(g, n, "aten::addmm");   /* no inputs: none, as torch's getters say */
	CHECK(o && o->shapes[0] == 0 && o->types[0] == 0);
	o = find(g, n, "aten::mm");
	CHECK(o && o->shapes[0] == 0);
	o = find(g, n, "aten::\"odd\"\xc3\xa9/x");
	CHECK(o && o->start == OFF + 1400123 && o->end == OFF + 1401000);
	free(fwk);
	free(buf);
	run_free(&rd);
}

static void test_left_in_place(void)
{
	struct kdir rd = make_run("kineto_bad", "77.0");
	char *img = rd.img, *buf = NULL;
	put(img, "kineto-1.json", "{\"traceEvents\": [ {\"ph\": \"X\", ");   /* cut short */
	put(img, "kineto-1.meta", META);
	put(img, "kineto-2.json", TRACE);                                  /* no note */
	put(img, "kineto-3.json", TRACE);
	put(img, "kineto-3.meta", "pid 77\nmark 1 2\n");                 /* no tid */
	put(img, "kineto-4.json", "{\"traceEvents\": []}");              /* nothing in it */
	put(img, "kineto-4.meta", META);
	CHECK(ingest(&rd, &buf) == 0);
	CHECK_CONTAINS(buf, "raw/77.0/kineto-1.json: torch's trace of an operator flush left out: "
			    "it is not Kineto's trace JSON");
	CHECK_CONTAINS(buf, "raw/77.0/kineto-3.json: torch's trace of an operator flush left out: "
			    "prof's note beside it cannot be read");
	CHECK_CONTAINS(buf, "raw/77.0/kineto-4.json: torch's trace of an operator flush left out: "
			    "its clock marks (\"prof::clock_sync\") are not in it");
	CHECK_CONTAINS(buf, "raw/77.0: 1 of torch's operator flush files have no note");
	CHECK(exists(img, "kineto-1.json") && exists(img, "kineto-2.json"));
	CHECK(!exists(img, "fwk.raw") && !exists(img, ".fwk.partial"));
	free(buf);
	run_free(&rd);
}

/* The launcher's conversion (fw_ingest) into a stream that cannot grow (a
 * full disk; here a file size limit): the flushes stay where they are, for
 * the parse, not counted lost into it and removed. */
static void test_launcher_leaves_flushes_its_stream_cannot_take(void)
{
	struct kdir rd = make_run("kineto_no_room", "4242.0");
	put(rd.img, "kineto-1.json", TRACE);
	put(rd.img, "kineto-1.meta", META);
	put(rd.img, "kineto-2.json", TRACE);
	put(rd.img, "kineto-2.meta", META);
	int raw_fd = open(rd.raw, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(raw_fd >= 0);
	struct rlimit was, room = { RAW_HEADER_SIZE, 0 };
	CHECK(getrlimit(RLIMIT_FSIZE, &was) == 0);
	room.rlim_max = was.rlim_max;
	signal(SIGXFSZ, SIG_IGN);   /* a write past the limit fails with EFBIG instead */
	CHECK(setrlimit(RLIMIT_FSIZE, &room) == 0);
	struct fw_ingest *f = NULL;
	CHECK(fw_ingest_start(&f, raw_fd, 10, NULL) == 0);
	uint64_t n = fw_ingest_stop(f);   /* its last look converts what is there */
	CHECK(setrlimit(RLIMIT_FSIZE, &was) == 0);
	CHECK(n == 0);
	CHECK(exists(rd.img, "kineto-1.json") && exists(rd.img, "kineto-2.json"));
	CHECK(exists(rd.img, "kineto-1.meta") && exists(rd.img, "kineto-2.meta"));
	/* with room again, the parse converts both */
	char *buf = NULL;
	CHECK(ingest(&rd, &buf) == 2);
	CHECK(!exists(rd.img, "kineto-1.json") && !exists(rd.img, "kineto-2.json"));
	free(buf);
	close(raw_fd);
	run_free(&rd);
}

static void test_reader_shapes(void)
{
	/* Kineto before 2024: absolute integer microseconds, no base */
	char old[] = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\","
		     " \"pid\": 1850067, \"tid\": 1850067, \"ts\": 1689861288827753, \"dur\": 130,"
		     " \"args\": {\"Sequence number\": 124343, \"Fwd thread id\": 0}},]}";
	struct kineto_ops ops = { 0 };
	size_t at = 0;
	CHECK(kineto_read(old, sizeof old - 1, &ops, &at) == 0);
	CHECK(ops.n == 1);
	CHECK(ops.n == 1 && ops.v[0].start_ns == 1689861288827753000LL && ops.v[0].dur_ns == 130000);
	CHECK(ops.n == 1 && ops.v[0].seq == 124343 && ops.v[0].tid == 1850067);
	kineto_ops_free(&ops);
	char bad[] = "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1e5}]}";
	CHECK(kineto_read(bad, sizeof bad - 1, &ops, &at) == -EINVAL);
	CHECK(at > 0 && at < sizeof bad);
	kineto_ops_free(&ops);
	char notjson[] = "[1, 2]";
	CHECK(kineto_read(notjson, sizeof notjson - 1, &ops, &at) == -EINVAL);
	kineto_ops_free(&ops);
}

int main(void)
{
	test_reader_shapes();
	test_flush_converted();
	test_left_in_place();
	test_launcher_leaves_flushes_its_stream_cannot_take();
	return unit_done();
}
