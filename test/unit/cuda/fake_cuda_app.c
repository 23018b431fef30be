/*
 * A "CUDA program" for machines without a GPU: it maps the stand-in
 * libcupti (fake_cupti.c) as PyTorch maps its libcupti, then does what
 * CUDA does at cuInit (calls the injection entry, here found in the
 * preloaded agent) and makes CUPTI deliver what a short training loop
 * would: per step an NVTX range, a kernel launch through the runtime and
 * through the driver (from a second thread), a copy, an NCCL all-gather, a
 * stream sync, an event recorded on one stream that another stream waits
 * for and the host synchronizes on, and noise that must not show. With
 * LIBPROF_TX each step is also a prof_tx range "fake_step" on the main
 * thread (for gpu_user_annotation); with FAKE_TORCH_OPS=1 torch's NVTX
 * ranges of operators too, as CUPTI would record them. With
 * FAKE_TORCH_OPS=nvtx the program makes those ranges itself, through NVTX
 * (nvtx3's loader, header only, as torch 2.x has it), around CUDA calls
 * stamped as they happen: NVTX_INJECTION64_PATH brings in prof's agent,
 * which hands NVTX to the stand-in CUPTI and takes torch's ranges at the
 * call; the last op is left open at exit. Run under `prof run` by
 * e2e_fake_cuda.py, which checks the outputs.
 *   fake_cuda_app LIBCUPTI_FAKE STEPS [LIBPROF_TX]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>
#ifdef FAKE_HAVE_NVTX3
#include <nvtx3/nvToolsExt.h>
#endif

#define US 1000ull

static void (*push)(const void *, size_t);
static void (*api_call)(CUpti_CallbackDomain, CUpti_CallbackId);
static void (*drop)(size_t);

static CUptiResult (*cupti_now)(uint64_t *);
static void (*range_push)(const char *);
static void (*range_pop)(void);

/* Records are stamped on CUPTI's clock, as a real CUPTI stamps them. */
static uint64_t now(void)
{
	uint64_t t = 0;
	cupti_now(&t);
	return t;
}

static void sym(void *h, const char *name, void *slot)
{
	void *f = dlsym(h, name);
	if (!f) {
		fprintf(stderr, "fake_cuda_app: %s: %s\n", name, dlerror());
		exit(2);
	}
	memcpy(slot, &f, sizeof f);
}

static int (*tid_type)(void);

/* The thread id CUPTI puts in a record: the OS tid once the backend asked
 * for CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM, else pthread_self()'s low bits. */
static uint32_t self_id(void)
{
	if (tid_type() == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
		return (uint32_t)gettid();
	return (uint32_t)(uintptr_t)pthread_self();
}

static void api(CUpti_ActivityKind kind, uint32_t cbid, uint64_t start, uint64_t dur, uint32_t corr)
{
	CUpti_ActivityAPI a;
	memset(&a, 0, sizeof a);
	a.kind = kind, a.cbid = cbid, a.start = start, a.end = start + dur;
	a.threadId = self_id(), a.correlationId = corr;
	push(&a, sizeof a);
}

static void kernel(const char *name, uint64_t start, uint64_t dur, uint32_t corr, uint32_t stream)
{
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof k);
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = start, k.end = start + dur, k.streamId = stream, k.correlationId = corr;
	k.gridX = 64, k.gridY = k.gridZ = 1, k.blockX = 256, k.blockY = k.blockZ = 1;
	k.registersPerThread = 40, k.staticSharedMemory = 2048;
	k.name = name;
	push(&k, sizeof k);
}

static void marker(uint32_t flags, uint32_t id, uint64_t ts, const char *name)
{
	CUpti_ActivityMarker2 m;
	memset(&m, 0, sizeof m);
	m.kind = CUPTI_ACTIVITY_KIND_MARKER;
	m.flags = (CUpti_ActivityFlag)flags, m.id = id, m.timestamp = ts, m.name = name;
	m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD, m.objectId.pt.threadId = self_id();
	push(&m, sizeof m);
}

static void copy_and_sync(uint64_t t, uint32_t corr)
{
	CUpti_ActivityMemcpy6 c;
	memset(&c, 0, sizeof c);
	c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	c.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED, c.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	c.bytes = 1 << 20, c.start = t + 40 * US, c.end = t + 60 * US, c.streamId = 7;
	c.correlationId = corr;
	push(&c, sizeof c);
	CUpti_ActivitySynchronization2 s;
	memset(&s, 0, sizeof s);
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
	s.start = t + 20 * US, s.end = t + 100 * US, s.streamId = 7, s.correlationId = corr + 1;
	push(&s, sizeof s);
}

/* A sync of `type` on CUDA event `event` (issued as `corr`). */
static void event_sync(CUpti_ActivitySynchronizationType type, uint32_t event, uint32_t stream,
		       uint64_t start, uint64_t dur, uint32_t corr)
{
	CUpti_ActivitySynchronization2 s;
	memset(&s, 0, sizeof s);
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = type, s.cudaEventId = event, s.streamId = stream;
	s.start = start, s.end = start + dur, s.correlationId = corr;
	push(&s, sizeof s);
}

/* cudaEventRecord(e, stream 7) after the step's first kernel; stream 9
 * (the driver thread's) waits for it; the host synchronizes on it. The
 * event is the same every step, recorded anew (as PyTorch reuses its). */
static void events_of_step(uint64_t t, uint32_t corr)
{
	api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020,
	    t + 25 * US, US, corr);
	CUpti_ActivityCudaEvent2 e;
	memset(&e, 0, sizeof e);
	e.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
	e.correlationId = corr, e.streamId = 7, e.eventId = 500;
	push(&e, sizeof e);
	api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020,
	    t + 27 * US, US, corr + 1);
	event_sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, 500, 9, t + 27 * US, US,
		   corr + 1);
	api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020,
	    t + 100 * US, 10 * US, corr + 2);
	event_sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, 500,
		   CUPTI_SYNCHRONIZATION_INVALID_VALUE, t + 100 * US, 10 * US, corr + 2);
}

/* FAKE_TORCH_OPS=1: torch's NVTX ranges of operators (emit_nvtx's
 * messages, torch 2.x) around the launches, the backward's on the driver
 * thread as on torch's autograd thread; ids from 1000 up, none reused. */
static int torch_ops;
static uint32_t op_ids = 1000;

static void torch_op(uint64_t start, uint64_t end, const char *msg)
{
	uint32_t id = op_ids++;
	/* CUPTI copies a marker's name into its buffer; the stand-in keeps
	 * the pointer */
	marker(CUPTI_ACTIVITY_FLAG_MARKER_START, id, start, strdup(msg));
	marker(CUPTI_ACTIVITY_FLAG_MARKER_END, id, end, NULL);
}

static void torch_forward(uint64_t t, int i)
{
	char msg[160];
	snprintf(msg, sizeof msg, "aten::addmm, seq = %d, op_id = %u, sizes = [[8], [4, 8], [8, 8]]",
		 100 + i, 5000 + op_ids);
	torch_op(t + 2 * US, t + 9 * US, msg);   /* around the first cudaLaunchKernel */
	snprintf(msg, sizeof msg, "enumerate(DataLoader)#_BaseDataLoaderIter.__next__, op_id = %u",
		 5000 + op_ids);
	torch_op(t + 10 * US, t + 11 * US, msg);
	snprintf(msg, sizeof msg, "Optimizer.step#SGD.step, op_id = %u", 5000 + op_ids);
	torch_op(t + 12 * US, t + 19 * US, msg);
	snprintf(msg, sizeof msg, "aten::add_, op_id = %u", 5000 + op_ids);
	torch_op(t + 13 * US, t + 14 * US, msg);
}

static void torch_backward(uint64_t t, int i)
{
	char msg[160];
	snprintf(msg, sizeof msg, "autograd::engine::evaluate_function: AddmmBackward0, seq = %d, "
		 "op_id = %u", 100 + i, 5000 + op_ids);
	torch_op(t - 3 * US, t + 7 * US, msg);
	snprintf(msg, sizeof msg, "AddmmBackward0, seq = %d, op_id = %u", 100 + i, 5000 + op_ids);
	torch_op(t - 2 * US, t + 6 * US, msg);
	snprintf(msg, sizeof msg, "aten::mm, op_id = %u", 5000 + op_ids);
	torch_op(t - US, t + 5 * US, msg);       /* around the driver's launch */
}

/* ---- FAKE_TORCH_OPS=nvtx: torch's ranges made through NVTX ---- */

static int torch_nvtx;

#ifdef FAKE_HAVE_NVTX3
/* Waits `us` on the clock, so that what comes next starts later by more
 * than the clocks' mapping can blur. */
static void spin(uint64_t us)
{
	uint64_t end = now() + us * US;
	while (now() < end)
		;
}

/* An operator's range around a launch of `dur_us`'s kernel, `corr`, made
 * through `kind` (runtime or driver) on this thread. */
static void nvtx_op_launch(const char *msg, CUpti_ActivityKind kind, uint32_t cbid,
			   const char *kname, uint64_t dur_us, uint32_t corr, uint32_t stream)
{
	nvtxRangePushA(msg);
	spin(20);
	uint64_t s = now();
	spin(3);
	uint64_t e = now();
	api(kind, cbid, s, e - s, corr);
	kernel(kname, e + 5 * US, dur_us * US, corr, stream);
	spin(20);
	nvtxRangePop();
}

static void nvtx_forward(int i)
{
	char msg[160];
	uint32_t corr = 50000 + 10 * (uint32_t)i;
	nvtxRangePushA("user_forward");   /* the program's own: CUPTI's to record */
	snprintf(msg, sizeof msg, "aten::addmm, seq = %d, op_id = %u, sizes = [[8], [4, 8], [8, 8]]",
		 100 + i, op_ids++);
	nvtx_op_launch(msg, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
		       "nvtx_addmm_kernel", 25, corr, 7);
	nvtxRangePop();
	snprintf(msg, sizeof msg, "enumerate(DataLoader)#_BaseDataLoaderIter.__next__, op_id = %u",
		 op_ids++);
	nvtxRangePushA(msg);
	spin(5);
	nvtxRangePop();
	snprintf(msg, sizeof msg, "Optimizer.step#SGD.step, op_id = %u", op_ids++);
	nvtxRangePushA(msg);
	snprintf(msg, sizeof msg, "aten::add_, op_id = %u", op_ids++);
	nvtx_op_launch(msg, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
		       "nvtx_add_kernel", 4, corr + 1, 7);
	nvtxRangePop();
}

/* The backward, on the autograd thread: its node's ranges and the mm
 * that launches through the driver. */
static void *nvtx_backward(void *arg)
{
	int i = *(const int *)arg;
	char msg[160];
	snprintf(msg, sizeof msg, "autograd::engine::evaluate_function: AddmmBackward0, seq = %d, "
		 "op_id = %u", 100 + i, op_ids++);
	nvtxRangePushA(msg);
	snprintf(msg, sizeof msg, "AddmmBackward0, seq = %d, op_id = %u", 100 + i, op_ids++);
	nvtxRangePushA(msg);
	snprintf(msg, sizeof msg, "aten::mm, op_id = %u", op_ids++);
	api_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
	nvtx_op_launch(msg, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
		       "nvtx_mm_kernel", 10, 50000 + 10 * (uint32_t)i + 2, 9);
	nvtxRangePop();
	nvtxRangePop();
	return NULL;
}

static void nvtx_step(int i)
{
	nvtx_forward(i);
	pthread_t th;
	pthread_create(&th, NULL, nvtx_backward, &i);
	pthread_join(th, NULL);
}

/* Dies in an op, as a killed job does: its range never ends. */
static void nvtx_open_at_exit(void)
{
	char msg[64];
	snprintf(msg, sizeof msg, "aten::cross_entropy_loss, seq = 7, op_id = %u", op_ids++);
	nvtxRangePushA(msg);
	spin(50);
}

/* What ops.py does before it switches on torch's NVTX observer. */
static void nvtx_begin(void)
{
	const char *(*begin)(void) = NULL;
	sym(RTLD_DEFAULT, "prof_fw_nvtx_ops_begin", &begin);
	const char *why = begin();
	if (why)
		fprintf(stderr, "fake_cuda_app: no NVTX operators: %s\n", why);
}
#else
static void nvtx_step(int i) { (void)i; }
static void nvtx_open_at_exit(void) {}
static void nvtx_begin(void) {}
#endif

struct driver_arg {
	uint64_t t;
	int step;
};

/* The "Triton" thread: launches through the driver. */
static void *driver_thread(void *arg)
{
	const struct driver_arg *a = arg;
	uint64_t t = a->t;
	uint32_t corr = (uint32_t)(t / US) | 1u;
	if (torch_ops)
		torch_backward(t, a->step);
	api_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
	api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, t, 4 * US, corr);
	kernel("triton_poi_fused_add_0", t + 70 * US, 10 * US, corr, 9);
	return NULL;
}

/* The thread driver_thread runs on, for the whole run, named as torch
 * names its worker threads: it records nothing but CUDA calls, so only
 * the device stream can carry its name, and it is still there when the
 * stream is written. */
static struct {
	sem_t go, done;
	struct driver_arg arg;
} launcher;

static void *launcher_loop(void *unused)
{
	(void)unused;
	pthread_setname_np(pthread_self(), "fake_launcher");
	for (;;) {
		sem_wait(&launcher.go);
		driver_thread(&launcher.arg);
		sem_post(&launcher.done);
	}
	return NULL;
}

static void launcher_start(void)
{
	pthread_t th;
	sem_init(&launcher.go, 0, 0);
	sem_init(&launcher.done, 0, 0);
	pthread_create(&th, NULL, launcher_loop, NULL);
	pthread_detach(th);
}

static void step(int i)
{
	if (range_push)
		range_push("fake_step");
	uint64_t t = now();
	uint32_t corr = 1000 + 10 * (uint32_t)i;
	marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 100 + (uint32_t)i, t, "train_step");
	if (torch_ops)
		torch_forward(t, i);
	api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, t + US, US, 0);
	api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
	    t + 3 * US, 5 * US, corr);
	kernel("_ZN2at6native29vectorized_elementwise_kernelILi4EEEviT_", t + 10 * US, 25 * US,
	       corr, 7);
	api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
	    t + 9 * US, 3 * US, corr + 2);
	copy_and_sync(t, corr + 2);
	api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
	    t + 13 * US, 4 * US, corr + 4);
	kernel("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", t + 60 * US,
	       30 * US, corr + 4, 8);
	/* a CUDA graph replay: its kernels share the launch's correlation id */
	api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
	    t + 18 * US, 6 * US, corr + 6);
	kernel("graph_k0", t + 91 * US, 5 * US, corr + 6, 7);
	kernel("graph_k1", t + 97 * US, 5 * US, corr + 6, 7);
	events_of_step(t, corr + 7);
	marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 100 + (uint32_t)i, t + 120 * US, NULL);
	launcher.arg = (struct driver_arg){ t + 20 * US, i };
	sem_post(&launcher.go);
	sem_wait(&launcher.done);
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	nanosleep(&ts, NULL);   /* past the records' times: the range holds them */
	if (range_pop)
		range_pop();
}

static void device_record(void)
{
	CUpti_ActivityDevice5 d;
	memset(&d, 0, sizeof d);
	d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d.name = "Fake GPU", d.numMultiprocessors = 132, d.globalMemorySize = 80ull << 30;
	d.computeCapabilityMajor = 9;
	push(&d, sizeof d);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		fprintf(stderr, "fake_cuda_app: %s\n", dlerror());
		return 2;
	}
	dlopen("libstdc++.so.6", RTLD_NOW | RTLD_GLOBAL);   /* as in any PyTorch process */
	sym(h, "fake_cupti_push", &push);
	sym(h, "fake_cupti_api_call", &api_call);
	sym(h, "fake_cupti_drop", &drop);
	sym(h, "cuptiGetTimestamp", &cupti_now);
	sym(h, "fake_cupti_tid_type", &tid_type);
	const char *ops = getenv("FAKE_TORCH_OPS");
	torch_ops = ops && strcmp(ops, "1") == 0;
	torch_nvtx = ops && strcmp(ops, "nvtx") == 0;
#ifndef FAKE_HAVE_NVTX3
	if (torch_nvtx) {
		fprintf(stderr, "fake_cuda_app: built without nvtx3's headers\n");
		return 4;
	}
#endif
	if (argc > 3) {
		/* as a program linked with it: its calls bound first to the
		 * preloaded agent's */
		if (!dlopen(argv[3], RTLD_NOW | RTLD_GLOBAL)) {
			fprintf(stderr, "fake_cuda_app: %s\n", dlerror());
			return 2;
		}
		sym(RTLD_DEFAULT, "prof_range_push", &range_push);
		sym(RTLD_DEFAULT, "prof_range_pop", &range_pop);
	}
	int (*init)(void);
	sym(RTLD_DEFAULT, "InitializeInjection", &init);   /* cuInit's part */
	if (init() != 1)
		return 3;
	api_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
	device_record();
	drop(5);   /* CUPTI lost some: the stream must say so */
	if (torch_nvtx)
		nvtx_begin();
	launcher_start();
	for (int i = 0; i < atoi(argv[2]); i++) {
		step(i);
		if (torch_nvtx)
			nvtx_step(i);
	}
	if (torch_nvtx)
		nvtx_open_at_exit();
	return 0;  /* exit: the backend's forced flush delivers the rest */
}
