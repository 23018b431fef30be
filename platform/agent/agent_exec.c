/*
 * The agent follows exec. `prof run` loads it into the program through
 * LD_PRELOAD; a launch script that sets LD_PRELOAD itself (`export
 * LD_PRELOAD=/usr/lib/libtcmalloc.so`, common in training scripts for a
 * faster allocator) drops it, and every process started from there on
 * would go unrecorded without a word. So the exec calls are wrapped: an
 * environment that is still prof's (PROF_AGENT_RUN_DIR in it) but whose
 * LD_PRELOAD has lost the agent gets the agent put back first, after what
 * preceded it at load (a sanitizer's runtime), the script's libraries kept
 * after it. An environment without PROF_AGENT_RUN_DIR was made apart on
 * purpose (env -i, a subprocess given a fresh env) and is left alone;
 * the launcher says at the end that such a program went unrecorded.
 *
 * async-signal-safe: a vfork child (Python's subprocess, posix_spawn)
 * calls these on its parent's memory. The new environment is built on the
 * stack; nothing is allocated, locked or logged.
 */
#define _GNU_SOURCE
#include "agent.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/agent_env.h"
#include "common/env_list.h"
#include "raw/raw_control.h"

extern char **environ;

/* LD_PRELOAD at load, up to and including the agent's entry: what a lost
 * agent is put back as. "" when the agent was not preloaded (prof
 * session's dlopen): nothing to follow then. */
static char preload_mine[2 * PATH_MAX];
static const char *agent_entry;   /* the agent's entry, within preload_mine */

typedef int exec_fn(const char *, char *const[], char *const[]);
typedef int spawn_fn(pid_t *, const char *, const posix_spawn_file_actions_t *,
		     const posix_spawnattr_t *, char *const[], char *const[]);

static exec_fn *real_execve, *real_execvpe;
static spawn_fn *real_posix_spawn, *real_posix_spawnp;

/* ld.so splits LD_PRELOAD on both */
#define PRELOAD_SEPS ": "

/* libc's functions, found at load (dlsym is no call for a vfork child);
 * again at the call if the program execs before the agent's constructor
 * has run (another library's constructor). */
static void resolve(void)
{
	if (!real_execve)
		real_execve = dlsym(RTLD_NEXT, "execve");
	if (!real_execvpe)
		real_execvpe = dlsym(RTLD_NEXT, "execvpe");
	if (!real_posix_spawn)
		real_posix_spawn = dlsym(RTLD_NEXT, "posix_spawn");
	if (!real_posix_spawnp)
		real_posix_spawnp = dlsym(RTLD_NEXT, "posix_spawnp");
}

/* At load, prof's run or not: the wrappers must reach libc either way.
 * -1 when the agent, under prof, cannot tell its own LD_PRELOAD entry
 * (said by agent_init once the log is set up). */
int agent_exec_init(void)
{
	Dl_info self;
	const char *pre = getenv("LD_PRELOAD");
	resolve();
	if (!getenv(PROF_AGENT_RUN_DIR) || !pre || !*pre)
		return 0;   /* not prof's run, or loaded by prof session's dlopen */
	if (!dladdr((void *)agent_exec_init, &self) || !self.dli_fname)
		return -1;
	size_t n = strlen(self.dli_fname);
	const char *at = env_list_find(pre, PRELOAD_SEPS, self.dli_fname, n);
	if (!at || (size_t)(at - pre) + n >= sizeof preload_mine)
		return -1;
	memcpy(preload_mine, pre, (size_t)(at - pre) + n);
	preload_mine[(at - pre) + n] = '\0';
	agent_entry = preload_mine + (at - pre);
	return 0;
}

static size_t env_count(char *const envp[])
{
	size_t n = 0;
	while (envp && envp[n])
		n++;
	return n;
}

/* Whether a program started apart is one the user would miss: Python,
 * or anything outside the system's own directories. Python's ctypes runs
 * /sbin/ldconfig with a fresh environment to find a library; such tools
 * are no part of the work. */
static int worth_saying(const char *path)
{
	static const char *const system_dirs[] = { "/bin/", "/sbin/", "/usr/bin/",
						   "/usr/sbin/" };
	const char *slash = strrchr(path, '/');
	if (strncmp(slash ? slash + 1 : path, "python", 6) == 0)
		return 1;
	if (!slash)
		return 0;   /* found on PATH: a system tool, mostly */
	for (size_t i = 0; i < sizeof system_dirs / sizeof system_dirs[0]; i++) {
		size_t n = strlen(system_dirs[i]);
		if (strncmp(path, system_dirs[i], n) == 0 && !strchr(path + n, '/'))
			return 0;
	}
	return 1;
}

/* A program started with an environment of its own, without prof's
 * variables, goes unrecorded: counted on the control page for the
 * launcher to say, the first one named. A path counts only when it can
 * run: Python's subprocess tries execve on each PATH entry in turn. */
static void note_apart(const char *path, pid_t pid)
{
	struct raw_control *c = (struct raw_control *)agent.ctl;
	if (!agent.active || !c || !agent.no_space || !path || !worth_saying(path) ||
	    (strchr(path, '/') && access(path, X_OK) != 0))
		return;
	if (__atomic_fetch_add(&c->execs_apart, 1, __ATOMIC_RELAXED) != 0)
		return;
	size_t n = strlen(path);
	if (n >= sizeof c->exec_apart_path)
		path += n - (sizeof c->exec_apart_path - 1);   /* its end says more */
	__atomic_store_n(&c->exec_apart_pid, (int32_t)pid, __ATOMIC_RELAXED);
	strncpy(c->exec_apart_path, path, sizeof c->exec_apart_path - 1);
}

/* What an exec's environment asks of the agent. */
enum env_state {
	ENV_AS_IS,       /* prof's with the agent in it, or the agent follows nothing */
	ENV_APART,       /* without prof's variables: left alone, counted */
	ENV_AGENT_LOST,  /* prof's, but LD_PRELOAD lost the agent: put back */
};

static enum env_state env_state(char *const envp[])
{
	if (!agent_entry)
		return ENV_AS_IS;
	if (!env_get(envp, PROF_AGENT_RUN_DIR))
		return ENV_APART;
	return env_list_find(env_get(envp, "LD_PRELOAD"), PRELOAD_SEPS, agent_entry,
			     strlen(agent_entry)) ? ENV_AS_IS : ENV_AGENT_LOST;
}

/* The bytes with_agent's LD_PRELOAD entry takes, its NUL included. */
static size_t preload_len(char *const envp[])
{
	const char *pre = env_get(envp, "LD_PRELOAD");
	return sizeof "LD_PRELOAD=" + strlen(preload_mine) + 1 + (pre ? strlen(pre) : 0);
}

/* envp with LD_PRELOAD=<preload_mine>[:<its own>] into out (n + 2 slots),
 * the entry into buf (preload_len(envp) bytes). */
static void with_agent(char *const envp[], char **out, char *buf)
{
	const char *pre = env_get(envp, "LD_PRELOAD");
	char *p = buf;
	memcpy(p, "LD_PRELOAD=", 11);
	p += 11;
	size_t m = strlen(preload_mine);
	memcpy(p, preload_mine, m);
	p += m;
	if (pre && *pre) {
		*p++ = ':';
		size_t k = strlen(pre);
		memcpy(p, pre, k);
		p += k;
	}
	*p = '\0';
	size_t j = 0;
	out[j++] = buf;
	for (size_t i = 0; envp && envp[i]; i++)
		if (!env_is(envp[i], "LD_PRELOAD", 10))
			out[j++] = envp[i];
	out[j] = NULL;
}

/* Declares `use`: envp itself, or (state ENV_AGENT_LOST) a copy with the
 * agent back, on this frame (the exec or spawn must run before it
 * returns). */
#define WITH_AGENT(state, envp, use)						\
	int need_ = (state) == ENV_AGENT_LOST;					\
	size_t cnt_ = need_ ? env_count(envp) + 2 : 1;				\
	size_t len_ = need_ ? preload_len(envp) : 1;				\
	char *vec_[cnt_];							\
	char buf_[len_];							\
	char *const *use = envp;						\
	if (need_) {								\
		with_agent(envp, vec_, buf_);					\
		use = vec_;							\
	}

/* exec through fn (NULL: not found in libc) with the agent kept. */
static int exec_via(exec_fn *fn, const char *file, char *const argv[], char *const envp[])
{
	enum env_state st = env_state(envp);
	if (st == ENV_APART)
		note_apart(file, (pid_t)syscall(SYS_getpid));
	WITH_AGENT(st, envp, use);
	if (fn)
		return fn(file, argv, use);
	errno = ENOSYS;
	return -1;
}

/* posix_spawn or posix_spawnp through fn, the same way. */
static int spawn_via(spawn_fn *fn, pid_t *pid, const char *file,
		     const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
		     char *const argv[], char *const envp[])
{
	if (!fn)
		return ENOSYS;
	enum env_state st = env_state(envp);
	WITH_AGENT(st, envp, use);
	int rc = fn(pid, file, fa, attr, argv, use);
	if (rc == 0 && st == ENV_APART)
		note_apart(file, pid ? *pid : 0);
	return rc;
}

/* The raw system call when libc's execve cannot be found. */
static int sys_execve(const char *path, char *const argv[], char *const envp[])
{
	return (int)syscall(SYS_execve, path, argv, envp);
}

__attribute__((visibility("default")))
int execve(const char *path, char *const argv[], char *const envp[])
{
	if (!real_execve)
		resolve();
	return exec_via(real_execve ? real_execve : sys_execve, path, argv, envp);
}

__attribute__((visibility("default")))
int execvpe(const char *file, char *const argv[], char *const envp[])
{
	if (!real_execvpe)
		resolve();
	return exec_via(real_execvpe, file, argv, envp);
}

__attribute__((visibility("default")))
int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

__attribute__((visibility("default")))
int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/* How many arguments execl's list holds before its NULL, the first
 * (already taken) counted. */
static size_t va_count(va_list ap)
{
	size_t n = 1;
	while (va_arg(ap, const char *))
		n++;
	return n;
}

static void va_fill(char **argv, const char *first, size_t n, va_list ap)
{
	argv[0] = (char *)first;
	for (size_t i = 1; i <= n; i++)   /* the NULL included */
		argv[i] = va_arg(ap, char *);
}

/* execl's list (arg, ..., NULL[, envp]) as a vector, then the exec:
 * searched on PATH or not, in envp or environ. */
static int exec_list(const char *to, int search, int has_env, const char *arg, va_list ap)
{
	va_list count;
	va_copy(count, ap);
	size_t n = va_count(count);
	va_end(count);
	char *argv[n + 1];
	va_fill(argv, arg, n, ap);
	char *const *envp = has_env ? va_arg(ap, char *const *) : environ;
	return search ? execvpe(to, argv, envp) : execve(to, argv, envp);
}

__attribute__((visibility("default")))
int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	int rc = exec_list(path, 0, 0, arg, ap);
	va_end(ap);
	return rc;
}

__attribute__((visibility("default")))
int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	int rc = exec_list(file, 1, 0, arg, ap);
	va_end(ap);
	return rc;
}

__attribute__((visibility("default")))
int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	int rc = exec_list(path, 0, 1, arg, ap);
	va_end(ap);
	return rc;
}

__attribute__((visibility("default")))
int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	if (!real_posix_spawn)
		resolve();
	return spawn_via(real_posix_spawn, pid, path, fa, attr, argv, envp);
}

__attribute__((visibility("default")))
int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
		 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	if (!real_posix_spawnp)
		resolve();
	return spawn_via(real_posix_spawnp, pid, file, fa, attr, argv, envp);
}
