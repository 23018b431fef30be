/*
 * Durations summed per name: for op_statistic.csv and api_statistic.csv.
 * An entry is keyed by (group, tag, name): the group is the device id
 * (-1 for the host), the tag a static string such as the core type or the
 * API level. Memory follows the number of distinct keys.
 *
 * A name must stay as it is, at its address, while the table lives: the
 * parse passes the strings of its streams' mappings (they outlive the
 * tables) and literals. A name at an address seen before is then found by
 * the address alone.
 */
#ifndef PROF_OUT_NAMESTAT_H
#define PROF_OUT_NAMESTAT_H

#include <stddef.h>
#include <stdint.h>
#include "common/idmap.h"

struct out_namestat_entry {
	char *name;
	int32_t group;
	const char *tag;               /* static */
	uint64_t count, total_ns, min_ns, max_ns;
	double mean_us, m2_us;         /* Welford: for the variance, in µs² */
	struct out_namestat_entry *next;  /* same hash */
};

#define OUT_NAMESTAT_CACHE 1024

struct out_namestat {
	struct parse_idmap by_hash;
	struct out_namestat_entry **v; /* in order of first use, until sorted */
	size_t n, cap;
	/* The entry last found for a key at these addresses: a name comes
	 * from a stream's string table, the same pointer call after call, so a
	 * hit costs no look at the name (a kernel's can be hundreds of bytes;
	 * hashing it, then comparing it, were 3% of a parse each). */
	struct out_namestat_hit {
		const char *name, *tag;
		int32_t group;
		struct out_namestat_entry *e;
	} cache[OUT_NAMESTAT_CACHE];
};

void out_namestat_init(struct out_namestat *st);
/* One duration. 0 or -ENOMEM (not counted). */
int out_namestat_add(struct out_namestat *st, int32_t group, const char *tag,
		     const char *name, uint64_t ns);
/* Adds src's sums to dst's. 0 or -ENOMEM (then dst is partly merged). */
int out_namestat_merge(struct out_namestat *dst, const struct out_namestat *src);
/* Every sum back to zero; the names stay, so memory stays bounded by them. */
void out_namestat_zero(struct out_namestat *st);
/* Sorts the entries by group, then total descending, then tag and name. */
void out_namestat_sort(struct out_namestat *st);
/* The total of the group of entry i, once sorted, from i on (the group's
 * first: all of it); a scan of every entry per group was quadratic in
 * the devices of a damaged stream. */
uint64_t out_namestat_group_total(const struct out_namestat *st, size_t i);
/* Population variance of an entry's durations, µs². */
double out_namestat_variance(const struct out_namestat_entry *e);
void out_namestat_free(struct out_namestat *st);

#endif
