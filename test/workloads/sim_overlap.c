/*
 * sim_overlap: one step with a known overlap of compute and communication
 * on the simulated device (times in ms from the step's first device task):
 *   stream 1: kernel "gemm"          [0, 20]
 *   stream 2: memset                 [0, 10]   (neither compute nor comm)
 *             allreduce              [10, 30]
 *             recv from rank 1       [30, 35]  (a receive: the bubble)
 * so Computing 20, Communication 25, Overlapped 10, Not Overlapped 15,
 * Bubble 5, Not Overlapped and Exclude Receive 10, Free 0, Stage 30.
 */
#include <prof/prof_tx.h>
#include <prof_sim.h>
#include <stdio.h>

#define MS 1000000ull

int main(void)
{
	prof_sim_stream *compute = prof_sim_stream_create(0);
	prof_sim_stream *comm = prof_sim_stream_create(0);
	prof_sim_kernel(compute, "gemm", 20 * MS);
	prof_sim_memset(comm, 1 << 20, 10 * MS);
	prof_sim_collective(comm, PROF_SIM_ALLREDUCE, "dp", "0,1", 0, -1, 64 << 20, 20 * MS);
	prof_sim_collective(comm, PROF_SIM_RECV, "pp", "0,1", 0, 1, 8 << 20, 5 * MS);
	prof_sim_device_sync();
	prof_step();
	prof_sim_stream_destroy(compute);
	prof_sim_stream_destroy(comm);
	printf("sim_overlap: done\n");
	return 0;
}
