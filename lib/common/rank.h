/*
 * This process's global rank, from the variables the launchers of
 * distributed jobs set (torchrun, Open MPI, PMI, Slurm). Header-only so
 * the launcher and the agent (which links nothing of lib/ but the raw
 * writer) share one definition.
 */
#ifndef PROF_RANK_H
#define PROF_RANK_H

#include <stdlib.h>

/* The variables that say where a process sits in a distributed job (and
 * how it is set up): profiler_info.json's "env" (the launcher's) and each
 * rank's ENV_VARIABLES in profiler_metadata.json (read in the rank). */
#define PROF_ENV_VARS \
	"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", \
	"MASTER_ADDR", "MASTER_PORT", \
	"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", \
	"PMI_RANK", "PMI_SIZE", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", \
	"SLURM_JOB_ID", "CUDA_VISIBLE_DEVICES", "CUDA_LAUNCH_BLOCKING", \
	"OMP_NUM_THREADS", "MKL_NUM_THREADS", "PYTORCH_CUDA_ALLOC_CONF", \
	"NCCL_DEBUG", "NCCL_SOCKET_IFNAME", "NCCL_IB_DISABLE"

/* The metadata key a rank's own values of PROF_ENV_VARS go under. */
#define PROF_ENV_KEY "ENV_VARIABLES"

/* The rank, or -1 when no variable names one. PROF_AGENT_RANK
 * (common/agent_env.h) comes last: a launcher's variable stands. */
static inline int prof_env_rank(void)
{
	static const char *const vars[] = { "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
					    "SLURM_PROCID", "PROF_AGENT_RANK" };
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		const char *v = getenv(vars[i]);
		char *end;
		if (!v || !*v)
			continue;
		long r = strtol(v, &end, 10);
		if (*end == '\0' && r >= 0 && r <= 0x7fffffff)
			return (int)r;
	}
	return -1;
}

#endif
