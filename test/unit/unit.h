/* A minimal unit-test harness: CHECK records a failure and goes on;
 * unit_done() prints the closing line ctest logs and the exit status. */
#ifndef PROF_TEST_UNIT_H
#define PROF_TEST_UNIT_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>
#include <unistd.h>

#include "common/fsutil.h"

static int unit_passed, unit_failed;

#define CHECK(cond) do { \
	if (cond) unit_passed++; \
	else { unit_failed++; fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); } \
} while (0)

#define CHECK_STR(a, b) do { \
	const char *a_ = (a), *b_ = (b); \
	if (a_ && b_ && strcmp(a_, b_) == 0) unit_passed++; \
	else { unit_failed++; fprintf(stderr, "%s:%d: \"%s\" != \"%s\"\n", __FILE__, __LINE__, \
				      a_ ? a_ : "(null)", b_ ? b_ : "(null)"); } \
} while (0)

#define CHECK_CONTAINS(hay, needle) do { \
	const char *h_ = (hay), *n_ = (needle); \
	if (h_ && strstr(h_, n_)) unit_passed++; \
	else { unit_failed++; fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", \
				      __FILE__, __LINE__, h_ ? h_ : "(null)", n_); } \
} while (0)

/* Where a test writes its files: PROF_TEST_TMP (ctest's, in the build
 * tree: on the disk a user's outputs would be on), else /tmp. */
static inline const char *unit_tmp_dir(void)
{
	const char *t = getenv("PROF_TEST_TMP");
	if (!t)
		t = "/tmp";
	fs_mkdir_p(t);
	return t;
}

/* Pages of the mapping [p, p + len) that are in the page cache (mincore),
 * or (size_t)-1 when that cannot be told. */
static inline size_t unit_resident(const void *p, size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), n = len / pg, in = 0;
	unsigned char *v = malloc(n ? n : 1);
	if (!v || mincore((void *)p, len, v) != 0) {
		free(v);
		return (size_t)-1;
	}
	for (size_t i = 0; i < n; i++)
		in += v[i] & 1;
	free(v);
	return in;
}

static inline void unit_deadline_hit(int sig)
{
	(void)sig;
	static const char msg[] = "the test did not end by its deadline (unit_deadline)\n";
	ssize_t rc = write(2, msg, sizeof msg - 1);
	(void)rc;
	_exit(1);
}

/* The test fails unless it reaches unit_deadline(0) within `s` seconds:
 * for work that bad input once made quadratic, or endless. */
static inline void unit_deadline(unsigned s)
{
	signal(SIGALRM, unit_deadline_hit);
	alarm(s);
}

static inline int unit_done(void)
{
	printf("%d passed, %d failed\n", unit_passed, unit_failed);
	return unit_failed ? 1 : 0;
}

#endif
