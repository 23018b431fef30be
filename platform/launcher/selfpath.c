#define _GNU_SOURCE
#include "launcher/selfpath.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "launcher/embed_cache.h"

int selfpath_exe(char **out)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n >= sizeof buf - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	*out = strdup(buf);
	return *out ? 0 : -ENOMEM;
}

int selfpath_exe_dir(char **out)
{
	char *exe;
	int rc = selfpath_exe(&exe);
	if (rc)
		return rc;
	char *slash = strrchr(exe, '/');
	if (!slash) {
		free(exe);
		return -EINVAL;
	}
	slash[slash == exe] = '\0';  /* "/prof" gives "/" */
	*out = exe;
	return 0;
}

int selfpath_resolve(const char *dir, const char *rel, char **out)
{
	char *joined = fs_join(dir, rel);
	if (!joined)
		return -ENOMEM;
	/* realpath gives the user a path without "bin/.." in messages and the
	 * agent a stable path that survives a later chdir. */
	char *real = realpath(joined, NULL);
	if (!real) {
		int rc = -errno;
		*out = joined;
		return rc;
	}
	free(joined);
	*out = real;
	return 0;
}

/* A static build's files are in its cache, laid out as a prefix: `rel`
 * ("../lib/...") is taken from the cache root instead of bin/. */
static int selfpath_embedded(const char *rel, char **out)
{
	static char *root;
	if (!root && embed_cache_root(embed_table(), NULL, &root) != 0) {
		*out = NULL;
		return -EACCES;
	}
	return selfpath_resolve(root, strncmp(rel, "../", 3) == 0 ? rel + 3 : rel, out);
}

static int selfpath_find(const char *rel, char **out)
{
	if (embed_table())
		return selfpath_embedded(rel, out);
	char *dir;
	int rc = selfpath_exe_dir(&dir);
	if (rc) {
		*out = NULL;
		return rc;
	}
	rc = selfpath_resolve(dir, rel, out);
	free(dir);
	return rc;
}

int selfpath_agent(char **out)
{
	return selfpath_find(SELFPATH_AGENT_REL, out);
}

int selfpath_python_dir(char **out)
{
	return selfpath_find(SELFPATH_PYTHON_REL, out);
}
