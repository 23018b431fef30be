/*
 * The program's ranges for range_statistic.csv (outputs/tables/out_ranges.h,
 * through the `range` sink): each range as it ends, with its self time and,
 * for with_modules' ranges, its module path; counted in the step whose span
 * holds its start. A range that began in the step in progress waits for
 * that step's number, in a list per process that a step boundary empties;
 * one that began earlier is matched against the process's last steps.
 */
#include "model/parse_model_int.h"

#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

/* How far back among the steps a range that began before the step in
 * progress is looked for: ranges are shorter than a few steps. */
#define RANGESTAT_LOOKBACK 64

static int is_module(const struct model_range *r)
{
	return r->name && MODEL_STARTS(r->name, MODEL_MODULE_PREFIX);
}

/* "Net_0/Block_0/Linear_1": the module ranges open on the thread, then r;
 * malloc'd. */
static char *module_path(const struct model_thread *t, const struct model_range *r)
{
	char buf[1024];
	size_t len = 0, pre = strlen(MODEL_MODULE_PREFIX);
	buf[0] = '\0';
	for (size_t i = 0; i <= t->depth; i++) {
		const struct model_range *x = i < t->depth ? &t->stack[i] : r;
		if (!is_module(x))
			continue;
		int n = snprintf(buf + len, sizeof buf - len, "%s%s", len ? "/" : "", x->name + pre);
		if (n < 0 || (size_t)n >= sizeof buf - len)
			break;   /* deeper than a path can show: the outer part stays */
		len += (size_t)n;
	}
	return strdup(buf);
}

/* The step of `pid` whose span holds `ns`, among its last ones; -1: none. */
static int64_t step_holding(const struct parse_model *m, int32_t pid, uint64_t ns)
{
	size_t seen = 0;
	for (size_t i = m->nsteps; i-- > 0 && seen < RANGESTAT_LOOKBACK;) {
		const struct out_step *s = &m->steps[i];
		if (s->pid != pid)
			continue;
		seen++;
		if (ns >= s->start_ns && ns <= s->end_ns)
			return (int64_t)s->number;
		if (s->end_ns < ns)
			return -1;
	}
	return -1;
}

static void emit(struct parse_model *m, int module, const char *name, int64_t step,
		 uint64_t total, uint64_t self)
{
	struct out_range_ev ev = { module, name, step, total, self };
	OUT_SINKS_EMIT(m->out.sinks, range, &ev);
}

void model_range_done(struct parse_model *m, struct model_proc *p, struct model_thread *t,
		      const struct model_range *r, uint64_t end_ns)
{
	uint64_t total = end_ns > r->start_ns ? end_ns - r->start_ns : 0;
	uint64_t self = total > r->child_ns ? total - r->child_ns : 0;
	int module = is_module(r);
	/* the enclosing range of the same kind gives this one's time away */
	for (size_t i = t->depth; i-- > 0;)
		if (is_module(&t->stack[i]) == module) {
			t->stack[i].child_ns += total;
			break;
		}
	if (!r->name)
		return;
	char *path = module ? module_path(t, r) : NULL;
	const char *name = module ? path : r->name;
	if (!name)
		return;   /* memory ran out: noted (common/nomem.h), said by the parse */
	if (r->start_ns < p->step_from) {
		emit(m, module, name, step_holding(m, p->pid, r->start_ns), total, self);
		free(path);
		return;
	}
	struct model_rangewait *v = grow_room(p->rwait, p->nrwait, &p->caprwait, sizeof *v);
	if (v)
		p->rwait = v;   /* the old array is gone, whatever comes next */
	char *kept = v ? (path ? path : strdup(name)) : NULL;
	if (!kept) {
		emit(m, module, name, -1, total, self);
		free(path);
		return;
	}
	v[p->nrwait++] = (struct model_rangewait){ module, kept, r->start_ns, total, self };
}

void model_ranges_settle(struct parse_model *m, struct model_proc *p, int known, uint64_t number)
{
	uint64_t from = known && m->nsteps ? m->steps[m->nsteps - 1].start_ns : UINT64_MAX;
	for (size_t i = 0; i < p->nrwait; i++) {
		struct model_rangewait *w = &p->rwait[i];
		emit(m, w->module, w->name, known && w->start_ns >= from ? (int64_t)number : -1,
		     w->total_ns, w->self_ns);
		free(w->name);
	}
	p->nrwait = 0;
}
