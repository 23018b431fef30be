/*
 * A stand-in libcupti for test_cuda_backend: the part of CUPTI's API the
 * backend resolves, with the documented behaviour the backend relies on
 * (one subscriber, buffers requested and completed through the registered
 * callbacks, FlushAll delivering queued records, GetNextRecord ending with
 * CUPTI_ERROR_MAX_LIMIT_REACHED). The test queues records and reads what
 * the backend asked for through the fake_cupti_* functions.
 *   FAKE_CUPTI_BUSY=1       cuptiSubscribe* fail with error 39
 *   FAKE_CUPTI_VERSION=N    cuptiGetVersion's answer (default 130001)
 *   FAKE_CUPTI_NO_TID_TYPE=1  cuptiSetThreadIdType fails (threads by pthread id)
 *   FAKE_CUPTI_DEVICE_MADE=1  CUDA set up a device before the backend came
 *                           ("Fake GPU", 132 SMs): its DEVICE record, emitted
 *                           then to no one, comes through
 *                           cuptiActivityEnableAndDump only, as CUPTI documents
 * NVTX as CUPTI takes it: InitializeInjectionNvtx2 fills an NVTX
 * instance's push and pop slots with functions that record MARKER
 * activity, start and end, as a real CUPTI does (all but RangePushW's).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#define EXPORT __attribute__((visibility("default")))
#define FAKE_QUEUE (64u << 10)

static struct {
	CUpti_CallbackFunc callback;
	int subscribed, unsubscribed, ts_callback;
	int tid_type;                         /* cuptiSetThreadIdType's last */
	uint32_t enabled[64];                 /* activity kinds currently on */
	int runtime_off, driver_off;          /* per-API disables asked for */
	int callbacks_on;                     /* cbids enabled for callbacks */
	uint32_t last_flush_flag;
	int flushes;
	size_t dropped;
	CUpti_BuffersCallbackRequestFunc req;
	CUpti_BuffersCallbackCompleteFunc done;
	unsigned char queue[FAKE_QUEUE];      /* [u64 size][record] ... */
	size_t queued;
	void *nvtx_arg;
	int nvtx_pushes, nvtx_pops;           /* ranges that reached "CUPTI" */
} fake;

EXPORT CUptiResult cuptiGetVersion(uint32_t *v)
{
	const char *e = getenv("FAKE_CUPTI_VERSION");
	*v = e ? (uint32_t)strtoul(e, NULL, 10) : 130001u;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
	*s = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "multiple subscribers"
								 : "fake CUPTI error";
	return CUPTI_SUCCESS;
}

static CUptiResult fake_subscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc cb,
				  CUpti_SubscriberParams *p)
{
	const char *busy = getenv("FAKE_CUPTI_BUSY");
	if ((busy && *busy == '1') || fake.subscribed > fake.unsubscribed) {
		if (p && p->oldSubscriberName && p->oldSubscriberSize > 16)
			strcpy(p->oldSubscriberName, "Nsight Systems");
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	fake.callback = cb;
	fake.subscribed++;
	*h = (CUpti_SubscriberHandle)&fake;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc cb, void *u)
{
	return fake_subscribe(h, cb, NULL);
}

EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *h, CUpti_CallbackFunc cb, void *u,
				     CUpti_SubscriberParams *p)
{
	return fake_subscribe(h, cb, p);
}

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle h)
{
	fake.unsubscribed++;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableCallback(uint32_t on, CUpti_SubscriberHandle h,
				       CUpti_CallbackDomain d, CUpti_CallbackId cbid)
{
	fake.callbacks_on += on ? 1 : -1;
	return CUPTI_SUCCESS;
}

/* CUPTI's clock is not CLOCK_MONOTONIC (it follows CLOCK_REALTIME): here
 * the monotonic clock moved by a fixed epoch, so that a backend which took
 * CUPTI's timestamps for monotonic ones would be off by days. Records are
 * stamped on this clock by their makers (fake_cuda_app, the unit test). */
#define FAKE_CUPTI_EPOCH_NS (400000ull * 1000000000ull)

EXPORT CUptiResult cuptiGetTimestamp(uint64_t *t)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	*t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + FAKE_CUPTI_EPOCH_NS;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
						  CUpti_BuffersCallbackCompleteFunc done)
{
	fake.req = req;
	fake.done = done;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
	fake.ts_callback = f != NULL;
	return f ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

/* FAKE_CUPTI_NO_TID_TYPE=1: a CUPTI that cannot name threads by OS id. */
EXPORT CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
	const char *no = getenv("FAKE_CUPTI_NO_TID_TYPE");
	if (no && *no == '1')
		return CUPTI_ERROR_NOT_SUPPORTED;
	fake.tid_type = (int)type;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
	if ((unsigned)k >= 64)
		return CUPTI_ERROR_INVALID_KIND;
	fake.enabled[k] = 1;
	return CUPTI_SUCCESS;
}

EXPORT void fake_cupti_push_any(const void *rec, size_t size);

EXPORT CUptiResult cuptiActivityEnableAndDump(CUpti_ActivityKind k)
{
	CUptiResult r = cuptiActivityEnable(k);
	const char *made = getenv("FAKE_CUPTI_DEVICE_MADE");
	if (r != CUPTI_SUCCESS || k != CUPTI_ACTIVITY_KIND_DEVICE || !made || *made != '1')
		return r;
	CUpti_ActivityDevice5 d;
	memset(&d, 0, sizeof d);
	d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d.name = "Fake GPU", d.numMultiprocessors = 132, d.globalMemorySize = 80ull << 30;
	d.computeCapabilityMajor = 9;
	d.uuid.bytes[15] = 1;
	fake_cupti_push_any(&d, sizeof d);
	return r;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
	if ((unsigned)k >= 64)
		return CUPTI_ERROR_INVALID_KIND;
	fake.enabled[k] = 0;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t on)
{
	fake.runtime_off += !on;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t on)
{
	fake.driver_off += !on;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	size_t at = *rec ? (size_t)((uint8_t *)*rec - buf) - 8 : 0;
	if (*rec) {
		uint64_t size;
		memcpy(&size, buf + at, 8);
		at += 8 + size;
	}
	if (at + 8 > valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = (CUpti_Activity *)(buf + at + 8);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext c, uint32_t s, size_t *n)
{
	*n = fake.dropped;
	fake.dropped = 0;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	fake.flushes++;
	fake.last_flush_flag = flag;
	if (!fake.queued || !fake.req)
		return CUPTI_SUCCESS;
	uint8_t *buf = NULL;
	size_t size = 0, max = 0;
	fake.req(&buf, &size, &max);
	if (!buf || size < fake.queued)
		return CUPTI_SUCCESS;
	memcpy(buf, fake.queue, fake.queued);
	size_t valid = fake.queued;
	fake.queued = 0;
	fake.done(NULL, 0, buf, size, valid);
	return CUPTI_SUCCESS;
}

/* ---- NVTX (nvtx3/nvtxDetail/nvtxTypes.h's tool interface) ---- */

EXPORT void fake_cupti_push(const void *rec, size_t size);

typedef void (*nvtx_fn)(void);
struct nvtx_callbacks {
	size_t struct_size;
	int (*module_table)(int module, nvtx_fn ***table, unsigned *size);
};

static uint32_t nvtx_ids;
static __thread uint32_t nvtx_open[64];
static __thread int nvtx_depth;

static uint32_t nvtx_thread(void)
{
	return fake.tid_type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM ? (uint32_t)gettid()
								    : (uint32_t)pthread_self();
}

static void nvtx_marker(uint32_t flags, uint32_t id, const char *name)
{
	CUpti_ActivityMarker2 m;
	memset(&m, 0, sizeof m);
	m.kind = CUPTI_ACTIVITY_KIND_MARKER;
	m.flags = (CUpti_ActivityFlag)flags;
	cuptiGetTimestamp(&m.timestamp);
	m.id = id;
	m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	m.objectId.pt.threadId = nvtx_thread();
	m.name = name;
	fake_cupti_push(&m, sizeof m);
}

static int nvtx_push(const char *name)
{
	uint32_t id = __atomic_add_fetch(&nvtx_ids, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&fake.nvtx_pushes, 1, __ATOMIC_RELAXED);
	if (nvtx_depth < 64)
		nvtx_open[nvtx_depth] = id;
	/* CUPTI copies the message into its buffer: here, a ring of copies
	 * that outlives the records a test queues before a flush */
	static char copies[4096][160];
	char *copy = copies[id % 4096];
	snprintf(copy, sizeof copies[0], "%s", name);
	nvtx_marker(CUPTI_ACTIVITY_FLAG_MARKER_START, id, copy);
	return nvtx_depth++;
}

static int nvtx_push_a(const char *msg) { return nvtx_push(msg ? msg : ""); }
static int nvtx_push_other(const void *attr) { (void)attr; return nvtx_push("(attributes)"); }

static int nvtx_pop(void)
{
	__atomic_fetch_add(&fake.nvtx_pops, 1, __ATOMIC_RELAXED);
	if (nvtx_depth == 0)
		return -1;
	int d = --nvtx_depth;
	if (d < 64)
		nvtx_marker(CUPTI_ACTIVITY_FLAG_MARKER_END, nvtx_open[d], NULL);
	return d;
}

EXPORT int InitializeInjectionNvtx2(void *arg)
{
	fake.nvtx_arg = arg;
	const void *(*get)(uint32_t) = (const void *(*)(uint32_t))arg;
	const struct nvtx_callbacks *cb = get ? get(1) : NULL;
	nvtx_fn **t = NULL;
	unsigned n = 0;
	if (!cb || !cb->module_table(1, &t, &n) || n < 11)
		return 1;
	*t[8] = (nvtx_fn)nvtx_push_other;   /* RangePushEx */
	*t[9] = (nvtx_fn)nvtx_push_a;       /* RangePushA */
	*t[11] = (nvtx_fn)nvtx_pop;         /* RangePop */
	/* RangePushW left as NVTX made it: a tool sets only what it records */
	return 1;
}

/* ---- the test's side ---- */

/* Queues a record whatever the enabled kinds: one that CUPTI made just
 * before its kind was switched off. */
EXPORT void fake_cupti_push_any(const void *rec, size_t size)
{
	uint64_t s = (size + 7) & ~(size_t)7;
	if (fake.queued + 8 + s > FAKE_QUEUE)
		return;
	memcpy(fake.queue + fake.queued, &s, 8);
	memset(fake.queue + fake.queued + 8, 0, s);
	memcpy(fake.queue + fake.queued + 8, rec, size);
	fake.queued += 8 + s;
}

/* Queues a record as CUPTI makes one: only while its kind is enabled. */
EXPORT void fake_cupti_push(const void *rec, size_t size)
{
	CUpti_ActivityKind k = ((const CUpti_Activity *)rec)->kind;
	if ((unsigned)k < 64 && fake.enabled[k])
		fake_cupti_push_any(rec, size);
}

/* A CUDA call on the calling thread: CUPTI calls the subscriber back. */
EXPORT void fake_cupti_api_call(CUpti_CallbackDomain d, CUpti_CallbackId cbid)
{
	if (fake.callback)
		fake.callback(NULL, d, cbid, NULL);
}

EXPORT void fake_cupti_drop(size_t n) { fake.dropped += n; }
EXPORT int fake_cupti_enabled(CUpti_ActivityKind k) { return fake.enabled[k]; }
EXPORT void *fake_cupti_nvtx_arg(void) { return fake.nvtx_arg; }

/* NVTX pushes and pops that reached the stand-in. */
EXPORT void fake_cupti_nvtx_calls(int out[2])
{
	out[0] = __atomic_load_n(&fake.nvtx_pushes, __ATOMIC_RELAXED);
	out[1] = __atomic_load_n(&fake.nvtx_pops, __ATOMIC_RELAXED);
}

EXPORT int fake_cupti_tid_type(void) { return fake.tid_type; }

EXPORT void fake_cupti_counts(int out[8])
{
	out[0] = fake.subscribed;
	out[1] = fake.unsubscribed;
	out[2] = fake.ts_callback;
	out[3] = fake.runtime_off;
	out[4] = fake.driver_off;
	out[5] = fake.callbacks_on;
	out[6] = fake.flushes;
	out[7] = (int)fake.last_flush_flag;
}
