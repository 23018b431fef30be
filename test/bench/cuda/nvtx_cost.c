/*
 * nvtx_cost: what one torch operator's NVTX range (push + pop, the
 * message torch 2.x's NVTX observer builds: "aten::addmm, seq = 12,
 * op_id = 345") costs the thread that makes it, through nvtx3's own
 * loader as in torch. Under prof, CUDA "initialised" on the stand-in
 * libcupti, prof's hook takes the range (backend_nvtx.c); alone, NVTX has
 * no tool and does nothing. Messages are made before the clock starts:
 * torch's formatting is torch's cost either way.
 *
 *   prof run --no-parse --sampling-interval 0 -- build/test/bench/nvtx_cost build/test/unit/libcupti-fake.so
 *   build/test/bench/nvtx_cost build/test/unit/libcupti-fake.so
 *   PROF_NVTX_VIA_CUPTI=1 prof run ...   (the stand-in's "CUPTI" gets them: a
 *                                          copy and a record, not a real CUPTI's cost)
 *
 * The median over ROUNDS batches of BATCH ranges (20 operator names in
 * turn, a new op_id each, nested two deep as an op and its child) is
 * printed per range, beside a prof_tx push+pop pair timed the same way in
 * the same process (tx_cost's figure), and their ratio: this machine's
 * speed cancels out of it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nvtx3/nvToolsExt.h>
#include <prof/prof_tx.h>

#define ROUNDS 200
#define BATCH  1000

static const char *names[20] = {
	"aten::linear", "aten::addmm", "aten::relu", "aten::t", "aten::transpose",
	"aten::as_strided", "aten::mm", "aten::add_", "aten::mul_", "aten::copy_",
	"aten::empty", "aten::view", "aten::sum", "aten::mean", "aten::cross_entropy_loss",
	"aten::log_softmax", "aten::nll_loss", "aten::zero_", "aten::fill_", "aten::detach",
};

static char msgs[BATCH][96];

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* As a CUDA program starts: libcupti mapped, cuInit's injection call. */
static void cuda_init(const char *cupti)
{
	if (!dlopen(cupti, RTLD_NOW | RTLD_GLOBAL)) {
		fprintf(stderr, "nvtx_cost: %s\n", dlerror());
		exit(2);
	}
	int (*init)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "InitializeInjection");
	if (init)
		init();
}

/* The median time of one range, over ROUNDS batches; `torch`: torch's
 * ranges through NVTX, else prof_tx pairs. */
static double time_ranges(int torch)
{
	static double samples[ROUNDS];
	unsigned op_id = 1;
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < BATCH; i++, op_id++)
			snprintf(msgs[i], sizeof msgs[i], "%s, seq = %u, op_id = %u", names[i % 20],
				 op_id / 2, op_id);
		double t0 = now_ns();
		for (int i = 0; i < BATCH; i += 2) {
			if (torch) {
				nvtxRangePushA(msgs[i]);
				nvtxRangePushA(msgs[i + 1]);
				nvtxRangePop();
				nvtxRangePop();
			} else {
				prof_range_push(names[i % 20]);
				prof_range_push(names[(i + 1) % 20]);
				prof_range_pop();
				prof_range_pop();
			}
		}
		samples[r] = (now_ns() - t0) / BATCH;
	}
	qsort(samples, ROUNDS, sizeof samples[0], cmp);
	return samples[ROUNDS / 2];
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: nvtx_cost LIBCUPTI\n");
		return 2;
	}
	cuda_init(argv[1]);
	double torch = time_ranges(1), tx = time_ranges(0);
	printf("torch op range (push+pop)  median %6.1f ns  (%d ranges)\n", torch, ROUNDS * BATCH);
	printf("prof_tx push+pop pair      median %6.1f ns\n", tx);
	if (tx > 1.0)
		printf("torch op range / prof_tx pair: %.2f\n", torch / tx);
	return 0;
}
