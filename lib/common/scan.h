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

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SCAN_OVERREAD 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || \
	__has_feature(thread_sanitizer)
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

/* What stops a scan. */
enum scan_kind {
	SCAN_JSON,      /* controls (NUL among them), '"', '\\', non-ASCII */
	SCAN_CSV,       /* ',', '"', '\r', '\n' */
	SCAN_CSV_NUL,   /* the same, and the NUL */
	SCAN_QUOTE_NUL, /* '"' and the NUL: inside a quoted CSV field */
};

static inline int scan_stops_byte(unsigned char c, enum scan_kind k)
{
	if (k == SCAN_JSON)
		return c < 0x20 || c >= 0x80 || c == '"' || c == '\\';
	if (k == SCAN_QUOTE_NUL)
		return c == '"' || !c;
	return c == ',' || c == '"' || c == '\r' || c == '\n' || (k == SCAN_CSV_NUL && !c);
}

#ifdef __SSE2__
/* The bytes of x that stop a scan of kind k, as a bit mask. */
static inline unsigned scan_stops(__m128i x, enum scan_kind k)
{
	__m128i m;
	if (k == SCAN_JSON) {   /* as signed bytes, controls and non-ASCII are below ' ' */
		m = _mm_or_si128(_mm_cmplt_epi8(x, _mm_set1_epi8(' ')),
				 _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
					      _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))));
	} else if (k == SCAN_QUOTE_NUL) {
		m = _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
				 _mm_cmpeq_epi8(x, _mm_setzero_si128()));
	} else {
		m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(',')),
					      _mm_cmpeq_epi8(x, _mm_set1_epi8('"'))),
				 _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('\r')),
					      _mm_cmpeq_epi8(x, _mm_set1_epi8('\n'))));
		if (k == SCAN_CSV_NUL)
			m = _mm_or_si128(m, _mm_cmpeq_epi8(x, _mm_setzero_si128()));
	}
	return (unsigned)_mm_movemask_epi8(m);
}
#endif

/* The bytes of s[0..n) before the first that stops a scan of kind k. */
static inline size_t scan_plain(const char *s, size_t n, enum scan_kind k)
{
	size_t i = 0;
#ifdef __SSE2__
	for (; i + 16 <= n; i += 16) {
		unsigned bits = scan_stops(_mm_loadu_si128((const __m128i *)(const void *)(s + i)), k);
		if (bits)
			return i + (size_t)__builtin_ctz(bits);
	}
#if SCAN_OVERREAD
	if (i < n && scan_same_page(s + i)) {
		unsigned bits = scan_stops(_mm_loadu_si128((const __m128i *)(const void *)(s + i)), k);
		return i + (size_t)__builtin_ctz(bits | (1u << (n - i)));
	}
#endif
#endif
	while (i < n && !scan_stops_byte((unsigned char)s[i], k))
		i++;
	return i;
}

static inline size_t scan_json_plain(const char *s, size_t n)
{
	return scan_plain(s, n, SCAN_JSON);
}

static inline size_t scan_csv_plain(const char *s, size_t n)
{
	return scan_plain(s, n, SCAN_CSV);
}

/* Copies the NUL-terminated s to d up to the first byte that stops a scan
 * of kind k (one that stops at the NUL: not SCAN_CSV), sixteen
 * bytes at a time: one pass where strlen, a scan and a copy made three.
 * Stops early, with fewer bytes copied, where a load would cross a page or
 * d would pass `lim` (d may be written up to 16 bytes past what it
 * returns, never past lim); returns the bytes copied, so s[ret] is the
 * byte to look at next. Without SSE2, or under sanitizers, copies
 * nothing. */
static inline size_t scan_copy(char *d, const char *s, const char *lim, enum scan_kind k)
{
	size_t i = 0;
#if SCAN_OVERREAD
	while (d + i + 16 <= lim && scan_same_page(s + i)) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		_mm_storeu_si128((__m128i *)(void *)(d + i), x);
		unsigned bits = scan_stops(x, k);
		if (bits)
			return i + (size_t)__builtin_ctz(bits);
		i += 16;
	}
#else
	(void)d;
	(void)s;
	(void)lim;
	(void)k;
#endif
	return i;
}

static inline size_t scan_json_copy(char *d, const char *s, const char *lim)
{
	return scan_copy(d, s, lim, SCAN_JSON);
}

static inline size_t scan_csv_copy(char *d, const char *s, const char *lim)
{
	return scan_copy(d, s, lim, SCAN_CSV_NUL);
}

#endif
