/*
 * Reading the clock that raw timestamps count, and the pairs that map it
 * onto CLOCK_MONOTONIC. The TSC is read where it is invariant (x86 with
 * constant_tsc and nonstop_tsc): about 10 ns against about 22 ns for
 * clock_gettime here, and the clock read is most of a record's cost.
 */
#ifndef PROF_RAW_CLOCK_H
#define PROF_RAW_CLOCK_H

#include <stdint.h>
#include <time.h>
#include "raw/raw_format.h"

static inline uint64_t raw_clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t raw_clock_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	return raw_clock_ns(CLOCK_MONOTONIC);
#endif
}

static inline uint64_t raw_clock_ticks(uint32_t clock)
{
	return clock == RAW_CLOCK_TSC ? raw_clock_tsc() : raw_clock_ns(CLOCK_MONOTONIC);
}

/* Reads ticks, monotonic and realtime as close together as it can. */
void raw_clock_pair(uint32_t clock, struct raw_clock_pair *out);

/* RAW_CLOCK_TSC when this machine's TSC is invariant, else
 * RAW_CLOCK_MONOTONIC. Reads /proc/cpuinfo: not for the agent's hot path. */
uint32_t raw_clock_best(void);

/* Ticks per second between two pairs of the same clock; 0 if unusable. */
double raw_clock_rate(const struct raw_clock_pair *a, const struct raw_clock_pair *b);

#endif
