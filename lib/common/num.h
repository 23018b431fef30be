/*
 * Numbers read back from prof's outputs. Doubles read from text (a CSV a
 * user may have edited) into integers:
 * C leaves a conversion out of range undefined, so these saturate, and
 * NaN gives 0. Found by fuzzing the CSV readers.
 */
#ifndef PROF_NUM_H
#define PROF_NUM_H

#include <stddef.h>
#include <stdint.h>

/* The median of v[0..n) (sorts v), the mean of the middle two for an even
 * n, 0 for none: the cluster's typical step and prof stats' median step. */
double num_median(double *v, size_t n);

static inline int64_t num_to_i64(double v)
{
	if (!(v == v))
		return 0;
	if (v >= 9223372036854775807.0)
		return INT64_MAX;
	if (v <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)v;
}

static inline uint64_t num_to_u64(double v)
{
	if (!(v > 0))
		return 0;
	if (v >= 18446744073709551615.0)
		return UINT64_MAX;
	return (uint64_t)v;
}

static inline int num_to_int(double v)
{
	int64_t i = num_to_i64(v);
	return i > INT32_MAX ? INT32_MAX : i < INT32_MIN ? INT32_MIN : (int)i;
}

#endif
