/*
 * lib/outputs/: the model's events in (lib/model), PROFILER_OUTPUT/ files
 * out. trace/: trace_view.json; tables/: the CSV and JSON tables, one
 * header each; here: what they share (files, rows waiting for their step,
 * step lookup, sums by name, rates) and this interface.
 *
 * The sink interface: how the model hands its events to the outputs
 * without knowing them. A sink is an ops table and the output it writes;
 * an event goes to every sink whose table has its callback, in the order
 * the sinks were added (lib/pipeline adds them). Adding an output that
 * reads these events adds a table in out_sink.c and a line in the
 * pipeline, never a line in the model.
 *
 * The model still writes trace_view.json itself (out_trace.h: the
 * timeline is what it builds), sums op_statistic.csv and
 * api_statistic.csv where --step-list's selection needs it, and reads
 * memory_record.csv's running totals of device allocations back for the
 * trace's "[memory]" instants (the framework allocator's events come
 * through the sink, fw_memory).
 */
#ifndef PROF_OUT_SINK_H
#define PROF_OUT_SINK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "outputs/out_op.h"
#include "outputs/out_stepwait.h"

struct raw_host_sample;
struct raw_host_net;
struct raw_dev_sample;
struct raw_gc;

/* The events the model builds for the outputs, besides the raw records it
 * passes on and struct out_op (out_op.h). */

/* A device task (kernel_details.csv's row). */
struct out_kernel_row {
	int32_t pid;
	uint64_t attr_ns;            /* the moment that picks the step */
	uint32_t device, stream;
	uint64_t correlation;        /* Task ID */
	const char *name;
	const char *type;            /* KERNEL, MEMCPY, MEMSET, COMMUNICATION */
	const char *core;            /* SIM, CUDA */
	uint64_t start_ns, end_ns;
	uint64_t wait_ns;            /* since the previous task on the stream ended */
	uint64_t blocks;             /* grid size; 0 when not a kernel or not known */
	const char *shapes, *types;  /* the launching operator's; NULL: not known */
};

/* One collective. Strings point into the stream's mapping, which lives as
 * long as the parse. */
struct out_coll {
	int32_t pid;
	uint32_t op, vendor, device;
	int32_t rank, peer;
	uint64_t start_ns, end_ns, bytes;
	uint64_t seq;                 /* k of the key */
	const char *name, *group, *ranks;
};

/* A range of the program's (module: with_modules'), counted in a step. */
struct out_range_ev {
	int module;
	const char *name;            /* its name, or a module's path; valid for the call */
	int64_t step;                /* -1: outside every step */
	uint64_t total_ns, self_ns;
};

/* profile_memory: one event of the framework's allocator (torch's), with
 * the operator open on its thread. Strings are valid for the call. */
struct out_fw_mem {
	int32_t pid, tid;
	uint64_t ns;
	int64_t bytes;               /* negative: a free */
	uint64_t address;            /* 0: unknown (then paired by thread and size) */
	int64_t allocated;           /* the allocator's total after it (torch's, or summed) */
	int64_t reserved, active;    /* -1: unknown */
	const char *device;          /* "CPU", "CUDA:0" */
	const char *op;              /* NULL: none */
};

/* Every callback may be NULL: that sink does not take the event. */
struct out_sink_ops {
	/* A host sample at ns; interval_ns since its sampler's last one (0:
	 * the first). */
	void (*host_sample)(void *self, uint64_t ns, uint64_t interval_ns,
			    const struct raw_host_sample *s);
	/* One network interface's record. */
	void (*host_net)(void *self, const char *name, const struct raw_host_net *n);
	/* A device sampler's sample at ns. */
	void (*dev_sample)(void *self, uint64_t ns, const struct raw_dev_sample *s);
	/* A garbage collection of pid/tid over [start_ns, end_ns). */
	void (*gc)(void *self, int32_t pid, int32_t tid, uint64_t start_ns, uint64_t end_ns,
		   const struct raw_gc *stop);
	/* A process's metadata entry (prof_add_metadata*). */
	void (*metadata)(void *self, const char *key, const char *value, int is_json, FILE *log);
	/* A device task (kernel, copy, set, collective), complete. */
	void (*task)(void *self, const struct out_kernel_row *r);
	/* A framework operator closed, with its device time when it has one. */
	void (*op)(void *self, const struct out_op *op);
	/* A collective of `owner` (a process of the model), framework or device. */
	void (*collective)(void *self, const void *owner, const struct out_coll *c);
	/* A step boundary moved: `step` now knows the step of more moments;
	 * rows of steps --step-list (want, nwant; NULL: all) leaves out go. */
	void (*step_settled)(void *self, out_stepwait_step_fn step, void *ctx,
			     const uint64_t *want, size_t nwant);
	/* A range closed, its step known. */
	void (*range)(void *self, const struct out_range_ev *r);
	/* An allocation or free of the framework's allocator (profile_memory). */
	void (*fw_memory)(void *self, const struct out_fw_mem *e);
};

struct out_sink {
	const struct out_sink_ops *ops;
	void *self;
};

#define OUT_SINKS_MAX 16

struct out_sinks {
	struct out_sink v[OUT_SINKS_MAX];
	size_t n;
};

/* 0, or -ENOSPC when OUT_SINKS_MAX are there already. */
int out_sinks_add(struct out_sinks *ss, const struct out_sink_ops *ops, void *self);

/* Hands an event to every sink that takes it:
 *   OUT_SINKS_EMIT(m->out.sinks, op, &row); */
#define OUT_SINKS_EMIT(ss, event, ...)                                          \
	do {                                                                    \
		const struct out_sinks *ss_ = (ss);                             \
		for (size_t i_ = 0; i_ < ss_->n; i_++)                          \
			if (ss_->v[i_].ops->event)                              \
				ss_->v[i_].ops->event(ss_->v[i_].self, __VA_ARGS__); \
	} while (0)

/* The sinks of the outputs the model does not write itself. */
extern const struct out_sink_ops out_host_sink;       /* host_usage.csv */
extern const struct out_sink_ops out_host_sum_sink;   /* host_disk_usage.csv, host_network_usage.csv */
extern const struct out_sink_ops out_dev_usage_sink;  /* device_usage.csv */
extern const struct out_sink_ops out_gc_sink;         /* gc_record.csv */
extern const struct out_sink_ops out_meta_sink;       /* profiler_metadata.json */
extern const struct out_sink_ops out_kernel_sink;     /* kernel_details.csv */
extern const struct out_sink_ops out_op_details_sink; /* operator_details.csv */
extern const struct out_sink_ops out_comm_sink;       /* communication*.json */
extern const struct out_sink_ops out_ranges_sink;     /* range_statistic.csv */
extern const struct out_sink_ops out_memory_sink;     /* memory_record.csv, operator_memory.csv:
							* the framework allocator's rows */

#endif
