#include "common/domain_filter.h"

#include <string.h>

int domain_filter_init(struct domain_filter *f, const char *include, const char *exclude)
{
	memset(f, 0, sizeof *f);
	const char *list = include && *include ? include : exclude;
	if (!list || !*list)
		return 0;
	size_t len = strlen(list);
	if (len >= sizeof f->text)
		return -1;
	memcpy(f->text, list, len + 1);
	for (char *s = f->text; *s; ) {
		char *comma = strchr(s, ',');
		if (comma)
			*comma = '\0';
		if (*s) {
			if (f->n == DOMAIN_FILTER_MAX) {
				memset(f, 0, sizeof *f);
				return -1;
			}
			f->names[f->n++] = s;
		}
		if (!comma)
			break;
		s = comma + 1;
	}
	f->mode = list == include ? DOMAIN_INCLUDE : DOMAIN_EXCLUDE;
	return 0;
}

bool domain_filter_keeps(const struct domain_filter *f, const char *domain)
{
	if (f->mode == DOMAIN_ALL)
		return true;
	const char *name = domain_is_default(domain) ? DOMAIN_DEFAULT : domain;
	bool listed = false;
	for (uint32_t i = 0; i < f->n && !listed; i++)
		listed = strcmp(f->names[i], name) == 0;
	return listed == (f->mode == DOMAIN_INCLUDE);
}
