/*
 * How far a string runs before the first byte JSON or CSV must treat
 * specially, sixteen bytes at a time where SSE2 is there (every x86-64),
 * a byte at a time elsewhere. Looking at names a byte at a time was the
 * largest single cost of writing a trace.
 *
 * The last bytes of a string (fewer than sixteen: all of most names) are
 * looked at with one 16-byte load too when that load stays within the
 * string's page: bytes past the string are read, never used, and cannot
 * fault. Sanitized builds, which would call that read out of bounds, look
 * at them a byte at a time.
 */
#ifndef PROF_SCAN_H
#define PROF_SCAN_H

#include <stddef.h>
#include <stdint.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define SCAN_OVERREAD 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define SCAN_OVERREAD 0
#endif
#endif
#if !defined(SCAN_OVERREAD) && defined(__SSE2__)
#define SCAN_OVERREAD 1
#elif !defined(SCAN_OVERREAD)
#define SCAN_OVERREAD 0
#endif

/* Whether 16 bytes from s stay on s's (4 KiB or larger) page. */
static inline int scan_same_page(const char *s)
{
	return ((uintptr_t)s & 4095) <= 4096 - 16;
}

/* The bytes of s[0..n) before the first control, '"', '\\' or non-ASCII. */
static inline size_t scan_json_plain(const char *s, size_t n)
{
	size_t i = 0;
#ifdef __SSE2__
	/* as signed bytes, the controls and all of non-ASCII are below ' ' */
	const __m128i sp = _mm_set1_epi8(' '), q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\');
	for (; i + 16 <= n; i += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		__m128i m = _mm_or_si128(_mm_cmplt_epi8(x, sp),
					 _mm_or_si128(_mm_cmpeq_epi8(x, q), _mm_cmpeq_epi8(x, bs)));
		int bits = _mm_movemask_epi8(m);
		if (bits)
			return i + (size_t)__builtin_ctz((unsigned)bits);
	}
#if SCAN_OVERREAD
	if (i < n && scan_same_page(s + i)) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		__m128i m = _mm_or_si128(_mm_cmplt_epi8(x, sp),
					 _mm_or_si128(_mm_cmpeq_epi8(x, q), _mm_cmpeq_epi8(x, bs)));
		unsigned bits = (unsigned)_mm_movemask_epi8(m) | (1u << (n - i));
		return i + (size_t)__builtin_ctz(bits);
	}
#endif
#endif
	for (; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\')
			break;
	}
	return i;
}

/* The bytes of s[0..n) before the first ',', '"', '\r' or '\n'. */
static inline size_t scan_csv_plain(const char *s, size_t n)
{
	size_t i = 0;
#ifdef __SSE2__
	const __m128i a = _mm_set1_epi8(','), b = _mm_set1_epi8('"');
	const __m128i c = _mm_set1_epi8('\r'), d = _mm_set1_epi8('\n');
	for (; i + 16 <= n; i += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, a), _mm_cmpeq_epi8(x, b)),
					 _mm_or_si128(_mm_cmpeq_epi8(x, c), _mm_cmpeq_epi8(x, d)));
		int bits = _mm_movemask_epi8(m);
		if (bits)
			return i + (size_t)__builtin_ctz((unsigned)bits);
	}
#if SCAN_OVERREAD
	if (i < n && scan_same_page(s + i)) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, a), _mm_cmpeq_epi8(x, b)),
					 _mm_or_si128(_mm_cmpeq_epi8(x, c), _mm_cmpeq_epi8(x, d)));
		unsigned bits = (unsigned)_mm_movemask_epi8(m) | (1u << (n - i));
		return i + (size_t)__builtin_ctz(bits);
	}
#endif
#endif
	for (; i < n; i++)
		if (s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n')
			break;
	return i;
}

#if SCAN_OVERREAD
/* The bytes of x that stop a copy: JSON's specials (the NUL among the
 * controls), or CSV's and the NUL. */
static inline int scan_stops(__m128i x, int csv)
{
	__m128i m;
	if (csv)
		m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(',')),
					      _mm_cmpeq_epi8(x, _mm_set1_epi8('"'))),
				 _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('\r')),
							   _mm_cmpeq_epi8(x, _mm_set1_epi8('\n'))),
					      _mm_cmpeq_epi8(x, _mm_setzero_si128())));
	else   /* as signed bytes, the controls and all of non-ASCII are below ' ' */
		m = _mm_or_si128(_mm_cmplt_epi8(x, _mm_set1_epi8(' ')),
				 _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
					      _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))));
	return _mm_movemask_epi8(m);
}
#endif

/* Copies the NUL-terminated s to d up to the first byte JSON (or CSV)
 * treats specially, or the NUL, sixteen bytes at a time: one pass where
 * strlen, a scan and a copy made three. Stops early, with fewer bytes
 * copied, where a load would cross a page or d would pass `lim` (d may be
 * written up to 16 bytes past what it returns, never past lim); returns
 * the bytes copied, so s[ret] is the byte to look at next. Without SSE2,
 * or under sanitizers, copies nothing. */
static inline size_t scan_copy(char *d, const char *s, const char *lim, int csv)
{
	size_t i = 0;
#if SCAN_OVERREAD
	while (d + i + 16 <= lim && scan_same_page(s + i)) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		_mm_storeu_si128((__m128i *)(void *)(d + i), x);
		int bits = scan_stops(x, csv);
		if (bits)
			return i + (size_t)__builtin_ctz((unsigned)bits);
		i += 16;
	}
#else
	(void)d;
	(void)s;
	(void)lim;
	(void)csv;
#endif
	return i;
}

static inline size_t scan_json_copy(char *d, const char *s, const char *lim)
{
	return scan_copy(d, s, lim, 0);
}

/* Stops at ',', '"', '\r', '\n' or the NUL. */
static inline size_t scan_csv_copy(char *d, const char *s, const char *lim)
{
	return scan_copy(d, s, lim, 1);
}

#endif
