/* Which rank each process image of a run belongs to: the launcher's
 * (the first PROCESS record), or the program's, given late in rank.raw
 * (torch.multiprocessing.spawn ranks, named by init_process_group); and
 * what the summary says of a rank that stepped in several processes
 * (torchrun's restarts). */
#include "unit/parsed.h"

#include "ingest/parse_rank.h"
#include "raw/raw_clock.h"
#include "raw/raw_format.h"

static uint64_t T0;

/* dir/<image>/<file>: a PROCESS record naming `rank` (NULL: none) and,
 * in a thread stream, `steps` steps of 1 ms after it. */
static void write_stepping(const char *raw, const char *image, const char *file, int pid,
			   uint32_t kind, const char *rank, int steps)
{
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/%s", raw, image);
	struct raw_writer w;
	int rc = rg_open(&w, dir, file, pid, kind == RAW_STREAM_THREAD ? pid : 0, kind,
			 RAW_CLOCK_MONOTONIC, "x");
	CHECK(rc == 0);
	if (rc)
		return;
	struct raw_process p = { pid, 1, raw_writer_intern(&w, "python3 train.py", T0),
				 raw_writer_intern(&w, "/usr/bin/python3", T0),
				 rank ? raw_writer_intern(&w, rank, T0) : 0, 0 };
	raw_writer_emit(&w, RAW_REC_PROCESS, T0, &p, sizeof p);
	for (int i = 1; kind == RAW_STREAM_THREAD && i <= steps; i++)
		rg_step(&w, T0 + (uint64_t)i * 1000000, (uint64_t)i);
	raw_writer_close(&w);
}

static void write_stream(const char *raw, const char *image, const char *file, int pid,
			 uint32_t kind, const char *rank)
{
	write_stepping(raw, image, file, pid, kind, rank, 1);
}

/* torchrun restarted both ranks after 3 steps: four processes, two ranks. */
static void test_restarted_ranks(void)
{
	char *run = rg_tmpdir("parse_rank/restarted");
	char *raw = rg_path(run, "raw");
	write_stepping(raw, "10.0", "t10.raw", 10, RAW_STREAM_THREAD, "0", 3);
	write_stepping(raw, "11.0", "t11.raw", 11, RAW_STREAM_THREAD, "1", 3);
	write_stepping(raw, "20.0", "t20.raw", 20, RAW_STREAM_THREAD, "0", 6);
	write_stepping(raw, "21.0", "t21.raw", 21, RAW_STREAM_THREAD, "1", 6);
	struct parsed p;
	parse(run, &p);
	CHECK(p.st == PARSE_OK);
	CHECK(p.r.step_procs == 4 && p.r.step_ranks && p.r.step_rank_n == 2);
	char buf[512];
	parse_report_steps(&p.r, buf, sizeof buf);
	CHECK_STR(buf, "18 steps: 3-6 on each of 4 processes of 2 ranks");
	CHECK(parse_report_step_note(&p.r, buf, sizeof buf) == 1);
	CHECK_CONTAINS(buf, "2 ranks (rank 0 and others) stepped in several processes each");
	parsed_free(&p);
	char *csv = rg_path(run, "PROFILER_OUTPUT/step_trace_time.csv");
	char *text = rg_read(csv);
	CHECK_CONTAINS(text, "Preparing,Rank,Pid\n");
	CHECK_CONTAINS(text, ",0,10\n");
	CHECK_CONTAINS(text, ",0,20\n");
	free(text);

	/* only rank 1 restarted; rank 0 is one process */
	rg_rmrf(raw);
	write_stepping(raw, "10.0", "t10.raw", 10, RAW_STREAM_THREAD, "0", 6);
	write_stepping(raw, "11.0", "t11.raw", 11, RAW_STREAM_THREAD, "1", 2);
	write_stepping(raw, "21.0", "t21.raw", 21, RAW_STREAM_THREAD, "1", 6);
	parse(run, &p);
	CHECK(parse_report_step_note(&p.r, buf, sizeof buf) == 1);
	CHECK_CONTAINS(buf, "rank 1 stepped in 2 processes (restarted by torchrun?): rank_1/");
	parse_report_steps(&p.r, buf, sizeof buf);
	CHECK_STR(buf, "14 steps: 2-6 on each of 3 processes of 2 ranks");
	parsed_free(&p);

	/* two ranks, one process each: nothing to say */
	rg_rmrf(raw);
	write_stepping(raw, "10.0", "t10.raw", 10, RAW_STREAM_THREAD, "0", 4);
	write_stepping(raw, "11.0", "t11.raw", 11, RAW_STREAM_THREAD, "1", 4);
	parse(run, &p);
	CHECK(parse_report_step_note(&p.r, buf, sizeof buf) == 0 && buf[0] == '\0');
	parse_report_steps(&p.r, buf, sizeof buf);
	CHECK_STR(buf, "8 steps: 4 on each of 2 ranks");
	parsed_free(&p);

	/* two trainings side by side, neither a rank (a sweep) */
	rg_rmrf(raw);
	write_stepping(raw, "10.0", "t10.raw", 10, RAW_STREAM_THREAD, NULL, 5);
	write_stepping(raw, "11.0", "t11.raw", 11, RAW_STREAM_THREAD, NULL, 3);
	parse(run, &p);
	parse_report_steps(&p.r, buf, sizeof buf);
	CHECK_STR(buf, "8 steps: 3-5 on each of 2 processes");
	CHECK(parse_report_step_note(&p.r, buf, sizeof buf) == 1);
	CHECK_CONTAINS(buf, "2 processes without a rank stepped: step_trace_time.csv's Pid "
		       "column tells their rows apart");
	parsed_free(&p);
	text = rg_read(csv);
	CHECK_CONTAINS(text, "Preparing,Pid\n");
	CHECK_CONTAINS(text, ",11\n");
	free(text);
	free(csv);
	free(raw);
	free(run);
}

/* No step anywhere: the summary says how to mark them; steps that
 * --step-list left out are not "none". */
static void test_no_steps(void)
{
	char *run = rg_tmpdir("parse_rank/nosteps");
	char *raw = rg_path(run, "raw");
	write_stepping(raw, "10.0", "t10.raw", 10, RAW_STREAM_THREAD, NULL, 0);
	struct parsed p;
	char buf[512];
	parse(run, &p);
	CHECK(p.st == PARSE_OK);
	parse_report_steps(&p.r, buf, sizeof buf);
	CHECK_STR(buf, "no steps: mark each with prof_tx.step() or prof_step()");
	parsed_free(&p);
	rg_rmrf(raw);
	write_stepping(raw, "10.0", "t10.raw", 10, RAW_STREAM_THREAD, NULL, 3);
	uint64_t only[] = { 9 };
	parse_steps(run, only, 1, &p);
	parse_report_steps(&p.r, buf, sizeof buf);
	CHECK_STR(buf, "0 steps");
	parsed_free(&p);
	free(raw);
	free(run);
}

int main(void)
{
	T0 = raw_clock_ns(CLOCK_MONOTONIC);
	test_restarted_ranks();
	test_no_steps();
	char *raw = rg_tmpdir("parse_rank/raw");
	/* 100: the launcher named rank 3 */
	write_stream(raw, "100.0", "t100.raw", 100, RAW_STREAM_THREAD, "3");
	/* 200: no rank at start; init_process_group named 1 later */
	write_stream(raw, "200.0", "t200.raw", 200, RAW_STREAM_THREAD, NULL);
	write_stream(raw, "200.0", "rank.raw", 200, RAW_STREAM_FRAMEWORK, "1");
	/* 300: the spawning parent, never ranked */
	write_stream(raw, "300.0", "t300.raw", 300, RAW_STREAM_THREAD, NULL);
	/* 400: the environment's rank stands beside a different late one
	 * (the agent never writes that, but a rank.raw is read first) */
	write_stream(raw, "400.0", "t400.raw", 400, RAW_STREAM_THREAD, "5");
	write_stream(raw, "400.0", "rank.raw", 400, RAW_STREAM_FRAMEWORK, "6");

	CHECK(parse_raw_pid_rank(raw, 100) == 3);
	CHECK(parse_raw_pid_rank(raw, 200) == 1);
	CHECK(parse_raw_pid_rank(raw, 300) == -1);
	CHECK(parse_raw_pid_rank(raw, 400) == 6);
	int64_t *ranks = NULL;
	size_t n = 0;
	CHECK(parse_raw_ranks(raw, &ranks, &n) == 0);
	CHECK(n == 3 && ranks && ranks[0] == 1 && ranks[1] == 3 && ranks[2] == 6);
	free(ranks);

	/* rank 1's sources: its two streams, nothing of the others */
	struct parse_srcs s;
	CHECK(parse_discover(raw, &s, NULL) == 0);
	CHECK(parse_srcs_keep_rank(&s, 1) == 0);
	CHECK(s.n == 2);
	for (size_t i = 0; i < s.n; i++)
		CHECK(s.v[i].pid == 200);
	parse_srcs_free(&s);
	free(raw);
	return unit_done();
}
