/* Device API calls: leaves on their thread, linked to the op that made them. */
#include "model/parse_model_int.h"

#include <stdlib.h>

#include "outputs/trace/out_trace_dev.h"

long model_op_at(const struct model_thread *t, uint64_t ns)
{
	/* an operator shorter than torch's clock tick (1 us before torch 2)
	 * has no duration: it still holds what happened at its start */
	for (size_t i = t->nops; i-- > 0;)
		if (t->ops[i].start_ns <= ns && (ns < t->ops[i].end_ns || ns == t->ops[i].start_ns))
			return (long)i;
	return -1;
}

int32_t model_caller(const struct model_proc *p, int32_t tid)
{
	return tid > 0 ? tid : p->pid;
}

const char *model_opt_str(const struct parse_stream *s, uint32_t id)
{
	return id ? raw_cursor_str(&s->cur, id, NULL) : NULL;
}

static const char *api_cat(uint32_t domain)
{
	return domain == RAW_API_DRIVER ? "cuda_driver" : "cuda_runtime";
}

void model_api_flush(struct parse_model *m, struct model_proc *p, struct model_thread *t,
		     uint64_t limit)
{
	if (!t || !t->api_waiting)
		return;
	const struct model_api *a = &t->api;
	uint64_t end = a->end_ns < limit ? a->end_ns : limit;
	struct out_dev_link l = { a->corr, a->ext_id };
	const char *cuda = a->vendor == RAW_VENDOR_SIM ? out_trace_sim_api(a->name) : NULL;
	out_trace_api(m->out.trace, p->pid, model_out_tid(t), api_cat(a->domain),
		      cuda ? cuda : a->name, cuda ? a->name : NULL, a->start_ns,
		      end > a->start_ns ? end : a->start_ns, a->cbid, &l);
	t->api_waiting = 0;
}

void model_api_finish(struct parse_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++)
		for (size_t j = 0; j < m->procs[i]->nthreads; j++)
			model_api_flush(m, m->procs[i], m->procs[i]->threads[j], UINT64_MAX);
}

/* Correlations live by value in a ring, numbered as remembered; the map
 * gives a correlation's number (a malloc per call and a pointer chase
 * were a twentieth of a parse). */
static struct model_corr *corr_at(const struct model_proc *p, uint64_t k)
{
	return &p->corr_ring[k & (p->corr_cap - 1)];
}

struct model_corr *model_corr_find(struct model_proc *p, uint64_t corr)
{
	uintptr_t v = p && corr ? (uintptr_t)parse_idmap_get(&p->corr, corr) : 0;
	return v ? corr_at(p, v - 1) : NULL;
}

/* Forgets the oldest correlation. */
static void corr_drop(struct model_proc *p)
{
	uint64_t k = p->corr_first;
	uint64_t corr = corr_at(p, k)->corr;
	if ((uintptr_t)parse_idmap_get(&p->corr, corr) == k + 1)
		parse_idmap_del(&p->corr, corr);
	p->corr_first++;
	p->corr_n--;
}

/* Doubles the ring in place (realloc: a large one is remapped, its pages
 * neither copied nor faulted in again); number k moves from k mod the old
 * size to k mod the new one, so those with the old size's bit go up. */
static int ring_reserve(struct model_proc *p)
{
	if (p->corr_n < p->corr_cap)
		return 0;
	size_t old = p->corr_cap, cap = old ? old * 2 : 256;
	struct model_corr *v = realloc(p->corr_ring, cap * sizeof *v);
	if (!v)
		return -1;
	for (uint64_t k = p->corr_first; k < p->corr_first + p->corr_n; k++)
		if (k & old)
			v[k & (cap - 1)] = v[k & (old - 1)];
	p->corr_ring = v;
	p->corr_cap = cap;
	return 0;
}

/* Remembers a call's correlation; forgets those older than the window. */
static void corr_remember(struct model_proc *p, const struct model_corr *in, uint64_t now)
{
	while (p->corr_n && (p->corr_n >= MODEL_CORR_MAX ||
			     corr_at(p, p->corr_first)->start_ns + MODEL_CORR_KEEP_NS <= now))
		corr_drop(p);
	if (ring_reserve(p) != 0)
		return;
	uint64_t k = p->corr_first + p->corr_n;
	void *num = (void *)(uintptr_t)(k + 1);
	if (parse_idmap_put(&p->corr, in->corr, num) == num)
		return;   /* out of memory: not remembered */
	*corr_at(p, k) = *in;
	p->corr_n++;
}

void model_corr_free(struct model_proc *p)
{
	free(p->corr_ring);
	p->corr_ring = NULL;
	p->corr_n = p->corr_cap = 0;
	parse_idmap_free(&p->corr);
}

/* The op of t that made a call at [start, end], and what it gives the call. */
static void launcher(struct parse_model *m, struct model_thread *t, struct model_api *a,
		     struct model_corr *c)
{
	long k = model_op_at(t, a->start_ns);
	if (k < 0)
		return;
	const struct model_op *o = &t->ops[k];
	a->ext_id = c->ext_id = o->id;
	c->shapes = o->shapes;
	c->types = o->types;
	if (a->end_ns > o->end_ns)
		a->end_ns = o->end_ns;
	struct model_devnode *n = a->corr ? model_devnode_for(m, t, (size_t)k) : NULL;
	if (n)
		model_devnode_pending(n);
}

void model_on_dev_api(struct parse_model *m, struct parse_stream *s)
{
	MODEL_PAYLOAD(s, struct raw_dev_api, ra);
	struct model_proc *p = s->proc;
	struct model_thread *t = p ? model_thread_of(p, model_caller(p, ra.tid)) : NULL;
	if (!t)
		return;
	uint64_t end = ra.end > s->ns ? ra.end : s->ns;
	const char *name = parse_stream_str(s, ra.name_id);
	model_api_flush(m, p, t, s->ns);
	out_api_stat_add(model_apistat(m, p), ra.domain == RAW_API_DRIVER ? "Driver" : "Runtime", name,
			 end - s->ns);
	t->has_dev = 1;
	t->api = (struct model_api){ s->ns, end, ra.correlation, 0, name, ra.cbid, ra.domain,
				     ra.vendor };
	struct model_corr c = { .corr = ra.correlation, .start_ns = s->ns, .end_ns = end,
				.tid = model_out_tid(t) };
	launcher(m, t, &t->api, &c);
	model_gpuann_note(t, &c);
	if (ra.correlation)
		corr_remember(p, &c, s->ns);
	t->api_waiting = 1;
	m->n.dev_apis++;
}
