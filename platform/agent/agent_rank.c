/*
 * This process's rank in a distributed job. torchrun, mpirun, srun and
 * the like set it in the environment before the program starts
 * (prof_env_rank, at load). A program that starts its ranks itself
 * (torch.multiprocessing.spawn, a Process per GPU) passes it to
 * init_process_group instead: prof's Python hooks hand it over here
 * (prof_fw_rank), and it is recorded late, in a stream of its own,
 * raw/<pid>.<n>/rank.raw (the parse takes that stream's rank before any
 * other's: lib/ingest/parse_rank.c). A process image that has written no
 * stream yet needs no such stream: its first PROCESS record carries the
 * rank.
 */
#include "agent.h"

#include <string.h>
#include <unistd.h>

#include "common/rank.h"

void agent_rank_init(void)
{
	agent.rank = prof_env_rank();
}

/* rank.raw: one PROCESS record naming the rank, and the rank's
 * environment. 0, or a negative errno. */
static int write_rank_stream(void)
{
	struct raw_writer w = { .fd = -1 };
	int rc = agent_fw_stream_open(&w, "rank.raw", "rank", NULL);
	if (rc)
		return rc;
	agent_emit_process(&w, raw_clock_ns(CLOCK_MONOTONIC));
	raw_writer_close(&w);
	return 0;
}

/* The framework's rank (torch.distributed.init_process_group). The
 * environment's, when it named one, stands: it is the launcher's and
 * every process of the rank has it. 0: recorded (or already known), -1:
 * not (no agent, or a rank given twice, said in the log). Not part of
 * prof_tx.h: an interface between prof's parts. */
__attribute__((visibility("default")))
int prof_fw_rank(int rank)
{
	if (!agent.active || rank < 0 || !agent_enter(0))
		return -1;
	int had = -1, rc = 0;
	if (!__atomic_compare_exchange_n(&agent.rank, &had, rank, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		if (had != rank)
			agent_log("the program says this process is rank %d, but it is rank %d "
				  "(its environment, or an earlier init_process_group): kept %d",
				  rank, had, had);
		agent_leave();
		return had == rank ? 0 : -1;
	}
	/* The image's PROCESS record, if it is not written yet, reads the
	 * rank just stored; if it is, the rank goes in a stream of its own. */
	if (__atomic_load_n(&agent.process_recorded, __ATOMIC_ACQUIRE))
		rc = write_rank_stream();
	if (rc)
		agent_log("notice: rank %d: cannot write rank.raw (%s): this process is parsed "
			  "without its rank, in the combined output only", rank, strerror(-rc));
	else
		agent_log("rank %d, from the program (init_process_group)", rank);
	agent_sched_rank_known();
	agent_leave();
	return rc ? -1 : 0;
}
