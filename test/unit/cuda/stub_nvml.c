/*
 * A stand-in libnvidia-ml for test_cuda_nvml: two devices with fixed,
 * device-dependent readings, and the exported names of the real library.
 * Device 1 cannot report power (NVML_ERROR_NOT_SUPPORTED), as some boards.
 */
#include <stdio.h>
#include <string.h>

typedef struct stub_dev { unsigned index; } *nvmlDevice_t;
struct util { unsigned int gpu, memory; };
struct mem { unsigned long long total, free, used; };

static struct stub_dev devs[2] = { { 0 }, { 1 } };
static int inited;

#define EXPORT __attribute__((visibility("default")))

EXPORT int nvmlInit_v2(void) { inited++; return 0; }
EXPORT int nvmlShutdown(void) { inited--; return 0; }
EXPORT int stub_nvml_inited(void) { return inited; }

EXPORT int nvmlDeviceGetCount_v2(unsigned int *n)
{
	*n = 2;
	return 0;
}

EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
	if (i >= 2)
		return 2;   /* NVML_ERROR_INVALID_ARGUMENT */
	*d = &devs[i];
	return 0;
}

EXPORT int nvmlDeviceGetUtilizationRates(nvmlDevice_t d, struct util *u)
{
	u->gpu = 50 + d->index;
	u->memory = 20 + d->index;
	return 0;
}

EXPORT int nvmlDeviceGetMemoryInfo(nvmlDevice_t d, struct mem *m)
{
	m->total = 80ull << 30;
	m->used = (1ull + d->index) << 30;
	m->free = m->total - m->used;
	return 0;
}

EXPORT int nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw)
{
	if (d->index == 1)
		return 3;   /* NVML_ERROR_NOT_SUPPORTED */
	*mw = 300000;
	return 0;
}

EXPORT int nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int *mhz)
{
	*mhz = type == 1 ? 1980 : 0;   /* NVML_CLOCK_SM */
	return 0;
}

EXPORT int nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *c)
{
	*c = sensor == 0 ? 60 + d->index : 0;
	return 0;
}

EXPORT int nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int len)
{
	snprintf(name, len, "Stub GPU %u", d->index);
	return 0;
}

EXPORT int nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int len)
{
	snprintf(uuid, len, "GPU-0000000%u-0000-0000-0000-000000000000", d->index);
	return 0;
}

EXPORT int nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int *major, int *minor)
{
	*major = 9;
	*minor = 0;
	return 0;
}
