/*
 * The framework stream: operators that prof's Python hooks convert from
 * torch.profiler after each window, into raw/<pid>.<n>/fw.raw. Written
 * after the fact, so its timestamps are CLOCK_MONOTONIC ns given by the
 * caller, not ticks read now; one writer per process, behind a lock (the
 * hooks flush from whichever thread ends a window).
 */
#include "agent.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t fw_lock = PTHREAD_MUTEX_INITIALIZER;
static struct raw_writer fw = { .fd = -1 };
static int fw_failed;

static int fw_open(void)
{
	struct raw_writer_opts o = {
		.clock = RAW_CLOCK_MONOTONIC, .kind = RAW_STREAM_FRAMEWORK,
		.chunk_size = agent.chunk_size, .pid = agent.pid, .tid = 0,
		.ppid = (int32_t)getppid(), .comm = "framework",
		.budget_used = agent.budget_used, .budget_limit = agent.budget_limit,
	};
	int rc = raw_writer_open(&fw, agent.proc_dirfd, "fw.raw", &o);
	if (rc) {
		fw_failed = 1;
		agent_log("cannot open the framework stream: %s; operators are not recorded",
			  strerror(-rc));
	}
	return rc;
}

static uint32_t intern_opt(const char *s, uint64_t ts)
{
	return s && *s ? raw_writer_intern(&fw, s, ts) : 0;
}

__attribute__((visibility("default")))
int prof_fw_op(int32_t tid, uint64_t start_ns, uint64_t end_ns, const char *name,
	       const char *shapes, const char *types, const char *stack,
	       uint32_t flags, int64_t seq, int32_t fwd_tid)
{
	if (!agent.active || !name || end_ns < start_ns)
		return -1;
	pthread_mutex_lock(&fw_lock);
	int rc = -1;
	if (fw.hdr || (!fw_failed && fw_open() == 0)) {
		struct raw_op op = {
			.end = end_ns, .tid = tid, .name_id = raw_writer_intern(&fw, name, start_ns),
			.shapes_id = intern_opt(shapes, start_ns), .types_id = intern_opt(types, start_ns),
			.stack_id = intern_opt(stack, start_ns), .flags = flags, .seq = seq,
			.fwd_tid = fwd_tid,
		};
		rc = raw_writer_emit(&fw, RAW_REC_OP, start_ns, &op, sizeof op);
	}
	pthread_mutex_unlock(&fw_lock);
	return rc;
}

__attribute__((visibility("default")))
void prof_fw_log(const char *msg)
{
	if (agent.active && msg)
		agent_log("%s", msg);
}

void agent_fw_finish(void)
{
	pthread_mutex_lock(&fw_lock);
	if (fw.hdr)
		raw_writer_close(&fw);
	pthread_mutex_unlock(&fw_lock);
}

/* In a fork child: the parent's stream is the parent's, and the lock may
 * have been held by one of its threads. */
void agent_fw_forget(void)
{
	if (fw.hdr)
		raw_writer_abandon(&fw);
	fw_failed = 0;
	pthread_mutex_init(&fw_lock, NULL);
}
