/*
 * The device flusher thread (hal_flusher.h). It sleeps on a condition
 * variable against CLOCK_MONOTONIC, so stopping it at exit is prompt.
 */
#include "agent/device/hal_flusher.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "agent/agent.h"
#include "agent/device/hal.h"

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	int running;             /* a thread was created in this process */
	int stop;
	pthread_t thread;
} fl = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void tick_deadline(struct timespec *t)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_nsec += HAL_FLUSH_MS * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec += t->tv_nsec / 1000000000L;
		t->tv_nsec %= 1000000000L;
	}
}

static void *flusher_main(void *arg)
{
	struct timespec next;
	/* prctl, not pthread_setname_np: the agent's wrapper of that would
	 * give this thread a stream of its own. */
	prctl(PR_SET_NAME, "prof-devflush", 0, 0, 0);
	pthread_mutex_lock(&fl.lock);
	while (!fl.stop) {
		tick_deadline(&next);
		while (!fl.stop && pthread_cond_timedwait(&fl.wake, &fl.lock, &next) == 0)
			;
		if (fl.stop)
			break;
		pthread_mutex_unlock(&fl.lock);
		agent_dev_update();   /* the launcher's switch, polled */
		hal_flush();
		pthread_mutex_lock(&fl.lock);
	}
	pthread_mutex_unlock(&fl.lock);
	return NULL;
}

void hal_flusher_start(void)
{
	pthread_mutex_lock(&fl.lock);
	if (fl.running) {
		pthread_mutex_unlock(&fl.lock);
		return;
	}
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&fl.wake, &ca);
	pthread_condattr_destroy(&ca);
	fl.stop = 0;
	/* All signals blocked: the program's signals go to its own threads. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&fl.thread, NULL, flusher_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		agent_log("cannot start the device flusher: %s; device activity is written "
			  "only at window ends and at exit", strerror(rc));
	fl.running = rc == 0;
	pthread_mutex_unlock(&fl.lock);
}

void hal_flusher_stop(void)
{
	pthread_mutex_lock(&fl.lock);
	if (!fl.running) {
		pthread_mutex_unlock(&fl.lock);
		return;
	}
	fl.stop = 1;
	pthread_cond_signal(&fl.wake);
	pthread_mutex_unlock(&fl.lock);
	pthread_join(fl.thread, NULL);
	pthread_mutex_lock(&fl.lock);
	fl.running = 0;
	pthread_mutex_unlock(&fl.lock);
}

void hal_flusher_forget(void)
{
	pthread_mutex_init(&fl.lock, NULL);
	fl.running = 0;
	fl.stop = 0;
}
