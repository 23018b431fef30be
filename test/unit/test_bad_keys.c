/*
 * Damaged device records whose keys never repeat: every task on a device
 * and stream of its own, every allocation on a device of its own, every
 * call from a thread of its own, every collective in a group of its own,
 * every DEV_INFO for a device of its own. The parse's lookups by those
 * keys must not scan what they have seen (N of each made a quadratic
 * parse minutes long): it ends by a deadline, and each output holds
 * its N rows.
 */
#include "unit/parsed.h"

#include "common/idmap.h"
#include "raw/raw_clock.h"

#define N 100000
#define DEADLINE_S 60   /* the linear parse: a few seconds (ASan: several); quadratic, minutes */

static void main_thread(const char *run)
{
	struct raw_writer w;
	char *d = rg_path(run, "raw/700.0");
	CHECK(rg_open(&w, d, "t700.raw", 700, 700, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC,
		      "python") == 0);
	rg_process(&w, T + 0, 700, "python train.py");
	rg_recording(&w, T + 1, 1, RAW_CAUSE_START);
	raw_writer_close(&w);
	free(d);
}

/* Record i of each kind at T + 10 * (5i + kind): in start order. */
static void device(const char *run)
{
	struct raw_writer w;
	char *d = rg_path(run, "raw/700.0"), group[32];
	CHECK(rg_open(&w, d, "dev.raw", 700, 0, RAW_STREAM_DEVICE, RAW_CLOCK_MONOTONIC,
		      "dev") == 0);
	for (uint32_t i = 0; i < N; i++) {
		uint64_t t = T + 100 + 50 * (uint64_t)i;
		rg_dev_info(&w, t, 1000 + i, "sim");
		rg_dev_task(&w, RAW_DEV_KERNEL, t + 10, t + 11, 0, 1000 + i, 5000 + i, "k", 0, 0, 1);
		rg_dev_mem(&w, t + 20, 700, 1000 + i, 0x1000 + 64 * (uint64_t)i, 64, 0);
		rg_dev_api(&w, t + 30, t + 31, 0, (int32_t)(10000 + i), "sim_call");
		snprintf(group, sizeof group, "g%u", i);
		rg_dev_coll(&w, t + 40, t + 41, 0, RAW_COLL_ALLREDUCE, 7, "allreduce", group, "0",
			    0, -1, 64);
	}
	raw_writer_close(&w);
	free(d);
}

static void test_unique_keys(void)
{
	char *run = rg_tmpdir("bad-keys");
	write_min_info(run);
	main_thread(run);
	device(run);
	unit_deadline(DEADLINE_S);
	struct parsed p;
	parse(run, &p);
	unit_deadline(0);
	CHECK(p.st == PARSE_OK && p.done && p.trace);
	CHECK(p.r.dev_tasks == 2 * N && p.r.dev_apis == N);
	CHECK(rg_count(p.kernel_csv, "\n") == 2 * N + 1);
	CHECK(rg_count(p.memrec_csv, "\n") == N + 1);
	/* the last of each: a device, stream and thread apiece */
	char last[64];
	snprintf(last, sizeof last, "\n,%u,N/A,0,%u,k,KERNEL,", 1000 + N - 1, 5000 + N - 1);
	CHECK_CONTAINS(p.kernel_csv, last);
	snprintf(last, sizeof last, ",SIM:%u\n", 1000 + N - 1);
	CHECK_CONTAINS(p.memrec_csv, last);
	snprintf(last, sizeof last, "\"name\":\"stream %u\"", 5000 + N - 1);
	CHECK_CONTAINS(p.trace_text, last);
	snprintf(last, sizeof last, "\"name\":\"thread %u\"", 10000 + N - 1);
	CHECK_CONTAINS(p.trace_text, last);
	CHECK(rg_count(p.trace_text, "{\"id\":") == N);   /* deviceProperties */
	CHECK(rg_count(p.comm_json, "@g") == N);
	parsed_free(&p);
	rg_rmrf(run);
	free(run);
}

/* A kernel of any vendor (a damaged record's). */
static void kernel(struct raw_writer *w, uint64_t start, uint64_t end, uint64_t vendor_device,
		   uint32_t stream)
{
	struct raw_dev_activity a = { .end = end, .kind = RAW_DEV_KERNEL,
		.vendor = (uint32_t)(vendor_device >> 32), .device = (uint32_t)vendor_device,
		.stream = stream, .name_id = rg_str(w, "k", start) };
	raw_writer_emit(w, RAW_REC_DEV_ACTIVITY, start, &a, sizeof a);
}

/* Two streams, and two tracks, of one hash (parse_idmap_hash2, a * K ^ b,
 * taken apart): stream 5 of SIM device 0, and a stream of a damaged
 * record's vendor and device. Each keeps its own Wait Time and its own
 * track. */
static void test_same_hash(void)
{
	uint64_t k = parse_idmap_hash2(1, 0), kinv = k;
	for (int i = 0; i < 6; i++)   /* Newton: k * kinv == 1 mod 2^64 */
		kinv *= 2 - k * kinv;
	uint64_t a1 = (uint64_t)RAW_VENDOR_SIM << 32, b1 = 5, delta = 0x77;
	uint64_t a2 = ((a1 * k) ^ delta) * kinv, b2 = b1 ^ delta;
	CHECK(a2 != a1 && parse_idmap_hash2(a1, b1) == parse_idmap_hash2(a2, b2));

	char *run = rg_tmpdir("bad-keys-hash");
	write_min_info(run);
	main_thread(run);
	struct raw_writer w;
	char *d = rg_path(run, "raw/700.0");
	CHECK(rg_open(&w, d, "dev.raw", 700, 0, RAW_STREAM_DEVICE, RAW_CLOCK_MONOTONIC,
		      "dev") == 0);
	kernel(&w, T + 100, T + 110, a1, (uint32_t)b1);
	kernel(&w, T + 200, T + 260, a2, (uint32_t)b2);
	kernel(&w, T + 300, T + 310, a1, (uint32_t)b1);
	raw_writer_close(&w);
	struct parsed p;
	parse(run, &p);
	CHECK(p.st == PARSE_OK && p.r.dev_tasks == 3);
	char want[128];
	snprintf(want, sizeof want, "\n,%u,N/A,0,%u,k,KERNEL,N/A,DEVICE,10000000.200,0.060,0.000,",
		 (uint32_t)a2, (uint32_t)b2);
	CHECK_CONTAINS(p.kernel_csv, want);
	CHECK_CONTAINS(p.kernel_csv, "\n,0,N/A,0,5,k,KERNEL,N/A,SIM,10000000.300,0.010,0.190,");
	CHECK_CONTAINS(p.trace_text, "\"pid\":0,\"tid\":5,\"ts\":0,\"args\":{\"name\":\"stream 5\"}");
	snprintf(want, sizeof want, "\"pid\":%u,\"tid\":%u,\"ts\":0,\"args\":{\"name\":\"stream %u\"}",
		 (uint32_t)a2, (uint32_t)b2, (uint32_t)b2);
	CHECK_CONTAINS(p.trace_text, want);
	parsed_free(&p);
	free(d);
	rg_rmrf(run);
	free(run);
}

int main(void)
{
	B = raw_clock_ns(CLOCK_MONOTONIC);
	T = B + 10 * SEC;
	test_unique_keys();
	test_same_hash();
	return unit_done();
}
