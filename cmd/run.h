/*
 * prof run's state, shared by its files: run.c (the command: options, the
 * run directory, the fork, the end, the parse) and run_wait.c (the wait
 * between: timers, signals passed on, what CMD left running, reaping).
 */
#ifndef PROF_CMD_RUN_H
#define PROF_CMD_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/config.h"
#include "launcher/fw_ingest.h"
#include "launcher/launcher_device.h"
#include "launcher/linger.h"
#include "launcher/sampler.h"
#include "launcher/sig.h"
#include "launcher/spawn.h"
#include "raw/raw_clock.h"
#include "run/dynamic.h"
#include "run/info.h"
#include "run/notices.h"
#include "run/rundir.h"
#include "run/windows.h"

struct run_ctx {
	struct prof_config cfg;
	char **cmd;
	char *exe;            /* cmd[0] resolved on PATH */
	char *agent, *pydir;
	char host[256];
	uint32_t clock;
	struct raw_clock_pair first;  /* before the run dir: names it */
	struct rundir rd;
	struct run_info info;
	struct sig_state sig;
	struct spawn_child child;
	struct sampler *sampler;
	struct fw_ingest *ingest;     /* torch's own operator flush files */
	struct launcher_device dev;   /* NVML */
	int status;           /* the direct child's wait status */
	bool have_status;
	struct linger_state linger; /* what CMD left running once it ended */
	bool storage_said;    /* the storage limit, reached, was said */
	bool disk_said;       /* a full filesystem, met, was said */
	uint64_t delay_end, duration_end;  /* CLOCK_MONOTONIC ns; 0: none */
	const char *dynamic_dir;
	struct dyn_watch dyn;
	struct run_notices notices;   /* what the processes asked to say */
	int steps_seen;               /* the parse saw steps: 1, none: 0, no parse: -1 */
	struct win_queue win;         /* a result per window (run/windows.h) */
	/* prof session: the Python process that started prof and profiles
	 * itself (share/prof/python/prof); 0 under prof run. */
	pid_t program;
	bool session;
	char **program_argv;          /* prof session: its command line */
};

/* --delay and --duration from the launch on (run_wait.c). */
void run_set_timers(struct run_ctx *r);

/* prof run: until the whole tree has ended, reaped. */
void run_loop(struct run_ctx *r);

/* prof session: until the program closes the pipe it holds (it finished,
 * or died), or prof is told to stop. */
void run_session_loop(struct run_ctx *r);

#endif
