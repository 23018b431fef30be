/*
 * The simulated device speaks CUDA's and NCCL's vocabulary in the trace, so
 * that the tools that read Kineto traces by CUDA's names (HTA counts
 * communication by NCCL's kernel names, its straggler analysis by the
 * "ncclKernel" prefix, and launches by cudaLaunchKernel)
 * work on a run without a GPU, and every analysis can be tested here. The
 * sim's own name stays in the event's args ("sim name") and in the CSVs.
 */
#include "outputs/trace/out_trace_dev.h"

#include <string.h>

#include "raw/raw_format.h"

const char *out_trace_sim_api(const char *name)
{
	static const struct { const char *sim, *cuda; } map[] = {
		{ "prof_sim_kernel", "cudaLaunchKernel" },
		{ "prof_sim_collective", "cudaLaunchKernel" },   /* NCCL launches a kernel */
		{ "prof_sim_memcpy", "cudaMemcpyAsync" },
		{ "prof_sim_memset", "cudaMemsetAsync" },
		{ "prof_sim_stream_sync", "cudaStreamSynchronize" },
		{ "prof_sim_device_sync", "cudaDeviceSynchronize" },
		{ "prof_sim_stream_create", "cudaStreamCreate" },
		{ "prof_sim_stream_destroy", "cudaStreamDestroy" },
		{ "prof_sim_malloc", "cudaMalloc" },
		{ "prof_sim_free", "cudaFree" },
		{ "prof_sim_event_create", "cudaEventCreate" },
		{ "prof_sim_event_destroy", "cudaEventDestroy" },
		{ "prof_sim_event_record", "cudaEventRecord" },
		{ "prof_sim_stream_wait_event", "cudaStreamWaitEvent" },
		{ "prof_sim_event_synchronize", "cudaEventSynchronize" },
	};
	for (size_t i = 0; name && i < sizeof map / sizeof map[0]; i++)
		if (strcmp(name, map[i].sim) == 0)
			return map[i].cuda;
	return NULL;
}

const char *out_trace_sim_coll(uint32_t op)
{
	switch (op) {
	case RAW_COLL_ALLREDUCE: return "ncclKernel_AllReduce_RING_LL_Sum_float";
	case RAW_COLL_ALLGATHER: return "ncclKernel_AllGather_RING_LL_Sum_int8_t";
	case RAW_COLL_BROADCAST: return "ncclKernel_Broadcast_RING_LL_Sum_int8_t";
	case RAW_COLL_REDUCESCATTER: return "ncclKernel_ReduceScatter_RING_LL_Sum_float";
	case RAW_COLL_REDUCE: return "ncclKernel_Reduce_RING_LL_Sum_float";
	case RAW_COLL_SEND: return "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t";
	case RAW_COLL_RECV: return "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t";
	case RAW_COLL_ALLTOALL: return "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t";
	}
	return "ncclKernel_Generic";
}
