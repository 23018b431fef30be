/*
 * The control page: one small shared file, <run>/raw/control, that the
 * launcher creates and every agent maps. It switches recording on and off
 * across the whole process tree (--delay, --duration) with one load on the
 * agent's hot path and no signal or socket. Agents map it read-write for
 * the counters they share (raw_used_bytes, streams_no_space, streams_disk_full, execs_apart
 * and the first such exec's name); every other field is written by the
 * launcher alone.
 */
#ifndef PROF_RAW_CONTROL_H
#define PROF_RAW_CONTROL_H

#include <stdint.h>

#define RAW_CONTROL_MAGIC   0x4c525443u /* "CTRL" */
#define RAW_CONTROL_VERSION 1u
#define RAW_CONTROL_FILE    "control"
/* rank_list holds ranks 0 to RAW_DYN_RANKS - 1. */
#define RAW_DYN_RANK_WORDS  128u
#define RAW_DYN_RANKS       (RAW_DYN_RANK_WORDS * 64u)

struct raw_control {
	uint32_t magic;
	uint32_t version;
	uint32_t recording;   /* 1: collectors record; 0: paused by the launcher */
	uint32_t generation;  /* bumped at every change of `recording` */
	/* --dynamic: the launcher validates each edit of profiler_config.json
	 * and publishes it here; agents start a window at their next step. */
	uint32_t dyn_generation; /* bumped for each accepted activation */
	uint32_t dyn_active;     /* steps to record */
	uint32_t dyn_flags;      /* PROF_FW_* bits (lib/common/agent_env.h) */
	uint32_t dyn_start_step; /* first step to record; 0: the next one */
	/* --storage-limit: the run-wide budget of raw chunk bytes (0: none),
	 * written by the launcher before the program starts, and the bytes
	 * of chunks asked for so far by every agent's writers (atomic
	 * fetch_add at each chunk, see raw_writer_opts). A total past the
	 * budget means some writer was refused a chunk and stopped. */
	uint64_t raw_budget_bytes;
	uint64_t raw_used_bytes;
	/* Streams no agent could create for want of disk space (not even the
	 * header fitted): their records are in no lost count. Atomic add. */
	uint64_t streams_no_space;
	/* The --dynamic request's sequence: odd while the launcher writes it,
	 * so an agent reading dyn_* between two equal even values read one
	 * whole request (a seqlock). */
	uint32_t dyn_seq;
	/* The request's is_rank and rank_list, read by each agent against
	 * its own process's rank (one run may hold every rank of a job):
	 * bit r of dyn_ranks is rank r. */
	uint32_t dyn_is_rank;
	uint64_t dyn_ranks[RAW_DYN_RANK_WORDS];
	/* The request's "analyse": a result of the activation's steps of its
	 * own when it ends (lib/run/windows.h), written by each agent's
	 * request. Inside the seqlock. */
	uint32_t dyn_analyse;
	/* The request's warm-up steps, before its dyn_active recorded ones
	 * (inside the seqlock too). */
	uint32_t dyn_warmup;
	/* Programs a profiled process started with an environment of its own,
	 * without prof's variables (env -i, a subprocess given a fresh env):
	 * not recorded, and said at the end of the run. Agents add to the
	 * count (atomic); the one that made it 1 names the program and its
	 * pid (platform/agent/agent_exec.c). */
	uint32_t execs_apart;
	int32_t exec_apart_pid;
	char exec_apart_path[96];
	/* Streams that a full filesystem stopped after they began (their
	 * header has RAW_FILE_NO_SPACE): each writer adds 1 (atomic) the
	 * first time, so the launcher says it while the program runs. */
	uint64_t streams_disk_full;
};

#endif
