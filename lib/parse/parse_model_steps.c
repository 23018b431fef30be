/* Step boundaries and recording switched on and off. */
#include "parse/parse_model_int.h"

#include <stdlib.h>

static void add_step(struct parse_model *m, const struct out_step *st)
{
	if (m->nsteps == m->capsteps) {
		size_t cap = m->capsteps ? m->capsteps * 2 : 64;
		struct out_step *v = realloc(m->steps, cap * sizeof *v);
		if (!v)
			return;
		m->steps = v;
		m->capsteps = cap;
	}
	m->steps[m->nsteps++] = *st;
}

/* A step that begins where recording began has a conventional start; if
 * the calling thread opened a range after it that is still open (a range
 * around the training loop), start the step with that range, so the two
 * nest. Steps that begin at a previous step's end keep it. */
static uint64_t step_start(const struct model_proc *p, const struct parse_stream *s)
{
	const struct model_thread *t = s->thr;
	uint64_t from = p->step_from;
	if (p->resumed && t && t->depth && t->stack[t->depth - 1].start_ns > from)
		from = t->stack[t->depth - 1].start_ns;
	return from;
}

void model_on_step(struct parse_model *m, struct parse_stream *s)
{
	MODEL_PAYLOAD(s, struct raw_step, rs);
	struct model_proc *p = s->proc;
	if (!p)
		return;
	p->step_tid = s->file.hdr.tid;
	model_ops_boundary(m, p, p->step_tid, s->ns);
	int known = p->recording && (rs.number == p->last_step + 1 || p->resumed);
	if (known) {
		struct out_step st = { p->pid, s->file.hdr.tid, rs.number, step_start(p, s), s->ns };
		char name[48];
		snprintf(name, sizeof name, "ProfilerStep#%llu", (unsigned long long)rs.number);
		out_trace_complete(m->trace, p->pid, st.tid, "user_annotation", name,
				   st.start_ns, st.end_ns,
				   rs.number > INT64_MAX ? INT64_MAX : (int64_t)rs.number, 0);
		add_step(m, &st);
		p->steps++;
	} else {
		m->n.steps_unknown_start++;
	}
	p->last_step = rs.number;
	p->step_from = s->ns;
	p->resumed = 0;
}

/* Recording switched (back) on is a step boundary: the step in progress
 * starts afresh there. */
static void switch_proc(struct parse_model *m, struct model_proc *p, int on, uint32_t cause,
			uint64_t ns)
{
	/* The first switch-on before any step marks when recording began. */
	if (on && (!p->recording || (!p->seen_recording && p->steps == 0))) {
		p->step_from = ns;
		p->resumed = 1;
		model_ops_boundary(m, p, p->step_tid, ns);
	}
	p->recording = on;
	p->seen_recording = 1;
	model_window_switch(m, p, on, cause, ns);
}

/* Recording switched on starts the step in progress afresh: what came
 * before it was not recorded. */
void model_on_recording(struct parse_model *m, struct parse_stream *s)
{
	MODEL_PAYLOAD(s, struct raw_recording, rr);
	int on = rr.on != 0;
	if (!s->proc) {  /* the launcher's switch: every process */
		for (size_t i = 0; i < m->nprocs; i++)
			if (m->procs[i]->first_ns <= s->ns)  /* later ones say their own state */
				switch_proc(m, m->procs[i], on, rr.cause, s->ns);
		return;
	}
	switch_proc(m, s->proc, on, rr.cause, s->ns);
	out_trace_begin(m->trace, "i", "prof", on ? "recording resumed" : "recording paused",
			s->proc->pid, s->file.hdr.tid, s->ns);
	jo_kstr(&m->trace->j, "s", "p");
	jo_key(&m->trace->j, "args");
	jo_obj_begin(&m->trace->j);
	jo_kstr(&m->trace->j, "cause", model_cause_name(rr.cause));
	jo_obj_end(&m->trace->j);
	out_trace_end(m->trace);
}
