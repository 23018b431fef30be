/*
 * gen_raw: writes a synthetic run directory of about N event records through
 * the real raw writer (1 MiB chunks, as the agent writes them), for the
 * parse benchmarks (test/bench/parse_throughput.sh).
 *
 *   gen_raw RUN_DIR N [PROCS] [THREADS] [ranks]
 *
 * The mix, per process image (PROCS of them, default 2): a main thread with
 * nested ranges, marks, steps, a thread name and metadata; THREADS - 1 worker
 * threads (default 3) with ranges, marks and cross-thread ranges (started on
 * one worker, ended on another); fw.raw with framework operators (nested,
 * in start order, with shapes and types); dev.raw with API calls, kernels,
 * copies, sets and allocations, written in completion order as a backend
 * writes them. The launcher writes host samples (every 10 ms) and device
 * samples. profiler_info.json gives the clock's start pair. With "ranks",
 * process p says it is rank p, so the parse also writes per-rank outputs
 * and the cluster analysis (each event is then parsed twice).
 *
 * Prints "events E bytes B" on stdout: E event records written (strings
 * and the stream headers not counted), B bytes of raw files.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "raw/raw_writer.h"

/* The run's start, monotonic ns: its records end just before gen_raw
 * starts, so the streams' open and close pairs (the real clock, as the
 * writer takes them) come after them, as in a run just recorded. */
static uint64_t T0 = 1000000000000ull;
#define ITER 20000ull            /* ns per iteration of the main loop */
#define STEP_ITERS 100           /* iterations per step */

static uint64_t events;
static uint64_t raw_bytes;

static void die(const char *what, int err)
{
	fprintf(stderr, "gen_raw: %s: %s\n", what, strerror(err));
	exit(1);
}

static void wopen(struct raw_writer *w, const char *dir, const char *file, int pid, int tid,
		  uint32_t kind, const char *comm)
{
	if (fs_mkdir_p(dir) != 0)
		die(dir, errno);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		die(dir, errno);
	struct raw_writer_opts o = { .clock = RAW_CLOCK_MONOTONIC, .kind = kind,
				     .chunk_size = RAW_CHUNK_DEFAULT, .pid = pid, .tid = tid,
				     .ppid = 1, .tsc_hz = 0, .comm = comm };
	int rc = raw_writer_open(w, dfd, file, &o);
	close(dfd);
	if (rc != 0)
		die(file, -rc);
}

static void wclose(struct raw_writer *w)
{
	raw_bytes += (uint64_t)RAW_HEADER_SIZE + w->hdr->chunks * (uint64_t)w->chunk_size;
	raw_writer_close(w);
}

static void emit(struct raw_writer *w, uint16_t type, uint64_t ts, const void *p, uint32_t len)
{
	if (raw_writer_emit(w, type, ts, p, len) == 0)
		events++;
}

static uint32_t str(struct raw_writer *w, const char *s, uint64_t ts)
{
	return s ? raw_writer_intern(w, s, ts) : 0;
}

static void push(struct raw_writer *w, uint64_t ts, const char *name)
{
	struct raw_range_push p = { str(w, name, ts), 0 };
	emit(w, RAW_REC_RANGE_PUSH, ts, &p, sizeof p);
}

static void pop(struct raw_writer *w, uint64_t ts)
{
	static const char none;
	emit(w, RAW_REC_RANGE_POP, ts, &none, 0);
}

static void mark(struct raw_writer *w, uint64_t ts, const char *msg)
{
	struct raw_mark m = { str(w, msg, ts), 0 };
	emit(w, RAW_REC_MARK, ts, &m, sizeof m);
}

static void op(struct raw_writer *w, uint64_t start, uint64_t end, int32_t tid, const char *name,
	       const char *shapes, const char *types, int64_t seq)
{
	struct raw_op o = { .end = end, .tid = tid, .name_id = str(w, name, start),
			    .shapes_id = str(w, shapes, start), .types_id = str(w, types, start),
			    .seq = seq };
	emit(w, RAW_REC_OP, start, &o, sizeof o);
}

static void dev_api(struct raw_writer *w, uint64_t start, uint64_t end, uint64_t corr,
		    int32_t tid, const char *name)
{
	struct raw_dev_api a = { .end = end, .correlation = corr, .tid = tid,
				 .name_id = str(w, name, start), .domain = RAW_API_SIM,
				 .vendor = RAW_VENDOR_SIM };
	emit(w, RAW_REC_DEV_API, start, &a, sizeof a);
}

static void dev_task(struct raw_writer *w, uint32_t kind, uint64_t start, uint64_t end,
		     uint64_t corr, uint32_t stream, const char *name, uint32_t copy_kind,
		     uint64_t bytes)
{
	int k = kind == RAW_DEV_KERNEL;
	struct raw_dev_activity a = { .end = end, .correlation = corr, .bytes = bytes,
		.kind = kind, .vendor = RAW_VENDOR_SIM, .device = 0, .stream = stream,
		.name_id = str(w, name, start), .copy_kind = copy_kind,
		.grid = { k ? 64 : 0, k ? 2 : 0, k ? 1 : 0 }, .block = { k ? 128 : 0, k, k },
		.registers = k ? 32 : 0, .shared_bytes = k ? 4096 : 0 };
	emit(w, RAW_REC_DEV_ACTIVITY, start, &a, sizeof a);
}

static void dev_mem(struct raw_writer *w, uint64_t ts, int32_t tid, uint64_t addr,
		    uint64_t bytes, int is_free)
{
	struct raw_dev_memory m = { .address = addr, .bytes = bytes, .tid = tid, .device = 0,
				    .vendor = RAW_VENDOR_SIM, .flags = is_free ? RAW_MEM_FREE : 0 };
	emit(w, RAW_REC_DEV_MEMORY, ts, &m, sizeof m);
}

#define NLAYERS 24
#define NKERNELS 48

static const char *const op_names[] = {
	"aten::linear", "aten::conv2d", "aten::layer_norm", "aten::softmax", "aten::matmul",
	"aten::gelu", "aten::dropout", "aten::add", "aten::mul", "aten::embedding",
};
static const char *const sub_names[] = {
	"aten::addmm", "aten::convolution", "aten::native_layer_norm", "aten::_softmax",
	"aten::bmm", "aten::gelu_", "aten::native_dropout", "aten::add_", "aten::mul_",
	"aten::index_select",
};
static const char *const shapes[] = {
	"[[64, 1024], [1024, 4096], [4096]]", "[[64, 3, 224, 224], [64, 3, 7, 7], [64]]",
	"[[64, 512, 1024], [1024], [1024]]", "[[64, 16, 512, 512], []]",
	"[[64, 16, 512, 64], [64, 16, 64, 512]]", "[[64, 512, 4096]]", "[[64, 512, 1024], []]",
	"[[64, 512, 1024], [64, 512, 1024], []]", "[[64, 512, 1024], []]", "[[30522, 1024], [64, 512]]",
};

static char layer_names[NLAYERS][32];
static char kernel_names[NKERNELS][64];

static int with_ranks;

/* One process image: `iters` iterations of the main loop. */
static void process(const char *run, int p, uint64_t iters, int threads)
{
	int pid = 1000 + p * 100;
	char dir[4096], file[64];
	snprintf(dir, sizeof dir, "%s/raw/%d.0", run, pid);

	struct raw_writer mt, fw, dev;
	struct raw_writer *wk = calloc((size_t)(threads > 1 ? threads - 1 : 1), sizeof *wk);
	if (!wk)
		die("calloc", ENOMEM);
	snprintf(file, sizeof file, "t%d.raw", pid);
	wopen(&mt, dir, file, pid, pid, RAW_STREAM_THREAD, "python");
	for (int t = 0; t < threads - 1; t++) {
		snprintf(file, sizeof file, "t%d.raw", pid + 1 + t);
		wopen(&wk[t], dir, file, pid, pid + 1 + t, RAW_STREAM_THREAD, "worker");
	}
	wopen(&fw, dir, "fw.raw", pid, 0, RAW_STREAM_FRAMEWORK, "framework");
	wopen(&dev, dir, "dev.raw", pid, 0, RAW_STREAM_DEVICE, "device");

	uint64_t t = T0 + 1000 + (uint64_t)p * 37;
	/* the main thread's prologue, as the agent writes it */
	struct raw_process pr = { pid, 1, str(&mt, "python train.py --epochs 3", t),
				  str(&mt, "/usr/bin/python3", t), 0, 0 };
	if (with_ranks) {
		char rank[16];
		snprintf(rank, sizeof rank, "%d", p);
		pr.rank_id = str(&mt, rank, t);
	}
	emit(&mt, RAW_REC_PROCESS, t, &pr, sizeof pr);
	struct raw_recording rec = { 1, RAW_CAUSE_START };
	emit(&mt, RAW_REC_RECORDING, t + 1, &rec, sizeof rec);
	struct raw_metadata md = { str(&mt, "model", t + 2), str(&mt, "{\"layers\": 24}", t + 2),
				   RAW_METADATA_JSON, 0 };
	emit(&mt, RAW_REC_METADATA, t + 2, &md, sizeof md);
	for (int k = 0; k < threads - 1; k++) {
		struct raw_thread_name tn = { pid + 1 + k, str(&mt, "dataloader", t + 3) };
		emit(&mt, RAW_REC_THREAD_NAME, t + 3, &tn, sizeof tn);
	}
	struct raw_dev_info di = { .device = 0, .vendor = RAW_VENDOR_SIM,
				   .name_id = str(&dev, "prof sim device", t), .sm_count = 80,
				   .total_mem_bytes = 16ull << 30, .compute_major = 8 };
	emit(&dev, RAW_REC_DEV_INFO, t, &di, sizeof di);
	t += 1000;

	uint64_t corr = 1, step = 0, xid = 1;
	uint64_t dev_free = 0;           /* stream 1 is busy until then */
	for (uint64_t i = 0; i < iters; i++, t += ITER) {
		int l = (int)(i % NLAYERS), o = (int)(i % 10);
		const char *kn = kernel_names[i % NKERNELS], *kn2 = kernel_names[(i * 7 + 3) % NKERNELS];
		/* main thread: a range per layer around its operator */
		push(&mt, t, layer_names[l]);
		if (i % 8 == 0)
			mark(&mt, t + 100, "checkpoint");
		/* framework: the op and its child, in start order */
		uint64_t os = t + 200, oe = t + 15000;
		op(&fw, os, oe, pid, op_names[o], shapes[o], "[\"float\", \"float\", \"float\"]",
		   (int64_t)i);
		op(&fw, os + 300, oe - 500, pid, sub_names[o], shapes[o], NULL, -1);
		/* the device: two launches, kernels queued on stream 1 */
		uint64_t a1 = os + 1000, a2 = os + 6000;
		dev_api(&dev, a1, a1 + 4000, corr, pid, "sim_kernel");
		dev_api(&dev, a2, a2 + 3000, corr + 1, pid, "sim_kernel");
		uint64_t k1s = (a1 + 2000 > dev_free ? a1 + 2000 : dev_free), k1e = k1s + 7000;
		uint64_t k2s = (a2 + 2000 > k1e ? a2 + 2000 : k1e), k2e = k2s + 5000;
		dev_free = k2e;
		int copy = i % 4 == 0;
		uint64_t cs = a1 + 500, ce = cs + 12000;  /* stream 2: ends after the kernels */
		if (copy)
			dev_api(&dev, a1 - 700, a1 - 200, corr + 2, pid, "sim_memcpy");
		/* completion order: kernel 1, kernel 2, then the copy */
		dev_task(&dev, RAW_DEV_KERNEL, k1s, k1e, corr, 1, kn, 0, 0);
		dev_task(&dev, RAW_DEV_KERNEL, k2s, k2e, corr + 1, 1, kn2, 0, 0);
		if (copy)
			dev_task(&dev, RAW_DEV_MEMCPY, cs, ce, corr + 2, 2, NULL,
				 i % 8 == 0 ? RAW_COPY_HTOD : RAW_COPY_DTOH, 4ull << 20);
		if (i % 16 == 0) {
			dev_mem(&dev, t + 150, pid, 0x7f0000000000ull + (i % 64) * 0x100000ull,
				1ull << 20, 0);
			dev_mem(&dev, t + 19000, pid, 0x7f0000000000ull + (i % 64) * 0x100000ull,
				1ull << 20, 1);
		}
		corr += 3;
		pop(&mt, t + 18000);
		/* workers: a data-loading range; a cross-thread range every 4 */
		if (threads > 1) {
			struct raw_writer *w = &wk[i % (uint64_t)(threads - 1)];
			push(w, t + 50, "load_batch");
			push(w, t + 80, "decode");
			pop(w, t + 9000);
			pop(w, t + 9500);
			if (i % 32 == 1)
				mark(w, t + 9600, "queue full");
			if (i % 4 == 2) {
				struct raw_range_start rs = { xid, str(w, "prefetch", t + 9700), 0 };
				emit(w, RAW_REC_RANGE_START, t + 9700, &rs, sizeof rs);
				struct raw_writer *w2 = &wk[(i + 1) % (uint64_t)(threads - 1)];
				struct raw_range_end re = { xid };
				emit(w2, RAW_REC_RANGE_END, t + 19500, &re, sizeof re);
				xid++;
			}
		}
		if ((i + 1) % STEP_ITERS == 0) {
			struct raw_step s = { ++step };
			emit(&mt, RAW_REC_STEP, t + 19900, &s, sizeof s);
		}
	}
	wclose(&mt);
	for (int k = 0; k < threads - 1; k++)
		wclose(&wk[k]);
	wclose(&fw);
	wclose(&dev);
	free(wk);
}

static void launcher(const char *run, uint64_t end_ns)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/raw/launcher", run);
	struct raw_writer h, d;
	wopen(&h, dir, "host.raw", 50, 50, RAW_STREAM_HOST, "launcher");
	wopen(&d, dir, "device.raw", 50, 51, RAW_STREAM_DEVICE_SAMPLES, "launcher");
	uint64_t n = 0;
	for (uint64_t t = T0 + 10000000ull; t < end_ns; t += 10000000ull, n++) {
		struct raw_host_sample s = { .processes = 3, .threads = 9,
			.proc_cpu_user_pct = 180.0 + (double)(n % 17), .proc_cpu_sys_pct = 12.5,
			.proc_rss_bytes = (2ull << 30) + (n % 100) * 4096,
			.proc_read_bytes = 65536 * (n % 5), .proc_write_bytes = 4096,
			.sys_cpu_pct = 35.0 + (double)(n % 11), .sys_mem_used_bytes = 20ull << 30,
			.sys_mem_avail_bytes = 100ull << 30 };
		emit(&h, RAW_REC_HOST_SAMPLE, t, &s, sizeof s);
		if (n % 10 == 0) {
			struct raw_dev_sample ds = { .device = 0, .vendor = RAW_VENDOR_SIM,
				.util_pct = (uint32_t)(60 + n % 40), .mem_util_pct = 30,
				.mem_used_bytes = 8ull << 30, .mem_total_bytes = 16ull << 30,
				.power_mw = 250000, .sm_clock_mhz = 1410, .temperature_c = 60 };
			emit(&d, RAW_REC_DEV_SAMPLE, t, &ds, sizeof ds);
		}
	}
	wclose(&h);
	wclose(&d);
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 6 || (argc == 6 && strcmp(argv[5], "ranks") != 0)) {
		fprintf(stderr, "usage: gen_raw RUN_DIR N [PROCS] [THREADS] [ranks]\n");
		return 2;
	}
	const char *run = argv[1];
	uint64_t n = strtoull(argv[2], NULL, 10);
	with_ranks = argc == 6;
	int procs = argc > 3 ? atoi(argv[3]) : 2, threads = argc > 4 ? atoi(argv[4]) : 4;
	if (procs < 1 || threads < 1 || n == 0) {
		fprintf(stderr, "gen_raw: bad arguments\n");
		return 2;
	}
	for (int l = 0; l < NLAYERS; l++)
		snprintf(layer_names[l], sizeof layer_names[l], "layer%02d", l);
	for (int k = 0; k < NKERNELS; k++)
		snprintf(kernel_names[k], sizeof kernel_names[k],
			 "void gemm_kernel_%02d<float, 128, 64>(float const*, float*, int)", k);

	char raw[4096];
	snprintf(raw, sizeof raw, "%s/raw", run);
	struct stat st;
	if (stat(raw, &st) == 0) {
		fprintf(stderr, "gen_raw: %s exists\n", raw);
		return 1;
	}
	if (fs_mkdir_p(run) != 0)
		die(run, errno);

	/* Events per iteration: main 2 + 1/8 + 1/100, fw 2, dev 4 + 2/4 + 2/16,
	 * workers 4 + 1/32 + 2/4 (when there are workers). */
	double per = 2 + 0.125 + 0.01 + 2 + 4 + 0.5 + 0.125 + (threads > 1 ? 4.53125 : 0);
	uint64_t iters = (uint64_t)((double)n / procs / per);
	if (iters < 1)
		iters = 1;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	uint64_t now_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	uint64_t span = iters * ITER + 1000000;
	if (now_ns > span + 1000000000ull)
		T0 = now_ns - span;
	char info[4096];
	snprintf(info, sizeof info, "%s/profiler_info.json", run);
	FILE *f = fopen(info, "w");
	if (!f)
		die(info, errno);
	fprintf(f, "{\"clock\": {\"start\": {\"mono_ns\": %llu, \"real_ns\": 1700000000000000000}}}\n",
		(unsigned long long)T0);
	fclose(f);
	for (int p = 0; p < procs; p++)
		process(run, p, iters, threads);
	launcher(run, T0 + 2000 + iters * ITER + 100000);
	printf("events %" PRIu64 " bytes %" PRIu64 "\n", events, raw_bytes);
	return 0;
}
