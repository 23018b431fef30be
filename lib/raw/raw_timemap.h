/*
 * Mapping a stream's ticks onto CLOCK_MONOTONIC nanoseconds.
 *
 * RAW_CLOCK_MONOTONIC ticks are already ns. RAW_CLOCK_TSC ticks are mapped
 * piecewise-linearly through the stream's clock pairs (header open pair,
 * each chunk's pair, RAW_REC_CLOCK_SYNC records, the close pair), so the
 * error at any tick is bounded by the error of the two pairs around it, and
 * slow drift between TSC and the kernel's clock is followed. Before the
 * first pair and after the last, ticks are extrapolated at a fixed rate
 * (timemap_pick_rate says which).
 *
 * Pairs come from a callback in tick order, one at a time, so a stream of
 * any length needs two pairs of memory. Lookups are expected in roughly
 * increasing tick order (a stream's records); a tick before the current
 * segment is extrapolated from it, never searched for.
 */
#ifndef PROF_RAW_TIMEMAP_H
#define PROF_RAW_TIMEMAP_H

#include <stdint.h>
#include "raw/raw_format.h"

/* Puts the next pair in *out and returns 1, or returns 0 at the end. */
typedef int (*timemap_next_fn)(void *ctx, struct raw_clock_pair *out);

struct timemap {
	uint32_t clock;
	uint64_t rate_ticks, rate_ns;  /* extrapolation: rate_ticks per rate_ns */
	struct raw_clock_pair a, b;    /* current segment [a, b) */
	int have_a, have_b;
	timemap_next_fn next;
	void *ctx;
};

/* Minimum span of the stream's own pairs for their rate to be trusted. */
#define TIMEMAP_MIN_SPAN_NS 10000000ull

enum timemap_rate_src {
	TIMEMAP_RATE_RUN = 1,     /* the run's measured rate (profiler_info.json) */
	TIMEMAP_RATE_STREAM = 2,  /* the stream's first and last pairs */
	TIMEMAP_RATE_HEADER = 3,  /* the writer's estimate in the header */
	TIMEMAP_RATE_NONE = 4,    /* nothing usable: 1 tick = 1 ns */
};

/* Chooses the extrapolation rate: run_hz if > 0, else first..last if at
 * least TIMEMAP_MIN_SPAN_NS apart, else header_hz if > 0. */
enum timemap_rate_src timemap_pick_rate(uint64_t run_hz,
					const struct raw_clock_pair *first,
					const struct raw_clock_pair *last,
					uint64_t header_hz,
					uint64_t *rate_ticks, uint64_t *rate_ns);

/* `next` may be NULL for a monotonic stream. Pulls the first two pairs. */
void timemap_init(struct timemap *tm, uint32_t clock, uint64_t rate_ticks,
		  uint64_t rate_ns, timemap_next_fn next, void *ctx);

/* Monotonic ns of `ticks`; clamped to [0, INT64_MAX]. A monotonic
 * stream's ticks are its ns: inline, as every record of one asks. */
uint64_t timemap_map_tsc(struct timemap *tm, uint64_t ticks);
static inline uint64_t timemap_map(struct timemap *tm, uint64_t ticks)
{
	return tm->clock == RAW_CLOCK_TSC ? timemap_map_tsc(tm, ticks) : ticks;
}

#endif
