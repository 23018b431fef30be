/* Host samples, names, metadata and losses. */
#include "model/parse_model_int.h"

#include <stdio.h>
#include <string.h>

#include "outputs/tables/out_host.h"     /* OUT_MB, OUT_KB: the counters' units */
#include "outputs/trace/out_trace_dev.h"

static void host_pid(struct parse_model *m, int32_t pid)
{
	for (size_t i = 0; i < m->nhost; i++)
		if (m->host_pids[i] == pid)
			return;
	if (m->nhost < sizeof m->host_pids / sizeof m->host_pids[0])
		m->host_pids[m->nhost++] = pid;
}

/* Older writers' samples end before `parts`: what is missing reads 0. */
static void host_payload(const struct parse_stream *s, struct raw_host_sample *h)
{
	memset(h, 0, sizeof *h);
	memcpy(h, s->rec.payload, s->rec.len < sizeof *h ? s->rec.len : sizeof *h);
}

void model_on_host_sample(struct parse_model *m, struct parse_stream *s)
{
	struct raw_host_sample h;
	host_payload(s, &h);
	int32_t pid = s->file.hdr.pid;
	uint32_t parts = raw_host_parts(&h);
	static const char *const cpu[] = { "process user %", "process sys %", "system %" };
	static const char *const mem[] = { "process RSS MB", "system used MB" };
	static const char *const disk[] = { "read KB", "write KB" };
	double vc[] = { h.proc_cpu_user_pct, h.proc_cpu_sys_pct, h.sys_cpu_pct };
	double vm[] = { (double)h.proc_rss_bytes / OUT_MB, (double)h.sys_mem_used_bytes / OUT_MB };
	double vd[] = { (double)h.proc_read_bytes / OUT_KB, (double)h.proc_write_bytes / OUT_KB };
	host_pid(m, pid);
	if (parts & RAW_HOST_CPU)
		out_trace_counter(m->out.trace, pid, s->ns, "CPU Usage", cpu, vc, 3);
	if (parts & RAW_HOST_MEM)
		out_trace_counter(m->out.trace, pid, s->ns, "Memory Usage", mem, vm, 2);
	if (parts & RAW_HOST_DISK)
		out_trace_counter(m->out.trace, pid, s->ns, "Disk Usage", disk, vd, 2);
	/* A sampler's first sample has nothing to differ from: no rate. */
	uint64_t prev = s->host_prev_ns;
	uint64_t interval = prev && s->ns > prev ? s->ns - prev : 0;
	OUT_SINKS_EMIT(m->out.sinks, host_sample, s->ns, interval, &h);
	s->host_prev_ns = s->ns;
	m->n.host_samples++;
}

/* A counter track per interface, its rates in KB/s. */
void model_on_host_net(struct parse_model *m, struct parse_stream *s)
{
	MODEL_PAYLOAD(s, struct raw_host_net, hn);
	const char *name = parse_stream_str(s, hn.name_id);
	if (!name)
		return;
	static const char *const keys[] = { "rx KB/s", "tx KB/s" };
	double secs = (double)hn.interval_ns / 1e9;
	double v[] = { secs > 0 ? (double)hn.rx_bytes / OUT_KB / secs : 0,
		       secs > 0 ? (double)hn.tx_bytes / OUT_KB / secs : 0 };
	char track[RAW_NAME_MAX + 32];
	snprintf(track, sizeof track, "Network Usage: %.*s", (int)RAW_NAME_MAX, name);
	host_pid(m, s->file.hdr.pid);
	out_trace_counter(m->out.trace, s->file.hdr.pid, s->ns, track, keys, v, 2);
	OUT_SINKS_EMIT(m->out.sinks, host_net, name, &hn);
}

void model_on_thread_name(struct parse_model *m, struct parse_stream *s)
{
	MODEL_PAYLOAD(s, struct raw_thread_name, tn);
	if (!s->proc)
		return;
	struct model_thread *t = model_thread_of(s->proc, tn.tid);
	if (t)
		t->name = parse_stream_str(s, tn.name_id);
}

void model_on_process(struct parse_model *m, struct parse_stream *s)
{
	MODEL_PAYLOAD(s, struct raw_process, rp);
	struct model_proc *p = s->proc;
	if (!p)
		return;
	if (!p->begin_ns)
		p->begin_ns = s->ns;
	p->cmdline = parse_stream_str(s, rp.cmdline_id);
	p->exe = parse_stream_str(s, rp.exe_id);
	p->rank = rp.rank_id ? parse_stream_str(s, rp.rank_id) : NULL;
}

void model_on_metadata(struct parse_model *m, struct parse_stream *s)
{
	MODEL_PAYLOAD(s, struct raw_metadata, md);
	OUT_SINKS_EMIT(m->out.sinks, metadata, parse_stream_str(s, md.key_id),
		       parse_stream_str(s, md.value_id), (md.flags & RAW_METADATA_JSON) != 0, m->log);
}

void model_on_lost(struct parse_model *m, struct parse_stream *s)
{
	MODEL_PAYLOAD(s, struct raw_lost, l);
	m->n.lost_records += l.count;
	if (!s->proc)
		return;
	out_trace_begin(m->out.trace, "i", "prof", "records lost", s->proc->pid, s->file.hdr.tid,
			s->ns);
	jo_kstr(&m->out.trace->j, "s", "t");
	jo_key(&m->out.trace->j, "args");
	jo_obj_begin(&m->out.trace->j);
	jo_kuint(&m->out.trace->j, "count", l.count);
	jo_obj_end(&m->out.trace->j);
	out_trace_end(m->out.trace);
}
