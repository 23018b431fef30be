/*
 * A stand-in training loop for trying prof without a framework: a data
 * loader thread prepares batches, the main thread runs "forward",
 * "backward" and "optimizer" phases and ends each step with prof_step().
 *
 *   cc train_demo.c $(pkg-config --cflags --libs prof-tx) -lpthread
 *   prof run -- ./train_demo 20
 */
#define _GNU_SOURCE
#include <prof/prof_tx.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* one per thread: the loader's and the trainer's burn apart */
static __thread volatile double sink;

static void burn_us(long us)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 1000; i++)
			sink += i * 0.5;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

static void *loader(void *arg)
{
	int steps = *(int *)arg;
	pthread_setname_np(pthread_self(), "dataloader");
	for (int i = 0; i < steps; i++) {
		uint64_t id = prof_range_start("load_batch");
		burn_us(800);
		prof_range_end(id);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 20;
	prof_add_metadata("model", "train_demo");
	prof_add_metadata_json("hyperparameters", "{\"lr\": 0.01, \"batch\": 32}");
	pthread_t t;
	pthread_create(&t, NULL, loader, &steps);
	for (int i = 0; i < steps; i++) {
		prof_range_push("forward");
		for (int layer = 0; layer < 4; layer++) {
			prof_range_push("linear");
			burn_us(300);
			prof_range_pop();
		}
		prof_range_pop();
		prof_range_push("backward");
		burn_us(1500);
		prof_range_pop();
		prof_range_push("optimizer");
		burn_us(200);
		prof_range_pop();
		if (i % 5 == 4)
			prof_mark("checkpoint");
		prof_step();
	}
	pthread_join(t, NULL);
	printf("train_demo: %d steps done\n", steps);
	return 0;
}
