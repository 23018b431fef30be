/* Device memory events, samples, markers and properties. */
#include "model/parse_model_int.h"

#include "outputs/tables/out_host.h"     /* OUT_MB: the counters' unit */
#include "outputs/trace/out_trace_dev.h"

/* The op in scope on (p, tid) at ns: its name, NULL if none. */
static const char *op_in_scope(struct model_proc *p, int32_t tid, uint64_t ns)
{
	struct model_thread *t = tid > 0 ? model_thread_find(p, tid) : NULL;
	long k = t ? model_op_at(t, ns) : -1;
	return k >= 0 ? t->ops[k].name : NULL;
}

/* Kineto's "[memory]" instant on the allocating thread. */
static void memory_instant(struct parse_model *m, struct model_proc *p,
			   const struct raw_dev_memory *rm, uint64_t ns, int64_t bytes,
			   uint64_t total)
{
	struct model_thread *t = model_thread_of(p, rm->tid);
	if (!t)
		return;
	t->has_dev = 1;
	struct jo *j = &m->out.trace->j;
	out_trace_begin(m->out.trace, "i", "cpu_instant_event", "[memory]", p->pid, model_out_tid(t), ns);
	jo_kstr(j, "s", "t");
	jo_key(j, "args");
	jo_obj_begin(j);
	jo_kint(j, "Device Type", 1);   /* Kineto's CUDA; the sim device too */
	jo_kint(j, "Device Id", rm->device);
	jo_kuint(j, "Addr", rm->address);
	jo_kint(j, "Bytes", bytes);
	jo_kuint(j, "Total Allocated", total);
	jo_kuint(j, "Total Reserved", total);
	jo_obj_end(j);
	out_trace_end(m->out.trace);
}

void model_on_dev_memory(struct parse_model *m, struct parse_stream *s)
{
	MODEL_PAYLOAD(s, struct raw_dev_memory, rm);
	struct model_proc *p = s->proc;
	if (!p)
		return;
	struct out_mem_event ev = {
		.pid = p->pid, .vendor = rm.vendor, .device = rm.device, .stream = rm.stream,
		.ns = s->ns, .address = rm.address, .bytes = rm.bytes,
		.is_free = (rm.flags & RAW_MEM_FREE) != 0, .op = op_in_scope(p, rm.tid, s->ns),
	};
	uint64_t bytes = 0, total = out_memory_event(m->out.mem, &ev, &bytes);
	if (rm.tid > 0)
		memory_instant(m, p, &rm, s->ns, ev.is_free ? -(int64_t)bytes : (int64_t)bytes,
			       total);
	m->n.dev_memory++;
}

void model_on_dev_sample(struct parse_model *m, struct parse_stream *s)
{
	MODEL_PAYLOAD(s, struct raw_dev_sample, ds);
	static const char *const util[] = { "compute %", "memory %" };
	static const char *const mem[] = { "used MB", "total MB" };
	static const char *const power[] = { "W" };
	static const char *const clock[] = { "SM MHz" };
	static const char *const temp[] = { "C" };
	double vu[] = { ds.util_pct, ds.mem_util_pct };
	double vm[] = { (double)ds.mem_used_bytes / OUT_MB, (double)ds.mem_total_bytes / OUT_MB };
	double vp[] = { ds.power_mw / 1000.0 }, vc[] = { ds.sm_clock_mhz }, vt[] = { ds.temperature_c };
	model_dev_track(m, ds.device, ds.vendor, -1);
	out_trace_counter(m->out.trace, ds.device, s->ns, "Device Utilization", util, vu, 2);
	out_trace_counter(m->out.trace, ds.device, s->ns, "Device Memory", mem, vm, 2);
	out_trace_counter(m->out.trace, ds.device, s->ns, "Device Power", power, vp, 1);
	out_trace_counter(m->out.trace, ds.device, s->ns, "Device Clock", clock, vc, 1);
	out_trace_counter(m->out.trace, ds.device, s->ns, "Device Temperature", temp, vt, 1);
	OUT_SINKS_EMIT(m->out.sinks, dev_sample, s->ns, &ds);
	m->n.dev_samples++;
}

void model_on_dev_marker(struct parse_model *m, struct parse_stream *s)
{
	MODEL_PAYLOAD(s, struct raw_dev_marker, mk);
	struct model_proc *p = s->proc;
	struct model_thread *t = p ? model_thread_of(p, model_caller(p, mk.tid)) : NULL;
	if (!t)
		return;
	t->has_dev = 1;
	model_api_flush(m, p, t, s->ns);
	struct jo *j = &m->out.trace->j;
	const char *name = parse_stream_str(s, mk.name_id);
	int range = (mk.flags & RAW_MARKER_RANGE) != 0;
	out_trace_begin(m->out.trace, range ? "X" : "i", "user_annotation", name, p->pid,
			model_out_tid(t), s->ns);
	if (range)
		jo_kns_us(j, "dur", mk.end > s->ns ? (int64_t)(mk.end - s->ns) : 0);
	else
		jo_kstr(j, "s", "t");
	model_event_args(j, mk.domain_id ? parse_stream_str(s, mk.domain_id) : NULL, 0);
	out_trace_end(m->out.trace);
	m->n.dev_markers++;
}

void model_on_dev_info(struct parse_model *m, struct parse_stream *s)
{
	MODEL_PAYLOAD(s, struct raw_dev_info, di);
	model_dev_track(m, di.device, di.vendor, -1);
}
