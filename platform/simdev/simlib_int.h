/*
 * Inside libprof_sim: the pieces behind prof_sim.h.
 *   simlib.c         API calls (each makes an API record), streams, work, syncs
 *   simlib_coll.c    collectives
 *   simlib_mem.c     prof_sim_malloc/free and their fake device addresses
 *   simlib_stream.c  streams' queues, worker threads, faithful durations
 *   simlib_event.c   events: records, stream waits, event syncs
 *   simlib_report.c  injection, subscription, the buffer of completed records
 */
#ifndef PROF_SIMLIB_INT_H
#define PROF_SIMLIB_INT_H

#include <pthread.h>
#include <stdint.h>

#include "prof_sim.h"
#include "sim_inject.h"

#define SIM_EXPORT __attribute__((visibility("default")))
#define SIM_DEVICES 8

struct sim_mark;   /* one event record's completion (simlib_event.c) */

/* One piece of queued work; the worker fills rec.start_ns/end_ns. An op
 * with a mark is no work: it completes the mark (an event record) or, with
 * `waits`, holds the stream until the mark completes (a stream wait). */
struct sim_op {
	struct sim_op *next;
	uint64_t duration_ns;
	uint64_t queued_ns;          /* when the program queued it */
	struct sim_mark *mark;
	int waits;
	struct sim_record rec;
};

struct prof_sim_stream {
	int device, id;
	pthread_mutex_t lock;
	pthread_cond_t work;         /* work queued, or quit */
	pthread_cond_t idle;         /* work done */
	struct sim_op *head, *tail;
	uint64_t queued, done;       /* ops ever queued / completed */
	uint64_t vend;               /* the worker's: when, on the device's own
				      * timeline, the stream's last op ended */
	int quit;
	int running;                 /* a worker serves it in this process */
	pthread_t worker;
	struct prof_sim_stream *next;  /* every stream */
};

/* One API call in progress (simlib.c): begin injects when need be, takes
 * a correlation id and asks whether a window is open; end reports it. */
struct sim_call {
	uint64_t start_ns;
	uint64_t correlation;
	uint32_t recorded;
};
void sim_call_begin(struct sim_call *c);
void sim_call_end(const struct sim_call *c, const char *api, int device);
/* The device's side of a sync the call `c` made (as CUPTI's synchronization
 * records: the call's span up to now, its correlation, the stream). */
void sim_sync_fill(struct sim_record *r, const struct sim_call *c, const char *kind,
		   int device, int stream);
/* Work of the call `c` on `s`, to be filled and pushed; NULL without memory. */
struct sim_op *sim_op_new(const struct prof_sim_stream *s, uint32_t kind,
			  uint64_t duration_ns, const struct sim_call *c);

uint64_t sim_now(void);
int sim_tid(void);

/* simlib_stream.c */
struct prof_sim_stream *sim_stream_new(int device);
void sim_stream_free(struct prof_sim_stream *s);
void sim_stream_push(struct prof_sim_stream *s, struct sim_op *op);
void sim_stream_wait(struct prof_sim_stream *s);
void sim_streams_wait_all(void);
void sim_streams_after_fork(void);

/* simlib_event.c. run: a mark op its stream's worker reached (a wait
 * waits first); drop: one that will never run (no worker, or a fork
 * dropped it), whose record counts as completed. Both give up the op's
 * hold on its mark; the caller frees the op. */
void sim_event_op_run(struct prof_sim_stream *s, struct sim_op *op);
void sim_event_op_drop(struct sim_op *op);
void sim_events_after_fork(void);

/* simlib_report.c */
void sim_ensure_injected(void);
int sim_recording(void);
uint64_t sim_correlation(void);
void sim_report(const struct sim_record *r);
void sim_report_after_fork(void);

/* simlib_mem.c: 0 when `device` is out of range or memory ran out. */
uint64_t sim_mem_alloc(int device, uint64_t bytes);
/* 0 and the size, or -1 for an address that is not a live allocation. */
int sim_mem_release(int device, uint64_t address, uint64_t *bytes);
void sim_mem_after_fork(void);

#endif
