/* Marks, ranges on a thread (push/pop) and ranges across threads. */
#include "model/parse_model_int.h"

#include <inttypes.h>
#include <stdlib.h>

#define CAT_USER "user_annotation"

struct model_async {
	uint64_t id;
	const char *name;
	uint64_t start_ns;
	int32_t tid;
	const char *domain;
};

void model_event_args(struct jo *j, const char *domain, int unfinished)
{
	if (!domain && !unfinished)
		return;
	jo_key(j, "args");
	jo_obj_begin(j);
	if (domain)
		jo_kstr(j, "domain", domain);
	if (unfinished) {
		jo_key(j, "unfinished");
		jo_bool(j, 1);
	}
	jo_obj_end(j);
}

/* The domain of a record's domain id: NULL for the default (0). */
static const char *domain_of(const struct parse_stream *s, uint32_t id)
{
	return id ? parse_stream_str(s, id) : NULL;
}

void model_on_mark(struct parse_model *m, struct parse_stream *s)
{
	MODEL_PAYLOAD(s, struct raw_mark, mk);
	if (!s->proc)
		return;
	model_api_flush(m, s->proc, s->thr, s->ns);
	const char *msg = parse_stream_str(s, mk.msg_id);
	if (s->thr && msg && MODEL_STARTS(msg, MODEL_BUILT_PREFIX))
		model_loop_hint(m, s->proc, s->thr, &s->thr->built_ns, s->ns);
	out_trace_begin(m->out.trace, "i", CAT_USER, msg, s->proc->pid, s->file.hdr.tid, s->ns);
	jo_kstr(&m->out.trace->j, "s", "t");
	model_event_args(&m->out.trace->j, domain_of(s, mk.domain_id), 0);
	out_trace_end(m->out.trace);
}

void model_on_push(struct parse_model *m, struct parse_stream *s)
{
	MODEL_PAYLOAD(s, struct raw_range_push, rp);
	struct model_thread *t = s->thr;
	if (!t)
		return;
	model_api_flush(m, s->proc, t, s->ns);
	if (t->depth == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct model_range *v = realloc(t->stack, cap * sizeof *v);
		if (!v)
			return;  /* its pop will then close the enclosing range early */
		t->stack = v;
		t->cap = cap;
	}
	const char *name = parse_stream_str(s, rp.name_id);
	if (!t->fetch_ns && name && MODEL_IS(name, MODEL_FETCH_NAME))
		model_loop_hint(m, s->proc, t, &t->fetch_ns, s->ns);
	if (name && s->proc && MODEL_IS(name, MODEL_WORKER_FETCH))
		s->proc->fetches = 1;
	t->stack[t->depth++] = (struct model_range){ name, s->ns, domain_of(s, rp.domain_id), 0 };
}

/* Ranges named "prof::..." are prof's own work on the program's thread
 * (the Python hooks' operator flush): category "prof", never taken for
 * the program's annotations. */
static void emit_range(struct parse_model *m, struct parse_stream *s,
		       const struct model_range *r, uint64_t end_ns, int unfinished)
{
	int own = r->name && MODEL_STARTS(r->name, MODEL_OWN_PREFIX);
	const char *cat = own ? "prof" : r->name && MODEL_STARTS(r->name, MODEL_MODULE_PREFIX) ?
			  CAT_MODULE : CAT_USER;
	if (!own && s->thr)
		model_range_done(m, s->proc, s->thr, r, end_ns);
	if (!r->domain) {
		out_trace_complete(m->out.trace, s->proc->pid, s->file.hdr.tid, cat, r->name,
				   r->start_ns, end_ns, -1, unfinished);
		return;
	}
	out_trace_begin(m->out.trace, "X", cat, r->name, s->proc->pid, s->file.hdr.tid,
			r->start_ns);
	uint64_t dur = end_ns > r->start_ns ? end_ns - r->start_ns : 0;
	jo_kns_us(&m->out.trace->j, "dur", (int64_t)dur);
	model_event_args(&m->out.trace->j, r->domain, unfinished);
	out_trace_end(m->out.trace);
}

void model_on_pop(struct parse_model *m, struct parse_stream *s)
{
	struct model_thread *t = s->thr;
	if (!t)
		return;
	model_api_flush(m, s->proc, t, s->ns);
	if (t->depth == 0) {
		m->n.unmatched_pops++;
		return;
	}
	t->depth--;
	emit_range(m, s, &t->stack[t->depth], s->ns, 0);
}

/* Each enclosing range ends 1 ns after the one inside it, for the reason
 * parse_stream.h gives; nothing follows on the thread. */
void model_close_stack(struct parse_model *m, struct parse_stream *s, uint64_t end_ns)
{
	struct model_thread *t = s->thr;
	while (t->depth > 0) {
		t->depth--;
		m->n.unfinished_ranges++;
		emit_range(m, s, &t->stack[t->depth], end_ns++, 1);
	}
}

/* Async ids are per process image; the string keeps images apart. */
static void async_event(struct parse_model *m, const struct model_proc *p, const char *ph,
			const struct model_async *a, int32_t tid, uint64_t ns, int unfinished)
{
	char id[72];   /* "<pid>.<n>.<id>", without snprintf's cost */
	size_t k = jo_fmt_int(id, p->pid);
	id[k++] = '.';
	k += jo_fmt_int(id + k, p->n);
	id[k++] = '.';
	k += jo_fmt_uint(id + k, a->id);
	id[k] = '\0';
	out_trace_begin(m->out.trace, ph, CAT_USER, a->name, p->pid, tid, ns);
	jo_kstr(&m->out.trace->j, "id", id);
	model_event_args(&m->out.trace->j, *ph == 'b' ? a->domain : NULL, unfinished);
	out_trace_end(m->out.trace);
}

void model_on_start(struct parse_model *m, struct parse_stream *s)
{
	MODEL_PAYLOAD(s, struct raw_range_start, rs);
	struct model_proc *p = s->proc;
	if (!p)
		return;
	struct model_async *a = malloc(sizeof *a);
	if (!a)
		return;
	*a = (struct model_async){ rs.id, parse_stream_str(s, rs.name_id), s->ns,
				   s->file.hdr.tid, domain_of(s, rs.domain_id) };
	void *prev = parse_idmap_put(&p->async, rs.id, a);
	if (prev == a) {
		free(a);
		return;
	}
	if (prev) {  /* the id was reused before its end: close the old one */
		struct model_async *old = prev;
		m->n.unfinished_async++;
		async_event(m, p, "e", old, old->tid, s->ns, 1);
		free(old);
	}
	async_event(m, p, "b", a, a->tid, s->ns, 0);
}

void model_on_end(struct parse_model *m, struct parse_stream *s)
{
	MODEL_PAYLOAD(s, struct raw_range_end, re);
	struct model_proc *p = s->proc;
	if (!p)
		return;
	struct model_async *a = parse_idmap_del(&p->async, re.id);
	if (!a) {
		m->n.unmatched_ends++;
		return;
	}
	async_event(m, p, "e", a, s->file.hdr.tid, s->ns, 0);
	free(a);
}

struct async_list {
	struct model_async **v;
	size_t n;
};

static void collect(void *ctx, void *val)
{
	struct async_list *l = ctx;
	l->v[l->n++] = val;
}

static int async_cmp(const void *pa, const void *pb)
{
	const struct model_async *a = *(struct model_async *const *)pa;
	const struct model_async *b = *(struct model_async *const *)pb;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* Ranges never ended close at the process's last moment, in start order
 * so the output does not depend on the map's layout. */
void model_close_async(struct parse_model *m, struct model_proc *p)
{
	struct async_list l = { calloc(p->async.n ? p->async.n : 1, sizeof *l.v), 0 };
	if (!l.v)
		return;
	parse_idmap_each(&p->async, collect, &l);
	qsort(l.v, l.n, sizeof *l.v, async_cmp);
	for (size_t i = 0; i < l.n; i++) {
		parse_idmap_del(&p->async, l.v[i]->id);
		m->n.unfinished_async++;
		async_event(m, p, "e", l.v[i], l.v[i]->tid, p->last_ns, 1);
		free(l.v[i]);
	}
	free(l.v);
}
