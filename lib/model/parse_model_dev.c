/* Device tasks: kernels, copies, sets, syncs and collectives. */
#include "model/parse_model_int.h"

#include <stdlib.h>

#include "common/grow.h"
#include "outputs/tables/out_dev_usage.h"  /* out_vendor_name */
#include "outputs/trace/out_trace_dev.h"

/* A task as the outputs other than the trace see it. */
struct model_task {
	uint32_t vendor, device, stream;
	uint64_t start_ns, end_ns;
	const char *name, *type;
	enum out_task step_kind;       /* 0: neither compute nor communication */
	int recv, kernel;
	uint64_t blocks;
};

static struct model_pdev *pdev_of(struct model_proc *p, uint32_t vendor, uint32_t device)
{
	uint64_t key = (uint64_t)vendor << 32 | device;
	size_t at = parse_idmap_pos(&p->dev_at, key);
	if (at)
		return &p->devs[at - 1];
	struct model_pdev *v = grow_room(p->devs, p->ndevs, &p->capdevs, sizeof *v);
	if (!v)
		return NULL;
	p->devs = v;
	if (parse_idmap_put_pos(&p->dev_at, key, p->ndevs) != 0)
		return NULL;
	v[p->ndevs] = (struct model_pdev){ .vendor = vendor, .device = device };
	out_step_acc_reset(&v[p->ndevs].acc);
	return &v[p->ndevs++];
}

/* The task's stream, begun at the task's start when new. */
static struct model_pstream *pstream_of(struct model_proc *p, const struct model_task *k)
{
	uint64_t h = parse_idmap_hash2((uint64_t)k->vendor << 32 | k->device, k->stream);
	size_t first = parse_idmap_pos(&p->stream_at, h);
	for (size_t i = first; i; i = p->streams[i - 1].next) {
		struct model_pstream *st = &p->streams[i - 1];
		if (st->vendor == k->vendor && st->device == k->device && st->stream == k->stream)
			return st;
	}
	struct model_pstream *v = grow_room(p->streams, p->nstreams, &p->capstreams, sizeof *v);
	if (!v)
		return NULL;
	p->streams = v;
	if (parse_idmap_put_pos(&p->stream_at, h, p->nstreams) != 0)
		return NULL;
	v[p->nstreams] = (struct model_pstream){ k->vendor, k->device, k->stream, k->start_ns,
						 first };
	return &v[p->nstreams++];
}

/* Time since the stream's previous task ended (0 for its first). */
static uint64_t wait_of(struct model_proc *p, const struct model_task *k)
{
	struct model_pstream *st = pstream_of(p, k);
	if (!st)
		return 0;
	uint64_t wait = k->start_ns > st->last_end ? k->start_ns - st->last_end : 0;
	if (k->end_ns > st->last_end)
		st->last_end = k->end_ns;
	return wait;
}

/* A task in step_trace_time.csv's accumulator of its process and device:
 * only while recording, from the step's start on. */
static void step_add(struct model_proc *p, const struct model_task *k)
{
	struct model_pdev *d = pdev_of(p, k->vendor, k->device);
	if (!d || !k->step_kind || !p->recording || k->start_ns < p->step_from)
		return;
	out_step_acc_add(&d->acc, k->step_kind, k->start_ns, k->end_ns);
	if (k->recv)
		out_step_acc_add(&d->acc, OUT_TASK_BUBBLE, k->start_ns, k->end_ns);
}

static void task_out(struct parse_model *m, struct model_proc *p, const struct model_task *k,
		     struct model_corr *c)
{
	const char *core = out_vendor_name(k->vendor);
	struct out_kernel_row r = {
		.pid = p->pid, .attr_ns = c ? c->start_ns : k->start_ns, .device = k->device,
		.stream = k->stream, .correlation = c ? c->corr : 0, .name = k->name,
		.type = k->type, .core = core, .start_ns = k->start_ns, .end_ns = k->end_ns,
		.wait_ns = wait_of(p, k), .blocks = k->blocks,
		.shapes = c ? c->shapes : NULL, .types = c ? c->types : NULL,
	};
	OUT_SINKS_EMIT(m->out.sinks, task, &r);
	out_op_stat_add_device(model_opstat(m, p), (int32_t)k->device, core, k->name,
			       k->end_ns - k->start_ns);
	step_add(p, k);
	if (c && c->ext_id) {
		int first = !c->matched;
		c->matched = 1;
		model_devnode_credit(m, c->ext_id, k->end_ns - k->start_ns, k->kernel, first);
	}
	m->n.dev_unlinked += !c;
	m->n.dev_tasks++;
}

/* The ac2g flow of the call c to the task at (device, tid, ns): once. */
static void flow(struct parse_model *m, struct model_proc *p, struct model_corr *c,
		 uint32_t device, int64_t tid, uint64_t ns)
{
	if (!c || c->flowed)
		return;
	c->flowed = 1;
	out_trace_flow(m->out.trace, "s", c->corr, p->pid, c->tid, c->start_ns);
	out_trace_flow(m->out.trace, "f", c->corr, device, tid, ns);
}

static const char *copy_name(uint32_t vendor, uint32_t kind)
{
	static const char *const sim[] = { "Memcpy", "Memcpy HtoD", "Memcpy DtoH", "Memcpy DtoD",
					   "Memcpy HtoH", "Memcpy PtoP" };
	static const char *const cuda[] = { "Memcpy", "Memcpy HtoD (Host -> Device)",
		"Memcpy DtoH (Device -> Host)", "Memcpy DtoD (Device -> Device)",
		"Memcpy HtoH (Host -> Host)", "Memcpy PtoP (Device -> Device)" };
	if (kind > RAW_COPY_PTOP)
		kind = RAW_COPY_UNKNOWN;
	return vendor == RAW_VENDOR_CUDA ? cuda[kind] : sim[kind];
}

/* Names and kinds of an activity; the backend's name wins when it gave one. */
static void describe(const struct parse_stream *s, const struct raw_dev_activity *a,
		     struct model_task *k, const char **cat)
{
	const char *given = a->name_id ? parse_stream_str(s, a->name_id) : NULL;
	switch (a->kind) {
	case RAW_DEV_MEMCPY:
		*cat = "gpu_memcpy", k->type = "MEMCPY";
		k->name = given ? given : copy_name(a->vendor, a->copy_kind);
		break;
	case RAW_DEV_MEMSET:
		*cat = "gpu_memset", k->type = "MEMSET";
		k->name = given ? given : a->vendor == RAW_VENDOR_CUDA ? "Memset (Device)" : "Memset";
		break;
	case RAW_DEV_SYNC:
		*cat = "cuda_sync", k->type = "SYNC";
		k->name = given ? given : "Synchronize";
		break;
	default:
		*cat = "kernel", k->type = "KERNEL", k->kernel = 1;
		k->name = given && *given ? given : "Kernel";
		/* NCCL's kernels are communication, as HTA counts them */
		k->step_kind = MODEL_STARTS(k->name, "nccl") ? OUT_TASK_COMM : OUT_TASK_COMPUTE;
		k->blocks = (uint64_t)a->grid[0] * a->grid[1] * a->grid[2];
		break;
	}
}

void model_on_dev_activity(struct parse_model *m, struct parse_stream *s)
{
	MODEL_PAYLOAD_GROWN(s, struct raw_dev_activity, a);
	struct model_proc *p = s->proc;
	if (!p)
		return;
	const char *cat;
	struct model_task k = { .vendor = a.vendor, .device = a.device, .stream = a.stream,
				.start_ns = s->ns, .end_ns = a.end > s->ns ? a.end : s->ns };
	describe(s, &a, &k, &cat);
	struct model_corr *c = model_corr_find(p, a.correlation);
	struct out_dev_link l = { a.correlation, c ? c->ext_id : 0 };
	int64_t tid = a.kind == RAW_DEV_SYNC ? MODEL_SYNC_TID_BASE + (int64_t)a.stream : a.stream;
	model_dev_track(m, a.device, a.vendor, tid);
	out_trace_activity(m->out.trace, &a, cat, k.name, tid, s->ns, &l);
	flow(m, p, c, a.device, tid, s->ns);
	if (a.kind != RAW_DEV_SYNC) {
		task_out(m, p, &k, c);
		if (c)
			model_gpuann_extend(m, c, a.device, tid, k.start_ns, k.end_ns);
	}
}

void model_step_comm(struct model_proc *p, uint32_t vendor, uint32_t device, uint64_t start_ns,
		     uint64_t end_ns, int recv)
{
	struct model_task k = { .vendor = vendor, .device = device, .start_ns = start_ns,
				.end_ns = end_ns, .step_kind = OUT_TASK_COMM, .recv = recv };
	step_add(p, &k);
}

uint64_t model_group_seq(struct model_proc *p, const char *group)
{
	uint64_t h = parse_idmap_hash_text(PARSE_IDMAP_TEXT0, group);
	size_t first = parse_idmap_pos(&p->group_at, h);
	for (size_t i = first; i; i = p->groups[i - 1].next)
		if (strcmp(p->groups[i - 1].group, group) == 0)
			return ++p->groups[i - 1].n;
	struct model_pgroup *v = grow_room(p->groups, p->ngroups, &p->capgroups, sizeof *v);
	if (!v)
		return 0;
	p->groups = v;
	if (parse_idmap_put_pos(&p->group_at, h, p->ngroups) != 0)
		return 0;
	v[p->ngroups++] = (struct model_pgroup){ group, 1, first };
	return 1;
}

static const char *coll_default(uint32_t op)
{
	static const char *const n[] = { "collective", "allreduce", "allgather", "broadcast",
		"reducescatter", "send", "recv", "alltoall", "reduce" };
	return op < sizeof n / sizeof n[0] ? n[op] : n[0];
}

void model_on_dev_collective(struct parse_model *m, struct parse_stream *s)
{
	MODEL_PAYLOAD(s, struct raw_dev_collective, rc);
	struct model_proc *p = s->proc;
	if (!p)
		return;
	const char *name = rc.name_id ? parse_stream_str(s, rc.name_id) : coll_default(rc.op);
	const char *group = parse_stream_str(s, rc.group_id), *ranks = parse_stream_str(s, rc.ranks_id);
	struct model_task k = { .vendor = rc.vendor, .device = rc.device, .stream = rc.stream,
				.start_ns = s->ns, .end_ns = rc.end > s->ns ? rc.end : s->ns,
				.name = name, .type = "COMMUNICATION", .step_kind = OUT_TASK_COMM,
				.recv = rc.op == RAW_COLL_RECV };
	struct model_corr *c = model_corr_find(p, rc.correlation);
	struct out_dev_link l = { rc.correlation, c ? c->ext_id : 0 };
	model_dev_track(m, rc.device, rc.vendor, rc.stream);
	rc.end = k.end_ns;
	int sim = rc.vendor == RAW_VENDOR_SIM;
	out_trace_collective(m->out.trace, &rc, sim ? out_trace_sim_coll(rc.op) : name,
			     sim ? name : NULL, group, ranks, s->ns, &l);
	flow(m, p, c, rc.device, rc.stream, s->ns);
	task_out(m, p, &k, c);
	if (c)   /* a collective's kernel is a kernel of its range, as Kineto's */
		model_gpuann_extend(m, c, rc.device, rc.stream, k.start_ns, k.end_ns);
	struct out_coll oc = { p->pid, rc.op, rc.vendor, rc.device, rc.rank, rc.peer, k.start_ns,
			       k.end_ns, rc.bytes, model_group_seq(p, group), name, group, ranks };
	OUT_SINKS_EMIT(m->out.sinks, collective, p, &oc);
	m->n.dev_collectives++;
}

void model_dev_free(struct model_proc *p)
{
	model_corr_free(p);
	free(p->devs);
	free(p->streams);
	free(p->groups);
	parse_idmap_free(&p->dev_at);
	parse_idmap_free(&p->stream_at);
	parse_idmap_free(&p->group_at);
}
