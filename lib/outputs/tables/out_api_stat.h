/*
 * api_statistic.csv (share/prof/doc/outputs.md): one row per device API
 * (runtime or driver call, as the backend names it) over all processes and
 * threads. Device_id is "host" (the calls run on the host, as msprof
 * writes it); Level is "Runtime" (CUDA runtime and the sim library) or
 * "Driver" (CUDA driver). Time, Avg, Min, Max in µs with three decimals;
 * Variance is the population variance of the durations in µs², three
 * decimals. Rows by Time descending, then Level and name. Durations are
 * the calls' own, before any cut the timeline makes for nesting. Memory
 * follows the number of distinct names.
 */
#ifndef PROF_OUT_API_STAT_H
#define PROF_OUT_API_STAT_H

#include <stdint.h>
#include "outputs/out_namestat.h"

#define OUT_API_STAT_HEADER "Device_id,Level,API Name,Time(us),Count,Avg(us),Min(us)," \
	"Max(us),Variance"

struct out_api_stat {
	struct out_namestat st;
};

void out_api_stat_init(struct out_api_stat *a);
/* `level` is a static string. 0 or -ENOMEM (not counted). */
int out_api_stat_add(struct out_api_stat *a, const char *level, const char *name, uint64_t ns);
/* Writes dir/api_statistic.csv. 0 or a negative errno. */
int out_api_stat_write(struct out_api_stat *a, const char *dir);
void out_api_stat_free(struct out_api_stat *a);

#endif
