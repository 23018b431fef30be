/*
 * Where backends put device activity: this process image's device stream,
 * raw/<pid>.<n>/dev.raw (RAW_STREAM_DEVICE, CLOCK_MONOTONIC ns). Callable
 * from any thread (backends deliver from their own threads): one lock,
 * taken per batch, never on the program's hot path. Strings are interned
 * in the stream. Each function returns 0, or -1 when the record was lost
 * (counted in the stream).
 */
#ifndef PROF_DEVICE_SINK_H
#define PROF_DEVICE_SINK_H

#include <stdint.h>
#include "raw/raw_format.h"

void dev_sink_lock(void);
void dev_sink_unlock(void);

/* With the lock held. `name` and the other strings may be NULL. */
int dev_sink_activity(uint64_t start_ns, const struct raw_dev_activity *a, const char *name);
int dev_sink_api(uint64_t start_ns, const struct raw_dev_api *a, const char *name);
int dev_sink_memory(uint64_t ts_ns, const struct raw_dev_memory *m);
int dev_sink_collective(uint64_t start_ns, const struct raw_dev_collective *c,
			const char *name, const char *group, const char *ranks);
int dev_sink_info(const struct raw_dev_info *i, const char *name, const char *uuid);
int dev_sink_marker(uint64_t start_ns, const struct raw_dev_marker *m, const char *name,
		    const char *domain);
/* A framework operator read from its NVTX range (RAW_OP_NVTX); `shapes`
 * NULL when none. */
int dev_sink_op(uint64_t start_ns, const struct raw_op *op, const char *name, const char *shapes);
/* Records the backend could not deliver (CUPTI's dropped count). */
void dev_sink_lost(uint64_t n);

/* Is a recording window open? Backends drop activity that started while
 * none was (the sink does not: activity may complete after the window). */
int dev_sink_recording(void);

/* Closes the stream (process exit) / drops it (fork child). */
void dev_sink_finish(void);
void dev_sink_forget(void);
/* fork: takes (1) or gives back (0) the sink's lock (agent_dev_fork). */
void dev_sink_fork_lock(int take);

#endif
