/* Aggregation by name, and the text helpers of prof stats' tables. */
#include "stats/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/nomem.h"

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
	case STATS_SORT_SELF:
		if (sort_metric + 1 < STATS_METRICS)
			return r->sum[sort_metric + 1];
		break;
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
		prof_nomem_recovered();   /* nothing lost: found by a walk */
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

/* Where the last qualifier of `s` (its first `len` bytes) ends: after the
 * last ": ", "::", "." or "/"; 0 when there is none. */
static size_t last_qualifier(const char *s, size_t len)
{
	size_t at = 0;
	for (size_t i = 0; i + 1 < len; i++) {
		if ((s[i] == ':' && (s[i + 1] == ' ' || s[i + 1] == ':')))
			at = i + 2;
		else if ((s[i] == '.' || s[i] == '/') && i > 0)
			at = i + 1;
	}
	return at < len ? at : 0;
}

/* The '(' opening a trailing argument list ("f<a>(int, g(x))"), or NULL
 * when the name does not end with one ("enumerate(DataLoader)#next"). */
static const char *args_open(const char *s, size_t len)
{
	if (!len || s[len - 1] != ')')
		return NULL;
	int depth = 0;
	for (size_t i = len; i-- > 0;) {
		depth += s[i] == ')';
		depth -= s[i] == '(';
		if (!depth)
			return s + i;
	}
	return NULL;
}

char *stats_cut_name(const char *s, size_t width, char *out, size_t outsz)
{
	if (stats_text_width(s) <= width || width < 8 || outsz == 0)
		return stats_ellipsize(s, width, out, outsz);
	/* a signature's arguments go first: "f(int, float)" -> "f(…)" */
	size_t len = strlen(s);
	const char *paren = args_open(s, len);
	if (paren && paren > s) {
		len = (size_t)(paren - s);
		char buf[512];
		snprintf(buf, sizeof buf, "%.*s(\xe2\x80\xa6)", (int)len, s);
		if (stats_text_width(buf) <= width)
			return stats_ellipsize(buf, width, out, outsz);
	}
	/* then the qualifiers' head: the last name tells siblings apart */
	size_t q = last_qualifier(s, len);
	char part[512];
	snprintf(part, sizeof part, "%.*s", (int)len, s);
	size_t tail_w = stats_text_width(part + q);
	if (q && tail_w + 1 <= width) {
		size_t head = width - 1 - tail_w;
		snprintf(out, outsz, "%.*s\xe2\x80\xa6%s", (int)cp_offset(part, head), part,
			 part + q);
		return out;
	}
	return stats_ellipsize(part, width, out, outsz);
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
