/* gc_detect: a thread's START and STOP of a Python collection, paired into
 * a "GC" range (category "GC") on the thread and a gc_record.csv row. */
#include "model/parse_model_int.h"

#include "common/jo_fmt.h"

static void emit_gc(struct parse_model *m, struct parse_stream *s, uint64_t end_ns,
		    const struct raw_gc *stop, int unfinished)
{
	struct model_thread *t = s->thr;
	struct out_trace *tr = m->out.trace;
	char *p = out_trace_x_at(tr, "GC", "GC", s->proc->pid, s->file.hdr.tid, t->gc_start_ns,
				 end_ns);
	p = JO_LIT(p, ",\"args\":{\"generation\":");
	p += jo_fmt_uint(p, stop->generation);
	p = JO_LIT(p, ",\"collected\":");
	p += jo_fmt_uint(p, stop->collected);
	p = JO_LIT(p, ",\"uncollectable\":");
	p += jo_fmt_uint(p, stop->uncollectable);
	if (unfinished)
		p = JO_LIT(p, ",\"unfinished\":true");
	p = JO_LIT(p, "}}");
	out_trace_line_end(tr, p);
	OUT_SINKS_EMIT(m->out.sinks, gc, s->proc->pid, s->file.hdr.tid, t->gc_start_ns, end_ns, stop);
	t->gc_open = 0;
	m->n.gc_collections++;
}

void model_on_gc(struct parse_model *m, struct parse_stream *s)
{
	MODEL_PAYLOAD(s, struct raw_gc, g);
	struct model_thread *t = s->thr;
	if (!t || !s->proc)
		return;
	model_api_flush(m, s->proc, t, s->ns);
	if (g.phase == RAW_GC_START) {
		/* a start without its stop (a damaged stream) ends where this begins */
		if (t->gc_open) {
			struct raw_gc none = { RAW_GC_STOP, t->gc_generation, 0, 0 };
			emit_gc(m, s, s->ns, &none, 1);
		}
		t->gc_open = 1;
		t->gc_start_ns = s->ns;
		t->gc_generation = g.generation;
	} else if (g.phase == RAW_GC_STOP && t->gc_open) {
		emit_gc(m, s, s->ns, &g, 0);
	}
}

/* A collection still open when its thread's stream ends (the process
 * died in it) ends there, "unfinished", with nothing known found. */
void model_close_gc(struct parse_model *m, struct parse_stream *s, uint64_t end_ns)
{
	if (!s->thr || !s->thr->gc_open || !s->proc)
		return;
	struct raw_gc none = { RAW_GC_STOP, s->thr->gc_generation, 0, 0 };
	emit_gc(m, s, end_ns, &none, 1);
}
