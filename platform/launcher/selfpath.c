#define _GNU_SOURCE
#include "launcher/selfpath.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fsutil.h"

int selfpath_exe_dir(char **out)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n >= sizeof buf - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	char *slash = strrchr(buf, '/');
	if (!slash)
		return -EINVAL;
	*slash = '\0';
	*out = strdup(buf[0] ? buf : "/");
	return *out ? 0 : -ENOMEM;
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

static int selfpath_find(const char *rel, char **out)
{
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
