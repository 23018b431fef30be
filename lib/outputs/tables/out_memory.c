#include "outputs/tables/out_memory.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "outputs/out_sink.h"
#include "outputs/tables/out_dev_usage.h"
#include "outputs/tables/out_host.h"

struct out_mem_live {
	struct out_mem_event ev;        /* the allocation */
	uint64_t total;                 /* the device's total after it */
	struct out_mem_live *next;      /* same address */
};

int out_memory_open(struct out_memory *m, const char *dir, uint64_t base_mono_ns)
{
	memset(m, 0, sizeof *m);
	m->base = base_mono_ns;
	int rc = out_file_open(&m->rec, dir, "memory_record.csv");
	if (rc)
		return rc;
	if ((rc = out_file_open(&m->ops, dir, "operator_memory.csv")) != 0) {
		out_file_abort(&m->rec);
		return rc;
	}
	csv_init(&m->rc, m->rec.f);
	csv_header(&m->rc, OUT_MEM_RECORD_HEADER);
	csv_init(&m->oc, m->ops.f);
	csv_header(&m->oc, OUT_MEM_OP_HEADER);
	return 0;
}

static struct out_mem_total *total_of(struct out_memory *m, uint32_t vendor, uint32_t device)
{
	uint64_t key = (uint64_t)vendor << 32 | device;
	size_t at = parse_idmap_pos(&m->total_at, key);
	if (at)
		return &m->totals[at - 1];
	struct out_mem_total *v = grow_room(m->totals, m->ntotals, &m->captotals, sizeof *v);
	if (!v)
		return NULL;
	m->totals = v;
	if (parse_idmap_put_pos(&m->total_at, key, m->ntotals) != 0)
		return NULL;
	v[m->ntotals] = (struct out_mem_total){ vendor, device, 0 };
	return &v[m->ntotals++];
}

void out_memory_device_type(char *buf, size_t n, uint32_t vendor, uint32_t device)
{
	snprintf(buf, n, "%s:%u", out_vendor_name(vendor), device);
}

static void mb(struct csv *c, uint64_t bytes)
{
	csv_fixed(c, (double)bytes / OUT_MB, 3);
}

static void record_row(struct out_memory *m, const struct out_mem_event *e, uint64_t total)
{
	char dt[48];
	out_memory_device_type(dt, sizeof dt, e->vendor, e->device);
	csv_str(&m->rc, out_vendor_name(e->vendor));
	csv_ns_us(&m->rc, (int64_t)(e->ns - m->base));
	for (int i = 0; i < 3; i++)
		mb(&m->rc, total);
	csv_uint(&m->rc, e->stream);
	csv_str(&m->rc, dt);
	csv_end_row(&m->rc);
}

/* An allocation's row; `fr` is its free, NULL when never freed. */
static void op_row(struct out_memory *m, const struct out_mem_live *a,
		   const struct out_mem_event *fr, uint64_t free_total)
{
	struct csv *c = &m->oc;
	char dt[48];
	out_memory_device_type(dt, sizeof dt, a->ev.vendor, a->ev.device);
	csv_str(c, a->ev.op);
	csv_fixed(c, (double)a->ev.bytes / 1024.0, 3);
	csv_ns_us(c, (int64_t)(a->ev.ns - m->base));
	for (int i = 0; i < 2; i++)
		fr ? csv_ns_us(c, (int64_t)(fr->ns - m->base)) : csv_str(c, "");
	for (int i = 0; i < 2; i++)
		fr ? csv_ns_us(c, (int64_t)(fr->ns - a->ev.ns)) : csv_str(c, "");
	for (int i = 0; i < 3; i++)
		mb(c, a->total);
	for (int i = 0; i < 3; i++)
		fr ? mb(c, free_total) : csv_str(c, "");
	csv_uint(c, a->ev.stream);
	csv_str(c, dt);
	csv_end_row(c);
}

/* Removes and returns the live allocation of e's address, NULL if none. */
static struct out_mem_live *take_live(struct out_memory *m, const struct out_mem_event *e)
{
	struct out_mem_live *head = parse_idmap_get(&m->live, e->address), **pp = &head;
	for (; *pp; pp = &(*pp)->next) {
		struct out_mem_live *a = *pp;
		if (a->ev.pid != e->pid || a->ev.device != e->device || a->ev.vendor != e->vendor)
			continue;
		*pp = a->next;
		if (head)
			parse_idmap_put(&m->live, e->address, head);
		else
			parse_idmap_del(&m->live, e->address);
		m->nlive--;
		return a;
	}
	return NULL;
}

static void add_live(struct out_memory *m, const struct out_mem_event *e, uint64_t total)
{
	struct out_mem_live *a = malloc(sizeof *a);
	if (!a)
		return;
	a->ev = *e;
	a->total = total;
	a->next = parse_idmap_get(&m->live, e->address);
	if (parse_idmap_put(&m->live, e->address, a) == a) {
		free(a);
		return;
	}
	m->nlive++;
}

uint64_t out_memory_event(struct out_memory *m, const struct out_mem_event *e, uint64_t *bytes)
{
	struct out_mem_total *t = total_of(m, e->vendor, e->device);
	if (!t)
		return 0;
	struct out_mem_live *old = take_live(m, e);
	if (!e->is_free) {
		if (old)   /* the same address again: its free was not recorded */
			free(old);
		t->bytes += e->bytes;
		*bytes = e->bytes;
		add_live(m, e, t->bytes);
	} else {
		*bytes = old ? old->ev.bytes : e->bytes;
		t->bytes -= *bytes < t->bytes ? *bytes : t->bytes;
		if (old)
			op_row(m, old, e, t->bytes);
		free(old);
	}
	record_row(m, e, t->bytes);
	return t->bytes;
}

/* ---- the framework allocator (profile_memory) ---- */

struct out_mem_fwlive {
	int32_t pid, tid;
	uint64_t ns, address;
	int64_t bytes, allocated, reserved, active;
	char *op, *device;
	struct out_mem_fwlive *next;    /* same key, latest first */
};

static uint64_t fw_key(const struct out_fw_mem *e, int64_t bytes)
{
	if (e->address)
		return e->address;
	/* no address: (thread, size), kept apart from addresses by the top bit */
	uint64_t h = (uint64_t)(uint32_t)e->tid * 0x9E3779B97F4A7C15ull ^ (uint64_t)bytes;
	return h | 1ull << 63;
}

static int fw_same(const struct out_mem_fwlive *a, const struct out_fw_mem *e, int64_t bytes)
{
	if (a->pid != e->pid || strcmp(a->device, e->device) != 0)
		return 0;
	return e->address ? a->address == e->address : a->tid == e->tid && a->bytes == bytes;
}

static void fw_free_one(struct out_mem_fwlive *a)
{
	free(a->op);
	free(a->device);
	free(a);
}

static struct out_mem_fwlive *fw_take(struct out_memory *m, const struct out_fw_mem *e,
				      int64_t bytes)
{
	uint64_t key = fw_key(e, bytes);
	struct out_mem_fwlive *head = parse_idmap_get(&m->fwlive, key), **pp = &head;
	for (; *pp; pp = &(*pp)->next) {
		struct out_mem_fwlive *a = *pp;
		if (!fw_same(a, e, bytes))
			continue;
		*pp = a->next;
		if (head)
			parse_idmap_put(&m->fwlive, key, head);
		else
			parse_idmap_del(&m->fwlive, key);
		m->nfwlive--;
		return a;
	}
	return NULL;
}

static void fw_add(struct out_memory *m, const struct out_fw_mem *e)
{
	struct out_mem_fwlive *a = calloc(1, sizeof *a);
	if (!a)
		return;
	*a = (struct out_mem_fwlive){
		.pid = e->pid, .tid = e->tid, .ns = e->ns, .address = e->address, .bytes = e->bytes,
		.allocated = e->allocated, .reserved = e->reserved, .active = e->active,
		.op = e->op ? strdup(e->op) : NULL, .device = strdup(e->device),
	};
	uint64_t key = fw_key(e, e->bytes);
	a->next = parse_idmap_get(&m->fwlive, key);
	if (!a->device || (e->op && !a->op) || parse_idmap_put(&m->fwlive, key, a) == a) {
		fw_free_one(a);
		return;
	}
	m->nfwlive++;
}

/* A total torch gave (bytes, in MB), or an empty cell. */
static void mb_opt(struct csv *c, int64_t bytes)
{
	bytes >= 0 ? mb(c, (uint64_t)bytes) : csv_str(c, "");
}

/* A framework allocation's row; `fr` its free, NULL when never freed. */
static void fw_op_row(struct out_memory *m, const struct out_mem_fwlive *a,
		      const struct out_fw_mem *fr)
{
	struct csv *c = &m->oc;
	csv_str(c, a->op ? a->op : "");
	csv_fixed(c, (double)a->bytes / 1024.0, 3);
	csv_ns_us(c, (int64_t)(a->ns - m->base));
	for (int i = 0; i < 2; i++)
		fr ? csv_ns_us(c, (int64_t)(fr->ns - m->base)) : csv_str(c, "");
	for (int i = 0; i < 2; i++)
		fr ? csv_ns_us(c, (int64_t)(fr->ns - a->ns)) : csv_str(c, "");
	mb_opt(c, a->allocated);
	mb_opt(c, a->reserved);
	mb_opt(c, a->active);
	if (fr) {
		mb_opt(c, fr->allocated);
		mb_opt(c, fr->reserved);
		mb_opt(c, fr->active);
	} else {
		for (int i = 0; i < 3; i++)
			csv_str(c, "");
	}
	csv_str(c, "");
	csv_str(c, a->device);
	csv_end_row(c);
}

void out_memory_fw(struct out_memory *m, const struct out_fw_mem *e)
{
	csv_str(&m->rc, "PTA");
	csv_ns_us(&m->rc, (int64_t)(e->ns - m->base));
	mb_opt(&m->rc, e->allocated);
	mb_opt(&m->rc, e->reserved);
	mb_opt(&m->rc, e->active);
	csv_str(&m->rc, "");
	csv_str(&m->rc, e->device);
	csv_end_row(&m->rc);
	if (e->bytes >= 0) {
		fw_add(m, e);
		return;
	}
	struct out_mem_fwlive *a = fw_take(m, e, -e->bytes);
	if (a)   /* a free of an allocation made before recording: no row */
		fw_op_row(m, a, e);
	if (a)
		fw_free_one(a);
}

struct fw_list { struct out_mem_fwlive **v; size_t n; };

static void fw_collect(void *ctx, void *val)
{
	struct fw_list *l = ctx;
	for (struct out_mem_fwlive *a = val; a; a = a->next)
		l->v[l->n++] = a;
}

static int fw_cmp(const void *pa, const void *pb)
{
	const struct out_mem_fwlive *a = *(struct out_mem_fwlive *const *)pa;
	const struct out_mem_fwlive *b = *(struct out_mem_fwlive *const *)pb;
	if (a->ns != b->ns)
		return a->ns < b->ns ? -1 : 1;
	return a->pid != b->pid ? (a->pid < b->pid ? -1 : 1) : (a->address > b->address) - (a->address < b->address);
}

static void fw_free_chain(void *ctx, void *val)
{
	(void)ctx;
	for (struct out_mem_fwlive *a = val, *next; a; a = next) {
		next = a->next;
		fw_free_one(a);
	}
}

static void fw_unreleased(struct out_memory *m)
{
	struct fw_list l = { calloc(m->nfwlive ? m->nfwlive : 1, sizeof *l.v), 0 };
	if (l.v) {
		parse_idmap_each(&m->fwlive, fw_collect, &l);
		qsort(l.v, l.n, sizeof *l.v, fw_cmp);
		for (size_t i = 0; i < l.n; i++)
			fw_op_row(m, l.v[i], NULL);
	}
	free(l.v);
}

/* ---- the end ---- */

struct live_list { struct out_mem_live **v; size_t n; };

static void collect(void *ctx, void *val)
{
	struct live_list *l = ctx;
	for (struct out_mem_live *a = val; a; a = a->next)
		l->v[l->n++] = a;
}

static int live_cmp(const void *pa, const void *pb)
{
	const struct out_mem_live *a = *(struct out_mem_live *const *)pa;
	const struct out_mem_live *b = *(struct out_mem_live *const *)pb;
	if (a->ev.ns != b->ev.ns)
		return a->ev.ns < b->ev.ns ? -1 : 1;
	return a->ev.address < b->ev.address ? -1 : a->ev.address > b->ev.address;
}

static void free_chain(void *ctx, void *val)
{
	for (struct out_mem_live *a = val, *next; a; a = next) {
		next = a->next;
		free(a);
	}
}

/* The allocations never freed, by allocation time. */
static void unreleased(struct out_memory *m)
{
	struct live_list l = { calloc(m->nlive ? m->nlive : 1, sizeof *l.v), 0 };
	if (l.v) {
		parse_idmap_each(&m->live, collect, &l);
		qsort(l.v, l.n, sizeof *l.v, live_cmp);
		for (size_t i = 0; i < l.n; i++)
			op_row(m, l.v[i], NULL, 0);
	}
	free(l.v);
}

static void free_live(struct out_memory *m)
{
	parse_idmap_each(&m->live, free_chain, NULL);
	parse_idmap_free(&m->live);
	m->nlive = 0;
	free(m->totals);
	m->totals = NULL;
	m->ntotals = m->captotals = 0;
	parse_idmap_free(&m->total_at);
	parse_idmap_each(&m->fwlive, fw_free_chain, NULL);
	parse_idmap_free(&m->fwlive);
	m->nfwlive = 0;
}

int out_memory_close(struct out_memory *m)
{
	unreleased(m);
	fw_unreleased(m);
	int fr = csv_finish(&m->rc), fo = csv_finish(&m->oc);
	int r1 = out_file_commit(&m->rec, fr);
	int r2 = out_file_commit(&m->ops, fo);
	free_live(m);
	return r1 ? r1 : r2;
}

void out_memory_abort(struct out_memory *m)
{
	out_file_abort(&m->rec);
	out_file_abort(&m->ops);
	free_live(m);
}
