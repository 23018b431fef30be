/* profile_memory: the framework allocator's events (RAW_REC_FW_MEMORY),
 * each given the operator open on its thread at its moment, a running
 * total where torch gave none, a "[memory]" instant and a counter in the
 * trace, and handed to the sinks (memory_record.csv, operator_memory.csv). */
#include "model/parse_model_int.h"

#include <stdlib.h>

#include "common/grow.h"
#include "outputs/tables/out_host.h"     /* OUT_MB: the counters' unit */
#include "outputs/trace/out_trace_dev.h"

static struct model_fwmem *fwmem_of(struct model_proc *p, int16_t type, int16_t index)
{
	for (size_t i = 0; i < p->nfwmem; i++)
		if (p->fwmem[i].type == type && p->fwmem[i].index == index)
			return &p->fwmem[i];
	struct model_fwmem *v = grow_room(p->fwmem, p->nfwmem, &p->capfwmem, sizeof *v);
	if (!v)
		return NULL;
	p->fwmem = v;
	v[p->nfwmem] = (struct model_fwmem){ .type = type, .index = index };
	return &v[p->nfwmem++];
}

void model_fwmem_free(struct model_proc *p)
{
	free(p->fwmem);
	p->fwmem = NULL;
	p->nfwmem = p->capfwmem = 0;
}

/* "CPU", "CUDA:0": Ascend's Device Type column ("CPU", "NPU:0"). */
void model_fwmem_device(char *buf, size_t n, int16_t type, int16_t index)
{
	if (type == RAW_FW_DEV_CPU)
		snprintf(buf, n, "CPU");
	else if (type == RAW_FW_DEV_CUDA)
		snprintf(buf, n, "CUDA:%d", index);
	else
		snprintf(buf, n, "DEVICE%d:%d", type, index);
}

/* Kineto's "[memory]" instant on the allocating thread. */
static void instant(struct parse_model *m, struct model_proc *p, struct model_thread *t,
		    const struct raw_fw_memory *r, uint64_t ns, const struct out_fw_mem *ev)
{
	struct jo *j = &m->out.trace->j;
	out_trace_begin(m->out.trace, "i", "cpu_instant_event", "[memory]", p->pid, model_out_tid(t), ns);
	jo_kstr(j, "s", "t");
	jo_key(j, "args");
	jo_obj_begin(j);
	jo_kint(j, "Device Type", r->device_type);
	jo_kint(j, "Device Id", r->device_index);
	jo_kuint(j, "Addr", r->address);
	jo_kint(j, "Bytes", r->bytes);
	jo_kint(j, "Total Allocated", ev->allocated);
	if (ev->reserved >= 0)
		jo_kint(j, "Total Reserved", ev->reserved);
	jo_obj_end(j);
	out_trace_end(m->out.trace);
}

void model_on_fw_memory(struct parse_model *m, struct parse_stream *s)
{
	MODEL_PAYLOAD(s, struct raw_fw_memory, r);
	struct model_proc *p = s->proc;
	if (!p)
		return;
	struct model_fwmem *d = fwmem_of(p, r.device_type, r.device_index);
	if (!d)
		return;
	if (r.total_allocated >= 0)
		d->allocated = r.total_allocated;
	else   /* torch gave no total: the sum of what was seen, never below 0 */
		d->allocated = r.bytes < 0 && -r.bytes > d->allocated ? 0 : d->allocated + r.bytes;
	if (d->allocated > d->peak)
		d->peak = d->allocated;
	struct model_thread *t = r.tid ? model_thread_find(p, r.tid) : NULL;
	long k = t ? model_op_at(t, s->ns) : -1;
	char dev[32];
	model_fwmem_device(dev, sizeof dev, r.device_type, r.device_index);
	struct out_fw_mem ev = {
		.pid = p->pid, .tid = r.tid, .ns = s->ns, .bytes = r.bytes, .address = r.address,
		.allocated = d->allocated, .reserved = r.total_reserved,
		.active = r.total_active, .device = dev, .op = k >= 0 ? t->ops[k].name : NULL,
	};
	if (r.tid && (t || (t = model_thread_of(p, r.tid)) != NULL))
		instant(m, p, t, &r, s->ns, &ev);
	static const char *const keys[] = { "Total Allocated MB", "Total Reserved MB" };
	double v[] = { (double)ev.allocated / OUT_MB, (double)ev.reserved / OUT_MB };
	char track[64];
	snprintf(track, sizeof track, "Framework Memory %s", dev);
	out_trace_counter(m->out.trace, p->pid, s->ns, track, keys, v, ev.reserved >= 0 ? 2 : 1);
	OUT_SINKS_EMIT(m->out.sinks, fw_memory, &ev);
	m->n.fw_memory++;
}
