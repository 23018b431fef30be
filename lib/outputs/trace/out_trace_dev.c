#include "outputs/trace/out_trace_dev.h"

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

/* "External id" and a comma, when the task's op is known. */
static char *ext_at(char *p, const struct out_dev_link *l)
{
	if (!l->ext_id)
		return p;
	p = JO_LIT(p, "\"External id\":");
	p += jo_fmt_uint(p, l->ext_id);
	*p++ = ',';
	return p;
}

/* A task's first args: "External id", "device", "stream", "correlation". */
/* A string value (null for NULL), in place. */
static char *str_at(struct jo *j, char *p, const char *s)
{
	if (!s)
		return JO_LIT(p, "null");
	*p++ = '"';
	p = jo_cstr_at(j, p, s);
	*p++ = '"';
	return p;
}

static char *link_at(char *p, uint32_t device, int64_t stream, const struct out_dev_link *l)
{
	p = JO_LIT(ext_at(p, l), "\"device\":");
	p += jo_fmt_uint(p, device);
	p = JO_LIT(p, ",\"stream\":");
	p += jo_fmt_int(p, stream);
	p = JO_LIT(p, ",\"correlation\":");
	return p + jo_fmt_uint(p, l->correlation);
}

/* An event sync's wait_on_* args, -1 where the event's record is not
 * known (Kineto's convention). */
static char *wait_at(char *p, const struct raw_dev_activity *a)
{
	p = JO_LIT(p, ",\"wait_on_stream\":");
	p += jo_fmt_int(p, a->wait_corr ? (int64_t)a->wait_stream : -1);
	p = JO_LIT(p, ",\"wait_on_cuda_event_record_corr_id\":");
	p += jo_fmt_int(p, a->wait_corr ? (int64_t)a->wait_corr : -1);
	p = JO_LIT(p, ",\"wait_on_cuda_event_id\":");
	return p + jo_fmt_uint(p, a->event_id);
}

static char *dim3_at(char *p, const uint32_t v[3])
{
	*p++ = '[';
	for (int i = 0; i < 3; i++) {
		p += jo_fmt_uint(p, v[i]);
		*p++ = i < 2 ? ',' : ']';
	}
	return p;
}

void out_trace_activity(struct out_trace *t, const struct raw_dev_activity *a, const char *cat,
			const char *name, int64_t tid, uint64_t start_ns,
			const struct out_dev_link *l)
{
	uint64_t end = a->end > start_ns ? a->end : start_ns;
	char *p = out_trace_x_at(t, cat, name, a->device, tid, start_ns, end);
	/* a sync that waited for no one stream says stream -1, as Kineto's do
	 * (HTA's critical path takes a Context or Event Sync only so) */
	int sync = a->kind == RAW_DEV_SYNC && name;
	int whole = sync && (strcmp(name, "Context Sync") == 0 || strcmp(name, "Event Sync") == 0);
	p = link_at(JO_LIT(p, ",\"args\":{"), a->device, whole ? -1 : (int64_t)a->stream, l);
	if (a->kind == RAW_DEV_SYNC) {
		p = JO_LIT(p, ",\"cuda_sync_kind\":");
		p = str_at(&t->j, p, name);
	}
	if (sync && (strcmp(name, "Event Sync") == 0 || strcmp(name, "Stream Wait Event") == 0))
		p = wait_at(jo_room(&t->j, p), a);
	if (a->kind == RAW_DEV_MEMCPY || a->kind == RAW_DEV_MEMSET) {
		p = JO_LIT(p, ",\"bytes\":");
		p += jo_fmt_uint(p, a->bytes);
		if (end > start_ns) {
			p = jo_room(&t->j, JO_LIT(p, ",\"memory bandwidth (GB/s)\":"));
			p += jo_fmt_fixed(p, (double)a->bytes / (double)(end - start_ns), 3);
		}
	} else if (a->kind == RAW_DEV_KERNEL && a->grid[0]) {
		p = JO_LIT(p, ",\"registers per thread\":");
		p += jo_fmt_uint(p, a->registers);
		p = JO_LIT(p, ",\"shared memory\":");
		p += jo_fmt_uint(p, a->shared_bytes);
		p = dim3_at(JO_LIT(p, ",\"grid\":"), a->grid);
		p = dim3_at(JO_LIT(p, ",\"block\":"), a->block);
	}
	out_trace_line_end(t, JO_LIT(p, "}}"));
}


static const char *coll_name(uint32_t op)
{
	static const char *const n[] = { "", "allreduce", "allgather", "broadcast",
		"reducescatter", "send", "recv", "alltoall", "reduce" };
	return op < sizeof n / sizeof n[0] ? n[op] : "";
}

/* ,"sim name":"..." when there is one. */
static char *sim_at(struct jo *j, char *p, const char *sim_name)
{
	if (!sim_name)
		return p;
	p = JO_LIT(p, ",\"sim name\":");
	return str_at(j, p, sim_name);
}

void out_trace_collective(struct out_trace *t, const struct raw_dev_collective *c,
			  const char *name, const char *sim_name, const char *group,
			  const char *ranks, uint64_t start_ns, const struct out_dev_link *l)
{
	struct jo *j = &t->j;
	char *p = out_trace_x_at(t, "kernel", name, c->device, c->stream, start_ns, c->end);
	p = link_at(JO_LIT(p, ",\"args\":{"), c->device, c->stream, l);
	p = JO_LIT(p, ",\"bytes\":");
	p += jo_fmt_uint(p, c->bytes);
	p = JO_LIT(p, ",\"Collective name\":");
	p = str_at(j, p, coll_name(c->op));
	p = JO_LIT(p, ",\"Process Group Name\":");
	p = str_at(j, p, group);
	p = JO_LIT(p, ",\"Process Group Ranks\":");
	p = str_at(j, p, ranks);
	p = JO_LIT(p, ",\"Rank\":");
	p += jo_fmt_int(p, c->rank);
	if (c->op == RAW_COLL_SEND || c->op == RAW_COLL_RECV) {
		p = JO_LIT(p, ",\"Peer\":");
		p += jo_fmt_int(p, c->peer);
	}
	p = sim_at(j, p, sim_name);
	out_trace_line_end(t, JO_LIT(p, "}}"));
}

void out_trace_api(struct out_trace *t, int64_t pid, int64_t tid, const char *cat,
		   const char *name, const char *sim_name, uint64_t start_ns, uint64_t end_ns,
		   uint32_t cbid, const struct out_dev_link *l)
{
	char *p = JO_LIT(out_trace_x_at(t, cat, name, pid, tid, start_ns, end_ns), ",\"args\":{");
	p = JO_LIT(ext_at(p, l), "\"cbid\":");
	p += jo_fmt_uint(p, cbid);
	p = JO_LIT(p, ",\"correlation\":");
	p += jo_fmt_uint(p, l->correlation);
	p = sim_at(&t->j, p, sim_name);
	out_trace_line_end(t, JO_LIT(p, "}}"));
}

/* Two flow events per launch, in place (through the writer, key by key,
 * they cost as much as the kernel's own event). */
void out_trace_flow(struct out_trace *t, const char *ph, uint64_t id, int64_t pid, int64_t tid,
		    uint64_t ns)
{
	char *p = jo_item_at(&t->j);
	p = ph[0] == 'f' ? JO_LIT(p, "{\"ph\":\"f\",\"id\":") : JO_LIT(p, "{\"ph\":\"s\",\"id\":");
	p += jo_fmt_uint(p, id);
	p = JO_LIT(p, ",\"pid\":");
	p += jo_fmt_int(p, pid);
	p = JO_LIT(p, ",\"tid\":");
	p += jo_fmt_int(p, tid);
	p = JO_LIT(p, ",\"ts\":");
	p += jo_fmt_us3(p, out_trace_rel(t, ns));
	p = JO_LIT(p, ",\"cat\":\"ac2g\",\"name\":\"ac2g\"");
	if (ph[0] == 'f')
		p = JO_LIT(p, ",\"bp\":\"e\"");
	out_trace_line_end(t, JO_LIT(p, "}"));
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
