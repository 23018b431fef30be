/*
 * The parse when memory runs out. Every allocation the parse makes
 * (malloc, calloc, realloc, strdup, strndup, asprintf, posix_memalign,
 * through bin/prof's wrappers, common/nomem_wrap.c) is made to fail in turn,
 * either that one alone or it and every one after, each in a child
 * process of its own. The parse must not crash and must keep its
 * contract: a status; PARSE_FAILED says why and leaves no parse.done;
 * any other status leaves parse.done and a trace_view.json that is
 * whole JSON; and a parse that says no more than one that nothing failed
 * writes the same outputs, byte for byte (nothing lost silently). Under ASan (the asan stage) a use after free or a leak on
 * the way out fails the child too.
 *
 * By default the first few hundred allocations and a few hundred more
 * spread over the rest are tried (fewer under ASan: OOM_HEAD,
 * OOM_SPREAD); PROF_TEST_OOM_EVERY=1 tries each one.
 * PROF_TEST_OOM_AT=K (K+: and every one after) makes only that try, in
 * the test's own process, to be looked at in a debugger, and shows what
 * the parse said; with
 * PROF_TEST_OOM_OPTS=1, under the second set of options.
 */
#include "unit/parsed.h"

#include <dirent.h>
#include <sys/wait.h>

#include "raw/raw_clock.h"

/* ---- failing allocations ---- */

static long oom_count;        /* allocations since armed */
static long oom_fail_at;      /* the one to fail (1-based); 0: none */
static int oom_after_too;     /* and every one after it */
static int oom_armed;

/* Asked by bin/prof's allocation wrappers (common/nomem_wrap.c), which
 * this test links as prof does, before each allocation: 1 to fail it. */
int prof_nomem_inject(void)
{
	if (!__atomic_load_n(&oom_armed, __ATOMIC_RELAXED))
		return 0;
	long n = __atomic_add_fetch(&oom_count, 1, __ATOMIC_RELAXED);
	return oom_fail_at && (n == oom_fail_at || (n > oom_fail_at && oom_after_too));
}

/* ---- a run with a bit of everything ---- */

#define STEPS 12

static void main_thread(const char *run)
{
	struct raw_writer w;
	char *d = rg_path(run, "raw/700.0");
	CHECK(rg_open(&w, d, "t700.raw", 700, 700, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC,
		      "python") == 0);
	rg_process(&w, T, 700, "python train.py");
	rg_recording(&w, T + 10, 1, RAW_CAUSE_START);
	rg_meta(&w, T + 20, "model", "resnet", 0);
	rg_meta(&w, T + 30, "cfg", "{\"lr\": 0.1}", RAW_METADATA_JSON);
	rg_tname(&w, T + 40, 701, "loader");
	for (uint64_t s = 0; s < STEPS; s++) {
		uint64_t t = T + 1000 + s * 10000;
		char name[32];
		snprintf(name, sizeof name, "layer%u", (unsigned)(s % 5));
		rg_push(&w, t, "forward");
		rg_push(&w, t + 100, name);
		rg_mark(&w, t + 200, "checkpoint");
		rg_pop(&w, t + 3000);
		rg_pop(&w, t + 4000);
		rg_start(&w, t + 4100, s + 1, "handoff");
		rg_step(&w, t + 9000, s + 1);
	}
	rg_push(&w, T + 200000, "open-at-end");
	raw_writer_close(&w);
	free(d);
}

static void loader_thread(const char *run)
{
	struct raw_writer w;
	char *d = rg_path(run, "raw/700.0");
	CHECK(rg_open(&w, d, "t701.raw", 700, 701, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC,
		      "python") == 0);
	for (uint64_t s = 0; s < STEPS; s++) {
		uint64_t t = T + 1000 + s * 10000;
		rg_push(&w, t + 500, "load_batch");
		rg_pop(&w, t + 900);
		rg_end(&w, t + 5000, s + 1);
	}
	raw_writer_abandon(&w);   /* as if killed */
	free(d);
}

static void framework(const char *run)
{
	struct raw_writer w;
	char *d = rg_path(run, "raw/700.0");
	CHECK(rg_open(&w, d, "fw.raw", 700, 0, RAW_STREAM_FRAMEWORK, RAW_CLOCK_MONOTONIC,
		      "framework") == 0);
	for (uint64_t s = 0; s < STEPS; s++) {
		uint64_t t = T + 1000 + s * 10000;
		int64_t seq = (int64_t)s * 2;
		rg_op(&w, t + 150, t + 2000, 700, "aten::linear", "[[8, 16], [16]]", "[\"float\"]",
		      "train.py(12): main", seq, 0);
		rg_op(&w, t + 200, t + 1500, 700, "aten::addmm", "[[64, 128]]", NULL, NULL, -1, 0);
		rg_op(&w, t + 5000, t + 8000, 702, "autograd::engine::evaluate_function: AddmmBackward0",
		      NULL, NULL, NULL, seq, 700);
	}
	raw_writer_close(&w);
	free(d);
}

static void device(const char *run)
{
	struct raw_writer w;
	char *d = rg_path(run, "raw/700.0");
	CHECK(rg_open(&w, d, "dev.raw", 700, 0, RAW_STREAM_DEVICE, RAW_CLOCK_MONOTONIC,
		      "device") == 0);
	rg_dev_info(&w, T + 5, 0, "prof sim device");
	for (uint64_t s = 0; s < STEPS; s++) {
		uint64_t t = T + 1000 + s * 10000, c = s * 4 + 1;
		rg_dev_mem(&w, t + 210, 700, 0, 0x1000 + s * 0x100, 1 << 20, 0);
		rg_dev_api(&w, t + 300, t + 400, c, 700, "sim_kernel");
		rg_dev_api(&w, t + 500, t + 600, c + 1, 700, "sim_memcpy");
		rg_dev_api(&w, t + 700, t + 800, c + 2, 700, "sim_collective");
		rg_dev_task(&w, RAW_DEV_KERNEL, t + 450, t + 2500, c, 0, 1, "gemm", 0, 0, 4);
		rg_dev_task(&w, RAW_DEV_MEMCPY, t + 2600, t + 2800, c + 1, 0, 2, NULL, RAW_COPY_HTOD,
			    1 << 20, 0);
		rg_dev_coll(&w, t + 2900, t + 4500, c + 2, RAW_COLL_ALLREDUCE, 3, "allreduce",
			    "default_group", "0,1", 0, -1, 4 << 20);
		rg_dev_marker(&w, t + 4600, t + 4700, 700, "nvtx_region", "dom", 1);
		rg_dev_mem(&w, t + 8500, 700, 0, 0x1000 + s * 0x100, 0, 1);
	}
	raw_writer_close(&w);
	free(d);
}

static void launcher(const char *run)
{
	struct raw_writer w;
	char *d = rg_path(run, "raw/launcher");
	CHECK(rg_open(&w, d, "device.raw", 50, 50, RAW_STREAM_DEVICE_SAMPLES, RAW_CLOCK_MONOTONIC,
		      "launcher") == 0);
	for (uint64_t s = 0; s < STEPS; s++)
		rg_dev_sample(&w, T + 1000 + s * 10000, 0, 40 + (uint32_t)s, (1ull << 30) + s);
	raw_writer_close(&w);
	CHECK(rg_open(&w, d, "host.raw", 50, 51, RAW_STREAM_HOST, RAW_CLOCK_MONOTONIC,
		      "host sampler") == 0);
	for (uint64_t s = 0; s < STEPS; s++)
		rg_host(&w, T + 1000 + s * 10000, 50.0 + (double)s, (100ull + s) << 20, s << 10);
	raw_writer_close(&w);
	free(d);
}

/* ---- the sweep ---- */

/* What a child's exit status says: 10 + the parse status, or one of these. */
enum { CHILD_FALSE_DAMAGE = 4, CHILD_NO_DONE = 5, CHILD_DONE_ON_FAIL = 6, CHILD_SILENT_FAIL = 7, CHILD_TRACE_BROKEN = 8,
       CHILD_SILENT_LOSS = 9 };

/* What the parse that nothing failed wrote and said: a try that says no
 * more than it did must write the same, byte for byte. */
#define REF_MAX 32
static struct {
	char name[64];
	char *text;
	size_t len;
} ref_files[REF_MAX];
static size_t nref;
static char *ref_log;
static enum parse_status ref_status;

static void ref_take(const char *run, enum parse_status st, char *log)
{
	for (size_t i = 0; i < nref; i++)
		free(ref_files[i].text);
	nref = 0;
	free(ref_log);
	ref_log = log;
	ref_status = st;
	char *out = rg_path(run, "PROFILER_OUTPUT");
	DIR *d = opendir(out);
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL && nref < REF_MAX) {
		char *p = rg_path(out, e->d_name);
		if (e->d_name[0] != '.' && strlen(e->d_name) < sizeof ref_files[0].name &&
		    fs_read_file(p, &ref_files[nref].text, &ref_files[nref].len) == 0)
			strcpy(ref_files[nref++].name, e->d_name);
		free(p);
	}
	if (d)
		closedir(d);
	free(out);
	CHECK(nref > 5);
}

/* The first output that is not the reference's, or NULL. */
static const char *ref_differs(const char *run)
{
	for (size_t i = 0; i < nref; i++) {
		char *p = out_path(run, ref_files[i].name), *text = NULL;
		size_t len = 0;
		int same = fs_read_file(p, &text, &len) == 0 && len == ref_files[i].len &&
			   memcmp(text, ref_files[i].text, len) == 0;
		free(text);
		free(p);
		if (!same)
			return ref_files[i].name;
	}
	return NULL;
}

static int trace_whole(const char *run)
{
	char *text = read_out(run, "trace_view.json");
	cJSON *j = text ? cJSON_Parse(text) : NULL;
	int ok = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(j, "traceEvents")) ||
		 cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "traceEvents"));
	cJSON_Delete(j);
	free(text);
	return ok;
}

/* The parse's options under test (their log aside). */
static struct parse_opts oom_opts;
static int oom_one;   /* PROF_TEST_OOM_AT's one try: what the parse said is shown */

/* In the child: the parse with allocation fail_at failing (and every one
 * after it with after_too), judged. Never returns. */
static void child_parse(const char *run, long fail_at, int after_too)
{
	char *logtext = NULL;
	size_t len = 0;
	FILE *log = open_memstream(&logtext, &len);
	struct parse_opts o = oom_opts;
	o.log = log ? log : stderr;
	struct parse_report r;
	oom_count = 0;
	oom_fail_at = fail_at;
	oom_after_too = after_too;
	__atomic_store_n(&oom_armed, 1, __ATOMIC_RELAXED);
	enum parse_status st = parse_run_dir(run, &o, &r);
	__atomic_store_n(&oom_armed, 0, __ATOMIC_RELAXED);
	if (log)
		fclose(log);
	char *done = out_path(run, "parse.done");
	int has_done = access(done, F_OK) == 0, code = 10 + (int)st;
	const char *lost = NULL;
	if (st == PARSE_FAILED && has_done)
		code = CHILD_DONE_ON_FAIL;
	else if (st == PARSE_FAILED && (!logtext || !*logtext))
		code = CHILD_SILENT_FAIL;
	else if (st != PARSE_FAILED && !has_done)
		code = CHILD_NO_DONE;
	else if (st != PARSE_FAILED && !trace_whole(run))
		code = CHILD_TRACE_BROKEN;
	else if (logtext && ref_log && strstr(logtext, "; skipped ") && !strstr(ref_log, "; skipped "))
		code = CHILD_FALSE_DAMAGE;   /* memory ran out: the raw data is not damaged */
	else if (st == ref_status && logtext && ref_log && strcmp(logtext, ref_log) == 0 &&
		 (lost = ref_differs(run)) != NULL)
		code = CHILD_SILENT_LOSS;
	if (lost)
		fprintf(stderr, "allocation %ld%s: %s is not what the parse wrote without it, "
			"and the parse said nothing more\n", fail_at, after_too ? " and after" : "",
			lost);
	if ((code < 10 || oom_one) && logtext)
		fprintf(stderr, "allocation %ld%s: the parse said:\n%s", fail_at,
			after_too ? " and after" : "", logtext);
	free(done);
	free(logtext);
	exit(code);   /* not _exit: LeakSanitizer looks at what is left */
}

/* One try; 0 when the child kept the contract. */
static int try_one(const char *run, long fail_at, int after_too, long *failed_parses)
{
	char *out = rg_path(run, "PROFILER_OUTPUT");
	rg_rmrf(out);
	free(out);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		child_parse(run, fail_at, after_too);
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	if (WIFEXITED(st) && WEXITSTATUS(st) >= 10 + PARSE_OK &&
	    WEXITSTATUS(st) <= 10 + PARSE_FAILED) {
		*failed_parses += WEXITSTATUS(st) == 10 + PARSE_FAILED;
		return 0;
	}
	fprintf(stderr, "allocation %ld%s failing: the parse %s %d\n", fail_at,
		after_too ? " and every one after" : "",
		WIFSIGNALED(st) ? "died of signal" : "broke its contract, code",
		WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	return -1;
}

/* How many allocations a parse that nothing fails makes; *r what it did. */
static long count_allocations(const char *run, struct parse_report *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *log = open_memstream(&text, &len);
	struct parse_opts o = oom_opts;
	o.log = log;
	oom_count = 0;
	oom_fail_at = 0;
	__atomic_store_n(&oom_armed, 1, __ATOMIC_RELAXED);
	enum parse_status st = parse_run_dir(run, &o, r);
	__atomic_store_n(&oom_armed, 0, __ATOMIC_RELAXED);
	fclose(log);
	CHECK(st == PARSE_OK);
	ref_take(run, st, text);
	return oom_count;
}

/* A try costs a fork and a parse: about 15 ms, 170 under ASan (the
 * child's leak check, fresh pages for the parse's buffers). */
#ifdef __SANITIZE_ADDRESS__
#define OOM_HEAD 40     /* every one of the first OOM_HEAD */
#define OOM_SPREAD 60   /* and about this many over the rest */
#else
#define OOM_HEAD 200
#define OOM_SPREAD 150
#endif

static void sweep(const char *run, const char *what, long n, int after_too)
{
	const char *every = getenv("PROF_TEST_OOM_EVERY");
	long head = OOM_HEAD, tried = 0, bad = 0, failed = 0;
	if (every && strcmp(every, "1") == 0)
		head = n + 1;
	long stride = n > head ? (n - head) / OOM_SPREAD + 1 : 1;
	for (long k = 1; k <= n + 1; k += k < head ? 1 : stride) {
		tried++;
		if (try_one(run, k, after_too, &failed) != 0 && ++bad >= 10)
			break;   /* enough to go on with */
	}
	printf("%s, %s: %ld of %ld allocations tried, %ld broke the contract, %ld parses "
	       "failed (said why)\n", what, after_too ? "it and every one after" : "one alone",
	       tried, n, bad, failed);
	CHECK(bad == 0);
	CHECK(tried > 0);
}

int main(void)
{
	B = raw_clock_ns(CLOCK_MONOTONIC);
	T = B + 10 * SEC;
	char *run = rg_tmpdir("parse_oom");
	write_min_info(run);
	main_thread(run);
	loader_thread(run);
	framework(run);
	device(run);
	launcher(run);
	/* the defaults; then the SQLite export, a step list, a timeline
	 * limit and an indented trace */
	static const uint64_t steps[] = { 2, 3, 5 };
	const struct parse_opts opts[2] = {
		{ .export_type = PARSE_EXPORT_TEXT },
		{ .export_type = PARSE_EXPORT_TEXT | PARSE_EXPORT_DB, .steps = steps, .nsteps = 3,
		  .timeline_limit = 20000, .pretty = 1 },
	};
	const char *what[2] = { "defaults", "db, step list, timeline limit, pretty" };
	const char *at = getenv("PROF_TEST_OOM_AT"), *with = getenv("PROF_TEST_OOM_OPTS");
	if (at && *at) {   /* one try, in this process: to look at it in a debugger */
		struct parse_report r;
		oom_opts = opts[with && strcmp(with, "1") == 0];
		oom_one = 1;
		count_allocations(run, &r);   /* as the sweep: its first parse's allocations */
		child_parse(run, atol(at), strchr(at, '+') != NULL);
	}
	for (int i = 0; i < 2; i++) {
		struct parse_report r;
		oom_opts = opts[i];
		long n = count_allocations(run, &r);
		printf("%s: the parse makes %ld allocations\n", what[i], n);
		CHECK(n > 100);
		CHECK(r.steps == (i ? 3 : STEPS));
		CHECK(r.dev_tasks == 3 * STEPS);
		sweep(run, what[i], n, 0);
		sweep(run, what[i], n, 1);
	}
	rg_rmrf(run);
	free(run);
	return unit_done();
}
