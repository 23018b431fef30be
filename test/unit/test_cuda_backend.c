/*
 * The CUDA backend end to end on a stand-in libcupti (unit/cuda/fake_cupti.c)
 * and a recording sink: the injection entry starts it through the HAL, it
 * finds the mapped libcupti, subscribes and holds the subscription, has
 * CUPTI name threads by OS id (or, where it cannot, learns them from API
 * callbacks), maps CUPTI's clock by offset, enables its kinds with the
 * noise switched off, holds CUPTI without tracing when device activity is
 * off, converts delivered buffers, counts CUPTI's drops with the
 * sink lock held, follows pause/resume, stops with a forced flush, hands
 * NVTX to CUPTI, and steps aside when CUPTI already has a subscriber.
 * What it cannot show: that a real CUPTI behaves like the stand-in.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cupti.h>

#include "agent/agent.h"
#include "common/agent_env.h"
#include "agent/device/cuda/backend_cbid.h"
#include "agent/device/dev_sink.h"
#include "agent/device/hal.h"
#include "raw/raw_clock.h"
#include "unit/unit.h"

#ifndef PROF_TEST_FAKE_CUPTI
#error "the build passes the stand-in libcupti's path"
#endif

extern const struct dev_backend dev_backend_cuda;
int InitializeInjection(void);
int prof_cuda_attach(void);
int InitializeInjectionNvtx2(void *);
const char *prof_fw_nvtx_ops_begin(void);
long long prof_fw_nvtx_ops_seen(void);

/* ---- what backend.c needs from the agent, recorded ---- */

struct agent agent;
static char logbuf[16384];
static int start_rc = 1;   /* 1: start never called */

void agent_log(const char *fmt, ...)
{
	size_t n = strlen(logbuf);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(logbuf + n, sizeof logbuf - n - 1, fmt, ap);
	va_end(ap);
	strncat(logbuf, "\n", sizeof logbuf - strlen(logbuf) - 1);
}

int hal_start_backend(const char *name)
{
	start_rc = strcmp(name, "cuda") == 0 ? dev_backend_cuda.start() : -ENODEV;
	return start_rc;
}

#define MAXREC 64
static pthread_mutex_t sink_mu = PTHREAD_MUTEX_INITIALIZER;
static int sink_held, lost_unlocked;
static struct { int n; struct raw_dev_activity v[MAXREC]; char name[MAXREC][64]; uint64_t ts[MAXREC]; } acts;
static struct { int n; struct raw_dev_api v[MAXREC]; char name[MAXREC][64]; } apis;
static struct { int n; struct raw_dev_marker v[MAXREC]; char name[MAXREC][64]; } marks;
static struct { int n; struct raw_dev_collective v[MAXREC]; } colls;
static struct { int n; struct raw_op v[MAXREC]; char name[MAXREC][64], shapes[MAXREC][64]; } ops;
static struct { int n; struct raw_dev_info v[MAXREC]; char uuid[MAXREC][64]; } infos;
static uint64_t lost_total;

void dev_sink_lock(void) { pthread_mutex_lock(&sink_mu); sink_held = 1; }
void dev_sink_unlock(void) { sink_held = 0; pthread_mutex_unlock(&sink_mu); }
int dev_sink_recording(void) { return 1; }
void dev_sink_finish(void) {}
void dev_sink_forget(void) {}
int dev_sink_memory(uint64_t ts, const struct raw_dev_memory *m) { return 0; }

static void keep(char *dst, const char *s)
{
	snprintf(dst, 64, "%s", s ? s : "");
}

int dev_sink_activity(uint64_t ts, const struct raw_dev_activity *a, const char *name)
{
	if (acts.n < MAXREC) {
		acts.ts[acts.n] = ts;
		acts.v[acts.n] = *a;
		keep(acts.name[acts.n++], name);
	}
	return 0;
}

int dev_sink_api(uint64_t ts, const struct raw_dev_api *a, const char *name)
{
	if (apis.n < MAXREC) {
		apis.v[apis.n] = *a;
		keep(apis.name[apis.n++], name);
	}
	return 0;
}

int dev_sink_marker(uint64_t ts, const struct raw_dev_marker *m, const char *name,
		    const char *domain)
{
	if (marks.n < MAXREC) {
		marks.v[marks.n] = *m;
		keep(marks.name[marks.n++], name);
	}
	return 0;
}

int dev_sink_op(uint64_t ts, const struct raw_op *op, const char *name, const char *shapes)
{
	if (ops.n < MAXREC) {
		ops.v[ops.n] = *op;
		keep(ops.name[ops.n], name);
		keep(ops.shapes[ops.n++], shapes);
	}
	return 0;
}

int dev_sink_collective(uint64_t ts, const struct raw_dev_collective *c, const char *name,
			const char *group, const char *ranks)
{
	if (colls.n < MAXREC)
		colls.v[colls.n++] = *c;
	return 0;
}

int dev_sink_info(const struct raw_dev_info *i, const char *name, const char *uuid)
{
	if (infos.n < MAXREC) {
		infos.v[infos.n] = *i;
		keep(infos.uuid[infos.n++], uuid);
	}
	return 0;
}

void dev_sink_lost(uint64_t n)
{
	lost_unlocked += !sink_held;   /* the sink's writer is not thread-safe */
	lost_total += n;
}

/* Operators the NVTX hook began on the calling thread (agent_tx.c's, in
 * the agent), and how many it ended. */
static struct { int n, ended; char name[MAXREC][64], shapes[MAXREC][64]; int64_t seq[MAXREC]; } hook;

int agent_op_begin(const char *name, size_t name_len, const char *shapes, size_t shapes_len,
		   int64_t seq)
{
	if (hook.n == MAXREC)
		return 0;
	snprintf(hook.name[hook.n], 64, "%.*s", (int)name_len, name);
	snprintf(hook.shapes[hook.n], 64, "%.*s", (int)shapes_len, shapes);
	hook.seq[hook.n++] = seq;
	return 1;
}

void agent_op_end(void) { hook.ended++; }

/* ---- the stand-in's controls ---- */

static struct {
	void (*push)(const void *, size_t);
	void (*push_any)(const void *, size_t);
	void (*api_call)(CUpti_CallbackDomain, CUpti_CallbackId);
	void (*drop)(size_t);
	int (*enabled)(CUpti_ActivityKind);
	void *(*nvtx_arg)(void);
	void (*nvtx_calls)(int[2]);
	void (*counts)(int[8]);
	int (*tid_type)(void);
	CUptiResult (*timestamp)(uint64_t *);
} fk;

/* POSIX dlsym: a data pointer holding a function's address. */
static void sym(void *h, const char *name, void *slot)
{
	void *f = dlsym(h, name);
	CHECK(f != NULL);
	memcpy(slot, &f, sizeof f);
}

static void load_fake(void)
{
	/* Mapped before CUDA "initialises", as PyTorch maps its libcupti. */
	void *h = dlopen(PROF_TEST_FAKE_CUPTI, RTLD_NOW | RTLD_GLOBAL);
	CHECK(h != NULL);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		exit(1);
	}
	sym(h, "fake_cupti_push", &fk.push);
	sym(h, "fake_cupti_push_any", &fk.push_any);
	sym(h, "fake_cupti_api_call", &fk.api_call);
	sym(h, "fake_cupti_drop", &fk.drop);
	sym(h, "fake_cupti_enabled", &fk.enabled);
	sym(h, "fake_cupti_nvtx_arg", &fk.nvtx_arg);
	sym(h, "fake_cupti_nvtx_calls", &fk.nvtx_calls);
	sym(h, "fake_cupti_counts", &fk.counts);
	sym(h, "fake_cupti_tid_type", &fk.tid_type);
	sym(h, "cuptiGetTimestamp", &fk.timestamp);
	/* The C++ runtime a PyTorch process has: kernel names get demangled. */
	dlopen("libstdc++.so.6", RTLD_NOW | RTLD_GLOBAL);
}

static void setup_agent(void)
{
	agent.active = 1;
	agent.default_kept = 1;
	setenv(PROF_AGENT_DEVICE, "1", 1);
	unsetenv("FAKE_CUPTI_BUSY");
	unsetenv("FAKE_CUPTI_VERSION");
	unsetenv("FAKE_CUPTI_NO_TID_TYPE");
	agent.rank = -1;   /* as in a torch.multiprocessing.spawn rank at start */
}

/* ---- records ---- */

/* On CUPTI's clock, as CUPTI stamps records (not CLOCK_MONOTONIC). */
static uint64_t now(void)
{
	uint64_t t = 0;
	fk.timestamp(&t);
	return t;
}

static void push_kernel(const char *name, uint32_t corr)
{
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof k);
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = now();
	k.end = k.start + 1000;
	k.gridX = k.gridY = k.gridZ = 1;
	k.blockX = 128, k.blockY = k.blockZ = 1;
	k.correlationId = corr;
	k.streamId = 7;
	k.name = name;
	fk.push(&k, sizeof k);
}

static void push_api(CUpti_ActivityKind kind, uint32_t cbid, uint32_t tid, uint32_t corr)
{
	CUpti_ActivityAPI a;
	memset(&a, 0, sizeof a);
	a.kind = kind;
	a.cbid = cbid;
	a.start = now();
	a.end = a.start + 500;
	a.threadId = tid;
	a.correlationId = corr;
	fk.push(&a, sizeof a);
}

static void push_marker(uint32_t flags, uint32_t id, const char *name, uint32_t tid)
{
	CUpti_ActivityMarker2 m;
	memset(&m, 0, sizeof m);
	m.kind = CUPTI_ACTIVITY_KIND_MARKER;
	m.flags = (CUpti_ActivityFlag)flags;
	m.timestamp = now();
	m.id = id;
	m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	m.objectId.pt.threadId = tid;
	m.name = name;
	fk.push(&m, sizeof m);
}

static void push_device(void)
{
	CUpti_ActivityDevice5 d;
	memset(&d, 0, sizeof d);
	d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d.id = 0;
	d.numMultiprocessors = 132;
	d.name = "Fake GPU";
	d.uuid.bytes[15] = 1;
	fk.push(&d, sizeof d);
}

static void push_memcpy(void)
{
	CUpti_ActivityMemcpy6 m;
	memset(&m, 0, sizeof m);
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m.bytes = 4096;
	m.start = now();
	m.end = m.start + 100;
	fk.push(&m, sizeof m);
}

/* A program thread making one traced CUDA call; CUPTI names it by OS tid
 * when the backend asked for that, else by pthread_self()'s low bits. */
static uint32_t worker_cupti_tid;
static int worker_tid;

static void *worker(void *arg)
{
	worker_tid = gettid();
	worker_cupti_tid = fk.tid_type() == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM
		? (uint32_t)worker_tid : (uint32_t)(uintptr_t)pthread_self();
	fk.api_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
	return NULL;
}

/* ---- tests ---- */

static void test_start(void)
{
	int c[8];
	CHECK(InitializeInjection() == 1);
	CHECK(start_rc == 0);
	CHECK(InitializeInjection() == 1);   /* once per process */
	CHECK(dev_backend_cuda.probe() == 1);
	fk.counts(c);
	/* subscribed and held (Kineto must find CUPTI taken); no timestamp
	 * callback (one call per timestamp on the program's thread); threads
	 * by OS id, so no callbacks either */
	CHECK(c[0] == 1 && c[1] == 0 && c[2] == 0);
	CHECK(fk.tid_type() == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	CHECK(c[3] == (int)cuda_runtime_blocklist_len && c[4] == (int)cuda_driver_blocklist_len);
	CHECK(c[5] == 0);
	CHECK_CONTAINS(logbuf, "threads by OS id");
	CHECK(fk.enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	CHECK(fk.enabled(CUPTI_ACTIVITY_KIND_RUNTIME) && fk.enabled(CUPTI_ACTIVITY_KIND_DRIVER));
	CHECK(fk.enabled(CUPTI_ACTIVITY_KIND_MEMCPY) && fk.enabled(CUPTI_ACTIVITY_KIND_MEMSET));
	CHECK(fk.enabled(CUPTI_ACTIVITY_KIND_MARKER) && fk.enabled(CUPTI_ACTIVITY_KIND_MEMORY2));
	CHECK(fk.enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION));
	CHECK(fk.enabled(CUPTI_ACTIVITY_KIND_DEVICE) && fk.enabled(CUPTI_ACTIVITY_KIND_CONTEXT));
	CHECK(!fk.enabled(CUPTI_ACTIVITY_KIND_KERNEL));   /* it serialises kernels */
	CHECK_CONTAINS(logbuf, "libcupti-fake.so");
	CHECK_CONTAINS(logbuf, "already mapped");
}

static void test_delivery(void)
{
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	push_device();
	push_kernel("_Z6squarePfi", 10);
	push_kernel("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 11);
	push_api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
		 worker_cupti_tid, 10);
	push_api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
		 worker_cupti_tid, 12);
	push_marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 5, "step", worker_cupti_tid);
	push_marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 5, NULL, worker_cupti_tid);
	push_marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 8, "aten::mm, seq = 3, op_id = 9, sizes = [[2, 2]]",
		    worker_cupti_tid);
	push_marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 8, NULL, worker_cupti_tid);
	fk.drop(3);
	agent.rank = 1;    /* init_process_group named it, after CUDA's set-up */
	dev_backend_cuda.flush();
	CHECK(infos.n == 1 && infos.v[0].sm_count == 132);
	CHECK_STR(infos.uuid[0], "GPU-00000000-0000-0000-0000-000000000001");
	CHECK(acts.n == 1);   /* the NCCL kernel is a collective only */
	CHECK_STR(acts.name[0], "square(float*, int)");
	/* CUPTI's clock mapped onto CLOCK_MONOTONIC by offset */
	uint64_t mono = raw_clock_ns(CLOCK_MONOTONIC);
	CHECK(acts.ts[0] <= mono && mono - acts.ts[0] < 1000000000ull);
	CHECK(acts.v[0].correlation == 10 && acts.v[0].block[0] == 128 && acts.v[0].stream == 7);
	CHECK(colls.n == 1 && colls.v[0].op == RAW_COLL_ALLGATHER && colls.v[0].rank == 1);
	CHECK(apis.n == 1);   /* cudaGetDevice is noise */
	CHECK_STR(apis.name[0], "cudaLaunchKernel");
	CHECK(apis.v[0].tid == worker_tid && apis.v[0].correlation == 10);
	CHECK(marks.n == 1 && marks.v[0].tid == worker_tid && marks.v[0].flags == RAW_MARKER_RANGE);
	CHECK_STR(marks.name[0], "step");
	/* torch's operator range: an operator on the same thread */
	CHECK(ops.n == 1 && ops.v[0].tid == worker_tid && ops.v[0].seq == 3);
	CHECK(ops.v[0].flags == RAW_OP_NVTX);
	CHECK_STR(ops.name[0], "aten::mm");
	CHECK_STR(ops.shapes[0], "[[2, 2]]");
	CHECK(lost_total == 3 && lost_unlocked == 0);
	/* mstx_domain_exclude ["default"]: the agent's filter reaches NVTX
	 * (these markers name no domain: CUPTI's default) */
	CHECK(domain_filter_init(&agent.domains, NULL, "default") == 0);
	push_marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 6, "dropped", worker_cupti_tid);
	push_marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 6, NULL, worker_cupti_tid);
	push_marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 7, "dropped too", worker_cupti_tid);
	dev_backend_cuda.flush();
	CHECK(marks.n == 1);
	domain_filter_init(&agent.domains, NULL, NULL);
}

static void test_pause_resume(void)
{
	int c[8];
	push_memcpy();   /* launched inside the window, delivered after it */
	dev_backend_cuda.pause();
	CHECK(!fk.enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	CHECK(!fk.enabled(CUPTI_ACTIVITY_KIND_RUNTIME) && !fk.enabled(CUPTI_ACTIVITY_KIND_MARKER));
	CHECK(fk.enabled(CUPTI_ACTIVITY_KIND_DEVICE));
	/* A call that slipped in as the switch came: dropped by its start;
	 * the copy launched before it: kept. */
	CUpti_ActivityAPI late;
	memset(&late, 0, sizeof late);
	late.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	late.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020;
	late.start = now(), late.end = late.start + 100, late.correlationId = 20;
	fk.push_any(&late, sizeof late);
	push_kernel("not generated while paused", 40);
	dev_backend_cuda.flush();
	CHECK(apis.n == 1 && acts.n == 2 && acts.v[1].kind == RAW_DEV_MEMCPY);
	dev_backend_cuda.resume();
	CHECK(fk.enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) &&
	      fk.enabled(CUPTI_ACTIVITY_KIND_RUNTIME));
	fk.counts(c);   /* enabling RUNTIME resets per-API choices: applied again */
	CHECK(c[3] == 2 * (int)cuda_runtime_blocklist_len);
	push_api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 0x77, 21);
	dev_backend_cuda.flush();
	CHECK(apis.n == 2);
	CHECK_STR(apis.name[1], "cuLaunchKernel");
	CHECK(apis.v[1].tid == 0x77 && apis.v[1].domain == RAW_API_DRIVER);   /* an OS tid */
}

/* ---- an NVTX instance, as nvtx3's headers build one into a library ---- */

typedef void (*nvtx_fn)(void);
static nvtx_fn nvtx_core[16];       /* the instance's function pointers */
static nvtx_fn *nvtx_slots[16];     /* its table: where each one is */

static int nvtx_module_table(int module, nvtx_fn ***table, unsigned *size)
{
	if (module != 1)
		return 0;
	for (int i = 0; i < 16; i++)
		nvtx_slots[i] = &nvtx_core[i];
	*table = nvtx_slots;
	*size = 15;
	return 1;
}

static const struct { size_t size; int (*f)(int, nvtx_fn ***, unsigned *); } nvtx_callbacks = {
	sizeof nvtx_callbacks, nvtx_module_table
};

static const void *nvtx_export_table(uint32_t id)
{
	return id == 1 ? &nvtx_callbacks : NULL;
}

/* What a slot holds before a tool sets it: NVTX's initialising function,
 * which would initialise (done already) and call the slot again. */
static int nvtx_init_calls;
static int nvtx_init_push_w(const void *msg) { nvtx_init_calls++; return 0; }

static int nvtx_push_a(const char *msg) { return ((int (*)(const char *))nvtx_core[9])(msg); }
static int nvtx_push_w(void) { return ((int (*)(const void *))nvtx_core[10])(L"w"); }
static int nvtx_push_ex(void) { return ((int (*)(const void *))nvtx_core[8])(NULL); }
static int nvtx_pop(void) { return ((int (*)(void))nvtx_core[11])(); }

static void nvtx_calls(int *pushes, int *pops)
{
	int c[2];
	fk.nvtx_calls(c);
	*pushes = c[0];
	*pops = c[1];
}

/* NVTX reaches CUPTI, but torch's operator ranges stop at prof's hook:
 * operators on their own thread, begun and ended; the program's own
 * ranges, nested in them or around them, go on to CUPTI, each pop to the
 * push it closes. */
static void test_nvtx(void)
{
	int pushes, pops, had = marks.n;
	long long seen = prof_fw_nvtx_ops_seen();
	nvtx_core[10] = (nvtx_fn)nvtx_init_push_w;
	CHECK(InitializeInjectionNvtx2((void *)nvtx_export_table) == 1);
	CHECK(fk.nvtx_arg() == (void *)nvtx_export_table);
	/* a slot CUPTI left: a no-op, as NVTX makes it, not its init again */
	nvtx_push_w();
	nvtx_pop();
	CHECK(nvtx_init_calls == 0);
	nvtx_push_a("forward");
	nvtx_push_a("aten::linear, seq = 12, op_id = 40");
	nvtx_push_a("aten::addmm, seq = 13, op_id = 41, sizes = [[8], [4, 8]]");
	nvtx_push_ex();                      /* a library's range inside the op */
	nvtx_pop();
	nvtx_pop();
	nvtx_pop();
	nvtx_push_a("enumerate(DataLoader)#_BaseDataLoaderIter.__next__, op_id = 42");
	nvtx_pop();
	nvtx_pop();                          /* "forward" */
	nvtx_pop();                          /* unbalanced: CUPTI's to answer */
	nvtx_calls(&pushes, &pops);
	CHECK(pushes == 2 && pops == 3);
	CHECK(hook.n == 2 && hook.ended == 2);
	CHECK_STR(hook.name[0], "aten::linear");
	CHECK(hook.seq[0] == 12 && hook.shapes[0][0] == '\0');
	CHECK_STR(hook.name[1], "aten::addmm");
	CHECK_STR(hook.shapes[1], "[[8], [4, 8]]");
	CHECK(hook.seq[1] == 13);
	CHECK(prof_fw_nvtx_ops_seen() == seen + 2);   /* what the hooks' check reads */
	/* the stand-in's records of the two ranges it got */
	dev_backend_cuda.flush();
	CHECK(marks.n == had + 2);
	CHECK_STR(marks.name[had], "(attributes)");
	CHECK_STR(marks.name[had + 1], "forward");
	unsetenv(PROF_AGENT_DEVICE);   /* device activity off: NVTX stays a no-op */
	CHECK(InitializeInjectionNvtx2(NULL) == 0);
	CHECK(fk.nvtx_arg() == (void *)nvtx_export_table);
	setenv(PROF_AGENT_DEVICE, "1", 1);
}

/* PROF_NVTX_VIA_CUPTI=1: every range goes to CUPTI, torch's included, and
 * the converter makes its operators (the way before the hook). */
static void child_nvtx_via_cupti(void)
{
	int pushes, pops;
	setenv("PROF_NVTX_VIA_CUPTI", "1", 1);
	load_fake();
	CHECK(InitializeInjection() == 1 && start_rc == 0);
	CHECK(InitializeInjectionNvtx2((void *)nvtx_export_table) == 1);
	CHECK_CONTAINS(logbuf, "go through CUPTI: PROF_NVTX_VIA_CUPTI=1");
	nvtx_push_a("aten::mm, seq = 3, op_id = 9");
	nvtx_pop();
	nvtx_calls(&pushes, &pops);
	CHECK(pushes == 1 && pops == 1 && hook.n == 0);
	CHECK(prof_fw_nvtx_ops_seen() == -1);   /* CUPTI's records come later: not counted */
	dev_backend_cuda.flush();
	CHECK(ops.n == 1);
	CHECK_STR(ops.name[0], "aten::mm");
	dev_backend_cuda.stop();
}

/* Whether operators can come as torch's NVTX ranges here, and why not. */
static void test_nvtx_ops_begin(void)
{
	/* the run's settings' reasons begin "setting: " (the hooks then say
	 * nothing); the others the user hears */
	unsetenv("NVTX_INJECTION64_PATH");
	CHECK_CONTAINS(prof_fw_nvtx_ops_begin(), "NVTX_INJECTION64_PATH is not set in this process");
	setenv("NVTX_INJECTION64_PATH", "/opt/nsys/libToolsInjection64.so", 1);
	CHECK_STR(prof_fw_nvtx_ops_begin(), "NVTX_INJECTION64_PATH names another tool");
	setenv("NVTX_INJECTION64_PATH", "/usr/lib/prof/libprof_agent.so", 1);
	CHECK(domain_filter_init(&agent.domains, "mine", NULL) == 0);
	CHECK_CONTAINS(prof_fw_nvtx_ops_begin(), "setting: the default NVTX domain is left out");
	domain_filter_init(&agent.domains, NULL, NULL);
	CHECK(prof_fw_nvtx_ops_begin() == NULL);
}

static void test_stop(void)
{
	int c[8];
	push_kernel("late", 30);
	dev_backend_cuda.stop();
	fk.counts(c);
	CHECK(c[1] == 1);                                 /* unsubscribed */
	CHECK(fk.tid_type() == CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT);   /* as found */
	CHECK(c[7] == CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);  /* the last flush was forced */
	CHECK(acts.n == 3);                               /* ... and delivered */
	CHECK(!fk.enabled(CUPTI_ACTIVITY_KIND_RUNTIME) && !fk.enabled(CUPTI_ACTIVITY_KIND_DEVICE));
	int flushes = c[6];
	dev_backend_cuda.stop();   /* again, as the HAL does at exit after atexit */
	dev_backend_cuda.flush();
	dev_backend_cuda.pause();
	fk.counts(c);
	CHECK(c[6] == flushes && c[1] == 1);
	CHECK(dev_backend_cuda.start() == -EALREADY);
	CHECK_CONTAINS(logbuf, "records: 11 written");   /* with the stand-in's two NVTX ranges */
	CHECK_CONTAINS(logbuf, "cuda: 3 operators from torch's NVTX ranges (2 at the NVTX call, "
				"1 through CUPTI)");
	CHECK(prof_fw_nvtx_ops_begin() != NULL);   /* stopped */
}

/* Runs `fn` in a fresh child (the backend and CUPTI are one-shot per
 * process); true when all its checks passed. */
static int in_child(void (*fn)(void))
{
	fflush(NULL);
	pid_t p = fork();
	if (p == 0) {
		fn();
		fflush(NULL);
		_exit(unit_failed ? 1 : 0);
	}
	int st = 0;
	waitpid(p, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void child_busy(void)
{
	int c[8];
	setenv("FAKE_CUPTI_BUSY", "1", 1);
	load_fake();
	CHECK(InitializeInjection() == 1);   /* the program never notices */
	CHECK(start_rc == -EBUSY);
	CHECK_CONTAINS(logbuf, "already has a subscriber (Nsight Systems)");
	fk.counts(c);
	CHECK(c[0] == 0 && c[5] == 0);
	CHECK(!fk.enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	dev_backend_cuda.flush();   /* harmless after a failed start */
	dev_backend_cuda.stop();
	fk.counts(c);
	CHECK(c[6] == 0);
}

static void child_13_0_0(void)
{
	setenv("FAKE_CUPTI_VERSION", "130000", 1);
	load_fake();
	CHECK(InitializeInjection() == 1 && start_rc == 0);
	dev_backend_cuda.pause();
	CHECK(fk.enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));   /* may deadlock if off */
	CHECK(!fk.enabled(CUPTI_ACTIVITY_KIND_RUNTIME));
	CHECK(InitializeInjectionNvtx2(NULL) == 0);   /* 13.0.0 crashes on NVTX */
	dev_backend_cuda.stop();
}

/* A CUPTI that cannot name threads by OS id: callbacks on the launch,
 * copy and sync APIs teach each thread's tid; a thread never seen there
 * keeps CUPTI's id, negated. */
static void child_pthread_ids(void)
{
	int c[8];
	setenv("FAKE_CUPTI_NO_TID_TYPE", "1", 1);
	load_fake();
	CHECK(InitializeInjection() == 1 && start_rc == 0);
	fk.counts(c);
	CHECK(c[5] == (int)(cuda_runtime_tid_cbids_len + cuda_driver_tid_cbids_len));
	CHECK_CONTAINS(logbuf, "threads by callbacks");
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	CHECK(worker_cupti_tid == (uint32_t)(uintptr_t)t);
	push_api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
		 worker_cupti_tid, 10);
	push_api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 0x77, 11);
	dev_backend_cuda.flush();
	CHECK(apis.n == 2 && apis.v[0].tid == worker_tid && apis.v[1].tid == -0x77);
	dev_backend_cuda.stop();
}

/* Device activity off (--activities CPU): CUPTI is held, nothing traced. */
static void child_hold(void)
{
	int c[8];
	unsetenv(PROF_AGENT_DEVICE);
	load_fake();
	CHECK(InitializeInjection() == 1);
	CHECK(start_rc == 1);   /* the backend never started */
	fk.counts(c);
	CHECK(c[0] == 1 && c[1] == 0 && c[5] == 0);
	CHECK(!fk.enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) &&
	      !fk.enabled(CUPTI_ACTIVITY_KIND_RUNTIME));
	CHECK_CONTAINS(logbuf, "CUPTI held so that torch's profiler records CPU operators only");
	CHECK_CONTAINS(prof_fw_nvtx_ops_begin(), "CUDA is not traced in this process");
}

/* Attached after CUDA set up its device (prof.profile in a script that
 * used the GPU first): the device's record, made before anyone listened,
 * comes through the dump. Inside cuInit (test_start) there is no dump:
 * the records come with the set-up. */
static void child_late(void)
{
	setenv("FAKE_CUPTI_DEVICE_MADE", "1", 1);
	load_fake();
	CHECK(prof_cuda_attach() == 1 && start_rc == 0);
	CHECK(prof_cuda_attach() == 1);   /* once, as the injection entry */
	dev_backend_cuda.flush();
	CHECK(infos.n == 1 && infos.v[0].sm_count == 132);
	CHECK_STR(infos.uuid[0], "GPU-00000000-0000-0000-0000-000000000001");
	dev_backend_cuda.stop();
}

static void child_old(void)
{
	setenv("FAKE_CUPTI_VERSION", "12", 1);
	load_fake();
	CHECK(InitializeInjection() == 1 && start_rc == -ENOTSUP);
}

int main(void)
{
	setup_agent();
	CHECK(in_child(child_busy));
	CHECK(in_child(child_13_0_0));
	CHECK(in_child(child_old));
	CHECK(in_child(child_pthread_ids));
	CHECK(in_child(child_hold));
	CHECK(in_child(child_nvtx_via_cupti));
	CHECK(in_child(child_late));
	setenv("FAKE_CUPTI_DEVICE_MADE", "1", 1);   /* a dump inside cuInit would bring a second */
	load_fake();
	test_start();
	test_delivery();
	test_pause_resume();
	test_nvtx();
	test_nvtx_ops_begin();
	test_stop();
	if (getenv("PROF_TEST_VERBOSE"))
		fputs(logbuf, stderr);
	return unit_done();
}
