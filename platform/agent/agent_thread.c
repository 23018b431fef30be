/*
 * Per-thread streams: created on a thread's first record, closed when the
 * thread exits, and named. Memory comes from mmap, never malloc: the agent
 * may run inside the program's allocator or a fork child. A finished
 * thread's structure is reused by a thread to come (agent.h says who may
 * close what), so a program that keeps starting threads does not grow.
 */
#include <sched.h>
#include "agent.h"
#include "common/rank.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread struct agent_thread *agent_tls __attribute__((tls_model("initial-exec")));

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static int agent_gettid(void)
{
	return (int)syscall(SYS_gettid);
}

static void read_comm(int tid, char *out, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%d/comm", tid);
	out[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, out, len - 1);
	close(fd);
	if (n <= 0)
		n = 0;
	out[n] = '\0';
	char *nl = strchr(out, '\n');
	if (nl)
		*nl = '\0';
}

/* The one close of t's stream (agent.h): 1 when this caller made it. */
static int stream_close(struct agent_thread *t)
{
	uint32_t open = AGENT_T_OPEN;
	if (!__atomic_compare_exchange_n(&t->state, &open, AGENT_T_CLOSING, 0, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return 0;
	raw_writer_mark_closed(&t->w);
	__atomic_store_n(&t->state, AGENT_T_CLOSED, __ATOMIC_RELEASE);
	return 1;
}

void agent_thread_name_record(struct raw_writer *w, int tid, uint64_t ts)
{
	char name[RAW_NAME_MAX];
	read_comm(tid, name, sizeof name);
	if (!name[0])
		return;
	struct raw_thread_name tn = { tid, raw_writer_intern(w, name, ts) };
	raw_writer_emit_aux(w, RAW_REC_THREAD_NAME, ts, &tn, sizeof tn);
}

/* Names past the writer's bound (raw_writer.h), said once per stream. */
static void say_uninterned(const struct agent_thread *t)
{
	uint64_t n = __atomic_load_n(&t->w.uninterned, __ATOMIC_RELAXED);
	if (n)
		agent_log("notice: thread %d used more than %u distinct names (one made per "
			  "iteration?); %llu uses past that were written out whole each time, "
			  "which grows the raw data: name marks and ranges by kind, not by "
			  "iteration", t->tid, RAW_INTERN_MAX, (unsigned long long)n);
}

static void on_thread_exit(void *arg)
{
	struct agent_thread *t = arg;
	if (!t || t == AGENT_DEAD)
		return;
	/* A later record on this thread (another TLS destructor) must not
	 * reopen a stream under the same name. */
	agent_tls = AGENT_DEAD;
	if (!agent_enter(0))
		return;   /* cannot be: destructors run outside prof's calls */
	if (__atomic_load_n(&t->state, __ATOMIC_ACQUIRE) == AGENT_T_OPEN)
		agent_thread_name_record(&t->w, t->tid, agent_ticks());
	if (stream_close(t))
		say_uninterned(t);   /* else the finisher closed it, and said it */
	/* The process's finisher may be writing the mark: it is quick. */
	while (__atomic_load_n(&t->state, __ATOMIC_ACQUIRE) == AGENT_T_CLOSING)
		sched_yield();
	raw_writer_release(&t->w);
	__atomic_store_n(&t->state, AGENT_T_FREE, __ATOMIC_RELEASE);
	agent_leave();
}

static void make_exit_key(void)
{
	pthread_key_create(&exit_key, on_thread_exit);
}

static int open_stream(struct agent_thread *t, const char *comm)
{
	struct raw_writer_opts o = {
		.clock = agent.clock, .kind = RAW_STREAM_THREAD, .chunk_size = agent.chunk_size,
		.pid = agent.pid, .tid = t->tid, .ppid = (int)getppid(),
		.tsc_hz = agent.tsc_hz, .comm = comm,
	};
	char name[64];
	int rc = -EEXIST, dirfd = agent_proc_dir();
	if (dirfd < 0)
		return -ENOENT;
	for (int k = 0; k < 100 && rc == -EEXIST; k++) {
		if (k == 0)
			snprintf(name, sizeof name, "t%d.raw", t->tid);
		else
			snprintf(name, sizeof name, "t%d-%d.raw", t->tid, k);
		rc = agent_stream_open(&t->w, dirfd, name, &o);
	}
	if (rc)
		agent_log("thread %d: cannot open its raw stream: %s", t->tid, strerror(-rc));
	return rc;
}

int agent_thread_has_stream(int tid)
{
	for (struct agent_thread *t = __atomic_load_n(&agent.threads, __ATOMIC_ACQUIRE); t;
	     t = t->next)
		if (__atomic_load_n(&t->state, __ATOMIC_ACQUIRE) == AGENT_T_OPEN && t->tid == tid)
			return 1;
	return 0;
}

/* A finished thread's structure, taken (SETUP), or NULL. */
static struct agent_thread *reuse_free(void)
{
	for (struct agent_thread *t = __atomic_load_n(&agent.threads, __ATOMIC_ACQUIRE); t;
	     t = t->next) {
		uint32_t free = AGENT_T_FREE;
		if (__atomic_compare_exchange_n(&t->state, &free, AGENT_T_SETUP, 0,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return t;
	}
	return NULL;
}

/* A new structure in SETUP, on the list of all threads. */
static struct agent_thread *add_new(void)
{
	struct agent_thread *t = mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return NULL;
	t->state = AGENT_T_SETUP;
	t->next = __atomic_load_n(&agent.threads, __ATOMIC_ACQUIRE);
	while (!__atomic_compare_exchange_n(&agent.threads, &t->next, t, 1,
					    __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
		;
	return t;
}

struct agent_thread *agent_thread_slow(void)
{
	if (!agent.active || agent_tls == AGENT_DEAD)
		return NULL;
	struct agent_thread *t = reuse_free();
	if (!t && !(t = add_new()))
		return NULL;
	t->tid = agent_gettid();
	char comm[RAW_NAME_MAX];
	read_comm(t->tid, comm, sizeof comm);
	if (open_stream(t, comm) != 0) {
		__atomic_store_n(&t->state, AGENT_T_FREE, __ATOMIC_RELEASE);
		agent_tls = AGENT_DEAD;
		return NULL;
	}
	/* the stream's string ids start again: so do their verdicts */
	memset(t->domains, 0, sizeof t->domains);
	__atomic_store_n(&t->state, AGENT_T_OPEN, __ATOMIC_RELEASE);
	pthread_once(&exit_key_once, make_exit_key);
	pthread_setspecific(exit_key, t);
	agent_tls = t;
	if (!__atomic_exchange_n(&agent.process_recorded, 1, __ATOMIC_ACQ_REL))
		agent_record_process(t);
	return t;
}

/* JSON text for `v`, escaped, into buf at *at (room permitting). */
static void env_json_str(char *buf, size_t len, size_t *at, const char *v)
{
	for (const char *c = v; *c && *at + 8 < len; c++) {
		unsigned char u = (unsigned char)*c;
		if (u == '"' || u == '\\')
			*at += (size_t)snprintf(buf + *at, len - *at, "\\%c", u);
		else if (u < 0x20)
			*at += (size_t)snprintf(buf + *at, len - *at, "\\u%04x", u);
		else
			buf[(*at)++] = (char)u;
	}
	buf[*at] = '\0';
}

/* A rank's own distributed-job variables, as read in the rank (the
 * launcher's environment may have none of them: torchrun sets them for
 * its children), as the metadata the parse puts in ENV_VARIABLES. */
static void emit_rank_env(struct raw_writer *w, uint64_t ts)
{
	static const char *const vars[] = { PROF_ENV_VARS };
	char json[4096];
	size_t at = 0;
	json[at++] = '{';
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		const char *v = getenv(vars[i]);
		if (!v || at + strlen(vars[i]) + 16 >= sizeof json)
			continue;
		at += (size_t)snprintf(json + at, sizeof json - at, "%s\"%s\": \"",
				       at > 1 ? ", " : "", vars[i]);
		env_json_str(json, sizeof json - 2, &at, v);
		json[at++] = '"';
	}
	json[at++] = '}';
	json[at] = '\0';
	struct raw_metadata m = { raw_writer_intern(w, PROF_ENV_KEY, ts),
				  raw_writer_intern(w, json, ts), RAW_METADATA_JSON, 0 };
	raw_writer_emit_aux(w, RAW_REC_METADATA, ts, &m, sizeof m);
}

void agent_emit_process(struct raw_writer *w, uint64_t ts)
{
	char cmdline[4096];
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, cmdline, sizeof cmdline - 1) : 0;
	if (fd >= 0)
		close(fd);
	if (n < 0)
		n = 0;
	for (ssize_t i = 0; i < n; i++)
		if (cmdline[i] == '\0')
			cmdline[i] = ' ';
	while (n > 0 && cmdline[n - 1] == ' ')
		n--;
	cmdline[n] = '\0';
	char exe[4096];
	ssize_t m = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[m > 0 ? m : 0] = '\0';
	int rank = __atomic_load_n(&agent.rank, __ATOMIC_ACQUIRE);
	char rank_text[16];
	snprintf(rank_text, sizeof rank_text, "%d", rank);
	struct raw_process p = {
		.pid = agent.pid, .ppid = agent.ppid,
		.cmdline_id = raw_writer_intern(w, cmdline, ts),
		.exe_id = raw_writer_intern(w, exe, ts),
		.rank_id = rank >= 0 ? raw_writer_intern(w, rank_text, ts) : 0,
	};
	raw_writer_emit_aux(w, RAW_REC_PROCESS, ts, &p, sizeof p);
	if (rank >= 0)
		emit_rank_env(w, ts);
}

void agent_record_process(struct agent_thread *t)
{
	uint64_t ts = agent.begin_ticks;
	agent_emit_process(&t->w, ts);
	if (agent.begin_recording) {
		struct raw_recording r = { 1, RAW_CAUSE_START };
		raw_writer_emit_aux(&t->w, RAW_REC_RECORDING, ts, &r, sizeof r);
	}
}

/* In a fork child: the parent's streams belong to the parent. Only the
 * forking thread exists here, and none of the streams' mappings came
 * along (raw_writer.c): close their descriptors and let the structures go. */
void agent_threads_forget(void)
{
	struct agent_thread *t = agent.threads;
	while (t) {
		struct agent_thread *next = t->next;
		raw_writer_forget(&t->w);
		munmap(t, sizeof *t);
		t = next;
	}
	agent_tls = NULL;
	agent.threads = NULL;
	if (exit_key_once != PTHREAD_ONCE_INIT)
		pthread_setspecific(exit_key, NULL);
}

/* At process exit: name every thread still running from the exiting
 * one's stream (a stream has one writer), and close their streams so the
 * parse does not take them for a crash. Threads still running go on
 * recording into their chunks until the process ends: what they commit is
 * read. Nothing is unmapped: the process is ending. */
static int any_open(void)
{
	for (struct agent_thread *t = __atomic_load_n(&agent.threads, __ATOMIC_ACQUIRE); t;
	     t = t->next)
		if (__atomic_load_n(&t->state, __ATOMIC_ACQUIRE) == AGENT_T_OPEN)
			return 1;
	return 0;
}

void agent_threads_finish(int async_safe)
{
	struct agent_thread *self = agent_tls;
	/* A stream of its own to name the others in, if there are any. */
	if ((uintptr_t)self <= (uintptr_t)AGENT_DEAD)
		self = !async_safe && any_open() ? agent_thread() : NULL;
	for (struct agent_thread *t = __atomic_load_n(&agent.threads, __ATOMIC_ACQUIRE); t;
	     t = t->next) {
		if (!async_safe && self &&
		    __atomic_load_n(&t->state, __ATOMIC_ACQUIRE) == AGENT_T_OPEN)
			agent_thread_name_record(&self->w, t->tid, agent_ticks());
		int closed_here = t != self && stream_close(t);
		if (!async_safe && (t == self || closed_here))
			say_uninterned(t);
	}
	if (self && stream_close(self) && !async_safe)
		raw_writer_release(&self->w);
	agent_tls = AGENT_DEAD;
}

/* Thread names change after the thread starts (PyTorch names its pools
 * this way); catch the change as it happens. A thread named by another
 * is caught at exit instead: a pthread_t does not give its tid. */
__attribute__((visibility("default")))
int pthread_setname_np(pthread_t thread, const char *name)
{
	static int (*real)(pthread_t, const char *);
	if (!real)
		real = (int (*)(pthread_t, const char *))dlsym(RTLD_NEXT, "pthread_setname_np");
	int rc = real ? real(thread, name) : ENOSYS;
	if (rc != 0 || !agent.active || !pthread_equal(thread, pthread_self()) || !agent_enter(0))
		return rc;
	/* A thread without a stream yet gets none for this: its stream, if
	 * it ever records, takes the name it has then. */
	struct agent_thread *self = agent_tls;
	if ((uintptr_t)self > (uintptr_t)AGENT_DEAD) {
		uint64_t ts = agent_ticks();
		struct raw_thread_name tn = { self->tid, raw_writer_intern(&self->w, name, ts) };
		raw_writer_emit_aux(&self->w, RAW_REC_THREAD_NAME, ts, &tn, sizeof tn);
	}
	agent_leave();
	return rc;
}
