/* Recording windows: from recording switched on to switched off. */
#include "model/parse_model_int.h"

const char *model_cause_name(uint32_t cause)
{
	switch (cause) {
	case RAW_CAUSE_START:    return "start";
	case RAW_CAUSE_API:      return "api";
	case RAW_CAUSE_LAUNCHER: return "launcher";
	case RAW_CAUSE_SCHEDULE: return "schedule";
	case RAW_CAUSE_DYNAMIC:  return "dynamic";
	case RAW_CAUSE_RANK:     return "rank";
	default:                 return "unknown";
	}
}

/* Windows are numbered per pid, across the images exec gave it. */
static uint64_t next_number(struct parse_model *m, struct model_proc *p)
{
	uint64_t n = 0;
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i]->pid == p->pid)
			n += m->procs[i]->windows;
	p->windows++;
	return n + 1;
}

static void emit(struct parse_model *m, struct model_proc *p, uint64_t end_ns)
{
	char name[96];
	snprintf(name, sizeof name, "Window #%llu (%s)", (unsigned long long)p->win_no,
		 model_cause_name(p->win_cause));
	/* Kineto's category for its own span: HTA's trace diff then takes
	 * it for what it is, not for an operator */
	out_trace_complete(m->out.trace, p->pid, MODEL_WINDOWS_TID, "Trace", name, p->win_start,
			   end_ns > p->win_start ? end_ns : p->win_start, -1, 0);
	p->win_open = 0;
	m->n.windows++;
}

void model_window_switch(struct parse_model *m, struct model_proc *p, int on, uint32_t cause,
			 uint64_t ns)
{
	if (on && !p->win_open) {
		p->win_open = 1;
		p->win_cause = cause;
		p->win_start = ns;
		p->win_no = next_number(m, p);
	} else if (!on && p->win_open) {
		emit(m, p, ns);
	}
}

/* A window still open ends with its process. */
void model_windows_finish(struct parse_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i]->win_open)
			emit(m, m->procs[i], m->procs[i]->last_ns);
}
