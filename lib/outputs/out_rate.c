#include "outputs/out_rate.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

static size_t out_rate_bin(double v)
{
	int e;
	double m = frexp(v, &e);              /* v = m * 2^e, m in [0.5, 1) */
	if (e < OUT_RATE_EXP_MIN)
		return 0;
	if (e >= OUT_RATE_EXP_MIN + OUT_RATE_EXPS)
		return OUT_RATE_EXPS * OUT_RATE_SUB - 1;
	size_t sub = (size_t)((m - 0.5) * 2 * OUT_RATE_SUB);
	if (sub >= OUT_RATE_SUB)
		sub = OUT_RATE_SUB - 1;
	return (size_t)(e - OUT_RATE_EXP_MIN) * OUT_RATE_SUB + sub;
}

static double out_rate_edge(size_t bin)
{
	int e = (int)(bin / OUT_RATE_SUB) + OUT_RATE_EXP_MIN;
	double m = 0.5 + (double)(bin % OUT_RATE_SUB + 1) / (2.0 * OUT_RATE_SUB);
	return ldexp(m, e);
}

int out_rate_add(struct out_rate *r, double kbs)
{
	if (kbs > r->peak)
		r->peak = kbs;
	if (!(kbs > 0))
		return 0;
	if (!r->bins && !(r->bins = calloc(OUT_RATE_EXPS * OUT_RATE_SUB, sizeof *r->bins)))
		return -ENOMEM;
	r->bins[out_rate_bin(kbs)]++;
	r->n++;
	return 0;
}

double out_rate_quantile(const struct out_rate *r, double q)
{
	if (!r->n)
		return 0;
	uint64_t rank = (uint64_t)ceil(q * (double)r->n), seen = 0;
	if (rank < 1)
		rank = 1;
	for (size_t i = 0; i < OUT_RATE_EXPS * OUT_RATE_SUB; i++) {
		seen += r->bins[i];
		if (seen >= rank) {   /* the last bin has no upper edge */
			double edge = i + 1 < OUT_RATE_EXPS * OUT_RATE_SUB ? out_rate_edge(i) : r->peak;
			return edge < r->peak ? edge : r->peak;
		}
	}
	return r->peak;
}

void out_rate_free(struct out_rate *r)
{
	free(r->bins);
	*r = (struct out_rate){ 0 };
}
