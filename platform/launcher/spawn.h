/*
 * Starting the profiled program, strace style: the executable is resolved
 * on PATH before anything is forked, the child's environment is built as an
 * explicit array (the launcher's own environment is never modified), and a
 * close-on-exec pipe reports an exec failure back to the parent with its
 * errno.
 */
#ifndef PROF_SPAWN_H
#define PROF_SPAWN_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

/* Finds `cmd` as execvp would: used as a path when it holds a '/', else
 * searched on `path_env` (NULL: the system default path). On success
 * `*out` is the malloc'd path. Errors: -ENOENT (not found), -EACCES (found,
 * but no regular file with an execute bit), -EISDIR (a directory, for a
 * `cmd` with a slash), -ENOMEM. */
int spawn_resolve(const char *cmd, const char *path_env, char **out);

/* What the launcher hands the agent (see common/agent_env.h). */
struct spawn_env_opts {
	const char *agent_path;    /* prepended to LD_PRELOAD */
	const char *python_dir;    /* prepended to PYTHONPATH; NULL: untouched */
	const char *run_dir;       /* absolute */
	const char *clock;         /* "tsc" or "mono" */
	double tsc_hz;             /* 0: not passed */
	const char *activities;    /* "CPU,DEVICE" */
	bool start_paused;
	const char *schedule;      /* "skip_first,wait,warmup,active,repeat"; NULL: none */
	uint32_t fw_flags;         /* PROF_FW_* collection switches */
	bool dynamic;              /* record only in --dynamic windows */
	bool cycle_results;        /* a result per schedule cycle (run/windows.h) */
	bool device;               /* device activity (activities DEVICE) */
	bool nvtx_only;            /* no device activity, NVTX traced all the same
				    * (operators as torch's NVTX ranges) */
	bool tx_off;               /* msprof_tx false: no prof_tx or NVTX marks, ranges */
	const char *ranks;         /* is_rank: the ranks that record, "0,3" ("": none);
				    * NULL: every process records */
	const char *mstx_include;  /* the domains kept, "a,b"; NULL: not given */
	const char *mstx_exclude;  /* the domains dropped; NULL: not given */
	const char *cuda_injection; /* CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH
				     * (the agent); NULL: neither is set */
	const char *preload_first; /* put ahead of the agent in LD_PRELOAD (the
				    * sanitizer runtime); NULL: nothing */
	const char *san_var;       /* the sanitizer's options variable: ASAN_OPTIONS */
	const char *san_options;   /* prepended to it, so the user's own settings
				    * still win; NULL: untouched */
};

/* In a launcher built with PROF_SANITIZE, sets `preload_first` to the ASan
 * runtime this process has mapped (an instrumented agent can only load into
 * an uninstrumented program, python3 or sh, behind it) and `san_options`
 * to defaults for such children (no leak report at their exit; their
 * faults are theirs to die of). A PROF_SANITIZE_THREAD build: the same
 * with TSan's runtime and TSAN_OPTIONS. Otherwise
 * (or when no runtime is found) leaves both NULL. spawn_asan.c. */
void spawn_asan_opts(struct spawn_env_opts *o);

/* The child's environment: `base` (NULL-terminated, usually environ) with
 * every stale PROF_AGENT_* dropped, LD_PRELOAD and PYTHONPATH prefixed and
 * the PROF_AGENT_* variables added. A NULL-terminated malloc'd array of
 * malloc'd strings, or NULL on ENOMEM; free with spawn_env_free. */
char **spawn_env_build(char *const *base, const struct spawn_env_opts *o);
void spawn_env_free(char **env);

/* The user's CUDA_INJECTION64_PATH / NVTX_INJECTION64_PATH in `base` when
 * set to a library (not empty, not "none"): another tool is injected, and
 * spawn_env_build leaves it (and, for CUDA's, both) alone. Else NULL. */
const char *spawn_env_injection_taken(char *const *base, const char *name);

/* The value of `name` in an environment array, or NULL. */
const char *spawn_env_get(char *const *env, const char *name);

struct spawn_child {
	pid_t pid;
};

/* Forks and executes `path` with `argv` and `env`. The child stays in the
 * launcher's process group, as under strace: the terminal's signals (Ctrl-C,
 * Ctrl-Z) and job control (a background read's SIGTTIN, `fg`) reach both
 * as one job. It gets `child_mask` as its signal mask. Returns 0, or a
 * negative errno: either fork's, or the child's exec failure (the child is
 * then already reaped). */
int spawn_start(const char *path, char *const argv[], char *const env[],
		const sigset_t *child_mask, struct spawn_child *child);

#endif
