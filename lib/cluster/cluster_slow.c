/*
 * The slow-rank verdict from the ranks' step breakdowns.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cluster.h"
#include "common/json_out.h"
#include "common/num.h"
#include "common/strbuf.h"
#include "outputs/out_file.h"

const int cluster_phase_col[CLUSTER_NPHASES] = {
	CLUSTER_COMPUTING, CLUSTER_COMM_NOT_OVERLAPPED, CLUSTER_FREE
};
const char *const cluster_phase_name[CLUSTER_NPHASES] = {
	"Computing", "Communication(Not Overlapped)", "Free"
};

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* A rank's row of `step`: its steps are sorted (cluster_read_*_csv), so
 * a binary search; a long job's tens of thousands of steps made a scan
 * per (step, rank) quadratic. */
static const struct cluster_step *find_step(const struct cluster_rank *r, int64_t step)
{
	size_t lo = 0, hi = r->nsteps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->steps[mid].step < step)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->nsteps && r->steps[lo].step == step ? &r->steps[lo] : NULL;
}

static void verdict(struct cluster_verdict *v, int rank, int phase, double value, double med)
{
	v->rank = rank;
	v->phase = phase;
	v->value = value;
	v->median = med;
	v->excess = value - med;
	v->pct = med > 0 ? v->excess / med * 100 : -1;
}

static int cmp_verdict(const void *a, const void *b)
{
	const struct cluster_verdict *x = a, *y = b;
	if (x->phase != y->phase)
		return x->phase - y->phase;
	if (x->excess != y->excess)
		return x->excess < y->excess ? 1 : -1;
	return x->rank - y->rank;
}

/* The steps any rank has, sorted, each once. */
static void collect_steps(const struct cluster *c, struct cluster_slow *s)
{
	for (size_t i = 0; i < c->n; i++)
		for (size_t k = 0; k < c->ranks[i].nsteps; k++)
			s->steps[s->nsteps++] = c->ranks[i].steps[k].step;
	qsort(s->steps, s->nsteps, sizeof *s->steps, cmp_i64);
	size_t u = 0;
	for (size_t i = 0; i < s->nsteps; i++)
		if (!u || s->steps[u - 1] != s->steps[i])
			s->steps[u++] = s->steps[i];
	s->nsteps = u;
}

/* In `step` and phase `ph`: the rank furthest above the ranks' median
 * (rank -1 when none is above it); vals is scratch for c->n values. */
static void worst_rank(const struct cluster *c, int64_t step, int ph, double *vals,
		       struct cluster_verdict *w)
{
	int col = cluster_phase_col[ph];
	size_t n = 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct cluster_step *st = find_step(&c->ranks[i], step);
		if (st)
			vals[n++] = st->v[col];
	}
	double med = num_median(vals, n);
	verdict(w, -1, ph, med, med);
	for (size_t i = 0; i < c->n; i++) {
		const struct cluster_step *st = find_step(&c->ranks[i], step);
		if (!st)
			continue;
		double d = st->v[col] - med;
		if (d > w->excess || (d == w->excess && w->rank >= 0 &&
				      c->ranks[i].rank < w->rank))
			verdict(w, c->ranks[i].rank, ph, st->v[col], med);
	}
}

/* A rank's typical step in a phase: the median over its steps, so that
 * one long step (the first, which begins where recording began and holds
 * the imports and set-up; a checkpoint) does not make a rank slow. */
static double typical(const struct cluster_rank *r, int col, double *scratch)
{
	for (size_t k = 0; k < r->nsteps; k++)
		scratch[k] = r->steps[k].v[col];
	return num_median(scratch, r->nsteps);
}

/* per rank in phase `ph`: its typical step; slow when above the median of
 * the ranks' by more than max(10 %, 1 ms) */
static void slow_ranks(const struct cluster *c, struct cluster_slow *s, int ph, double *vals,
		       double *means, double *scratch)
{
	int col = cluster_phase_col[ph];
	size_t n = 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct cluster_rank *r = &c->ranks[i];
		means[i * CLUSTER_NPHASES + ph] = typical(r, col, scratch);
		if (r->nsteps)
			vals[n++] = means[i * CLUSTER_NPHASES + ph];
	}
	double med = num_median(vals, n);
	s->median[ph] = med;
	double limit = med * CLUSTER_SLOW_RATIO;
	if (limit < CLUSTER_SLOW_MIN_US)
		limit = CLUSTER_SLOW_MIN_US;
	for (size_t i = 0; i < c->n; i++) {
		double m = means[i * CLUSTER_NPHASES + ph];
		if (c->ranks[i].nsteps && m - med > limit)
			verdict(&s->slow[s->nslow++], c->ranks[i].rank, ph, m, med);
	}
}

/* The ranks that wait least in communication (late_ranks' verdicts):
 * below the ranks' median typical step by more than the same margin. */
static void late_ranks(const struct cluster *c, struct cluster_slow *s, const double *means)
{
	const int ph = CLUSTER_PHASE_COMM;
	double med = s->median[ph], limit = med * CLUSTER_SLOW_RATIO;
	if (limit < CLUSTER_SLOW_MIN_US)
		limit = CLUSTER_SLOW_MIN_US;
	for (size_t i = 0; i < c->n; i++) {
		double m = means[i * CLUSTER_NPHASES + ph];
		if (!c->ranks[i].nsteps || med - m <= limit)
			continue;
		struct cluster_verdict *v = &s->late[s->nlate++];
		verdict(v, c->ranks[i].rank, ph, m, med);
		v->excess = med - m;
		v->pct = med > 0 ? v->excess / med * 100 : -1;
	}
	qsort(s->late, s->nlate, sizeof *s->late, cmp_verdict);
}

int cluster_slow_analyse(const struct cluster *c, struct cluster_slow *s)
{
	memset(s, 0, sizeof *s);
	size_t total = 0;
	for (size_t i = 0; i < c->n; i++)
		total += c->ranks[i].nsteps;
	s->steps = malloc((total ? total : 1) * sizeof *s->steps);
	double *vals = malloc((c->n ? c->n : 1) * sizeof *vals);
	double *means = calloc((c->n ? c->n : 1) * CLUSTER_NPHASES, sizeof *means);
	double *scratch = malloc((total ? total : 1) * sizeof *scratch);
	s->slow = malloc((c->n ? c->n : 1) * CLUSTER_NPHASES * sizeof *s->slow);
	s->late = malloc((c->n ? c->n : 1) * sizeof *s->late);
	if (!s->steps || !vals || !means || !scratch || !s->slow || !s->late)
		goto nomem;
	collect_steps(c, s);
	s->worst = calloc((s->nsteps ? s->nsteps : 1) * CLUSTER_NPHASES, sizeof *s->worst);
	if (!s->worst)
		goto nomem;
	for (size_t t = 0; t < s->nsteps; t++)
		for (int ph = 0; ph < CLUSTER_NPHASES; ph++)
			worst_rank(c, s->steps[t], ph, vals, &s->worst[t * CLUSTER_NPHASES + ph]);
	for (int ph = 0; ph < CLUSTER_NPHASES; ph++)
		slow_ranks(c, s, ph, vals, means, scratch);
	qsort(s->slow, s->nslow, sizeof *s->slow, cmp_verdict);
	late_ranks(c, s, means);
	free(vals);
	free(means);
	free(scratch);
	return 0;
nomem:
	free(vals);
	free(means);
	free(scratch);
	cluster_slow_free(s);
	return -ENOMEM;
}

void cluster_slow_free(struct cluster_slow *s)
{
	free(s->steps);
	free(s->worst);
	free(s->slow);
	free(s->late);
	memset(s, 0, sizeof *s);
}

static void put_pct(struct strbuf *sb, double pct)
{
	if (pct >= 0)
		sb_printf(sb, "%+.1f%%", pct);
	else
		sb_puts(sb, "n/a (median 0)");
}

static void verdict_json(struct jo *j, const struct cluster_verdict *v)
{
	jo_obj_begin(j);
	jo_key(j, "rank");
	if (v->rank >= 0)
		jo_int(j, v->rank);
	else
		jo_null(j);
	jo_kstr(j, "phase", cluster_phase_name[v->phase]);
	jo_key(j, "value_us");
	jo_fixed(j, v->value, 3);
	jo_key(j, "median_us");
	jo_fixed(j, v->median, 3);
	jo_key(j, "excess_us");
	jo_fixed(j, v->excess, 3);
	jo_key(j, "excess_pct");
	if (v->pct >= 0)
		jo_fixed(j, v->pct, 2);
	else
		jo_null(j);
	jo_obj_end(j);
}

#define RULE "a rank is slow in a phase (Computing, Communication(Not Overlapped), " \
	"Free) when its typical step (the median over its steps) exceeds the median of " \
	"the ranks' typical steps by more than max(10% of that median, 1 ms); late when " \
	"its Communication(Not Overlapped) is below that median by as much"

static void slow_text(struct strbuf *sb, const struct cluster *c, const struct cluster_slow *s)
{
	sb_printf(sb, "# prof cluster slow-rank report: %zu ranks, %zu steps\n", c->n,
		  s->nsteps);
	sb_puts(sb, "# Rule: " RULE ".\n# Times in microseconds, from each rank's "
		"step_trace_time.csv.\n\n");
	sb_puts(sb, "Verdict:\n");
	if (!s->nslow)
		sb_puts(sb, "  no slow rank\n");
	for (size_t i = 0; i < s->nslow; i++) {
		const struct cluster_verdict *v = &s->slow[i];
		sb_printf(sb, "  rank %d is slow in %s: typical step %.3f us, median %.3f us, "
			  "%.3f us above (", v->rank, cluster_phase_name[v->phase], v->value,
			  v->median, v->excess);
		put_pct(sb, v->pct);
		sb_puts(sb, v->phase == CLUSTER_PHASE_COMM ? "): it waits longer in collectives, "
			"for a late rank or on a slower link\n" : ")\n");
	}
	for (size_t i = 0; i < s->nlate; i++) {
		const struct cluster_verdict *v = &s->late[i];
		sb_printf(sb, "  rank %d arrives late at the collectives: typical step %.3f us in "
			  "%s, median %.3f us, %.3f us below (", v->rank, v->value,
			  cluster_phase_name[v->phase], v->median, v->excess);
		put_pct(sb, v->pct);
		sb_puts(sb, "): the others wait for it\n");
	}
	sb_puts(sb, "\nPer step, the rank furthest above the median of the ranks:\n");
	for (size_t t = 0; t < s->nsteps; t++) {
		if (s->steps[t] >= 0)
			sb_printf(sb, "  step %lld:\n", (long long)s->steps[t]);
		else
			sb_puts(sb, "  (no step):\n");
		for (int ph = 0; ph < CLUSTER_NPHASES; ph++) {
			const struct cluster_verdict *w = &s->worst[t * CLUSTER_NPHASES + ph];
			sb_printf(sb, "    %-30s ", cluster_phase_name[ph]);
			if (w->rank < 0) {
				sb_printf(sb, "no rank above the median (%.3f us)\n", w->median);
				continue;
			}
			sb_printf(sb, "rank %d: %.3f us, median %.3f us, %.3f us above (",
				  w->rank, w->value, w->median, w->excess);
			put_pct(sb, w->pct);
			sb_puts(sb, ")\n");
		}
	}
}

static void slow_json(struct jo *j, const struct cluster *c, const struct cluster_slow *s)
{
	jo_obj_begin(j);
	jo_kstr(j, "rule", RULE);
	jo_key(j, "ratio");
	jo_fixed(j, CLUSTER_SLOW_RATIO, 2);
	jo_key(j, "min_us");
	jo_fixed(j, CLUSTER_SLOW_MIN_US, 3);
	jo_key(j, "ranks");
	jo_arr_begin(j);
	for (size_t i = 0; i < c->n; i++)
		jo_int(j, c->ranks[i].rank);
	jo_arr_end(j);
	jo_key(j, "slow");
	jo_arr_begin(j);
	for (size_t i = 0; i < s->nslow; i++)
		verdict_json(j, &s->slow[i]);
	jo_arr_end(j);
	jo_key(j, "late");   /* excess: how far below the median, the wait it costs */
	jo_arr_begin(j);
	for (size_t i = 0; i < s->nlate; i++)
		verdict_json(j, &s->late[i]);
	jo_arr_end(j);
	jo_key(j, "steps");
	jo_arr_begin(j);
	for (size_t t = 0; t < s->nsteps; t++) {
		jo_obj_begin(j);
		jo_key(j, "step");
		if (s->steps[t] >= 0)
			jo_int(j, s->steps[t]);
		else
			jo_null(j);
		jo_key(j, "worst");
		jo_arr_begin(j);
		for (int ph = 0; ph < CLUSTER_NPHASES; ph++)
			verdict_json(j, &s->worst[t * CLUSTER_NPHASES + ph]);
		jo_arr_end(j);
		jo_obj_end(j);
	}
	jo_arr_end(j);
	jo_obj_end(j);
}

int cluster_write_slow(const char *out_dir, const struct cluster *c,
		       const struct cluster_slow *s)
{
	struct strbuf sb = { 0 };
	slow_text(&sb, c, s);
	int rc = out_file_write(out_dir, "cluster_slow_rank.txt", sb.buf ? sb.buf : "",
				sb.len);
	sb_reset(&sb);
	if (rc) {
		sb_free(&sb);
		return rc;
	}
	struct jo j;
	jo_init_sb(&j, &sb, 2);
	slow_json(&j, c, s);
	sb_putc(&sb, '\n');
	if (jo_finish(&j) != 0) {
		sb_free(&sb);
		return -ENOMEM;
	}
	rc = out_file_write(out_dir, "cluster_slow_rank.json", sb.buf, sb.len);
	sb_free(&sb);
	return rc;
}

void cluster_rank_mean(const struct cluster_rank *r, double out[CLUSTER_MEAN_N])
{
	for (int k = 0; k < CLUSTER_MEAN_N; k++)
		out[k] = 0;
	for (size_t i = 0; i < r->nsteps; i++) {
		const double *v = r->steps[i].v;
		double total = v[CLUSTER_PREPARING] + v[CLUSTER_STAGE] + v[CLUSTER_BUBBLE];
		double other = total - v[CLUSTER_COMPUTING] - v[CLUSTER_COMM_NOT_OVERLAPPED] -
			       v[CLUSTER_FREE];
		out[CLUSTER_MEAN_COMPUTING] += v[CLUSTER_COMPUTING];
		out[CLUSTER_MEAN_COMM] += v[CLUSTER_COMM_NOT_OVERLAPPED];
		out[CLUSTER_MEAN_FREE] += v[CLUSTER_FREE];
		out[CLUSTER_MEAN_OTHER] += other > 0 ? other : 0;
	}
	for (int k = 0; k < CLUSTER_MEAN_N && r->nsteps; k++)
		out[k] /= (double)r->nsteps;
}
