/* Step boundaries and recording switched on and off. */
#include "model/parse_model_int.h"

#include <errno.h>
#include <stdlib.h>

#include "common/grow.h"
#include "outputs/tables/out_dev_usage.h"

static int add_step(struct parse_model *m, struct model_proc *p, const struct out_step *st)
{
	if (m->nsteps == m->capsteps) {
		size_t cap = m->capsteps ? m->capsteps * 2 : 64;
		struct out_step *v = realloc(m->steps, cap * sizeof *v);
		if (v)
			m->steps = v;
		struct model_proc **pv = realloc(m->step_procs, cap * sizeof *pv);
		if (pv)
			m->step_procs = pv;
		if (!v || !pv)
			return -1;
		m->capsteps = cap;
	}
	/* kernel and operator rows take a pid's latest step that starts
	 * before them: out_stepwait_settle's answer is out_step_find's while
	 * the steps of a pid come in start order (they do: each starts at or
	 * after the boundary the one before ended). Else rows wait for the
	 * end. */
	for (size_t i = m->nsteps; i-- > 0;) {
		if (m->steps[i].pid == st->pid) {
			m->steps_unordered |= m->steps[i].start_ns >= st->start_ns;
			break;
		}
	}
	m->step_procs[m->nsteps] = p;
	m->steps[m->nsteps++] = *st;
	return 0;
}

/* A kernel or operator row's step, once no step to come can hold it: every step of a
 * process to come starts at or after its boundary (step_from). */
static int64_t settled_step(void *ctx, int32_t pid, uint64_t ns)
{
	const struct parse_model *m = ctx;
	if (m->steps_unordered)
		return OUT_STEPWAIT;
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i]->pid == pid && ns >= m->procs[i]->step_from)
			return OUT_STEPWAIT;
	for (size_t i = m->nsteps; i-- > 0;) {
		const struct out_step *s = &m->steps[i];
		if (s->pid == pid && s->start_ns <= ns)
			return ns < s->end_ns && s->number <= INT64_MAX ? (int64_t)s->number : -1;
	}
	return -1;
}

/* The boundary of p moved: the kernel and operator rows it held back may
 * go. */
static void settle_rows(struct parse_model *m)
{
	OUT_SINKS_EMIT(m->out.sinks, step_settled, settled_step, m, m->want_steps, m->nwant_steps);
}

void model_steps_reset_devices(struct model_proc *p)
{
	for (size_t i = 0; i < p->ndevs; i++)
		out_step_acc_reset(&p->devs[i].acc);
}

/* The device rows of the step just added (index i), from what each device
 * of the process gathered since the step began. */
static void device_rows(struct parse_model *m, struct model_proc *p, size_t i)
{
	for (size_t d = 0; d < p->ndevs; d++) {
		struct model_step_row *v = grow_room(m->dev_rows, m->ndev_rows, &m->capdev_rows,
						     sizeof *v);
		if (!v)
			break;
		m->dev_rows = v;
		struct model_step_row *r = &m->dev_rows[m->ndev_rows++];
		r->step = i;
		out_step_acc_row(&p->devs[d].acc, &m->steps[i], (int32_t)p->devs[d].device, &r->row);
	}
	model_steps_reset_devices(p);
}

/* A step that begins where recording began has a conventional start, and
 * when recording began with the process that is before the imports. So it
 * starts later when the calling thread says where its loop began: at a
 * range it opened since and still has open (one around the loop, so that
 * the two nest), after the optimizer was built, or at the first batch
 * taken from a DataLoader (gradient accumulation takes several per step:
 * the first), whichever is latest. Steps that begin at a previous step's
 * end keep it. */
static uint64_t step_start(const struct model_proc *p, const struct parse_stream *s)
{
	const struct model_thread *t = s->thr;
	uint64_t from = p->step_from;
	if (!p->resumed || !t)
		return from;
	if (t->depth && t->stack[t->depth - 1].start_ns > from)
		from = t->stack[t->depth - 1].start_ns;
	if (t->built_ns > from)
		from = t->built_ns;
	if (t->fetch_ns > from)
		from = t->fetch_ns;
	return from;
}

void model_loop_hint(struct parse_model *m, struct model_proc *p, struct model_thread *t,
		     uint64_t *hint, uint64_t ns)
{
	*hint = ns;
	if (p && p->resumed && t->tid == p->step_tid && ns > p->step_from) {
		model_steps_reset_devices(p);
		model_stepsel_end(m, p, 0, 0);
	}
}

/* Recording (re)starts: the loop hints before it say nothing of what follows. */
static void forget_loop_hints(struct model_proc *p)
{
	for (size_t i = 0; i < p->nthreads; i++)
		p->threads[i]->built_ns = p->threads[i]->fetch_ns = 0;
}

void model_on_step(struct parse_model *m, struct parse_stream *s)
{
	MODEL_PAYLOAD(s, struct raw_step, rs);
	struct model_proc *p = s->proc;
	if (!p)
		return;
	model_api_flush(m, p, s->thr, s->ns);
	p->step_tid = s->file.hdr.tid;
	model_ops_boundary(m, p, p->step_tid, s->ns);
	int known = p->recording && (rs.number == p->last_step + 1 || p->resumed);
	if (known) {
		struct out_step st = { p->pid, s->file.hdr.tid, rs.number, step_start(p, s), s->ns };
		char name[48];
		snprintf(name, sizeof name, "ProfilerStep#%llu", (unsigned long long)rs.number);
		out_trace_complete(m->out.trace, p->pid, st.tid, "user_annotation", name,
				   st.start_ns, st.end_ns,
				   rs.number > INT64_MAX ? INT64_MAX : (int64_t)rs.number, 0);
		if (add_step(m, p, &st) == 0)
			device_rows(m, p, m->nsteps - 1);
		p->steps++;
		model_stepsel_end(m, p, 1, rs.number);
	} else {
		model_stepsel_end(m, p, 0, rs.number);
		m->n.steps_unknown_start++;
		model_steps_reset_devices(p);
	}
	p->last_step = rs.number;
	p->step_from = s->ns;
	p->resumed = 0;
	settle_rows(m);
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
		model_steps_reset_devices(p);
		model_stepsel_end(m, p, 0, 0);
		forget_loop_hints(p);
	}
	p->recording = on;
	p->seen_recording = 1;
	model_window_switch(m, p, on, cause, ns);
	settle_rows(m);
}

/* Whether a process had read the recording state (its agent's start,
 * its process record) by `ns`: a later one says its own state. Its first
 * stream may open well after that read (a slow start): by that measure
 * a switch in between reached no process, and the window it opened was
 * lost. Without a process record, its first stream's opening. */
static int proc_begun(const struct model_proc *p, uint64_t ns)
{
	return (p->begin_ns ? p->begin_ns : p->first_ns) <= ns;
}

/* Recording switched on starts the step in progress afresh: what came
 * before it was not recorded. */
void model_on_recording(struct parse_model *m, struct parse_stream *s)
{
	MODEL_PAYLOAD(s, struct raw_recording, rr);
	int on = rr.on != 0;
	if (!s->proc) {  /* the launcher's switch: every process begun by then */
		for (size_t i = 0; i < m->nprocs; i++)
			if (proc_begun(m->procs[i], s->ns))
				switch_proc(m, m->procs[i], on, rr.cause, s->ns);
		return;
	}
	switch_proc(m, s->proc, on, rr.cause, s->ns);
	out_trace_begin(m->out.trace, "i", "prof", on ? "recording resumed" : "recording paused",
			s->proc->pid, s->file.hdr.tid, s->ns);
	jo_kstr(&m->out.trace->j, "s", "p");
	jo_key(&m->out.trace->j, "args");
	jo_obj_begin(&m->out.trace->j);
	jo_kstr(&m->out.trace->j, "cause", model_cause_name(rr.cause));
	jo_obj_end(&m->out.trace->j);
	out_trace_end(m->out.trace);
}

/* A step's row for device `device` among the stored rows from *k on. */
static int stored_row(const struct parse_model *m, size_t *k, size_t step, int32_t device,
		      struct out_step_row *out)
{
	while (*k < m->ndev_rows && m->dev_rows[*k].step < step)
		(*k)++;
	for (size_t j = *k; j < m->ndev_rows && m->dev_rows[j].step == step; j++)
		if (m->dev_rows[j].row.device_id == device) {
			*out = m->dev_rows[j].row;
			return 1;
		}
	return 0;
}

int64_t model_proc_rank(const struct model_proc *p)
{
	char *end;
	if (!p->rank || !*p->rank)
		return -1;
	long long r = strtoll(p->rank, &end, 10);
	return *end == '\0' && r >= 0 && r <= INT32_MAX ? (int64_t)r : -1;
}

/* Per step: a row per device its process used at any time (zeros for a
 * device first used after the step), else the host-only row. */
int model_step_rows(const struct parse_model *m, struct out_step_row **rows, size_t *n)
{
	size_t cap = 0, k = 0;
	for (size_t i = 0; i < m->nsteps; i++)
		cap += m->step_procs[i]->ndevs ? m->step_procs[i]->ndevs : 1;
	*n = 0;
	*rows = malloc((cap ? cap : 1) * sizeof **rows);
	if (!*rows)
		return -ENOMEM;
	for (size_t i = 0; i < m->nsteps; i++) {
		const struct model_proc *p = m->step_procs[i];
		size_t first = *n;
		if (!p->ndevs)
			out_step_host_row(&m->steps[i], &(*rows)[(*n)++]);
		for (size_t d = 0; d < p->ndevs; d++) {
			struct out_step_row *r = &(*rows)[(*n)++];
			int32_t dev = (int32_t)p->devs[d].device;
			if (!stored_row(m, &k, i, dev, r)) {
				struct out_step_acc none;
				out_step_acc_reset(&none);
				out_step_acc_row(&none, &m->steps[i], dev, r);
			}
			if (p->devs[d].vendor == OUT_VENDOR_HOST)
				out_step_host_comm(&m->steps[i], r);
		}
		int64_t rank = model_proc_rank(p);
		for (size_t j = first; j < *n; j++)
			(*rows)[j].rank = rank;
	}
	return 0;
}
