#include "common/csv_out.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "common/json_out.h"

static void put(struct csv *c, const char *s, size_t n)
{
	if (n && fwrite(s, 1, n, c->f) != n)
		c->error = 1;
}

void csv_init(struct csv *c, FILE *f)
{
	memset(c, 0, sizeof *c);
	c->f = f;
}

void csv_header(struct csv *c, const char *header)
{
	put(c, header, strlen(header));
	csv_end_row(c);
}

static void sep(struct csv *c)
{
	if (c->col++)
		put(c, ",", 1);
}

void csv_strn(struct csv *c, const char *s, size_t n)
{
	sep(c);
	int quote = 0;
	for (size_t i = 0; i < n && !quote; i++)
		quote = s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
	if (!quote) {
		put(c, s, n);
		return;
	}
	put(c, "\"", 1);
	size_t start = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '"')
			continue;
		put(c, s + start, i + 1 - start); /* through the quote ... */
		put(c, "\"", 1);                  /* ... and once more */
		start = i + 1;
	}
	put(c, s + start, n - start);
	put(c, "\"", 1);
}

void csv_str(struct csv *c, const char *s)
{
	csv_strn(c, s ? s : "", s ? strlen(s) : 0);
}

void csv_int(struct csv *c, int64_t v)
{
	char b[32];
	snprintf(b, sizeof b, "%" PRId64, v);
	csv_str(c, b);
}

void csv_uint(struct csv *c, uint64_t v)
{
	char b[32];
	snprintf(b, sizeof b, "%" PRIu64, v);
	csv_str(c, b);
}

void csv_fixed(struct csv *c, double v, int decimals)
{
	char b[64] = "";
	if (isfinite(v))
		snprintf(b, sizeof b, "%.*f", decimals, v);
	csv_str(c, b);
}

void csv_ns_us(struct csv *c, int64_t ns)
{
	char b[32];
	csv_str(c, jo_fmt_us3(b, ns));
}

void csv_end_row(struct csv *c)
{
	put(c, "\n", 1);
	c->col = 0;
	c->rows++;
}

int csv_finish(struct csv *c)
{
	if (fflush(c->f) != 0 || ferror(c->f))
		c->error = 1;
	return c->error ? -1 : 0;
}
