/*
 * The device HAL's one table of backends and the dispatch to those that
 * started. One lock orders every lifecycle call (the agent's threads, the
 * flusher, a runtime injecting itself late); backends deliver activity
 * through the sink without it.
 */
#include "agent/device/hal.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/device/hal_flusher.h"

extern const struct dev_backend dev_backend_sim;
#ifdef PROF_HAVE_CUDA
/* Weak: the table is in platform/agent/device/cuda/backend.c, which a build
 * may not have yet; a missing one reads as NULL and is skipped. */
extern const struct dev_backend dev_backend_cuda __attribute__((weak));
#endif

static const struct dev_backend *const hal_table[] = {
#ifdef PROF_HAVE_CUDA
	&dev_backend_cuda,
#endif
	&dev_backend_sim,
};
#define HAL_N (sizeof hal_table / sizeof hal_table[0])

static struct {
	pthread_mutex_t lock;
	int enabled;             /* hal_start ran: the run wants device activity */
	const char *only;        /* hal_start_only's backend: no other may start */
	int paused;              /* outside a recording window */
	int started[HAL_N];
} hal = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* With the lock held. A backend that starts late starts in the present
 * state: paused when no window is open. */
static int hal_start_one(size_t i)
{
	const struct dev_backend *b = hal_table[i];
	if (hal.started[i])
		return 0;
	int rc = b->start();
	if (rc) {
		agent_log("device backend %s: not started: %s", b->name, strerror(-rc));
		return rc;
	}
	hal.started[i] = 1;
	if (hal.paused && b->pause)
		b->pause();
	agent_log("device backend %s: started", b->name);
	hal_flusher_start();
	return 0;
}

void hal_start(void)
{
	pthread_mutex_lock(&hal.lock);
	hal.enabled = 1;
	for (size_t i = 0; i < HAL_N; i++)
		if (hal_table[i] && hal_table[i]->probe())
			hal_start_one(i);
	pthread_mutex_unlock(&hal.lock);
}

void hal_start_only(const char *name)
{
	pthread_mutex_lock(&hal.lock);
	hal.enabled = 1;
	hal.only = name;
	pthread_mutex_unlock(&hal.lock);
}

int hal_start_backend(const char *name)
{
	int rc = -ENODEV;
	pthread_mutex_lock(&hal.lock);
	/* Not enabled: the run's activities leave DEVICE out. */
	for (size_t i = 0; hal.enabled && i < HAL_N; i++)
		if (hal_table[i] && strcmp(hal_table[i]->name, name) == 0 &&
		    (!hal.only || strcmp(hal.only, name) == 0))
			rc = hal_start_one(i);
	pthread_mutex_unlock(&hal.lock);
	return rc;
}

/* Calls `fn` of every started backend, with the lock held. */
#define HAL_EACH_STARTED(fn)                                    \
	do {                                                    \
		for (size_t i_ = 0; i_ < HAL_N; i_++)           \
			if (hal.started[i_] && hal_table[i_]->fn) \
				hal_table[i_]->fn();            \
	} while (0)

void hal_pause(void)
{
	pthread_mutex_lock(&hal.lock);
	hal.paused = 1;
	HAL_EACH_STARTED(pause);
	pthread_mutex_unlock(&hal.lock);
}

void hal_resume(void)
{
	pthread_mutex_lock(&hal.lock);
	hal.paused = 0;
	HAL_EACH_STARTED(resume);
	pthread_mutex_unlock(&hal.lock);
}

void hal_flush(void)
{
	pthread_mutex_lock(&hal.lock);
	HAL_EACH_STARTED(flush);
	pthread_mutex_unlock(&hal.lock);
}

/* The process is exiting: no backend starts after this. */
void hal_stop(void)
{
	pthread_mutex_lock(&hal.lock);
	HAL_EACH_STARTED(stop);
	memset(hal.started, 0, sizeof hal.started);
	hal.enabled = 0;
	pthread_mutex_unlock(&hal.lock);
}

void hal_fork_lock(int take)
{
	if (take)
		pthread_mutex_lock(&hal.lock);
	else
		pthread_mutex_unlock(&hal.lock);
}

/* In a fork child: the parent's subscriptions and flusher are the
 * parent's; the lock may have been held by one of its threads. A runtime
 * used here starts its backend again (hal_start_backend). */
void hal_forget(void)
{
	pthread_mutex_init(&hal.lock, NULL);
	memset(hal.started, 0, sizeof hal.started);
	hal_flusher_forget();
}
