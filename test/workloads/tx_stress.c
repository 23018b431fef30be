/*
 * tx_stress THREADS EVENTS: THREADS worker threads (at most 256), started
 * together, each call prof_mark("m") EVENTS times; nothing else is
 * annotated and nothing is printed, so the marks the program emitted are
 * exactly THREADS x EVENTS (test_stress.py counts them).
 */
#include <prof/prof_tx.h>
#include <pthread.h>
#include <stdlib.h>

static long events;
static pthread_barrier_t go;

static void *worker(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&go);
	for (long k = 0; k < events; k++)
		prof_mark("m");
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 64;
	events = argc > 2 ? atol(argv[2]) : 100000;
	if (threads < 1 || threads > 256 || events < 0)
		return 2;
	pthread_t tid[256];
	pthread_barrier_init(&go, NULL, (unsigned)threads);
	for (int i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, worker, NULL) != 0)
			return 1;
	for (int i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	pthread_barrier_destroy(&go);
	return 0;
}
