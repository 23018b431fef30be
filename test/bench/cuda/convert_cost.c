/*
 * convert_cost: what the CUDA backend's converter (CUPTI record -> raw
 * record, on CUPTI's buffer thread, not the program's) costs per record:
 * kernels, cudaEventRecord's CUDA_EVENT records, and the event syncs that
 * look their record up, the last with few events reused (PyTorch's) and
 * with an event per wait that never comes back (the table full, the
 * oldest given up). Built only with the CUPTI headers.
 *
 *   build/test/bench/convert_cost [N]
 *
 * Prints the median of 9 rounds of N records, in ns per record.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti.h>

#include "agent/device/cuda/backend_convert.h"

#define ROUNDS 9

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

enum job { JOB_KERNEL, JOB_EVENT, JOB_WAIT_REUSED, JOB_WAIT_FRESH };

/* One round: n records of the job, through a fresh converter. */
static double round_ns(enum job job, unsigned n)
{
	struct cuda_conv c;
	struct cuda_out o;
	cuda_conv_init(&c);
	c.version = 130001;
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof k);
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = 1000, k.end = 2000, k.streamId = 7, k.name = "_Z6squarePfi";
	CUpti_ActivityCudaEvent2 e;
	memset(&e, 0, sizeof e);
	e.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
	e.streamId = 7;
	CUpti_ActivitySynchronization2 s;
	memset(&s, 0, sizeof s);
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
	s.start = 1000, s.end = 1001, s.streamId = 9;
	double t0 = now_ns();
	for (unsigned i = 1; i <= n; i++) {
		uint32_t event = job == JOB_WAIT_FRESH ? i : i % 64;
		switch (job) {
		case JOB_KERNEL:
			k.correlationId = i;
			cuda_convert(&c, &k, &o);
			break;
		case JOB_EVENT:
			e.eventId = event, e.correlationId = i;
			cuda_convert(&c, &e, &o);
			break;
		default:
			e.eventId = event, e.correlationId = 2 * i;
			cuda_convert(&c, &e, &o);
			s.cudaEventId = event, s.correlationId = 2 * i + 1;
			cuda_convert(&c, &s, &o);
			break;
		}
	}
	double per = (now_ns() - t0) / n;
	cuda_conv_free(&c);
	return per;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 1000000u;
	static const char *const names[] = { "kernel", "event record",
		"event record + wait (64 events reused)", "event record + wait (a new event each)" };
	for (int job = JOB_KERNEL; job <= JOB_WAIT_FRESH; job++) {
		double v[ROUNDS];
		for (int r = 0; r < ROUNDS; r++)
			v[r] = round_ns((enum job)job, n);
		qsort(v, ROUNDS, sizeof v[0], cmp_double);
		printf("%-42s %7.1f ns per record%s\n", names[job], v[ROUNDS / 2],
		       job >= JOB_WAIT_REUSED ? " pair" : "");
	}
	return 0;
}
