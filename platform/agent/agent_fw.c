/*
 * The framework streams: operators that prof's Python hooks convert from
 * torch.profiler after each window, into raw/<pid>.<n>/fw.raw, and with
 * profile_memory the allocator's events into fwmem.raw (a stream of its
 * own: each stream is read in file order, and a flush hands operators and
 * memory events over as two time-ordered lists). Written after the fact,
 * so their timestamps are CLOCK_MONOTONIC ns given by the caller, not
 * ticks read now; one writer each per process, behind one lock (the hooks
 * flush from whichever thread ends a window).
 */
#include "agent.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t fw_lock = PTHREAD_MUTEX_INITIALIZER;
static struct raw_writer fw = { .fd = -1 };
static struct raw_writer fwmem = { .fd = -1 };
static int fw_failed, fwmem_failed;

int agent_fw_stream_open(struct raw_writer *w, const char *file, const char *comm, int *failed)
{
	struct raw_writer_opts o = {
		.clock = RAW_CLOCK_MONOTONIC, .kind = RAW_STREAM_FRAMEWORK,
		.chunk_size = agent.chunk_size, .pid = agent.pid, .tid = 0,
		.ppid = (int32_t)getppid(), .comm = comm,
	};
	int dirfd = agent_stream_dir();
	int rc = dirfd < 0 ? -ENOENT : agent_stream_open(w, dirfd, file, &o);
	if (rc) {
		if (failed)
			*failed = 1;
		agent_log("cannot open the framework stream %s: %s; what it holds is not recorded",
			  file, strerror(-rc));
	}
	return rc;
}

static int fw_open(void)
{
	return agent_fw_stream_open(&fw, "fw.raw", "framework", &fw_failed);
}

static uint32_t intern_opt(const char *s, uint64_t ts)
{
	return s && *s ? raw_writer_intern(&fw, s, ts) : 0;
}

/* With fw_lock held and the stream open. */
static int fw_emit(int32_t tid, uint64_t start_ns, uint64_t end_ns, const char *name,
		   const char *shapes, const char *types, const char *stack, uint32_t flags,
		   int64_t seq, int32_t fwd_tid, uint64_t flops)
{
	struct raw_op op = {
		.end = end_ns, .tid = tid, .name_id = raw_writer_intern(&fw, name, start_ns),
		.shapes_id = intern_opt(shapes, start_ns), .types_id = intern_opt(types, start_ns),
		.stack_id = intern_opt(stack, start_ns), .flags = flags, .seq = seq,
		.fwd_tid = fwd_tid, .flops = flops,
	};
	return raw_writer_emit(&fw, RAW_REC_OP, start_ns, &op, sizeof op);
}

static int fw_ready(void)
{
	return fw.hdr || (!fw_failed && fw_open() == 0);
}

/* One operator in prof_fw_ops' buffer (little-endian, packed), followed by
 * its four strings, each NUL-terminated, len[i] bytes with the NUL; 0: none
 * (the name must be there). The Python hooks pack a flush's operators into
 * one buffer: one call instead of one ctypes call per operator, which was
 * half of a flush's cost on the training thread. */
struct fw_op_head {
	int32_t tid;
	uint64_t start_ns, end_ns;
	uint32_t flags;
	int64_t seq;
	int32_t fwd_tid;
	uint32_t len[4];     /* name, shapes, types, stack */
	uint64_t flops;      /* with_flops; 0: none */
} __attribute__((packed));

/* The string at *p of length n (with its NUL), or NULL; advances *p. */
static const char *fw_take(const uint8_t **p, const uint8_t *end, uint32_t n, int *bad)
{
	if (!n)
		return NULL;
	if ((size_t)(end - *p) < n || (*p)[n - 1] != 0) {
		*bad = 1;
		return NULL;
	}
	const char *s = (const char *)*p;
	*p += n;
	return s;
}

/* Returns the operators written, or -1 when none could be (no agent, no
 * stream); a malformed record ends the batch there. */
__attribute__((visibility("default")))
int prof_fw_ops(const void *buf, size_t len)
{
	if (!agent.active || !buf || !agent_enter(0))
		return -1;
	const uint8_t *p = buf, *end = p + len;
	int done = 0;
	pthread_mutex_lock(&fw_lock);
	if (!fw_ready()) {
		pthread_mutex_unlock(&fw_lock);
		agent_leave();
		return -1;
	}
	while ((size_t)(end - p) >= sizeof(struct fw_op_head)) {
		struct fw_op_head h;
		memcpy(&h, p, sizeof h);
		p += sizeof h;
		int bad = 0;
		const char *s[4];
		for (int i = 0; i < 4; i++)
			s[i] = fw_take(&p, end, h.len[i], &bad);
		if (bad || !s[0] || h.end_ns < h.start_ns)
			break;
		if (fw_emit(h.tid, h.start_ns, h.end_ns, s[0], s[1], s[2], s[3], h.flags, h.seq,
			    h.fwd_tid, h.flops) == 0)
			done++;
	}
	pthread_mutex_unlock(&fw_lock);
	agent_leave();
	return done;
}

/* One event in prof_fw_memory's buffer (little-endian, packed). */
struct fw_mem_head {
	int32_t tid;
	uint64_t ns;
	int64_t bytes;           /* negative: a free */
	uint64_t address;        /* 0: unknown */
	int64_t total_allocated, total_reserved, total_active;   /* -1: unknown */
	int16_t device_type, device_index;
} __attribute__((packed));

/* profile_memory: the allocator events of a flush, in time order, into
 * fwmem.raw. Returns the events written, or -1 when none could be. */
__attribute__((visibility("default")))
int prof_fw_memory(const void *buf, size_t len)
{
	if (!agent.active || !buf || !agent_enter(0))
		return -1;
	const uint8_t *p = buf, *end = p + len;
	int done = 0;
	pthread_mutex_lock(&fw_lock);
	if (!fwmem.hdr && (fwmem_failed || agent_fw_stream_open(&fwmem, "fwmem.raw",
								  "framework memory",
								  &fwmem_failed))) {
		pthread_mutex_unlock(&fw_lock);
		agent_leave();
		return -1;
	}
	for (; (size_t)(end - p) >= sizeof(struct fw_mem_head); p += sizeof(struct fw_mem_head)) {
		struct fw_mem_head h;
		memcpy(&h, p, sizeof h);
		struct raw_fw_memory r = {
			.bytes = h.bytes, .address = h.address, .total_allocated = h.total_allocated,
			.total_reserved = h.total_reserved, .total_active = h.total_active,
			.tid = h.tid, .device_type = h.device_type, .device_index = h.device_index,
		};
		if (raw_writer_emit(&fwmem, RAW_REC_FW_MEMORY, h.ns, &r, sizeof r) == 0)
			done++;
	}
	pthread_mutex_unlock(&fw_lock);
	agent_leave();
	return done;
}

__attribute__((visibility("default")))
void prof_fw_log(const char *msg)
{
	if (agent.active && msg)
		agent_log("%s", msg);
}

void agent_fw_finish(int async_safe)
{
	if (async_safe) {
		/* A writer in the middle of a batch keeps its chunk: what it
		 * committed is read, the rest was never committed. */
		raw_writer_mark_closed(&fw);
		raw_writer_mark_closed(&fwmem);
		return;
	}
	pthread_mutex_lock(&fw_lock);
	if (fw.hdr)
		raw_writer_close(&fw);
	if (fwmem.hdr)
		raw_writer_close(&fwmem);
	pthread_mutex_unlock(&fw_lock);
}

void agent_fw_fork(enum agent_fork side)
{
	if (side == AGENT_FORK_PREPARE)
		pthread_mutex_lock(&fw_lock);
	else
		pthread_mutex_unlock(&fw_lock);
}

/* In a fork child: the parent's stream is the parent's, and the lock may
 * have been held by one of its threads. */
void agent_fw_forget(void)
{
	raw_writer_forget(&fw);
	raw_writer_forget(&fwmem);
	fw_failed = fwmem_failed = 0;
	pthread_mutex_init(&fw_lock, NULL);
}

/* The directory of this process image's streams, as a descriptor: with
 * PROF_OPS_KINETO_SAVE the Python hooks have torch write each operator
 * flush there itself, under /proc/self/fd/<it>/ (ingest/parse_kineto.h).
 * -1: none. */
__attribute__((visibility("default")))
int prof_fw_dir_fd(void)
{
	if (!agent.active || !agent_enter(0))
		return -1;
	int fd = agent_stream_dir();
	agent_leave();
	return fd;
}

/* Charges `bytes` that torch wrote into the stream directory (a flush
 * saved by torch itself) to the run's storage budget (--storage-limit),
 * as the raw writers charge their chunks: 1 when granted or when there
 * is no budget, 0 when the budget is spent. */
__attribute__((visibility("default")))
int prof_fw_charge(uint64_t bytes)
{
	return !agent.active || raw_budget_grant(agent.budget_used, agent.budget_limit, bytes);
}
