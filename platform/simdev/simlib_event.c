/*
 * Events, as CUDA's. A record queues a marker on its stream, which
 * completes when the work queued before it has; a stream wait queues an op
 * that holds the waiting stream's worker until that marker has run; an
 * event synchronize holds the calling thread the same way. A wait is for
 * the record made last before it, not for whatever the event holds when
 * the wait is reached (recording the event again, on another stream, must
 * neither release nor delay it), so each record has a mark of its own,
 * held by its marker, by the event until the next record, and by each
 * wait for it. Their syncs are reported as CUPTI reports them: the call's
 * span, with the event and the record call waited for.
 */
#include "simlib_int.h"

#include <stdlib.h>

struct sim_mark {
	unsigned refs;
	int done;
	unsigned epoch;            /* marks_epoch when made */
	uint64_t at;               /* done: when, on the device's timeline */
};

struct prof_sim_event {
	int device, id;
	struct sim_mark *last;     /* the latest record's; NULL before the first */
	uint64_t record_corr;      /* its call's correlation; 0 when not recorded */
	uint32_t record_stream;
};

/* One lock for every event and mark; marks_done is broadcast whenever a
 * mark completes. */
static pthread_mutex_t events_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t marks_done = PTHREAD_COND_INITIALIZER;
static unsigned marks_epoch;   /* one more in each fork child */
static int next_event_id[SIM_DEVICES];

/* With events_lock held, as every mark_* function. */
static void mark_put(struct sim_mark *m)
{
	if (m && --m->refs == 0)
		free(m);
}

/* A mark made before a fork is the parent's: its marker may have been on
 * a worker the child does not have, so the child counts it as done. */
static int mark_done(const struct sim_mark *m)
{
	return m->done || m->epoch != marks_epoch;
}

/* Waits until m is done; returns when it was, on the device's timeline
 * (0: a parent's, not known). */
static uint64_t mark_wait(struct sim_mark *m)
{
	m->refs++;
	while (!mark_done(m))
		pthread_cond_wait(&marks_done, &events_lock);
	uint64_t at = m->epoch == marks_epoch ? m->at : 0;
	mark_put(m);
	return at;
}

/* The op's hold on its mark given up; a record's mark done `at`. */
static void op_finish(struct sim_op *op, uint64_t at)
{
	pthread_mutex_lock(&events_lock);
	if (!op->waits) {
		op->mark->done = 1;
		op->mark->at = at;
		pthread_cond_broadcast(&marks_done);
	}
	mark_put(op->mark);
	op->mark = NULL;
	pthread_mutex_unlock(&events_lock);
}

void sim_event_op_drop(struct sim_op *op)
{
	op_finish(op, sim_now());
}

/* A record is done when the stream's work before it is; a wait moves the
 * stream's timeline on to when the record it waits for was done. */
void sim_event_op_run(struct prof_sim_stream *s, struct sim_op *op)
{
	uint64_t at = s->vend > op->queued_ns ? s->vend : op->queued_ns;
	if (op->waits) {
		pthread_mutex_lock(&events_lock);
		uint64_t ready = mark_wait(op->mark);
		pthread_mutex_unlock(&events_lock);
		if (ready > at)
			at = ready;
	}
	s->vend = at;
	op_finish(op, at);
}

void sim_events_after_fork(void)
{
	pthread_mutex_init(&events_lock, NULL);
	pthread_cond_init(&marks_done, NULL);
	marks_epoch++;
}

SIM_EXPORT prof_sim_event *prof_sim_event_create(int device)
{
	struct sim_call c;
	sim_call_begin(&c);
	prof_sim_event *e = NULL;
	if (device >= 0 && device < SIM_DEVICES)
		e = calloc(1, sizeof *e);
	if (e) {
		e->device = device;
		pthread_mutex_lock(&events_lock);
		e->id = ++next_event_id[device];
		pthread_mutex_unlock(&events_lock);
	}
	sim_call_end(&c, "prof_sim_event_create", device);
	return e;
}

SIM_EXPORT void prof_sim_event_destroy(prof_sim_event *e)
{
	if (!e)
		return;
	struct sim_call c;
	sim_call_begin(&c);
	int device = e->device;
	pthread_mutex_lock(&events_lock);
	mark_put(e->last);
	pthread_mutex_unlock(&events_lock);
	free(e);
	sim_call_end(&c, "prof_sim_event_destroy", device);
}

SIM_EXPORT int prof_sim_event_id(const prof_sim_event *e)
{
	return e ? e->id : 0;
}

/* The event's new record, by the call `c`, on `s`. */
static void event_record(prof_sim_event *e, prof_sim_stream *s, const struct sim_call *c)
{
	struct sim_op *op = calloc(1, sizeof *op);
	struct sim_mark *m = calloc(1, sizeof *m);
	if (!op || !m) {
		free(op);
		free(m);
		return;
	}
	pthread_mutex_lock(&events_lock);
	m->refs = 2;   /* the marker's and the event's */
	m->epoch = marks_epoch;
	mark_put(e->last);
	e->last = m;
	e->record_corr = c->recorded ? c->correlation : 0;
	e->record_stream = (uint32_t)s->id;
	pthread_mutex_unlock(&events_lock);
	op->mark = m;
	sim_stream_push(s, op);
}

SIM_EXPORT void prof_sim_event_record(prof_sim_event *e, prof_sim_stream *s)
{
	struct sim_call c;
	sim_call_begin(&c);
	if (e && s)
		event_record(e, s, &c);
	sim_call_end(&c, "prof_sim_event_record", s ? s->device : 0);
}

/* The sync record of the call `c` waiting on `e`, with events_lock held:
 * the record call waited for, when there was one and it was recorded. */
static void wait_fill(struct sim_record *r, const struct sim_call *c, const char *kind,
		      const prof_sim_event *e, int stream)
{
	sim_sync_fill(r, c, kind, e->device, stream);
	r->event_id = (uint32_t)e->id;
	if (e->last && e->record_corr) {
		r->wait_corr = e->record_corr;
		r->wait_stream = e->record_stream;
	}
}

/* A record already done, or none, leaves nothing to wait for on `s`. */
static void stream_wait(prof_sim_stream *s, prof_sim_event *e, const struct sim_call *c)
{
	struct sim_op *op = calloc(1, sizeof *op);
	struct sim_record r;
	pthread_mutex_lock(&events_lock);
	wait_fill(&r, c, "Stream Wait Event", e, s->id);
	if (op && e->last && !mark_done(e->last)) {
		op->mark = e->last;
		op->mark->refs++;
		op->waits = 1;
	}
	pthread_mutex_unlock(&events_lock);
	if (op && op->mark)
		sim_stream_push(s, op);
	else
		free(op);
	r.end_ns = sim_now();
	sim_report(&r);
}

SIM_EXPORT void prof_sim_stream_wait_event(prof_sim_stream *s, prof_sim_event *e)
{
	struct sim_call c;
	sim_call_begin(&c);
	if (s && e)
		stream_wait(s, e, &c);
	sim_call_end(&c, "prof_sim_stream_wait_event", s ? s->device : 0);
}

/* An Event Sync waits for no one stream: stream 0, as Context Sync. */
SIM_EXPORT void prof_sim_event_synchronize(prof_sim_event *e)
{
	struct sim_call c;
	sim_call_begin(&c);
	if (e) {
		struct sim_record r;
		pthread_mutex_lock(&events_lock);
		wait_fill(&r, &c, "Event Sync", e, 0);
		if (e->last)
			mark_wait(e->last);
		pthread_mutex_unlock(&events_lock);
		r.end_ns = sim_now();
		sim_report(&r);
	}
	sim_call_end(&c, "prof_sim_event_synchronize", e ? e->device : 0);
}
