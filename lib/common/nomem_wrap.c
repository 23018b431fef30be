/*
 * The allocations of an executable that parses (bin/prof), linked with
 * -Wl,--wrap for each function here (prof_nomem_wrap in lib/CMakeLists.txt):
 * the code keeps calling malloc, strdup, ...; the linker sends the calls
 * here, and __real_* are libc's. One that fails is noted (nomem.h), so that
 * a parse that went on without a row, an event or a name says so at its
 * end, whichever of the hundreds of places ran out. Libraries' own
 * allocations (cJSON, SQLite, libarchive) and libc's inside getline or
 * open_memstream are not seen: their callers' errors say those.
 *
 * prof_nomem_inject, weak and absent in prof, lets a test make an
 * allocation fail before libc is asked (test/unit/test_parse_oom.c); in
 * prof, PROF_TEST_NOMEM=K (tests only, as git's GIT_TEST_*) fails the K-th
 * allocation of the process (e2e.test_bad_input's B49).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/nomem.h"

int prof_nomem_inject(void) __attribute__((weak));

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t n);

/* PROF_TEST_NOMEM's K; read at the first allocation (getenv allocates
 * nothing), -1 when unset */
static long env_fail_at;
static long env_count;

static int env_inject(void)
{
	long at = __atomic_load_n(&env_fail_at, __ATOMIC_RELAXED);
	if (!at) {   /* threads that race here read the same value */
		const char *v = getenv("PROF_TEST_NOMEM");
		at = v && *v ? atol(v) : -1;
		__atomic_store_n(&env_fail_at, at, __ATOMIC_RELAXED);
	}
	return at > 0 && __atomic_add_fetch(&env_count, 1, __ATOMIC_RELAXED) == at;
}

/* 1: this allocation is to fail (a test's), errno set */
static int injected(void)
{
	if (prof_nomem_inject ? !prof_nomem_inject() : !env_inject())
		return 0;
	errno = ENOMEM;
	return 1;
}

/* p, noted when it is NULL for want of memory (for size 0, NULL is no
 * failure) */
static void *noted(void *p, size_t size)
{
	if (!p && size)
		prof_nomem_note();
	return p;
}

void *__wrap_malloc(size_t n)
{
	return noted(injected() ? NULL : __real_malloc(n), n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return noted(injected() ? NULL : __real_calloc(n, size), n * size);
}

void *__wrap_realloc(void *p, size_t n)
{
	return noted(injected() ? NULL : __real_realloc(p, n), n);
}

char *__wrap_strdup(const char *s)
{
	return noted(injected() ? NULL : __real_strdup(s), 1);
}

char *__wrap_strndup(const char *s, size_t n)
{
	return noted(injected() ? NULL : __real_strndup(s, n), 1);
}

int __wrap_posix_memalign(void **p, size_t align, size_t n)
{
	int rc = injected() ? ENOMEM : __real_posix_memalign(p, align, n);
	if (rc == ENOMEM)
		prof_nomem_note();
	return rc;
}

int __wrap_asprintf(char **s, const char *fmt, ...)
{
	if (injected()) {
		prof_nomem_note();
		return -1;
	}
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(s, fmt, ap);
	va_end(ap);
	if (n < 0)
		prof_nomem_note();
	return n;
}
