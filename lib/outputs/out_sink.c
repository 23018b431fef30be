/* The sink tables of the outputs (out_sink.h): each callback hands the
 * event to its output's own function. */
#include "outputs/out_sink.h"

#include <errno.h>

#include "outputs/tables/out_comm.h"
#include "outputs/tables/out_dev_usage.h"
#include "outputs/tables/out_gc.h"
#include "outputs/tables/out_ranges.h"
#include "outputs/tables/out_host.h"
#include "outputs/tables/out_host_sum.h"
#include "outputs/tables/out_kernel.h"
#include "outputs/tables/out_memory.h"
#include "outputs/tables/out_meta.h"
#include "outputs/tables/out_op_details.h"
#include "raw/raw_format.h"

int out_sinks_add(struct out_sinks *ss, const struct out_sink_ops *ops, void *self)
{
	if (ss->n == OUT_SINKS_MAX)
		return -ENOSPC;
	ss->v[ss->n++] = (struct out_sink){ ops, self };
	return 0;
}

static void host_sample(void *self, uint64_t ns, uint64_t interval_ns,
			const struct raw_host_sample *s)
{
	out_host_row(self, ns, interval_ns, s);
}

const struct out_sink_ops out_host_sink = { .host_sample = host_sample };

static void host_sum_sample(void *self, uint64_t ns, uint64_t interval_ns,
			    const struct raw_host_sample *s)
{
	if (raw_host_parts(s) & RAW_HOST_DISK)
		out_host_sum_disk(self, s->proc_read_bytes, s->proc_write_bytes, interval_ns);
}

static void host_sum_net(void *self, const char *name, const struct raw_host_net *n)
{
	out_host_sum_net(self, name, n);   /* -ENOMEM: the record is not counted */
}

const struct out_sink_ops out_host_sum_sink = {
	.host_sample = host_sum_sample, .host_net = host_sum_net,
};

static void dev_sample(void *self, uint64_t ns, const struct raw_dev_sample *s)
{
	out_dev_usage_row(self, ns, s);
}

const struct out_sink_ops out_dev_usage_sink = { .dev_sample = dev_sample };

static void gc(void *self, int32_t pid, int32_t tid, uint64_t start_ns, uint64_t end_ns,
	       const struct raw_gc *stop)
{
	out_gc_row(self, pid, tid, start_ns, end_ns, stop);
}

const struct out_sink_ops out_gc_sink = { .gc = gc };

static void range(void *self, const struct out_range_ev *r)
{
	out_ranges_add(self, r->module ? OUT_RANGES_MODULE : OUT_RANGES_USER, r->name, r->step,
		       r->total_ns, r->self_ns);
}

const struct out_sink_ops out_ranges_sink = { .range = range };

static void fw_memory(void *self, const struct out_fw_mem *e)
{
	out_memory_fw(self, e);
}

const struct out_sink_ops out_memory_sink = { .fw_memory = fw_memory };

static void metadata(void *self, const char *key, const char *value, int is_json, FILE *log)
{
	out_meta_add(self, key, value, is_json, log);
}

const struct out_sink_ops out_meta_sink = { .metadata = metadata };

static void kernel_task(void *self, const struct out_kernel_row *r)
{
	out_kernel_row(self, r);
}

static void kernel_settled(void *self, out_stepwait_step_fn step, void *ctx,
			   const uint64_t *want, size_t nwant)
{
	out_kernel_settle(self, step, ctx, want, nwant);
}

const struct out_sink_ops out_kernel_sink = {
	.task = kernel_task, .step_settled = kernel_settled,
};

static void op_details_op(void *self, const struct out_op *op)
{
	out_op_details_row(self, op);
}

static void op_details_settled(void *self, out_stepwait_step_fn step, void *ctx,
			       const uint64_t *want, size_t nwant)
{
	out_op_details_settle(self, step, ctx, want, nwant);
}

const struct out_sink_ops out_op_details_sink = {
	.op = op_details_op, .step_settled = op_details_settled,
};

static void comm_collective(void *self, const void *owner, const struct out_coll *c)
{
	out_comm_add(self, owner, c);
}

const struct out_sink_ops out_comm_sink = { .collective = comm_collective };
