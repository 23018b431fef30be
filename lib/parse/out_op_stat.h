/*
 * op_statistic.csv (reference/ascend.md §2.4): one row per operator name
 * over all host operators, sorted by Total Time descending (then by name).
 * Device_id is -1 (host, as in step_trace_time.csv), Core Type "CPU".
 * Times are of the operators' self time, so that nested operators are not
 * counted twice and the Ratio(%) column adds up to 100: Total, Min, Avg,
 * Max in µs with three decimals, Ratio = Total / the sum over all names,
 * two decimals. Memory follows the number of distinct names.
 */
#ifndef PROF_OUT_OP_STAT_H
#define PROF_OUT_OP_STAT_H

#include <stddef.h>
#include <stdint.h>
#include "parse/parse_idmap.h"

#define OUT_OP_STAT_HEADER "Device_id,OP Type,Core Type,Count,Total Time(us)," \
	"Min Time(us),Avg Time(us),Max Time(us),Ratio(%)"

struct out_op_stat_entry {
	char *name;
	uint64_t count, total_ns, min_ns, max_ns;
	struct out_op_stat_entry *next;  /* same hash */
};

struct out_op_stat {
	struct parse_idmap by_hash;      /* name hash -> chain of entries */
	struct out_op_stat_entry **v;    /* every entry, in order of first use */
	size_t n, cap;
	uint64_t total_ns;
};

void out_op_stat_init(struct out_op_stat *st);
/* One operator of `name` with self time `ns`. 0 or -ENOMEM (not counted). */
int out_op_stat_add(struct out_op_stat *st, const char *name, uint64_t ns);
/* Writes dir/op_statistic.csv. 0 or a negative errno. */
int out_op_stat_write(struct out_op_stat *st, const char *dir);
void out_op_stat_free(struct out_op_stat *st);

#endif
