/*
 * The numbers of json_out (and of csv_out, which writes its times the same
 * way): integers, ids, and nanoseconds as microseconds with three
 * decimals, written into a caller's buffer without printf.
 *
 * A trace writes a time, a duration, a pid, a tid and often an id on every
 * line, so the common cases are inline here (a call cost as much as the
 * formatting: a twentieth of a parse's instructions); the rest is in
 * json_out.c.
 */
#ifndef PROF_JO_FMT_H
#define PROF_JO_FMT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* "00" to "99": two digits at a time. */
extern const char jo_pairs[201];

/* Writes v in decimal into buf (>= 21 bytes, no NUL); returns the length. */
size_t jo_fmt_int(char *buf, int64_t v);
/* The same for an unsigned v. */
size_t jo_fmt_uint(char *buf, uint64_t v);

/* What the inline formatters below leave to a call. */
size_t jo_fmt_us3_long(char *buf, int64_t ns);

/* Formats ns as "us.nnn" (see jo_ns_us) into buf (>= 32 bytes), with a
 * NUL after it; returns its length. Below 10 ms, as most durations are,
 * the whole part's one to four digits are written without counting them
 * or a loop. */
static inline size_t jo_fmt_us3(char *b, int64_t ns)
{
	if ((uint64_t)ns >= 10000000)
		return jo_fmt_us3_long(b, ns);
	unsigned q = (unsigned)ns / 1000, frac = (unsigned)ns - q * 1000, n;
	if (q < 10) {
		b[0] = (char)('0' + q);
		n = 1;
	} else if (q < 100) {
		memcpy(b, jo_pairs + 2 * q, 2);
		n = 2;
	} else if (q < 1000) {
		b[0] = (char)('0' + q / 100);
		memcpy(b + 1, jo_pairs + 2 * (q % 100), 2);
		n = 3;
	} else {
		memcpy(b, jo_pairs + 2 * (q / 100), 2);
		memcpy(b + 2, jo_pairs + 2 * (q % 100), 2);
		n = 4;
	}
	b[n] = '.';
	b[n + 1] = (char)('0' + frac / 100);
	memcpy(b + n + 2, jo_pairs + 2 * (frac % 100), 2);
	b[n + 4] = '\0';
	return n + 4;
}

#endif
