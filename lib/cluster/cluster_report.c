/* cluster_analysis_output/report.html: each rank's typical step as
 * step_trace_time.csv splits it, the slow ranks marked, and the findings
 * of the whole cluster (report_rules.c), which findings.json holds too. */
#include "cluster/cluster.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/num.h"
#include "report/report.h"

/* The slow rank's fact: the largest excess in a phase of the rank's own
 * work (Computing, Free), else the late rank's (the others' wait for it),
 * as a share of the ranks' median step (v: the ranks' mean phases in ms,
 * as charted). Not of the phase's median, which is 0 where only the slow
 * rank waits. A rank slow in communication is not named: it waits, for
 * the late one. */
static void slow_fact(struct report_facts *f, const struct cluster_slow *s, const double *v,
		      size_t n)
{
	double *step = n ? malloc(n * sizeof *step) : NULL;
	if (!step)
		return;
	for (size_t i = 0; i < n; i++)
		step[i] = (v[i] + v[n + i] + v[2 * n + i] + v[3 * n + i]) * 1000;
	double med = num_median(step, n);
	free(step);
	for (size_t j = 0; j < s->nslow; j++)
		if (s->slow[j].phase != CLUSTER_PHASE_COMM &&
		    (isnan(f->slow_excess_us) || s->slow[j].excess > f->slow_excess_us)) {
			f->slow_excess_us = s->slow[j].excess;
			f->slow_rank = s->slow[j].rank;
			f->slow_phase = cluster_phase_name[s->slow[j].phase];
		}
	if (isnan(f->slow_excess_us) && s->nlate) {   /* the largest first */
		f->slow_excess_us = s->late[0].excess;
		f->slow_rank = s->late[0].rank;
		f->slow_late = 1;
	}
	if (!isnan(f->slow_excess_us) && med > 0)
		f->slow_pct = 100 * f->slow_excess_us / med;
}

static void slow_table(struct strbuf *sb, const struct cluster_slow *s)
{
	for (size_t i = 0; i < s->nlate; i++)
		sb_printf(sb, "<p>Rank %d arrives late at the collectives: it waits %.3f ms a "
			  "step in communication, %.3f ms less than the ranks' median; the others "
			  "wait for it.</p>\n", s->late[i].rank, s->late[i].value / 1000,
			  s->late[i].excess / 1000);
	if (!s->nslow) {
		sb_puts(sb, "<p>No rank is slower than the others (the rule: a rank's median "
			"step more than 10% and 1 ms above the ranks' median, per phase).</p>\n");
		return;
	}
	sb_puts(sb, "<table><tr><th>Rank</th><th>Phase</th><th>Its median (ms)</th>"
		"<th>Ranks' median (ms)</th><th>Above (%)</th></tr>\n");
	for (size_t i = 0; i < s->nslow; i++) {
		const struct cluster_verdict *v = &s->slow[i];
		char pct[32] = "-";   /* none of a median of 0 */
		if (v->pct >= 0)
			snprintf(pct, sizeof pct, "%.1f", v->pct);
		sb_printf(sb, "<tr><td>%d</td><td>%s</td><td>%.3f</td><td>%.3f</td><td>%s</td>"
			  "</tr>\n", v->rank, cluster_phase_name[v->phase], v->value / 1000,
			  v->median / 1000, pct);
	}
	sb_puts(sb, "</table>\n");
}

int cluster_write_report(const char *out_dir, const struct cluster *c,
			 const struct cluster_slow *s, FILE *log)
{
	struct strbuf sb = STRBUF_INIT;
	struct report_facts f;
	size_t n = c->n ? c->n : 1;
	double *v = calloc(4 * n, sizeof *v);
	char (*lab)[24] = calloc(n, sizeof *lab);
	const char **labels = calloc(n, sizeof *labels);
	int *mark = calloc(n, sizeof *mark);
	if (!v || !lab || !labels || !mark) {
		free(v); free(lab); free(labels); free(mark);
		return -12;
	}
	report_facts_init(&f);
	for (size_t i = 0; i < c->n; i++) {
		double m[4];
		cluster_rank_mean(&c->ranks[i], m);
		for (int k = 0; k < 4; k++)
			v[k * n + i] = m[k] / 1000;
		/* as a run's report: the device's idle time and exposed
		 * communication from device rows only; a host's row (no device
		 * activity) holds its whole step in Free */
		if (c->ranks[i].nsteps && c->ranks[i].steps[0].device_row == 1) {
			if (isnan(f.device_us))
				f.device_us = f.free_us = f.comm_exposed_us = 0;
			f.device_us += m[0] + m[1] + m[2] + m[3];
			f.free_us += m[2];
			f.comm_exposed_us += m[1];
		}
		snprintf(lab[i], sizeof lab[i], "rank %d", c->ranks[i].rank);
		labels[i] = lab[i];
		for (size_t j = 0; j < s->nslow; j++)
			mark[i] |= s->slow[j].rank == c->ranks[i].rank;
	}
	slow_fact(&f, s, v, c->n);
	struct report_finding found[16];
	size_t nf = report_findings(&f, found, 16);
	report_html_begin(&sb, "prof cluster report");
	sb_printf(&sb, "<p>%zu ranks. Each rank's own report is its "
		  "PROFILER_OUTPUT/report.html.</p>\n", c->n);
	report_html_findings(&sb, found, nf);
	sb_puts(&sb, "<h2>Each rank's mean step</h2>\n");
	struct report_series ser[] = {
		{ "Computing", "#4c78a8", v }, { "Communication (not overlapped)", "#e45756", v + n },
		{ "Free (device idle)", "#bab0ac", v + 2 * n },
		{ "Other (host before the device starts)", "#f2cf5b", v + 3 * n } };
	report_svg_bars(&sb, "Mean step per rank, as cluster_step_trace_time.csv splits it "
			"(slow ranks in red)", "ms", labels, c->n, ser, 4, mark);
	sb_puts(&sb, "<h2>Slow ranks</h2>\n");
	slow_table(&sb, s);
	report_html_end(&sb);
	int rc = report_html_save(&sb, out_dir, log);
	int frc = report_findings_save(out_dir, found, nf, log);   /* for prof stats */
	rc = rc ? rc : frc;
	sb_free(&sb);
	free(v); free(lab); free(labels); free(mark);
	return rc;
}
