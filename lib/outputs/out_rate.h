/*
 * A series of rates (KB/s of a host sample) reduced to its peak and a
 * percentile in bounded memory, whatever the length of the run: rates are
 * counted in log-linear bins (32 per power of two, so a percentile is
 * known to within 1/32 of itself), not kept.
 */
#ifndef PROF_OUT_RATE_H
#define PROF_OUT_RATE_H

#include <stdint.h>

#define OUT_RATE_SUB 32          /* bins per power of two */
#define OUT_RATE_EXP_MIN (-16)   /* rates below 2^-17 KB/s share the first bin */
#define OUT_RATE_EXPS 64         /* ... above 2^47 KB/s the last */

struct out_rate {
	double peak;                 /* the highest rate added, 0 if none */
	uint64_t n;                  /* positive rates counted */
	uint32_t *bins;              /* OUT_RATE_EXPS * OUT_RATE_SUB, at the first positive */
};

/* Adds one rate; 0 or -ENOMEM (then it counts for the peak only). */
int out_rate_add(struct out_rate *r, double kbs);
/* The q-quantile (0 < q <= 1) of the positive rates by nearest rank: the
 * upper edge of its bin, never above the peak. 0 when there was none. */
double out_rate_quantile(const struct out_rate *r, double q);
void out_rate_free(struct out_rate *r);

#endif
