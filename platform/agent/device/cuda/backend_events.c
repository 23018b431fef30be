/*
 * CUDA events as recorded (CUPTI_ACTIVITY_KIND_CUDA_EVENT): the stream and
 * correlation of each cudaEventRecord, so that a later sync on the event
 * ("Event Sync", "Stream Wait Event") can name the record it waited for,
 * as Kineto does. An event is recorded again and again (PyTorch reuses
 * them): a slot keeps its last CUDA_EVENT_HISTORY records, and a wait takes
 * the latest one issued before it (correlation ids grow with issue order).
 *
 * The table is fixed (CUDA_EVENT_SLOTS, allocated at the first record) and
 * never grows: programs that create events without end (one per
 * collective, say) would otherwise fill it. A full neighbourhood gives up
 * the slot recorded least recently: a wait on that event then says it is
 * unknown (-1), as Kineto's does for a record it never saw.
 */
#include "agent/device/cuda/backend_convert.h"

#include <stdlib.h>

#define CUDA_EVENT_PROBE 16u

struct cuda_event_slot {
	uint32_t context, event;
	uint32_t used;                           /* records kept, 0: a free slot */
	uint32_t last;                           /* index of the newest record */
	uint32_t stream[CUDA_EVENT_HISTORY];
	uint32_t corr[CUDA_EVENT_HISTORY];
};

static uint32_t cuda_events_home(uint32_t context, uint32_t event)
{
	uint64_t k = ((uint64_t)context << 32 | event) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(k >> 40) & (CUDA_EVENT_SLOTS - 1);
}

/* The slot of (context, event); NULL when not kept. */
static struct cuda_event_slot *cuda_events_find(const struct cuda_conv *c, uint32_t context,
						uint32_t event)
{
	if (!c->events)
		return NULL;
	uint32_t h = cuda_events_home(context, event);
	for (uint32_t i = 0; i < CUDA_EVENT_PROBE; i++) {
		struct cuda_event_slot *s = &c->events[(h + i) & (CUDA_EVENT_SLOTS - 1)];
		if (s->used && s->context == context && s->event == event)
			return s;
	}
	return NULL;
}

/* A slot for a new (context, event): a free one near home, else the one
 * there recorded least recently. */
static struct cuda_event_slot *cuda_events_claim(struct cuda_conv *c, uint32_t context,
						 uint32_t event)
{
	uint32_t h = cuda_events_home(context, event);
	struct cuda_event_slot *oldest = NULL;
	for (uint32_t i = 0; i < CUDA_EVENT_PROBE; i++) {
		struct cuda_event_slot *s = &c->events[(h + i) & (CUDA_EVENT_SLOTS - 1)];
		if (!s->used)
			return s;
		if (!oldest || s->corr[s->last] < oldest->corr[oldest->last])
			oldest = s;
	}
	c->stats.events_evicted++;
	return oldest;
}

void cuda_events_put(struct cuda_conv *c, uint32_t context, uint32_t event, uint32_t stream,
		     uint32_t corr)
{
	if (!c->events && !(c->events = calloc(CUDA_EVENT_SLOTS, sizeof *c->events)))
		return;
	struct cuda_event_slot *s = cuda_events_find(c, context, event);
	if (!s) {
		s = cuda_events_claim(c, context, event);
		*s = (struct cuda_event_slot){ .context = context, .event = event };
	} else {
		s->last = (s->last + 1) % CUDA_EVENT_HISTORY;
	}
	s->stream[s->last] = stream;
	s->corr[s->last] = corr;
	if (s->used < CUDA_EVENT_HISTORY)
		s->used++;
}

bool cuda_events_waited(const struct cuda_conv *c, uint32_t context, uint32_t event,
			uint32_t wait_corr, uint32_t *stream, uint32_t *record_corr)
{
	const struct cuda_event_slot *s = cuda_events_find(c, context, event);
	if (!s)
		return false;
	int best = -1;
	for (uint32_t i = 0; i < s->used; i++)
		if (s->corr[i] < wait_corr && (best < 0 || s->corr[i] > s->corr[best]))
			best = (int)i;
	if (best < 0)
		return false;
	*stream = s->stream[best];
	*record_corr = s->corr[best];
	return true;
}

void cuda_events_free(struct cuda_conv *c)
{
	free(c->events);
	c->events = NULL;
}
