/*
 * libcupti, opened with dlopen and used through this table only: the
 * agent never links it, so one agent serves programs on
 * CUDA 11, 12 and 13, and a process without CUDA never maps it.
 */
#ifndef PROF_CUDA_BACKEND_CUPTI_H
#define PROF_CUDA_BACKEND_CUPTI_H

#include <limits.h>
#include <stdint.h>

#include <cupti.h>

typedef int (*cupti_nvtx_init_fn)(void *);

struct cupti_api {
	void *handle;
	char path[PATH_MAX];
	uint32_t version;                 /* cuptiGetVersion() */
	/* Required. */
	__typeof__(cuptiGetVersion) *GetVersion;
	__typeof__(cuptiGetResultString) *GetResultString;
	__typeof__(cuptiSubscribe) *Subscribe;
	__typeof__(cuptiUnsubscribe) *Unsubscribe;
	__typeof__(cuptiEnableCallback) *EnableCallback;
	__typeof__(cuptiGetTimestamp) *GetTimestamp;
	__typeof__(cuptiActivityRegisterCallbacks) *ActivityRegisterCallbacks;
	__typeof__(cuptiActivityEnable) *ActivityEnable;
	__typeof__(cuptiActivityDisable) *ActivityDisable;
	__typeof__(cuptiActivityGetNextRecord) *ActivityGetNextRecord;
	__typeof__(cuptiActivityGetNumDroppedRecords) *ActivityGetNumDroppedRecords;
	__typeof__(cuptiActivityFlushAll) *ActivityFlushAll;
	/* Optional: NULL in older CUPTI. */
	__typeof__(cuptiSubscribe_v2) *Subscribe_v2;                        /* 13.0 */
	__typeof__(cuptiActivityEnableRuntimeApi) *ActivityEnableRuntimeApi; /* 12.5 */
	__typeof__(cuptiActivityEnableDriverApi) *ActivityEnableDriverApi;
	__typeof__(cuptiSetThreadIdType) *SetThreadIdType;
	__typeof__(cuptiActivityEnableAndDump) *ActivityEnableAndDump;
	cupti_nvtx_init_fn InitializeInjectionNvtx2;   /* CUPTI as NVTX injection */
	cupti_nvtx_init_fn InitializeInjectionNvtx;
	cupti_nvtx_init_fn InitializeInjectionNvtxExtension;
};

/* The process's libcupti, opened (backend_search.h order) and resolved on
 * the first call; NULL when there is none or it lacks a required function
 * (logged once). Thread-safe; never opens a second one. */
const struct cupti_api *cupti_get(void);

/* CUPTI's text for an error code. */
const char *cupti_error(const struct cupti_api *api, CUptiResult r);

#endif
