/*
 * --step-list for the sums (op_statistic.csv, api_statistic.csv): a
 * process's durations wait in tables of its own until its step ends, and
 * join the run's only if that step was asked for. A step's number is
 * known only at its end, so this is the one way to stay streaming; memory
 * follows the names a process uses, as the run's tables do.
 */
#include "model/parse_model_int.h"
#include "outputs/out_step_find.h"

int model_step_wanted(const struct parse_model *m, uint64_t number)
{
	return !m->want_steps || out_step_listed(m->want_steps, m->nwant_steps, number);
}

struct out_op_stat *model_opstat(struct parse_model *m, struct model_proc *p)
{
	return m->want_steps ? &p->sel_ops : m->out.opstat;
}

struct out_api_stat *model_apistat(struct parse_model *m, struct model_proc *p)
{
	return m->want_steps ? &p->sel_apis : m->out.apis;
}

void model_stepsel_end(struct parse_model *m, struct model_proc *p, int known,
		       uint64_t number)
{
	model_ranges_settle(m, p, known, number);
	if (!m->want_steps)
		return;
	/* memory that runs out in a merge is noted where it did (nomem.h) */
	if (known && model_step_wanted(m, number)) {
		out_namestat_merge(&m->out.opstat->st, &p->sel_ops.st);
		out_namestat_merge(&m->out.apis->st, &p->sel_apis.st);
	}
	out_namestat_zero(&p->sel_ops.st);
	out_namestat_zero(&p->sel_apis.st);
}

void model_stepsel_free(struct model_proc *p)
{
	out_op_stat_free(&p->sel_ops);
	out_api_stat_free(&p->sel_apis);
}
