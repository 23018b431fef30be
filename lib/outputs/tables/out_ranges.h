/*
 * range_statistic.csv: the program's ranges summed by name and step.
 * Category user_annotation: prof_tx ranges (and paddle RecordEvent,
 * MindSpore-style ranges through prof_tx); nn.Module: with_modules'
 * module ranges, named by their module path ("Net_0/Block_0/Linear_1"), so
 * a module called many times a step is one row. A row per (category, name,
 * step): calls, total, self (less the ranges of its category directly
 * inside), average, max and min time. Step Id is the step whose span holds
 * the range's start, empty outside every step.
 *
 * Memory follows the distinct (category, name, step) keys.
 */
#ifndef PROF_OUT_RANGES_H
#define PROF_OUT_RANGES_H

#include <stddef.h>
#include <stdint.h>

#include "common/idmap.h"

#define OUT_RANGES_FILE "range_statistic.csv"
#define OUT_RANGES_USER "user_annotation"
#define OUT_RANGES_MODULE "nn.Module"

struct out_range_row {
	const char *cat;               /* OUT_RANGES_USER or OUT_RANGES_MODULE */
	const char *name;              /* interned here */
	int64_t step;                  /* -1: outside every step */
	uint64_t count, total_ns, self_ns, min_ns, max_ns;
	struct out_range_row *next;    /* same hash */
};

struct out_ranges {
	struct parse_idmap rows;       /* hash -> chain of rows */
	struct parse_idmap names;      /* hash -> chain of interned names */
	struct out_range_row **v;      /* every row, in order of first use */
	size_t n, cap;
	char **strs;                   /* interned names, to free */
	size_t nstrs, capstrs;
};

void out_ranges_init(struct out_ranges *o);

/* One range of `cat` (OUT_RANGES_USER or OUT_RANGES_MODULE) named `name`
 * (copied, once per distinct name) in `step`. 0 or -ENOMEM. */
int out_ranges_add(struct out_ranges *o, const char *cat, const char *name, int64_t step,
		   uint64_t total_ns, uint64_t self_ns);

/* RANGE_FILE into `dir`, only when some range was added (a stale one is
 * removed otherwise). 0 or a negative errno. */
int out_ranges_write(struct out_ranges *o, const char *dir);

void out_ranges_free(struct out_ranges *o);

#endif
