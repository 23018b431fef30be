/*
 * The host sampler: a launcher thread that samples the profiled process
 * tree, the system and its network interfaces every interval, as host_sys
 * lists them, and writes RAW_REC_HOST_SAMPLE and RAW_REC_HOST_NET records
 * into raw/launcher/host.raw.
 *
 * A sample's CPU percentages and I/O bytes are differences from the
 * previous sample, counted only for processes present in both; the first
 * sample has nothing to differ from, so those fields are 0 in it (the
 * process count, threads, RSS and system memory are real). The same holds
 * for an interface's counts (sampler_net.c).
 */
#ifndef PROF_SAMPLER_H
#define PROF_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "raw/raw_format.h"
#include "launcher/procfs.h"

#define SAMPLER_STREAM "host.raw"

/* What to sample: RAW_HOST_* (the host sample's parts) and this. */
#define SAMPLER_NET 0x100u            /* RAW_REC_HOST_NET records */
#define SAMPLER_NET_MAX 64            /* interfaces followed; more are left out */

struct sampler_prev {
	pid_t pid;
	uint64_t start_ticks, utime, stime, read_bytes, write_bytes;
};

/* A network interface as the previous sample saw it. */
struct sampler_if {
	struct procfs_netdev last;
	uint32_t speed_mbps;
	bool idle;                     /* its last record said nothing moved */
};

/* What one sample needs of the previous one. */
struct sampler_state {
	pid_t root;                    /* the tree is root's descendants */
	uint32_t parts;                /* RAW_HOST_*, SAMPLER_NET */
	long clk_tck;
	struct sampler_prev *prev;     /* sorted by pid */
	size_t nprev;
	struct procfs_cpu prev_cpu;
	uint64_t prev_ns;              /* 0: no previous sample */
	struct sampler_if ifs[SAMPLER_NET_MAX];
	size_t nifs;
	uint64_t net_prev_ns;          /* 0: no previous network sample */
};

void sampler_state_init(struct sampler_state *st, pid_t root, uint32_t parts);
void sampler_state_free(struct sampler_state *st);

/* Takes one sample of the RAW_HOST_* parts at `now_ns` (CLOCK_MONOTONIC).
 * 0 or -errno. */
int sampler_take(struct sampler_state *st, uint64_t now_ns, struct raw_host_sample *out);

/* The network's records for a sample at `now_ns`: at most SAMPLER_NET_MAX
 * into `out`, names[i] naming out[i]'s interface (its name_id is left to
 * the writer). Returns how many. */
size_t sampler_net_take(struct sampler_state *st, uint64_t now_ns, struct raw_host_net *out,
			const char **names);

struct sampler;

/* Starts the thread sampling `parts` (RAW_HOST_*, SAMPLER_NET; not 0);
 * its stream is opened under `dirfd` before this returns, counted in
 * *disk_full when a full filesystem stops it (raw_writer_opts; NULL: not
 * counted). 0 or -errno (the stream could not be created). */
int sampler_start(struct sampler **out, int dirfd, uint32_t interval_ms, pid_t root,
		  uint32_t parts, uint64_t *disk_full);

/* Stops the thread, closes its stream and frees it; returns the number of
 * samples written. NULL is accepted. */
uint64_t sampler_stop(struct sampler *s);

#endif
