/*
 * Copying the short pieces an output is made of (numbers, names, keys)
 * without a call into libc: a memcpy call per piece, its size unknown to
 * the compiler, was a tenth of the instructions of a parse. Up to 32
 * bytes move as two overlapping loads and stores; only s[0..n) is read
 * and d[0..n) written. Constant sizes are left to memcpy, which the
 * compiler inlines itself.
 */
#ifndef PROF_COPY_H
#define PROF_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* gcc's range analysis, seeing a source of 3 bytes, warns of the branches
 * for longer sizes that never run with it. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#pragma GCC diagnostic ignored "-Wstringop-overread"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
static inline void copy_short_var(char *d, const char *s, size_t n)
{
	if (n > 32) {
		memcpy(d, s, n);
	} else if (n >= 16) {
		uint64_t a, b, c, e;   /* [0,16) and [n-16,n) */
		memcpy(&a, s, 8);
		memcpy(&b, s + 8, 8);
		memcpy(&c, s + n - 16, 8);
		memcpy(&e, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + 8, &b, 8);
		memcpy(d + n - 16, &c, 8);
		memcpy(d + n - 8, &e, 8);
	} else if (n >= 8) {
		uint64_t a, b;
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n >= 4) {
		uint32_t a, b;
		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		memcpy(d, &a, 4);
		memcpy(d + n - 4, &b, 4);
	} else if (n) {
		char a = s[0], b = s[n / 2], c = s[n - 1];
		d[0] = a;
		d[n / 2] = b;
		d[n - 1] = c;
	}
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#define copy_short(d, s, n) \
	(__builtin_constant_p(n) ? (void)memcpy((d), (s), (n)) : copy_short_var((d), (s), (n)))

#endif
