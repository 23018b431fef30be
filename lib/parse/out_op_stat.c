#include "parse/out_op_stat.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/csv_out.h"
#include "parse/out_file.h"

void out_op_stat_init(struct out_op_stat *st)
{
	memset(st, 0, sizeof *st);
}

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static struct out_op_stat_entry *entry_new(struct out_op_stat *st, const char *name)
{
	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 64;
		struct out_op_stat_entry **v = realloc(st->v, cap * sizeof *v);
		if (!v)
			return NULL;
		st->v = v;
		st->cap = cap;
	}
	struct out_op_stat_entry *e = calloc(1, sizeof *e);
	if (e)
		e->name = strdup(name);
	if (!e || !e->name) {
		free(e);
		return NULL;
	}
	st->v[st->n++] = e;
	return e;
}

static struct out_op_stat_entry *entry_of(struct out_op_stat *st, const char *name)
{
	uint64_t h = fnv1a(name);
	struct out_op_stat_entry *head = parse_idmap_get(&st->by_hash, h);
	for (struct out_op_stat_entry *e = head; e; e = e->next)
		if (strcmp(e->name, name) == 0)
			return e;
	struct out_op_stat_entry *e = entry_new(st, name);
	if (!e)
		return NULL;
	e->next = head;
	if (parse_idmap_put(&st->by_hash, h, e) == e) {
		st->n--;  /* the map is full of memory: forget it */
		free(e->name);
		free(e);
		return NULL;
	}
	return e;
}

int out_op_stat_add(struct out_op_stat *st, const char *name, uint64_t ns)
{
	struct out_op_stat_entry *e = entry_of(st, name);
	if (!e)
		return -ENOMEM;
	if (e->count == 0 || ns < e->min_ns)
		e->min_ns = ns;
	if (ns > e->max_ns)
		e->max_ns = ns;
	e->count++;
	e->total_ns += ns;
	st->total_ns += ns;
	return 0;
}

static int entry_cmp(const void *pa, const void *pb)
{
	const struct out_op_stat_entry *a = *(struct out_op_stat_entry *const *)pa;
	const struct out_op_stat_entry *b = *(struct out_op_stat_entry *const *)pb;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	return strcmp(a->name, b->name);
}

static void write_row(struct csv *c, const struct out_op_stat_entry *e, uint64_t all_ns)
{
	csv_int(c, -1);
	csv_str(c, e->name);
	csv_str(c, "CPU");
	csv_uint(c, e->count);
	csv_ns_us(c, (int64_t)e->total_ns);
	csv_ns_us(c, (int64_t)e->min_ns);
	csv_ns_us(c, (int64_t)((e->total_ns + e->count / 2) / e->count));
	csv_ns_us(c, (int64_t)e->max_ns);
	csv_fixed(c, all_ns ? (double)e->total_ns * 100.0 / (double)all_ns : 0.0, 2);
	csv_end_row(c);
}

int out_op_stat_write(struct out_op_stat *st, const char *dir)
{
	struct out_file o;
	struct csv c;
	int rc = out_file_open(&o, dir, "op_statistic.csv");
	if (rc)
		return rc;
	if (st->n)
		qsort(st->v, st->n, sizeof *st->v, entry_cmp);
	csv_init(&c, o.f);
	csv_header(&c, OUT_OP_STAT_HEADER);
	for (size_t i = 0; i < st->n; i++)
		write_row(&c, st->v[i], st->total_ns);
	return out_file_commit(&o, csv_finish(&c) != 0);
}

void out_op_stat_free(struct out_op_stat *st)
{
	for (size_t i = 0; i < st->n; i++) {
		free(st->v[i]->name);
		free(st->v[i]);
	}
	free(st->v);
	parse_idmap_free(&st->by_hash);
	memset(st, 0, sizeof *st);
}
