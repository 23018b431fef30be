#include "raw/raw_timemap.h"

#include <string.h>

enum timemap_rate_src timemap_pick_rate(uint64_t run_hz,
					const struct raw_clock_pair *first,
					const struct raw_clock_pair *last,
					uint64_t header_hz,
					uint64_t *rate_ticks, uint64_t *rate_ns)
{
	if (run_hz) {
		*rate_ticks = run_hz;
		*rate_ns = 1000000000ull;
		return TIMEMAP_RATE_RUN;
	}
	if (first && last && last->ticks > first->ticks &&
	    last->mono_ns >= first->mono_ns + TIMEMAP_MIN_SPAN_NS) {
		*rate_ticks = last->ticks - first->ticks;
		*rate_ns = last->mono_ns - first->mono_ns;
		return TIMEMAP_RATE_STREAM;
	}
	if (header_hz) {
		*rate_ticks = header_hz;
		*rate_ns = 1000000000ull;
		return TIMEMAP_RATE_HEADER;
	}
	*rate_ticks = *rate_ns = 1;
	return TIMEMAP_RATE_NONE;
}

/* The next pair strictly after `a` in both clocks: a pair that goes back
 * (or stands still) in either would make the map non-monotonic. */
static int pull(struct timemap *tm)
{
	struct raw_clock_pair p;
	while (tm->next && tm->next(tm->ctx, &p)) {
		if (!tm->have_a) {
			tm->a = p;
			tm->have_a = 1;
			continue;
		}
		if (p.ticks > tm->a.ticks && p.mono_ns >= tm->a.mono_ns) {
			tm->b = p;
			return 1;
		}
	}
	return 0;
}

void timemap_init(struct timemap *tm, uint32_t clock, uint64_t rate_ticks,
		  uint64_t rate_ns, timemap_next_fn next, void *ctx)
{
	memset(tm, 0, sizeof *tm);
	tm->clock = clock;
	tm->rate_ticks = rate_ticks ? rate_ticks : 1;
	tm->rate_ns = rate_ns ? rate_ns : 1;
	tm->next = next;
	tm->ctx = ctx;
	if (clock == RAW_CLOCK_TSC)
		tm->have_b = pull(tm);
}

static uint64_t clamp_ns(__int128 v)
{
	if (v < 0)
		return 0;
	if (v > (__int128)INT64_MAX)
		return (uint64_t)INT64_MAX;
	return (uint64_t)v;
}

/* a.mono + (ticks - a.ticks) * num / den, in 128 bits, rounded down. */
static uint64_t line(const struct raw_clock_pair *a, uint64_t ticks,
		     uint64_t num, uint64_t den)
{
	__int128 d = (__int128)ticks - (__int128)a->ticks;
	__int128 q = d * (__int128)num;
	q = q >= 0 ? q / (__int128)den : -((-q + (__int128)den - 1) / (__int128)den);
	return clamp_ns((__int128)a->mono_ns + q);
}

uint64_t timemap_map_tsc(struct timemap *tm, uint64_t ticks)
{
	while (tm->have_b && ticks >= tm->b.ticks) {
		tm->a = tm->b;
		tm->have_b = pull(tm);
	}
	if (!tm->have_a) {
		struct raw_clock_pair zero = { 0, 0, 0 };
		return line(&zero, ticks, tm->rate_ns, tm->rate_ticks);
	}
	if (ticks >= tm->a.ticks && tm->have_b)
		return line(&tm->a, ticks, tm->b.mono_ns - tm->a.mono_ns,
			    tm->b.ticks - tm->a.ticks);
	return line(&tm->a, ticks, tm->rate_ns, tm->rate_ticks);
}
