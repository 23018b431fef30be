/* Mapping ticks onto monotonic ns through constructed clock pairs. */
#include "raw/raw_timemap.h"
#include "unit/unit.h"

struct pairs {
	const struct raw_clock_pair *v;
	int n, i;
};

static int next(void *ctx, struct raw_clock_pair *out)
{
	struct pairs *p = ctx;
	if (p->i >= p->n)
		return 0;
	*out = p->v[p->i++];
	return 1;
}

static void test_monotonic(void)
{
	struct timemap tm;
	timemap_init(&tm, RAW_CLOCK_MONOTONIC, 1, 1, NULL, NULL);
	CHECK(timemap_map(&tm, 123456789) == 123456789);
	CHECK(timemap_map(&tm, 0) == 0);
}

/* 3 GHz before 2000 ticks, 2 GHz after: each segment its own slope. */
static void test_piecewise(void)
{
	static const struct raw_clock_pair v[] = {
		{ 1000, 1000000, 0 },   /* open pair */
		{ 4000, 1001000, 0 },   /* 3000 ticks per 1000 ns */
		{ 6000, 1002000, 0 },   /* 2000 ticks per 1000 ns */
	};
	struct pairs p = { v, 3, 0 };
	struct timemap tm;
	timemap_init(&tm, RAW_CLOCK_TSC, 2, 1, next, &p);  /* extrapolate at 2 ticks/ns */
	CHECK(timemap_map(&tm, 1000) == 1000000);
	CHECK(timemap_map(&tm, 2500) == 1000500);
	CHECK(timemap_map(&tm, 3999) == 1000999);   /* floor of 999.67 */
	CHECK(timemap_map(&tm, 4000) == 1001000);
	CHECK(timemap_map(&tm, 5000) == 1001500);
	CHECK(timemap_map(&tm, 6000) == 1002000);
	CHECK(timemap_map(&tm, 8000) == 1003000);   /* after the last: the rate given */
	CHECK(p.i == 3);
}

/* Beyond the pairs, the extrapolation rate given (3 ticks per ns here). */
static void test_extrapolation(void)
{
	static const struct raw_clock_pair v[] = {
		{ 30000, 500000, 0 },
		{ 60000, 510000, 0 },
	};
	struct pairs p = { v, 2, 0 };
	struct timemap tm;
	timemap_init(&tm, RAW_CLOCK_TSC, 3, 1, next, &p);
	CHECK(timemap_map(&tm, 0) == 490000);        /* before the first pair */
	CHECK(timemap_map(&tm, 29997) == 499999);
	CHECK(timemap_map(&tm, 45000) == 505000);    /* between: 3 ticks/ns too */
	CHECK(timemap_map(&tm, 90000) == 520000);    /* after the last */
	CHECK(timemap_map(&tm, 90001) == 520000);    /* floor */
	CHECK(timemap_map(&tm, 90003) == 520001);
}

/* A pair that goes back, or stands still, in either clock is ignored. */
static void test_bad_pairs(void)
{
	static const struct raw_clock_pair v[] = {
		{ 1000, 1000, 0 },
		{ 900, 2000, 0 },     /* ticks back */
		{ 2000, 500, 0 },     /* mono back */
		{ 1000, 3000, 0 },    /* ticks stand still */
		{ 3000, 3000, 0 },    /* good: 1 tick per ns */
	};
	struct pairs p = { v, 5, 0 };
	struct timemap tm;
	timemap_init(&tm, RAW_CLOCK_TSC, 1, 1, next, &p);
	CHECK(timemap_map(&tm, 2000) == 2000);
	CHECK(timemap_map(&tm, 2999) == 2999);
	CHECK(timemap_map(&tm, 3500) == 3500);
}

/* Realistic magnitudes: hours of a 3 GHz TSC do not overflow. */
static void test_large(void)
{
	uint64_t t0 = 5000000000000000ull, m0 = 90000000000000ull;
	const uint64_t hour_ticks = 3600ull * 3000000000ull, hour_ns = 3600ull * 1000000000ull;
	struct raw_clock_pair v[] = {
		{ t0, m0, 0 },
		{ t0 + hour_ticks, m0 + hour_ns, 0 },
	};
	struct pairs p = { v, 2, 0 };
	struct timemap tm;
	timemap_init(&tm, RAW_CLOCK_TSC, 3000000000ull, 1000000000ull, next, &p);
	CHECK(timemap_map(&tm, t0 + hour_ticks / 2) == m0 + hour_ns / 2);
	CHECK(timemap_map(&tm, t0 + 2 * hour_ticks) == m0 + 2 * hour_ns);
}

static void test_pick_rate(void)
{
	uint64_t rt, rn;
	struct raw_clock_pair a = { 0, 0, 0 }, far = { 30000000, 10000000, 0 },
			      near = { 3000, 1000, 0 };
	CHECK(timemap_pick_rate(2500000000ull, &a, &far, 7, &rt, &rn) == TIMEMAP_RATE_RUN);
	CHECK(rt == 2500000000ull && rn == 1000000000ull);
	CHECK(timemap_pick_rate(0, &a, &far, 7, &rt, &rn) == TIMEMAP_RATE_STREAM);
	CHECK(rt == 30000000 && rn == 10000000);
	CHECK(timemap_pick_rate(0, &a, &near, 7, &rt, &rn) == TIMEMAP_RATE_HEADER);
	CHECK(rt == 7 && rn == 1000000000ull);
	CHECK(timemap_pick_rate(0, &a, &near, 0, &rt, &rn) == TIMEMAP_RATE_NONE);
	CHECK(rt == 1 && rn == 1);
}

/* The stream's own rate, chosen then used past the last pair. */
static void test_stream_rate_used(void)
{
	struct raw_clock_pair v[] = {
		{ 1000000, 1000000000, 0 },
		{ 61000000, 1020000000, 0 },   /* 20 ms apart: 3 ticks per ns */
	};
	uint64_t rt, rn;
	CHECK(timemap_pick_rate(0, &v[0], &v[1], 1, &rt, &rn) == TIMEMAP_RATE_STREAM);
	struct pairs p = { v, 2, 0 };
	struct timemap tm;
	timemap_init(&tm, RAW_CLOCK_TSC, rt, rn, next, &p);
	CHECK(timemap_map(&tm, 61000000 + 3000) == 1020001000);
}

int main(void)
{
	test_monotonic();
	test_piecewise();
	test_extrapolation();
	test_bad_pairs();
	test_large();
	test_pick_rate();
	test_stream_rate_used();
	return unit_done();
}
