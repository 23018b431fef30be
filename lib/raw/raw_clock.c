#include "raw/raw_clock.h"

#include <stdio.h>
#include <string.h>

void raw_clock_pair(uint32_t clock, struct raw_clock_pair *out)
{
	/* Bracket the tick read between two monotonic reads and keep the
	 * tightest of a few tries, so the pair is off by a few ns at most. */
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 5; i++) {
		uint64_t m0 = raw_clock_ns(CLOCK_MONOTONIC);
		uint64_t t = raw_clock_ticks(clock);
		uint64_t m1 = raw_clock_ns(CLOCK_MONOTONIC);
		if (m1 - m0 < best) {
			best = m1 - m0;
			out->ticks = t;
			out->mono_ns = m0 + (m1 - m0) / 2;
		}
	}
	out->real_ns = raw_clock_ns(CLOCK_REALTIME) - (raw_clock_ns(CLOCK_MONOTONIC) - out->mono_ns);
}

uint32_t raw_clock_best(void)
{
#if defined(__x86_64__)
	FILE *f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return RAW_CLOCK_MONOTONIC;
	char line[4096];
	int constant = 0, nonstop = 0;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		constant = strstr(line, " constant_tsc") != NULL;
		nonstop = strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	fclose(f);
	/* The kernel must also trust it: a TSC it marked unstable is not
	 * synchronised across CPUs. */
	f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
	int kernel_tsc = 0;
	if (f) {
		kernel_tsc = fgets(line, sizeof line, f) && strncmp(line, "tsc", 3) == 0;
		fclose(f);
	}
	return constant && nonstop && kernel_tsc ? RAW_CLOCK_TSC : RAW_CLOCK_MONOTONIC;
#else
	return RAW_CLOCK_MONOTONIC;
#endif
}

double raw_clock_rate(const struct raw_clock_pair *a, const struct raw_clock_pair *b)
{
	if (b->mono_ns <= a->mono_ns || b->ticks <= a->ticks)
		return 0;
	return (double)(b->ticks - a->ticks) * 1e9 / (double)(b->mono_ns - a->mono_ns);
}
