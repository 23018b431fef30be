/* communication_matrix.json: one step's p2p or collective object. */
#include "outputs/tables/out_comm_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "outputs/tables/out_dev_usage.h"
#include "raw/raw_format.h"

/* One instance on one link. */
struct link {
	const char *type, *group;
	int64_t src, dst;
	double bw;
	const struct out_coll *r;
};

/* Position of global rank `rank` in the list "0,1,2,3"; the rank itself
 * when the list does not hold it. */
static int64_t local_rank(const char *ranks, int32_t rank)
{
	int64_t pos = 0;
	for (const char *p = ranks ? ranks : ""; *p; pos++) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		if (v == rank)
			return pos;
		p = *end == ',' ? end + 1 : end;
	}
	return rank;
}

static int link_of(const struct out_coll *r, struct link *l)
{
	if (r->rank < 0 || (out_comm_is_p2p(r->op) && r->peer < 0))
		return 0;
	int64_t me = local_rank(r->ranks, r->rank);
	int64_t peer = out_comm_is_p2p(r->op) ? local_rank(r->ranks, r->peer) : me;
	*l = (struct link){ out_comm_type(r->op), r->group ? r->group : "",
			    r->op == RAW_COLL_RECV ? peer : me, r->op == RAW_COLL_RECV ? me : peer,
			    out_comm_bw(r->bytes, r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0),
			    r };
	return 1;
}

static int link_cmp(const void *pa, const void *pb)
{
	const struct link *a = pa, *b = pb;
	int c = strcmp(a->type, b->type);
	if (!c)
		c = strcmp(a->group, b->group);
	if (c)
		return c;
	if (a->src != b->src)
		return a->src < b->src ? -1 : 1;
	if (a->dst != b->dst)
		return a->dst < b->dst ? -1 : 1;
	if (a->bw != b->bw)
		return a->bw > b->bw ? -1 : 1;
	return a->r->start_ns < b->r->start_ns ? -1 : a->r->start_ns > b->r->start_ns;
}

static int same_link(const struct link *a, const struct link *b)
{
	return a->src == b->src && a->dst == b->dst;
}

static void entry(struct jo *j, const struct link *l, uint64_t bytes, uint64_t ns,
		  const char *op)
{
	char key[64];
	snprintf(key, sizeof key, "%" PRId64 "-%" PRId64, l->src, l->dst);
	jo_key(j, key);
	jo_obj_begin(j);
	jo_kstr(j, "Transport Type", out_vendor_name(l->r->vendor));
	jo_kfixed(j, "Transit Size(MB)", (double)bytes / OUT_COMM_MB, 6);
	jo_kfixed(j, "Transit Time(ms)", out_comm_ms(ns), 6);
	jo_kfixed(j, "Bandwidth(GB/s)", out_comm_bw(bytes, ns), 4);
	jo_kstr(j, "Op Name", op);
	jo_obj_end(j);
}

static uint64_t dur(const struct out_coll *r)
{
	return r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0;
}

enum { TOP1, MIDDLE, BOTTOM1, BOTTOM2, BOTTOM3, TOTAL, NLABELS };
static const char *const labels[NLABELS] = { "top1", "middle", "bottom1", "bottom2",
					     "bottom3", "total" };

/* The instance of link run [a, b) that `label` picks; NULL: none. */
static const struct link *pick(const struct link *a, const struct link *b, int label)
{
	size_t n = (size_t)(b - a);
	switch (label) {
	case TOP1:    return a;
	case MIDDLE:  return a + n / 2;
	case BOTTOM1: return b - 1;
	case BOTTOM2: return n >= 2 ? b - 2 : NULL;
	case BOTTOM3: return n >= 3 ? b - 3 : NULL;
	default:      return NULL;
	}
}

static void link_entry(struct jo *j, const struct link *a, const struct link *b, int label)
{
	if (label == TOTAL) {
		uint64_t bytes = 0, ns = 0;
		for (const struct link *l = a; l < b; l++) {
			bytes += l->r->bytes;
			ns += dur(l->r);
		}
		entry(j, a, bytes, ns, "");
		return;
	}
	const struct link *l = pick(a, b, label);
	char op[512];
	out_comm_opname(l->r, op, sizeof op);
	entry(j, l, l->r->bytes, dur(l->r), op);
}

/* The objects of one (type, group): links [a, b), sorted. */
static void type_group(struct jo *j, const struct link *a, const struct link *b)
{
	for (int label = 0; label < NLABELS; label++) {
		int any = 0;
		for (const struct link *l = a, *e; l < b; l = e) {
			for (e = l; e < b && same_link(e, l); e++)
				;
			if (label == TOTAL || pick(l, e, label)) {
				if (!any) {
					char key[512];
					snprintf(key, sizeof key, "%s-%s@%s", a->type, labels[label],
						 a->group);
					jo_key(j, key);
					jo_obj_begin(j);
					any = 1;
				}
				link_entry(j, l, e, label);
			}
		}
		if (any)
			jo_obj_end(j);
	}
}

void out_comm_matrix_set(struct jo *j, const struct out_comm_set *s)
{
	struct link *v = malloc((s->n ? s->n : 1) * sizeof *v);
	size_t n = 0;
	jo_obj_begin(j);
	for (size_t i = 0; v && i < s->n; i++)
		n += link_of(s->v[i], &v[n]);
	if (n)
		qsort(v, n, sizeof *v, link_cmp);
	for (size_t i = 0, e; i < n; i = e) {
		for (e = i; e < n && !strcmp(v[e].type, v[i].type) && !strcmp(v[e].group, v[i].group);
		     e++)
			;
		type_group(j, v + i, v + e);
	}
	jo_obj_end(j);
	free(v);
}
