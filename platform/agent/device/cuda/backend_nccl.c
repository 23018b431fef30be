/*
 * NCCL collectives from kernel names. NCCL runs each collective as one
 * kernel whose name says the operation:
 *   NCCL < 2.19   ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, ...)
 *   NCCL >= 2.19  ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)
 *                 ncclDevKernel_SendRecv(...), ncclDevKernel_Generic(...)
 * and CUPTI may hand the name mangled (_Z39ncclDevKernel_...). The rank
 * comes from the environment (the launcher of a distributed job sets RANK).
 */
#include "agent/device/cuda/backend_convert.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *cuda_nccl_body(const char *name)
{
	if (strncmp(name, "void ", 5) == 0)
		name += 5;
	if (name[0] == '_' && name[1] == 'Z') {   /* _Z<len><identifier>... */
		name += 2;
		while (isdigit((unsigned char)*name))
			name++;
	}
	static const char *const prefixes[] = { "ncclDevKernel_", "ncclKernel_" };
	for (size_t i = 0; i < 2; i++) {
		size_t n = strlen(prefixes[i]);
		if (strncmp(name, prefixes[i], n) == 0)
			return name + n;
	}
	return NULL;
}

uint32_t cuda_nccl_op(const char *name)
{
	static const struct { const char *token; uint32_t op; } ops[] = {
		{ "AllReduce", RAW_COLL_ALLREDUCE },
		{ "AllGather", RAW_COLL_ALLGATHER },
		{ "AllGatherV", RAW_COLL_ALLGATHER },
		{ "Broadcast", RAW_COLL_BROADCAST },
		{ "ReduceScatter", RAW_COLL_REDUCESCATTER },
		{ "Reduce", RAW_COLL_REDUCE },
		/* One kernel moves both directions; the raw format has no
		 * send-and-receive value, so it counts as the send side. */
		{ "SendRecv", RAW_COLL_SEND },
		{ "Send", RAW_COLL_SEND },
		{ "Recv", RAW_COLL_RECV },
		{ "AllToAll", RAW_COLL_ALLTOALL },
		{ "AlltoAll", RAW_COLL_ALLTOALL },
	};
	const char *body = name ? cuda_nccl_body(name) : NULL;
	if (!body)
		return 0;
	size_t len = strcspn(body, "_(<");
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (strlen(ops[i].token) == len && strncmp(body, ops[i].token, len) == 0)
			return ops[i].op;
	return 0;   /* ncclDevKernel_Generic and future names: a kernel only */
}
