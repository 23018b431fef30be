#include "common/csv_out.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "common/bgwrite.h"
#include "common/copy.h"
#include "common/fsutil.h"
#include "common/json_out.h"
#include "common/scan.h"

/* A FILE is written by one thread only (its output's), so the stdio lock
 * is not needed: it was most of the cost of a field. Empties the buffer,
 * but for what a background writer carries over. */
static void flush_row(struct csv *c)
{
	if (c->bg) {
		c->out = bgw_swap(c->bg, c->out, &c->blen);
		return;
	}
	if (!c->f) {   /* nowhere to go: the row is lost, and said so */
		if (c->blen)
			fs_err_keep(&c->error, ENOBUFS);
		c->blen = 0;
		return;
	}
	int rc = c->blen ? fs_fwrite_direct(c->f, c->out, c->blen, &c->behind) : 0;
	if (rc)
		fs_err_keep(&c->error, -rc);
	c->blen = 0;
}

/* A block larger than the room a flush leaves: past the buffer to the
 * FILE, or through a background writer's buffers, which get every byte
 * in order. */
static void put_big(struct csv *c, const char *s, size_t n)
{
	if (!c->bg) {
		int rc = c->f ? fs_fwrite_direct(c->f, s, n, &c->behind) : -ENOBUFS;
		if (rc)
			fs_err_keep(&c->error, -rc);
		return;
	}
	while (n) {
		size_t k = c->cap - c->blen < n ? c->cap - c->blen : n;
		memcpy(c->out + c->blen, s, k);
		c->blen += k;
		s += k;
		n -= k;
		if (c->blen == c->cap)
			flush_row(c);
	}
}

/* Rows gather in c->out (a call per field was a fifth of writing a CSV). */
static inline void put(struct csv *c, const char *s, size_t n)
{
	if (c->blen + n > c->cap) {
		flush_row(c);
		if (c->blen + n > c->cap) {
			put_big(c, s, n);
			return;
		}
	}
	copy_short(c->out + c->blen, s, n);
	c->blen += n;
}

void csv_init(struct csv *c, FILE *f)
{
	memset(c, 0, sizeof *c);
	c->f = f;
	c->out = c->buf;
	c->cap = sizeof c->buf;
}

void csv_background(struct csv *c)
{
	char *big;
	if (!c->f || c->bg)
		return;
	c->bg = bgw_start(c->f, BGW_BUF, c->out, c->blen, &big);
	if (c->bg) {
		c->out = big;
		c->cap = BGW_BUF;
	}
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

/* Where a field of at most n bytes goes, its comma written: numbers are
 * formatted straight into the buffer, with one room check for the comma
 * and the field (2 % of a parse's instructions). The caller ends it with
 * field_end. */
static inline char *field_at(struct csv *c, size_t n)
{
	if (c->blen + n + 1 > c->cap)
		flush_row(c);
	char *p = c->out + c->blen;
	if (c->col++)
		*p++ = ',';
	return p;
}

static inline void field_end(struct csv *c, const char *end)
{
	c->blen = (size_t)(end - c->out);
}

static void field(struct csv *c, const char *s, size_t n)
{
	if (scan_csv_plain(s, n) == n) {
		put(c, s, n);
		return;
	}
	put(c, "\"", 1);
	const char *q;
	while ((q = memchr(s, '"', n)) != NULL) {
		size_t k = (size_t)(q - s) + 1;
		put(c, s, k);          /* through the quote ... */
		put(c, "\"", 1);       /* ... and once more */
		s += k;
		n -= k;
	}
	put(c, s, n);
	put(c, "\"", 1);
}

void csv_plain(struct csv *c, const char *s, size_t n)
{
	if (n > 64) {
		sep(c);
		put(c, s, n);
		return;
	}
	char *p = field_at(c, n);
	copy_short(p, s, n);
	field_end(c, p + n);
}

void csv_raw(struct csv *c, const void *p, size_t n)
{
	put(c, p, n);
}

void csv_strn(struct csv *c, const char *s, size_t n)
{
	sep(c);
	field(c, s, n);
}

/* The rest of a field that stopped at s[k], a comma, CR or LF, after k
 * bytes copied to d: quoted, in one more pass when no '"' follows (shapes
 * such as "[[64, 1024], [1024]]" are in most rows). 0: not done, the
 * general way must write it. */
static int quoted_rest(struct csv *c, char *d, const char *s, size_t k)
{
	if (s[k] == '"')
		return 0;
	memmove(d + 1, d, k);
	d[0] = '"';
	k += scan_copy(d + 1 + k, s + k, c->out + c->cap - 1, SCAN_QUOTE_NUL);
	if (s[k])
		return 0;   /* a quote to double, a page's end, or the buffer's */
	d[1 + k] = '"';
	c->blen += k + 2;
	return 1;
}

/* Most fields are names that need no quotes: copied while looked at, in
 * one pass where strlen, the scan and the copy made three. */
void csv_str(struct csv *c, const char *s)
{
	sep(c);
	if (!s)
		return;
	char *d = c->out + c->blen;
	size_t k = scan_csv_copy(d, s, c->out + c->cap);
	if (!s[k]) {
		c->blen += k;
		return;
	}
	if (k + 1 < c->cap - c->blen && quoted_rest(c, d, s, k))
		return;
	field(c, s, strlen(s));
}

void csv_int(struct csv *c, int64_t v)
{
	char *p = field_at(c, 21);
	field_end(c, p + jo_fmt_int(p, v));
}

void csv_uint(struct csv *c, uint64_t v)
{
	char *p = field_at(c, 21);
	field_end(c, p + jo_fmt_uint(p, v));
}

void csv_fixed(struct csv *c, double v, int decimals)
{
	char b[JO_FIXED_MAX];
	size_t n = isfinite(v) ? jo_fmt_fixed(b, v, decimals) : 0;
	sep(c);
	put(c, b, n);
}

void csv_ns_us(struct csv *c, int64_t ns)
{
	char *p = field_at(c, 23);
	field_end(c, p + jo_fmt_us3(p, ns));
}

void csv_end_row(struct csv *c)
{
	put(c, "\n", 1);
	c->col = 0;
	c->rows++;
}

const char *csv_take(struct csv *c, size_t *n)
{
	*n = c->blen;
	c->blen = 0;
	return c->out;
}

/* The FILE is the caller's again, after the first `keep` bytes waiting. */
static void stop_background(struct csv *c, size_t keep)
{
	if (!c->bg)
		return;
	int rc = bgw_stop(c->bg, keep);
	if (rc)
		fs_err_keep(&c->error, -rc);
	c->bg = NULL;
	c->out = c->buf;
	c->cap = sizeof c->buf;
	c->blen = 0;
}

void csv_abort(struct csv *c)
{
	stop_background(c, 0);
	c->blen = 0;
	fs_err_keep(&c->error, ECANCELED);
}

int csv_finish(struct csv *c)
{
	stop_background(c, c->blen);
	flush_row(c);
	errno = 0;
	if (c->f && (fflush(c->f) != 0 || ferror(c->f)))
		fs_err_keep(&c->error, errno);
	return -c->error;
}
