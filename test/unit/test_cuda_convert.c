/*
 * The CUDA backend's record conversion, fed CUPTI 13.0 records built by
 * hand (no GPU): kernels with launch geometry, NCCL kernels as collectives,
 * copies and sets with Kineto's names, syncs on their context's device,
 * runtime/driver calls with names and OS tids, the blocklist, allocations,
 * NVTX ranges paired across records, device properties, incomplete records,
 * and the recording-window filter.
 */
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "agent/device/cuda/backend_cbid.h"
#include "agent/device/cuda/backend_convert.h"
#include "unit/unit.h"

#define OFFSET 1000   /* the converter's ts_offset in these tests */

static int32_t fake_tid(uint32_t cupti_tid)
{
	return cupti_tid == 0xabcd1234u ? 4242 : 0;
}

static const char *fake_demangle(const char *name)
{
	return strcmp(name, "_Z6squarePfi") == 0 ? "square(float*, int)" : name;
}

static uint64_t window_open_from = 0;   /* windows: [window_open_from, inf) */

static bool fake_window(uint64_t ts)
{
	return ts >= window_open_from;
}

static void conv_setup(struct cuda_conv *c)
{
	cuda_conv_init(c);
	c->version = 130001;
	c->ts_offset = OFFSET;
	c->rank = 3;
	c->tid_of = fake_tid;
	c->kernel_name = fake_demangle;
	c->recording_at = fake_window;
}

static CUpti_ActivityKernel10 kernel_rec(const char *name)
{
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof k);
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = 5000;
	k.end = 7500;
	k.deviceId = 1;
	k.streamId = 7;
	k.gridX = 128, k.gridY = 2, k.gridZ = 1;
	k.blockX = 256, k.blockY = 1, k.blockZ = 1;
	k.registersPerThread = 32;
	k.staticSharedMemory = 1024;
	k.dynamicSharedMemory = 4096;
	k.correlationId = 77;
	k.name = name;
	return k;
}

static void test_kernel(void)
{
	struct cuda_conv c;
	struct cuda_out o;
	conv_setup(&c);
	CUpti_ActivityKernel10 k = kernel_rec("_Z6squarePfi");
	CHECK(cuda_convert(&c, &k, &o) == CUDA_OUT_ACTIVITY);
	CHECK(o.ts == 5000 + OFFSET && o.u.act.end == 7500 + OFFSET);
	CHECK(o.u.act.kind == RAW_DEV_KERNEL && o.u.act.vendor == RAW_VENDOR_CUDA);
	CHECK(o.u.act.device == 1 && o.u.act.stream == 7 && o.u.act.correlation == 77);
	CHECK(o.u.act.grid[0] == 128 && o.u.act.grid[1] == 2 && o.u.act.grid[2] == 1);
	CHECK(o.u.act.block[0] == 256 && o.u.act.block[1] == 1 && o.u.act.block[2] == 1);
	CHECK(o.u.act.registers == 32 && o.u.act.shared_bytes == 5120);
	CHECK_STR(o.name, "square(float*, int)");
	CHECK(!o.collective);

	/* Zero timestamps: CUPTI ran out of device buffer; lost, not written. */
	k.start = 0;
	CHECK(cuda_convert(&c, &k, &o) == CUDA_OUT_LOST);
	k.start = 8000;   /* end before start */
	CHECK(cuda_convert(&c, &k, &o) == CUDA_OUT_LOST);
	CHECK(c.stats.lost == 2 && c.stats.written == 1 && c.stats.records == 3);
	cuda_conv_free(&c);
}

static void test_nccl_kernel(void)
{
	struct cuda_conv c;
	struct cuda_out o;
	conv_setup(&c);
	CUpti_ActivityKernel10 k =
		kernel_rec("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
	CHECK(cuda_convert(&c, &k, &o) == CUDA_OUT_ACTIVITY);
	CHECK(o.collective);
	CHECK(o.coll.op == RAW_COLL_ALLREDUCE && o.coll.rank == 3 && o.coll.peer == -1);
	CHECK(o.coll.end == 7500 + OFFSET && o.coll.correlation == 77);
	CHECK(o.coll.device == 1 && o.coll.stream == 7 && o.coll.vendor == RAW_VENDOR_CUDA);
	/* Generic kernels name no operation: a kernel only. */
	k.name = "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)";
	CHECK(cuda_convert(&c, &k, &o) == CUDA_OUT_ACTIVITY && !o.collective);
	cuda_conv_free(&c);
}

static void test_memcpy_memset(void)
{
	struct cuda_conv c;
	struct cuda_out o;
	conv_setup(&c);
	CUpti_ActivityMemcpy6 m;
	memset(&m, 0, sizeof m);
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.bytes = 1 << 20;
	m.start = 100, m.end = 300;
	m.deviceId = 0, m.streamId = 13, m.correlationId = 5;
	CHECK(cuda_convert(&c, &m, &o) == CUDA_OUT_ACTIVITY);
	CHECK(o.u.act.kind == RAW_DEV_MEMCPY && o.u.act.copy_kind == RAW_COPY_HTOD);
	CHECK(o.u.act.bytes == 1 << 20 && o.u.act.stream == 13 && o.u.act.correlation == 5);
	CHECK(o.ts == 100 + OFFSET && o.u.act.end == 300 + OFFSET);
	CHECK_STR(o.name, "Memcpy HtoD (Pinned -> Device)");
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
	m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	CHECK(cuda_convert(&c, &m, &o) == CUDA_OUT_ACTIVITY && o.u.act.copy_kind == RAW_COPY_DTOH);
	CHECK_STR(o.name, "Memcpy DtoH (Device -> Pageable)");
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
	CHECK(cuda_convert(&c, &m, &o) == CUDA_OUT_ACTIVITY && o.u.act.copy_kind == RAW_COPY_DTOD);

	CUpti_ActivityMemcpyPtoP4 p;
	memset(&p, 0, sizeof p);
	p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	p.srcKind = p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	p.bytes = 64, p.start = 10, p.end = 20, p.deviceId = 2, p.streamId = 3, p.correlationId = 9;
	CHECK(cuda_convert(&c, &p, &o) == CUDA_OUT_ACTIVITY);
	CHECK(o.u.act.copy_kind == RAW_COPY_PTOP && o.u.act.device == 2 && o.u.act.bytes == 64);
	CHECK_STR(o.name, "Memcpy PtoP (Device -> Device)");

	CUpti_ActivityMemset4 s;
	memset(&s, 0, sizeof s);
	s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	s.bytes = 4096, s.start = 50, s.end = 60, s.deviceId = 0, s.streamId = 7;
	s.correlationId = 11, s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	CHECK(cuda_convert(&c, &s, &o) == CUDA_OUT_ACTIVITY);
	CHECK(o.u.act.kind == RAW_DEV_MEMSET && o.u.act.bytes == 4096 && o.u.act.correlation == 11);
	CHECK_STR(o.name, "Memset (Device)");
	cuda_conv_free(&c);
}

static CUpti_ActivityAPI api_rec(CUpti_ActivityKind kind, uint32_t cbid)
{
	CUpti_ActivityAPI a;
	memset(&a, 0, sizeof a);
	a.kind = kind;
	a.cbid = cbid;
	a.start = 2000, a.end = 2600;
	a.processId = 99, a.threadId = 0xabcd1234u, a.correlationId = 77;
	return a;
}

static void test_api(void)
{
	struct cuda_conv c;
	struct cuda_out o;
	conv_setup(&c);
	CUpti_ActivityAPI a = api_rec(CUPTI_ACTIVITY_KIND_RUNTIME,
				      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
	CHECK(cuda_convert(&c, &a, &o) == CUDA_OUT_API);
	CHECK_STR(o.name, "cudaLaunchKernel");
	CHECK(o.u.api.cbid == 211 && o.u.api.domain == RAW_API_RUNTIME);
	CHECK(o.u.api.correlation == 77 && o.u.api.tid == 4242 && o.u.api.vendor == RAW_VENDOR_CUDA);
	CHECK(o.ts == 2000 + OFFSET && o.u.api.end == 2600 + OFFSET);

	/* A thread that never registered: the negated CUPTI id, not a wrong tid. */
	a.threadId = 0x1234;
	CHECK(cuda_convert(&c, &a, &o) == CUDA_OUT_API && o.u.api.tid == -0x1234);

	CUpti_ActivityAPI d = api_rec(CUPTI_ACTIVITY_KIND_DRIVER,
				      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
	CHECK(cuda_convert(&c, &d, &o) == CUDA_OUT_API);
	CHECK_STR(o.name, "cuLaunchKernel");
	CHECK(o.u.api.domain == RAW_API_DRIVER && o.u.api.cbid == 307);

	/* Noise is not written. */
	a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020;
	CHECK(cuda_convert(&c, &a, &o) == CUDA_OUT_SKIP);
	d.cbid = CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent;
	CHECK(cuda_convert(&c, &d, &o) == CUDA_OUT_SKIP);
	CHECK(c.stats.blocked == 2);

	/* A newer CUDA's call: named by number. */
	a.cbid = 99999;
	CHECK(cuda_convert(&c, &a, &o) == CUDA_OUT_API);
	CHECK_STR(o.name, "cbid 99999");
	cuda_conv_free(&c);
}

static void test_sync_context(void)
{
	struct cuda_conv c;
	struct cuda_out o;
	conv_setup(&c);
	CUpti_ActivityContext3 x;
	memset(&x, 0, sizeof x);
	x.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
	x.contextId = 5, x.deviceId = 3;
	CHECK(cuda_convert(&c, &x, &o) == CUDA_OUT_SKIP);

	CUpti_ActivitySynchronization2 s;
	memset(&s, 0, sizeof s);
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
	s.start = 10, s.end = 90, s.correlationId = 31, s.contextId = 5, s.streamId = 7;
	CHECK(cuda_convert(&c, &s, &o) == CUDA_OUT_ACTIVITY);
	CHECK(o.u.act.kind == RAW_DEV_SYNC && o.u.act.device == 3 && o.u.act.stream == 7);
	CHECK(o.u.act.correlation == 31);
	CHECK_STR(o.name, "Stream Sync");
	s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
	s.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	CHECK(cuda_convert(&c, &s, &o) == CUDA_OUT_ACTIVITY && o.u.act.stream == 0);
	CHECK_STR(o.name, "Context Sync");
	cuda_conv_free(&c);
}

static CUpti_ActivityCudaEvent2 event_rec(uint32_t event, uint32_t stream, uint32_t corr)
{
	CUpti_ActivityCudaEvent2 e;
	memset(&e, 0, sizeof e);
	e.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
	e.contextId = 5, e.eventId = event, e.streamId = stream, e.correlationId = corr;
	return e;
}

static CUpti_ActivitySynchronization2 wait_rec(CUpti_ActivitySynchronizationType type,
					       uint32_t event, uint32_t corr)
{
	CUpti_ActivitySynchronization2 s;
	memset(&s, 0, sizeof s);
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = type;
	s.start = 10, s.end = 90, s.correlationId = corr, s.contextId = 5, s.cudaEventId = event;
	s.streamId = type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT ?
		     9 : CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	return s;
}

/* Syncs on an event name the cudaEventRecord they waited for: the latest
 * issued before the wait, though a later one was converted first. */
static void test_event_waits(void)
{
	struct cuda_conv c;
	struct cuda_out o;
	conv_setup(&c);
	CUpti_ActivityCudaEvent2 e = event_rec(42, 7, 100);
	CHECK(cuda_convert(&c, &e, &o) == CUDA_OUT_SKIP);
	CUpti_ActivitySynchronization2 w =
		wait_rec(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, 42, 101);
	CHECK(cuda_convert(&c, &w, &o) == CUDA_OUT_ACTIVITY);
	CHECK_STR(o.name, "Stream Wait Event");
	CHECK(o.u.act.stream == 9 && o.u.act.event_id == 42);
	CHECK(o.u.act.wait_stream == 7 && o.u.act.wait_corr == 100);
	e = event_rec(42, 8, 200);
	CHECK(cuda_convert(&c, &e, &o) == CUDA_OUT_SKIP);
	w = wait_rec(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, 42, 150);
	CHECK(cuda_convert(&c, &w, &o) == CUDA_OUT_ACTIVITY);
	CHECK_STR(o.name, "Event Sync");
	CHECK(o.u.act.wait_stream == 7 && o.u.act.wait_corr == 100);
	w.correlationId = 201;
	CHECK(cuda_convert(&c, &w, &o) == CUDA_OUT_ACTIVITY);
	CHECK(o.u.act.wait_stream == 8 && o.u.act.wait_corr == 200);
	/* an event never recorded, and a wait issued before every record */
	w.cudaEventId = 43;
	CHECK(cuda_convert(&c, &w, &o) == CUDA_OUT_ACTIVITY && o.u.act.wait_corr == 0);
	w.cudaEventId = 42, w.correlationId = 99;
	CHECK(cuda_convert(&c, &w, &o) == CUDA_OUT_ACTIVITY && o.u.act.wait_corr == 0);
	CHECK(c.stats.waits_unknown == 2);
	/* other syncs carry no event */
	CUpti_ActivitySynchronization2 s = wait_rec(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE,
						    42, 300);
	CHECK(cuda_convert(&c, &s, &o) == CUDA_OUT_ACTIVITY);
	CHECK(o.u.act.event_id == 0 && o.u.act.wait_corr == 0);
	cuda_conv_free(&c);
}

/* Events without end (one per collective): the table stays its size, the
 * least recently recorded are forgotten, recent ones still answer. */
static void test_event_waits_many(void)
{
	struct cuda_conv c;
	struct cuda_out o;
	conv_setup(&c);
	uint32_t n = 4 * CUDA_EVENT_SLOTS;
	for (uint32_t i = 1; i <= n; i++) {
		CUpti_ActivityCudaEvent2 e = event_rec(i, 3, 10 * i);
		CHECK(cuda_convert(&c, &e, &o) == CUDA_OUT_SKIP);
	}
	CHECK(c.stats.events_evicted >= n - CUDA_EVENT_SLOTS);
	CUpti_ActivitySynchronization2 w =
		wait_rec(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, n, 10 * n + 1);
	CHECK(cuda_convert(&c, &w, &o) == CUDA_OUT_ACTIVITY);
	CHECK(o.u.act.wait_stream == 3 && o.u.act.wait_corr == 10ull * n);
	w.cudaEventId = 1;
	CHECK(cuda_convert(&c, &w, &o) == CUDA_OUT_ACTIVITY && o.u.act.wait_corr == 0);
	cuda_conv_free(&c);
}

static void test_memory(void)
{
	struct cuda_conv c;
	struct cuda_out o;
	conv_setup(&c);
	CUpti_ActivityMemory4 m;
	memset(&m, 0, sizeof m);
	m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.correlationId = 12, m.address = 0x7f0000001000ull, m.bytes = 2 << 20;
	m.timestamp = 400, m.deviceId = 1, m.streamId = 9, m.isAsync = 0;
	CHECK(cuda_convert(&c, &m, &o) == CUDA_OUT_MEMORY);
	CHECK(o.ts == 400 + OFFSET && o.u.mem.address == 0x7f0000001000ull);
	CHECK(o.u.mem.bytes == 2 << 20 && o.u.mem.flags == 0 && o.u.mem.stream == 0);
	CHECK(o.u.mem.device == 1 && o.u.mem.correlation == 12 && o.u.mem.vendor == RAW_VENDOR_CUDA);
	m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
	m.isAsync = 1;
	CHECK(cuda_convert(&c, &m, &o) == CUDA_OUT_MEMORY);
	CHECK(o.u.mem.flags == RAW_MEM_FREE && o.u.mem.stream == 9);
	m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID;
	CHECK(cuda_convert(&c, &m, &o) == CUDA_OUT_SKIP);
	cuda_conv_free(&c);
}

static CUpti_ActivityMarker2 marker_rec(uint32_t flags, uint32_t id, uint64_t ts, const char *name)
{
	CUpti_ActivityMarker2 m;
	memset(&m, 0, sizeof m);
	m.kind = CUPTI_ACTIVITY_KIND_MARKER;
	m.flags = (CUpti_ActivityFlag)flags;
	m.timestamp = ts;
	m.id = id;
	m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	m.objectId.pt.processId = 99;
	m.objectId.pt.threadId = 0xabcd1234u;
	m.name = name;
	return m;
}

static void test_markers(void)
{
	struct cuda_conv c;
	struct cuda_out o;
	conv_setup(&c);
	/* Nested ranges: outer 1 [100, 900], inner 2 [200, 300]. */
	char outer[] = "forward", inner[] = "layer1";
	CUpti_ActivityMarker2 s1 = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100, outer);
	CUpti_ActivityMarker2 s2 = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 200, inner);
	s2.domain = "my_domain";
	CUpti_ActivityMarker2 e2 = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 300, NULL);
	CUpti_ActivityMarker2 e1 = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 900, NULL);
	CHECK(cuda_convert(&c, &s1, &o) == CUDA_OUT_SKIP);
	CHECK(cuda_convert(&c, &s2, &o) == CUDA_OUT_SKIP);
	/* The names are copied: CUPTI's may not outlive their buffer. */
	strcpy(outer, "XXXXXXX");
	CHECK(cuda_convert(&c, &e2, &o) == CUDA_OUT_MARKER);
	CHECK_STR(o.name, "layer1");
	CHECK_STR(o.domain, "my_domain");
	CHECK(o.ts == 200 + OFFSET && o.u.marker.end == 300 + OFFSET);
	CHECK(o.u.marker.flags == RAW_MARKER_RANGE && o.u.marker.tid == 4242);
	CHECK(cuda_convert(&c, &e1, &o) == CUDA_OUT_MARKER);
	CHECK_STR(o.name, "forward");
	CHECK(o.domain == NULL);
	CHECK(o.ts == 100 + OFFSET && o.u.marker.end == 900 + OFFSET);
	CHECK(c.open_used == 0);
	/* An end without its start: nothing. */
	CHECK(cuda_convert(&c, &e1, &o) == CUDA_OUT_SKIP);

	CUpti_ActivityMarker2 mark = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 3, 50, "ckpt");
	CHECK(cuda_convert(&c, &mark, &o) == CUDA_OUT_MARKER);
	CHECK_STR(o.name, "ckpt");
	CHECK(o.u.marker.flags == 0 && o.ts == 50 + OFFSET && o.u.marker.end == o.ts);
	cuda_conv_free(&c);
}

/* torch's NVTX ranges of operators (emit_nvtx's messages) become
 * operator records named by the op; a program's range with the same
 * text in another domain, or not in torch's form, stays a range. */
static void test_torch_op_ranges(void)
{
	struct cuda_conv c;
	struct cuda_out o;
	conv_setup(&c);
	CUpti_ActivityMarker2 s1 = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100,
		"aten::addmm, seq = 17, op_id = 40, sizes = [[8], [8, 4], [4, 8]], "
		"input_op_ids = [(0, -1), (39, 0)]");
	CUpti_ActivityMarker2 s2 = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 150,
					      "aten::empty, op_id = 41");
	CUpti_ActivityMarker2 s3 = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_START, 3, 160,
					      "aten::empty, op_id = 41");
	s3.domain = "mine";
	CUpti_ActivityMarker2 s4 = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_START, 4, 170,
					      "step, op_id = 7 of 9");
	CHECK(cuda_convert(&c, &s1, &o) == CUDA_OUT_SKIP);
	CHECK(cuda_convert(&c, &s2, &o) == CUDA_OUT_SKIP);
	CHECK(cuda_convert(&c, &s3, &o) == CUDA_OUT_SKIP);
	CHECK(cuda_convert(&c, &s4, &o) == CUDA_OUT_SKIP);
	CUpti_ActivityMarker2 e = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 180, NULL);
	CHECK(cuda_convert(&c, &e, &o) == CUDA_OUT_OP);
	CHECK_STR(o.name, "aten::empty");
	CHECK(o.domain == NULL);
	CHECK(o.ts == 150 + OFFSET && o.u.op.end == 180 + OFFSET && o.u.op.tid == 4242);
	CHECK(o.u.op.seq == -1 && o.u.op.flags == RAW_OP_NVTX && o.u.op.name_id == 0);
	e.id = 3;
	CHECK(cuda_convert(&c, &e, &o) == CUDA_OUT_MARKER);
	CHECK_STR(o.name, "aten::empty, op_id = 41");
	e.id = 4;
	CHECK(cuda_convert(&c, &e, &o) == CUDA_OUT_MARKER);
	CHECK_STR(o.name, "step, op_id = 7 of 9");
	e.id = 1, e.timestamp = 900;
	CHECK(cuda_convert(&c, &e, &o) == CUDA_OUT_OP);
	CHECK_STR(o.name, "aten::addmm");
	CHECK_STR(o.domain, "[[8], [8, 4], [4, 8]]");
	CHECK(o.u.op.seq == 17 && o.u.op.end == 900 + OFFSET);
	CHECK(c.open_used == 0);
	cuda_conv_free(&c);
}

/* mstx_domain_include / _exclude on NVTX domains: a dropped domain's
 * ranges (start and end) and marks give nothing; the default domain is
 * CUPTI's NULL. */
static void test_marker_domains(void)
{
	struct cuda_conv c;
	struct cuda_out o;
	struct domain_filter f;
	conv_setup(&c);
	CHECK(domain_filter_init(&f, "kept", NULL) == 0);
	c.domains = &f;
	CUpti_ActivityMarker2 s1 = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100, "in");
	CUpti_ActivityMarker2 s2 = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 200, "out");
	CUpti_ActivityMarker2 s3 = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_START, 3, 250, "dflt");
	s1.domain = "kept";
	s2.domain = "other";
	CUpti_ActivityMarker2 e2 = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 300, NULL);
	CUpti_ActivityMarker2 e3 = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_END, 3, 350, NULL);
	CUpti_ActivityMarker2 e1 = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 400, NULL);
	CUpti_ActivityMarker2 m1 = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 4, 50, "a");
	CUpti_ActivityMarker2 m2 = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 5, 60, "b");
	m1.domain = "kept";
	m2.domain = "other";
	uint64_t filtered = c.stats.filtered;
	CHECK(cuda_convert(&c, &s1, &o) == CUDA_OUT_SKIP);
	CHECK(cuda_convert(&c, &s2, &o) == CUDA_OUT_SKIP);
	CHECK(cuda_convert(&c, &s3, &o) == CUDA_OUT_SKIP);
	CHECK(c.open_used == 1);                      /* only "kept"'s start waits */
	CHECK(cuda_convert(&c, &e2, &o) == CUDA_OUT_SKIP);
	CHECK(cuda_convert(&c, &e3, &o) == CUDA_OUT_SKIP);
	CHECK(cuda_convert(&c, &e1, &o) == CUDA_OUT_MARKER);
	CHECK_STR(o.name, "in");
	CHECK_STR(o.domain, "kept");
	CHECK(cuda_convert(&c, &m1, &o) == CUDA_OUT_MARKER);
	CHECK(cuda_convert(&c, &m2, &o) == CUDA_OUT_SKIP);
	CHECK(c.stats.filtered == filtered + 3);
	/* exclude: the default domain by its name */
	CHECK(domain_filter_init(&f, NULL, "default") == 0);
	CHECK(cuda_convert(&c, &s3, &o) == CUDA_OUT_SKIP && c.open_used == 0);
	CHECK(cuda_convert(&c, &m2, &o) == CUDA_OUT_MARKER);
	cuda_conv_free(&c);
}

/* Many ranges open at once, closed in an order unlike their opening: the
 * table grows and deletes without losing any. */
static void test_markers_many(void)
{
	struct cuda_conv c;
	struct cuda_out o;
	char name[32];
	conv_setup(&c);
	const uint32_t n = 5000;
	for (uint32_t i = 1; i <= n; i++) {
		snprintf(name, sizeof name, "r%u", i);
		CUpti_ActivityMarker2 s = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_START, i * 7, i, name);
		cuda_convert(&c, &s, &o);
	}
	CHECK(c.open_used == n);
	uint32_t ok = 0;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = (uint32_t)((uint64_t)k * 2654435761u % n) + 1;   /* a permutation */
		CUpti_ActivityMarker2 e = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_END, i * 7, n + k + 1, NULL);
		snprintf(name, sizeof name, "r%u", i);
		ok += cuda_convert(&c, &e, &o) == CUDA_OUT_MARKER && strcmp(o.name, name) == 0 &&
		      o.ts == i + OFFSET;
	}
	CHECK(ok == n);
	CHECK(c.open_used == 0);
	cuda_conv_free(&c);
}

static void test_device(void)
{
	struct cuda_conv c;
	struct cuda_out o;
	conv_setup(&c);
	CUpti_ActivityDevice5 d;
	memset(&d, 0, sizeof d);
	d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d.globalMemorySize = 80ull << 30;
	d.numMultiprocessors = 132;
	d.computeCapabilityMajor = 9, d.computeCapabilityMinor = 0;
	d.id = 2;
	d.name = "NVIDIA H100 80GB HBM3";
	for (int i = 0; i < 16; i++)
		d.uuid.bytes[i] = (char)(0xa0 + i);
	CHECK(cuda_convert(&c, &d, &o) == CUDA_OUT_INFO);
	CHECK(o.u.info.device == 2 && o.u.info.sm_count == 132);
	CHECK(o.u.info.total_mem_bytes == 80ull << 30);
	CHECK(o.u.info.compute_major == 9 && o.u.info.compute_minor == 0);
	CHECK_STR(o.name, "NVIDIA H100 80GB HBM3");
	CHECK_STR(o.domain, "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf");
	cuda_conv_free(&c);
}

static void test_overhead_and_other(void)
{
	struct cuda_conv c;
	struct cuda_out o;
	conv_setup(&c);
	CUpti_ActivityOverhead3 v;
	memset(&v, 0, sizeof v);
	v.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	v.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION;
	v.start = 10, v.end = 1010;
	CHECK(cuda_convert(&c, &v, &o) == CUDA_OUT_SKIP);
	unsigned slot = cuda_overhead_slot(CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION);
	CHECK(c.stats.overhead_ns[slot] == 1000);
	CHECK_STR(cuda_overhead_name(slot), "instrumentation");
	CHECK_STR(cuda_overhead_name(cuda_overhead_slot(CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER)),
		  "driver compiler");
	CUpti_Activity other = { .kind = CUPTI_ACTIVITY_KIND_NAME };
	CHECK(cuda_convert(&c, &other, &o) == CUDA_OUT_SKIP && c.stats.other_kinds == 1);
	cuda_conv_free(&c);
}

/* Host-side records that began outside every window are dropped; device
 * work is not (it was launched inside one), unless kernels are filtered
 * (CUPTI 13.0.0 keeps kernel tracing on between windows). */
static void test_windows(void)
{
	struct cuda_conv c;
	struct cuda_out o;
	conv_setup(&c);
	window_open_from = 3000 + OFFSET;
	CUpti_ActivityAPI a = api_rec(CUPTI_ACTIVITY_KIND_RUNTIME,
				      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
	CHECK(cuda_convert(&c, &a, &o) == CUDA_OUT_SKIP);   /* 2000: before */
	a.start = 3000, a.end = 3100;
	CHECK(cuda_convert(&c, &a, &o) == CUDA_OUT_API);
	CUpti_ActivityMarker2 s = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_START, 8, 10, "early");
	CUpti_ActivityMarker2 e = marker_rec(CUPTI_ACTIVITY_FLAG_MARKER_END, 8, 5000, NULL);
	CHECK(cuda_convert(&c, &s, &o) == CUDA_OUT_SKIP);
	CHECK(cuda_convert(&c, &e, &o) == CUDA_OUT_SKIP);   /* its start was dropped */
	CUpti_ActivityKernel10 k = kernel_rec("k");
	k.start = 100, k.end = 200;
	CHECK(cuda_convert(&c, &k, &o) == CUDA_OUT_ACTIVITY);
	c.filter_kernels = true;
	CHECK(cuda_convert(&c, &k, &o) == CUDA_OUT_SKIP);
	CHECK(c.stats.filtered == 3);
	window_open_from = 0;
	cuda_conv_free(&c);
}

int main(void)
{
	test_kernel();
	test_nccl_kernel();
	test_memcpy_memset();
	test_api();
	test_sync_context();
	test_event_waits();
	test_event_waits_many();
	test_memory();
	test_markers();
	test_torch_op_ranges();
	test_marker_domains();
	test_markers_many();
	test_device();
	test_overhead_and_other();
	test_windows();
	return unit_done();
}
