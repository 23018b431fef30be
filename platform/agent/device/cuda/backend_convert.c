#include "agent/device/cuda/backend_convert.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "agent/device/cuda/backend_cbid.h"
#include "common/torch_nvtx.h"

/*
 * The fields read below sit at the same place in the oldest struct version
 * a supported CUPTI emits and in the 13.0 one the code names, so a record
 * of any version between them reads right. A newer version only appends.
 */
#define CUDA_SAME(old_t, new_t, f)                                                    \
	_Static_assert(offsetof(old_t, f) == offsetof(new_t, f) &&                    \
		       sizeof(((old_t *)0)->f) == sizeof(((new_t *)0)->f), #old_t "." #f)
CUDA_SAME(CUpti_ActivityKernel4, CUpti_ActivityKernel10, registersPerThread);
CUDA_SAME(CUpti_ActivityKernel4, CUpti_ActivityKernel10, start);
CUDA_SAME(CUpti_ActivityKernel4, CUpti_ActivityKernel10, end);
CUDA_SAME(CUpti_ActivityKernel4, CUpti_ActivityKernel10, deviceId);
CUDA_SAME(CUpti_ActivityKernel4, CUpti_ActivityKernel10, streamId);
CUDA_SAME(CUpti_ActivityKernel4, CUpti_ActivityKernel10, gridX);
CUDA_SAME(CUpti_ActivityKernel4, CUpti_ActivityKernel10, gridZ);
CUDA_SAME(CUpti_ActivityKernel4, CUpti_ActivityKernel10, blockX);
CUDA_SAME(CUpti_ActivityKernel4, CUpti_ActivityKernel10, blockZ);
CUDA_SAME(CUpti_ActivityKernel4, CUpti_ActivityKernel10, staticSharedMemory);
CUDA_SAME(CUpti_ActivityKernel4, CUpti_ActivityKernel10, dynamicSharedMemory);
CUDA_SAME(CUpti_ActivityKernel4, CUpti_ActivityKernel10, correlationId);
CUDA_SAME(CUpti_ActivityKernel4, CUpti_ActivityKernel10, name);
CUDA_SAME(CUpti_ActivityMemcpy, CUpti_ActivityMemcpy6, copyKind);
CUDA_SAME(CUpti_ActivityMemcpy, CUpti_ActivityMemcpy6, srcKind);
CUDA_SAME(CUpti_ActivityMemcpy, CUpti_ActivityMemcpy6, dstKind);
CUDA_SAME(CUpti_ActivityMemcpy, CUpti_ActivityMemcpy6, bytes);
CUDA_SAME(CUpti_ActivityMemcpy, CUpti_ActivityMemcpy6, start);
CUDA_SAME(CUpti_ActivityMemcpy, CUpti_ActivityMemcpy6, end);
CUDA_SAME(CUpti_ActivityMemcpy, CUpti_ActivityMemcpy6, deviceId);
CUDA_SAME(CUpti_ActivityMemcpy, CUpti_ActivityMemcpy6, streamId);
CUDA_SAME(CUpti_ActivityMemcpy, CUpti_ActivityMemcpy6, correlationId);
CUDA_SAME(CUpti_ActivityMemcpyPtoP, CUpti_ActivityMemcpyPtoP4, bytes);
CUDA_SAME(CUpti_ActivityMemcpyPtoP, CUpti_ActivityMemcpyPtoP4, start);
CUDA_SAME(CUpti_ActivityMemcpyPtoP, CUpti_ActivityMemcpyPtoP4, end);
CUDA_SAME(CUpti_ActivityMemcpyPtoP, CUpti_ActivityMemcpyPtoP4, deviceId);
CUDA_SAME(CUpti_ActivityMemcpyPtoP, CUpti_ActivityMemcpyPtoP4, streamId);
CUDA_SAME(CUpti_ActivityMemcpyPtoP, CUpti_ActivityMemcpyPtoP4, correlationId);
CUDA_SAME(CUpti_ActivityMemset, CUpti_ActivityMemset4, bytes);
CUDA_SAME(CUpti_ActivityMemset, CUpti_ActivityMemset4, start);
CUDA_SAME(CUpti_ActivityMemset, CUpti_ActivityMemset4, end);
CUDA_SAME(CUpti_ActivityMemset, CUpti_ActivityMemset4, deviceId);
CUDA_SAME(CUpti_ActivityMemset, CUpti_ActivityMemset4, streamId);
CUDA_SAME(CUpti_ActivityMemset, CUpti_ActivityMemset4, correlationId);
CUDA_SAME(CUpti_ActivityMemset, CUpti_ActivityMemset4, memoryKind);
CUDA_SAME(CUpti_ActivityMemory2, CUpti_ActivityMemory4, memoryOperationType);
CUDA_SAME(CUpti_ActivityMemory2, CUpti_ActivityMemory4, correlationId);
CUDA_SAME(CUpti_ActivityMemory2, CUpti_ActivityMemory4, address);
CUDA_SAME(CUpti_ActivityMemory2, CUpti_ActivityMemory4, bytes);
CUDA_SAME(CUpti_ActivityMemory2, CUpti_ActivityMemory4, timestamp);
CUDA_SAME(CUpti_ActivityMemory2, CUpti_ActivityMemory4, deviceId);
CUDA_SAME(CUpti_ActivityMemory2, CUpti_ActivityMemory4, streamId);
CUDA_SAME(CUpti_ActivityMemory2, CUpti_ActivityMemory4, isAsync);
CUDA_SAME(CUpti_ActivityMarker, CUpti_ActivityMarker2, flags);
CUDA_SAME(CUpti_ActivityMarker, CUpti_ActivityMarker2, timestamp);
CUDA_SAME(CUpti_ActivityMarker, CUpti_ActivityMarker2, id);
CUDA_SAME(CUpti_ActivityMarker, CUpti_ActivityMarker2, objectKind);
CUDA_SAME(CUpti_ActivityMarker, CUpti_ActivityMarker2, objectId);
CUDA_SAME(CUpti_ActivityMarker, CUpti_ActivityMarker2, name);
CUDA_SAME(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, type);
CUDA_SAME(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, start);
CUDA_SAME(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, end);
CUDA_SAME(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, correlationId);
CUDA_SAME(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, contextId);
CUDA_SAME(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, streamId);
CUDA_SAME(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, cudaEventId);
CUDA_SAME(CUpti_ActivityCudaEvent, CUpti_ActivityCudaEvent2, correlationId);
CUDA_SAME(CUpti_ActivityCudaEvent, CUpti_ActivityCudaEvent2, contextId);
CUDA_SAME(CUpti_ActivityCudaEvent, CUpti_ActivityCudaEvent2, streamId);
CUDA_SAME(CUpti_ActivityCudaEvent, CUpti_ActivityCudaEvent2, eventId);
CUDA_SAME(CUpti_ActivityOverhead, CUpti_ActivityOverhead3, overheadKind);
CUDA_SAME(CUpti_ActivityOverhead, CUpti_ActivityOverhead3, start);
CUDA_SAME(CUpti_ActivityOverhead, CUpti_ActivityOverhead3, end);
CUDA_SAME(CUpti_ActivityDevice2, CUpti_ActivityDevice5, globalMemorySize);
CUDA_SAME(CUpti_ActivityDevice2, CUpti_ActivityDevice5, numMultiprocessors);
CUDA_SAME(CUpti_ActivityDevice2, CUpti_ActivityDevice5, computeCapabilityMajor);
CUDA_SAME(CUpti_ActivityDevice2, CUpti_ActivityDevice5, computeCapabilityMinor);
CUDA_SAME(CUpti_ActivityDevice2, CUpti_ActivityDevice5, id);
CUDA_SAME(CUpti_ActivityDevice2, CUpti_ActivityDevice5, uuid);
CUDA_SAME(CUpti_ActivityDevice2, CUpti_ActivityDevice5, name);
CUDA_SAME(CUpti_ActivityContext, CUpti_ActivityContext3, contextId);
CUDA_SAME(CUpti_ActivityContext, CUpti_ActivityContext3, deviceId);

void cuda_conv_init(struct cuda_conv *c)
{
	memset(c, 0, sizeof *c);
	c->rank = -1;
}

void cuda_conv_free(struct cuda_conv *c)
{
	cuda_markers_free(c);
	cuda_events_free(c);
	for (int i = 0; i < 2; i++) {
		free(c->held[i]);
		c->held[i] = NULL;
	}
}

/* A CUPTI timestamp on CLOCK_MONOTONIC; 0 stays 0 (CUPTI's "unknown"). */
static uint64_t cuda_ts(const struct cuda_conv *c, uint64_t t)
{
	return t ? t + (uint64_t)c->ts_offset : 0;
}

/* Was a window open at `ts`? Counts the records dropped for not. */
static bool cuda_recording(struct cuda_conv *c, uint64_t ts)
{
	if (!c->recording_at || c->recording_at(ts))
		return true;
	c->stats.filtered++;
	return false;
}

static int32_t cuda_tid(const struct cuda_conv *c, uint32_t cupti_tid)
{
	if (c->os_tids && cupti_tid && cupti_tid <= INT32_MAX)
		return (int32_t)cupti_tid;
	int32_t t = c->tid_of ? c->tid_of(cupti_tid) : 0;
	return t > 0 ? t : -(int32_t)(cupti_tid & 0x7fffffffu);
}

static uint32_t cuda_ctx_device(const struct cuda_conv *c, uint32_t context)
{
	for (uint32_t i = 0; i < c->nctx; i++)
		if (c->ctx[i].context == context)
			return c->ctx[i].device;
	return 0;
}

/* Start and end both known and in order, else the record is lost: CUPTI
 * leaves them 0 when its device buffers ran out. */
static bool cuda_span(const struct cuda_conv *c, uint64_t start, uint64_t end,
		      struct cuda_out *o)
{
	o->ts = cuda_ts(c, start);
	return start && end && end >= start;
}

static void cuda_act_base(struct cuda_out *o, uint32_t kind, uint64_t end, uint32_t corr,
			  uint32_t device, uint32_t stream)
{
	o->u.act = (struct raw_dev_activity){ .end = end, .correlation = corr, .kind = kind,
					      .vendor = RAW_VENDOR_CUDA, .device = device,
					      .stream = stream };
}

static enum cuda_out_kind cuda_kernel(struct cuda_conv *c, const CUpti_ActivityKernel10 *k,
				      struct cuda_out *o)
{
	if (!cuda_span(c, k->start, k->end, o))
		return CUDA_OUT_LOST;
	if (c->filter_kernels && !cuda_recording(c, o->ts))
		return CUDA_OUT_SKIP;
	uint64_t end = cuda_ts(c, k->end);
	cuda_act_base(o, RAW_DEV_KERNEL, end, k->correlationId, k->deviceId, k->streamId);
	struct raw_dev_activity *a = &o->u.act;
	a->grid[0] = (uint32_t)k->gridX, a->grid[1] = (uint32_t)k->gridY, a->grid[2] = (uint32_t)k->gridZ;
	a->block[0] = (uint32_t)k->blockX, a->block[1] = (uint32_t)k->blockY;
	a->block[2] = (uint32_t)k->blockZ;
	a->registers = k->registersPerThread;
	a->shared_bytes = (uint32_t)k->staticSharedMemory + (uint32_t)k->dynamicSharedMemory;
	o->name = k->name && c->kernel_name ? c->kernel_name(k->name) : k->name;
	uint32_t op = cuda_nccl_op(k->name);
	if (op) {
		o->collective = true;
		o->coll = (struct raw_dev_collective){ .end = end, .correlation = k->correlationId,
						       .op = op, .vendor = RAW_VENDOR_CUDA,
						       .device = k->deviceId, .stream = k->streamId,
						       .rank = c->rank, .peer = -1 };
	}
	return CUDA_OUT_ACTIVITY;
}

static const char *cuda_mem_kind_name(uint32_t k)
{
	static const char *const n[] = { "Unknown", "Pageable", "Pinned", "Device", "Array",
					 "Managed", "Device Static", "Managed Static" };
	return k < sizeof n / sizeof n[0] ? n[k] : "Unknown";
}

/* CUPTI copy kind -> the raw format's, and its name as Kineto prints it. */
static uint32_t cuda_copy_kind(uint32_t k, const char **name)
{
	static const struct { const char *name; uint32_t raw; } m[] = {
		{ "Unknown", RAW_COPY_UNKNOWN }, { "HtoD", RAW_COPY_HTOD }, { "DtoH", RAW_COPY_DTOH },
		{ "HtoA", RAW_COPY_HTOD }, { "AtoH", RAW_COPY_DTOH }, { "AtoA", RAW_COPY_DTOD },
		{ "AtoD", RAW_COPY_DTOD }, { "DtoA", RAW_COPY_DTOD }, { "DtoD", RAW_COPY_DTOD },
		{ "HtoH", RAW_COPY_HTOH }, { "PtoP", RAW_COPY_PTOP },
	};
	if (k >= sizeof m / sizeof m[0])
		k = 0;
	*name = m[k].name;
	return m[k].raw;
}

static enum cuda_out_kind cuda_memcpy(struct cuda_conv *c, const CUpti_ActivityMemcpy6 *m,
				      struct cuda_out *o)
{
	if (!cuda_span(c, m->start, m->end, o))
		return CUDA_OUT_LOST;
	cuda_act_base(o, RAW_DEV_MEMCPY, cuda_ts(c, m->end), m->correlationId, m->deviceId,
		      m->streamId);
	const char *kind;
	o->u.act.copy_kind = cuda_copy_kind(m->copyKind, &kind);
	o->u.act.bytes = m->bytes;
	snprintf(o->buf, sizeof o->buf, "Memcpy %s (%s -> %s)", kind,
		 cuda_mem_kind_name(m->srcKind), cuda_mem_kind_name(m->dstKind));
	o->name = o->buf;
	return CUDA_OUT_ACTIVITY;
}

static enum cuda_out_kind cuda_peer_copy(struct cuda_conv *c, const CUpti_ActivityMemcpyPtoP4 *m,
					 struct cuda_out *o)
{
	if (!cuda_span(c, m->start, m->end, o))
		return CUDA_OUT_LOST;
	cuda_act_base(o, RAW_DEV_MEMCPY, cuda_ts(c, m->end), m->correlationId, m->deviceId,
		      m->streamId);
	o->u.act.copy_kind = RAW_COPY_PTOP;
	o->u.act.bytes = m->bytes;
	snprintf(o->buf, sizeof o->buf, "Memcpy PtoP (%s -> %s)", cuda_mem_kind_name(m->srcKind),
		 cuda_mem_kind_name(m->dstKind));
	o->name = o->buf;
	return CUDA_OUT_ACTIVITY;
}

static enum cuda_out_kind cuda_memset(struct cuda_conv *c, const CUpti_ActivityMemset4 *m,
				      struct cuda_out *o)
{
	if (!cuda_span(c, m->start, m->end, o))
		return CUDA_OUT_LOST;
	cuda_act_base(o, RAW_DEV_MEMSET, cuda_ts(c, m->end), m->correlationId, m->deviceId,
		      m->streamId);
	o->u.act.bytes = m->bytes;
	snprintf(o->buf, sizeof o->buf, "Memset (%s)", cuda_mem_kind_name(m->memoryKind));
	o->name = o->buf;
	return CUDA_OUT_ACTIVITY;
}

/* A sync on an event: the event, and the record it waited for. */
static void cuda_sync_event(struct cuda_conv *c, const CUpti_ActivitySynchronization2 *s,
			    struct raw_dev_activity *a)
{
	uint32_t stream, corr;
	a->event_id = s->cudaEventId;
	if (cuda_events_waited(c, s->contextId, s->cudaEventId, s->correlationId, &stream, &corr)) {
		a->wait_stream = stream;
		a->wait_corr = corr;
	} else {
		c->stats.waits_unknown++;
	}
}

static enum cuda_out_kind cuda_sync(struct cuda_conv *c, const CUpti_ActivitySynchronization2 *s,
				    struct cuda_out *o)
{
	static const char *const names[] = { "Synchronize", "Event Sync", "Stream Wait Event",
					     "Stream Sync", "Context Sync" };
	if (!cuda_span(c, s->start, s->end, o))
		return CUDA_OUT_LOST;
	if (!cuda_recording(c, o->ts))
		return CUDA_OUT_SKIP;
	uint32_t stream = s->streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? 0 : s->streamId;
	cuda_act_base(o, RAW_DEV_SYNC, cuda_ts(c, s->end), s->correlationId,
		      cuda_ctx_device(c, s->contextId), stream);
	uint32_t t = (uint32_t)s->type;
	o->name = names[t < sizeof names / sizeof names[0] ? t : 0];
	if (t == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE ||
	    t == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT)
		cuda_sync_event(c, s, &o->u.act);
	return CUDA_OUT_ACTIVITY;
}

/* cudaEventRecord: kept for the syncs on the event that follow. */
static enum cuda_out_kind cuda_event_record(struct cuda_conv *c, const CUpti_ActivityCudaEvent2 *e)
{
	cuda_events_put(c, e->contextId, e->eventId, e->streamId, e->correlationId);
	return CUDA_OUT_SKIP;
}

static enum cuda_out_kind cuda_api(struct cuda_conv *c, const CUpti_ActivityAPI *a,
				   uint32_t domain, struct cuda_out *o)
{
	if (cuda_api_blocked(domain, a->cbid)) {
		c->stats.blocked++;
		return CUDA_OUT_SKIP;
	}
	if (!cuda_span(c, a->start, a->end, o))
		return CUDA_OUT_LOST;
	if (!cuda_recording(c, o->ts))
		return CUDA_OUT_SKIP;
	o->u.api = (struct raw_dev_api){ .end = cuda_ts(c, a->end), .correlation = a->correlationId,
					 .tid = cuda_tid(c, a->threadId), .domain = domain,
					 .vendor = RAW_VENDOR_CUDA, .cbid = a->cbid };
	o->name = cuda_api_name(domain, a->cbid, o->buf, sizeof o->buf);
	return CUDA_OUT_API;
}

static enum cuda_out_kind cuda_memory(struct cuda_conv *c, const CUpti_ActivityMemory4 *m,
				      struct cuda_out *o)
{
	uint32_t op = (uint32_t)m->memoryOperationType;
	if (op != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION &&
	    op != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
		return CUDA_OUT_SKIP;
	o->ts = cuda_ts(c, m->timestamp);
	if (!o->ts)
		return CUDA_OUT_LOST;
	if (!cuda_recording(c, o->ts))
		return CUDA_OUT_SKIP;
	/* CUPTI names no thread for allocations: tid 0, as the format allows. */
	o->u.mem = (struct raw_dev_memory){
		.address = m->address, .bytes = m->bytes, .correlation = m->correlationId,
		.device = m->deviceId, .vendor = RAW_VENDOR_CUDA,
		.flags = op == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE ? RAW_MEM_FREE : 0,
		.stream = m->isAsync ? m->streamId : 0,
	};
	return CUDA_OUT_MEMORY;
}

static int32_t cuda_marker_tid(const struct cuda_conv *c, const CUpti_ActivityMarker2 *m)
{
	return m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? cuda_tid(c, m->objectId.pt.threadId)
							      : 0;
}

static char *cuda_strdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static enum cuda_out_kind cuda_marker_start(struct cuda_conv *c, const CUpti_ActivityMarker2 *m,
					    uint64_t ts)
{
	if (!cuda_recording(c, ts))
		return CUDA_OUT_SKIP;
	struct cuda_marker_open *r = cuda_markers_put(c, m->id);
	if (!r)
		return CUDA_OUT_LOST;
	r->tid = cuda_marker_tid(c, m);
	r->ts = ts;
	r->name = cuda_strdup(m->name);
	r->domain = cuda_strdup(m->domain);
	return CUDA_OUT_SKIP;
}

/* torch's range of an operator (its NVTX observer's, on the default
 * domain): the op's name and sizes are cut out of the message in place
 * (the copy is ours), so that records name the op, not the call. */
static bool cuda_torch_op(struct cuda_conv *c, struct cuda_marker_open *r, uint64_t end,
			  struct cuda_out *o)
{
	struct torch_nvtx_op t;
	if (!torch_nvtx_op_parse(r->name, &t))
		return false;
	if (t.sizes_len) {
		o->domain = r->name + t.sizes_at;
		r->name[t.sizes_at + t.sizes_len] = '\0';
	}
	r->name[t.name_len] = '\0';
	c->stats.torch_ops++;
	o->u.op = (struct raw_op){ .end = end, .tid = r->tid, .flags = RAW_OP_NVTX, .seq = t.seq };
	return true;
}

static enum cuda_out_kind cuda_marker_end(struct cuda_conv *c, const CUpti_ActivityMarker2 *m,
					  uint64_t ts, struct cuda_out *o)
{
	struct cuda_marker_open r;
	/* No start: it began outside a window (or before CUPTI was ours). */
	if (!cuda_markers_take(c, m->id, &r))
		return CUDA_OUT_SKIP;
	c->held[0] = r.name;
	c->held[1] = r.domain;
	o->ts = r.ts;
	o->name = r.name;
	o->domain = r.domain;
	uint64_t end = ts >= r.ts ? ts : r.ts;
	if (!r.domain && cuda_torch_op(c, &r, end, o))
		return CUDA_OUT_OP;
	o->u.marker = (struct raw_dev_marker){ .end = end, .tid = r.tid,
					       .flags = RAW_MARKER_RANGE };
	return CUDA_OUT_MARKER;
}

/* Marks and range starts of a dropped domain are skipped (counted as
 * filtered); the range's end then finds no start and is skipped too. */
static bool cuda_marker_domain_kept(struct cuda_conv *c, const CUpti_ActivityMarker2 *m)
{
	if (!c->domains || domain_filter_keeps(c->domains, m->domain))
		return true;
	c->stats.filtered++;
	return false;
}

static enum cuda_out_kind cuda_marker(struct cuda_conv *c, const CUpti_ActivityMarker2 *m,
				      struct cuda_out *o)
{
	uint64_t ts = cuda_ts(c, m->timestamp);
	uint32_t f = (uint32_t)m->flags;
	if (!ts)
		return CUDA_OUT_LOST;
	if ((f & (CUPTI_ACTIVITY_FLAG_MARKER_START | CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS)) &&
	    !cuda_marker_domain_kept(c, m))
		return CUDA_OUT_SKIP;
	if (f & CUPTI_ACTIVITY_FLAG_MARKER_START)
		return cuda_marker_start(c, m, ts);
	if (f & CUPTI_ACTIVITY_FLAG_MARKER_END)
		return cuda_marker_end(c, m, ts, o);
	if (!(f & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) || !cuda_recording(c, ts))
		return CUDA_OUT_SKIP;   /* sync-object markers are not ranges */
	o->ts = ts;
	o->name = m->name;
	o->domain = m->domain;
	o->u.marker = (struct raw_dev_marker){ .end = ts, .tid = cuda_marker_tid(c, m) };
	return CUDA_OUT_MARKER;
}

static enum cuda_out_kind cuda_device(const CUpti_ActivityDevice5 *d, struct cuda_out *o)
{
	const unsigned char *u = (const unsigned char *)d->uuid.bytes;
	/* NVML's spelling, so the launcher's samples join on it. */
	snprintf(o->buf, sizeof o->buf,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		 u[13], u[14], u[15]);
	o->u.info = (struct raw_dev_info){ .device = d->id, .vendor = RAW_VENDOR_CUDA,
					   .sm_count = d->numMultiprocessors,
					   .total_mem_bytes = d->globalMemorySize,
					   .compute_major = d->computeCapabilityMajor,
					   .compute_minor = d->computeCapabilityMinor };
	o->name = d->name;
	o->domain = o->buf;
	return CUDA_OUT_INFO;
}

static enum cuda_out_kind cuda_context(struct cuda_conv *c, const CUpti_ActivityContext3 *x)
{
	for (uint32_t i = 0; i < c->nctx; i++)
		if (c->ctx[i].context == x->contextId) {
			c->ctx[i].device = x->deviceId;
			return CUDA_OUT_SKIP;
		}
	if (c->nctx < CUDA_MAX_CONTEXTS) {
		c->ctx[c->nctx].context = x->contextId;
		c->ctx[c->nctx++].device = x->deviceId;
	}
	return CUDA_OUT_SKIP;
}

unsigned cuda_overhead_slot(uint32_t k)
{
	if (k == CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER)
		return 9;
	k >>= 16;
	return k > 0 && k < 9 ? k : 0;
}

const char *cuda_overhead_name(unsigned slot)
{
	static const char *const n[CUDA_OVERHEAD_SLOTS] = {
		"unknown", "buffer flush", "instrumentation", "resource", "module loading",
		"lazy function loading", "command buffer full", "buffer request", "UVM init",
		"driver compiler",
	};
	return slot < CUDA_OVERHEAD_SLOTS ? n[slot] : n[0];
}

static enum cuda_out_kind cuda_overhead(struct cuda_conv *c, const CUpti_ActivityOverhead3 *v)
{
	if (v->end > v->start)
		c->stats.overhead_ns[cuda_overhead_slot((uint32_t)v->overheadKind)] +=
			v->end - v->start;
	return CUDA_OUT_SKIP;
}

static enum cuda_out_kind cuda_dispatch(struct cuda_conv *c, const CUpti_Activity *r,
					struct cuda_out *o)
{
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:
		return cuda_kernel(c, (const CUpti_ActivityKernel10 *)r, o);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return cuda_memcpy(c, (const CUpti_ActivityMemcpy6 *)r, o);
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		return cuda_peer_copy(c, (const CUpti_ActivityMemcpyPtoP4 *)r, o);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return cuda_memset(c, (const CUpti_ActivityMemset4 *)r, o);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return cuda_sync(c, (const CUpti_ActivitySynchronization2 *)r, o);
	case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
		return cuda_event_record(c, (const CUpti_ActivityCudaEvent2 *)r);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
		return cuda_api(c, (const CUpti_ActivityAPI *)r, RAW_API_RUNTIME, o);
	case CUPTI_ACTIVITY_KIND_DRIVER:
		return cuda_api(c, (const CUpti_ActivityAPI *)r, RAW_API_DRIVER, o);
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		return cuda_memory(c, (const CUpti_ActivityMemory4 *)r, o);
	case CUPTI_ACTIVITY_KIND_MARKER:
		return cuda_marker(c, (const CUpti_ActivityMarker2 *)r, o);
	case CUPTI_ACTIVITY_KIND_DEVICE:
		return cuda_device((const CUpti_ActivityDevice5 *)r, o);
	case CUPTI_ACTIVITY_KIND_CONTEXT:
		return cuda_context(c, (const CUpti_ActivityContext3 *)r);
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return cuda_overhead(c, (const CUpti_ActivityOverhead3 *)r);
	default:
		c->stats.other_kinds++;
		return CUDA_OUT_SKIP;
	}
}

enum cuda_out_kind cuda_convert(struct cuda_conv *c, const void *record, struct cuda_out *out)
{
	for (int i = 0; i < 2; i++) {
		free(c->held[i]);
		c->held[i] = NULL;
	}
	memset(out, 0, offsetof(struct cuda_out, buf));
	out->buf[0] = 0;
	c->stats.records++;
	out->kind = cuda_dispatch(c, record, out);
	if (out->kind == CUDA_OUT_LOST)
		c->stats.lost++;
	else if (out->kind != CUDA_OUT_SKIP)
		c->stats.written++;
	return out->kind;
}
