/*
 * op_statistic.csv (share/prof/doc/outputs.md): one row per operator name
 * and device. Host rows: framework operators over all processes and
 * threads, Device_id -1 (host, as in step_trace_time.csv), Core Type
 * "CPU", times of the operators' self time (so nested operators are not
 * counted twice). Device rows: the device's tasks (kernels, copies, sets,
 * collectives) by name, Device_id the device, Core Type "SIM" or "CUDA",
 * times of their durations. Ratio(%) is the row's share of its device's
 * total (the host's for host rows), two decimals, so each device's rows
 * add up to 100. Rows by Device_id (host first), then Total Time
 * descending, then name. Total, Min, Avg, Max in µs with three decimals.
 * Memory follows the number of distinct names.
 */
#ifndef PROF_OUT_OP_STAT_H
#define PROF_OUT_OP_STAT_H

#include <stdint.h>
#include "outputs/out_namestat.h"

#define OUT_OP_STAT_HEADER "Device_id,OP Type,Core Type,Count,Total Time(us)," \
	"Min Time(us),Avg Time(us),Max Time(us),Ratio(%)"

struct out_op_stat {
	struct out_namestat st;
};

void out_op_stat_init(struct out_op_stat *st);
/* One host operator of `name` with self time `ns`. 0 or -ENOMEM (not counted). */
int out_op_stat_add(struct out_op_stat *st, const char *name, uint64_t ns);
/* One device task: `core` is a static string ("SIM", "CUDA"). */
int out_op_stat_add_device(struct out_op_stat *st, int32_t device, const char *core,
			   const char *name, uint64_t ns);
/* Writes dir/op_statistic.csv. 0 or a negative errno. */
int out_op_stat_write(struct out_op_stat *st, const char *dir);
void out_op_stat_free(struct out_op_stat *st);

#endif
