/*
 * sim_ranks STEPS SLOW_RANK PHASE: one rank of a data-parallel job on the
 * simulated device, its rank from RANK (else 0). Each step: a 20 ms kernel,
 * then a 10 ms allreduce over group "world" (ranks "0,1,2,3") on the same
 * stream, so Computing 20 ms, Communication(Not Overlapped) 10 ms, Free 0.
 * The rank SLOW_RANK is slow in PHASE:
 *   compute  an extra 15 ms kernel before the allreduce (Computing +15 ms)
 *   free     a 15 ms sleep between the kernel and the allreduce (Free +15 ms)
 *   none     no rank is slow
 */
#include <prof/prof_tx.h>
#include <prof_sim.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MS 1000000ull

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: sim_ranks STEPS SLOW_RANK compute|free|none\n");
		return 2;
	}
	int steps = atoi(argv[1]), slow_rank = atoi(argv[2]);
	const char *phase = argv[3];
	const char *env = getenv("RANK");
	int rank = env ? atoi(env) : 0;
	int slow = rank == slow_rank;
	prof_sim_stream *s = prof_sim_stream_create(0);
	for (int i = 0; i < steps; i++) {
		prof_sim_kernel(s, "gemm", 20 * MS);
		if (slow && strcmp(phase, "compute") == 0)
			prof_sim_kernel(s, "gemm_extra", 15 * MS);
		if (slow && strcmp(phase, "free") == 0) {
			prof_sim_stream_sync(s);
			sleep_ms(15);
		}
		prof_sim_collective(s, PROF_SIM_ALLREDUCE, "world", "0,1,2,3", rank, -1,
				    64 << 20, 10 * MS);
		prof_sim_stream_sync(s);
		prof_step();
	}
	prof_sim_stream_destroy(s);
	printf("sim_ranks: rank %d done\n", rank);
	return 0;
}
