/*
 * Names the CUDA backend gives: runtime/driver APIs by callback id (the
 * generated table, the fallback, the blocklist), NCCL collectives from
 * kernel names (old and new NCCL, mangled and demangled), the rank from
 * the environment.
 */
#include <stdlib.h>
#include <string.h>

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include "common/rank.h"
#include "agent/device/cuda/backend_cbid.h"
#include "agent/device/cuda/backend_convert.h"
#include "unit/unit.h"

static const char *rt(uint32_t cbid)
{
	static char buf[CUDA_API_NAME_MAX];
	return cuda_api_name(RAW_API_RUNTIME, cbid, buf, sizeof buf);
}

static const char *drv(uint32_t cbid)
{
	static char buf[CUDA_API_NAME_MAX];
	return cuda_api_name(RAW_API_DRIVER, cbid, buf, sizeof buf);
}

static void test_cbid_names(void)
{
	CHECK_STR(rt(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000), "cudaLaunchKernel");
	CHECK_STR(rt(211), "cudaLaunchKernel");
	CHECK_STR(rt(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020), "cudaMemcpyAsync");
	CHECK_STR(rt(41), "cudaMemcpyAsync");   /* Kineto's traces call 41 that too */
	CHECK_STR(rt(CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020), "cudaMemsetAsync");
	CHECK_STR(rt(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020), "cudaMalloc");
	CHECK_STR(rt(CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020), "cudaFree");
	CHECK_STR(rt(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020), "cudaStreamSynchronize");
	CHECK_STR(rt(165), "cudaDeviceSynchronize");
	CHECK_STR(rt(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000), "cudaLaunchKernel_ptsz");
	CHECK_STR(rt(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060), "cudaLaunchKernelExC");
	/* Only the release suffix goes: "_v2" is part of the name. */
	CHECK_STR(rt(CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v2_v11030),
		  "cudaStreamGetCaptureInfo_v2");
	CHECK_STR(drv(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel), "cuLaunchKernel");
	CHECK_STR(drv(307), "cuLaunchKernel");
	CHECK_STR(drv(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2), "cuMemAlloc_v2");
	CHECK_STR(drv(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx), "cuLaunchKernelEx");
	CHECK_STR(rt(0), "cbid 0");
	CHECK_STR(rt(100000), "cbid 100000");
	CHECK_STR(drv(4000000000u), "cbid 4000000000");
	/* Every id below the headers' SIZE has a name (the table is whole). */
	int holes = 0;
	for (uint32_t i = 1; i < CUPTI_RUNTIME_TRACE_CBID_SIZE; i++)
		holes += strncmp(rt(i), "cbid ", 5) == 0;
	for (uint32_t i = 1; i < CUPTI_DRIVER_TRACE_CBID_SIZE; i++)
		holes += strncmp(drv(i), "cbid ", 5) == 0;
	CHECK(holes == 0);
}

static void test_blocklist(void)
{
	CHECK(cuda_api_blocked(RAW_API_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
	CHECK(cuda_api_blocked(RAW_API_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020));
	CHECK(cuda_api_blocked(RAW_API_RUNTIME,
			       CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000));
	CHECK(cuda_api_blocked(RAW_API_RUNTIME,
			       CUPTI_RUNTIME_TRACE_CBID_cudaThreadExchangeStreamCaptureMode_v10010));
	CHECK(cuda_api_blocked(RAW_API_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent));
	CHECK(cuda_api_blocked(RAW_API_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2));
	/* one per launch and one per error check under torch 2.11 (an H100) */
	CHECK(cuda_api_blocked(RAW_API_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuKernelGetName));
	CHECK(cuda_api_blocked(RAW_API_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGetErrorString_v3020));
	CHECK(!cuda_api_blocked(RAW_API_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
	CHECK(!cuda_api_blocked(RAW_API_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020));
	CHECK(!cuda_api_blocked(RAW_API_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
	/* The same id means different calls in the two domains. */
	CHECK(!cuda_api_blocked(RAW_API_DRIVER, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
	/* Nothing traced for thread ids is blocked. */
	int clash = 0;
	for (size_t i = 0; i < cuda_runtime_tid_cbids_len; i++)
		clash += cuda_api_blocked(RAW_API_RUNTIME, cuda_runtime_tid_cbids[i]);
	for (size_t i = 0; i < cuda_driver_tid_cbids_len; i++)
		clash += cuda_api_blocked(RAW_API_DRIVER, cuda_driver_tid_cbids[i]);
	CHECK(clash == 0);
}

static void test_nccl(void)
{
	/* NCCL >= 2.19, demangled */
	CHECK(cuda_nccl_op("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)") ==
	      RAW_COLL_ALLREDUCE);
	CHECK(cuda_nccl_op("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)") ==
	      RAW_COLL_ALLGATHER);
	CHECK(cuda_nccl_op("ncclDevKernel_ReduceScatter_Sum_bf16_RING_SIMPLE(ncclDevKernelArgsStorage<4096ul>)") ==
	      RAW_COLL_REDUCESCATTER);
	CHECK(cuda_nccl_op("ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096ul>)") ==
	      RAW_COLL_BROADCAST);
	CHECK(cuda_nccl_op("ncclDevKernel_Reduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)") ==
	      RAW_COLL_REDUCE);
	CHECK(cuda_nccl_op("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)") == RAW_COLL_SEND);
	CHECK(cuda_nccl_op("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)") == 0);
	/* mangled, as CUPTI hands it */
	CHECK(cuda_nccl_op("_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE") ==
	      RAW_COLL_ALLREDUCE);
	/* NCCL < 2.19 */
	CHECK(cuda_nccl_op("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)") ==
	      RAW_COLL_ALLREDUCE);
	CHECK(cuda_nccl_op("_Z36ncclKernel_AllGather_RING_LL_Sum_int8_tP11ncclDevCommmP8ncclWork") ==
	      RAW_COLL_ALLGATHER);
	CHECK(cuda_nccl_op("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)") ==
	      RAW_COLL_SEND);
	CHECK(cuda_nccl_op("void ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)") ==
	      RAW_COLL_ALLGATHER);
	/* not NCCL */
	CHECK(cuda_nccl_op("void at::native::vectorized_elementwise_kernel<4>(int)") == 0);
	CHECK(cuda_nccl_op("my_ncclKernel_AllReduce") == 0);
	CHECK(cuda_nccl_op("ncclDevKernel_AllReduceX") == 0);
	CHECK(cuda_nccl_op("") == 0);
	CHECK(cuda_nccl_op(NULL) == 0);
}

static void test_rank(void)
{
	unsetenv("RANK");
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("PMI_RANK");
	unsetenv("SLURM_PROCID");
	CHECK(prof_env_rank() == -1);
	setenv("SLURM_PROCID", "5", 1);
	CHECK(prof_env_rank() == 5);
	setenv("RANK", "2", 1);   /* torchrun's wins */
	CHECK(prof_env_rank() == 2);
	setenv("RANK", "two", 1);
	CHECK(prof_env_rank() == 5);
	unsetenv("RANK");
	unsetenv("SLURM_PROCID");
}

int main(void)
{
	test_cbid_names();
	test_blocklist();
	test_nccl();
	test_rank();
	return unit_done();
}
