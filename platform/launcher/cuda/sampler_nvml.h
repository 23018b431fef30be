/*
 * NVML, opened with dlopen (libnvidia-ml.so.1 ships with the driver; no
 * nvml.h is needed: the few types are declared here, as nvtop does). The
 * launcher's sampler reads it; it never creates a CUDA context.
 */
#ifndef PROF_CUDA_SAMPLER_NVML_H
#define PROF_CUDA_SAMPLER_NVML_H

#include <stddef.h>
#include <stdint.h>

#include "raw/raw_format.h"

#define NVML_MAX_DEVICES 64
#define NVML_NAME_MAX 96      /* NVML_DEVICE_NAME_V2_BUFFER_SIZE */
#define NVML_UUID_MAX 96      /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */

typedef int nvml_return_t;                    /* nvmlReturn_t: 0 success */
typedef struct nvml_device_st *nvml_device_t; /* nvmlDevice_t */
struct nvml_utilization { unsigned int gpu, memory; };            /* percent */
struct nvml_memory { unsigned long long total, free, used; };     /* bytes, v1 */

struct nvml_lib {
	void *handle;
	unsigned count;
	nvml_device_t dev[NVML_MAX_DEVICES];
	nvml_return_t (*init)(void);
	nvml_return_t (*shutdown)(void);
	nvml_return_t (*get_count)(unsigned int *);
	nvml_return_t (*get_handle)(unsigned int, nvml_device_t *);
	nvml_return_t (*get_util)(nvml_device_t, struct nvml_utilization *);
	nvml_return_t (*get_memory)(nvml_device_t, struct nvml_memory *);
	nvml_return_t (*get_power)(nvml_device_t, unsigned int *);          /* mW */
	nvml_return_t (*get_clock)(nvml_device_t, int, unsigned int *);     /* MHz */
	nvml_return_t (*get_temperature)(nvml_device_t, int, unsigned int *);
	nvml_return_t (*get_name)(nvml_device_t, char *, unsigned int);
	nvml_return_t (*get_uuid)(nvml_device_t, char *, unsigned int);
	nvml_return_t (*get_cc)(nvml_device_t, int *, int *);               /* optional */
};

/* Opens the first of `names` that loads (NULL: $PROF_NVML_LIBRARY when set,
 * else libnvidia-ml.so.1, then libnvidia-ml.so), resolves the functions,
 * initialises NVML and takes every device's handle. 0; -ENOENT when no
 * library loads; -ENOSYS when one lacks a function; -EIO when NVML fails
 * (no driver). On error `why` says it and nothing stays open. */
int nvml_open(struct nvml_lib *l, const char *const *names, char *why, size_t len);
void nvml_close(struct nvml_lib *l);

/* CUDA's numbering of NVML's devices under CUDA_VISIBLE_DEVICES (`cvd`;
 * NULL: unset, every device in NVML's order): out[k] is the NVML index of
 * CUDA device k, so samples carry the ids the program's kernels carry.
 * An integer names an NVML index (CUDA's order is NVML's PCI order with
 * CUDA_DEVICE_ORDER=PCI_BUS_ID, and on a machine of one GPU model);
 * "GPU-..." a uuid or a prefix of one; as in CUDA, an entry that names
 * nothing hides itself and every later one. Returns the count, or -1 for
 * an entry that cannot be mapped here (MIG): keep NVML's numbering. */
int nvml_cuda_order(const char *cvd, const char (*uuids)[NVML_UUID_MAX], unsigned count,
		    unsigned *out);

/* Device `i`'s properties, name and uuid ("GPU-..."): what joins it to
 * CUPTI's device records. */
void nvml_read_info(const struct nvml_lib *l, unsigned i, struct raw_dev_info *out,
		    char *name, char *uuid);
/* One sample of device `i`; fields NVML cannot give stay 0. */
void nvml_read_sample(const struct nvml_lib *l, unsigned i, struct raw_dev_sample *out);

#endif
