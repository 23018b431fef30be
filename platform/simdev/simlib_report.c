/*
 * How the sim device reports (sim_inject.h): injection into prof's agent,
 * the one subscriber, and the buffer of completed records it receives in
 * batches. Three locks, always taken in this order when nested:
 * inject_lock (the agent may subscribe from inside prof_sim_inject),
 * deliver_lock (one delivery at a time, so a flush that returns has handed
 * over everything completed before it), buf_lock (appending, briefly).
 */
#include "simlib_int.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SIM_BATCH 4096   /* records buffered before the filler delivers them */

static pthread_mutex_t inject_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t deliver_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t buf_lock = PTHREAD_MUTEX_INITIALIZER;
static int injected;             /* prof_sim_inject looked up in this image */
static int subscribed;           /* written under deliver_lock and buf_lock */
static struct sim_subscriber sub;
static struct sim_record *buf;
static size_t buf_n, buf_cap;
static uint64_t next_correlation;

uint64_t sim_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int sim_tid(void)
{
	return (int)syscall(SYS_gettid);
}

uint64_t sim_correlation(void)
{
	return __atomic_add_fetch(&next_correlation, 1, __ATOMIC_RELAXED);
}

/* Once per process image, at the first API call, as CUDA does with
 * CUDA_INJECTION64_PATH. Without prof the symbol is absent. */
void sim_ensure_injected(void)
{
	if (__builtin_expect(__atomic_load_n(&injected, __ATOMIC_ACQUIRE), 1))
		return;
	pthread_mutex_lock(&inject_lock);
	if (!injected) {
		static const struct sim_entry entry = {
			SIM_INJECT_VERSION, prof_sim_subscribe, prof_sim_flush, prof_sim_unsubscribe,
		};
		int (*inject)(const struct sim_entry *) =
			(int (*)(const struct sim_entry *))dlsym(RTLD_DEFAULT, "prof_sim_inject");
		if (inject)
			inject(&entry);
		__atomic_store_n(&injected, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&inject_lock);
}

int sim_recording(void)
{
	if (!__atomic_load_n(&subscribed, __ATOMIC_ACQUIRE))
		return 0;
	return sub.recording ? sub.recording() : 1;
}

/* A full buffer is handed over by the thread that filled it (CUPTI's
 * buffer-completed callback). */
void sim_report(const struct sim_record *r)
{
	if (!__atomic_load_n(&subscribed, __ATOMIC_ACQUIRE))
		return;
	int full = 0;
	pthread_mutex_lock(&buf_lock);
	if (subscribed && buf_n == buf_cap) {
		size_t cap = buf_cap ? buf_cap * 2 : 64;
		struct sim_record *b = realloc(buf, cap * sizeof *b);
		if (b) {
			buf = b;
			buf_cap = cap;
		}
	}
	if (subscribed && buf_n < buf_cap) {
		buf[buf_n++] = *r;
		full = buf_n >= SIM_BATCH;
	}
	pthread_mutex_unlock(&buf_lock);
	if (full)
		prof_sim_flush();
}

/* With deliver_lock held. */
static void deliver_pending(void)
{
	pthread_mutex_lock(&buf_lock);
	struct sim_record *recs = buf;
	size_t n = buf_n;
	buf = NULL;
	buf_n = buf_cap = 0;
	pthread_mutex_unlock(&buf_lock);
	if (n && subscribed)
		sub.deliver(recs, n, sub.ctx);
	free(recs);
}

SIM_EXPORT void prof_sim_flush(void)
{
	pthread_mutex_lock(&deliver_lock);
	deliver_pending();
	pthread_mutex_unlock(&deliver_lock);
}

SIM_EXPORT int prof_sim_subscribe(const struct sim_subscriber *s)
{
	if (!s || !s->deliver)
		return -EINVAL;
	if (s->version != SIM_INJECT_VERSION)
		return -EPROTO;
	int rc = 0;
	pthread_mutex_lock(&deliver_lock);
	if (subscribed) {
		rc = -EBUSY;
	} else {
		sub = *s;
		pthread_mutex_lock(&buf_lock);
		__atomic_store_n(&subscribed, 1, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&buf_lock);
	}
	pthread_mutex_unlock(&deliver_lock);
	return rc;
}

/* Records not yet flushed are dropped: the subscriber flushes first. */
SIM_EXPORT void prof_sim_unsubscribe(void)
{
	pthread_mutex_lock(&deliver_lock);
	pthread_mutex_lock(&buf_lock);
	__atomic_store_n(&subscribed, 0, __ATOMIC_RELEASE);
	free(buf);
	buf = NULL;
	buf_n = buf_cap = 0;
	pthread_mutex_unlock(&buf_lock);
	pthread_mutex_unlock(&deliver_lock);
}

/* In a fork child: the parent's records are the parent's to deliver, its
 * subscriber is the parent's agent; this image injects anew. */
void sim_report_after_fork(void)
{
	pthread_mutex_init(&inject_lock, NULL);
	pthread_mutex_init(&deliver_lock, NULL);
	pthread_mutex_init(&buf_lock, NULL);
	free(buf);
	buf = NULL;
	buf_n = buf_cap = 0;
	subscribed = 0;
	injected = 0;
}
