/* step_trace_time.csv: the per-step interval arithmetic and the file. */
#include "unit/rawgen.h"

#include "parse/out_step_trace.h"
#include "unit/unit.h"

static void test_host_only(void)
{
	struct out_step s = { 1, 1, 7, 1000, 5000 };
	struct out_step_row r;
	CHECK(out_step_trace_row(&s, NULL, &r) == 0);
	CHECK(r.device_id == -1 && r.step == 7);
	CHECK(r.free_ == 4000 && r.stage == 4000);
	CHECK(r.computing == 0 && r.comm == 0 && r.comm_not_overlapped == 0 && r.overlapped == 0);
	CHECK(r.bubble == 0 && r.comm_not_overlapped_excl_recv == 0 && r.preparing == 0);
}

static const struct out_interval compute[] = { { 100, 200 }, { 150, 300 }, { 400, 500 },
					       { 1000, 1100 } /* next step's */ };
static const struct out_interval comm[] = { { 250, 450 }, { 600, 700 }, { 950, 1300 } };
static const struct out_interval recv[] = { { 600, 650 } };

static void test_device(void)
{
	struct out_device d = { 3, compute, 4, comm, 2, recv, 1 };
	struct out_step s = { 1, 1, 1, 0, 1000 };
	struct out_step_row r;
	CHECK(out_step_trace_row(&s, &d, &r) == 0);
	CHECK(r.device_id == 3);
	CHECK(r.computing == 300);              /* [100,300] + [400,500] */
	CHECK(r.comm == 300);                   /* [250,450] + [600,700] */
	CHECK(r.comm_not_overlapped == 200);    /* minus [250,300] and [400,450] */
	CHECK(r.overlapped == 100);
	CHECK(r.free_ == 100);                  /* the gap [500,600] */
	CHECK(r.bubble == 50);
	CHECK(r.stage == 550);                  /* [100,700] less the bubble */
	CHECK(r.comm_not_overlapped_excl_recv == 150);
	CHECK(r.preparing == 100);
}

/* An operation belongs to the step it starts in, wholly. */
static void test_attribution(void)
{
	struct out_device d = { 0, compute, 4, comm, 3, recv, 1 };
	struct out_step s = { 1, 1, 1, 0, 1000 };
	struct out_step_row r;
	CHECK(out_step_trace_row(&s, &d, &r) == 0);
	CHECK(r.comm == 300 + 350);             /* [950,1300] starts inside */
	struct out_step s2 = { 1, 1, 2, 1000, 2000 };
	CHECK(out_step_trace_row(&s2, &d, &r) == 0);
	CHECK(r.computing == 100 && r.comm == 0 && r.preparing == 0 && r.stage == 100);
	struct out_step s3 = { 1, 1, 3, 2000, 3000 };
	CHECK(out_step_trace_row(&s3, &d, &r) == 0);   /* nothing in it */
	CHECK(r.computing == 0 && r.free_ == 0 && r.stage == 0 && r.preparing == 0);
}

static void test_file(void)
{
	char *dir = rg_tmpdir("step-trace");
	struct out_step steps[] = { { 9, 9, 2, 3000, 4500 }, { 9, 9, 1, 1000, 3000 },
				    { 8, 8, 1, 500, 2500 } };
	CHECK(out_step_trace_write(dir, steps, 3, NULL, 0) == 0);
	char *path = rg_path(dir, "step_trace_time.csv");
	char *t = rg_read(path);
	CHECK_STR(t, OUT_STEP_TRACE_HEADER "\n"
		  "-1,1,0.000,0.000,0.000,0.000,2.000,2.000,0.000,0.000,0.000\n"
		  "-1,1,0.000,0.000,0.000,0.000,2.000,2.000,0.000,0.000,0.000\n"
		  "-1,2,0.000,0.000,0.000,0.000,1.500,1.500,0.000,0.000,0.000\n");
	CHECK(steps[0].pid == 8);   /* sorted by step, then pid */
	struct stat st;
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0640);
	free(t);
	CHECK(out_step_trace_write(dir, NULL, 0, NULL, 0) == 0);
	t = rg_read(path);
	CHECK_STR(t, OUT_STEP_TRACE_HEADER "\n");
	free(t);
	struct out_device d = { 2, compute, 3, comm, 2, recv, 1 };
	struct out_step one = { 1, 1, 5, 0, 1000 };
	CHECK(out_step_trace_write(dir, &one, 1, &d, 1) == 0);
	t = rg_read(path);
	CHECK_STR(t, OUT_STEP_TRACE_HEADER "\n"
		  "2,5,0.300,0.200,0.100,0.300,0.100,0.550,0.050,0.150,0.100\n");
	free(t);
	free(path);
	free(dir);
}

int main(void)
{
	test_host_only();
	test_device();
	test_attribution();
	test_file();
	return unit_done();
}
