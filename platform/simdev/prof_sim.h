/*
 * prof_sim: a simulated accelerator, for tests and demos on machines
 * without a device. Work is queued on streams and runs asynchronously on
 * one thread per stream with exactly the durations asked for; its activity
 * reaches prof through the same HAL path as CUPTI's: the library injects
 * itself into prof's agent at its first call (as CUDA does with
 * CUDA_INJECTION64_PATH), and delivers completed activity in batches.
 * Every output names this device SIM.
 *
 * Link with libprof_sim.so. Without prof it runs the same, recording
 * nothing. All functions are thread-safe.
 */
#ifndef PROF_SIM_H
#define PROF_SIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct prof_sim_stream prof_sim_stream;   /* opaque */
typedef struct prof_sim_event prof_sim_event;     /* opaque */

/* Streams belong to device `device` (0..7). Stream ids are 1, 2, ...
 * per device in creation order. */
prof_sim_stream *prof_sim_stream_create(int device);
void prof_sim_stream_destroy(prof_sim_stream *s);
int  prof_sim_stream_id(const prof_sim_stream *s);

/* Queued work; each returns at once (asynchronous), like a launch. */
void prof_sim_kernel(prof_sim_stream *s, const char *name, uint64_t duration_ns);
enum prof_sim_copy { PROF_SIM_HTOD = 1, PROF_SIM_DTOH = 2, PROF_SIM_DTOD = 3 };
void prof_sim_memcpy(prof_sim_stream *s, enum prof_sim_copy kind, uint64_t bytes,
		     uint64_t duration_ns);
void prof_sim_memset(prof_sim_stream *s, uint64_t bytes, uint64_t duration_ns);

/* Device memory: returns a fake device address (never dereference). */
uint64_t prof_sim_malloc(int device, uint64_t bytes);
void prof_sim_free(int device, uint64_t address);

/* Collectives over a group: `group` names it, `ranks` lists its global
 * ranks ("0,1,2,3"), `rank` is this process's global rank; send and recv
 * name the other rank in `peer`. */
enum prof_sim_coll { PROF_SIM_ALLREDUCE = 1, PROF_SIM_ALLGATHER = 2, PROF_SIM_BROADCAST = 3,
		     PROF_SIM_SEND = 5, PROF_SIM_RECV = 6 };
void prof_sim_collective(prof_sim_stream *s, enum prof_sim_coll op, const char *group,
			 const char *ranks, int rank, int peer, uint64_t bytes,
			 uint64_t duration_ns);

/* Waits until all work queued on the stream / on every stream is done. */
void prof_sim_stream_sync(prof_sim_stream *s);
void prof_sim_device_sync(void);

/* Events, as CUDA's. Ids are 1, 2, ... per device in creation order.
 * record: the event completes when the work queued on `s` before it has
 * (recording it again starts over). stream_wait_event: work queued on `s`
 * after the call starts only once the event's latest record made before
 * the call has completed (never recorded: no wait). synchronize: waits
 * for that record to complete. Destroying an event with waits pending
 * leaves them to complete as they would have. */
prof_sim_event *prof_sim_event_create(int device);
void prof_sim_event_destroy(prof_sim_event *e);
int  prof_sim_event_id(const prof_sim_event *e);
void prof_sim_event_record(prof_sim_event *e, prof_sim_stream *s);
void prof_sim_stream_wait_event(prof_sim_stream *s, prof_sim_event *e);
void prof_sim_event_synchronize(prof_sim_event *e);

#ifdef __cplusplus
}
#endif
#endif
