/*
 * The NVML sampler: a launcher thread, sibling of the host sampler
 * (platform/launcher/sampler.h), that writes raw/launcher/device.raw
 * (RAW_STREAM_DEVICE_SAMPLES): one RAW_REC_DEV_INFO per GPU at start, then
 * one RAW_REC_DEV_SAMPLE per GPU every interval. It runs in the launcher,
 * not the program: no CUDA context, one sampler for every rank on the
 * host, and it outlives a crashing program.
 *
 * Only the GPUs the program sees (CUDA_VISIBLE_DEVICES, as the launcher
 * hands it on) are sampled, numbered as CUDA numbers them, so samples and
 * kernels name a device alike (see nvml_cuda_order for the assumption on
 * integer entries); the uuid in the info records ("GPU-...") joins them
 * to the CUDA backend's device records whatever the numbering.
 */
#ifndef PROF_CUDA_SAMPLER_H
#define PROF_CUDA_SAMPLER_H

#include <stdint.h>

#define NVML_SAMPLER_STREAM "device.raw"
/* NVML's utilisation is averaged over 1/6 s to 1 s depending on the
 * board; sampling faster repeats values. */
#define NVML_SAMPLER_MIN_MS 100u

struct nvml_sampler;

/* Opens NVML and the stream under `dirfd` and starts the thread, which
 * samples every max(interval_ms, NVML_SAMPLER_MIN_MS). One line saying
 * what happened goes to `log_fd` (-1: none); a full filesystem that stops
 * the stream is counted in *disk_full (NULL: not counted). 0; -ENOENT when
 * this machine has no NVML (nothing started: the normal case without a
 * GPU); another -errno when NVML or the stream failed. */
int nvml_sampler_start(struct nvml_sampler **out, int dirfd, uint32_t interval_ms, int log_fd,
		       uint64_t *disk_full);

/* Stops the thread, closes the stream and NVML; returns the samples
 * written. NULL is accepted. */
uint64_t nvml_sampler_stop(struct nvml_sampler *s);

#endif
