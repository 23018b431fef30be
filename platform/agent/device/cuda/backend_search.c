#define _GNU_SOURCE
#include "agent/device/cuda/backend_search.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cupti_soname_major(const char *path)
{
	const char *base = strrchr(path, '/');
	const char *so = strstr(base ? base + 1 : path, ".so.");
	if (!so)
		return 0;
	char *end;
	long n = strtol(so + 4, &end, 10);
	return end != so + 4 && n > 0 && n < 1000 ? (int)n : 0;
}

static bool cupti_copy(char *out, size_t len, const char *s)
{
	size_t n = strlen(s);
	if (n >= len)
		return false;
	memcpy(out, s, n + 1);
	return true;
}

/* The major a chain of links names first: libcupti.so -> libcupti.so.12
 * -> libcupti.so.2023.3.0 (toolkits number the file by year) is 12. */
static int cupti_link_major(const char *path)
{
	char cur[PATH_MAX], target[PATH_MAX];
	if (!cupti_copy(cur, sizeof cur, path))
		return 0;
	for (int hops = 0; hops < 8; hops++) {
		int m = cupti_soname_major(cur);
		if (m)
			return m;
		ssize_t n = readlink(cur, target, sizeof target - 1);
		if (n <= 0)
			return 0;
		target[n] = 0;
		char *slash = strrchr(cur, '/');
		if (target[0] == '/' || !slash)
			snprintf(cur, sizeof cur, "%s", target);
		else if (snprintf(slash + 1, sizeof cur - (size_t)(slash + 1 - cur), "%s", target) >=
			 (int)(sizeof cur - (size_t)(slash + 1 - cur)))
			return 0;
	}
	return 0;
}

/* dir/name when it is a file of major `major` (0: any), as a real path. */
static bool cupti_try(const char *dir, const char *name, int major, char *out, size_t len)
{
	char p[PATH_MAX], real[PATH_MAX];
	struct stat st;
	if (snprintf(p, sizeof p, "%s/%s", dir, name) >= (int)sizeof p)
		return false;
	if (stat(p, &st) != 0 || !S_ISREG(st.st_mode) || !realpath(p, real))
		return false;
	/* An unversioned name may be a link to another major. */
	int m = cupti_link_major(p);
	if (major && m && m != major)
		return false;
	return cupti_copy(out, len, real);
}

static bool cupti_try_dir(const char *dir, int major, char *out, size_t len)
{
	static const int guesses[] = { 13, 12, 11 };
	char name[32];
	for (size_t i = 0; i < sizeof guesses / sizeof guesses[0]; i++) {
		int m = major ? major : guesses[i];
		snprintf(name, sizeof name, "libcupti.so.%d", m);
		if (cupti_try(dir, name, m, out, len))
			return true;
		if (major)
			break;
	}
	return cupti_try(dir, "libcupti.so", major, out, len);
}

/* Tries `base` + each suffix ("" is base itself). */
static bool cupti_try_under(const char *base, const char *const *suffixes, int major,
			    char *out, size_t len)
{
	char dir[PATH_MAX];
	if (!base || !*base)
		return false;
	for (; *suffixes; suffixes++) {
		if (snprintf(dir, sizeof dir, "%s%s", base, *suffixes) >= (int)sizeof dir)
			continue;
		if (cupti_try_dir(dir, major, out, len))
			return true;
	}
	return false;
}

static bool cupti_next_to_cudart(const char *cudart, int major, char *out, size_t len)
{
	static const char *const rel[] = { "", "/../../cuda_cupti/lib", "/../extras/CUPTI/lib64",
					   NULL };
	char dir[PATH_MAX];
	if (!cudart || !cupti_copy(dir, sizeof dir, cudart))
		return false;
	char *slash = strrchr(dir, '/');
	if (!slash)
		return false;
	*slash = 0;
	return cupti_try_under(dir, rel, major, out, len);
}

int cupti_search(const struct cupti_search_in *in, char *out, size_t len)
{
	static const char *const torch_rel[] = { "/../../nvidia/cuda_cupti/lib",
						 "/../../nvidia/cu13/lib", NULL };
	static const char *const home_rel[] = { "/extras/CUPTI/lib64", "/lib64", NULL };
	int major = in->cudart_path ? cupti_soname_major(in->cudart_path) : 0;
	if (in->loaded_cupti)
		return cupti_copy(out, len, in->loaded_cupti) ? 1 : 0;
	if (cupti_next_to_cudart(in->cudart_path, major, out, len))
		return 2;
	if (cupti_try_under(in->torch_lib_dir, torch_rel, major, out, len))
		return 3;
	if (cupti_try_under(in->cuda_home, home_rel, major, out, len))
		return 4;
	char name[32];
	if (major)
		snprintf(name, sizeof name, "libcupti.so.%d", major);
	else
		snprintf(name, sizeof name, "libcupti.so");
	return cupti_copy(out, len, name) ? 5 : 0;
}
