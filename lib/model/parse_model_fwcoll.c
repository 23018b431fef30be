/*
 * Collectives seen from the framework: the work ranges a CPU backend of
 * torch.distributed records on its worker threads ("gloo:all_reduce",
 * likewise "mpi:" and "ucc:"), which no device backend sees, since they
 * move host memory. Each becomes a communication task of its process's
 * host (device -1): in communication.json and the matrices, and in
 * step_trace_time.csv's Communication, by the rules device collectives
 * follow. NCCL's work ("nccl:...") is left to the device view (CUPTI sees
 * NCCL's kernels), so a collective is counted once.
 *
 * What the range gives: its span (elapse = transit, as prof sees every
 * collective whole) and, with record_shapes, the tensors' shapes and
 * types, hence the bytes; not the group (""), as for NCCL's kernels.
 */
#include "model/parse_model_int.h"

#include <stdlib.h>
#include <string.h>

#include "outputs/tables/out_dev_usage.h"  /* OUT_VENDOR_HOST */

static const char *const fw_backends[] = { "gloo:", "mpi:", "ucc:" };

/* The op after the backend's prefix, as torch's ProcessGroup names it. */
static uint32_t fw_coll_op(const char *what)
{
	static const struct { const char *name; uint32_t op; } ops[] = {
		{ "all_reduce", RAW_COLL_ALLREDUCE }, { "allreduce", RAW_COLL_ALLREDUCE },
		{ "all_gather", RAW_COLL_ALLGATHER }, { "allgather", RAW_COLL_ALLGATHER },
		{ "_allgather_base", RAW_COLL_ALLGATHER }, { "broadcast", RAW_COLL_BROADCAST },
		{ "reduce_scatter", RAW_COLL_REDUCESCATTER },
		{ "_reduce_scatter_base", RAW_COLL_REDUCESCATTER },
		{ "send", RAW_COLL_SEND }, { "recv", RAW_COLL_RECV },
		{ "recvAnysource", RAW_COLL_RECV }, { "all_to_all", RAW_COLL_ALLTOALL },
		{ "alltoall", RAW_COLL_ALLTOALL }, { "alltoall_base", RAW_COLL_ALLTOALL },
		{ "reduce", RAW_COLL_REDUCE },
	};
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (strcmp(what, ops[i].name) == 0)
			return ops[i].op;
	return 0;   /* barrier, gather, scatter: no enum of ours; not counted */
}

/* Bytes of one element of a type as record_shapes names it ("float",
 * "c10::BFloat16", "long int"); 0 when unknown. */
static uint64_t fw_dtype_size(const char *t, size_t n)
{
	static const struct { const char *part; uint64_t size; } sizes[] = {
		{ "complex<double>", 16 }, { "complex<float>", 8 }, { "complex<c10::Half>", 4 },
		{ "double", 8 }, { "long", 8 }, { "Half", 2 }, { "BFloat16", 2 }, { "short", 2 },
		{ "float", 4 }, { "int", 4 }, { "Float8", 1 }, { "char", 1 }, { "bool", 1 },
	};
	char buf[64];
	if (n >= sizeof buf)
		return 0;
	memcpy(buf, t, n);
	buf[n] = 0;
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		if (strstr(buf, sizes[i].part))
			return sizes[i].size;
	return 0;
}

/* The i-th quoted string of a JSON array of strings; its length in *n. */
static const char *fw_nth_type(const char *types, size_t i, size_t *n)
{
	const char *p = types;
	for (size_t k = 0; p && (p = strchr(p, '"')); k++) {
		const char *end = strchr(p + 1, '"');
		if (!end)
			return NULL;
		if (k == i) {
			*n = (size_t)(end - p - 1);
			return p + 1;
		}
		p = end + 1;
	}
	return NULL;
}

/* Bytes of the inputs: shapes "[[4, 5], [3]]" (one list per input) with
 * types ["float", "float"]. 0 when either is missing or unknown. */
uint64_t model_fw_coll_bytes(const char *shapes, const char *types)
{
	if (!shapes || !types || shapes[0] != '[')
		return 0;
	uint64_t total = 0;
	size_t input = 0;
	for (const char *p = shapes + 1; *p && *p != ']';) {
		while (*p == ' ' || *p == ',')
			p++;
		if (*p != '[')
			break;
		uint64_t elems = 1;
		for (p++; *p && *p != ']';) {
			char *end;
			unsigned long long d = strtoull(p, &end, 10);
			if (end == p)
				return 0;
			elems *= d;
			p = end;
			while (*p == ' ' || *p == ',')
				p++;
		}
		if (*p != ']')
			return 0;
		p++;
		size_t n = 0;
		const char *t = fw_nth_type(types, input++, &n);
		total += t ? elems * fw_dtype_size(t, n) : 0;
	}
	return total;
}

int model_fw_is_collective(const char *name)
{
	/* the first byte settles nearly every operator (aten::...) */
	if (name[0] != 'g' && name[0] != 'm' && name[0] != 'u')
		return 0;
	for (size_t i = 0; i < sizeof fw_backends / sizeof fw_backends[0]; i++)
		if (strncmp(name, fw_backends[i], strlen(fw_backends[i])) == 0)
			return 1;
	return 0;
}

void model_fw_collective(struct parse_model *m, struct model_proc *p, const struct model_op *op)
{
	const char *what = strchr(op->name, ':');
	uint32_t kind = what ? fw_coll_op(what + 1) : 0;
	if (!kind)
		return;
	model_step_comm(p, OUT_VENDOR_HOST, MODEL_HOST_DEVICE, op->start_ns, op->end_ns,
			kind == RAW_COLL_RECV);
	struct out_coll oc = { p->pid, kind, OUT_VENDOR_HOST, MODEL_HOST_DEVICE,
			       (int32_t)model_proc_rank(p), -1,
			       op->start_ns, op->end_ns, model_fw_coll_bytes(op->shapes, op->types),
			       model_group_seq(p, ""), op->name, "", "" };
	OUT_SINKS_EMIT(m->out.sinks, collective, p, &oc);
	m->n.fw_collectives++;
}
