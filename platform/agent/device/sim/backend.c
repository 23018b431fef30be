/*
 * The agent side of the sim device: subscribes to libprof_sim (found in
 * the process with dlsym, never linked) and turns its records into device
 * records. The library stamps each record with whether a window was open
 * when its work was queued; work queued outside every window is dropped
 * here, even when it runs inside one, and work queued inside one is kept
 * even when it completes after.
 */
#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/device/dev_sink.h"
#include "agent/device/hal.h"
#include "simdev/prof_sim.h"
#include "simdev/sim_inject.h"

#define SIM_SM_COUNT  80u
#define SIM_MEM_BYTES (16ull << 30)

static struct {
	int (*subscribe)(const struct sim_subscriber *);
	void (*flush)(void);
	void (*unsubscribe)(void);
	uint64_t info_seen;      /* devices whose DEV_INFO the stream holds */
	int info_pid;            /* ... in this process image's stream */
} sim;

static void sim_info(uint32_t device)
{
	if (sim.info_pid != agent.pid) {
		sim.info_seen = 0;
		sim.info_pid = agent.pid;
	}
	if (device >= 64 || sim.info_seen & (1ull << device))
		return;
	struct raw_dev_info i = {
		.device = device, .vendor = RAW_VENDOR_SIM, .sm_count = SIM_SM_COUNT,
		.total_mem_bytes = SIM_MEM_BYTES,
	};
	if (dev_sink_info(&i, "prof sim device", NULL) == 0)
		sim.info_seen |= 1ull << device;
}

static uint32_t sim_copy_kind(uint32_t k)
{
	switch (k) {
	case PROF_SIM_HTOD: return RAW_COPY_HTOD;
	case PROF_SIM_DTOH: return RAW_COPY_DTOH;
	case PROF_SIM_DTOD: return RAW_COPY_DTOD;
	default: return RAW_COPY_UNKNOWN;
	}
}

static uint32_t sim_coll_op(uint32_t op)
{
	switch (op) {
	case PROF_SIM_ALLREDUCE: return RAW_COLL_ALLREDUCE;
	case PROF_SIM_ALLGATHER: return RAW_COLL_ALLGATHER;
	case PROF_SIM_BROADCAST: return RAW_COLL_BROADCAST;
	case PROF_SIM_SEND: return RAW_COLL_SEND;
	case PROF_SIM_RECV: return RAW_COLL_RECV;
	default: return 0;
	}
}

static void sim_emit_activity(const struct sim_record *r, uint32_t kind)
{
	struct raw_dev_activity a = {
		.end = r->end_ns, .correlation = r->correlation, .bytes = r->bytes,
		.kind = kind, .vendor = RAW_VENDOR_SIM, .device = r->device, .stream = r->stream,
		.copy_kind = kind == RAW_DEV_MEMCPY ? sim_copy_kind(r->copy_kind) : RAW_COPY_UNKNOWN,
		/* an event sync's; 0 in every other record */
		.wait_corr = r->wait_corr, .wait_stream = r->wait_stream, .event_id = r->event_id,
	};
	/* Copies and sets are named by the outputs, from their kind. */
	dev_sink_activity(r->start_ns, &a,
			  kind == RAW_DEV_KERNEL || kind == RAW_DEV_SYNC ? r->name : NULL);
}

static void sim_emit_collective(const struct sim_record *r)
{
	struct raw_dev_collective c = {
		.end = r->end_ns, .bytes = r->bytes, .correlation = r->correlation,
		.op = sim_coll_op(r->coll_op), .vendor = RAW_VENDOR_SIM, .device = r->device,
		.stream = r->stream, .rank = r->rank, .peer = r->peer,
	};
	dev_sink_collective(r->start_ns, &c, r->name, r->group, r->ranks);
}

static void sim_emit_api(const struct sim_record *r)
{
	struct raw_dev_api a = {
		.end = r->end_ns, .correlation = r->correlation, .tid = r->tid,
		.domain = RAW_API_SIM, .vendor = RAW_VENDOR_SIM,
	};
	dev_sink_api(r->start_ns, &a, r->name);
}

static void sim_emit_memory(const struct sim_record *r)
{
	struct raw_dev_memory m = {
		.address = r->address, .bytes = r->bytes, .correlation = r->correlation,
		.tid = r->tid, .device = r->device, .vendor = RAW_VENDOR_SIM,
		.flags = r->kind == SIM_REC_FREE ? RAW_MEM_FREE : 0,
	};
	dev_sink_memory(r->start_ns, &m);
}

static void sim_emit(const struct sim_record *r)
{
	switch (r->kind) {
	case SIM_REC_KERNEL: sim_emit_activity(r, RAW_DEV_KERNEL); break;
	case SIM_REC_MEMCPY: sim_emit_activity(r, RAW_DEV_MEMCPY); break;
	case SIM_REC_MEMSET: sim_emit_activity(r, RAW_DEV_MEMSET); break;
	case SIM_REC_SYNC: sim_emit_activity(r, RAW_DEV_SYNC); break;
	case SIM_REC_COLLECTIVE: sim_emit_collective(r); break;
	case SIM_REC_API: sim_emit_api(r); return;   /* the host's: no device info */
	case SIM_REC_MALLOC:
	case SIM_REC_FREE: sim_emit_memory(r); break;
	default: return;
	}
}

/* From the library's threads, one batch at a time. */
static void sim_deliver(const struct sim_record *recs, size_t n, void *ctx)
{
	dev_sink_lock();
	for (size_t i = 0; i < n; i++) {
		const struct sim_record *r = &recs[i];
		if (!r->recorded)
			continue;
		if (r->kind != SIM_REC_API)
			sim_info(r->device);
		sim_emit(r);
	}
	dev_sink_unlock();
}

static int sim_probe(void)
{
	return dlsym(RTLD_DEFAULT, "prof_sim_subscribe") != NULL;
}

/* Entry points handed over at injection, else those of a library the
 * program links (visible to dlsym then). */
static int sim_start(void)
{
	if (!sim.subscribe) {
		sim.subscribe = (int (*)(const struct sim_subscriber *))
			dlsym(RTLD_DEFAULT, "prof_sim_subscribe");
		sim.flush = (void (*)(void))dlsym(RTLD_DEFAULT, "prof_sim_flush");
		sim.unsubscribe = (void (*)(void))dlsym(RTLD_DEFAULT, "prof_sim_unsubscribe");
	}
	if (!sim.subscribe || !sim.flush || !sim.unsubscribe)
		return -ENOENT;
	struct sim_subscriber s = {
		.version = SIM_INJECT_VERSION, .deliver = sim_deliver,
		.recording = dev_sink_recording,
	};
	return sim.subscribe(&s);
}

/* Windows are decided per record when its work is queued (the library
 * asks dev_sink_recording then): nothing to switch here. */
static void sim_pause(void) {}
static void sim_resume(void) {}

static void sim_flush(void)
{
	if (sim.flush)
		sim.flush();
}

static void sim_stop(void)
{
	if (!sim.flush)
		return;
	sim.flush();
	sim.unsubscribe();
}

const struct dev_backend dev_backend_sim = {
	.name = "sim", .probe = sim_probe, .start = sim_start, .pause = sim_pause,
	.resume = sim_resume, .flush = sim_flush, .stop = sim_stop,
};

/* The library's injection entry point, called at its first API call: the
 * sim analogue of CUDA's InitializeInjection. */
__attribute__((visibility("default")))
int prof_sim_inject(const struct sim_entry *e)
{
	if (!agent.active)
		return -ENODEV;
	if (!e || e->version != SIM_INJECT_VERSION) {
		agent_log("sim device: libprof_sim speaks another version; not recorded");
		return -EPROTO;
	}
	/* Set once, before the backend starts: its functions run only once
	 * it has (hal_start_backend's lock orders that). */
	if (!sim.subscribe) {
		sim.flush = e->flush;
		sim.unsubscribe = e->unsubscribe;
		sim.subscribe = e->subscribe;
	}
	return hal_start_backend("sim");
}
