/*
 * device_usage.csv: one row per sample of the launcher's device sampler
 * (NVML for CUDA devices), written as the samples go by.
 *
 *   Timestamp(us)           µs since ts 0 (as in trace_view.json)
 *   Device_id, Device Type  the device index and its family (CUDA, SIM)
 *   Utilization(%)          compute utilisation over the sampler's period
 *   Memory Utilization(%)   memory-controller utilisation
 *   Memory Used(MB), Memory Total(MB)   MB = 2^20 bytes, three decimals
 *   Power(W)                three decimals
 *   SM Clock(MHz), Temperature(C)
 */
#ifndef PROF_OUT_DEV_USAGE_H
#define PROF_OUT_DEV_USAGE_H

#include <stdint.h>
#include "common/csv_out.h"
#include "outputs/out_file.h"
#include "raw/raw_format.h"

#define OUT_DEV_USAGE_HEADER "Timestamp(us),Device_id,Device Type,Utilization(%)," \
	"Memory Utilization(%),Memory Used(MB),Memory Total(MB),Power(W),SM Clock(MHz)," \
	"Temperature(C)"

struct out_dev_usage {
	struct out_file file;
	struct csv c;
	uint64_t base;
};

int out_dev_usage_open(struct out_dev_usage *u, const char *dir, uint64_t base_mono_ns);
void out_dev_usage_row(struct out_dev_usage *u, uint64_t ns, const struct raw_dev_sample *s);
int out_dev_usage_close(struct out_dev_usage *u);
void out_dev_usage_abort(struct out_dev_usage *u);

/* Not a device: work a process's host did for a device-like task (the
 * collectives of torch.distributed's CPU backends). Parse-only: the raw
 * format's vendors start at 1 and stay small. */
#define OUT_VENDOR_HOST 0x100u

/* "CUDA", "SIM", "HOST", or "DEVICE" for a family this prof does not know. */
const char *out_vendor_name(uint32_t vendor);

#endif
