/* Aggregation by name, and the text helpers of prof stats' tables. */
#include "stats/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void stats_agg_init(struct stats_agg *a, int nmetrics)
{
	memset(a, 0, sizeof(*a));
	a->nmetrics = nmetrics < 1 ? 1 : nmetrics > STATS_METRICS ? STATS_METRICS : nmetrics;
}

static uint64_t hash_key(const char *name, const char *extra)
{
	uint64_t h = 1469598103934665603ull;    /* FNV-1a */
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	h = (h ^ 0xff) * 1099511628211ull;
	if (extra)
		for (const unsigned char *p = (const unsigned char *)extra; *p; p++)
			h = (h ^ *p) * 1099511628211ull;
	return h;
}

static int same_key(const struct stats_row *r, const char *name, const char *extra)
{
	if (strcmp(r->name, name) != 0)
		return 0;
	if (!r->extra || !extra)
		return !r->extra && !extra;
	return strcmp(r->extra, extra) == 0;
}

static int rehash(struct stats_agg *a, size_t nslots)
{
	size_t *slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -1;
	for (size_t i = 0; i < a->n; i++) {
		size_t s = hash_key(a->rows[i].name, a->rows[i].extra) & (nslots - 1);
		while (slots[s])
			s = (s + 1) & (nslots - 1);
		slots[s] = i + 1;
	}
	free(a->slots);
	a->slots = slots;
	a->nslots = nslots;
	return 0;
}

static char *dup_or_null(const char *s, int *fail)
{
	if (!s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		*fail = 1;
	return d;
}

int stats_agg_add(struct stats_agg *a, const char *name, const char *extra, uint64_t count,
		  const double *sum, const double *min, const double *max)
{
	if ((a->n + 1) * 2 > a->nslots) {
		size_t ns = 64;
		while (ns < (a->n + 1) * 2)
			ns *= 2;
		if (rehash(a, ns) != 0)
			return -1;
	}
	size_t s = hash_key(name, extra) & (a->nslots - 1);
	while (a->slots[s]) {
		struct stats_row *r = &a->rows[a->slots[s] - 1];
		if (same_key(r, name, extra)) {
			for (int m = 0; m < a->nmetrics; m++) {
				r->sum[m] += sum[m];
				if (min[m] < r->min[m])
					r->min[m] = min[m];
				if (max[m] > r->max[m])
					r->max[m] = max[m];
			}
			r->count += count;
			return 0;
		}
		s = (s + 1) & (a->nslots - 1);
	}
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		struct stats_row *rows = realloc(a->rows, cap * sizeof(*rows));
		if (!rows)
			return -1;
		a->rows = rows;
		a->cap = cap;
	}
	struct stats_row *r = &a->rows[a->n];
	memset(r, 0, sizeof(*r));
	int fail = 0;
	r->name = dup_or_null(name, &fail);
	r->extra = dup_or_null(extra, &fail);
	if (fail) {
		free(r->name);
		free(r->extra);
		return -1;
	}
	r->count = count;
	for (int m = 0; m < a->nmetrics; m++) {
		r->sum[m] = sum[m];
		r->min[m] = min[m];
		r->max[m] = max[m];
	}
	a->slots[s] = ++a->n;
	return 0;
}

int stats_agg_add1(struct stats_agg *a, const char *name, const char *extra, const double *v)
{
	return stats_agg_add(a, name, extra, 1, v, v, v);
}

double stats_row_avg(const struct stats_row *r, int metric)
{
	return r->count ? r->sum[metric] / (double)r->count : 0;
}

double stats_agg_total(const struct stats_agg *a, int metric)
{
	double t = 0;
	for (size_t i = 0; i < a->n; i++)
		t += a->rows[i].sum[metric];
	return t;
}

static enum stats_sort sort_key;
static int sort_metric;

static double key_of(const struct stats_row *r)
{
	switch (sort_key) {
	case STATS_SORT_AVG: return stats_row_avg(r, sort_metric);
	case STATS_SORT_MAX: return r->max[sort_metric];
	case STATS_SORT_MIN: return -r->min[sort_metric];
	case STATS_SORT_COUNT: return (double)r->count;
	case STATS_SORT_TOTAL: break;
	}
	return r->sum[sort_metric];
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct stats_row *a = pa, *b = pb;
	double ka = key_of(a), kb = key_of(b);
	if (ka != kb)
		return ka > kb ? -1 : 1;
	int c = strcmp(a->name, b->name);
	if (c)
		return c;
	return strcmp(a->extra ? a->extra : "", b->extra ? b->extra : "");
}

void stats_agg_sort(struct stats_agg *a, enum stats_sort key, int metric)
{
	sort_key = key;
	sort_metric = metric;
	if (a->n > 1)
		qsort(a->rows, a->n, sizeof(*a->rows), cmp_rows);
	/* the rows moved: index them again (or drop the index; stats_agg_add
	 * builds it anew) */
	if (a->nslots && rehash(a, a->nslots) != 0) {
		free(a->slots);
		a->slots = NULL;
		a->nslots = 0;
	}
}

void stats_agg_free(struct stats_agg *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->rows[i].name);
		free(a->rows[i].extra);
	}
	free(a->rows);
	free(a->slots);
	memset(a, 0, sizeof(*a));
}

/* ---- text helpers ---- */

size_t stats_text_width(const char *s)
{
	size_t w = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if ((*p & 0xc0) != 0x80)
			w++;
	return w;
}

/* Byte offset of the n-th code point of s (or its end). */
static size_t cp_offset(const char *s, size_t n)
{
	size_t i = 0;
	for (; s[i]; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80 && n-- == 0)
			break;
	return i;
}

char *stats_ellipsize(const char *s, size_t width, char *out, size_t outsz)
{
	size_t w = stats_text_width(s);
	if (outsz == 0)
		return out;
	if (w <= width) {
		snprintf(out, outsz, "%s", s);
		return out;
	}
	if (width == 0) {
		out[0] = '\0';
		return out;
	}
	size_t tail = (width - 1) / 2, head = width - 1 - tail;
	size_t hb = cp_offset(s, head);
	size_t tb = cp_offset(s, w - tail);
	snprintf(out, outsz, "%.*s\xe2\x80\xa6%s", (int)hb, s, s + tb);
	return out;
}

char *stats_fmt_num(double v, int decimals, int width, char *out, size_t outsz)
{
	if (isnan(v) || isinf(v)) {
		snprintf(out, outsz, "-");
		return out;
	}
	for (int d = decimals; d >= 0; d--) {
		int n = snprintf(out, outsz, "%.*f", d, v);
		if (n <= width)
			return out;
	}
	snprintf(out, outsz, "%.2e", v);
	return out;
}
