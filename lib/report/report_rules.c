/* The findings of report.html: one rule a row, its threshold beside it.
 * outputs.md ("report.html") documents the same table; a rule whose
 * facts are not known says nothing. */
#include "report/report.h"

#include <math.h>
#include <stdio.h>

void report_facts_init(struct report_facts *f)
{
	f->step_us = f->data_us = f->device_us = f->free_us = f->comm_exposed_us = NAN;
	f->gc_us = f->gc_count = f->mem_peak_mb = f->mem_total_mb = NAN;
	f->ops_in_us = f->ops_out_us = f->slow_pct = f->slow_excess_us = NAN;
	f->slow_rank = -1;
	f->slow_phase = NULL;
	f->slow_late = 0;
}

/* part / whole in %, NaN when either is unknown or whole is not > 0. */
static double share(double part, double whole)
{
	return isnan(part) || isnan(whole) || !(whole > 0) ? NAN : 100.0 * part / whole;
}

static double data_share(const struct report_facts *f) { return share(f->data_us, f->step_us); }
static double idle_share(const struct report_facts *f) { return share(f->free_us, f->device_us); }
static double comm_share(const struct report_facts *f)
{
	return share(f->comm_exposed_us, f->device_us);
}
static double gc_share(const struct report_facts *f) { return share(f->gc_us, f->step_us); }
static double mem_share(const struct report_facts *f)
{
	return share(f->mem_peak_mb, f->mem_total_mb);
}
static double outside_share(const struct report_facts *f)
{
	if (isnan(f->ops_in_us) || isnan(f->ops_out_us) || !(f->step_us > 0))
		return NAN;
	return share(f->ops_out_us, f->ops_in_us + f->ops_out_us);
}
static double slow_excess(const struct report_facts *f) { return f->slow_pct; }

const struct report_rule report_rules[] = {
	{ "data_loading", 10, "%", data_share,
	  "Data loading takes", "% of the step time",
	  "more DataLoader workers (num_workers), pin_memory=True, a larger prefetch_factor" },
	{ "device_idle", 30, "%", idle_share,
	  "The device is idle", "% of the step",
	  "launch-bound: many small kernels; try CUDA graphs, torch.compile or a larger batch" },
	{ "communication", 10, "%", comm_share,
	  "Communication not overlapped with compute takes", "% of the step",
	  "overlap it: DDP bucket size, gradient accumulation, check the interconnect" },
	{ "gc_pauses", 2, "%", gc_share,
	  "Python garbage collection takes", "% of the step time",
	  "gc.freeze() after set-up, fewer short-lived objects, gc.collect() between epochs" },
	{ "memory_capacity", 90, "%", mem_share,
	  "The device's memory peaks at", "% of its capacity",
	  "near out-of-memory: a smaller batch, activation checkpointing, mixed precision" },
	{ "outside_steps", 50, "%", outside_share,
	  "Operators outside the steps take", "% of the operators' self time",
	  "set-up or evaluation dominates what was recorded: record only the training loop "
	  "(a schedule, --delay) or mark its steps" },
	{ "slow_rank", 10, "%", slow_excess,
	  "One rank is", "% slower than the median rank",
	  "look at that rank's host and data: load imbalance, a slower device or link" },
};
const size_t report_nrules = sizeof report_rules / sizeof report_rules[0];

size_t report_findings(const struct report_facts *f, struct report_finding *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < report_nrules && n < max; i++) {
		const struct report_rule *r = &report_rules[i];
		double v = r->value(f);
		if (isnan(v) || !(v > r->threshold))
			continue;
		out[n].rule = r;
		out[n].value = v;
		snprintf(out[n].text, sizeof out[n].text, "%s %.1f%s", r->what, v, r->after);
		/* the time first: the percent is of the whole step, the phase
		 * says where the time went */
		if (r->value == slow_excess && f->slow_late)
			snprintf(out[n].text, sizeof out[n].text,
				 "Rank %d arrives last at the collectives: the others wait %.3f ms "
				 "a step for it (+%.1f%% of the median step)", f->slow_rank,
				 f->slow_excess_us / 1000.0, v);
		else if (r->value == slow_excess && f->slow_rank >= 0 && !isnan(f->slow_excess_us))
			snprintf(out[n].text, sizeof out[n].text,
				 "Rank %d is %.3f ms a step slower than the median rank in %s "
				 "(+%.1f%% of the median step)", f->slow_rank,
				 f->slow_excess_us / 1000.0,
				 f->slow_phase ? f->slow_phase : "its steps", v);
		else if (r->value == slow_excess && f->slow_rank >= 0)
			snprintf(out[n].text, sizeof out[n].text,
				 "Rank %d is %.1f%% slower than the median rank in %s", f->slow_rank,
				 v, f->slow_phase ? f->slow_phase : "its steps");
		n++;
	}
	return n;
}

void report_finding_line(const struct report_finding *f, char *buf, size_t len)
{
	snprintf(buf, len, "%s; try %s", f->text, f->rule->advice);
}
