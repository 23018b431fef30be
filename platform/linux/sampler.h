/*
 * The host sampler: a launcher thread that samples the profiled process
 * tree and the system every interval and writes RAW_REC_HOST_SAMPLE records
 * into raw/launcher/host.raw.
 *
 * A sample's CPU percentages and I/O bytes are differences from the
 * previous sample, counted only for processes present in both; the first
 * sample has nothing to differ from, so those fields are 0 in it (the
 * process count, threads, RSS and system memory are real).
 */
#ifndef PROF_SAMPLER_H
#define PROF_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "raw/raw_format.h"
#include "linux/procfs.h"

#define SAMPLER_STREAM "host.raw"

struct sampler_prev {
	pid_t pid;
	uint64_t start_ticks, utime, stime, read_bytes, write_bytes;
};

/* What one sample needs of the previous one. */
struct sampler_state {
	pid_t root;                    /* the tree is root's descendants */
	long clk_tck;
	struct sampler_prev *prev;     /* sorted by pid */
	size_t nprev;
	struct procfs_cpu prev_cpu;
	uint64_t prev_ns;              /* 0: no previous sample */
};

void sampler_state_init(struct sampler_state *st, pid_t root);
void sampler_state_free(struct sampler_state *st);

/* Takes one sample at `now_ns` (CLOCK_MONOTONIC). 0 or -errno. */
int sampler_take(struct sampler_state *st, uint64_t now_ns, struct raw_host_sample *out);

struct sampler;

/* Starts the thread; its stream is opened under `dirfd` before this
 * returns. 0 or -errno (the stream could not be created). */
int sampler_start(struct sampler **out, int dirfd, uint32_t interval_ms, pid_t root);

/* Stops the thread, closes its stream and frees it; returns the number of
 * samples written. NULL is accepted. */
uint64_t sampler_stop(struct sampler *s);

#endif
