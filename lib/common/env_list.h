/*
 * An environment as exec takes it (NAME=value strings, NULL-ended) and the
 * lists its variables hold (PATH, PYTHONPATH, LD_PRELOAD). Header-only so
 * the launcher and the agent (which links nothing of lib/ but the raw
 * writer) share one definition; async-signal-safe, as the agent's exec
 * wrappers run in vfork children.
 */
#ifndef PROF_ENV_LIST_H
#define PROF_ENV_LIST_H

#include <stddef.h>
#include <string.h>

/* Whether the entry e is NAME=... for the n bytes of name. */
static inline int env_is(const char *e, const char *name, size_t n)
{
	return strncmp(e, name, n) == 0 && e[n] == '=';
}

/* NAME's value in env, or NULL. */
static inline const char *env_get(char *const *env, const char *name)
{
	size_t n = strlen(name);
	for (; env && *env; env++)
		if (env_is(*env, name, n))
			return *env + n + 1;
	return NULL;
}

/* The entry of list, split at any byte of seps, equal to the n bytes of
 * name; NULL when none is (or list is NULL). */
static inline const char *env_list_find(const char *list, const char *seps, const char *name,
					size_t n)
{
	for (const char *p = list; p && *p;) {
		p += strspn(p, seps);
		size_t len = strcspn(p, seps);
		if (len == n && len && memcmp(p, name, n) == 0)
			return p;
		p += len;
	}
	return NULL;
}

#endif
