/*
 * gpu_user_annotation, as Kineto writes it: for each of the program's
 * ranges that launched device work, on each device stream that ran it, one
 * span from the first task's start to the last task's end, on the device's
 * pid and the stream's tid, named as the range. A call notes the innermost
 * range open on its thread (prof's own and module ranges aside); its tasks
 * widen the span of (that range instance, device, stream). Spans are
 * written at the end of the parse: a task may come long after its range
 * closed on the host. Memory follows the (range, stream) pairs that ran
 * work.
 */
#include "model/parse_model_int.h"

#include <stdlib.h>

#include "common/grow.h"

struct model_gpuann {
	const char *name;
	uint64_t range;             /* the range instance */
	uint32_t device;
	int64_t stream;
	uint64_t start_ns, end_ns;
	struct model_gpuann *next;  /* same hash */
};

void model_gpuann_note(const struct model_thread *t, struct model_corr *c)
{
	for (size_t i = t->depth; i-- > 0;) {
		const struct model_range *r = &t->stack[i];
		if (!r->name || MODEL_STARTS(r->name, MODEL_OWN_PREFIX) ||
		    MODEL_STARTS(r->name, MODEL_MODULE_PREFIX))
			continue;
		c->ann = r->name;
		c->ann_key = (uint64_t)(uintptr_t)t * 0x9e3779b97f4a7c15ull ^ r->start_ns;
		return;
	}
}

static uint64_t ann_hash(uint64_t range, uint32_t device, int64_t stream)
{
	uint64_t h = range ^ ((uint64_t)device << 48) ^ (uint64_t)stream * 0xff51afd7ed558ccdull;
	return h ^ (h >> 29);
}

void model_gpuann_extend(struct parse_model *m, const struct model_corr *c, uint32_t device,
			 int64_t stream, uint64_t start_ns, uint64_t end_ns)
{
	if (!c->ann)
		return;
	uint64_t h = ann_hash(c->ann_key, device, stream);
	struct model_gpuann *head = parse_idmap_get(&m->gpuann_at, h);
	for (struct model_gpuann *a = head; a; a = a->next)
		if (a->range == c->ann_key && a->device == device && a->stream == stream) {
			if (start_ns < a->start_ns)
				a->start_ns = start_ns;
			if (end_ns > a->end_ns)
				a->end_ns = end_ns;
			return;
		}
	struct model_gpuann **v = grow_room(m->gpuann, m->ngpuann, &m->capgpuann, sizeof *v);
	struct model_gpuann *a = v ? malloc(sizeof *a) : NULL;
	if (v)
		m->gpuann = v;
	if (!a)
		return;
	*a = (struct model_gpuann){ c->ann, c->ann_key, device, stream, start_ns, end_ns, head };
	if (parse_idmap_put(&m->gpuann_at, h, a) == a) {
		free(a);
		return;
	}
	m->gpuann[m->ngpuann++] = a;
}

void model_gpuann_finish(struct parse_model *m)
{
	for (size_t i = 0; i < m->ngpuann; i++) {
		const struct model_gpuann *a = m->gpuann[i];
		out_trace_complete(m->out.trace, a->device, a->stream, "gpu_user_annotation", a->name,
				   a->start_ns, a->end_ns, -1, 0);
	}
	model_gpuann_free(m);
}

void model_gpuann_free(struct parse_model *m)
{
	for (size_t i = 0; i < m->ngpuann; i++)
		free(m->gpuann[i]);
	free(m->gpuann);
	m->gpuann = NULL;
	m->ngpuann = m->capgpuann = 0;
	parse_idmap_free(&m->gpuann_at);
}
