/*
 * kernel_details.csv's rows wait in memory for their step and go out as
 * steps end; rows that would wait for more than OUT_KERNEL_WAIT_MAX bytes
 * (one very long step) go through the spill instead, with every row after
 * them. Either way each row must carry the step of its launch, in the
 * order the tasks came, with --step-list keeping only the listed steps:
 * checked row by row against the generated launches, for short steps only,
 * for a step too long to wait in memory, and for a second process that
 * never marks a step (its rows hold every later row back until the end).
 */
#include "unit/parsed.h"

#include "raw/raw_clock.h"
#include "outputs/tables/out_kernel.h"

#define STEP_NS 100000000ull   /* 0.1 s */
#define GAP_NS 1000ull         /* between launches */

struct plan {
	uint64_t per_step[4];     /* launches in steps 1..3, then after the last */
	int second;               /* a second process launches too: 1 without steps,
				   * 2 with steps ending half a step later */
};

/* Process 700: recording on at T + 10, steps 1..3 end at T + k * STEP_NS. */
static void main_thread(const char *run)
{
	struct raw_writer w;
	char *d = rg_path(run, "raw/700.0");
	CHECK(rg_open(&w, d, "t700.raw", 700, 700, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC,
		      "python") == 0);
	rg_recording(&w, T + 10, 1, RAW_CAUSE_START);
	for (uint64_t k = 1; k <= 3; k++)
		rg_step(&w, T + k * STEP_NS, k);
	raw_writer_close(&w);
	free(d);
}

/* The launch time of the i-th launch of step k (k 4: after the last). */
static uint64_t launch_at(uint64_t k, uint64_t i)
{
	return T + (k - 1) * STEP_NS + 1000 + i * GAP_NS;
}

/* Launches and their kernels; correlation = launch number + 1, a kernel
 * 500 ns after its launch. */
static void device(const char *run, int pid, const struct plan *pl)
{
	struct raw_writer w;
	char dir[64];
	snprintf(dir, sizeof dir, "raw/%d.0", pid);
	char *d = rg_path(run, dir);
	CHECK(rg_open(&w, d, "dev.raw", pid, 0, RAW_STREAM_DEVICE, RAW_CLOCK_MONOTONIC, "dev") == 0);
	uint64_t corr = 1;
	for (uint64_t k = 1; k <= 4; k++) {
		for (uint64_t i = 0; i < pl->per_step[k - 1]; i++, corr++) {
			uint64_t t = launch_at(k, i) + (pid == 700 ? 0 : 100);
			rg_dev_api(&w, t, t + 200, corr, pid, "cudaLaunchKernel");
			rg_dev_task(&w, RAW_DEV_KERNEL, t + 500, t + 700, corr, 0, pid == 700 ? 7 : 8,
				    "void waiting_kernel<float>(float const*, float*, int)", 0, 0, 64);
		}
	}
	raw_writer_close(&w);
	free(d);
}

static char *make_run(const char *name, const struct plan *pl)
{
	char *run = rg_tmpdir(name);
	write_min_info(run);
	main_thread(run);
	device(run, 700, pl);
	if (pl->second) {
		struct raw_writer w;
		char *d = rg_path(run, "raw/701.0");
		CHECK(rg_open(&w, d, "t701.raw", 701, 701, RAW_STREAM_THREAD, RAW_CLOCK_MONOTONIC,
			      "worker") == 0);
		rg_recording(&w, T + 10, 1, RAW_CAUSE_START);
		for (uint64_t k = 1; pl->second == 2 && k <= 3; k++)
			rg_step(&w, T + k * STEP_NS + STEP_NS / 2, k);
		raw_writer_close(&w);
		free(d);
		device(run, 701, pl);
	}
	return run;
}

/* The step of launch group k (k 4: after process 700's last step) in the
 * process; 0: none. Launches of group k come just after 700's step k-1
 * ended, so in 701's steps (ending half a step later) they fall in step
 * k-1, the first two groups in its step 1. */
static uint64_t step_of(const struct plan *pl, int second, uint64_t k)
{
	if (!second)
		return k <= 3 ? k : 0;
	if (pl->second != 2)
		return 0;
	return k == 1 ? 1 : k - 1;
}

static int listed(const uint64_t *want, size_t n, uint64_t k)
{
	for (size_t i = 0; i < n; i++)
		if (want[i] == k)
			return 1;
	return n == 0;
}

/* Every row: Step Id, Device_id, Model ID, Task ID, Stream ID, ... */
static void check_rows(const char *csv, const struct plan *pl, const uint64_t *want, size_t nwant)
{
	const char *line = csv ? strchr(csv, '\n') : NULL;
	CHECK(line != NULL);
	if (!line)
		return;
	line++;
	uint64_t rows = 0, bad = 0, expect = 0, last_corr[2] = { 0, 0 };
	for (uint64_t k = 1; k <= 4; k++) {
		for (int second = 0; second <= (pl->second != 0); second++) {
			uint64_t st = step_of(pl, second, k);
			if (st ? listed(want, nwant, st) : nwant == 0)
				expect += pl->per_step[k - 1];
		}
	}
	while (*line) {
		char step[24] = "", one[256];
		unsigned long long dev, corr, stream;
		int n = 0;
		/* one line at a time: sscanf measures the whole string it reads */
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		snprintf(one, sizeof one, "%.*s", (int)(len < 255 ? len : 255), line);
		if (*one != ',')
			sscanf(one, "%23[0-9]%n", step, &n);
		if (sscanf(one + n, ",%llu,N/A,%llu,%llu,", &dev, &corr, &stream) != 3) {
			bad++;
			break;
		}
		/* launch number corr - 1: its step from the plan */
		uint64_t k = 1, i = corr - 1;
		while (k < 4 && i >= pl->per_step[k - 1])
			i -= pl->per_step[k++ - 1];
		int second = stream == 8;
		uint64_t st = step_of(pl, second, k);
		char want_step[24] = "";
		if (st)
			snprintf(want_step, sizeof want_step, "%" PRIu64, st);
		bad += strcmp(step, want_step) != 0;
		bad += st ? !listed(want, nwant, st) : nwant != 0;
		bad += corr <= last_corr[second];   /* in the order they came */
		last_corr[second] = corr;
		rows++;
		line = strchr(line, '\n');
		if (!line)
			break;
		line++;
	}
	CHECK(bad == 0);
	CHECK(rows == expect);
}

static void run_case(const char *name, const struct plan *pl, const uint64_t *want, size_t nwant)
{
	char *run = make_run(name, pl);
	struct parsed p;
	parse_steps(run, want, nwant, &p);
	CHECK(p.st == PARSE_OK && p.done);
	check_rows(p.kernel_csv, pl, want, nwant);
	parsed_free(&p);
	rg_rmrf(run);
	free(run);
}

int main(void)
{
	B = raw_clock_ns(CLOCK_MONOTONIC);
	T = B + 10 * SEC;
	static const uint64_t odd[] = { 1, 3 };
	struct plan short_steps = { { 200, 300, 100, 50 }, 0 };
	/* step 2 alone is more than OUT_KERNEL_WAIT_MAX of rows */
	struct plan long_step = { { 200, OUT_KERNEL_WAIT_MAX / 100 + 1000, 100, 50 }, 0 };
	struct plan two = { { 200, 300, 100, 50 }, 1 };
	struct plan staggered = { { 200, 300, 100, 50 }, 2 };
	run_case("kwait-short", &short_steps, NULL, 0);
	run_case("kwait-short-odd", &short_steps, odd, 2);
	run_case("kwait-long", &long_step, NULL, 0);
	run_case("kwait-long-odd", &long_step, odd, 2);
	run_case("kwait-two", &two, NULL, 0);
	run_case("kwait-staggered", &staggered, NULL, 0);
	run_case("kwait-staggered-odd", &staggered, odd, 2);
	return unit_done();
}
