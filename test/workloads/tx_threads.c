/*
 * tx_threads THREADS ITERS STEPS: each worker thread, named "worker-<i>",
 * does ITERS iterations of: push "outer", push "inner", mark "tick", pop,
 * pop; and starts a cross-thread range "handoff-<i>" that the next worker
 * ends. The main thread (named "main-loop") calls prof_step STEPS times
 * inside a range "step-body". Counts are exact so tests can assert them.
 */
#define _GNU_SOURCE
#include <prof/prof_tx.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int iters;
static uint64_t handoff[64];
static pthread_barrier_t started, handed;

static void *worker(void *arg)
{
	int i = (int)(long)arg;
	char name[16], range[32];
	snprintf(name, sizeof name, "worker-%d", i);
	pthread_setname_np(pthread_self(), name);
	snprintf(range, sizeof range, "handoff-%d", i);
	handoff[i] = prof_range_start(range);
	pthread_barrier_wait(&started);
	for (int k = 0; k < iters; k++) {
		prof_range_push("outer");
		prof_range_push("inner");
		prof_mark("tick");
		prof_range_pop();
		prof_range_pop();
	}
	pthread_barrier_wait(&handed);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 4;
	iters = argc > 2 ? atoi(argv[2]) : 100;
	int steps = argc > 3 ? atoi(argv[3]) : 5;
	if (threads < 1 || threads > 64)
		return 2;
	pthread_setname_np(pthread_self(), "main-loop");
	prof_add_metadata("workload", "tx_threads");
	prof_add_metadata_json("shape", "{\"threads\": 4, \"ok\": true}");
	pthread_t tid[64];
	pthread_barrier_init(&started, NULL, (unsigned)threads + 1);
	pthread_barrier_init(&handed, NULL, (unsigned)threads + 1);
	for (int i = 0; i < threads; i++)
		pthread_create(&tid[i], NULL, worker, (void *)(long)i);
	pthread_barrier_wait(&started);
	struct timespec ms = { 0, 1000000 };
	for (int s = 0; s < steps; s++) {
		prof_range_push("step-body");
		nanosleep(&ms, NULL);
		prof_range_pop();
		prof_step();
	}
	pthread_barrier_wait(&handed);
	for (int i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	/* Cross-thread ranges end on the main thread, after their starter left. */
	for (int i = 0; i < threads; i++)
		prof_range_end(handoff[i]);
	printf("tx_threads: %d threads x %d iterations, %d steps\n", threads, iters, steps);
	return 0;
}
