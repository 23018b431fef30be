/*
 * The launcher's side of the device HAL: what the build can do and the
 * device samplers that run beside the program (platform/launcher/cuda/
 * sampler.h). Built in every configuration; without a backend it does
 * nothing, so cmd/ needs no build switches.
 */
#ifndef PROF_LAUNCHER_DEVICE_H
#define PROF_LAUNCHER_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

/* Does the agent carry a backend that CUDA loads through
 * CUDA_INJECTION64_PATH (and NVTX through NVTX_INJECTION64_PATH)? */
bool launcher_device_cuda(void);

struct launcher_device {
	struct nvml_sampler *nvml;
};

/* Starts the samplers this machine supports, writing under `launcher_fd`
 * (raw/launcher/) and saying what started, or why not, in
 * logs/launcher-device.log under `run_fd`; a machine without a GPU simply
 * gets none. A full filesystem that stops their streams is counted in
 * *disk_full (NULL: not counted). */
void launcher_device_start(struct launcher_device *d, int run_fd, int launcher_fd,
			   uint32_t interval_ms, uint64_t *disk_full);
void launcher_device_stop(struct launcher_device *d);

#endif
