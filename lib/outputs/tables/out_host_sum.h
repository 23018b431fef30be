/*
 * host_disk_usage.csv and host_network_usage.csv: Ascend's host summaries
 * (msprof's headers; share/prof/doc/outputs.md), from the host samples
 * that host_sys `disk` and `network` ask for. Each file is written only
 * when its samples exist, as Ascend writes them only when host_sys lists
 * them; a parse without them removes one an earlier parse left.
 *
 * Peak: the highest rate of one sample. Recommend: msprof's sizing hint,
 * the 98th percentile of the samples that moved anything divided by 0.8
 * (headroom). Disk: the process tree's storage reads and writes, one row
 * "host". Network: a row per interface, Ascend's four columns (Netcard
 * Speed from the interface's rated speed, empty when unknown: loopback,
 * virtual interfaces), then the interface's name and what it moved over
 * the run.
 */
#ifndef PROF_OUT_HOST_SUM_H
#define PROF_OUT_HOST_SUM_H

#include <stddef.h>
#include <stdint.h>
#include "outputs/out_rate.h"
#include "raw/raw_format.h"

#define OUT_DISK_SUM_HEADER "Device_id,Peak Disk Read(KB/s),Recommend Disk Read(KB/s)," \
	"Peak Disk Write(KB/s),Recommend Disk Write(KB/s)"
#define OUT_NET_SUM_HEADER "Device_id,Netcard Speed(KB/s),Peak Used Speed(KB/s)," \
	"Recommend Speed(KB/s),Interface,Rx Bytes,Rx Packets,Tx Bytes,Tx Packets"

struct out_host_if {
	const char *name;            /* in the stream's mapping */
	uint32_t speed_mbps;
	uint64_t rx_bytes, rx_packets, tx_bytes, tx_packets;
	struct out_rate used;        /* rx + tx */
};

struct out_host_sum {
	uint64_t disk_samples;
	struct out_rate read, write;
	struct out_host_if *ifs;     /* in order of first sight */
	size_t nifs, capifs;
};

void out_host_sum_init(struct out_host_sum *h);
/* A sample of the tree's storage I/O, `interval_ns` after the previous
 * one (0: the first, which only counts as there). */
void out_host_sum_disk(struct out_host_sum *h, uint64_t read_bytes, uint64_t write_bytes,
		       uint64_t interval_ns);
/* One interface's record. 0 or -ENOMEM (not counted). */
int out_host_sum_net(struct out_host_sum *h, const char *name, const struct raw_host_net *n);
/* Writes (or removes) both files in dir. 0 or a negative errno. */
int out_host_sum_write(const struct out_host_sum *h, const char *dir);
void out_host_sum_free(struct out_host_sum *h);

#endif
