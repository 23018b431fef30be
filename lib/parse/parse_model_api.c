/* Device API calls: leaves on their thread, linked to the op that made them. */
#include "parse/parse_model_int.h"

#include <stdlib.h>

#include "parse/out_trace_dev.h"

long model_op_at(const struct model_thread *t, uint64_t ns)
{
	for (size_t i = t->nops; i-- > 0;)
		if (t->ops[i].start_ns <= ns && ns < t->ops[i].end_ns)
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
	out_trace_api(m->out.trace, p->pid, model_out_tid(t), api_cat(a->domain), a->name, a->start_ns,
		      end > a->start_ns ? end : a->start_ns, a->cbid, &l);
	t->api_waiting = 0;
}

void model_api_finish(struct parse_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++)
		for (size_t j = 0; j < m->procs[i]->nthreads; j++)
			model_api_flush(m, m->procs[i], m->procs[i]->threads[j], UINT64_MAX);
}

struct model_corr *model_corr_find(struct model_proc *p, uint64_t corr)
{
	return p && corr ? parse_idmap_get(&p->corr, corr) : NULL;
}

/* Forgets the oldest correlation. */
static void corr_drop(struct model_proc *p)
{
	struct model_corr *c = p->corr_ring[p->corr_head];
	if (parse_idmap_get(&p->corr, c->corr) == c)
		parse_idmap_del(&p->corr, c->corr);
	free(c);
	p->corr_head = (p->corr_head + 1) % p->corr_cap;
	p->corr_n--;
}

static int ring_reserve(struct model_proc *p)
{
	if (p->corr_n < p->corr_cap)
		return 0;
	size_t cap = p->corr_cap ? p->corr_cap * 2 : 256;
	struct model_corr **v = malloc(cap * sizeof *v);
	if (!v)
		return -1;
	for (size_t i = 0; i < p->corr_n; i++)
		v[i] = p->corr_ring[(p->corr_head + i) % p->corr_cap];
	free(p->corr_ring);
	p->corr_ring = v;
	p->corr_cap = cap;
	p->corr_head = 0;
	return 0;
}

/* Remembers a call's correlation; forgets those older than the window. */
static void corr_remember(struct model_proc *p, const struct model_corr *in, uint64_t now)
{
	while (p->corr_n && (p->corr_n >= MODEL_CORR_MAX ||
			     p->corr_ring[p->corr_head]->start_ns + MODEL_CORR_KEEP_NS <= now))
		corr_drop(p);
	struct model_corr *c = malloc(sizeof *c);
	if (!c || ring_reserve(p) != 0) {
		free(c);
		return;
	}
	*c = *in;
	if (parse_idmap_put(&p->corr, c->corr, c) == c) {
		free(c);
		return;
	}
	p->corr_ring[(p->corr_head + p->corr_n++) % p->corr_cap] = c;
}

void model_corr_free(struct model_proc *p)
{
	while (p->corr_n)
		corr_drop(p);
	free(p->corr_ring);
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
	t->api = (struct model_api){ s->ns, end, ra.correlation, 0, name, ra.cbid, ra.domain };
	struct model_corr c = { .corr = ra.correlation, .start_ns = s->ns, .end_ns = end,
				.tid = model_out_tid(t) };
	launcher(m, t, &t->api, &c);
	if (ra.correlation)
		corr_remember(p, &c, s->ns);
	t->api_waiting = 1;
	m->n.dev_apis++;
}
