/*
 * profiler_info.json: what a run was (command, configuration, host, rank,
 * chosen environment, clock pairs), written when the program starts and
 * rewritten complete when the tree has ended (exit status, end clock pair,
 * record and loss totals). A run that died with the launcher still has the
 * start version; `end_info` present means complete.
 */
#ifndef PROF_INFO_H
#define PROF_INFO_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "raw/raw_format.h"
#include "raw/raw_reader.h"

struct run_notices;

struct info_end {
	int exit_code;            /* -1: the program did not exit by itself */
	int signal;               /* 0: not killed by a signal */
	const char *signal_name;  /* "SIGSEGV", with `signal` */
	uint64_t duration_ns;
	bool totals_ok;           /* false: totals unknown, written as null */
	struct raw_totals totals;
	bool storage_limit_reached; /* --storage-limit stopped some stream */
	uint64_t streams_no_space;  /* streams never created: no disk space */
	const struct run_notices *notices;  /* what the processes asked to say; NULL: none */
};

struct run_info {
	char *const *argv;        /* the command, NULL-terminated */
	const char *host;
	int launcher_pid;
	int child_pid;            /* 0: not started */
	const struct prof_config *cfg;
	uint32_t clock;           /* enum raw_clock */
	double tsc_hz;            /* 0 for RAW_CLOCK_MONOTONIC */
	struct raw_clock_pair start, end;
	bool complete;            /* `end` and `end_info` are valid */
	struct info_end end_info;
};

/* The variables copied into "env" when present. NULL-terminated. */
extern const char *const info_env_vars[];

/* The rank from RANK, OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID (the
 * first set to a number), or -1. */
int info_rank(void);

/* The JSON text (malloc'd), or NULL on ENOMEM. */
char *info_to_json(const struct run_info *ri);

/* Writes <run_dir>/profiler_info.json atomically, mode 0640. 0 or -errno. */
int info_write(const struct run_info *ri, const char *run_dir);

#endif
