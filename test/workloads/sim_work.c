/*
 * sim_work STEPS [kill]: STEPS training-like steps on the sim device, each
 *   stream 1: kernel "sim_gemm" 2 ms, kernel "sim_relu" 0.5 ms,
 *             allreduce of 4 MiB over group "tp0" (ranks "0") 1 ms
 *   stream 2, launched from a second thread ("copier"):
 *             memcpy HtoD 1 MiB 1 ms, memset 64 KiB 0.3 ms
 *   malloc 1 MiB at the step's start, free at its end,
 * then both streams synchronised and prof_step(). Every figure is fixed so
 * the tests know exactly what the outputs hold. With "kill", the program
 * waits 300 ms after its work and kills itself with SIGKILL.
 */
#include <prof/prof_tx.h>
#include <prof_sim.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000ull

static void *copier(void *arg)
{
	prof_sim_stream *s2 = arg;
	prof_sim_memcpy(s2, PROF_SIM_HTOD, 1u << 20, 1 * MS);
	prof_sim_memset(s2, 64u << 10, 300000);
	return NULL;
}

static void step(prof_sim_stream *s1, prof_sim_stream *s2)
{
	uint64_t buf = prof_sim_malloc(0, 1u << 20);
	pthread_t t;
	if (pthread_create(&t, NULL, copier, s2) != 0)
		abort();
	prof_sim_kernel(s1, "sim_gemm", 2 * MS);
	prof_sim_kernel(s1, "sim_relu", MS / 2);
	prof_sim_collective(s1, PROF_SIM_ALLREDUCE, "tp0", "0", 0, -1, 4u << 20, 1 * MS);
	pthread_join(t, NULL);
	prof_sim_stream_sync(s1);
	prof_sim_stream_sync(s2);
	prof_sim_free(0, buf);
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 3;
	int kill_self = argc > 2 && strcmp(argv[2], "kill") == 0;
	prof_sim_stream *s1 = prof_sim_stream_create(0);
	prof_sim_stream *s2 = prof_sim_stream_create(0);
	if (!s1 || !s2) {
		fprintf(stderr, "sim_work: cannot create streams\n");
		return 1;
	}
	for (int n = 1; n <= steps; n++) {
		step(s1, s2);
		prof_step();
	}
	printf("sim_work: %d steps on streams %d and %d\n", steps, prof_sim_stream_id(s1),
	       prof_sim_stream_id(s2));
	fflush(stdout);
	if (kill_self) {
		struct timespec d = { 0, 300 * 1000000L };
		nanosleep(&d, NULL);
		kill(getpid(), SIGKILL);
	}
	prof_sim_stream_destroy(s1);
	prof_sim_stream_destroy(s2);
	return 0;
}
