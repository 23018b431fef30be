/*
 * Between libprof_sim and prof's agent: how the sim device hands its
 * activity to a subscriber, the way CUPTI hands buffers to an activity
 * client. Internal to prof (workloads use prof_sim.h only).
 *
 *   1. At its first API call the library looks up prof_sim_inject with
 *      dlsym(RTLD_DEFAULT) and calls it when present, handing over its
 *      entry points: the agent then starts its sim backend
 *      (hal_start_backend("sim")), which subscribes. The agent may also
 *      subscribe before that, at its own start, when the program links the
 *      library (dlsym(RTLD_DEFAULT) finds it then; it does not find a
 *      library loaded RTLD_LOCAL, as Python's ctypes loads it, hence the
 *      entry points).
 *   2. Every record is stamped, when its work is queued (or the call made),
 *      with what the subscriber's recording() said then.
 *   3. Completed records are buffered and handed over in batches: when the
 *      buffer fills (on whichever thread filled it), at prof_sim_flush(),
 *      and never after prof_sim_unsubscribe() returns.
 */
#ifndef PROF_SIM_INJECT_H
#define PROF_SIM_INJECT_H

#include <stddef.h>
#include <stdint.h>

/* The library and the agent must speak the same version (subscribe and
 * inject refuse another): records are handed over as arrays of struct
 * sim_record, whose size is the version's. 2: records carry event waits. */
#define SIM_INJECT_VERSION 2u
#define SIM_NAME_MAX  128u
#define SIM_GROUP_MAX 64u
#define SIM_RANKS_MAX 128u

enum sim_rec_kind {
	SIM_REC_KERNEL = 1,
	SIM_REC_MEMCPY = 2,
	SIM_REC_MEMSET = 3,
	SIM_REC_COLLECTIVE = 4,
	SIM_REC_API = 5,      /* a prof_sim_* call, on the calling thread */
	SIM_REC_MALLOC = 6,
	SIM_REC_FREE = 7,
	SIM_REC_SYNC = 8,     /* the device waited for a stream (name "Stream Sync"), for
			       * all of them ("Context Sync", stream 0), for an event
			       * ("Event Sync", stream 0), or a stream was told to wait
			       * for one ("Stream Wait Event", on the waiting stream);
			       * the call's span, as CUPTI's */
};

struct sim_record {
	uint32_t kind;        /* enum sim_rec_kind */
	uint32_t recorded;    /* the subscriber's recording() when queued / called */
	uint64_t start_ns;    /* CLOCK_MONOTONIC; memory: the call */
	uint64_t end_ns;      /* memory: == start_ns */
	uint64_t correlation; /* joins work to its API call; process-wide, from 1 */
	uint64_t bytes;       /* copies, sets, collectives, memory */
	uint64_t address;     /* memory */
	int32_t  tid;         /* API and memory: the calling thread */
	uint32_t device;
	uint32_t stream;      /* stream id; 0 for API and memory */
	uint32_t copy_kind;   /* enum prof_sim_copy */
	uint32_t coll_op;     /* enum prof_sim_coll */
	int32_t  rank, peer;  /* collectives */
	char name[SIM_NAME_MAX];   /* kernel, collective or API name */
	char group[SIM_GROUP_MAX];
	char ranks[SIM_RANKS_MAX];
	/* "Event Sync" and "Stream Wait Event": the event, and the
	 * prof_sim_event_record call it waited for (its correlation and
	 * stream): the latest before the wait; wait_corr 0 when there was
	 * none or that call was not recorded. */
	uint64_t wait_corr;
	uint32_t wait_stream;
	uint32_t event_id;
};

typedef void (*sim_deliver_fn)(const struct sim_record *recs, size_t n, void *ctx);

struct sim_subscriber {
	uint32_t version;         /* SIM_INJECT_VERSION */
	sim_deliver_fn deliver;   /* a batch of completed records */
	int (*recording)(void);   /* is a recording window open now? */
	void *ctx;
};

/* Exported by libprof_sim. subscribe returns 0, -EPROTO for another
 * version, -EBUSY when a subscriber is already there. */
int prof_sim_subscribe(const struct sim_subscriber *s);
void prof_sim_flush(void);
void prof_sim_unsubscribe(void);

/* The library's entry points, as it hands them to the agent. */
struct sim_entry {
	uint32_t version;         /* SIM_INJECT_VERSION */
	int  (*subscribe)(const struct sim_subscriber *s);
	void (*flush)(void);
	void (*unsubscribe)(void);
};

/* Exported by prof's agent; the library calls it once per process image.
 * Returns 0 when the agent subscribed (or had), else a negative errno. */
int prof_sim_inject(const struct sim_entry *e);

#endif
