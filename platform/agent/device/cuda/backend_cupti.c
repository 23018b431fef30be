/*
 * Finding, opening and resolving libcupti (see backend_search.h for the
 * order). The inputs of the search come from what the process has mapped
 * (dl_iterate_phdr) and from the environment.
 */
#define _GNU_SOURCE
#include "agent/device/cuda/backend_cupti.h"

#include <dlfcn.h>
#include <link.h>
#include <stdbool.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/device/cuda/backend_search.h"

struct cupti_mapped {
	char cupti[PATH_MAX], cudart[PATH_MAX], torch_dir[PATH_MAX];
	int ncupti;
};

static bool cupti_prefix(const char *base, const char *lib)
{
	size_t n = strlen(lib);
	/* "libcudart.so.12", or a wheel's renamed "libcudart-e409450e.so.11.0" */
	return strncmp(base, lib, n) == 0 && (base[n] == '.' || base[n] == '-');
}

static int cupti_phdr(struct dl_phdr_info *info, size_t size, void *data)
{
	struct cupti_mapped *m = data;
	const char *p = info->dlpi_name, *slash = p ? strrchr(p, '/') : NULL;
	if (!slash)
		return 0;
	const char *base = slash + 1;
	if (cupti_prefix(base, "libcupti") && m->ncupti++ == 0)
		snprintf(m->cupti, sizeof m->cupti, "%s", p);
	else if (cupti_prefix(base, "libcudart") && !m->cudart[0])
		snprintf(m->cudart, sizeof m->cudart, "%s", p);
	else if ((cupti_prefix(base, "libtorch_cuda") || cupti_prefix(base, "libc10_cuda")) &&
		 !m->torch_dir[0])
		snprintf(m->torch_dir, sizeof m->torch_dir, "%.*s", (int)(slash - p), p);
	return 0;
}

static const char *cupti_cuda_home(void)
{
	const char *h = getenv("CUDA_HOME");
	if (!h || !*h)
		h = getenv("CUDA_PATH");
	return h && *h ? h : "/usr/local/cuda";
}

static void *cupti_dlopen(struct cupti_api *api)
{
	struct cupti_mapped m = { .ncupti = 0 };
	dl_iterate_phdr(cupti_phdr, &m);
	if (m.ncupti > 1)
		agent_log("cuda: %d libcupti are mapped already; using %s", m.ncupti, m.cupti);
	struct cupti_search_in in = {
		.loaded_cupti = m.cupti[0] ? m.cupti : NULL,
		.cudart_path = m.cudart[0] ? m.cudart : NULL,
		.torch_lib_dir = m.torch_dir[0] ? m.torch_dir : NULL,
		.cuda_home = cupti_cuda_home(),
	};
	int step = cupti_search(&in, api->path, sizeof api->path);
	static const char *const how[] = { "?", "already mapped", "next to libcudart",
					   "PyTorch's NVIDIA libraries", "CUDA_HOME",
					   "the loader's path" };
	agent_log("cuda: libcupti: %s (%s; libcudart %s)", api->path, how[step],
		  in.cudart_path ? in.cudart_path : "not mapped");
	void *h = step == 1 ? dlopen(api->path, RTLD_NOW | RTLD_NOLOAD) : NULL;
	if (!h)
		h = dlopen(api->path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		agent_log("cuda: cannot open %s: %s; no CUDA activity is recorded", api->path,
			  dlerror());
	return h;
}

static const struct { const char *name; size_t off; int required; } cupti_syms[] = {
	{ "cuptiGetVersion", offsetof(struct cupti_api, GetVersion), 1 },
	{ "cuptiGetResultString", offsetof(struct cupti_api, GetResultString), 1 },
	{ "cuptiSubscribe", offsetof(struct cupti_api, Subscribe), 1 },
	{ "cuptiUnsubscribe", offsetof(struct cupti_api, Unsubscribe), 1 },
	{ "cuptiEnableCallback", offsetof(struct cupti_api, EnableCallback), 1 },
	{ "cuptiGetTimestamp", offsetof(struct cupti_api, GetTimestamp), 1 },
	{ "cuptiActivityRegisterCallbacks", offsetof(struct cupti_api, ActivityRegisterCallbacks), 1 },
	{ "cuptiActivityEnable", offsetof(struct cupti_api, ActivityEnable), 1 },
	{ "cuptiActivityDisable", offsetof(struct cupti_api, ActivityDisable), 1 },
	{ "cuptiActivityGetNextRecord", offsetof(struct cupti_api, ActivityGetNextRecord), 1 },
	{ "cuptiActivityGetNumDroppedRecords",
	  offsetof(struct cupti_api, ActivityGetNumDroppedRecords), 1 },
	{ "cuptiActivityFlushAll", offsetof(struct cupti_api, ActivityFlushAll), 1 },
	{ "cuptiSubscribe_v2", offsetof(struct cupti_api, Subscribe_v2), 0 },
	{ "cuptiActivityEnableRuntimeApi", offsetof(struct cupti_api, ActivityEnableRuntimeApi), 0 },
	{ "cuptiActivityEnableDriverApi", offsetof(struct cupti_api, ActivityEnableDriverApi), 0 },
	{ "cuptiSetThreadIdType", offsetof(struct cupti_api, SetThreadIdType), 0 },
	{ "cuptiActivityEnableAndDump", offsetof(struct cupti_api, ActivityEnableAndDump), 0 },
	{ "InitializeInjectionNvtx2", offsetof(struct cupti_api, InitializeInjectionNvtx2), 0 },
	{ "InitializeInjectionNvtx", offsetof(struct cupti_api, InitializeInjectionNvtx), 0 },
	{ "InitializeInjectionNvtxExtension",
	  offsetof(struct cupti_api, InitializeInjectionNvtxExtension), 0 },
};

static int cupti_resolve(struct cupti_api *api)
{
	for (size_t i = 0; i < sizeof cupti_syms / sizeof cupti_syms[0]; i++) {
		void *f = dlsym(api->handle, cupti_syms[i].name);
		/* POSIX dlsym: a data pointer that holds a function's address. */
		memcpy((char *)api + cupti_syms[i].off, &f, sizeof f);
		if (!f && cupti_syms[i].required) {
			agent_log("cuda: %s lacks %s; no CUDA activity is recorded", api->path,
				  cupti_syms[i].name);
			return -1;
		}
	}
	if (api->GetVersion(&api->version) != CUPTI_SUCCESS)
		api->version = 0;
	return 0;
}

static struct cupti_api cupti_table;

const struct cupti_api *cupti_get(void)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static int state;   /* 0 not tried, 1 usable, -1 failed */
	pthread_mutex_lock(&lock);
	if (state == 0) {
		cupti_table.handle = cupti_dlopen(&cupti_table);
		state = cupti_table.handle && cupti_resolve(&cupti_table) == 0 ? 1 : -1;
		if (state == 1)
			agent_log("cuda: CUPTI API version %u", cupti_table.version);
	}
	pthread_mutex_unlock(&lock);
	return state == 1 ? &cupti_table : NULL;
}

const char *cupti_error(const struct cupti_api *api, CUptiResult r)
{
	const char *s = NULL;
	if (!api || !api->GetResultString || api->GetResultString(r, &s) != CUPTI_SUCCESS || !s)
		return "unknown CUPTI error";
	return s;
}
