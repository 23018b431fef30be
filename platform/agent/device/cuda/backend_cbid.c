#include "agent/device/cuda/backend_cbid.h"

#include <stdio.h>

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include "raw/raw_format.h"

#define COUNT(a) (sizeof (a) / sizeof (a)[0])

/* Getters PyTorch and the CUDA libraries call thousands of times a second
 * (Kineto's list, plus the stream-capture queries every op makes). */
const uint32_t cuda_runtime_blocklist[] = {
	CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaDeviceGetAttribute_v5000,
	CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000,
	CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_ptsz_v10000,
	CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v10010,
	CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_ptsz_v10010,
	CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v2_v11030,
	CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v2_ptsz_v11030,
	CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v12030,
	CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_ptsz_v12030,
	/* the same bookkeeping around NCCL's polls and the caching
	 * allocator: 1176 of 3813 runtime records in a 20-step DDP run over
	 * NCCL on an H200 */
	CUPTI_RUNTIME_TRACE_CBID_cudaThreadExchangeStreamCaptureMode_v10010,
	/* torch 2.x: every error check formats its message (390 calls in a
	 * 30-step CNN on an H100) */
	CUPTI_RUNTIME_TRACE_CBID_cudaGetErrorString_v3020,
};
const size_t cuda_runtime_blocklist_len = COUNT(cuda_runtime_blocklist);

const uint32_t cuda_driver_blocklist[] = {
	CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,
	CUPTI_DRIVER_TRACE_CBID_cuCtxSetCurrent,
	CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice,
	CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice_v2,
	CUPTI_DRIVER_TRACE_CBID_cuCtxGetId,
	CUPTI_DRIVER_TRACE_CBID_cuCtxGetFlags,
	CUPTI_DRIVER_TRACE_CBID_cuDeviceGet,
	CUPTI_DRIVER_TRACE_CBID_cuDeviceGetAttribute,
	CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState,
	CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion,
	CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute,
	CUPTI_DRIVER_TRACE_CBID_cuFuncGetAttribute,
	CUPTI_DRIVER_TRACE_CBID_cuFuncGetName,
	CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress,
	CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2,
	CUPTI_DRIVER_TRACE_CBID_cuGetErrorString,
	CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttribute,
	CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttributes,
	CUPTI_DRIVER_TRACE_CBID_cuStreamIsCapturing,
	CUPTI_DRIVER_TRACE_CBID_cuStreamIsCapturing_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo,
	CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v2,
	CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v2_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v3,
	CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v3_ptsz,
	/* one per cudaLaunchKernel under torch 2.x / CUDA 13 (seen on an H100) */
	CUPTI_DRIVER_TRACE_CBID_cuKernelGetName,
};
const size_t cuda_driver_blocklist_len = COUNT(cuda_driver_blocklist);

const uint32_t cuda_runtime_tid_cbids[] = {
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
	CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
	CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
	CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
	CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_ptsz_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020,
	CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020,
};
const size_t cuda_runtime_tid_cbids_len = COUNT(cuda_runtime_tid_cbids);

/* Triton and other JIT launchers call the driver directly. */
const uint32_t cuda_driver_tid_cbids[] = {
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
	CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async,
	CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async,
	CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
	CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,
	CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
	CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync,
};
const size_t cuda_driver_tid_cbids_len = COUNT(cuda_driver_tid_cbids);

const char *cuda_api_name(uint32_t domain, uint32_t cbid, char *buf, size_t len)
{
	const char *const *names = domain == RAW_API_DRIVER ? cuda_driver_names : cuda_runtime_names;
	unsigned n = domain == RAW_API_DRIVER ? cuda_driver_names_len : cuda_runtime_names_len;
	if (cbid < n && names[cbid])
		return names[cbid];
	snprintf(buf, len, "cbid %u", cbid);
	return buf;
}

static bool cuda_in(const uint32_t *list, size_t n, uint32_t cbid)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == cbid)
			return true;
	return false;
}

bool cuda_api_blocked(uint32_t domain, uint32_t cbid)
{
	if (domain == RAW_API_DRIVER)
		return cuda_in(cuda_driver_blocklist, cuda_driver_blocklist_len, cbid);
	return cuda_in(cuda_runtime_blocklist, cuda_runtime_blocklist_len, cbid);
}
