/*
 * This process's global rank, from the variables the launchers of
 * distributed jobs set (torchrun, Open MPI, PMI, Slurm). Header-only so
 * the launcher and the agent (which links nothing of lib/ but the raw
 * writer) share one definition.
 */
#ifndef PROF_RANK_H
#define PROF_RANK_H

#include <stdlib.h>

/* The rank, or -1 when no variable names one. */
static inline int prof_env_rank(void)
{
	static const char *const vars[] = { "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
					    "SLURM_PROCID" };
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
