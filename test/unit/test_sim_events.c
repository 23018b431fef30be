/*
 * libprof_sim's events, through a subscriber of the test's own (as the
 * agent's sim backend subscribes): the order the simulated timeline keeps
 * across streams, and the sync records a wait reports (the event, and the
 * record call it waited for: the latest before the wait, not a later
 * one). Every check is on order and content, never on a duration: the
 * producers last 20 ms so that a wait not honoured shows, even on a slow
 * machine, as a consumer starting before its producer ends.
 */
#include "unit/unit.h"

#include <sys/wait.h>
#include <time.h>

#include "prof_sim.h"
#include "sim_inject.h"

#define MS 1000000ull

static struct sim_record got[256];
static size_t ngot;
static int recording = 1;

static void deliver(const struct sim_record *recs, size_t n, void *ctx)
{
	for (size_t i = 0; i < n && ngot < sizeof got / sizeof got[0]; i++)
		got[ngot++] = recs[i];
}

static int is_recording(void)
{
	return recording;
}

/* Everything completed so far, delivered; the records of one case only. */
static void collect(void)
{
	prof_sim_device_sync();
	prof_sim_flush();
}

static void reset(void)
{
	collect();
	ngot = 0;
}

/* The only record of `kind` named `name` (an API call, a kernel, a sync). */
static const struct sim_record *find(uint32_t kind, const char *name)
{
	const struct sim_record *r = NULL;
	int n = 0;
	for (size_t i = 0; i < ngot; i++)
		if (got[i].kind == kind && strcmp(got[i].name, name) == 0)
			r = &got[i], n++;
	return n == 1 ? r : NULL;
}

/* The n-th (from 0) record of `kind` named `name`. */
static const struct sim_record *nth(uint32_t kind, const char *name, int n)
{
	for (size_t i = 0; i < ngot; i++)
		if (got[i].kind == kind && strcmp(got[i].name, name) == 0 && n-- == 0)
			return &got[i];
	return NULL;
}

static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Streams a and b of device 0, an event e, and "producer" (20 ms)
 * queued on a: what every case starts from. */
struct fix {
	prof_sim_stream *a, *b;
	prof_sim_event *e;
};

static struct fix fix_begin(void)
{
	reset();
	struct fix f = { prof_sim_stream_create(0), prof_sim_stream_create(0),
			 prof_sim_event_create(0) };
	prof_sim_kernel(f.a, "producer", 20 * MS);
	return f;
}

static void fix_end(struct fix *f)
{
	prof_sim_event_destroy(f->e);
	prof_sim_stream_destroy(f->a);
	prof_sim_stream_destroy(f->b);
}

/* "consumer" ran, and only once "producer" had. */
static void check_consumer_waited(void)
{
	const struct sim_record *p = find(SIM_REC_KERNEL, "producer");
	const struct sim_record *c = find(SIM_REC_KERNEL, "consumer");
	CHECK(p && c && c->start_ns >= p->end_ns);
}

/* B waits for A's "producer"; the Stream Wait Event names the record. */
static void test_wait_orders_streams(void)
{
	struct fix f = fix_begin();
	prof_sim_event_record(f.e, f.a);
	prof_sim_stream_wait_event(f.b, f.e);
	prof_sim_kernel(f.b, "consumer", MS);
	collect();
	check_consumer_waited();
	const struct sim_record *rec = find(SIM_REC_API, "prof_sim_event_record");
	const struct sim_record *call = find(SIM_REC_API, "prof_sim_stream_wait_event");
	const struct sim_record *w = find(SIM_REC_SYNC, "Stream Wait Event");
	CHECK(rec && call && w);
	if (rec && call && w) {
		CHECK(w->stream == (uint32_t)prof_sim_stream_id(f.b));
		CHECK(w->event_id == (uint32_t)prof_sim_event_id(f.e) && w->event_id > 0);
		CHECK(w->wait_corr == rec->correlation);
		CHECK(w->wait_stream == (uint32_t)prof_sim_stream_id(f.a));
		/* the call's span and correlation, as CUPTI's */
		CHECK(w->correlation == call->correlation);
		CHECK(w->start_ns == call->start_ns && w->end_ns <= call->end_ns);
	}
	/* the markers and waits are no work: only the two kernels ran */
	int kernels = 0;
	for (size_t i = 0; i < ngot; i++)
		kernels += got[i].kind == SIM_REC_KERNEL;
	CHECK(kernels == 2);
	fix_end(&f);
}

/* The host waits for the record; the Event Sync has no stream. */
static void test_synchronize_waits_for_the_record(void)
{
	struct fix f = fix_begin();
	prof_sim_event_record(f.e, f.a);
	prof_sim_event_synchronize(f.e);
	uint64_t back = mono_ns();
	collect();
	const struct sim_record *p = find(SIM_REC_KERNEL, "producer");
	const struct sim_record *rec = find(SIM_REC_API, "prof_sim_event_record");
	const struct sim_record *call = find(SIM_REC_API, "prof_sim_event_synchronize");
	const struct sim_record *s = find(SIM_REC_SYNC, "Event Sync");
	CHECK(p && rec && call && s);
	if (p && rec && call && s) {
		CHECK(back >= p->end_ns && s->end_ns >= p->end_ns);
		CHECK(s->stream == 0 && s->correlation == call->correlation);
		CHECK(s->event_id == (uint32_t)prof_sim_event_id(f.e));
		CHECK(s->wait_corr == rec->correlation);
		CHECK(s->wait_stream == (uint32_t)prof_sim_stream_id(f.a));
	}
	fix_end(&f);
}

/* A wait is for the record made before it: recording the event again on
 * an idle stream neither releases it nor is what it reports. */
static void test_rerecord_leaves_the_wait(void)
{
	struct fix f = fix_begin();
	prof_sim_stream *idle = prof_sim_stream_create(0), *d = prof_sim_stream_create(0);
	prof_sim_event_record(f.e, f.a);
	prof_sim_stream_wait_event(f.b, f.e);
	prof_sim_event_record(f.e, idle);
	prof_sim_stream_wait_event(d, f.e);
	prof_sim_kernel(f.b, "consumer", MS);
	collect();
	check_consumer_waited();
	const struct sim_record *r1 = nth(SIM_REC_API, "prof_sim_event_record", 0);
	const struct sim_record *r2 = nth(SIM_REC_API, "prof_sim_event_record", 1);
	const struct sim_record *w1 = nth(SIM_REC_SYNC, "Stream Wait Event", 0);
	const struct sim_record *w2 = nth(SIM_REC_SYNC, "Stream Wait Event", 1);
	CHECK(r1 && r2 && w1 && w2);
	if (r1 && r2 && w1 && w2) {
		CHECK(w1->stream == (uint32_t)prof_sim_stream_id(f.b));
		CHECK(w1->wait_corr == r1->correlation);
		CHECK(w1->wait_stream == (uint32_t)prof_sim_stream_id(f.a));
		CHECK(w2->stream == (uint32_t)prof_sim_stream_id(d));
		CHECK(w2->wait_corr == r2->correlation);
		CHECK(w2->wait_stream == (uint32_t)prof_sim_stream_id(idle));
	}
	prof_sim_stream_destroy(idle);
	prof_sim_stream_destroy(d);
	fix_end(&f);
}

/* Never recorded: nothing to wait for, no record named (0, the outputs'
 * -1); a record call made outside a window is not named either. */
static void test_record_unknown(void)
{
	struct fix f = fix_begin();
	prof_sim_stream_wait_event(f.b, f.e);
	prof_sim_event_synchronize(f.e);
	recording = 0;
	prof_sim_event_record(f.e, f.a);
	recording = 1;
	prof_sim_stream_wait_event(f.b, f.e);
	collect();
	const struct sim_record *w1 = nth(SIM_REC_SYNC, "Stream Wait Event", 0);
	const struct sim_record *w2 = nth(SIM_REC_SYNC, "Stream Wait Event", 1);
	const struct sim_record *s = find(SIM_REC_SYNC, "Event Sync");
	CHECK(w1 && w2 && s);
	if (w1 && w2 && s) {
		CHECK(w1->wait_corr == 0 && w1->wait_stream == 0);
		CHECK(w1->event_id == (uint32_t)prof_sim_event_id(f.e));
		CHECK(s->wait_corr == 0 && s->wait_stream == 0 && s->event_id == w1->event_id);
		CHECK(w2->recorded && w2->wait_corr == 0 && w2->event_id == w1->event_id);
	}
	const struct sim_record *r = find(SIM_REC_API, "prof_sim_event_record");
	CHECK(r && !r->recorded);
	fix_end(&f);
}

/* Destroying the event leaves its pending waits to complete as they would. */
static void test_destroy_with_a_wait_pending(void)
{
	struct fix f = fix_begin();
	prof_sim_event_record(f.e, f.a);
	prof_sim_stream_wait_event(f.b, f.e);
	prof_sim_event_destroy(f.e);
	f.e = NULL;
	prof_sim_kernel(f.b, "consumer", MS);
	collect();
	check_consumer_waited();
	fix_end(&f);
}

/* Ids count per device from 1, as streams'; no event on a device past 7. */
static void test_ids(void)
{
	prof_sim_event *d1 = prof_sim_event_create(1), *d1b = prof_sim_event_create(1);
	prof_sim_event *d2 = prof_sim_event_create(2);
	CHECK(prof_sim_event_id(d1) == 1 && prof_sim_event_id(d1b) == 2);
	CHECK(prof_sim_event_id(d2) == 1);
	CHECK(!prof_sim_event_create(8) && !prof_sim_event_create(-1));
	CHECK(prof_sim_event_id(NULL) == 0);
	/* NULL streams and events do nothing but the call */
	prof_sim_event_record(NULL, NULL);
	prof_sim_stream_wait_event(NULL, d1);
	prof_sim_event_synchronize(NULL);
	prof_sim_event_destroy(NULL);
	prof_sim_event_destroy(d1);
	prof_sim_event_destroy(d1b);
	prof_sim_event_destroy(d2);
}

/* A fork child: the parent's record, queued behind its kernel, is the
 * parent's; waiting for it in the child must not hang. */
static void test_fork_child_does_not_wait_for_the_parent(void)
{
	struct fix f = fix_begin();
	prof_sim_event_record(f.e, f.a);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		alarm(10);   /* a hang fails the case */
		prof_sim_event_synchronize(f.e);
		prof_sim_stream_wait_event(f.b, f.e);
		prof_sim_kernel(f.b, "child_k", MS);
		prof_sim_device_sync();
		_exit(0);
	}
	int status = 0;
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	fix_end(&f);
}

int main(void)
{
	struct sim_subscriber s = {
		.version = SIM_INJECT_VERSION, .deliver = deliver, .recording = is_recording,
	};
	CHECK(prof_sim_subscribe(&s) == 0);
	test_wait_orders_streams();
	test_synchronize_waits_for_the_record();
	test_rerecord_leaves_the_wait();
	test_record_unknown();
	test_destroy_with_a_wait_pending();
	test_ids();
	test_fork_child_does_not_wait_for_the_parent();
	prof_sim_unsubscribe();
	return unit_done();
}
