#define _GNU_SOURCE
#include "launcher/cuda/sampler_nvml.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVML_CLOCK_SM 1
#define NVML_TEMPERATURE_GPU 0

/* A function and, for versioned ones, the name older drivers export. */
static const struct {
	const char *name, *fallback;
	size_t off;
	int optional;
} nvml_syms[] = {
	{ "nvmlInit_v2", "nvmlInit", offsetof(struct nvml_lib, init), 0 },
	{ "nvmlShutdown", NULL, offsetof(struct nvml_lib, shutdown), 0 },
	{ "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount", offsetof(struct nvml_lib, get_count), 0 },
	{ "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex",
	  offsetof(struct nvml_lib, get_handle), 0 },
	{ "nvmlDeviceGetUtilizationRates", NULL, offsetof(struct nvml_lib, get_util), 0 },
	{ "nvmlDeviceGetMemoryInfo", NULL, offsetof(struct nvml_lib, get_memory), 0 },
	{ "nvmlDeviceGetPowerUsage", NULL, offsetof(struct nvml_lib, get_power), 0 },
	{ "nvmlDeviceGetClockInfo", NULL, offsetof(struct nvml_lib, get_clock), 0 },
	{ "nvmlDeviceGetTemperature", NULL, offsetof(struct nvml_lib, get_temperature), 0 },
	{ "nvmlDeviceGetName", NULL, offsetof(struct nvml_lib, get_name), 0 },
	{ "nvmlDeviceGetUUID", NULL, offsetof(struct nvml_lib, get_uuid), 0 },
	{ "nvmlDeviceGetCudaComputeCapability", NULL, offsetof(struct nvml_lib, get_cc), 1 },
};

static void *nvml_dlopen(const char *const *names, char *why, size_t len)
{
	static const char *const dflt[] = { "libnvidia-ml.so.1", "libnvidia-ml.so", NULL };
	const char *env = getenv("PROF_NVML_LIBRARY");
	const char *only[] = { env, NULL };
	if (!names)   /* the override is the only one tried: tests, odd installs */
		names = env && *env ? only : dflt;
	for (const char *const *n = names; *n; n++) {
		void *h = dlopen(*n, RTLD_NOW | RTLD_LOCAL);
		if (h)
			return h;
	}
	snprintf(why, len, "no NVML library (libnvidia-ml.so.1 comes with the NVIDIA driver)");
	return NULL;
}

static int nvml_resolve(struct nvml_lib *l, char *why, size_t len)
{
	for (size_t i = 0; i < sizeof nvml_syms / sizeof nvml_syms[0]; i++) {
		void *f = dlsym(l->handle, nvml_syms[i].name);
		if (!f && nvml_syms[i].fallback)
			f = dlsym(l->handle, nvml_syms[i].fallback);
		if (!f && !nvml_syms[i].optional) {
			snprintf(why, len, "the NVML library lacks %s", nvml_syms[i].name);
			return -ENOSYS;
		}
		memcpy((char *)l + nvml_syms[i].off, &f, sizeof f);   /* POSIX dlsym */
	}
	return 0;
}

static int nvml_devices(struct nvml_lib *l, char *why, size_t len)
{
	unsigned n = 0;
	nvml_return_t r = l->init();
	if (r != 0) {
		snprintf(why, len, "nvmlInit failed (NVML error %d): no usable NVIDIA driver", r);
		return -EIO;
	}
	if ((r = l->get_count(&n)) != 0) {
		snprintf(why, len, "nvmlDeviceGetCount failed (NVML error %d)", r);
		l->shutdown();
		return -EIO;
	}
	for (unsigned i = 0; i < n && l->count < NVML_MAX_DEVICES; i++)
		if (l->get_handle(i, &l->dev[l->count]) == 0)
			l->count++;
	return 0;
}

int nvml_open(struct nvml_lib *l, const char *const *names, char *why, size_t len)
{
	memset(l, 0, sizeof *l);
	if (!(l->handle = nvml_dlopen(names, why, len)))
		return -ENOENT;
	int rc = nvml_resolve(l, why, len);
	if (!rc)
		rc = nvml_devices(l, why, len);
	if (rc) {
		dlclose(l->handle);
		memset(l, 0, sizeof *l);
	}
	return rc;
}

void nvml_close(struct nvml_lib *l)
{
	if (!l->handle)
		return;
	l->shutdown();
	dlclose(l->handle);
	memset(l, 0, sizeof *l);
}

void nvml_read_info(const struct nvml_lib *l, unsigned i, struct raw_dev_info *out,
		    char *name, char *uuid)
{
	struct nvml_memory m = { 0, 0, 0 };
	int major = 0, minor = 0;
	memset(out, 0, sizeof *out);
	out->device = i;
	out->vendor = RAW_VENDOR_CUDA;
	if (l->get_memory(l->dev[i], &m) == 0)
		out->total_mem_bytes = m.total;
	if (l->get_cc && l->get_cc(l->dev[i], &major, &minor) == 0) {
		out->compute_major = (uint32_t)major;
		out->compute_minor = (uint32_t)minor;
	}
	if (l->get_name(l->dev[i], name, NVML_NAME_MAX) != 0)
		name[0] = 0;
	if (l->get_uuid(l->dev[i], uuid, NVML_UUID_MAX) != 0)
		uuid[0] = 0;
	name[NVML_NAME_MAX - 1] = uuid[NVML_UUID_MAX - 1] = 0;
}

void nvml_read_sample(const struct nvml_lib *l, unsigned i, struct raw_dev_sample *out)
{
	nvml_device_t d = l->dev[i];
	struct nvml_utilization u = { 0, 0 };
	struct nvml_memory m = { 0, 0, 0 };
	memset(out, 0, sizeof *out);
	out->device = i;
	out->vendor = RAW_VENDOR_CUDA;
	if (l->get_util(d, &u) == 0) {
		out->util_pct = u.gpu;
		out->mem_util_pct = u.memory;
	}
	if (l->get_memory(d, &m) == 0) {
		out->mem_used_bytes = m.used;
		out->mem_total_bytes = m.total;
	}
	if (l->get_power(d, &out->power_mw) != 0)
		out->power_mw = 0;
	if (l->get_clock(d, NVML_CLOCK_SM, &out->sm_clock_mhz) != 0)
		out->sm_clock_mhz = 0;
	if (l->get_temperature(d, NVML_TEMPERATURE_GPU, &out->temperature_c) != 0)
		out->temperature_c = 0;
}

/* The NVML index an entry of CUDA_VISIBLE_DEVICES names; -1 none, -2 one
 * that cannot be mapped. */
static int nvml_entry(const char *e, size_t len, const char (*uuids)[NVML_UUID_MAX],
		      unsigned count)
{
	if (len >= 4 && strncmp(e, "MIG-", 4) == 0)
		return -2;
	if (len > 4 && strncmp(e, "GPU-", 4) == 0) {
		for (unsigned i = 0; i < count; i++)
			if (strncmp(uuids[i], e, len) == 0)
				return (int)i;
		return -1;
	}
	char *end;
	long v = strtol(e, &end, 10);
	return end == e + len && len && v >= 0 && (unsigned long)v < count ? (int)v : -1;
}

int nvml_cuda_order(const char *cvd, const char (*uuids)[NVML_UUID_MAX], unsigned count,
		    unsigned *out)
{
	unsigned n = 0;
	if (!cvd) {
		for (; n < count; n++)
			out[n] = n;
		return (int)n;
	}
	for (const char *p = cvd; *p && n < count;) {
		while (*p == ' ')
			p++;
		size_t len = strcspn(p, ", ");
		int idx = nvml_entry(p, len, uuids, count);
		if (idx == -2)
			return -1;
		if (idx < 0)
			break;
		out[n++] = (unsigned)idx;
		p += len;
		p += strspn(p, ", ");
	}
	return (int)n;
}
