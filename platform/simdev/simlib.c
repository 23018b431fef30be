/*
 * The sim device's public calls (prof_sim.h). Every call is an "API call"
 * with its own correlation id and a record on the calling thread; work
 * calls queue an op carrying the same id, so the outputs can link the
 * launch to the work as CUPTI's correlation ids do.
 */
#include "simlib_int.h"

#include <stdio.h>
#include <stdlib.h>

void sim_call_begin(struct sim_call *c)
{
	sim_ensure_injected();
	c->start_ns = sim_now();
	c->correlation = sim_correlation();
	c->recorded = (uint32_t)sim_recording();
}

void sim_call_end(const struct sim_call *c, const char *api, int device)
{
	struct sim_record r = {
		.kind = SIM_REC_API, .recorded = c->recorded, .start_ns = c->start_ns,
		.end_ns = sim_now(), .correlation = c->correlation, .tid = sim_tid(),
		.device = device > 0 ? (uint32_t)device : 0,
	};
	snprintf(r.name, sizeof r.name, "%s", api);
	sim_report(&r);
}

struct sim_op *sim_op_new(const struct prof_sim_stream *s, uint32_t kind,
			   uint64_t duration_ns, const struct sim_call *c)
{
	struct sim_op *op = calloc(1, sizeof *op);
	if (!op)
		return NULL;
	op->duration_ns = duration_ns;
	op->rec.kind = kind;
	op->rec.recorded = c->recorded;
	op->rec.correlation = c->correlation;
	op->rec.device = (uint32_t)s->device;
	op->rec.stream = (uint32_t)s->id;
	return op;
}

static void work(prof_sim_stream *s, uint32_t kind, const char *api, const char *name,
		 uint64_t bytes, uint32_t copy_kind, uint64_t duration_ns)
{
	struct sim_call c;
	sim_call_begin(&c);
	struct sim_op *op = s ? sim_op_new(s, kind, duration_ns, &c) : NULL;
	if (op) {
		snprintf(op->rec.name, sizeof op->rec.name, "%s", name ? name : "");
		op->rec.bytes = bytes;
		op->rec.copy_kind = copy_kind;
		sim_stream_push(s, op);
	}
	sim_call_end(&c, api, s ? s->device : 0);
}

SIM_EXPORT prof_sim_stream *prof_sim_stream_create(int device)
{
	struct sim_call c;
	sim_call_begin(&c);
	prof_sim_stream *s = sim_stream_new(device);
	sim_call_end(&c, "prof_sim_stream_create", device);
	return s;
}

SIM_EXPORT void prof_sim_stream_destroy(prof_sim_stream *s)
{
	if (!s)
		return;
	struct sim_call c;
	sim_call_begin(&c);
	int device = s->device;
	sim_stream_free(s);
	sim_call_end(&c, "prof_sim_stream_destroy", device);
}

SIM_EXPORT int prof_sim_stream_id(const prof_sim_stream *s)
{
	return s ? s->id : 0;
}

SIM_EXPORT void prof_sim_kernel(prof_sim_stream *s, const char *name, uint64_t duration_ns)
{
	work(s, SIM_REC_KERNEL, "prof_sim_kernel", name, 0, 0, duration_ns);
}

SIM_EXPORT void prof_sim_memcpy(prof_sim_stream *s, enum prof_sim_copy kind, uint64_t bytes,
				uint64_t duration_ns)
{
	work(s, SIM_REC_MEMCPY, "prof_sim_memcpy", NULL, bytes, (uint32_t)kind, duration_ns);
}

SIM_EXPORT void prof_sim_memset(prof_sim_stream *s, uint64_t bytes, uint64_t duration_ns)
{
	work(s, SIM_REC_MEMSET, "prof_sim_memset", NULL, bytes, 0, duration_ns);
}

void sim_sync_fill(struct sim_record *r, const struct sim_call *c, const char *kind,
		   int device, int stream)
{
	*r = (struct sim_record){
		.kind = SIM_REC_SYNC, .recorded = c->recorded, .start_ns = c->start_ns,
		.end_ns = sim_now(), .correlation = c->correlation,
		.device = device > 0 ? (uint32_t)device : 0, .stream = (uint32_t)stream,
	};
	snprintf(r->name, sizeof r->name, "%s", kind);
}

/* What the device did while the call waited, as CUPTI's synchronization
 * records say it: the call's span, its correlation, the stream waited for. */
static void sync_report(const struct sim_call *c, const char *kind, int device, int stream)
{
	struct sim_record r;
	sim_sync_fill(&r, c, kind, device, stream);
	sim_report(&r);
}

SIM_EXPORT void prof_sim_stream_sync(prof_sim_stream *s)
{
	struct sim_call c;
	sim_call_begin(&c);
	if (s) {
		sim_stream_wait(s);
		sync_report(&c, "Stream Sync", s->device, s->id);
	}
	sim_call_end(&c, "prof_sim_stream_sync", s ? s->device : 0);
}

SIM_EXPORT void prof_sim_device_sync(void)
{
	struct sim_call c;
	sim_call_begin(&c);
	sim_streams_wait_all();
	sync_report(&c, "Context Sync", 0, 0);
	sim_call_end(&c, "prof_sim_device_sync", 0);
}

/* Forgets everything a fork child must not share with its parent. */
static void sim_after_fork(void)
{
	sim_report_after_fork();
	sim_events_after_fork();   /* before the streams drop their ops */
	sim_streams_after_fork();
	sim_mem_after_fork();
}

__attribute__((constructor))
static void sim_init(void)
{
	pthread_atfork(NULL, NULL, sim_after_fork);
}
