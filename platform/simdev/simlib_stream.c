/*
 * Streams: a FIFO of work and one worker thread that runs it in order.
 * The device keeps its own timeline, as a GPU does whatever the host's
 * CPUs are doing: an op starts when it was queued or when the stream's
 * previous op ended, whichever is later, and ends exactly its duration
 * after. The worker sleeps until just before that end and spins the rest,
 * so the op is over on CLOCK_MONOTONIC when it is reported; a worker the
 * machine did not let run catches up on the next ops instead of
 * stretching this one (the durations stay exact under load).
 */
#include "simlib_int.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

#define SIM_SPIN_NS 200000ull    /* the last part of an op is spun, not slept */

#if defined(__x86_64__) || defined(__i386__)
#define sim_cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define sim_cpu_relax() __asm__ __volatile__("yield")
#else
#define sim_cpu_relax() ((void)0)
#endif

static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
static struct prof_sim_stream *streams;
static int next_id[SIM_DEVICES];

static void sim_spend_until(uint64_t until)
{
	uint64_t now = sim_now();
	if (until > now + SIM_SPIN_NS) {
		uint64_t wake = until - SIM_SPIN_NS;
		struct timespec t = { (time_t)(wake / 1000000000ull), (long)(wake % 1000000000ull) };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) != 0)
			;
	}
	while (sim_now() < until)
		sim_cpu_relax();
}

static void sim_run(struct prof_sim_stream *s, struct sim_op *op)
{
	op->rec.start_ns = s->vend > op->queued_ns ? s->vend : op->queued_ns;
	op->rec.end_ns = op->rec.start_ns + op->duration_ns;
	sim_spend_until(op->rec.end_ns);
	s->vend = op->rec.end_ns;
	sim_report(&op->rec);
}

static void *sim_worker(void *arg)
{
	struct prof_sim_stream *s = arg;
	char name[16];
	snprintf(name, sizeof name, "sim-d%d-s%d", s->device, s->id);
	/* prctl: prof's agent wraps pthread_setname_np and would give this
	 * thread a stream of its own. */
	prctl(PR_SET_NAME, name, 0, 0, 0);
	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->head && !s->quit)
			pthread_cond_wait(&s->work, &s->lock);
		struct sim_op *op = s->head;
		if (!op)
			break;
		s->head = op->next;
		if (!s->head)
			s->tail = NULL;
		pthread_mutex_unlock(&s->lock);
		if (op->mark)
			sim_event_op_run(s, op);
		else
			sim_run(s, op);
		free(op);
		pthread_mutex_lock(&s->lock);
		s->done++;
		pthread_cond_broadcast(&s->idle);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* With s->lock held. The program's signals are not the device's. */
static int sim_worker_start(struct prof_sim_stream *s)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&s->worker, NULL, sim_worker, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	s->running = rc == 0;
	return rc;
}

/* An op that will never run. An event record in it counts as completed
 * all the same: a wait for work that never ran must not hang. */
static void sim_op_discard(struct sim_op *op)
{
	if (op->mark)
		sim_event_op_drop(op);
	free(op);
}

static void sim_stream_init(struct prof_sim_stream *s)
{
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->work, &ca);
	pthread_cond_init(&s->idle, &ca);
	pthread_condattr_destroy(&ca);
}

struct prof_sim_stream *sim_stream_new(int device)
{
	if (device < 0 || device >= SIM_DEVICES)
		return NULL;
	struct prof_sim_stream *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	sim_stream_init(s);
	s->device = device;
	pthread_mutex_lock(&streams_lock);
	s->id = ++next_id[device];
	pthread_mutex_unlock(&streams_lock);
	pthread_mutex_lock(&s->lock);
	int rc = sim_worker_start(s);
	pthread_mutex_unlock(&s->lock);
	if (rc) {
		free(s);
		return NULL;
	}
	pthread_mutex_lock(&streams_lock);
	s->next = streams;
	streams = s;
	pthread_mutex_unlock(&streams_lock);
	return s;
}

/* Its work completes first, as a device's would. */
void sim_stream_free(struct prof_sim_stream *s)
{
	pthread_mutex_lock(&streams_lock);
	for (struct prof_sim_stream **p = &streams; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	pthread_mutex_unlock(&streams_lock);
	pthread_mutex_lock(&s->lock);
	s->quit = 1;
	pthread_cond_signal(&s->work);
	int running = s->running;
	pthread_mutex_unlock(&s->lock);
	if (running)
		pthread_join(s->worker, NULL);
	free(s);
}

void sim_stream_push(struct prof_sim_stream *s, struct sim_op *op)
{
	pthread_mutex_lock(&s->lock);
	if (!s->running && sim_worker_start(s) != 0) {
		/* No thread to run it: it never ran, like failed work. */
		pthread_mutex_unlock(&s->lock);
		sim_op_discard(op);
		return;
	}
	op->next = NULL;
	op->queued_ns = sim_now();
	if (s->tail)
		s->tail->next = op;
	else
		s->head = op;
	s->tail = op;
	s->queued++;
	pthread_cond_signal(&s->work);
	pthread_mutex_unlock(&s->lock);
}

void sim_stream_wait(struct prof_sim_stream *s)
{
	pthread_mutex_lock(&s->lock);
	uint64_t target = s->queued;
	while (s->done < target && s->running)
		pthread_cond_wait(&s->idle, &s->lock);
	pthread_mutex_unlock(&s->lock);
}

void sim_streams_wait_all(void)
{
	pthread_mutex_lock(&streams_lock);
	for (struct prof_sim_stream *s = streams; s; s = s->next)
		sim_stream_wait(s);
	pthread_mutex_unlock(&streams_lock);
}

/* In a fork child no worker exists: work queued in the parent is the
 * parent's; the child's first work on a stream starts a worker. */
void sim_streams_after_fork(void)
{
	pthread_mutex_init(&streams_lock, NULL);
	for (struct prof_sim_stream *s = streams; s; s = s->next) {
		sim_stream_init(s);
		for (struct sim_op *op = s->head, *next; op; op = next) {
			next = op->next;
			sim_op_discard(op);
		}
		s->head = s->tail = NULL;
		s->queued = s->done = 0;
		s->quit = 0;
		s->running = 0;
	}
}
