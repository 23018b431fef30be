/*
 * The device HAL: one interface in the agent, one table of
 * backends. Adding a device means adding a folder under platform/agent/device/
 * and an entry in hal.c's table.
 *
 * Lifecycle, driven by the agent (platform/agent):
 *   probe   is this device's runtime in the process (or can it come)?
 *   start   subscribe to its activity; from then on the backend hands
 *           completed activity to the sink (dev_sink.h), from any thread
 *   pause / resume   a recording window closed / opened (schedule,
 *           --dynamic, prof_stop/start, --delay/--duration); activity
 *           while paused is dropped by the backend or the sink
 *   flush   move every completed activity into the raw stream now
 *           (the agent calls it periodically and at window ends, so a
 *           killed process loses only what had not completed)
 *   stop    unsubscribe and flush; the process is exiting
 * Every function must be safe to call when start failed or never ran.
 */
#ifndef PROF_DEVICE_HAL_H
#define PROF_DEVICE_HAL_H

#include <stdint.h>

struct dev_backend {
	const char *name;          /* "sim", "cuda" */
	int  (*probe)(void);       /* 1 yes, 0 no */
	int  (*start)(void);       /* 0 or a negative errno; logs why */
	void (*pause)(void);
	void (*resume)(void);
	void (*flush)(void);
	void (*stop)(void);
};

/* Called by the agent. hal_start starts every backend whose probe says
 * yes (when PROF_AGENT_DEVICE is "1"); the others are no-ops until then.
 * hal_start_only probes none and lets only the backend `name` start, at
 * its own entry (CUDA's injection), as a run that traces NVTX alone
 * wants: no other device's activity. */
void hal_start(void);
void hal_start_only(const char *name);
void hal_pause(void);
void hal_resume(void);
void hal_flush(void);
void hal_stop(void);
/* In a fork child: drop the parent's subscriptions without flushing. */
void hal_forget(void);
/* fork: takes (1) or gives back (0) the HAL's lock (agent_dev_fork). */
void hal_fork_lock(int take);

/* Some runtimes arrive late (CUDA calls InitializeInjection at cuInit, the
 * sim library injects at its first call): they start their backend here. */
int hal_start_backend(const char *name);

#endif
