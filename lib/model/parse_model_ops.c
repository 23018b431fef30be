/* Framework operators: a stack per thread, closed as time passes them. */
#include "model/parse_model_int.h"

#include <stdlib.h>
#include <string.h>

#include "common/torch_nvtx.h"
#include "outputs/trace/out_trace_op.h"

/* An op's tid <= 0 is a framework thread id, negated (0 is read as id 0,
 * not as Linux's tid 0, which no thread has and the windows use). */
int64_t model_out_tid(const struct model_thread *t)
{
	return t->tid <= 0 ? MODEL_TORCH_TID_BASE + -(int64_t)t->tid : t->tid;
}

/* Closes the innermost op of t, its end clamped to `limit`, and writes it. */
static void op_close(struct parse_model *m, struct model_proc *p, struct model_thread *t,
		     uint64_t limit)
{
	struct model_op *o = &t->ops[--t->nops];
	if (o->end_ns > limit) {
		o->end_ns = limit > o->start_ns ? limit : o->start_ns;
		m->n.ops_clamped++;
	}
	uint64_t dur = o->end_ns - o->start_ns;
	if (t->nops) {
		struct model_op *parent = &t->ops[t->nops - 1];
		parent->child_ns += dur;
		parent->children++;
		parent->same_child = parent->name == o->name ||
				     (parent->name && o->name && strcmp(parent->name, o->name) == 0);
	}
	struct out_op out = {
		.pid = p->pid, .tid = model_out_tid(t), .id = o->id, .name = o->name,
		.shapes = o->shapes, .types = o->types, .stack = o->stack,
		.start_ns = o->start_ns, .end_ns = o->end_ns,
		.self_ns = dur - (o->child_ns < dur ? o->child_ns : dur),
		.seq = o->seq, .fwd_tid = o->fwd_tid, .user = (o->flags & RAW_OP_USER) != 0,
		/* as torch's EventList counts (_remove_dup_nodes): an op whose only
		 * child bears its name (a redispatch: aten::div_ in aten::div_) is
		 * one call, shown once, by the inner op */
		.merged = o->children == 1 && o->same_child,
		.flops = o->flops,
	};
	if (o->node)   /* its row waits for its device work */
		model_devnode_close(m, o->node, &out);
	else if (!out.merged)
		OUT_SINKS_EMIT(m->out.sinks, op, &out);
	if (out.merged) {
		m->n.ops_merged++;
		return;
	}
	out_trace_op(m->out.trace, &m->op_json, &out);
	out_op_stat_add(model_opstat(m, p), out.name, out.self_ns);
	m->n.ops++;
}

static int ops_reserve(struct model_thread *t)
{
	if (t->nops < t->capops)
		return 0;
	size_t cap = t->capops ? t->capops * 2 : 16;
	struct model_op *v = realloc(t->ops, cap * sizeof *v);
	if (!v)
		return -1;
	t->ops = v;
	t->capops = cap;
	return 0;
}

/* Ops open at o's start that start with it and end before it are its
 * children (they came first); o goes below them, inside what is left. */
static void op_push(struct parse_model *m, struct model_thread *t, struct model_op *o)
{
	if (ops_reserve(t) != 0) {
		m->n.ops_dropped++;
		return;
	}
	size_t i = t->nops;
	while (i > 0 && t->ops[i - 1].start_ns == o->start_ns && t->ops[i - 1].end_ns < o->end_ns)
		i--;
	if (i > 0 && o->end_ns > t->ops[i - 1].end_ns) {
		o->end_ns = t->ops[i - 1].end_ns;
		m->n.ops_clamped++;
	}
	memmove(&t->ops[i + 1], &t->ops[i], (t->nops - i) * sizeof *t->ops);
	t->ops[i] = *o;
	t->nops++;
}

/* The op's end in monotonic ns: its start may have been raised to keep
 * the stream in order (parse_stream.h), its end stays where it was. */
static uint64_t op_end(const struct parse_stream *s, uint64_t end)
{
	if (s->file.hdr.clock != RAW_CLOCK_MONOTONIC)  /* not written so; keep the length */
		end = s->ns + (end > s->rec.ts ? end - s->rec.ts : 0);
	return end > s->ns ? end : s->ns;
}

/* An operator read from torch's NVTX range knows neither whether it is
 * backward nor its forward thread: backward by nesting (an autograd node's
 * operator and all it calls, as the Python way and the Kineto files'
 * converter decide), the forward thread from the last forward operator of
 * its sequence number (numbers are per thread; a step's backward follows
 * its forward closely, so the table's 4096 slots hold it). The thread's
 * ops open at o's start are its parents. */
/* torch 2.11's NVTX observer sends autograd's "evaluate_function: X"
 * wrapper without a sequence number, where Kineto gives it its node X's
 * (and so its forward thread). X opens inside it: the thread's innermost
 * open op is the wrapper, which takes them from X (seen on an H200). */
static void op_nvtx_wrapper(struct model_thread *t, const struct model_op *o)
{
	struct model_op *w = t->nops ? &t->ops[t->nops - 1] : NULL;
	size_t n = sizeof TORCH_BACKWARD_PREFIX - 1;
	if (!w || w->seq >= 0 || !w->name || !o->name ||
	    !MODEL_STARTS(w->name, TORCH_BACKWARD_PREFIX) || strncmp(w->name + n, ": ", 2) != 0 ||
	    strcmp(w->name + n + 2, o->name) != 0)
		return;
	w->seq = o->seq;
	w->fwd_tid = o->fwd_tid;
}

static void op_nvtx_links(struct model_proc *p, struct model_thread *t, struct model_op *o)
{
	if (MODEL_STARTS(o->name, TORCH_BACKWARD_PREFIX) ||
	    (t->nops && (t->ops[t->nops - 1].flags & RAW_OP_BACKWARD)))
		o->flags |= RAW_OP_BACKWARD;
	else if (torch_nvtx_is_annotation(o->name))
		o->flags |= RAW_OP_USER;
	if (o->seq < 0)
		return;
	if (!p->fwd_seq && !(p->fwd_seq = calloc(MODEL_FWD_SEQ_SLOTS, sizeof *p->fwd_seq)))
		return;
	struct model_seqtid *e = &p->fwd_seq[(uint64_t)o->seq & (MODEL_FWD_SEQ_SLOTS - 1)];
	if (!(o->flags & RAW_OP_BACKWARD))
		*e = (struct model_seqtid){ .seq = o->seq, .tid = t->tid };
	else if (e->seq == o->seq && e->tid) {
		o->fwd_tid = e->tid;
		op_nvtx_wrapper(t, o);
	}
}

/* Opens o on t: what ended before it closes, it goes on the stack. An
 * open one's end is not known yet (OP_BEGIN): a collective's step time
 * waits for its OP_END. */
static void op_open(struct parse_model *m, struct model_proc *p, struct model_thread *t,
		    struct model_op *o)
{
	t->has_ops = 1;
	if (!o->open && o->end_ns > p->last_ns)
		p->last_ns = o->end_ns;
	model_api_flush(m, p, t, o->start_ns);
	while (t->nops && t->ops[t->nops - 1].end_ns <= o->start_ns)
		op_close(m, p, t, UINT64_MAX);
	if (o->flags & RAW_OP_NVTX)
		op_nvtx_links(p, t, o);
	/* at its start, as a device task is taken: the step it starts in is
	 * the one in progress (an op is closed only when a later one starts) */
	if (!o->open && model_fw_is_collective(o->name))
		model_fw_collective(m, p, o);
	op_push(m, t, o);
}

void model_on_op(struct parse_model *m, struct parse_stream *s)
{
	MODEL_PAYLOAD_GROWN(s, struct raw_op, ro);
	struct model_proc *p = s->proc;
	const char *name = parse_stream_str(s, ro.name_id);
	int nvtx = (ro.flags & RAW_OP_NVTX) != 0;
	if (MODEL_STARTS(name, TORCH_STEP_PREFIX) || (nvtx && torch_nvtx_left_out(name)))
		return;  /* the steps are prof's, and so is a batch's span (the hooks
			  * leave it out too) */
	struct model_thread *t = p ? model_thread_of(p, nvtx ? model_caller(p, ro.tid) : ro.tid)
				   : NULL;
	if (!t)
		return;
	struct model_op o = {
		.start_ns = s->ns, .end_ns = op_end(s, ro.end),
		.name = name, .shapes = model_opt_str(s, ro.shapes_id),
		.types = model_opt_str(s, ro.types_id), .stack = model_opt_str(s, ro.stack_id),
		.seq = ro.seq, .fwd_tid = ro.fwd_tid, .flags = ro.flags, .id = ++m->op_ids,
		.flops = ro.flops,
	};
	op_open(m, p, t, &o);
}

/* An operator recorded on its thread as it ran (raw_format.h, struct
 * raw_op_begin): open until the OP_END that balances it. */
void model_on_op_begin(struct parse_model *m, struct parse_stream *s)
{
	MODEL_PAYLOAD(s, struct raw_op_begin, rb);
	struct model_thread *t = s->thr;
	if (!t || !s->proc)
		return;
	struct model_op o = {
		.start_ns = s->ns, .end_ns = UINT64_MAX, .open = 1,
		.name = parse_stream_str(s, rb.name_id), .shapes = model_opt_str(s, rb.shapes_id),
		.seq = rb.seq, .flags = RAW_OP_NVTX, .id = ++m->op_ids,
	};
	op_open(m, s->proc, t, &o);
}

/* Ends the thread's innermost open operator, and what it holds. */
void model_on_op_end(struct parse_model *m, struct parse_stream *s)
{
	struct model_thread *t = s->thr;
	if (!t || !s->proc)
		return;
	size_t k = t->nops;
	while (k > 0 && !t->ops[k - 1].open)
		k--;
	if (k == 0)
		return;  /* its begin was lost */
	struct model_op *o = &t->ops[k - 1];
	o->open = 0;
	if (o->end_ns > s->ns)
		o->end_ns = s->ns;
	model_api_flush(m, s->proc, t, s->ns);
	if (model_fw_is_collective(o->name))
		model_fw_collective(m, s->proc, o);
	while (t->nops >= k)
		op_close(m, s->proc, t, s->ns);
}

void model_ops_boundary(struct parse_model *m, struct model_proc *p, int32_t tid, uint64_t ns)
{
	struct model_thread *t = model_thread_find(p, tid);
	while (t && t->nops)
		op_close(m, p, t, ns);
}

void model_ops_finish(struct parse_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		struct model_proc *p = m->procs[i];
		for (size_t j = 0; j < p->nthreads; j++)
			for (struct model_thread *t = p->threads[j]; t->nops;)
				/* one still open: the program ended in it */
				op_close(m, p, t, t->ops[t->nops - 1].open ? p->last_ns
									    : UINT64_MAX);
	}
}
