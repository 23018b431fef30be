#include "outputs/out_namestat.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void out_namestat_init(struct out_namestat *st)
{
	memset(st, 0, sizeof *st);
}

static uint64_t hash(int32_t group, const char *tag, const char *s)
{
	uint64_t h = parse_idmap_hash_text(PARSE_IDMAP_TEXT0 ^ (uint32_t)group, tag);
	return parse_idmap_hash_text(parse_idmap_hash_text(h, "\xff"), s);   /* 0xff between: no UTF-8 byte */
}

static struct out_namestat_entry *entry_new(struct out_namestat *st, int32_t group,
					    const char *tag, const char *name)
{
	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 64;
		struct out_namestat_entry **v = realloc(st->v, cap * sizeof *v);
		if (!v)
			return NULL;
		st->v = v;
		st->cap = cap;
	}
	struct out_namestat_entry *e = calloc(1, sizeof *e);
	if (e)
		e->name = strdup(name);
	if (!e || !e->name) {
		free(e);
		return NULL;
	}
	e->group = group;
	e->tag = tag;
	st->v[st->n++] = e;
	return e;
}

static int entry_is(const struct out_namestat_entry *e, int32_t group, const char *tag,
		    const char *name)
{
	return e->group == group && strcmp(e->tag, tag) == 0 && strcmp(e->name, name) == 0;
}

static struct out_namestat_entry *entry_hashed(struct out_namestat *st, int32_t group,
					       const char *tag, const char *name)
{
	uint64_t h = hash(group, tag, name);
	struct out_namestat_entry *head = parse_idmap_get(&st->by_hash, h);
	for (struct out_namestat_entry *e = head; e; e = e->next)
		if (entry_is(e, group, tag, name))
			return e;
	struct out_namestat_entry *e = entry_new(st, group, tag, name);
	if (!e)
		return NULL;
	e->next = head;
	if (parse_idmap_put(&st->by_hash, h, e) == e) {
		st->n--;  /* the map is out of memory: forget it */
		free(e->name);
		free(e);
		return NULL;
	}
	return e;
}

/* Through the cache first: a hit is the same addresses (see the header).
 * Two ways a set: keys that share a set alternate in a parse (an op's
 * name and its kernels'), and one way made them miss each other out. */
static struct out_namestat_entry *entry_of(struct out_namestat *st, int32_t group,
					   const char *tag, const char *name)
{
	uint64_t k = ((uint64_t)(uintptr_t)name ^ ((uint64_t)(uintptr_t)tag << 7) ^
		      (uint64_t)(uint32_t)group) * 0x9e3779b97f4a7c15ull;
	struct out_namestat_hit *set = &st->cache[(k >> 54) & (OUT_NAMESTAT_CACHE - 2)];
	for (int w = 0; w < 2; w++)
		if (set[w].e && set[w].name == name && set[w].tag == tag && set[w].group == group)
			return set[w].e;
	struct out_namestat_entry *e = entry_hashed(st, group, tag, name);
	if (e) {   /* the newest first, the other way's one kept */
		set[1] = set[0];
		set[0] = (struct out_namestat_hit){ name, tag, group, e };
	}
	return e;
}

int out_namestat_add(struct out_namestat *st, int32_t group, const char *tag,
		     const char *name, uint64_t ns)
{
	struct out_namestat_entry *e = entry_of(st, group, tag, name ? name : "");
	if (!e)
		return -ENOMEM;
	if (e->count == 0 || ns < e->min_ns)
		e->min_ns = ns;
	if (ns > e->max_ns)
		e->max_ns = ns;
	e->count++;
	e->total_ns += ns;
	double us = (double)ns / 1000.0, d = us - e->mean_us;
	e->mean_us += d / (double)e->count;
	e->m2_us += d * (us - e->mean_us);
	return 0;
}

/* Chan et al.'s pairwise update: the merged Welford sums. */
static void entry_merge(struct out_namestat_entry *d, const struct out_namestat_entry *s)
{
	if (d->count == 0 || s->min_ns < d->min_ns)
		d->min_ns = s->min_ns;
	if (s->max_ns > d->max_ns)
		d->max_ns = s->max_ns;
	double n = (double)(d->count + s->count), delta = s->mean_us - d->mean_us;
	d->m2_us += s->m2_us + delta * delta * (double)d->count * (double)s->count / n;
	d->mean_us += delta * (double)s->count / n;
	d->count += s->count;
	d->total_ns += s->total_ns;
}

int out_namestat_merge(struct out_namestat *dst, const struct out_namestat *src)
{
	for (size_t i = 0; i < src->n; i++) {
		const struct out_namestat_entry *s = src->v[i];
		if (s->count == 0)
			continue;
		/* by content: src's copies of the names may go before dst does */
		struct out_namestat_entry *d = entry_hashed(dst, s->group, s->tag, s->name);
		if (!d)
			return -ENOMEM;
		entry_merge(d, s);
	}
	return 0;
}

void out_namestat_zero(struct out_namestat *st)
{
	for (size_t i = 0; i < st->n; i++) {
		struct out_namestat_entry *e = st->v[i];
		e->count = e->total_ns = e->min_ns = e->max_ns = 0;
		e->mean_us = e->m2_us = 0.0;
	}
}

static int entry_cmp(const void *pa, const void *pb)
{
	const struct out_namestat_entry *a = *(struct out_namestat_entry *const *)pa;
	const struct out_namestat_entry *b = *(struct out_namestat_entry *const *)pb;
	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	int t = strcmp(a->tag, b->tag);
	return t ? t : strcmp(a->name, b->name);
}

void out_namestat_sort(struct out_namestat *st)
{
	if (st->n)
		qsort(st->v, st->n, sizeof *st->v, entry_cmp);
}

uint64_t out_namestat_group_total(const struct out_namestat *st, size_t i)
{
	uint64_t t = 0;
	for (size_t k = i; k < st->n && st->v[k]->group == st->v[i]->group; k++)
		t += st->v[k]->total_ns;
	return t;
}

double out_namestat_variance(const struct out_namestat_entry *e)
{
	return e->count ? e->m2_us / (double)e->count : 0.0;
}

void out_namestat_free(struct out_namestat *st)
{
	for (size_t i = 0; i < st->n; i++) {
		free(st->v[i]->name);
		free(st->v[i]);
	}
	free(st->v);
	parse_idmap_free(&st->by_hash);
	memset(st, 0, sizeof *st);
}
