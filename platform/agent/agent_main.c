/*
 * Loading, configuring and following the process: the agent's constructor
 * reads the PROF_AGENT_* variables the launcher set, maps the control page,
 * and opens this process image's directory. Without PROF_AGENT_RUN_DIR the
 * agent stays inert: every API call returns at its first test.
 */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/agent_env.h"
#include "raw/raw_control.h"

static const uint32_t never = 0;
struct agent agent = { .control = &never, .proc_dirfd = -1, .log_fd = -1 };

void agent_log(const char *fmt, ...)
{
	if (agent.log_fd < 0) {
		char path[4200];
		snprintf(path, sizeof path, "%s/%s/agent-%d.log", agent.run_dir, PROF_LOG_DIR, (int)getpid());
		agent.log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
				    0640);
		if (agent.log_fd < 0)
			return;
		fchmod(agent.log_fd, 0640); /* past the umask */
	}
	char buf[1024];
	int n = snprintf(buf, sizeof buf, "prof agent[%d]: ", (int)getpid());
	va_list ap;
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof buf - 2)
		n = (int)sizeof buf - 2;
	buf[n++] = '\n';
	ssize_t w = write(agent.log_fd, buf, (size_t)n);
	(void)w;
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return dflt;
	char *end;
	unsigned long long x = strtoull(v, &end, 10);
	return *end ? dflt : x;
}

static void map_control(void)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%s/%s", agent.run_dir, PROF_RAW_DIR, RAW_CONTROL_FILE);
	/* Read-write for the storage budget's shared counter only. */
	int prot = PROT_READ | PROT_WRITE;
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 && errno == EACCES) {
		prot = PROT_READ;   /* no budget can be kept: none is */
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0) {
		/* Run without the launcher (tests, a hand-set environment):
		 * nothing switches recording off from outside. */
		static const uint32_t always = 1;
		agent.control = &always;
		return;
	}
	struct raw_control *c = mmap(NULL, sizeof *c, prot, MAP_SHARED, fd, 0);
	close(fd);
	if (c == MAP_FAILED || c->magic != RAW_CONTROL_MAGIC) {
		agent_log("%s: not a control page; recording stays off", path);
		return;
	}
	agent.control = &c->recording;
	agent.ctl = c;
	if (prot & PROT_WRITE) {
		agent.no_space = &c->streams_no_space;
		agent.disk_full = &c->streams_disk_full;
	}
	uint64_t budget = __atomic_load_n(&c->raw_budget_bytes, __ATOMIC_ACQUIRE);
	if (budget && (prot & PROT_WRITE)) {
		agent.budget_used = &c->raw_used_bytes;
		agent.budget_limit = budget;
	} else if (budget) {
		agent_log("%s: read-only; the storage limit is not kept", path);
	}
}

/* A process image begins (load, fork child): what its first stream will
 * say of it. Nothing is created yet. */
void agent_process_begin(int ppid)
{
	agent.pid = (int)getpid();
	agent.ppid = ppid;
	agent.begin_ticks = agent_ticks();
	agent.begin_recording = agent_recording();
	if (agent.proc_dirfd >= 0)
		close(agent.proc_dirfd);
	agent.proc_dirfd = -1;
	agent.proc_dir_state = AGENT_DIR_NONE;
	agent.process_recorded = 0;
}

/* Creates raw/<pid>.<n>/ for this process image: exec keeps the pid, so
 * each image takes the next free n. */
static int make_proc_dir(void)
{
	char path[4200];
	for (int n = 0; n < 1000; n++) {
		snprintf(path, sizeof path, "%s/%s/%d.%d", agent.run_dir, PROF_RAW_DIR, agent.pid, n);
		if (mkdir(path, 0750) == 0)
			break;
		if (errno != EEXIST) {
			agent_log("notice: %s: cannot create: %s; process %d is not recorded", path,
				  strerror(errno), agent.pid);
			return -1;
		}
	}
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		fchmod(fd, 0750); /* past the umask */
	return fd;
}

int agent_stream_dir(void)
{
	if (!__atomic_load_n(&agent.process_recorded, __ATOMIC_ACQUIRE))
		agent_thread();
	return agent_proc_dir();
}

int agent_proc_dir(void)
{
	uint32_t st = __atomic_load_n(&agent.proc_dir_state, __ATOMIC_ACQUIRE);
	if (st == AGENT_DIR_MADE)
		return agent.proc_dirfd;
	uint32_t none = AGENT_DIR_NONE;
	if (st == AGENT_DIR_NONE &&
	    __atomic_compare_exchange_n(&agent.proc_dir_state, &none, AGENT_DIR_MAKING, 0,
					__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		agent.proc_dirfd = make_proc_dir();
		__atomic_store_n(&agent.proc_dir_state,
				 agent.proc_dirfd >= 0 ? AGENT_DIR_MADE : AGENT_DIR_FAILED,
				 __ATOMIC_RELEASE);
	}
	while ((st = __atomic_load_n(&agent.proc_dir_state, __ATOMIC_ACQUIRE)) == AGENT_DIR_MAKING)
		sched_yield();   /* another thread makes it: a mkdir and an open */
	return st == AGENT_DIR_MADE ? agent.proc_dirfd : -1;
}

int agent_stream_open(struct raw_writer *w, int dirfd, const char *name,
		      struct raw_writer_opts *o)
{
	o->budget_used = agent.budget_used;
	o->budget_limit = agent.budget_limit;
	o->disk_full = agent.disk_full;
	int rc = raw_writer_open(w, dirfd, name, o);
	if ((rc == -ENOSPC || rc == -EDQUOT) && agent.no_space)
		__atomic_add_fetch(agent.no_space, 1, __ATOMIC_RELAXED);
	return rc;
}

/* Whether before_fork took the agent's locks: not when the forking thread
 * is inside prof's work (fork from a signal handler), which may hold one. */
static int fork_locked;

/* The agent's locks, in the order they nest (schedule, device state, HAL,
 * device sink; the framework stream's alone), so that the child gets
 * their data whole, not half-updated by a thread that does not exist
 * there. */
static void before_fork(void)
{
	fork_locked = agent.active && agent_enter(0);
	if (!fork_locked)
		return;
	agent_sched_fork(AGENT_FORK_PREPARE);
	agent_dev_fork(AGENT_FORK_PREPARE);
	agent_fw_fork(AGENT_FORK_PREPARE);
}

static void unlock_after_fork(enum agent_fork side)
{
	if (!fork_locked)
		return;
	agent_fw_fork(side);
	agent_dev_fork(side);
	agent_sched_fork(side);
}

static void after_fork_parent(void)
{
	unlock_after_fork(AGENT_FORK_PARENT);
	if (fork_locked)
		agent_leave();
}

/* One line of /proc/self/maps: unmapped when it maps a file under raw/
 * other than the control page. */
static void unmap_if_stream(const char *line, const char *raw, const char *control)
{
	unsigned long lo, hi;
	const char *path = strchr(line, '/');
	if (path && sscanf(line, "%lx-%lx", &lo, &hi) == 2 &&
	    strncmp(path, raw, strlen(raw)) == 0 && strcmp(path, control) != 0)
		munmap((void *)lo, hi - lo);
}

/* The parent's stream mappings that a fork caught before their
 * MADV_DONTFORK. No stdio, no malloc: read(2) into a buffer, a line at a
 * time. */
static void unmap_inherited(void)
{
	char raw[4200], control[4300], buf[8192];
	snprintf(raw, sizeof raw, "%s/%s/", agent.run_dir, PROF_RAW_DIR);
	snprintf(control, sizeof control, "%s%s", raw, RAW_CONTROL_FILE);
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	size_t have = 0;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
		have += n > 0 ? (size_t)n : 0;
		buf[have] = '\0';
		char *line = buf, *nl;
		for (; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
			*nl = '\0';
			unmap_if_stream(line, raw, control);
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have + 1);
		if (n <= 0) {
			unmap_if_stream(buf, raw, control);   /* a last line without \n */
			break;
		}
		if (have == sizeof buf - 1)
			have = 0;   /* a line longer than a path can be: not a stream's */
	}
	close(fd);
}

static void after_fork_child(void)
{
	unlock_after_fork(AGENT_FORK_CHILD);
	/* Not agent_leave: what nested calls left is for the parent's
	 * streams, which are not the child's. */
	agent_busy = 0;
	agent_nested_lost = 0;
	agent_nested_api = 0;
	if (!agent.active)
		return;
	uint32_t in_flight = raw_writer_maps_in_flight();
	if (in_flight)
		unmap_inherited();
	if (agent.log_fd >= 0)
		close(agent.log_fd);
	agent.log_fd = -1;
	if (in_flight)
		agent_log("forked while %u stream mappings were being made: unmapped here",
			  in_flight);
	agent_sched_after_fork();
	agent_fw_forget();
	agent_dev_forget();
	agent_threads_forget();
	agent_process_begin((int)getppid());
}

static void configure(const char *run_dir)
{
	snprintf(agent.run_dir, sizeof agent.run_dir, "%s", run_dir);
	const char *clock = getenv(PROF_AGENT_CLOCK);
	agent.clock = clock && strcmp(clock, "tsc") == 0 ? RAW_CLOCK_TSC : RAW_CLOCK_MONOTONIC;
#if !defined(__x86_64__) && !defined(__i386__)
	agent.clock = RAW_CLOCK_MONOTONIC;
#endif
	agent.clock_tsc = agent.clock == RAW_CLOCK_TSC;
	agent.tsc_hz = env_u64(PROF_AGENT_TSC_HZ, 0);
	uint64_t kb = env_u64(PROF_AGENT_CHUNK_KB, RAW_CHUNK_DEFAULT >> 10);
	agent.chunk_size = (uint32_t)(kb << 10);
	if (agent.chunk_size < RAW_CHUNK_MIN || agent.chunk_size > RAW_CHUNK_MAX)
		agent.chunk_size = RAW_CHUNK_DEFAULT;
	const char *tx = getenv(PROF_AGENT_TX);
	agent.tx_off = tx && strcmp(tx, "0") == 0;
	if (domain_filter_init(&agent.domains, getenv(PROF_AGENT_MSTX_INCLUDE),
			       getenv(PROF_AGENT_MSTX_EXCLUDE)))
		agent_log("the mstx domain list is too long: every domain is recorded");
	agent.default_kept = domain_filter_keeps(&agent.domains, NULL);
	agent_rank_init();
	agent_sched_init();
}

__attribute__((constructor))
static void agent_init(void)
{
	int follow = agent_exec_init();
	const char *run_dir = getenv(PROF_AGENT_RUN_DIR);
	if (!run_dir || !*run_dir)
		return;
	configure(run_dir);
	if (follow < 0)
		agent_log("the agent cannot find itself in LD_PRELOAD (%s): a process started "
			  "after a launch script replaces LD_PRELOAD will not be recorded",
			  getenv("LD_PRELOAD"));
	agent_python_init();
	map_control();
	agent.active = 1;
	agent_process_begin((int)getppid());
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
	agent_dev_init();
}

/* Closes the streams so the parse does not take a clean exit for a crash;
 * once per process. A vfork child shares our memory and must not touch
 * the parent's streams: its pid differs from ours.
 * async_safe: only the close marks of the thread and framework streams,
 * atomic stores; no lock, no join, no device flush (the device stream is
 * left unclosed, so the parse says its end was not written). That is all
 * _exit may do: it is how a signal handler leaves, and one that came in
 * the middle of a locked update would wait for itself. The destructor
 * (exit(), a return from main) does it all, unless this thread is inside
 * prof's work (exit() from a handler that interrupted it): then it too
 * does only the marks. */
static void finish_before_exit(int async_safe)
{
	static int finishing;
	if (!agent.active || (int)getpid() != agent.pid ||
	    __atomic_exchange_n(&finishing, 1, __ATOMIC_ACQ_REL))
		return;
	async_safe |= agent_busy != 0;
	if (!async_safe) {
		agent_python_exit_check();
		agent_dev_finish();
	}
	agent_fw_finish(async_safe);
	agent_threads_finish(async_safe);
	agent.active = 0;
}

__attribute__((destructor))
static void agent_fini(void)
{
	finish_before_exit(0);
}

/* The in-script profiler objects in a plain python (share/prof/python/prof)
 * finish at their atexit, before they wait for prof session's parse: the
 * streams must be closed by then, not at the destructor that follows.
 * Not part of prof_tx.h. */
__attribute__((visibility("default")))
void prof_fw_finish(void)
{
	finish_before_exit(0);
}

/* Shells (dash) and Python's os._exit leave through _exit, which skips
 * destructors. */
__attribute__((visibility("default"), noreturn))
void _exit(int status)
{
	finish_before_exit(1);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

__attribute__((visibility("default"), noreturn))
void _Exit(int status)
{
	finish_before_exit(1);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}
