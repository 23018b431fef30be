/*
 * Device activity in the agent: the HAL is started when the launcher asks
 * for DEVICE activities (PROF_AGENT_DEVICE), or for NVTX alone in a run
 * without them (PROF_AGENT_DEVICE_NVTX: CUDA's backend, MARKER records
 * only, for operators as torch's NVTX ranges), kept in step with the
 * process's effective recording state, flushed at the end of each window,
 * and closed at exit. The state changes at step boundaries and API calls
 * (agent_sched.c calls agent_dev_update) and through the launcher's control
 * page, which tells nobody: the device flusher polls it.
 */
#include "agent.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/agent_env.h"
#include "agent/device/dev_sink.h"
#include "agent/device/hal.h"
#include "agent/device/hal_flusher.h"

static struct {
	int enabled;
	int on;                  /* state last applied to the HAL; -1: none yet */
	pthread_mutex_t lock;    /* the sched lock's holder and the flusher both update */
} dev = { .on = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

void agent_dev_init(void)
{
	const char *v = getenv(PROF_AGENT_DEVICE);
	int nvtx_only = v && strcmp(v, PROF_AGENT_DEVICE_NVTX) == 0;
	if (!nvtx_only && (!v || strcmp(v, "1") != 0))
		return;
	dev.enabled = 1;
	if (nvtx_only)   /* CUDA's backend alone, when CUDA comes, for NVTX */
		hal_start_only("cuda");
	else
		hal_start();
	agent_dev_update();
}

void agent_dev_update(void)
{
	if (!dev.enabled)
		return;
	pthread_mutex_lock(&dev.lock);
	int on = agent_recording(), was = dev.on;
	if (on != was) {
		dev.on = on;
		if (on) {
			hal_resume();
		} else {
			hal_pause();
			if (was == 1)   /* a window ended: its activity to disk now */
				hal_flush();
		}
	}
	pthread_mutex_unlock(&dev.lock);
}

/* The flusher first: it must not flush into a closed stream. */
void agent_dev_finish(void)
{
	if (!dev.enabled)
		return;
	hal_flusher_stop();
	hal_stop();
	dev_sink_finish();
}

/* dev.lock, then the HAL's and the sink's: the order they nest in. */
void agent_dev_fork(enum agent_fork side)
{
	if (side == AGENT_FORK_PREPARE) {
		pthread_mutex_lock(&dev.lock);
		hal_fork_lock(1);
		dev_sink_fork_lock(1);
	} else {
		dev_sink_fork_lock(0);
		hal_fork_lock(0);
		pthread_mutex_unlock(&dev.lock);
	}
}

void agent_dev_forget(void)
{
	if (!dev.enabled)
		return;
	pthread_mutex_init(&dev.lock, NULL);
	dev.on = -1;
	hal_forget();
	dev_sink_forget();
	agent_dev_update();
}
