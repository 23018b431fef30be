/*
 * The in-process agent's shared state. One `struct agent` per process
 * image; one `struct agent_thread` per thread that has recorded.
 */
#ifndef PROF_AGENT_H
#define PROF_AGENT_H

#include <stddef.h>
#include <stdint.h>
#include "common/domain_filter.h"
#include "raw/raw_clock.h"
#include "raw/raw_control.h"
#include "raw/raw_writer.h"

#define AGENT_DEAD ((struct agent_thread *)1) /* TLS mark of a finished thread */

#define AGENT_OFF_API      0x1u /* prof_stop(), --start-paused */
#define AGENT_OFF_SCHEDULE 0x2u /* outside the schedule's active steps */
#define AGENT_OFF_DYNAMIC  0x4u /* --dynamic, outside an activation's window */
#define AGENT_OFF_RANK     0x8u /* is_rank: this process's rank is not in rank_list */

/* A thread's stream is closed once, by its thread as it exits or by the
 * thread that ends the process, whichever comes first: OPEN -> CLOSING
 * (the winner writes the header's close mark) -> CLOSED. Only then does
 * the exiting thread unmap the stream and hand the structure back (FREE)
 * for a thread to come; a finisher never touches a header it did not win. */
enum agent_thread_state {
	AGENT_T_FREE,                /* reusable (its stream gone) */
	AGENT_T_SETUP,               /* being (re)opened by its new thread */
	AGENT_T_OPEN,
	AGENT_T_CLOSING,
	AGENT_T_CLOSED,
};

/* A domain's verdict, by its string id in the thread's stream (agent_tx.c):
 * the filter is asked once per domain and stream. */
#define AGENT_DOMAIN_CACHE 8
struct agent_domain_seen {
	uint32_t id;                 /* 0: none */
	uint32_t keep;
};

struct agent_thread {
	struct raw_writer w;
	int tid;
	uint32_t state;              /* enum agent_thread_state, atomic */
	struct agent_thread *next;   /* all threads of this process image, ever */
	struct agent_domain_seen domains[AGENT_DOMAIN_CACHE];
};

struct agent {
	int active;                  /* configured by the launcher, and ready */
	int clock_tsc;               /* raw_clock_tsc() rather than clock_gettime */
	uint32_t clock;              /* enum raw_clock */
	uint32_t chunk_size;
	uint64_t tsc_hz;
	const volatile uint32_t *control; /* launcher's recording switch */
	const volatile struct raw_control *ctl; /* its page; NULL without the launcher */
	/* --storage-limit: the page's shared counter and the budget, handed
	 * to every writer of this process (raw_writer_opts); NULL/0: none. */
	uint64_t *budget_used;
	uint64_t budget_limit;
	uint64_t *no_space;          /* the page's streams_no_space; NULL: none */
	uint64_t *disk_full;         /* the page's streams_disk_full; NULL: none */
	/* Why this process does not record now: AGENT_OFF_* bits. With the
	 * launcher's page, the hot path's whole test is two loads. */
	volatile uint32_t off;
	int pid;
	/* This process image, as its first stream records it: raw/<pid>.<n>/
	 * is made then (agent_proc_dir), not at load, so a process that
	 * records nothing leaves nothing. */
	int ppid;
	uint64_t begin_ticks;        /* when it began (loaded, forked) */
	int begin_recording;         /* recording then */
	uint32_t proc_dir_state;     /* AGENT_DIR_*, atomic */
	int process_recorded;        /* its PROCESS record is written (atomic) */
	int proc_dirfd;              /* raw/<pid>.<n>/, once made */
	int log_fd;
	char run_dir[4096];
	uint64_t range_next;         /* ids for cross-thread ranges */
	int tx_off;                  /* msprof_tx false: the program's marks and ranges
				      * (prof_tx, NVTX) are not recorded */
	/* mstx_domain_include / _exclude, for prof_tx's and NVTX's domains;
	 * the default domain's verdict once for all. */
	struct domain_filter domains;
	int default_kept;
	uint64_t steps;              /* steps seen in this process */
	/* This process's rank: the launcher's variables at load
	 * (prof_env_rank), or what the framework says later, at
	 * init_process_group (agent_rank.c); -1: none. A fork child keeps it. */
	int rank;
	struct agent_thread *threads;
};

extern struct agent agent;
extern __thread struct agent_thread *agent_tls __attribute__((tls_model("initial-exec")));

/* Depth of prof's work on this thread: a prof_* call, a hook's flush, a
 * window switch. A call that finds it set came from a signal handler that
 * interrupted that work: it would write over the bytes the outer call has
 * reserved, use an intern table in the middle of its growth, or wait for
 * a lock the outer call holds. So it records nothing and, when it would
 * have recorded, counts itself lost (agent_nested_lost, added to the
 * thread's stream by the outer call on its way out). The signal fences
 * keep the compiler from moving the stores across the work: a handler
 * runs on this thread, between any two instructions. */
extern __thread uint32_t agent_busy __attribute__((tls_model("initial-exec")));
extern __thread uint64_t agent_nested_lost __attribute__((tls_model("initial-exec")));

/* 1: go on, then agent_leave(); 0: nested, return (counted lost when
 * `would_record`). */
static inline int agent_enter(int would_record)
{
	if (__builtin_expect(agent_busy != 0, 0)) {
		if (would_record)
			__atomic_fetch_add(&agent_nested_lost, 1, __ATOMIC_RELAXED);
		return 0;
	}
	agent_busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return 1;
}

/* What nested calls left for the outer one: their losses, a deferred
 * prof_start/prof_stop (agent_sched.c). */
void agent_leave_slow(void);
extern __thread uint32_t agent_nested_api __attribute__((tls_model("initial-exec")));

static inline void agent_leave(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (__builtin_expect(agent_nested_lost != 0 || agent_nested_api != 0, 0))
		agent_leave_slow();
	agent_busy = 0;
}

static inline uint64_t agent_ticks(void)
{
	return agent.clock_tsc ? raw_clock_tsc() : raw_clock_ns(CLOCK_MONOTONIC);
}

static inline int agent_recording(void)
{
	return (agent.off == 0) & *agent.control;
}

/* Operators recorded on their thread as they run (agent_tx.c; the CUDA
 * backend's NVTX hook): begin returns 1 when written, and then its end
 * must be written too. */
int agent_op_begin(const char *name, size_t name_len, const char *shapes, size_t shapes_len,
		   int64_t seq);
void agent_op_end(void);

/* Schedule and --dynamic windows (agent_sched.c). */
void agent_sched_init(void);
/* Step `n` just ended on thread `t`: decides whether step n+1 records. */
void agent_sched_step_end(struct agent_thread *t, uint64_t n);
/* prof_start / prof_stop. */
void agent_sched_api(uint32_t on);

/* fork: the locks taken before it, given back after it in the parent
 * and in the child (whose data they guard is then whole). */
enum agent_fork { AGENT_FORK_PREPARE, AGENT_FORK_PARENT, AGENT_FORK_CHILD };
void agent_sched_fork(enum agent_fork side);
/* In a fork child that did not get the locks whole: fresh ones. */
void agent_sched_after_fork(void);
void agent_dev_fork(enum agent_fork side);
void agent_fw_fork(enum agent_fork side);
/* A stream of this process image written after the fact, as the
 * framework's are (CLOCK_MONOTONIC, no thread): raw/<pid>.<n>/<file>.
 * 0, or a negative errno (said in the log, and *failed set when given). */
int agent_fw_stream_open(struct raw_writer *w, const char *file, const char *comm, int *failed);
/* The framework stream (agent_fw.c): closed at exit (async_safe: its
 * close mark only, without the lock), dropped in a fork child. */
void agent_fw_finish(int async_safe);
void agent_fw_forget(void);
/* Device activity (agent_dev.c), when PROF_AGENT_DEVICE is "1": the HAL
 * follows the effective recording state (agent_dev_update, after every
 * switch), stops at exit, and is dropped in a fork child. */
void agent_dev_init(void);
void agent_dev_update(void);
void agent_dev_finish(void);
void agent_dev_forget(void);

/* Writes thread TID's name (/proc/self/task/TID/comm) into w; nothing
 * when the thread has ended. System calls: never on a hot path. */
void agent_thread_name_record(struct raw_writer *w, int tid, uint64_t ts);
/* Does thread TID of this process image write a stream now (which names
 * it)? Walks the thread list: not for a hot path. */
int agent_thread_has_stream(int tid);

/* This thread's stream, created on first use; NULL when it cannot be had
 * (agent inert, thread finished, no file). */
struct agent_thread *agent_thread_slow(void);

static inline struct agent_thread *agent_thread(void)
{
	struct agent_thread *t = agent_tls;
	if (__builtin_expect((uintptr_t)t > (uintptr_t)AGENT_DEAD, 1))
		return t;
	return agent_thread_slow();
}

enum { AGENT_DIR_NONE, AGENT_DIR_MAKING, AGENT_DIR_MADE, AGENT_DIR_FAILED };

/* Process image setup: used at load time and in a fork child. */
void agent_process_begin(int ppid);
/* raw/<pid>.<n>/ of this process image, made by the first stream that
 * needs it; -1 when it cannot be made (said in the log, once). */
int agent_proc_dir(void);
/* agent_proc_dir for a stream that is not a thread's (framework, device):
 * the image's PROCESS record goes in a thread stream, this thread's when
 * no thread has one yet. */
int agent_stream_dir(void);
/* raw_writer_open under `dirfd` with what this process's writers share
 * (the storage budget, the page's count of streams a full disk stopped)
 * set in `o`; a stream the disk had no room for is counted in the page's
 * streams_no_space. */
int agent_stream_open(struct raw_writer *w, int dirfd, const char *name,
		      struct raw_writer_opts *o);
void agent_threads_forget(void);
/* At process exit: close every thread's stream. async_safe: only the close
 * marks (from _exit, or a signal handler that interrupted prof's work),
 * no thread names, no unmapping. */
void agent_threads_finish(int async_safe);
/* The PROCESS record (and the rank's environment, and recording on since
 * the image began), stamped when the image began: written by the first
 * thread stream of the image. */
void agent_record_process(struct agent_thread *t);

/* The rank from the environment, at load (agent_rank.c). */
void agent_rank_init(void);
/* agent_python.c: PYTHONPATH mended at load (prof's Python directory
 * first again), and at exit the notice of a process that imported torch
 * without prof's hooks. */
void agent_python_init(void);
/* agent_exec.c: the exec and spawn calls put the agent back into an
 * LD_PRELOAD a launch script replaced; at load, before anything else
 * (-1: this agent is not found in LD_PRELOAD, so it cannot be put back). */
int agent_exec_init(void);
void agent_python_exit_check(void);
/* is_rank, again, once the rank is known late (agent_sched.c): a listed
 * rank records from here (a RECORDING record on this thread's stream). */
void agent_sched_rank_known(void);
/* A PROCESS record on `w` at `ts` (and, with a rank, the rank's
 * environment): the image's first thread stream writes it, and the late
 * rank's stream (agent_thread.c). */
void agent_emit_process(struct raw_writer *w, uint64_t ts);

/* Diagnostics to <run>/logs/agent-<pid>.log; never to the program's
 * stdout/stderr, never on the hot path. */
void agent_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
