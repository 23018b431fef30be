/*
 * The CUDA backend of the device HAL: CUPTI's activity API, entered
 * through CUDA's injection protocol. The launcher points
 * CUDA_INJECTION64_PATH at this very library (also LD_PRELOADed, so a
 * process has one agent); at cuInit CUDA calls InitializeInjection, which
 * starts the backend through the HAL. From then on CUPTI fills buffers
 * (backend_buffers.c) on the program's threads, and hands them back full,
 * or on the HAL's 100 ms flush, to buffer_completed below, which converts
 * them (backend_convert.c) into the device stream through dev_sink.
 *
 * NVTX: the launcher also points NVTX_INJECTION64_PATH here, and the
 * InitializeInjectionNvtx* entry points hand each NVTX instance to the
 * libcupti the backend uses, so NVTX ranges arrive as CUPTI MARKER records
 * on CUPTI's clock and threads, and the launcher need not know which
 * libcupti the program will load.
 *
 * Locks: `cuda.lock` serialises start/pause/resume/flush/stop, which call
 * CUPTI; buffer_completed never takes it (CUPTI may hold its own lock while
 * it calls back) and calls CUPTI only with no lock of ours held: record
 * pointers are gathered first, then converted under the sink lock (the
 * ABBA deadlock in kineto's CuptiActivityApi.cpp came from a CUPTI call
 * made under a lock that the buffer-request path also took).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "common/agent_env.h"
#include "agent/device/cuda/backend_cbid.h"
#include "agent/device/cuda/backend_convert.h"
#include "agent/device/cuda/backend_cupti.h"
#include "agent/device/cuda/backend_parts.h"
#include "agent/device/dev_sink.h"
#include "agent/device/hal.h"
#include "launcher/selfpath.h"
#include "raw/raw_clock.h"

enum cuda_state { CUDA_IDLE, CUDA_RUNNING, CUDA_STOPPED, CUDA_FAILED, CUDA_FORGOTTEN };

static struct {
	pthread_mutex_t lock;
	int state;                    /* enum cuda_state; read without the lock too */
	int injected;                 /* InitializeInjection has run */
	int late;                     /* ... called by prof_cuda_attach: CUDA was set up */
	int paused;
	int pid;
	int64_t offset;               /* else: monotonic - CUPTI clock */
	const struct cupti_api *api;
	CUpti_SubscriberHandle sub;
	int subscribed;               /* sub is held (see cuda_subscribe); written under
				       * lock, atomically: prof_fw_cupti_held reads it without */
	int os_tids;                  /* CUPTI names threads by OS tid (set by us) */
	uint64_t skip;                /* kinds left off (PROF_CUDA_SKIP_KINDS) */
	struct cuda_conv conv;        /* under the sink lock */
	uint64_t buffers, dropped;
	int nvtx_ops;                 /* operators are to come as torch's NVTX ranges */
} cuda = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* What is traced inside recording windows; DEVICE and CONTEXT records are
 * always wanted (device properties, context -> device). */
static const CUpti_ActivityKind cuda_traced[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
	CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
	CUPTI_ACTIVITY_KIND_MEMORY2, CUPTI_ACTIVITY_KIND_MARKER, CUPTI_ACTIVITY_KIND_OVERHEAD,
	CUPTI_ACTIVITY_KIND_CUDA_EVENT,
};
static const CUpti_ActivityKind cuda_always[] = {
	CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT,
};
#define CUDA_COUNT(a) (sizeof (a) / sizeof (a)[0])

/* CUPTI 13.0.0 may deadlock when kernel tracing is switched off (fixed in
 * 13.0 Update 1): there it stays on, and the converter drops kernels that
 * started between windows. */
static int cuda_keeps_kernels(void)
{
	return cuda.api->version == CUPTI_VERSION_13_0_0;
}

/* PROF_CUDA_SKIP_KINDS (a diagnostic, test/gpu/README): traced kinds
 * left off, by name, to learn what each costs the program. */
static uint64_t cuda_skip_kinds(void)
{
	static const struct { const char *name; CUpti_ActivityKind kind; } names[] = {
		{ "KERNEL", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL },
		{ "MEMCPY", CUPTI_ACTIVITY_KIND_MEMCPY }, { "MEMCPY2", CUPTI_ACTIVITY_KIND_MEMCPY2 },
		{ "MEMSET", CUPTI_ACTIVITY_KIND_MEMSET }, { "RUNTIME", CUPTI_ACTIVITY_KIND_RUNTIME },
		{ "DRIVER", CUPTI_ACTIVITY_KIND_DRIVER },
		{ "SYNCHRONIZATION", CUPTI_ACTIVITY_KIND_SYNCHRONIZATION },
		{ "MEMORY2", CUPTI_ACTIVITY_KIND_MEMORY2 }, { "MARKER", CUPTI_ACTIVITY_KIND_MARKER },
		{ "OVERHEAD", CUPTI_ACTIVITY_KIND_OVERHEAD },
		{ "CUDA_EVENT", CUPTI_ACTIVITY_KIND_CUDA_EVENT },
	};
	const char *e = getenv("PROF_CUDA_SKIP_KINDS");
	uint64_t mask = 0;
	for (const char *p = e; p && *p; p += strcspn(p, ","), p += *p == ',') {
		size_t len = strcspn(p, ",");
		for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
			if (strlen(names[i].name) == len && strncmp(p, names[i].name, len) == 0)
				mask |= 1ull << ((unsigned)names[i].kind & 63);
	}
	if (mask)
		agent_log("cuda: PROF_CUDA_SKIP_KINDS=%s: those kinds are not traced", e);
	return mask;
}

/* One kind on; with `dump`, also the records of what exists already: a
 * backend that starts after CUDA's set-up (prof.profile in a script that
 * used the GPU before) gets no DEVICE or CONTEXT record otherwise, and its
 * trace would say 0 SMs. Where this CUPTI lacks the dump, or refuses it
 * (CUDA not set up yet: the records come at its set-up), plainly on. */
static CUptiResult cuda_enable_kind(CUpti_ActivityKind k, int dump)
{
	if (dump && cuda.api->ActivityEnableAndDump &&
	    cuda.api->ActivityEnableAndDump(k) == CUPTI_SUCCESS)
		return CUPTI_SUCCESS;
	return cuda.api->ActivityEnable(k);
}

/* A kind this CUPTI lacks is said once, not at every window. */
static void cuda_enable(const CUpti_ActivityKind *k, size_t n, int dump)
{
	static uint64_t said;
	for (size_t i = 0; i < n; i++) {
		if (cuda.skip & (1ull << ((unsigned)k[i] & 63)))
			continue;
		CUptiResult r = cuda_enable_kind(k[i], dump);
		uint64_t bit = 1ull << ((unsigned)k[i] & 63);
		if (r != CUPTI_SUCCESS && !(said & bit)) {
			said |= bit;
			agent_log("cuda: activity kind %d not enabled: %s", (int)k[i],
				  cupti_error(cuda.api, r));
		}
	}
}

/* Enabling RUNTIME/DRIVER resets per-API choices, so the blocklist is
 * applied after every enable (CUPTI 12.5+; older ones filter in
 * backend_convert.c only). */
static void cuda_block_noise(void)
{
	const struct cupti_api *a = cuda.api;
	for (size_t i = 0; a->ActivityEnableRuntimeApi && i < cuda_runtime_blocklist_len; i++)
		a->ActivityEnableRuntimeApi(cuda_runtime_blocklist[i], 0);
	for (size_t i = 0; a->ActivityEnableDriverApi && i < cuda_driver_blocklist_len; i++)
		a->ActivityEnableDriverApi(cuda_driver_blocklist[i], 0);
}

static void cuda_trace_on(void)
{
	cuda_enable(cuda_traced, CUDA_COUNT(cuda_traced), 0);
	cuda_block_noise();
}

static void cuda_trace_off(int keep_kernels)
{
	for (size_t i = 0; i < CUDA_COUNT(cuda_traced); i++)
		if (!(keep_kernels && cuda_traced[i] == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))
			cuda.api->ActivityDisable(cuda_traced[i]);
}

/* ---- buffers ---------------------------------------------------------- */

static void CUPTIAPI cuda_buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	*buf = cuda_pool_get();
	*size = *buf ? CUDA_BUF_SIZE : 0;
	*max_records = 0;   /* fill it */
}

/* Writes one converted record; returns how many were lost. */
static uint64_t cuda_emit(const struct cuda_out *o)
{
	int rc = 0;
	switch (o->kind) {
	case CUDA_OUT_ACTIVITY:
		/* A collective record is the whole task to the parse (trace
		 * event, kernel row, communication): never both. */
		if (o->collective)
			rc = dev_sink_collective(o->ts, &o->coll, o->name, NULL, NULL);
		else
			rc = dev_sink_activity(o->ts, &o->u.act, o->name);
		break;
	case CUDA_OUT_API:
		rc = dev_sink_api(o->ts, &o->u.api, o->name);
		break;
	case CUDA_OUT_MEMORY:
		rc = dev_sink_memory(o->ts, &o->u.mem);
		break;
	case CUDA_OUT_MARKER:
		rc = dev_sink_marker(o->ts, &o->u.marker, o->name, o->domain);
		break;
	case CUDA_OUT_OP:
		rc = dev_sink_op(o->ts, &o->u.op, o->name, o->domain);
		break;
	case CUDA_OUT_INFO:
		rc = dev_sink_info(&o->u.info, o->name, o->domain);
		break;
	case CUDA_OUT_LOST:
		return 1;   /* the sink never saw it: counted by the caller */
	case CUDA_OUT_SKIP:
		break;
	}
	(void)rc;   /* a record the sink refused is counted in the stream by it */
	return 0;
}

/* Records that never reached the sink, counted in its stream. The sink's
 * writer is not thread-safe: its lock, and no CUPTI call under it. */
static void cuda_lost(uint64_t n)
{
	if (!n)
		return;
	dev_sink_lock();
	dev_sink_lost(n);
	dev_sink_unlock();
}

#define CUDA_BATCH 1024

/* Converts and writes a batch under the sink lock; no CUPTI call here. */
static uint64_t cuda_write_batch(CUpti_Activity **recs, size_t n)
{
	uint64_t lost = 0;
	struct cuda_out o;
	dev_sink_lock();
	cuda_window_snapshot();
	cuda.conv.ts_offset = __atomic_load_n(&cuda.offset, __ATOMIC_RELAXED);
	/* the rank as of now: a program that starts its ranks itself names
	 * it in init_process_group, after CUDA was set up (agent_rank.c) */
	cuda.conv.rank = __atomic_load_n(&agent.rank, __ATOMIC_RELAXED);
	for (size_t i = 0; i < n; i++) {
		cuda_convert(&cuda.conv, recs[i], &o);
		lost += cuda_emit(&o);
	}
	dev_sink_unlock();
	return lost;
}

static void cuda_drain(uint8_t *buf, size_t valid)
{
	CUpti_Activity *recs[CUDA_BATCH], *r = NULL;
	size_t n = 0;
	uint64_t lost = 0;
	CUptiResult st;
	while ((st = cuda.api->ActivityGetNextRecord(buf, valid, &r)) == CUPTI_SUCCESS) {
		recs[n++] = r;
		if (n == CUDA_BATCH) {
			lost += cuda_write_batch(recs, n);
			n = 0;
		}
	}
	if (n)
		lost += cuda_write_batch(recs, n);
	static int said;
	if (st != CUPTI_ERROR_MAX_LIMIT_REACHED && !said++)
		agent_log("cuda: a buffer ended early (%s); later ones are not reported",
			  cupti_error(cuda.api, st));
	cuda_lost(lost);
}

static void CUPTIAPI cuda_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf,
					   size_t size, size_t valid)
{
	int st = __atomic_load_n(&cuda.state, __ATOMIC_ACQUIRE);
	/* A fork child's copy of CUPTI never calls back; the pid test guards
	 * against writing the parent's stream anyway. */
	if (valid && (st == CUDA_RUNNING || st == CUDA_STOPPED) && getpid() == cuda.pid) {
		__atomic_add_fetch(&cuda.buffers, 1, __ATOMIC_RELAXED);
		cuda_drain(buf, valid);
	}
	cuda_pool_put(buf);
	size_t dropped = 0;   /* CUPTI's own losses; no lock of ours is held */
	if (cuda.api->ActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS && dropped) {
		__atomic_add_fetch(&cuda.dropped, dropped, __ATOMIC_RELAXED);
		cuda_lost(dropped);
	}
}

/* ---- callbacks ---------------------------------------------------------- */

static void CUPTIAPI cuda_callback(void *userdata, CUpti_CallbackDomain domain,
				   CUpti_CallbackId cbid, const void *data)
{
	cuda_tid_once();   /* the only work done on the program's API path */
}

static void cuda_enable_callbacks(void)
{
	for (size_t i = 0; i < cuda_runtime_tid_cbids_len; i++)
		cuda.api->EnableCallback(1, cuda.sub, CUPTI_CB_DOMAIN_RUNTIME_API,
					 cuda_runtime_tid_cbids[i]);
	for (size_t i = 0; i < cuda_driver_tid_cbids_len; i++)
		cuda.api->EnableCallback(1, cuda.sub, CUPTI_CB_DOMAIN_DRIVER_API,
					 cuda_driver_tid_cbids[i]);
}

/* ---- start -------------------------------------------------------------- */

/* The subscription is held for the whole run even when no callback is
 * enabled: CUPTI (up to 13.2) serves one subscriber, and holding it is how
 * prof keeps CUPTI to itself. Kineto, which torch's profiler initialises
 * at its first start (prof's own operator collection does that), then
 * finds CUPTI taken and stays CPU-only; without this it traces the CUDA
 * runtime through CUPTI even for a CPU-only profile (torch 2.x counts the
 * runtime among CPU activities), replaces prof's buffer callbacks, and
 * CUDA tracing stops or hangs (seen on an H100 with torch 2.11). */
static int cuda_subscribe(void)
{
	char old[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = "";
	CUpti_SubscriberParams p = { .structSize = CUpti_SubscriberParams_STRUCT_SIZE,
				     .subscriberName = "prof", .oldSubscriberName = old,
				     .oldSubscriberSize = sizeof old };
	CUptiResult r = cuda.api->Subscribe_v2
		? cuda.api->Subscribe_v2(&cuda.sub, cuda_callback, NULL, &p)
		: cuda.api->Subscribe(&cuda.sub, cuda_callback, NULL);
	if (r == CUPTI_SUCCESS) {
		__atomic_store_n(&cuda.subscribed, 1, __ATOMIC_RELEASE);
		return 0;
	}
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		/* CUPTI takes one subscriber per process (CUDA <= 13.2). */
		agent_log("cuda: CUPTI already has a subscriber (%s): Nsight Systems, Nsight "
			  "Compute or torch.profiler owns CUDA tracing in this process. prof leaves "
			  "it alone and records no CUDA activity here (NVML samples and host data "
			  "are unaffected); run without the other tool for prof's CUDA trace",
			  old[0] ? old : "name not reported");
		return -EBUSY;
	}
	agent_log("cuda: cuptiSubscribe failed: %s", cupti_error(cuda.api, r));
	return -EIO;
}

/* Threads by OS tid: CUPTI names them by pthread_self() unless told to
 * use the system's id; then the per-thread callbacks (backend_tid.c) are
 * not needed, and a CUDA call costs CUPTI's activity record only. */
static void cuda_thread_ids(void)
{
	const struct cupti_api *a = cuda.api;
	cuda.os_tids = a->SetThreadIdType &&
		       a->SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) == CUPTI_SUCCESS;
}

/* Gives CUPTI back as it was found: pthread ids and no subscriber. */
static void cuda_release(void)
{
	if (cuda.os_tids)
		cuda.api->SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT);
	cuda.os_tids = 0;
	if (cuda.subscribed)
		cuda.api->Unsubscribe(cuda.sub);
	__atomic_store_n(&cuda.subscribed, 0, __ATOMIC_RELEASE);
}

/* CUPTI's clock onto CLOCK_MONOTONIC: an offset from a pair read back
 * to back, refreshed at every flush (both are CPU clocks; CUPTI's follows
 * CLOCK_REALTIME, which NTP may step). Not CUPTI's timestamp callback:
 * CUPTI then calls it for every timestamp it takes, on the program's
 * thread, and on an H100 (torch 2.11, an MLP's 1.5 ms step) that alone
 * cost 10% of the step; the offset costs nothing per record. */
static void cuda_refresh_offset(void)
{
	uint64_t t = 0, m1 = raw_clock_ns(CLOCK_MONOTONIC);
	if (cuda.api->GetTimestamp(&t) != CUPTI_SUCCESS || !t)
		return;
	uint64_t m2 = raw_clock_ns(CLOCK_MONOTONIC);
	__atomic_store_n(&cuda.offset, (int64_t)(m1 / 2 + m2 / 2) - (int64_t)t, __ATOMIC_RELAXED);
}

static void cuda_conv_setup(void)
{
	struct cuda_conv *c = &cuda.conv;
	cuda_conv_init(c);
	c->version = cuda.api->version;
	c->os_tids = cuda.os_tids;
	c->tid_of = cuda_tid_lookup;
	c->kernel_name = cuda_demangle;
	c->recording_at = cuda_window_at;
	c->filter_kernels = cuda_keeps_kernels();
	c->domains = &agent.domains;
}

static void cuda_atexit(void);
static void cuda_after_fork(void);

/* Tracing starts on: the HAL pauses a backend that starts outside a
 * window right after its start (hal.c), and resumes it with the others. */
static void cuda_begin_tracing(void)
{
	static int hooks;
	/* inside cuInit the records come with CUDA's set-up; attached after
	 * it, only the dump brings them */
	cuda_enable(cuda_always, CUDA_COUNT(cuda_always), cuda.late);
	cuda.paused = 0;
	cuda_trace_on();
	cuda_window_mark(raw_clock_ns(CLOCK_MONOTONIC), true);
	if (!hooks++) {
		/* Registered after libcupti was loaded, so it runs before
		 * libcupti's own exit handlers (NVIDIA's samples do the same). */
		atexit(cuda_atexit);
		pthread_atfork(NULL, NULL, cuda_after_fork);
	}
}

/* NVTX alone: a run without device activity whose operators come as
 * torch's NVTX ranges. */
static int cuda_nvtx_only(void)
{
	const char *d = getenv(PROF_AGENT_DEVICE);
	return d && strcmp(d, PROF_AGENT_DEVICE_NVTX) == 0;
}

/* The backend runs: for device activity, or for NVTX alone. */
static int cuda_device_wanted(void)
{
	const char *d = getenv(PROF_AGENT_DEVICE);
	return agent.active && ((d && strcmp(d, "1") == 0) || cuda_nvtx_only());
}

static int cuda_setup(void)
{
	if (!(cuda.api = cupti_get()))
		return -ENOENT;
	if (cuda.api->version < CUPTI_MIN_VERSION) {
		agent_log("cuda: CUPTI API version %u is older than CUDA 11.0; not tracing",
			  cuda.api->version);
		return -ENOTSUP;
	}
	int rc = cuda_subscribe();
	if (rc)
		return rc;
	cuda_thread_ids();
	cuda.skip = cuda_skip_kinds();
	if (cuda_nvtx_only())   /* no device activity: NVTX's MARKER records alone */
		for (size_t i = 0; i < CUDA_COUNT(cuda_traced); i++)
			if (cuda_traced[i] != CUPTI_ACTIVITY_KIND_MARKER)
				cuda.skip |= 1ull << ((unsigned)cuda_traced[i] & 63);
	if (agent.tx_off)   /* msprof_tx false: NVTX marks and ranges are not traced */
		cuda.skip |= 1ull << ((unsigned)CUPTI_ACTIVITY_KIND_MARKER & 63);
	cuda_refresh_offset();
	CUptiResult r = CUPTI_ERROR_UNKNOWN;
	if ((rc = cuda_pool_init(cuda.api->version)) == 0 &&
	    (r = cuda.api->ActivityRegisterCallbacks(cuda_buffer_requested,
						     cuda_buffer_completed)) != CUPTI_SUCCESS)
		rc = -EIO;
	if (rc) {
		agent_log("cuda: cannot set up activity buffers: %s",
			  rc == -ENOMEM ? "out of memory" : cupti_error(cuda.api, r));
		cuda_release();
		return rc;
	}
	cuda_conv_setup();
	if (!cuda.os_tids) {
		cuda_tid_register();   /* the thread in cuInit, usually the main one */
		cuda_enable_callbacks();
	}
	cuda_begin_tracing();
	return 0;
}

static int cuda_start(void)
{
	pthread_mutex_lock(&cuda.lock);
	int rc = 0;
	if (cuda.state == CUDA_IDLE) {
		cuda.pid = (int)getpid();
		rc = cuda_setup();
		__atomic_store_n(&cuda.state, rc ? CUDA_FAILED : CUDA_RUNNING, __ATOMIC_RELEASE);
		if (!rc)
			agent_log("cuda: tracing %swith CUPTI %u (%s), threads by %s",
				  cuda_nvtx_only() ? "NVTX alone (no device activity) " : "",
				  cuda.api->version, cuda.api->path, cuda.os_tids ? "OS id" : "callbacks");
	} else if (cuda.state != CUDA_RUNNING) {
		rc = -EALREADY;
	}
	pthread_mutex_unlock(&cuda.lock);
	return rc;
}

/* ---- pause, resume, flush, stop ------------------------------------------ */

static int cuda_running(void)
{
	return cuda.state == CUDA_RUNNING && (int)getpid() == cuda.pid;
}

static void cuda_pause(void)
{
	pthread_mutex_lock(&cuda.lock);
	if (cuda_running() && !cuda.paused) {
		/* The window closed now: what starts while the kinds go off
		 * is dropped by its start time. */
		cuda_window_mark(raw_clock_ns(CLOCK_MONOTONIC), false);
		cuda_trace_off(cuda_keeps_kernels());
		cuda.paused = 1;
	}
	pthread_mutex_unlock(&cuda.lock);
}

static void cuda_resume(void)
{
	pthread_mutex_lock(&cuda.lock);
	if (cuda_running() && cuda.paused) {
		cuda_window_mark(raw_clock_ns(CLOCK_MONOTONIC), true);
		cuda_trace_on();
		cuda.paused = 0;
	}
	pthread_mutex_unlock(&cuda.lock);
}

static void cuda_flush(void)
{
	pthread_mutex_lock(&cuda.lock);
	if (cuda_running()) {
		cuda_refresh_offset();
		cuda.api->ActivityFlushAll(0);
	}
	pthread_mutex_unlock(&cuda.lock);
}

static void cuda_log_totals(void)
{
	struct cuda_pool_stats p;
	const struct cuda_conv_stats *s = &cuda.conv.stats;
	cuda_pool_stats(&p);
	agent_log("cuda: %llu buffers, %llu records: %llu written, %llu blocklisted, %llu "
		  "outside windows, %llu incomplete, %llu of other kinds; CUPTI dropped %llu; "
		  "buffer requests %llu (%llu grown, %llu extra, %llu refused)",
		  (unsigned long long)cuda.buffers, (unsigned long long)s->records,
		  (unsigned long long)s->written, (unsigned long long)s->blocked,
		  (unsigned long long)s->filtered, (unsigned long long)s->lost,
		  (unsigned long long)s->other_kinds, (unsigned long long)cuda.dropped,
		  (unsigned long long)p.requests, (unsigned long long)p.grown,
		  (unsigned long long)p.overflow, (unsigned long long)p.refused);
	if (s->waits_unknown || s->events_evicted)
		agent_log("cuda: %llu event syncs whose event record was not seen (their "
			  "wait_on_* args say -1); %llu CUDA events forgotten for room",
			  (unsigned long long)s->waits_unknown,
			  (unsigned long long)s->events_evicted);
	uint64_t hooked = cuda_nvtx_hook_ops();
	if (cuda.nvtx_ops)
		agent_log(s->torch_ops + hooked ?
			  "cuda: %llu operators from torch's NVTX ranges (%llu at the NVTX call, "
			  "%llu through CUPTI)" :
			  "notice: cuda: operators were collected through torch's NVTX ranges "
			  "and none reached prof (%llu, %llu, %llu): run with PROF_OPS_NVTX=0 "
			  "(torch's profiler), and tell us the torch and CUDA versions",
			  (unsigned long long)(s->torch_ops + hooked), (unsigned long long)hooked,
			  (unsigned long long)s->torch_ops);
	for (unsigned i = 0; i < CUDA_OVERHEAD_SLOTS; i++)
		if (s->overhead_ns[i])
			agent_log("cuda: CUPTI overhead, %s: %.3f ms", cuda_overhead_name(i),
				  (double)s->overhead_ns[i] / 1e6);
}

static void cuda_stop(void)
{
	pthread_mutex_lock(&cuda.lock);
	if (cuda_running()) {
		cuda_trace_off(0);
		for (size_t i = 0; i < CUDA_COUNT(cuda_always); i++)
			cuda.api->ActivityDisable(cuda_always[i]);
		/* Forced: also buffers with records still in flight. It does not
		 * wait for the GPU: work still running at exit is not recorded. */
		cuda.api->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		__atomic_store_n(&cuda.state, CUDA_STOPPED, __ATOMIC_RELEASE);
		cuda_release();
		dev_sink_lock();   /* the converter's state is the sink lock's */
		cuda_log_totals();
		cuda_conv_free(&cuda.conv);
		cuda_demangle_free();
		dev_sink_unlock();
	}
	pthread_mutex_unlock(&cuda.lock);
}

static void cuda_atexit(void)
{
	cuda_stop();
}

/* In a fork child: CUPTI's threads did not come along and the parent's
 * buffers are the parent's. Forget, call nothing. The lock may have been
 * held by a thread that does not exist here. */
static void cuda_after_fork(void)
{
	pthread_mutex_init(&cuda.lock, NULL);
	if (cuda.state == CUDA_RUNNING)
		__atomic_store_n(&cuda.state, CUDA_FORGOTTEN, __ATOMIC_RELEASE);
}

static int cuda_probe(void)
{
	return __atomic_load_n(&cuda.injected, __ATOMIC_ACQUIRE);
}

const struct dev_backend dev_backend_cuda = {
	.name = "cuda",
	.probe = cuda_probe,
	.start = cuda_start,
	.pause = cuda_pause,
	.resume = cuda_resume,
	.flush = cuda_flush,
	.stop = cuda_stop,
};

/* ---- entry points ------------------------------------------------------- */

/* Device activity is not recorded (--activities CPU), yet CUPTI is held
 * all the same (cuda_subscribe says why): the operators prof collects
 * through torch's profiler stay free of CUDA runtime calls, and cost no
 * CUPTI tracing. */
static void cuda_hold(void)
{
	pthread_mutex_lock(&cuda.lock);
	if (agent.active && cuda.state == CUDA_IDLE && !cuda.subscribed && (cuda.api = cupti_get()) &&
	    cuda_subscribe() == 0)
		agent_log("cuda: device activity is not recorded; CUPTI held so that torch's "
			  "profiler records CPU operators only");
	pthread_mutex_unlock(&cuda.lock);
}

/* Whether prof holds CUPTI now: Kineto then has none (it finds CUPTI
 * taken at its first start and stays CPU-only), so torch's profiler hands
 * prof's Python hooks no kernels or copies, and they need not ask each of
 * its events for a device (a pybind call an event, at every flush). */
__attribute__((visibility("default"))) int prof_fw_cupti_held(void)
{
	return __atomic_load_n(&cuda.subscribed, __ATOMIC_ACQUIRE);
}

/* Why torch's NVTX ranges of operators would not reach prof in this
 * process (NULL: they would). A reason the run's own settings give
 * starts with NVTX_SETTING (ops.py's SETTING): the hooks then go the
 * usual way without a word, where another (another NVTX tool, an old
 * CUPTI) costs the user the cheaper way and is said at the end of the
 * run. */
#define NVTX_SETTING "setting: "
static const char *cuda_nvtx_ops_blocked(void)
{
	if (!cuda_running())
		return "CUDA is not traced in this process yet (device activity off, or CUDA "
		       "not initialised)";
	if (agent.tx_off)
		return NVTX_SETTING "NVTX is not traced (msprof_tx false)";
	if ((cuda.skip & (1ull << ((unsigned)CUPTI_ACTIVITY_KIND_MARKER & 63))) &&
	    cuda_nvtx_via_cupti())
		return NVTX_SETTING "NVTX is not traced (PROF_CUDA_SKIP_KINDS)";
	if (!domain_filter_keeps(&agent.domains, NULL))
		return NVTX_SETTING "the default NVTX domain is left out "
				    "(mstx_domain_include/exclude)";
	const char *inj = getenv("NVTX_INJECTION64_PATH"), *slash = inj ? strrchr(inj, '/') : NULL;
	/* prof's launcher (and `prof session`, for a script's prof.profile)
	 * sets it: unset, the program's environment lost it */
	if (!inj || !*inj)
		return "NVTX_INJECTION64_PATH is not set in this process (prof sets it for the "
		       "program: did the program clear its environment?)";
	if (strcmp(slash ? slash + 1 : inj, SELFPATH_AGENT_NAME) != 0)
		return "NVTX_INJECTION64_PATH names another tool";
	if (!cuda.api->InitializeInjectionNvtx2 || cuda.api->version == CUPTI_VERSION_13_0_0)
		return "this CUPTI does not record NVTX";
	return NULL;
}

/* The Python hooks are about to collect operators through torch's NVTX
 * ranges (PROF_OPS_NVTX): NULL when this process records them (the
 * backend then expects them, and says at exit if none came), else why
 * not, for the hooks to say before they go the usual way. */
__attribute__((visibility("default"))) const char *prof_fw_nvtx_ops_begin(void)
{
	pthread_mutex_lock(&cuda.lock);
	const char *why = cuda_nvtx_ops_blocked();
	if (!why)
		cuda.nvtx_ops = 1;
	pthread_mutex_unlock(&cuda.lock);
	return why;
}

/* Operators the NVTX hook has written in this process, for the Python
 * hooks' check, a step after they switched torch's NVTX observer on, that
 * its ranges do reach prof (a torch whose ranges the hook does not know,
 * an NVTX instance that began before prof was its tool); -1 when they
 * come as CUPTI's records instead (PROF_NVTX_VIA_CUPTI), which arrive
 * later. */
__attribute__((visibility("default"))) long long prof_fw_nvtx_ops_seen(void)
{
	return cuda_nvtx_via_cupti() ? -1 : (long long)cuda_nvtx_hook_ops();
}

/* CUDA's injection entry (CUDA_INJECTION64_PATH), called once inside cuInit.
 * Non-zero means success; prof returns 1 even when it records nothing, so
 * the program never notices. */
__attribute__((visibility("default"))) int InitializeInjection(void)
{
	if (__atomic_exchange_n(&cuda.injected, 1, __ATOMIC_ACQ_REL))
		return 1;
	if (cuda_device_wanted())
		hal_start_backend("cuda");
	else
		cuda_hold();
	return 1;
}

/* The same, for a CUDA set up before the agent came (prof.profile in a
 * script that used the GPU first: prof/_runtime.py calls it, as Kineto
 * attaches CUPTI at run time). */
__attribute__((visibility("default"))) int prof_cuda_attach(void)
{
	cuda.late = 1;   /* read by this thread's start, under InitializeInjection */
	return InitializeInjection();
}

/* NVTX's injection entries (NVTX_INJECTION64_PATH), once per NVTX instance
 * (each library that includes the NVTX headers has one): handed to
 * libcupti, which records NVTX as MARKER activity; then, on NVTX 2 and 3,
 * torch's operator ranges are taken before CUPTI sees them
 * (backend_nvtx.c). 0 makes that instance's NVTX calls no-ops. */
static int cuda_nvtx_forward(cupti_nvtx_init_fn (*pick)(const struct cupti_api *), void *arg)
{
	if (!cuda_device_wanted())
		return 0;
	const struct cupti_api *a = cupti_get();
	cupti_nvtx_init_fn f = a ? pick(a) : NULL;
	if (!f)
		return 0;
	if (a->version == CUPTI_VERSION_13_0_0) {
		/* NVIDIA/NVTX#125: CUPTI 13.0.0 crashes in nvtxNameOsThreadA. */
		static int said;
		if (!said++)
			agent_log("cuda: NVTX not recorded: CUPTI 13.0.0 crashes on it; use 13.0 U1+");
		return 0;
	}
	return f(arg);
}

static cupti_nvtx_init_fn cuda_nvtx2(const struct cupti_api *a) { return a->InitializeInjectionNvtx2; }
static cupti_nvtx_init_fn cuda_nvtx1(const struct cupti_api *a) { return a->InitializeInjectionNvtx; }
static cupti_nvtx_init_fn cuda_nvtx_ext(const struct cupti_api *a)
{
	return a->InitializeInjectionNvtxExtension;
}

static int cuda_nvtx2_forward(void *get_export_table)
{
	return cuda_nvtx_forward(cuda_nvtx2, get_export_table);
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(void *get_export_table)
{
	const char *why;
	int rc = cuda_nvtx_init(get_export_table, cuda_nvtx2_forward, &why);
	static int said;
	if (why && !said++)
		agent_log("cuda: torch's operator ranges, if any, go through CUPTI: %s", why);
	return rc;
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx(void *get_export_table)
{
	return cuda_nvtx_forward(cuda_nvtx1, get_export_table);
}

__attribute__((visibility("default"))) int InitializeInjectionNvtxExtension(void *module_info)
{
	return cuda_nvtx_forward(cuda_nvtx_ext, module_info);
}
