/*
 * The device stream of this process image, raw/<pid>.<n>/dev.raw: what
 * every backend delivers, from its own threads, in batches. Opened on the
 * first record so a process that never touches a device has no dev.raw.
 * Timestamps are CLOCK_MONOTONIC ns given by the backend (it maps the
 * device clock), so the stream's clock is always monotonic.
 */
#include "agent/device/dev_sink.h"

#include <stddef.h>

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"

static struct {
	pthread_mutex_t lock;
	struct raw_writer w;
	int failed;              /* the open failed once: not retried per record */
	int finished;            /* closed at exit: later deliveries are dropped */
	int32_t named[64];       /* threads this stream has seen (sink_name_thread) */
	unsigned nnamed;
	int32_t last;            /* the thread of the last API call */
} sink = { .lock = PTHREAD_MUTEX_INITIALIZER, .w = { .fd = -1 } };

void dev_sink_lock(void)
{
	pthread_mutex_lock(&sink.lock);
}

void dev_sink_unlock(void)
{
	pthread_mutex_unlock(&sink.lock);
}

/* The stream, opened now if need be; NULL when there is none to write. */
static struct raw_writer *sink_writer(void)
{
	if (sink.w.hdr)
		return &sink.w;
	if (sink.failed || sink.finished || !agent.active)
		return NULL;
	struct raw_writer_opts o = {
		.clock = RAW_CLOCK_MONOTONIC, .kind = RAW_STREAM_DEVICE,
		.chunk_size = agent.chunk_size, .pid = agent.pid, .tid = 0,
		.ppid = (int32_t)getppid(), .comm = "device",
	};
	int dirfd = agent_stream_dir();
	int rc = dirfd < 0 ? -ENOENT : agent_stream_open(&sink.w, dirfd, "dev.raw", &o);
	if (rc) {
		sink.failed = 1;
		agent_log("cannot open the device stream: %s; device activity is not recorded",
			  strerror(-rc));
		return NULL;
	}
	return &sink.w;
}

static uint32_t intern_opt(struct raw_writer *w, const char *s, uint64_t ts)
{
	return s && *s ? raw_writer_intern(w, s, ts) : 0;
}

int dev_sink_activity(uint64_t start_ns, const struct raw_dev_activity *a, const char *name)
{
	struct raw_writer *w = sink_writer();
	if (!w)
		return -1;
	struct raw_dev_activity r = *a;
	r.name_id = intern_opt(w, name, start_ns);
	/* only a sync has use for the event fields: the many kernels and
	 * copies end before them (readers take the short form as 0s) */
	size_t len = a->kind == RAW_DEV_SYNC ? sizeof r : offsetof(struct raw_dev_activity, wait_corr);
	return raw_writer_emit(w, RAW_REC_DEV_ACTIVITY, start_ns, &r, len);
}

/* A thread that calls the device's API but records nothing else has no
 * stream of its own to carry its name (torch's autograd and pin-memory
 * threads): the device stream names it, the first time it calls, while
 * it still runs. The last one seen is checked first: calls come in runs. */
static void sink_name_thread(struct raw_writer *w, int32_t tid, uint64_t ts)
{
	if (tid <= 0 || tid == sink.last)
		return;
	sink.last = tid;
	for (unsigned i = 0; i < sink.nnamed; i++)
		if (sink.named[i] == tid)
			return;
	if (sink.nnamed == sizeof sink.named / sizeof sink.named[0])
		return;
	sink.named[sink.nnamed++] = tid;
	if (!agent_thread_has_stream(tid))
		agent_thread_name_record(w, tid, ts);
}

int dev_sink_api(uint64_t start_ns, const struct raw_dev_api *a, const char *name)
{
	struct raw_writer *w = sink_writer();
	if (!w)
		return -1;
	sink_name_thread(w, a->tid, start_ns);
	struct raw_dev_api r = *a;
	r.name_id = intern_opt(w, name, start_ns);
	return raw_writer_emit(w, RAW_REC_DEV_API, start_ns, &r, sizeof r);
}

int dev_sink_memory(uint64_t ts_ns, const struct raw_dev_memory *m)
{
	struct raw_writer *w = sink_writer();
	return w ? raw_writer_emit(w, RAW_REC_DEV_MEMORY, ts_ns, m, sizeof *m) : -1;
}

int dev_sink_collective(uint64_t start_ns, const struct raw_dev_collective *c,
			const char *name, const char *group, const char *ranks)
{
	struct raw_writer *w = sink_writer();
	if (!w)
		return -1;
	struct raw_dev_collective r = *c;
	r.name_id = intern_opt(w, name, start_ns);
	r.group_id = intern_opt(w, group, start_ns);
	r.ranks_id = intern_opt(w, ranks, start_ns);
	return raw_writer_emit(w, RAW_REC_DEV_COLLECTIVE, start_ns, &r, sizeof r);
}

int dev_sink_info(const struct raw_dev_info *i, const char *name, const char *uuid)
{
	struct raw_writer *w = sink_writer();
	if (!w)
		return -1;
	uint64_t now = raw_clock_ns(CLOCK_MONOTONIC);
	struct raw_dev_info r = *i;
	r.name_id = intern_opt(w, name, now);
	r.uuid_id = intern_opt(w, uuid, now);
	return raw_writer_emit(w, RAW_REC_DEV_INFO, now, &r, sizeof r);
}

int dev_sink_marker(uint64_t start_ns, const struct raw_dev_marker *m, const char *name,
		    const char *domain)
{
	struct raw_writer *w = sink_writer();
	if (!w)
		return -1;
	struct raw_dev_marker r = *m;
	r.name_id = intern_opt(w, name, start_ns);
	r.domain_id = intern_opt(w, domain, start_ns);
	return raw_writer_emit(w, RAW_REC_DEV_MARKER, start_ns, &r, sizeof r);
}

int dev_sink_op(uint64_t start_ns, const struct raw_op *op, const char *name, const char *shapes)
{
	struct raw_writer *w = sink_writer();
	if (!w)
		return -1;
	struct raw_op r = *op;
	r.name_id = intern_opt(w, name, start_ns);
	r.shapes_id = intern_opt(w, shapes, start_ns);
	/* no FLOPs from NVTX: the short form, which readers take as 0 */
	return raw_writer_emit(w, RAW_REC_OP, start_ns, &r, offsetof(struct raw_op, flops));
}

void dev_sink_lost(uint64_t n)
{
	struct raw_writer *w = n ? sink_writer() : NULL;
	if (w)
		raw_writer_lose(w, n);
}

int dev_sink_recording(void)
{
	return agent.active && agent_recording();
}

void dev_sink_finish(void)
{
	pthread_mutex_lock(&sink.lock);
	if (sink.w.hdr)
		raw_writer_close(&sink.w);
	sink.finished = 1;
	pthread_mutex_unlock(&sink.lock);
}

void dev_sink_fork_lock(int take)
{
	if (take)
		pthread_mutex_lock(&sink.lock);
	else
		pthread_mutex_unlock(&sink.lock);
}

/* In a fork child: the parent's stream is the parent's, and its lock may
 * have been held by a backend thread that does not exist here. */
void dev_sink_forget(void)
{
	raw_writer_forget(&sink.w);
	sink.failed = 0;
	sink.finished = 0;
	sink.nnamed = 0;
	sink.last = 0;
	pthread_mutex_init(&sink.lock, NULL);
}
