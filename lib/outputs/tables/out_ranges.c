#include "outputs/tables/out_ranges.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/csv_out.h"
#include "common/fsutil.h"
#include "common/grow.h"
#include "outputs/out_file.h"

#define OUT_RANGES_HEADER "Category,Name,Step Id,Calls,Total Time(us),Self Time(us)," \
			  "Avg Time(us),Max Time(us),Min Time(us)"

void out_ranges_init(struct out_ranges *o)
{
	memset(o, 0, sizeof *o);
}

static uint64_t hash_str(const char *s, uint64_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* Interned names chain through a small header before their text. */
struct ranges_str {
	struct ranges_str *next;
	char text[];
};

/* A stable copy of `name` (the same pointer for the same text), or NULL
 * when memory ran out. */
static const char *out_ranges_intern(struct out_ranges *o, const char *name)
{
	uint64_t h = hash_str(name, 0xcbf29ce484222325ull);
	struct ranges_str *head = parse_idmap_get(&o->names, h);
	for (struct ranges_str *s = head; s; s = s->next)
		if (strcmp(s->text, name) == 0)
			return s->text;
	size_t len = strlen(name);
	char **grown = grow_room(o->strs, o->nstrs, &o->capstrs, sizeof *o->strs);
	struct ranges_str *s = grown ? malloc(sizeof *s + len + 1) : NULL;
	if (grown)
		o->strs = grown;
	if (!s)
		return NULL;
	memcpy(s->text, name, len + 1);
	s->next = head;
	if (parse_idmap_put(&o->names, h, s) == s) {
		free(s);
		return NULL;
	}
	o->strs[o->nstrs++] = (char *)s;
	return s->text;
}

/* Names are interned: a row is found by their addresses. */
static uint64_t row_key(const char *cat, const char *name, int64_t step)
{
	uint64_t k = (uint64_t)(uintptr_t)name * 0x9e3779b97f4a7c15ull;
	k ^= (uint64_t)(uintptr_t)cat + ((uint64_t)step << 17);
	return k;
}

static struct out_range_row *row_of(struct out_ranges *o, const char *cat, const char *name,
				    int64_t step)
{
	uint64_t k = row_key(cat, name, step);
	struct out_range_row *head = parse_idmap_get(&o->rows, k);
	for (struct out_range_row *r = head; r; r = r->next)
		if (r->name == name && r->cat == cat && r->step == step)
			return r;
	struct out_range_row **grown = grow_room(o->v, o->n, &o->cap, sizeof *o->v);
	struct out_range_row *r = grown ? calloc(1, sizeof *r) : NULL;
	if (grown)
		o->v = grown;
	if (!r)
		return NULL;
	*r = (struct out_range_row){ .cat = cat, .name = name, .step = step,
				     .min_ns = UINT64_MAX, .next = head };
	if (parse_idmap_put(&o->rows, k, r) == r) {
		free(r);
		return NULL;
	}
	o->v[o->n++] = r;
	return r;
}

int out_ranges_add(struct out_ranges *o, const char *cat, const char *name, int64_t step,
		   uint64_t total_ns, uint64_t self_ns)
{
	const char *kept = name ? out_ranges_intern(o, name) : NULL;
	struct out_range_row *r = kept ? row_of(o, cat, kept, step) : NULL;
	if (!r)
		return -ENOMEM;
	r->count++;
	r->total_ns += total_ns;
	r->self_ns += self_ns;
	if (total_ns < r->min_ns)
		r->min_ns = total_ns;
	if (total_ns > r->max_ns)
		r->max_ns = total_ns;
	return 0;
}

/* Category, then step (outside every step first), then total descending. */
static int row_cmp(const void *a, const void *b)
{
	const struct out_range_row *x = *(struct out_range_row *const *)a;
	const struct out_range_row *y = *(struct out_range_row *const *)b;
	int c = strcmp(x->cat, y->cat);
	if (c)
		return c;
	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void write_row(struct csv *c, const struct out_range_row *r)
{
	csv_str(c, r->cat);
	csv_str(c, r->name);
	if (r->step >= 0)
		csv_uint(c, (uint64_t)r->step);
	else
		csv_str(c, NULL);
	csv_uint(c, r->count);
	csv_ns_us(c, (int64_t)r->total_ns);
	csv_ns_us(c, (int64_t)r->self_ns);
	csv_ns_us(c, (int64_t)((r->total_ns + r->count / 2) / r->count));
	csv_ns_us(c, (int64_t)r->max_ns);
	csv_ns_us(c, (int64_t)r->min_ns);
	csv_end_row(c);
}

int out_ranges_write(struct out_ranges *o, const char *dir)
{
	if (!o->n) {
		char *stale = fs_join(dir, OUT_RANGES_FILE);
		if (stale)
			unlink(stale);
		free(stale);
		return stale ? 0 : -ENOMEM;
	}
	struct out_file f;
	struct csv c;
	int rc = out_file_open(&f, dir, OUT_RANGES_FILE);
	if (rc)
		return rc;
	qsort(o->v, o->n, sizeof *o->v, row_cmp);
	csv_init(&c, f.f);
	csv_header(&c, OUT_RANGES_HEADER);
	for (size_t i = 0; i < o->n; i++)
		write_row(&c, o->v[i]);
	return out_file_commit(&f, csv_finish(&c));
}

void out_ranges_free(struct out_ranges *o)
{
	for (size_t i = 0; i < o->n; i++)
		free(o->v[i]);
	for (size_t i = 0; i < o->nstrs; i++)
		free(o->strs[i]);
	free(o->v);
	free(o->strs);
	free(o->rows.slot);
	free(o->names.slot);
	memset(o, 0, sizeof *o);
}
