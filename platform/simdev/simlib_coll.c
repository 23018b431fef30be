/*
 * Collectives: they run on a stream like kernels (as NCCL's do), and carry
 * what the communication outputs need: the op, the group and its global
 * ranks, this process's rank, the peer of a send or recv, the bytes.
 */
#include "simlib_int.h"

#include <stdio.h>

static const char *coll_name(enum prof_sim_coll op)
{
	switch (op) {
	case PROF_SIM_ALLREDUCE: return "sim_allreduce";
	case PROF_SIM_ALLGATHER: return "sim_allgather";
	case PROF_SIM_BROADCAST: return "sim_broadcast";
	case PROF_SIM_SEND: return "sim_send";
	case PROF_SIM_RECV: return "sim_recv";
	}
	return "sim_collective";
}

SIM_EXPORT void prof_sim_collective(prof_sim_stream *s, enum prof_sim_coll op, const char *group,
				    const char *ranks, int rank, int peer, uint64_t bytes,
				    uint64_t duration_ns)
{
	struct sim_call c;
	sim_call_begin(&c);
	struct sim_op *o = s ? sim_op_new(s, SIM_REC_COLLECTIVE, duration_ns, &c) : NULL;
	if (o) {
		struct sim_record *r = &o->rec;
		snprintf(r->name, sizeof r->name, "%s", coll_name(op));
		snprintf(r->group, sizeof r->group, "%s", group ? group : "default_group");
		snprintf(r->ranks, sizeof r->ranks, "%s", ranks ? ranks : "");
		r->coll_op = (uint32_t)op;
		r->rank = rank;
		r->peer = op == PROF_SIM_SEND || op == PROF_SIM_RECV ? peer : -1;
		r->bytes = bytes;
		sim_stream_push(s, o);
	}
	sim_call_end(&c, "prof_sim_collective", s ? s->device : 0);
}
