/*
 * Writing JSON as a stream: to a FILE (large outputs such as trace_view.json
 * never sit in memory) or to a strbuf. The writer inserts commas, escapes
 * strings (quotes, backslash, control characters as \u00XX, invalid UTF-8
 * replaced by U+FFFD) and writes `": "` after every key that starts a
 * line, so that consumers with whitespace-sensitive regexes (HTA's
 * `"rank":\s+(\d+)`) match.
 *
 * Layout: values nested no deeper than `line_depth` start on their own
 * line; deeper ones stay on the line of their parent, separated by ", "
 * and ": " (by "," and ":" once jo_tight). line_depth 2 gives a trace file
 * one event per line.
 */
#ifndef PROF_JSON_OUT_H
#define PROF_JSON_OUT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "common/fsutil.h"
#include "common/jo_fmt.h"
#include "common/scan.h"
#include "common/strbuf.h"

#define JO_MAX_DEPTH 32
#define JO_BUF 16384

struct bgw;

struct jo {
	FILE *f;                 /* output, or NULL to write into sb */
	struct strbuf *sb;
	char *out;               /* buf, or a background writer's buffer */
	size_t cap;              /* out's size */
	size_t blen;             /* bytes waiting in out (FILE output) */
	struct bgw *bg;          /* jo_background's writer, or NULL */
	struct fs_behind behind; /* f's flush-behind, while there is no bg */
	char buf[JO_BUF];        /* one fwrite per JO_BUF bytes, not per token */
	int depth;
	int line_depth;
	int error;               /* the first failure's errno (EINVAL: nesting misuse), or 0 */
	unsigned char count[JO_MAX_DEPTH]; /* items so far at each depth (saturates) */
	unsigned char after_key;
	unsigned char tight;     /* jo_tight: no spaces inside a line */
};

void jo_init_file(struct jo *j, FILE *f, int line_depth);
void jo_init_sb(struct jo *j, struct strbuf *sb, int line_depth);
/* Items within a line separated by "," and ":" alone: a tenth less of
 * trace_view.json to write, and to read back. */
void jo_tight(struct jo *j);
/* A FILE output written by a thread of its own, a megabyte at a time and
 * direct where it can be (common/bgwrite.h), for the largest outputs;
 * stays as it was when no thread can be had. Until jo_finish the FILE is
 * the writer's. */
void jo_background(struct jo *j);

void jo_obj_begin(struct jo *j);
void jo_obj_end(struct jo *j);
void jo_arr_begin(struct jo *j);
void jo_arr_end(struct jo *j);
void jo_key(struct jo *j, const char *key);
/* A key of n bytes that needs no escaping. */
void jo_key_plain(struct jo *j, const char *key, size_t n);
/* A string literal as key is written as it is (prof's literal keys are
 * plain ASCII), any other key escaped: looking at every key of every
 * event a byte at a time was a sixth of writing a trace. */
#define jo_key(j, k) (__builtin_constant_p(k) ? jo_key_plain((j), (k), sizeof(k) - 1) \
					      : (jo_key)((j), (k)))

void jo_str(struct jo *j, const char *s);          /* NULL writes null */
void jo_strn(struct jo *j, const char *s, size_t n);
void jo_int(struct jo *j, int64_t v);
void jo_uint(struct jo *j, uint64_t v);
void jo_bool(struct jo *j, int v);
void jo_null(struct jo *j);
/* A double with `decimals` digits after the point; NaN and infinities
 * (which JSON cannot hold) are written as null. */
void jo_fixed(struct jo *j, double v, int decimals);
/* Nanoseconds as microseconds with exactly three decimals, by integer
 * arithmetic: 1234567 -> 1234.567, -1500 -> -1.500. */
void jo_ns_us(struct jo *j, int64_t ns);
/* A value already in JSON form (from cJSON_PrintUnformatted, say). */
void jo_raw(struct jo *j, const char *json);

/* A cJSON tree, through this writer's escaping (cJSON's own printer passes
 * invalid UTF-8 through). */
struct cJSON;
void jo_cjson(struct jo *j, const struct cJSON *v);

/* Shorthands for "key": value. */
#define jo_kstr(j, k, s) (jo_key(j, k), jo_str(j, s))
#define jo_kint(j, k, v) (jo_key(j, k), jo_int(j, v))
#define jo_kuint(j, k, v) (jo_key(j, k), jo_uint(j, v))
#define jo_kfixed(j, k, v, d) (jo_key(j, k), jo_fixed(j, v, d))
#define jo_kns_us(j, k, ns) (jo_key(j, k), jo_ns_us(j, ns))

/* An object begun with "ph", "cat" (unless NULL), "name", "pid", "tid" and
 * "ts" (ns as µs), as jo_obj_begin and jo_kstr/jo_kint/jo_kns_us would
 * write them: the head of every trace event. */
void jo_event_head(struct jo *j, const char *ph, const char *cat, const char *name,
		   int64_t pid, int64_t tid, int64_t ts_ns);

/* Items written in place, for outputs of many small items of a few shapes
 * (the trace's event lines): room is made once for a stretch of text and
 * the caller writes it with no checks, where the calls above check the
 * writer's state at every key and number (most of writing a trace).
 *
 *	char *p = jo_item_at(j);          the item's separator written
 *	p = JO_LIT(p, "{\"ph\":\"X\"");
 *	p += jo_fmt_int(p, v);
 *	p = jo_cstr_at(j, p, name);       a string's body, escaped
 *	p = jo_room(j, p);                before another JO_ROOM bytes
 *	jo_item_end(j, p);
 *
 * Each call leaves JO_ROOM bytes of room at what it returns. */
#define JO_ROOM 512
#define JO_LIT(p, lit) ((char *)memcpy((p), "" lit "", sizeof(lit) - 1) + sizeof(lit) - 1)
char *jo_item_at(struct jo *j);
char *jo_room_slow(struct jo *j, char *p);
static inline char *jo_room(struct jo *j, char *p)
{
	return (size_t)(j->out + j->cap - p) >= JO_ROOM ? p : jo_room_slow(j, p);
}
/* The body of NUL-terminated s (n bytes of s for jo_strn_at), escaped.
 * Inline to the first byte that needs escaping or more room (most names
 * have none): the call was a third of what a short name cost. */
char *jo_cstr_rest(struct jo *j, char *p, const char *s);
static inline char *jo_cstr_at(struct jo *j, char *p, const char *s)
{
	size_t k = scan_json_copy(p, s, j->out + j->cap - JO_ROOM);
	return s[k] ? jo_cstr_rest(j, p + k, s + k) : p + k;
}
char *jo_strn_at(struct jo *j, char *p, const char *s, size_t n);
/* NUL-terminated text already in JSON form, as it is. */
char *jo_raw_at(struct jo *j, char *p, const char *s);
static inline void jo_item_end(struct jo *j, char *p)
{
	j->blen = (size_t)(p - j->out);
	if (!j->f)   /* a strbuf output takes every byte at once */
		jo_room_slow(j, p);
}

/* An event head (as jo_event_head writes it, the object not left open)
 * at p, for an event whose keys stay on its line (depth + 1 >
 * line_depth); ph is the one character of the event's phase. */
char *jo_event_at(struct jo *j, char *p, char ph, const char *cat, const char *name,
		  int64_t pid, int64_t tid, int64_t ts_ns);

/* Gives up a FILE output: stops a background writer (what it had is
 * written or not); the caller then discards the file. */
void jo_abort(struct jo *j);

/* Flushes a FILE output (required: output is buffered); returns 0, or the
 * first failure's -errno (a full disk: -ENOSPC; misnesting: -EINVAL). */
int jo_finish(struct jo *j);

/* Appends `s` (n bytes) escaped, without the quotes. */
void jo_escape(struct strbuf *sb, const char *s, size_t n);

/* v with `decimals` digits after the point into buf (JO_FIXED_MAX bytes),
 * with a NUL after it, exactly as printf's "%.*f" (rounded half to even on
 * v's binary value), without printf for |v| < 2^53 and up to 9 decimals;
 * returns its length (longer texts, |v| above 1e300 say, are cut). */
#define JO_FIXED_MAX 352
size_t jo_fmt_fixed(char *buf, double v, int decimals);

#endif
