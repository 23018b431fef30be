/*
 * When recording windows opened and closed (schedule, prof_start/stop,
 * --delay/--duration, --dynamic). Pausing switches CUPTI's activity kinds
 * off, but a call already under way when the switch came still produces
 * its record, and CUPTI 13.0.0 keeps kernel tracing on (backend.c): such
 * records are judged by their start against this history. The history
 * keeps the last CUDA_WINDOW_MARKS switches; older ones fold into the
 * state before them.
 */
#include "agent/device/cuda/backend_parts.h"

#include <pthread.h>
#include <string.h>

#define CUDA_WINDOW_MARKS 256

struct cuda_window {
	bool before;                       /* state before the first mark kept */
	unsigned n, first;                 /* ring of n marks from `first` */
	struct { uint64_t ts; bool on; } mark[CUDA_WINDOW_MARKS];
};

static pthread_mutex_t cuda_window_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cuda_window cuda_window_live = { .before = true };
static struct cuda_window cuda_window_copy = { .before = true };

void cuda_window_mark(uint64_t ts, bool on)
{
	struct cuda_window *w = &cuda_window_live;
	pthread_mutex_lock(&cuda_window_lock);
	if (w->n == CUDA_WINDOW_MARKS) {
		w->before = w->mark[w->first].on;
		w->first = (w->first + 1) % CUDA_WINDOW_MARKS;
		w->n--;
	}
	unsigned i = (w->first + w->n++) % CUDA_WINDOW_MARKS;
	w->mark[i].ts = ts;
	w->mark[i].on = on;
	pthread_mutex_unlock(&cuda_window_lock);
}

void cuda_window_snapshot(void)
{
	pthread_mutex_lock(&cuda_window_lock);
	memcpy(&cuda_window_copy, &cuda_window_live, sizeof cuda_window_copy);
	pthread_mutex_unlock(&cuda_window_lock);
}

bool cuda_window_at(uint64_t ts)
{
	const struct cuda_window *w = &cuda_window_copy;
	/* Newest first: most records are recent. */
	for (unsigned k = w->n; k-- > 0;) {
		unsigned i = (w->first + k) % CUDA_WINDOW_MARKS;
		if (w->mark[i].ts <= ts)
			return w->mark[i].on;
	}
	return w->before;
}
