/*
 * tx_cost: the cost of one prof_mark and of one prof_range_push+pop pair,
 * with 1 and 2 threads. Run it under prof to measure the agent, and alone
 * to measure the no-op library:
 *
 *   prof run --no-parse --sampling-interval 0 -- build/test/bench/tx_cost
 *   build/test/bench/tx_cost
 *
 * Each thread times ROUNDS batches of BATCH calls; a batch's time over
 * BATCH is one sample (page faults and chunk changes included), and the
 * median of the samples is printed. Targets: mark <= 30 ns, pair <= 50 ns.
 */
#include <prof/prof_tx.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS 400
#define BATCH  1000

enum op { OP_MARK, OP_PAIR };
struct job { enum op op; double samples[ROUNDS]; pthread_barrier_t *go; };

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static void *run_job(void *arg)
{
	struct job *j = arg;
	pthread_barrier_wait(j->go);
	for (int r = 0; r < ROUNDS; r++) {
		double t0 = now_ns();
		if (j->op == OP_MARK)
			for (int i = 0; i < BATCH; i++)
				prof_mark("bench-mark");
		else
			for (int i = 0; i < BATCH; i++) {
				prof_range_push("bench-range");
				prof_range_pop();
			}
		j->samples[r] = (now_ns() - t0) / BATCH;
	}
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void measure(enum op op, int threads)
{
	struct job jobs[2];
	pthread_t tid[2];
	pthread_barrier_t go;
	pthread_barrier_init(&go, NULL, (unsigned)threads);
	for (int i = 0; i < threads; i++) {
		jobs[i].op = op;
		jobs[i].go = &go;
		pthread_create(&tid[i], NULL, run_job, &jobs[i]);
	}
	static double all[2 * ROUNDS];
	int n = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(tid[i], NULL);
		memcpy(all + n, jobs[i].samples, sizeof jobs[i].samples);
		n += ROUNDS;
	}
	qsort(all, (size_t)n, sizeof all[0], cmp);
	printf("%-14s threads=%d  median %6.1f ns  p90 %6.1f ns  (%d calls per thread)\n",
	       op == OP_MARK ? "mark" : "push+pop pair", threads, all[n / 2], all[n * 9 / 10],
	       ROUNDS * BATCH);
	pthread_barrier_destroy(&go);
}

int main(void)
{
	printf("tx_cost: %s\n", getenv("PROF_AGENT_RUN_DIR") ? "under prof (agent)" : "without prof (no-op library)");
	for (int threads = 1; threads <= 2; threads++) {
		measure(OP_MARK, threads);
		measure(OP_PAIR, threads);
	}
	return 0;
}
