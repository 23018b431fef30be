/* communication.json: one step's p2p or collective object. */
#include "outputs/tables/out_comm_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "outputs/tables/out_dev_usage.h"
#include "raw/raw_format.h"

int out_comm_is_p2p(uint32_t op)
{
	return op == RAW_COLL_SEND || op == RAW_COLL_RECV;
}

const char *out_comm_type(uint32_t op)
{
	static const char *const names[] = { "invalid", "allreduce", "allgather", "broadcast",
		"reducescatter", "send", "receive", "alltoall", "reduce" };
	return op < sizeof names / sizeof names[0] ? names[op] : "invalid";
}

void out_comm_opname(const struct out_coll *r, char *buf, size_t n)
{
	const char *name = r->name && *r->name ? r->name : out_comm_type(r->op);
	snprintf(buf, n, "%s__%" PRId32 "_%" PRIu64, name, r->pid, r->seq);
}

double out_comm_ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

double out_comm_bw(uint64_t bytes, uint64_t ns)
{
	return ns ? ((double)bytes / (OUT_COMM_MB * 1024.0)) / ((double)ns / 1e9) : 0.0;
}

static void time_info(struct jo *j, int64_t start_rel_ns, uint64_t elapse_ns)
{
	jo_key(j, "Communication Time Info");
	jo_obj_begin(j);
	jo_kns_us(j, "Start Timestamp(us)", start_rel_ns);
	jo_kfixed(j, "Elapse Time(ms)", out_comm_ms(elapse_ns), 6);
	jo_kfixed(j, "Transit Time(ms)", out_comm_ms(elapse_ns), 6);
	jo_kfixed(j, "Wait Time(ms)", 0.0, 6);
	jo_kfixed(j, "Synchronization Time(ms)", 0.0, 6);
	jo_kfixed(j, "Idle Time(ms)", 0.0, 6);
	jo_kfixed(j, "Wait Time Ratio", 0.0, 4);
	jo_kfixed(j, "Synchronization Time Ratio", 0.0, 4);
	jo_obj_end(j);
}

/* One packet size of a transport: how many, how long in all. */
struct packet { uint32_t vendor; uint64_t bytes, count, ns; };

static int packet_cmp(const void *pa, const void *pb)
{
	const struct packet *a = pa, *b = pb;
	if (a->vendor != b->vendor)
		return a->vendor < b->vendor ? -1 : 1;
	return a->bytes < b->bytes ? -1 : a->bytes > b->bytes;
}

/* The transports of packets p[0..n) (sorted, merged). */
static void bw_info(struct jo *j, const struct packet *p, size_t n)
{
	jo_key(j, "Communication Bandwidth Info");
	jo_obj_begin(j);
	for (size_t i = 0, end; i < n; i = end) {
		uint64_t bytes = 0, ns = 0;
		for (end = i; end < n && p[end].vendor == p[i].vendor; end++) {
			bytes += p[end].bytes * p[end].count;
			ns += p[end].ns;
		}
		jo_key(j, out_vendor_name(p[i].vendor));
		jo_obj_begin(j);
		jo_kfixed(j, "Transit Size(MB)", (double)bytes / OUT_COMM_MB, 6);
		jo_kfixed(j, "Transit Time(ms)", out_comm_ms(ns), 6);
		jo_kfixed(j, "Bandwidth(GB/s)", out_comm_bw(bytes, ns), 4);
		jo_kfixed(j, "Large Packet Ratio", 0.0, 4);
		jo_key(j, "Size Distribution");
		jo_obj_begin(j);
		for (size_t k = i; k < end; k++) {
			char key[48];
			snprintf(key, sizeof key, "%.6f", (double)p[k].bytes / OUT_COMM_MB);
			jo_key(j, key);
			jo_arr_begin(j);
			jo_uint(j, p[k].count);
			jo_fixed(j, out_comm_ms(p[k].ns), 6);
			jo_arr_end(j);
		}
		jo_obj_end(j);
		jo_obj_end(j);
	}
	jo_obj_end(j);
}

static void op_info(struct jo *j, const struct out_coll *r, uint64_t base)
{
	char name[512];
	out_comm_opname(r, name, sizeof name - 128);
	snprintf(name + strlen(name), 128, "@%s", r->group ? r->group : "");
	uint64_t dur = r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0;
	struct packet p = { r->vendor, r->bytes, 1, dur };
	jo_key(j, name);
	jo_obj_begin(j);
	time_info(j, (int64_t)(r->start_ns - base), dur);
	bw_info(j, &p, 1);
	jo_obj_end(j);
}

/* Sums the packets of the set, merging equal sizes of a transport. */
static size_t packets(const struct out_comm_set *s, struct packet *p)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++) {
		const struct out_coll *r = s->v[i];
		uint64_t dur = r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0;
		p[i] = (struct packet){ r->vendor, r->bytes, 1, dur };
	}
	qsort(p, s->n, sizeof *p, packet_cmp);
	for (size_t i = 0; i < s->n; i++) {
		if (n && p[n - 1].vendor == p[i].vendor && p[n - 1].bytes == p[i].bytes) {
			p[n - 1].count++;
			p[n - 1].ns += p[i].ns;
		} else {
			p[n++] = p[i];
		}
	}
	return n;
}

static void total_info(struct jo *j, const struct out_comm_set *s, uint64_t base)
{
	struct packet *p = malloc(s->n * sizeof *p);
	uint64_t elapse = 0;
	for (size_t i = 0; i < s->n; i++)
		elapse += s->v[i]->end_ns > s->v[i]->start_ns ? s->v[i]->end_ns - s->v[i]->start_ns : 0;
	jo_key(j, "Total Op Info");
	jo_obj_begin(j);
	time_info(j, (int64_t)(s->v[0]->start_ns - base), elapse);
	if (p)
		bw_info(j, p, packets(s, p));
	jo_obj_end(j);
	free(p);
}

void out_comm_json_set(struct jo *j, const struct out_comm_set *s, uint64_t base)
{
	jo_obj_begin(j);
	for (size_t i = 0; i < s->n; i++)
		op_info(j, s->v[i], base);
	if (s->n)
		total_info(j, s, base);
	jo_obj_end(j);
}
