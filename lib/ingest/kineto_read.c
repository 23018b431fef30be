#include "ingest/kineto_read.h"

#include "common/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct scan {
	char *p, *end;
	int bad;
	int keep;     /* strings passed over, not unescaped: the text is kept */
	const char *base;
};

static void ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t'))
		s->p++;
}

static int lit(struct scan *s, char c)
{
	ws(s);
	if (s->p < s->end && *s->p == c) {
		s->p++;
		return 1;
	}
	return 0;
}

static int fail(struct scan *s)
{
	s->bad = 1;
	return -1;
}

static int hex4(const char *p, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			v |= (unsigned)((c | 0x20) - 'a' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

/* \uXXXX (and its low surrogate) at s->p, past the 'u', as UTF-8 at *w:
 * never longer than what it replaces. */
static int unicode(struct scan *s, char **w)
{
	unsigned cp, lo;
	if (s->end - s->p < 4 || hex4(s->p, &cp))
		return -1;
	s->p += 4;
	if (cp >= 0xD800 && cp < 0xDC00 && s->end - s->p >= 6 && s->p[0] == '\\' &&
	    s->p[1] == 'u' && hex4(s->p + 2, &lo) == 0 && lo >= 0xDC00 && lo < 0xE000) {
		cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
		s->p += 6;
	} else if (cp >= 0xD800 && cp < 0xE000) {
		cp = '?';   /* a lone surrogate: not a character */
	}
	char *o = *w;
	if (cp < 0x80) {
		*o++ = (char)cp;
	} else if (cp < 0x800) {
		*o++ = (char)(0xC0 | cp >> 6);
		*o++ = (char)(0x80 | (cp & 0x3F));
	} else if (cp < 0x10000) {
		*o++ = (char)(0xE0 | cp >> 12);
		*o++ = (char)(0x80 | (cp >> 6 & 0x3F));
		*o++ = (char)(0x80 | (cp & 0x3F));
	} else {
		*o++ = (char)(0xF0 | cp >> 18);
		*o++ = (char)(0x80 | (cp >> 12 & 0x3F));
		*o++ = (char)(0x80 | (cp >> 6 & 0x3F));
		*o++ = (char)(0x80 | (cp & 0x3F));
	}
	*w = o;
	return 0;
}

/* The string at s->p, unescaped in place and NUL-ended (the NUL takes
 * the place of its closing quote or earlier); NULL if there is none. */
static char *str(struct scan *s)
{
	ws(s);
	if (s->p >= s->end || *s->p != '"')
		return fail(s), NULL;
	char *r = ++s->p, *w = r;
	while (s->keep && s->p < s->end) {
		char c = *s->p++;
		if (c == '"')
			return r;
		if (c == '\\' && s->p < s->end)
			s->p++;   /* \uXXXX's digits are plain characters */
	}
	while (!s->keep && s->p < s->end) {
		char c = *s->p++;
		if (c == '"') {
			*w = '\0';
			return r;
		}
		if (c != '\\') {
			*w++ = c;
			continue;
		}
		if (s->p >= s->end)
			break;
		c = *s->p++;
		switch (c) {
		case 'n': *w++ = '\n'; break;
		case 't': *w++ = '\t'; break;
		case 'r': *w++ = '\r'; break;
		case 'b': *w++ = '\b'; break;
		case 'f': *w++ = '\f'; break;
		case 'u':
			if (unicode(s, &w))
				return fail(s), NULL;
			break;
		default: *w++ = c; break;   /* \" \\ \/ */
		}
	}
	return fail(s), NULL;
}

/* A number as integer nanoseconds when it counts microseconds (scale
 * 1000) or as an integer (scale 1): digits past what the scale keeps are
 * dropped, an exponent is refused (Kineto writes none). */
static int num(struct scan *s, int64_t scale, int64_t *out)
{
	ws(s);
	int neg = s->p < s->end && *s->p == '-';
	s->p += neg;
	const char *d0 = s->p;
	int64_t v = 0;
	while (s->p < s->end && *s->p >= '0' && *s->p <= '9' && v < INT64_MAX / 10 / scale)
		v = v * 10 + (*s->p++ - '0');
	if (s->p == d0 || (s->p < s->end && *s->p >= '0' && *s->p <= '9'))
		return fail(s);
	v *= scale;
	if (s->p < s->end && *s->p == '.') {
		s->p++;
		for (int64_t unit = scale / 10; s->p < s->end && *s->p >= '0' && *s->p <= '9'; unit /= 10)
			v += (*s->p++ - '0') * unit;
	}
	if (s->p < s->end && (*s->p == 'e' || *s->p == 'E'))
		return fail(s);
	*out = neg ? -v : v;
	return 0;
}

/* Past one value of any kind. Nesting is counted, not recursed into. */
static int skip(struct scan *s)
{
	int depth = 0;
	do {
		ws(s);
		if (s->p >= s->end)
			return fail(s);
		char c = *s->p;
		if (c == '"') {
			if (!str(s))
				return -1;
		} else if (c == '{' || c == '[') {
			depth++;
			s->p++;
		} else if (c == '}' || c == ']') {
			if (--depth < 0)
				return fail(s);
			s->p++;
		} else if (c == ',' || c == ':') {
			if (!depth)
				return fail(s);
			s->p++;
		} else {
			const char *b = s->p;
			while (s->p < s->end && !strchr(" \t\r\n,:]}", *s->p))
				s->p++;
			if (s->p == b)
				return fail(s);
		}
	} while (depth > 0);
	return 0;
}

/* The members of the object at s->p: each key handed to `member`, which
 * reads (or skips) its value. Commas before a closing brace are taken. */
static int object(struct scan *s, int (*member)(struct scan *, const char *, void *), void *arg)
{
	if (!lit(s, '{'))
		return fail(s);
	while (!lit(s, '}')) {
		const char *k = str(s);
		if (!k || !lit(s, ':') || member(s, k, arg))
			return fail(s);
		if (!lit(s, ',')) {
			if (!lit(s, '}'))
				return fail(s);
			break;
		}
	}
	return 0;
}

/* A value passed over with its text left as it is: *at and *len. */
static int keep_text(struct scan *s, uint32_t *at, uint32_t *len, const char *base)
{
	ws(s);
	const char *b = s->p;
	s->keep = 1;
	int rc = skip(s);
	s->keep = 0;
	*at = (uint32_t)(b - base);
	*len = (uint32_t)(s->p - b);
	return rc;
}

struct event {
	struct kineto_op op;
	int x, cat, ts;
	const char *base;     /* the buffer: kept texts are offsets into it */
};

static int arg_member(struct scan *s, const char *k, void *arg)
{
	struct event *e = arg;
	struct kineto_op *op = &e->op;
	if (strcmp(k, "Sequence number") == 0)
		return num(s, 1, &op->seq);
	if (strcmp(k, "Fwd thread id") == 0)
		return num(s, 1, &op->fwd_tid);
	if (strcmp(k, "Input Dims") == 0)
		return keep_text(s, &op->shapes_at, &op->shapes_len, e->base);
	if (strcmp(k, "Input type") == 0)
		return keep_text(s, &op->types_at, &op->types_len, e->base);
	return skip(s);
}

static int event_member(struct scan *s, const char *k, void *arg)
{
	struct event *e = arg;
	const char *v;
	switch (k[0]) {
	case 'p':
		if (strcmp(k, "ph") == 0)
			return (v = str(s)) ? (e->x = strcmp(v, "X") == 0, 0) : -1;
		break;
	case 'c':
		if (strcmp(k, "cat") == 0) {
			if (!(v = str(s)))
				return -1;
			e->op.user = strcmp(v, "user_annotation") == 0;
			e->cat = e->op.user || strcmp(v, "cpu_op") == 0;
			return 0;
		}
		break;
	case 'n':
		if (strcmp(k, "name") == 0)
			return (e->op.name = str(s)) ? 0 : -1;
		break;
	case 't':
		if (strcmp(k, "ts") == 0)
			return e->ts = 1, num(s, 1000, &e->op.start_ns);
		if (strcmp(k, "tid") == 0) {
			ws(s);   /* a span's tid is a string: not an operator's */
			return s->p < s->end && *s->p == '"' ? skip(s) : num(s, 1, &e->op.tid);
		}
		break;
	case 'd':
		if (strcmp(k, "dur") == 0)
			return num(s, 1000, &e->op.dur_ns);
		break;
	case 'a':
		if (strcmp(k, "args") == 0)
			return object(s, arg_member, e);
		break;
	}
	return skip(s);
}

static int push(struct kineto_ops *o, const struct kineto_op *op)
{
	struct kineto_op *v = grow_room(o->v, o->n, &o->cap, sizeof *v);
	if (!v)
		return -ENOMEM;
	o->v = v;
	o->v[o->n++] = *op;
	return 0;
}

static int events(struct scan *s, struct kineto_ops *out)
{
	if (!lit(s, '['))
		return fail(s);
	while (!lit(s, ']')) {
		struct event e = { .op = { .seq = -1 }, .base = s->base };
		if (object(s, event_member, &e))
			return -1;
		if (e.x && e.cat && e.ts && e.op.name && e.op.dur_ns >= 0) {
			if (e.op.tid < 0)
				e.op.tid = -e.op.tid;
			if (push(out, &e.op))
				return -ENOMEM;
		} else {
			out->skipped++;
		}
		if (!lit(s, ',')) {
			if (!lit(s, ']'))
				return fail(s);
			break;
		}
	}
	return 0;
}

struct top {
	struct kineto_ops *out;
	int rc;
};

static int top_member(struct scan *s, const char *k, void *arg)
{
	struct top *t = arg;
	if (strcmp(k, "traceEvents") != 0)
		return skip(s);
	t->rc = events(s, t->out);
	return t->rc;
}

int kineto_read(char *buf, size_t len, struct kineto_ops *out, size_t *at)
{
	struct scan s = { .p = buf, .end = buf + len, .base = buf };
	struct top t = { .out = out };
	out->buf = buf;
	int rc = object(&s, top_member, &t);
	if (t.rc == -ENOMEM)
		return -ENOMEM;
	if (rc || s.bad) {
		if (at)
			*at = (size_t)(s.p - buf);
		return -EINVAL;
	}
	return 0;
}

void kineto_ops_free(struct kineto_ops *o)
{
	free(o->v);
	o->v = NULL;
	o->n = o->cap = 0;
}
