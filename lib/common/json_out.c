#include "common/json_out.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "common/bgwrite.h"
#include "common/copy.h"
#include "common/fsutil.h"
#include "common/scan.h"

typedef void (*jo_sink)(void *ctx, const char *s, size_t n);

static void sink_sb(void *ctx, const char *s, size_t n) { sb_add(ctx, s, n); }

/* Empties the buffer, but for what a background writer carries over. */
static void flush_buf(struct jo *j)
{
	if (j->bg) {
		j->out = bgw_swap(j->bg, j->out, &j->blen);
		return;
	}
	int rc = 0;
	if (!j->f)
		sb_add(j->sb, j->out, j->blen);
	else if (j->blen)
		rc = fs_fwrite_direct(j->f, j->out, j->blen, &j->behind);
	if (rc)
		fs_err_keep(&j->error, -rc);
	j->blen = 0;
}

/* Through the buffer whatever the size, so that a background writer gets
 * every byte in order. */
static void sink_file(void *ctx, const char *s, size_t n)
{
	struct jo *j = ctx;
	while (n) {
		if (j->blen == j->cap)
			flush_buf(j);
		size_t k = j->cap - j->blen < n ? j->cap - j->blen : n;
		memcpy(j->out + j->blen, s, k);
		j->blen += k;
		s += k;
		n -= k;
	}
}

static inline void put(struct jo *j, const char *s, size_t n)
{
	if (j->f) {
		if (__builtin_expect(j->blen + n <= j->cap, 1)) {
			copy_short(j->out + j->blen, s, n);
			j->blen += n;
		} else {
			sink_file(j, s, n);
		}
	} else {
		sb_add(j->sb, s, n);
	}
}

static void puts_(struct jo *j, const char *s) { put(j, s, strlen(s)); }

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid.
 * Rejects overlong forms, surrogates and code points above U+10FFFF. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;
	if (c >= 0xc2 && c <= 0xdf) len = 2;
	else if (c >= 0xe0 && c <= 0xef) len = 3;
	else if (c >= 0xf0 && c <= 0xf4) len = 4;
	else return 0;
	if (n < len)
		return 0;
	if (c == 0xe0) lo = 0xa0;
	if (c == 0xed) hi = 0x9f;
	if (c == 0xf0) lo = 0x90;
	if (c == 0xf4) hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

static const char *short_escape(unsigned char c)
{
	switch (c) {
	case '"': return "\\\"";
	case '\\': return "\\\\";
	case '\n': return "\\n";
	case '\r': return "\\r";
	case '\t': return "\\t";
	default: return NULL;
	}
}

/* Bytes that escape_to must look at: controls, '"', '\\' and non-ASCII. */
static const unsigned char special[256] = {
	[0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1, [0x06] = 1,
	[0x07] = 1, [0x08] = 1, [0x09] = 1, [0x0a] = 1, [0x0b] = 1, [0x0c] = 1, [0x0d] = 1,
	[0x0e] = 1, [0x0f] = 1, [0x10] = 1, [0x11] = 1, [0x12] = 1, [0x13] = 1, [0x14] = 1,
	[0x15] = 1, [0x16] = 1, [0x17] = 1, [0x18] = 1, [0x19] = 1, [0x1a] = 1, [0x1b] = 1,
	[0x1c] = 1, [0x1d] = 1, [0x1e] = 1, [0x1f] = 1, ['"'] = 1, ['\\'] = 1,
	[0x80 ... 0xff] = 1,
};

static void escape_to(jo_sink out, void *ctx, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t run = 0, i = 0;
	while (i < n) {
		/* the common case: a stretch of plain ASCII */
		if (!special[s[i]]) {
			size_t k = i + 1;
			while (k < n && !special[s[k]])
				k++;
			run += k - i;
			i = k;
			continue;
		}
		unsigned char c = s[i];
		size_t len = 1;
		const char *esc = NULL;
		char ubuf[8];
		if (c >= 0x80) {
			len = utf8_len(s + i, n - i);
			if (!len) {
				esc = "\\ufffd";
				len = 1;
			}
		} else if ((esc = short_escape(c)) == NULL && c < 0x20) {
			snprintf(ubuf, sizeof ubuf, "\\u%04x", c);
			esc = ubuf;
		}
		if (esc) {
			out(ctx, str + i - run, run);
			out(ctx, esc, strlen(esc));
			run = 0;
		} else {
			run += len;
		}
		i += len;
	}
	out(ctx, str + i - run, run);
}

/* Writes `s` (n bytes) escaped: straight into the buffer when it needs no
 * escaping and fits. */
static void put_escaped(struct jo *j, const char *s, size_t n)
{
	size_t plain = scan_json_plain(s, n);
	put(j, s, plain);
	if (plain == n)
		return;
	s += plain;
	n -= plain;
	if (j->f)
		escape_to(sink_file, j, s, n);
	else
		escape_to(sink_sb, j->sb, s, n);
}

void jo_escape(struct strbuf *sb, const char *s, size_t n)
{
	escape_to(sink_sb, sb, s, n);
}

void jo_init_file(struct jo *j, FILE *f, int line_depth)
{
	memset(j, 0, sizeof *j);
	j->f = f;
	j->out = j->buf;
	j->cap = JO_BUF;
	j->line_depth = line_depth;
}

void jo_background(struct jo *j)
{
	char *big;
	if (!j->f || j->bg)
		return;
	j->bg = bgw_start(j->f, BGW_BUF, j->out, j->blen, &big);
	if (j->bg) {
		j->out = big;
		j->cap = BGW_BUF;
	}
}

void jo_init_sb(struct jo *j, struct strbuf *sb, int line_depth)
{
	memset(j, 0, sizeof *j);
	j->sb = sb;
	j->out = j->buf;   /* only for items written in place */
	j->cap = JO_BUF;
	j->line_depth = line_depth;
}

void jo_tight(struct jo *j) { j->tight = 1; }

/* The separator after a key: ": " unless the key is inside a tight line. */
static inline size_t key_sep_len(const struct jo *j)
{
	return j->tight && j->depth > j->line_depth ? 2 : 3;
}

static void put_cstr_escaped(struct jo *j, const char *s)
{
	put_escaped(j, s, strlen(s));
}

#define JO_SPACES "                                "   /* 32: the deepest indent */

/* A new line's separator: the comma (left out from sep_nl + 1), newline
 * and indent, as one piece. */
static const char sep_nl[] = ",\n" JO_SPACES;

/* Its length at depth d, after `had` items (0 or 1) at that depth. */
static inline size_t sep_nl_len(size_t had, int d)
{
	return had + 1 + (size_t)(d * 2 < 32 ? d * 2 : 32);
}

static void newline(struct jo *j, int depth)
{
	put(j, sep_nl + 1, sep_nl_len(0, depth));
}

/* Separator before a new item (key or value) at the current depth. */
static void before_item_slow(struct jo *j)
{
	int d = j->depth;
	if (d <= 0)
		return;
	unsigned char *c = &j->count[d - 1];
	size_t had = *c != 0;
	if (d <= j->line_depth)
		put(j, sep_nl + 1 - had, sep_nl_len(had, d));
	else if (had)
		put(j, ", ", 2u - j->tight);
	if (*c < 255)
		(*c)++;
}

/* Inlined for the common case, an item inside a one-line object (an event's
 * keys): a call per item was a tenth of writing a trace. */
static inline void before_item(struct jo *j)
{
	if (j->after_key) {
		j->after_key = 0;
		return;
	}
	int d = j->depth;
	if (d > j->line_depth) {
		unsigned char *c = &j->count[d - 1];
		if (*c) {
			put(j, ", ", 2u - j->tight);
			if (*c < 255)
				(*c)++;
		} else {
			*c = 1;
		}
		return;
	}
	before_item_slow(j);
}

static void open_(struct jo *j, char c)
{
	before_item(j);
	put(j, &c, 1);
	if (j->depth >= JO_MAX_DEPTH) {
		fs_err_keep(&j->error, EINVAL);
		return;
	}
	j->count[j->depth++] = 0;
}

static void close_(struct jo *j, char c)
{
	if (j->depth <= 0) {
		fs_err_keep(&j->error, EINVAL);
		return;
	}
	int had = j->count[--j->depth];
	if (had && j->depth + 1 <= j->line_depth)
		newline(j, j->depth);
	put(j, &c, 1);
}

void jo_obj_begin(struct jo *j) { open_(j, '{'); }
void jo_obj_end(struct jo *j) { close_(j, '}'); }
void jo_arr_begin(struct jo *j) { open_(j, '['); }
void jo_arr_end(struct jo *j) { close_(j, ']'); }

void (jo_key)(struct jo *j, const char *key)
{
	before_item(j);
	put(j, "\"", 1);
	put_cstr_escaped(j, key);
	put(j, "\": ", key_sep_len(j));
	j->after_key = 1;
}

void jo_key_plain(struct jo *j, const char *key, size_t n)
{
	before_item(j);
	size_t sep = key_sep_len(j);
	if (j->f && j->blen + n + 4 <= j->cap) {
		char *d = j->out + j->blen;
		d[0] = '"';
		memcpy(d + 1, key, n);
		memcpy(d + 1 + n, "\": ", 3);
		j->blen += n + 1 + sep;
	} else {
		put(j, "\"", 1);
		put(j, key, n);
		put(j, "\": ", sep);
	}
	j->after_key = 1;
}

void jo_strn(struct jo *j, const char *s, size_t n)
{
	before_item(j);
	put(j, "\"", 1);
	put_escaped(j, s, n);
	put(j, "\"", 1);
}

void jo_str(struct jo *j, const char *s)
{
	if (!s) {
		jo_null(j);
		return;
	}
	before_item(j);
	put(j, "\"", 1);
	put_cstr_escaped(j, s);
	put(j, "\"", 1);
}

void jo_raw(struct jo *j, const char *json)
{
	before_item(j);
	puts_(j, json);
}

const char jo_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* Four digits of v < 10000 at d, as two pairs. */
static inline void four(char *d, unsigned v)
{
	memcpy(d, jo_pairs + 2 * (v / 100), 2);
	memcpy(d + 2, jo_pairs + 2 * (v % 100), 2);
}

/* Writes v in decimal ending just before `end`; returns where it begins.
 * (snprintf was most of the cost of writing a large trace.) Four digits
 * a step, each two pairs whose divisions do not wait on each other: the
 * chain of divisions, a pair a step, was the cost of a time's 8 to 13
 * digits. */
static char *digits(char *end, uint64_t v)
{
	while (v > UINT32_MAX) {
		end -= 4;
		four(end, (unsigned)(v % 10000));
		v /= 10000;
	}
	/* the rest in 32 bits: cheaper divisions, and most numbers are here */
	uint32_t w = (uint32_t)v;
	while (w >= 10000) {
		end -= 4;
		four(end, w % 10000);
		w /= 10000;
	}
	if (w >= 100) {
		end -= 2;
		memcpy(end, jo_pairs + 2 * (w % 100), 2);
		w /= 100;
	}
	if (w >= 10) {
		end -= 2;
		memcpy(end, jo_pairs + 2 * w, 2);
	} else {
		*--end = (char)('0' + w);
	}
	return end;
}

static uint64_t magnitude(int64_t v)
{
	return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

/* Where to format a number (jo_fmt_*: at most 22 bytes and a NUL):
 * straight in the buffer when it has room, else in `spare`. */
static inline char *room(struct jo *j, char *spare)
{
	return j->f && j->blen + 32 <= j->cap ? j->out + j->blen : spare;
}

/* The n bytes formatted at d: already in place, or put from the spare. */
static inline void formatted(struct jo *j, const char *d, size_t n)
{
	if (j->f && d == j->out + j->blen)
		j->blen += n;
	else
		put(j, d, n);
}

void jo_int(struct jo *j, int64_t v)
{
	before_item(j);
	char b[32], *d = room(j, b);
	formatted(j, d, jo_fmt_int(d, v));
}

void jo_uint(struct jo *j, uint64_t v)
{
	before_item(j);
	char b[32], *d = room(j, b);
	formatted(j, d, jo_fmt_uint(d, v));
}

void jo_bool(struct jo *j, int v) { jo_raw(j, v ? "true" : "false"); }
void jo_null(struct jo *j) { jo_raw(j, "null"); }

void jo_fixed(struct jo *j, double v, int decimals)
{
	if (!isfinite(v)) {
		jo_null(j);
		return;
	}
	before_item(j);
	char b[JO_FIXED_MAX], *d = j->f && j->blen + sizeof b <= j->cap ? j->out + j->blen : b;
	formatted(j, d, jo_fmt_fixed(d, v, decimals));
}

static const uint64_t tens[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
	100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
	10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
	100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
};

/* Decimal digits of v: log10 from the bit length (1233/4096 ~ log10(2)),
 * one less below the power of ten it guessed. */
static unsigned ndigits(uint64_t v)
{
	unsigned t = ((64u - (unsigned)__builtin_clzll(v | 1)) * 1233u) >> 12;
	return t + 1 - ((v | 1) < tens[t]);
}

/* |v| * 10^decimals rounded to an integer as printf rounds it: half to even
 * on v's exact binary value (v = m * 2^ex). 0 when it cannot say (|v| of
 * 2^53 and more): the caller asks printf. */
static int fixed_scaled(double v, int decimals, unsigned __int128 *q)
{
	uint64_t bits;
	memcpy(&bits, &v, sizeof bits);
	int bexp = (int)(bits >> 52 & 0x7ff);
	uint64_t m = bits & ((1ull << 52) - 1);
	int ex = bexp ? bexp - 1075 : -1074;
	if (bexp)
		m |= 1ull << 52;
	if (ex > 0)
		return 0;
	unsigned __int128 x = (unsigned __int128)m * tens[decimals];
	unsigned sh = (unsigned)-ex;
	if (sh >= 120) {   /* x < 2^83: below half of the last place */
		*q = 0;
		return 1;
	}
	unsigned __int128 r = x >> sh, rem = x - (r << sh), half = sh ? (unsigned __int128)1 << (sh - 1) : 0;
	if (sh && (rem > half || (rem == half && (r & 1))))
		r++;
	*q = r;
	return 1;
}

size_t jo_fmt_fixed(char *b, double v, int decimals)
{
	unsigned __int128 q;
	if (decimals < 0 || decimals > 9 || !isfinite(v) || !fixed_scaled(v, decimals, &q)) {
		int n = snprintf(b, JO_FIXED_MAX, "%.*f", decimals, v);
		return n < 0 ? 0 : (size_t)n < JO_FIXED_MAX ? (size_t)n : JO_FIXED_MAX - 1;
	}
	/* q < 2^53 * 10^9: its whole part fits 64 bits */
	uint64_t p = tens[decimals], whole, frac;
	if (q >> 64) {
		whole = (uint64_t)(q / p);
		frac = (uint64_t)(q % p);
	} else {   /* 64-bit division: a tenth of the time */
		whole = (uint64_t)q / p;
		frac = (uint64_t)q % p;
	}
	size_t n = 0;
	if (signbit(v))
		b[n++] = '-';
	n += jo_fmt_uint(b + n, whole);
	if (decimals) {
		b[n++] = '.';
		for (int i = decimals - 1; i >= 0; i--, frac /= 10)
			b[n + (size_t)i] = (char)('0' + frac % 10);
		n += (size_t)decimals;
	}
	b[n] = '\0';
	return n;
}

/* 10 ms and more, or negative. */
size_t jo_fmt_us3_long(char *buf, int64_t ns)
{
	/* Through the unsigned magnitude so INT64_MIN does not overflow;
	 * written in place, from the end: a copy per number was a tenth of
	 * formatting a trace. */
	uint64_t m = magnitude(ns), q = m / 1000;
	unsigned frac = (unsigned)(m - q * 1000);
	size_t sign = ns < 0, whole = ndigits(q), n = sign + whole + 4;
	char *end = buf + n;
	*end = '\0';
	memcpy(end - 2, jo_pairs + 2 * (frac % 100), 2);
	end[-3] = (char)('0' + frac / 100);
	end[-4] = '.';
	digits(end - 4, q);
	if (sign)
		buf[0] = '-';
	return n;
}

void jo_ns_us(struct jo *j, int64_t ns)
{
	before_item(j);
	char b[32], *d = room(j, b);
	formatted(j, d, jo_fmt_us3(d, ns));
}

static void jo_number(struct jo *j, double d)
{
	char b[64];
	if (!isfinite(d)) {
		jo_null(j);
		return;
	}
	if (d == (double)(int64_t)d && d > -9007199254740992.0 && d < 9007199254740992.0)
		snprintf(b, sizeof b, "%" PRId64, (int64_t)d);
	else
		snprintf(b, sizeof b, "%.17g", d);
	jo_raw(j, b);
}

void jo_cjson(struct jo *j, const cJSON *v)
{
	const cJSON *c;
	if (cJSON_IsObject(v)) {
		jo_obj_begin(j);
		for (c = v->child; c; c = c->next) {
			jo_key(j, c->string ? c->string : "");
			jo_cjson(j, c);
		}
		jo_obj_end(j);
	} else if (cJSON_IsArray(v)) {
		jo_arr_begin(j);
		for (c = v->child; c; c = c->next)
			jo_cjson(j, c);
		jo_arr_end(j);
	} else if (cJSON_IsString(v)) {
		jo_str(j, v->valuestring);
	} else if (cJSON_IsNumber(v)) {
		jo_number(j, v->valuedouble);
	} else if (cJSON_IsBool(v)) {
		jo_bool(j, cJSON_IsTrue(v));
	} else if (cJSON_IsRaw(v)) {
		jo_raw(j, v->valuestring);
	} else {
		jo_null(j);
	}
}


/* Most integers of a trace are below 100 (devices, streams, block sizes,
 * flags): those skip the digit count and the loop. */
static inline size_t small_uint(char *b, unsigned v)
{
	if (v < 10) {
		b[0] = (char)('0' + v);
		return 1;
	}
	memcpy(b, jo_pairs + 2 * v, 2);
	return 2;
}

size_t jo_fmt_uint(char *b, uint64_t v)
{
	if (v < 100)
		return small_uint(b, (unsigned)v);
	size_t n = ndigits(v);
	digits(b + n, v);
	return n;
}

size_t jo_fmt_int(char *b, int64_t v)
{
	if (v >= 0 && v < 100)
		return small_uint(b, (unsigned)v);
	size_t sign = v < 0, n = sign + ndigits(magnitude(v));
	digits(b + n, magnitude(v));
	if (sign)
		b[0] = '-';
	return n;
}

/* The separators of an event head, loose (", ", ": ") and tight, each
 * in 16 bytes: put with one fixed-size copy (the bytes past its end are
 * written over next), not a call to memcpy per separator. */
enum { H_PH, H_CAT, H_NAME, H_NONAME, H_PID, H_TID, H_TS, H_N };
struct sep { char s[16]; unsigned char n; };
#define H(s) { s, sizeof(s) - 1 }
static const struct sep head_sep[2][H_N] = {
	{ H("{\"ph\": \""), H("\", \"cat\": \""), H("\", \"name\": \""), H("\", \"name\": null"),
	  H(", \"pid\": "), H(", \"tid\": "), H(", \"ts\": ") },
	{ H("{\"ph\":\""), H("\",\"cat\":\""), H("\",\"name\":\""), H("\",\"name\":null"),
	  H(",\"pid\":"), H(",\"tid\":"), H(",\"ts\":") },
};
#undef H

static inline char *sep_at(char *p, const struct sep *s)
{
	memcpy(p, s->s, sizeof s->s);
	return p + s->n;
}

/* Apart, so that the common case below needs no stack frame. */
static __attribute__((noinline)) char *item_at_slow(struct jo *j)
{
	before_item(j);
	return jo_room(j, j->out + j->blen);
}

/* An item on a line of its own (a trace's event): its comma, newline and
 * indent with one 16-byte copy where before_item_slow's put took a tenth
 * of writing the line. */
char *jo_item_at(struct jo *j)
{
	int d = j->depth;
	char *p = j->out + j->blen;
	if (j->after_key || d <= 0 || d > j->line_depth || d > 7 ||
	    (size_t)(j->out + j->cap - p) < JO_ROOM)
		return item_at_slow(j);
	unsigned char *c = &j->count[d - 1];
	size_t had = *c != 0;
	memcpy(p, sep_nl + 1 - had, 16);
	*c += *c < 255;
	return p + sep_nl_len(had, d);
}

char *jo_room_slow(struct jo *j, char *p)
{
	j->blen = (size_t)(p - j->out);
	flush_buf(j);
	return j->out + j->blen;
}

/* The rest of a string the fast way could not take, through the writer. */
static char *escaped_rest(struct jo *j, char *p, const char *s, size_t n)
{
	j->blen = (size_t)(p - j->out);
	if (!j->f)
		flush_buf(j);
	put_escaped(j, s, n);
	return jo_room(j, j->out + j->blen);
}

char *jo_cstr_rest(struct jo *j, char *p, const char *s)
{
	return escaped_rest(j, p, s, strlen(s));
}

char *jo_strn_at(struct jo *j, char *p, const char *s, size_t n)
{
	if (scan_json_plain(s, n) == n && n <= (size_t)(j->out + j->cap - p) - JO_ROOM) {
		copy_short(p, s, n);
		return p + n;
	}
	return escaped_rest(j, p, s, n);
}

char *jo_raw_at(struct jo *j, char *p, const char *s)
{
	size_t n = strlen(s);
	if (n <= (size_t)(j->out + j->cap - p) - JO_ROOM) {
		copy_short(p, s, n);
		return p + n;
	}
	j->blen = (size_t)(p - j->out);
	if (!j->f)
		flush_buf(j);
	put(j, s, n);
	return jo_room(j, j->out + j->blen);
}

char *jo_event_at(struct jo *j, char *p, char ph, const char *cat, const char *name,
		  int64_t pid, int64_t tid, int64_t ts_ns)
{
	const struct sep *h = head_sep[j->tight != 0];
	p = sep_at(p, &h[H_PH]);
	*p++ = ph;
	if (cat)
		p = jo_cstr_at(j, sep_at(p, &h[H_CAT]), cat);
	if (name) {
		p = jo_cstr_at(j, sep_at(p, &h[H_NAME]), name);
		*p++ = '"';
	} else {
		p = sep_at(p, &h[H_NONAME]);
	}
	p = sep_at(p, &h[H_PID]);
	p += jo_fmt_int(p, pid);
	p = sep_at(p, &h[H_TID]);
	p += jo_fmt_int(p, tid);
	p = sep_at(p, &h[H_TS]);
	return p + jo_fmt_us3(p, ts_ns);
}

/* What jo_obj_begin and the six jo_k* calls write, the separators known
 * in advance: each call's state check was a fifth of writing a trace. */
void jo_event_head(struct jo *j, const char *ph, const char *cat, const char *name,
		   int64_t pid, int64_t tid, int64_t ts_ns)
{
	if (j->depth + 1 <= j->line_depth || j->depth >= JO_MAX_DEPTH || !ph[0] || ph[1]) {
		/* a layout with one key per line: the general way */
		jo_obj_begin(j);
		jo_kstr(j, "ph", ph);
		if (cat)
			jo_kstr(j, "cat", cat);
		jo_kstr(j, "name", name);
		jo_kint(j, "pid", pid);
		jo_kint(j, "tid", tid);
		jo_kns_us(j, "ts", ts_ns);
		return;
	}
	char *p = jo_item_at(j);
	jo_item_end(j, jo_event_at(j, p, ph[0], cat, name, pid, tid, ts_ns));
	j->count[j->depth++] = cat ? 6 : 5;
}

void jo_abort(struct jo *j)
{
	if (j->bg)
		bgw_stop(j->bg, 0);
	j->bg = NULL;
	j->out = j->buf;
	j->cap = JO_BUF;
	j->blen = 0;
	fs_err_keep(&j->error, ECANCELED);
}

int jo_finish(struct jo *j)
{
	if (j->depth != 0)
		fs_err_keep(&j->error, EINVAL);
	if (j->f) {
		if (j->bg) {
			int rc = bgw_stop(j->bg, j->blen);
			if (rc)
				fs_err_keep(&j->error, -rc);
			j->bg = NULL;
			j->out = j->buf;
			j->cap = JO_BUF;
			j->blen = 0;
		}
		flush_buf(j);
		errno = 0;
		if (fflush(j->f) != 0 || ferror(j->f))
			fs_err_keep(&j->error, errno);
	} else if (j->sb->oom) {
		fs_err_keep(&j->error, ENOMEM);
	}
	return -j->error;
}
