/* Which rank each process image of a run belongs to: the launcher's
 * (the first PROCESS record), or the program's, given late in rank.raw
 * (torch.multiprocessing.spawn ranks, named by init_process_group). */
#include "unit/rawgen.h"
#include "unit/unit.h"

#include "ingest/parse_rank.h"
#include "raw/raw_format.h"

/* dir/<image>/<file>: a PROCESS record naming `rank` (NULL: none) and,
 * in a thread stream, a step after it. */
static void write_stream(const char *raw, const char *image, const char *file, int pid,
			 uint32_t kind, const char *rank)
{
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/%s", raw, image);
	struct raw_writer w;
	int rc = rg_open(&w, dir, file, pid, kind == RAW_STREAM_THREAD ? pid : 0, kind,
			 RAW_CLOCK_MONOTONIC, "x");
	CHECK(rc == 0);
	if (rc)
		return;
	struct raw_process p = { pid, 1, raw_writer_intern(&w, "python3 train.py", 10),
				 raw_writer_intern(&w, "/usr/bin/python3", 10),
				 rank ? raw_writer_intern(&w, rank, 10) : 0, 0 };
	raw_writer_emit(&w, RAW_REC_PROCESS, 10, &p, sizeof p);
	if (kind == RAW_STREAM_THREAD)
		rg_step(&w, 20, 1);
	raw_writer_close(&w);
}

int main(void)
{
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
