#define _GNU_SOURCE
#include "launcher/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/agent_env.h"
#include "launcher/selfpath.h"
#include "common/env_list.h"

#define SPAWN_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

/* 0 when `p` is a regular file we may execute, else the errno a shell
 * would report for it. */
static int spawn_check_exec(const char *p)
{
	struct stat st;
	if (stat(p, &st) != 0)
		return errno == ENOTDIR ? ENOENT : errno;
	if (S_ISDIR(st.st_mode))
		return EISDIR;
	if (!S_ISREG(st.st_mode) || access(p, X_OK) != 0)
		return EACCES;
	return 0;
}

/* Tries one PATH entry; 0 with `*out` set, or the errno for that entry. */
static int spawn_try_dir(const char *dir, size_t dlen, const char *cmd, char **out)
{
	char *cand;
	if (dlen == 0)
		cand = strdup(cmd);  /* an empty entry means the current directory */
	else if (asprintf(&cand, "%.*s/%s", (int)dlen, dir, cmd) < 0)
		cand = NULL;
	if (!cand)
		return ENOMEM;
	int e = spawn_check_exec(cand);
	if (e == 0) {
		*out = cand;
		return 0;
	}
	free(cand);
	return e;
}

int spawn_resolve(const char *cmd, const char *path_env, char **out)
{
	*out = NULL;
	if (!cmd || !*cmd)
		return -ENOENT;
	if (strchr(cmd, '/')) {
		int e = spawn_check_exec(cmd);
		if (e)
			return -e;
		*out = strdup(cmd);
		return *out ? 0 : -ENOMEM;
	}
	const char *p = path_env ? path_env : SPAWN_DEFAULT_PATH;
	int seen_eacces = 0;
	for (;;) {
		const char *colon = strchrnul(p, ':');
		int e = spawn_try_dir(p, (size_t)(colon - p), cmd, out);
		if (e == 0 || e == ENOMEM)
			return -e;
		/* Like execvp: a later entry may still hold an executable one,
		 * but a non-executable match beats "not found". Directories on
		 * PATH are skipped, as the shell does. */
		if (e == EACCES)
			seen_eacces = 1;
		if (!*colon)
			break;
		p = colon + 1;
	}
	return seen_eacces ? -EACCES : -ENOENT;
}

static char *spawn_env_pair(const char *name, const char *first, const char *sep,
			    const char *rest)
{
	char *s;
	int n = rest && *rest ? asprintf(&s, "%s=%s%s%s", name, first, sep, rest)
			      : asprintf(&s, "%s=%s", name, first);
	return n < 0 ? NULL : s;
}

static int spawn_env_is(const char *e, const char *name)
{
	return env_is(e, name, strlen(name));
}

const char *spawn_env_get(char *const *env, const char *name)
{
	return env_get(env, name);
}

void spawn_env_free(char **env)
{
	if (!env)
		return;
	for (char **e = env; *e; e++)
		free(*e);
	free(env);
}

/* The most PROF_AGENT_* variables the launcher sets. */
#define SPAWN_AGENT_VARS_MAX 20

/* Appends the launcher's own variables; returns the new count or -1. */
static int spawn_env_add_agent(char **env, int n, const struct spawn_env_opts *o)
{
	char hz[64], fw[16];
	snprintf(hz, sizeof hz, "%.0f", o->tsc_hz);
	snprintf(fw, sizeof fw, "%u", o->fw_flags);
	const char *pairs[][2] = {
		{ PROF_AGENT_RUN_DIR, o->run_dir },
		{ PROF_AGENT_CLOCK, o->clock },
		{ PROF_AGENT_TSC_HZ, o->tsc_hz > 0 ? hz : NULL },
		{ PROF_AGENT_ACTIVITIES, o->activities },
		{ PROF_AGENT_START_PAUSED, o->start_paused ? "1" : NULL },
		{ PROF_AGENT_SCHEDULE, o->schedule },
		{ PROF_AGENT_FW_FLAGS, fw },
		{ PROF_AGENT_DYNAMIC, o->dynamic ? "1" : NULL },
		{ PROF_AGENT_CYCLES, o->cycle_results ? "1" : NULL },
		{ PROF_AGENT_DEVICE, o->device ? "1" : o->nvtx_only ? PROF_AGENT_DEVICE_NVTX : NULL },
		{ PROF_AGENT_TX, o->tx_off ? "0" : NULL },
		{ PROF_AGENT_RANKS, o->ranks },
		{ PROF_AGENT_MSTX_INCLUDE, o->mstx_include },
		{ PROF_AGENT_MSTX_EXCLUDE, o->mstx_exclude },
		{ PROF_AGENT_PYTHON_DIR, o->python_dir },
	};
	_Static_assert(sizeof pairs / sizeof pairs[0] <= SPAWN_AGENT_VARS_MAX,
		       "spawn_env_build makes room for SPAWN_AGENT_VARS_MAX");
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
		if (!pairs[i][1])
			continue;
		if (!(env[n] = spawn_env_pair(pairs[i][0], pairs[i][1], "", NULL)))
			return -1;
		env[++n] = NULL;
	}
	return n;
}

/* CUDA's and NVTX's injection libraries: when the user set them (nsys,
 * ncu and compute-sanitizer do), theirs win; "none" or empty reads as
 * unset, as it does for Kineto. */
static const char *const spawn_injection_vars[] = { "CUDA_INJECTION64_PATH",
						    "NVTX_INJECTION64_PATH" };

const char *spawn_env_injection_taken(char *const *base, const char *name)
{
	const char *v = spawn_env_get(base, name);
	/* prof's own agent, set by a prof run this one runs under, is ours
	 * to replace, not another tool's */
	const char *slash = v ? strrchr(v, '/') : NULL;
	if (v && strcmp(slash ? slash + 1 : v, SELFPATH_AGENT_NAME) == 0)
		return NULL;
	return v && *v && strcmp(v, "none") != 0 ? v : NULL;
}

/* Is `e` a user's unset-meaning injection variable that ours replaces? */
static bool spawn_env_replaced(const char *e, char *const *base, const struct spawn_env_opts *o)
{
	if (!o->cuda_injection || spawn_env_injection_taken(base, spawn_injection_vars[0]))
		return false;
	for (size_t i = 0; i < 2; i++)
		if (spawn_env_is(e, spawn_injection_vars[i]) &&
		    !spawn_env_injection_taken(base, spawn_injection_vars[i]))
			return true;
	return false;
}

static int spawn_env_add_injection(char **env, int n, char *const *base,
				   const struct spawn_env_opts *o)
{
	if (!o->cuda_injection || spawn_env_injection_taken(base, spawn_injection_vars[0]))
		return n;
	for (size_t i = 0; i < 2; i++) {
		if (spawn_env_injection_taken(base, spawn_injection_vars[i]))
			continue;
		if (!(env[n] = spawn_env_pair(spawn_injection_vars[i], o->cuda_injection, "", NULL)))
			return -1;
		env[++n] = NULL;
	}
	return n;
}

char **spawn_env_build(char *const *base, const struct spawn_env_opts *o)
{
	size_t nbase = 0;
	while (base && base[nbase])
		nbase++;
	/* base, LD_PRELOAD, PYTHONPATH, ASAN_OPTIONS, the agent's, 2
	 * injections, NULL */
	char **env = calloc(nbase + 6 + SPAWN_AGENT_VARS_MAX, sizeof *env);
	if (!env)
		return NULL;
	int n = 0;
	for (size_t i = 0; i < nbase; i++) {
		const char *e = base[i];
		/* A PROF_AGENT_* left over from an outer run would point the
		 * agent at somebody else's run directory. The chunk size is
		 * the one kept: a tuning knob (tests lower it so that
		 * --storage-limit bites sooner), it names no run. */
		if ((strncmp(e, "PROF_AGENT_", 11) == 0 &&
		     !spawn_env_is(e, PROF_AGENT_CHUNK_KB)) ||
		    spawn_env_is(e, "LD_PRELOAD") ||
		    (o->python_dir && spawn_env_is(e, "PYTHONPATH")) ||
		    (o->san_options && spawn_env_is(e, o->san_var)) ||
		    spawn_env_replaced(e, base, o))
			continue;
		if (!(env[n++] = strdup(e)))
			goto oom;
	}
	/* ld.so splits LD_PRELOAD on spaces and colons alike. */
	char *first = NULL;
	if (o->preload_first && asprintf(&first, "%s:%s", o->preload_first, o->agent_path) < 0)
		goto oom;
	env[n] = spawn_env_pair("LD_PRELOAD", first ? first : o->agent_path, ":",
				spawn_env_get(base, "LD_PRELOAD"));
	free(first);
	if (!env[n++])
		goto oom;
	if (o->san_options &&
	    !(env[n++] = spawn_env_pair(o->san_var, o->san_options, ":",
					spawn_env_get(base, o->san_var))))
		goto oom;
	if (o->python_dir &&
	    !(env[n++] = spawn_env_pair("PYTHONPATH", o->python_dir, ":",
					spawn_env_get(base, "PYTHONPATH"))))
		goto oom;
	if ((n = spawn_env_add_agent(env, n, o)) < 0 ||
	    spawn_env_add_injection(env, n, base, o) < 0)
		goto oom;
	return env;
oom:
	spawn_env_free(env);
	return NULL;
}

/* In the child: only async-signal-safe calls from here to exec. */
static void spawn_child_exec(const char *path, char *const argv[], char *const env[],
			     const sigset_t *mask, int ready_fd)
{
	/* prof installs no handlers (exec would reset them anyway); what it
	 * changed is the mask, blocked for its signalfd. Dispositions it
	 * inherited as ignored (nohup) pass through, as without prof. */
	sigprocmask(SIG_SETMASK, mask, NULL);
	execve(path, argv, env);
	int e = errno;
	while (write(ready_fd, &e, sizeof e) < 0 && errno == EINTR)
		;
	_exit(127);
}

/* 0 when the child reached exec, else the errno it sent. */
static int spawn_wait_ready(int fd)
{
	int e = 0;
	ssize_t r;
	while ((r = read(fd, &e, sizeof e)) < 0 && errno == EINTR)
		;
	return r == (ssize_t)sizeof e ? e : 0;
}

int spawn_start(const char *path, char *const argv[], char *const env[],
		const sigset_t *child_mask, struct spawn_child *c)
{
	int ready[2];
	if (pipe2(ready, O_CLOEXEC) != 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int rc = -errno;
		close(ready[0]);
		close(ready[1]);
		return rc;
	}
	if (pid == 0) {
		close(ready[0]);
		spawn_child_exec(path, argv, env, child_mask, ready[1]);
	}
	close(ready[1]);
	c->pid = pid;
	int e = spawn_wait_ready(ready[0]);
	close(ready[0]);
	if (e) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		return -e;
	}
	return 0;
}
