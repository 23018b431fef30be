/*
 * mstx_domain_include / mstx_domain_exclude as the agent applies them to
 * the domains of prof_tx's marks and ranges and to NVTX domains: a list
 * of names, comma-separated as the launcher passes it, parsed once into a
 * fixed buffer (the agent allocates nothing for it). The default domain
 * (no name, "" or "default") is "default" in the lists.
 */
#ifndef PROF_DOMAIN_FILTER_H
#define PROF_DOMAIN_FILTER_H

#include <stdbool.h>
#include <stdint.h>

#define DOMAIN_FILTER_MAX  32      /* names in a list */
#define DOMAIN_FILTER_TEXT 1024    /* bytes of a list, commas and NUL included */
#define DOMAIN_DEFAULT "default"

enum domain_mode { DOMAIN_ALL, DOMAIN_INCLUDE, DOMAIN_EXCLUDE };

struct domain_filter {
	enum domain_mode mode;
	uint32_t n;
	const char *names[DOMAIN_FILTER_MAX];  /* into text */
	char text[DOMAIN_FILTER_TEXT];
};

/* The filter of the lists (NULL or "": not given). Include is taken when
 * both are given (configuration refuses that). 0, or -1 when the list
 * does not fit (then the filter keeps everything). */
int domain_filter_init(struct domain_filter *f, const char *include, const char *exclude);

/* Whether the records of `domain` (NULL or "": the default) are kept. */
bool domain_filter_keeps(const struct domain_filter *f, const char *domain);

/* Is `domain` the default domain: NULL, "" or "default". */
static inline bool domain_is_default(const char *domain)
{
	return !domain || !*domain || __builtin_strcmp(domain, DOMAIN_DEFAULT) == 0;
}

#endif
