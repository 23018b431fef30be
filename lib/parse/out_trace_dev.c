#include "parse/out_trace_dev.h"

#include <string.h>

void out_trace_dev_props(struct jo *j, const struct out_dev_info *d, size_t n)
{
	jo_key(j, "deviceProperties");
	jo_arr_begin(j);
	for (size_t i = 0; i < n; i++) {
		jo_obj_begin(j);
		jo_kuint(j, "id", d[i].device);
		jo_kstr(j, "name", d[i].name ? d[i].name : "");
		jo_kuint(j, "totalGlobalMem", d[i].total_mem);
		jo_kuint(j, "computeMajor", d[i].major);
		jo_kuint(j, "computeMinor", d[i].minor);
		jo_kuint(j, "numSms", d[i].sms);
		jo_obj_end(j);
	}
	jo_arr_end(j);
}

static void link_args(struct jo *j, uint32_t device, uint32_t stream,
		      const struct out_dev_link *l)
{
	if (l->ext_id)
		jo_kuint(j, "External id", l->ext_id);
	jo_kuint(j, "device", device);
	jo_kuint(j, "stream", stream);
	jo_kuint(j, "correlation", l->correlation);
}

static void dim3(struct jo *j, const char *key, const uint32_t v[3])
{
	jo_key(j, key);
	jo_arr_begin(j);
	for (int i = 0; i < 3; i++)
		jo_uint(j, v[i]);
	jo_arr_end(j);
}

static void begin_x(struct out_trace *t, const char *cat, const char *name, int64_t pid,
		    int64_t tid, uint64_t start_ns, uint64_t end_ns)
{
	out_trace_begin(t, "X", cat, name, pid, tid, start_ns);
	jo_kns_us(&t->j, "dur", end_ns > start_ns ? (int64_t)(end_ns - start_ns) : 0);
	jo_key(&t->j, "args");
	jo_obj_begin(&t->j);
}

static void end_x(struct out_trace *t)
{
	jo_obj_end(&t->j);
	out_trace_end(t);
}

void out_trace_activity(struct out_trace *t, const struct raw_dev_activity *a, const char *cat,
			const char *name, int64_t tid, uint64_t start_ns,
			const struct out_dev_link *l)
{
	struct jo *j = &t->j;
	uint64_t end = a->end > start_ns ? a->end : start_ns;
	begin_x(t, cat, name, a->device, tid, start_ns, end);
	link_args(j, a->device, a->stream, l);
	if (a->kind == RAW_DEV_MEMCPY || a->kind == RAW_DEV_MEMSET) {
		jo_kuint(j, "bytes", a->bytes);
		if (end > start_ns)
			jo_kfixed(j, "memory bandwidth (GB/s)",
				  (double)a->bytes / (double)(end - start_ns), 3);
	} else if (a->kind == RAW_DEV_KERNEL && a->grid[0]) {
		jo_kuint(j, "registers per thread", a->registers);
		jo_kuint(j, "shared memory", a->shared_bytes);
		dim3(j, "grid", a->grid);
		dim3(j, "block", a->block);
	}
	end_x(t);
}

static const char *coll_name(uint32_t op)
{
	static const char *const n[] = { "", "allreduce", "allgather", "broadcast",
		"reducescatter", "send", "recv", "alltoall", "reduce" };
	return op < sizeof n / sizeof n[0] ? n[op] : "";
}

void out_trace_collective(struct out_trace *t, const struct raw_dev_collective *c,
			  const char *name, const char *group, const char *ranks,
			  uint64_t start_ns, const struct out_dev_link *l)
{
	struct jo *j = &t->j;
	begin_x(t, "kernel", name, c->device, c->stream, start_ns, c->end);
	link_args(j, c->device, c->stream, l);
	jo_kuint(j, "bytes", c->bytes);
	jo_kstr(j, "Collective name", coll_name(c->op));
	jo_kstr(j, "Process Group Name", group);
	jo_kstr(j, "Process Group Ranks", ranks);
	jo_kint(j, "Rank", c->rank);
	if (c->op == RAW_COLL_SEND || c->op == RAW_COLL_RECV)
		jo_kint(j, "Peer", c->peer);
	end_x(t);
}

void out_trace_api(struct out_trace *t, int64_t pid, int64_t tid, const char *cat,
		   const char *name, uint64_t start_ns, uint64_t end_ns, uint32_t cbid,
		   const struct out_dev_link *l)
{
	struct jo *j = &t->j;
	begin_x(t, cat, name, pid, tid, start_ns, end_ns);
	if (l->ext_id)
		jo_kuint(j, "External id", l->ext_id);
	jo_kuint(j, "cbid", cbid);
	jo_kuint(j, "correlation", l->correlation);
	end_x(t);
}

#define LIT(b, n, s) (memcpy((b) + (n), (s), sizeof(s) - 1), (n) += sizeof(s) - 1)
#define SEP(b, n, j, lo, ti) ((j)->tight ? LIT(b, n, ti) : LIT(b, n, lo))

/* Two flow events per launch: built in one buffer and written as one item
 * (through the writer, key by key, they cost as much as the kernel's own
 * event). The same text the writer would give. */
void out_trace_flow(struct out_trace *t, const char *ph, uint64_t id, int64_t pid, int64_t tid,
		    uint64_t ns)
{
	const struct jo *j = &t->j;
	char b[192];
	size_t n = 0;
	SEP(b, n, j, "{\"ph\": \"", "{\"ph\":\"");
	b[n++] = ph[0] == 'f' ? 'f' : 's';
	SEP(b, n, j, "\", \"id\": ", "\",\"id\":");
	n += jo_fmt_uint(b + n, id);
	SEP(b, n, j, ", \"pid\": ", ",\"pid\":");
	n += jo_fmt_int(b + n, pid);
	SEP(b, n, j, ", \"tid\": ", ",\"tid\":");
	n += jo_fmt_int(b + n, tid);
	SEP(b, n, j, ", \"ts\": ", ",\"ts\":");
	n += jo_fmt_us3(b + n, out_trace_rel(t, ns));
	SEP(b, n, j, ", \"cat\": \"ac2g\", \"name\": \"ac2g\"", ",\"cat\":\"ac2g\",\"name\":\"ac2g\"");
	if (ph[0] == 'f')
		SEP(b, n, j, ", \"bp\": \"e\"", ",\"bp\":\"e\"");
	b[n++] = '}';
	b[n] = '\0';
	jo_raw(&t->j, b);
	t->events++;
}

void out_trace_counter(struct out_trace *t, int64_t pid, uint64_t ns, const char *name,
		       const char *const *keys, const double *vals, int n)
{
	struct jo *j = &t->j;
	out_trace_begin(t, "C", NULL, name, pid, 0, ns);
	jo_key(j, "args");
	jo_obj_begin(j);
	for (int i = 0; i < n; i++)
		jo_kfixed(j, keys[i], vals[i], 3);
	jo_obj_end(j);
	out_trace_end(t);
}
