/* api_statistic.csv and op_statistic.csv from their accumulators: the
 * variance, per-device ratios and row order. */
#include "unit/rawgen.h"

#include "outputs/tables/out_api_stat.h"
#include "outputs/tables/out_op_stat.h"
#include "unit/unit.h"

static void test_api(void)
{
	char *dir = rg_tmpdir("stats-api");
	struct out_api_stat a;
	out_api_stat_init(&a);
	out_api_stat_add(&a, "Runtime", "cudaLaunchKernel", 1000);
	out_api_stat_add(&a, "Runtime", "cudaLaunchKernel", 3000);   /* mean 2, variance 1 µs² */
	out_api_stat_add(&a, "Driver", "cuLaunchKernel", 5000);
	out_api_stat_add(&a, "Runtime", "cudaMemcpyAsync", 2000);
	out_api_stat_add(&a, "Runtime", "cudaMemcpyAsync", 2000);
	CHECK(out_api_stat_write(&a, dir) == 0);
	char *path = rg_path(dir, "api_statistic.csv"), *t = rg_read(path);
	CHECK_STR(t, OUT_API_STAT_HEADER "\n"
		  "host,Driver,cuLaunchKernel,5.000,1,5.000,5.000,5.000,0.000\n"
		  "host,Runtime,cudaLaunchKernel,4.000,2,2.000,1.000,3.000,1.000\n"
		  "host,Runtime,cudaMemcpyAsync,4.000,2,2.000,2.000,2.000,0.000\n");
	free(t);
	free(path);
	out_api_stat_free(&a);
	free(dir);
}

static void test_op(void)
{
	char *dir = rg_tmpdir("stats-op");
	struct out_op_stat s;
	out_op_stat_init(&s);
	out_op_stat_add(&s, "aten::mm", 3000);
	out_op_stat_add(&s, "aten::add", 1000);
	out_op_stat_add_device(&s, 1, "CUDA", "gemm", 1000);
	out_op_stat_add_device(&s, 0, "CUDA", "gemm", 6000);
	out_op_stat_add_device(&s, 0, "CUDA", "gemm", 2000);
	out_op_stat_add_device(&s, 0, "CUDA", "Memcpy HtoD (Host -> Device)", 2000);
	CHECK(out_op_stat_write(&s, dir) == 0);
	char *path = rg_path(dir, "op_statistic.csv"), *t = rg_read(path);
	CHECK_STR(t, OUT_OP_STAT_HEADER "\n"
		  "-1,aten::mm,CPU,1,3.000,3.000,3.000,3.000,75.00\n"
		  "-1,aten::add,CPU,1,1.000,1.000,1.000,1.000,25.00\n"
		  "0,gemm,CUDA,2,8.000,2.000,4.000,6.000,80.00\n"
		  "0,Memcpy HtoD (Host -> Device),CUDA,1,2.000,2.000,2.000,2.000,20.00\n"
		  "1,gemm,CUDA,1,1.000,1.000,1.000,1.000,100.00\n");
	free(t);
	free(path);
	out_op_stat_free(&s);
	free(dir);
}

/* --step-list's merge: the merged sums equal those of adding every
 * duration to one table, zeroed tables add nothing. */
static void test_merge(void)
{
	static const uint64_t a[] = { 1000, 3000, 2500 }, b[] = { 7000, 500 };
	struct out_namestat one, part, all;
	out_namestat_init(&one);
	out_namestat_init(&part);
	out_namestat_init(&all);
	for (size_t i = 0; i < 3; i++) {
		out_namestat_add(&one, -1, "CPU", "op", a[i]);
		out_namestat_add(&part, -1, "CPU", "op", a[i]);
	}
	out_namestat_add(&part, -1, "CPU", "other", 9);
	CHECK(out_namestat_merge(&all, &part) == 0);
	out_namestat_zero(&part);
	for (size_t i = 0; i < 2; i++) {
		out_namestat_add(&one, -1, "CPU", "op", b[i]);
		out_namestat_add(&part, -1, "CPU", "op", b[i]);
	}
	CHECK(out_namestat_merge(&all, &part) == 0);
	out_namestat_zero(&part);
	CHECK(out_namestat_merge(&all, &part) == 0);
	CHECK(all.n == 2);
	const struct out_namestat_entry *e = all.v[0], *o = one.v[0];
	CHECK(e->count == 5 && e->total_ns == o->total_ns);
	CHECK(e->min_ns == 500 && e->max_ns == 7000);
	CHECK(e->mean_us - o->mean_us < 1e-9 && o->mean_us - e->mean_us < 1e-9);
	double v = out_namestat_variance(e) - out_namestat_variance(o);
	CHECK(v < 1e-9 && v > -1e-9);
	CHECK(all.v[1]->count == 1 && all.v[1]->total_ns == 9);
	out_namestat_free(&one);
	out_namestat_free(&part);
	out_namestat_free(&all);
}

int main(void)
{
	test_merge();
	test_api();
	test_op();
	return unit_done();
}
