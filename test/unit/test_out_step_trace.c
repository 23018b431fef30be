/* step_trace_time.csv: the per-step interval arithmetic (the streaming
 * accumulator, through lists and fed directly) and the file. */
#include "unit/rawgen.h"

#include "outputs/tables/out_step_trace.h"
#include "unit/unit.h"

static void test_host_only(void)
{
	struct out_step s = { 1, 1, 7, 1000, 5000 };
	struct out_step_row r;
	out_step_trace_row(&s, NULL, &r);
	CHECK(r.device_id == -1 && r.step == 7 && r.pid == 1);
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
	out_step_trace_row(&s, &d, &r);
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
	out_step_trace_row(&s, &d, &r);
	CHECK(r.comm == 300 + 350);             /* [950,1300] starts inside */
	CHECK(r.free_ == 100 + 250);            /* and leaves the gap [700,950] */
	struct out_step s2 = { 1, 1, 2, 1000, 2000 };
	out_step_trace_row(&s2, &d, &r);
	CHECK(r.computing == 100 && r.comm == 0 && r.preparing == 0 && r.stage == 100);
	struct out_step s3 = { 1, 1, 3, 2000, 3000 };
	out_step_trace_row(&s3, &d, &r);          /* nothing in it */
	CHECK(r.computing == 0 && r.free_ == 0 && r.stage == 0 && r.preparing == 0);
}

/* Fed directly, as the parse does: hand-computed cases. */
static void row_of(const struct out_step_acc *a, uint64_t step_start, struct out_step_row *r)
{
	struct out_step s = { 1, 1, 1, step_start, step_start + 100000 };
	out_step_acc_row(a, &s, 0, r);
}

static void test_pure_compute(void)
{
	struct out_step_acc a;
	struct out_step_row r;
	out_step_acc_reset(&a);
	out_step_acc_add(&a, OUT_TASK_COMPUTE, 100, 300);
	out_step_acc_add(&a, OUT_TASK_COMPUTE, 300, 400);    /* touching: no gap */
	out_step_acc_add(&a, OUT_TASK_COMPUTE, 350, 380);    /* inside */
	row_of(&a, 40, &r);
	CHECK(r.computing == 300 && r.comm == 0 && r.overlapped == 0 && r.free_ == 0);
	CHECK(r.stage == 300 && r.bubble == 0 && r.preparing == 60);
}

/* compute [0,100] [200,300]; comm [50,250]: overlap 50 + 50 */
static void test_partial_overlap_and_gap(void)
{
	struct out_step_acc a;
	struct out_step_row r;
	out_step_acc_reset(&a);
	out_step_acc_add(&a, OUT_TASK_COMPUTE, 1000, 1100);
	out_step_acc_add(&a, OUT_TASK_COMM, 1050, 1250);
	out_step_acc_add(&a, OUT_TASK_COMPUTE, 1200, 1300);
	out_step_acc_add(&a, OUT_TASK_COMPUTE, 1500, 1600);  /* after a 200 gap */
	row_of(&a, 1000, &r);
	CHECK(r.computing == 300 && r.comm == 200);
	CHECK(r.overlapped == 100 && r.comm_not_overlapped == 100);
	CHECK(r.free_ == 200 && r.stage == 600 && r.preparing == 0);
	CHECK(r.comm_not_overlapped_excl_recv == 100);
}

/* A receive waits for the peer: comm and bubble; stage excludes it. */
static void test_recv_bubble(void)
{
	struct out_step_acc a;
	struct out_step_row r;
	out_step_acc_reset(&a);
	out_step_acc_add(&a, OUT_TASK_COMPUTE, 0, 100);
	out_step_acc_add(&a, OUT_TASK_COMM, 100, 400);       /* the receive */
	out_step_acc_add(&a, OUT_TASK_BUBBLE, 100, 400);
	out_step_acc_add(&a, OUT_TASK_COMPUTE, 400, 500);
	row_of(&a, 0, &r);
	CHECK(r.computing == 200 && r.comm == 300 && r.comm_not_overlapped == 300);
	CHECK(r.bubble == 300 && r.stage == 200 && r.free_ == 0);
	CHECK(r.comm_not_overlapped_excl_recv == 0);
}

/* A record later than the window is cut to the block in progress. */
static void test_late(void)
{
	struct out_step_acc a;
	struct out_step_row r;
	out_step_acc_reset(&a);
	out_step_acc_add(&a, OUT_TASK_COMPUTE, 500, 600);
	out_step_acc_add(&a, OUT_TASK_COMPUTE, 400, 650);    /* late: counts from 500 */
	out_step_acc_add(&a, OUT_TASK_COMPUTE, 100, 200);    /* late and wholly before: nothing */
	row_of(&a, 0, &r);
	CHECK(r.computing == 150 && r.preparing == 500);
}

static void test_file(void)
{
	char *dir = rg_tmpdir("step-trace");
	struct out_step steps[] = { { 9, 9, 2, 3000, 4500 }, { 9, 9, 1, 1000, 3000 },
				    { 8, 8, 1, 500, 2500 } };
	struct out_step_row rows[4];
	for (int i = 0; i < 3; i++)
		out_step_host_row(&steps[i], &rows[i]);
	CHECK(out_step_trace_write(dir, rows, 3) == 0);
	char *path = rg_path(dir, "step_trace_time.csv");
	char *t = rg_read(path);
	/* two processes without a rank step: the Pid column tells their rows apart */
	CHECK_STR(t, OUT_STEP_TRACE_HEADER OUT_STEP_TRACE_PID "\n"
		  "-1,1,0.000,0.000,0.000,0.000,2.000,2.000,0.000,0.000,0.000,8\n"
		  "-1,1,0.000,0.000,0.000,0.000,2.000,2.000,0.000,0.000,0.000,9\n"
		  "-1,2,0.000,0.000,0.000,0.000,1.500,1.500,0.000,0.000,0.000,9\n");
	CHECK(rows[0].pid == 8);   /* sorted by device, step, then pid */
	free(t);
	/* one process: Ascend's header as it is */
	CHECK(out_step_trace_write(dir, rows + 1, 2) == 0);
	t = rg_read(path);
	CHECK_STR(t, OUT_STEP_TRACE_HEADER "\n"
		  "-1,1,0.000,0.000,0.000,0.000,2.000,2.000,0.000,0.000,0.000\n"
		  "-1,2,0.000,0.000,0.000,0.000,1.500,1.500,0.000,0.000,0.000\n");
	free(t);
	/* two ranks, one of them restarted (two processes): Rank, then Pid */
	rows[0].rank = 1;   /* pid 8 */
	rows[1].rank = rows[2].rank = 0;   /* pid 9 */
	out_step_host_row(&(struct out_step){ 7, 7, 1, 0, 4000 }, &rows[3]);
	rows[3].rank = 1;
	CHECK(out_step_trace_write(dir, rows, 4) == 0);
	t = rg_read(path);
	CHECK_STR(t, OUT_STEP_TRACE_HEADER OUT_STEP_TRACE_RANK OUT_STEP_TRACE_PID "\n"
		  "-1,1,0.000,0.000,0.000,0.000,2.000,2.000,0.000,0.000,0.000,0,9\n"
		  "-1,1,0.000,0.000,0.000,0.000,4.000,4.000,0.000,0.000,0.000,1,7\n"
		  "-1,1,0.000,0.000,0.000,0.000,2.000,2.000,0.000,0.000,0.000,1,8\n"
		  "-1,2,0.000,0.000,0.000,0.000,1.500,1.500,0.000,0.000,0.000,0,9\n");
	struct stat st;
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0640);
	free(t);
	CHECK(out_step_trace_write(dir, NULL, 0) == 0);
	t = rg_read(path);
	CHECK_STR(t, OUT_STEP_TRACE_HEADER "\n");
	free(t);
	struct out_device d = { 2, compute, 3, comm, 2, recv, 1 };
	struct out_step one = { 1, 1, 5, 0, 1000 };
	out_step_trace_row(&one, &d, &rows[0]);
	out_step_host_row(&one, &rows[1]);
	CHECK(out_step_trace_write(dir, rows, 2) == 0);
	t = rg_read(path);
	CHECK_STR(t, OUT_STEP_TRACE_HEADER "\n"
		  "-1,5,0.000,0.000,0.000,0.000,1.000,1.000,0.000,0.000,0.000\n"
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
	test_pure_compute();
	test_partial_overlap_and_gap();
	test_recv_bubble();
	test_late();
	test_file();
	return unit_done();
}
