/*
 * The CSV tables take a row's strings as they are when the row is given:
 * one buffer reused from row to row (a name, shapes, a stack) reads, in
 * each row, as it was then. (A cache of names by their address once
 * wrote the first text's length and quoting for every later text at the
 * same address.)
 */
#include "unit/rawgen.h"

#include "outputs/tables/out_kernel.h"
#include "outputs/tables/out_op_details.h"
#include "unit/unit.h"

/* Texts of every kind of field, given in turn from one buffer: plain,
 * quoted for a comma, a quote doubled, empty, longer. */
static const char *const texts[] = { "a,b", "abcdef", "x", "say \"hi\"", "", "k1", "[[8, 4]]",
				     "void gemm<float, 128>(float const*, float*)" };
#define NTEXTS (sizeof texts / sizeof *texts)

static void test_kernel_rows(const char *dir)
{
	struct out_kernel k;
	struct out_step_find f = { 0 };
	char name[64], shapes[64];
	CHECK(out_kernel_open(&k, dir, 0) == 0);
	for (size_t i = 0; i < NTEXTS; i++) {
		snprintf(name, sizeof name, "%s", texts[i]);
		snprintf(shapes, sizeof shapes, "%s", texts[NTEXTS - 1 - i]);
		struct out_kernel_row r = { .pid = 1, .device = 0, .stream = 7,
					    .correlation = i + 1, .name = name, .type = "KERNEL",
					    .core = "SIM", .start_ns = 1000 * (i + 1),
					    .end_ns = 1000 * (i + 1) + 10, .shapes = shapes,
					    .types = "float" };
		out_kernel_row(&k, &r);
	}
	CHECK(out_kernel_write(&k, &f) == 0);
	out_kernel_free(&k);
	char *p = rg_path(dir, "kernel_details.csv"), *csv = rg_read(p);
	CHECK(csv != NULL);
	CHECK_CONTAINS(csv, "\n,0,N/A,1,7,\"a,b\",KERNEL,N/A,SIM,1.000,0.010,0.000,0,N/A,N/A,"
		       "\"void gemm<float, 128>(float const*, float*)\",float,");
	CHECK_CONTAINS(csv, "\n,0,N/A,2,7,abcdef,KERNEL,N/A,SIM,2.000,0.010,0.000,0,N/A,N/A,"
		       "\"[[8, 4]]\",float,");
	CHECK_CONTAINS(csv, "\n,0,N/A,3,7,x,KERNEL,");
	CHECK_CONTAINS(csv, "\n,0,N/A,4,7,\"say \"\"hi\"\"\",KERNEL,");
	CHECK_CONTAINS(csv, "\n,0,N/A,5,7,,KERNEL,N/A,SIM,5.000,0.010,0.000,0,N/A,N/A,"
		       "\"say \"\"hi\"\"\",float,");
	CHECK_CONTAINS(csv, "\n,0,N/A,8,7,\"void gemm<float, 128>(float const*, float*)\",KERNEL,"
		       "N/A,SIM,8.000,0.010,0.000,0,N/A,N/A,\"a,b\",float,");
	free(csv);
	free(p);
}

static void test_op_rows(const char *dir)
{
	struct out_op_details d;
	struct out_step_find f = { 0 };
	char name[64];
	CHECK(out_op_details_open(&d, dir) == 0);
	for (size_t i = 0; i < NTEXTS; i++) {
		snprintf(name, sizeof name, "%s", texts[i]);
		struct out_op op = { .pid = 1, .tid = 1, .id = i + 1, .name = name, .shapes = name,
				     .stack = name, .start_ns = 1000 * (i + 1),
				     .end_ns = 1000 * (i + 1) + 10, .self_ns = 10, .seq = -1 };
		out_op_details_row(&d, &op);
	}
	CHECK(out_op_details_close(&d, &f) == 0);
	char *p = rg_path(dir, "operator_details.csv"), *csv = rg_read(p);
	CHECK(csv != NULL);
	CHECK_CONTAINS(csv, "\n\"a,b\",\"a,b\",\"a,b\",0.010,");
	CHECK_CONTAINS(csv, "\nabcdef,abcdef,abcdef,0.010,");
	CHECK_CONTAINS(csv, "\nx,x,x,0.010,");
	CHECK_CONTAINS(csv, "\n\"say \"\"hi\"\"\",\"say \"\"hi\"\"\",\"say \"\"hi\"\"\",0.010,");
	CHECK_CONTAINS(csv, "\n,,,0.010,");
	CHECK_CONTAINS(csv, "\nk1,k1,k1,0.010,");
	free(csv);
	free(p);
}

int main(void)
{
	char *dir = rg_tmpdir("out-text");
	test_kernel_rows(dir);
	test_op_rows(dir);
	rg_rmrf(dir);
	free(dir);
	return unit_done();
}
