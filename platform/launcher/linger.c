#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/linger.h"

#define LINGER_NAMED 3   /* processes named; more are counted */

int linger_tree(pid_t skip, struct procfs_pids *out)
{
	int rc = procfs_descendants(getpid(), out);
	if (rc || !skip)
		return rc;
	size_t kept = 0;
	for (size_t i = 0; i < out->n; i++)
		if (out->v[i] != skip && getpgid(out->v[i]) != skip)
			out->v[kept++] = out->v[i];
	out->n = kept;
	return 0;
}

bool linger_any_in_group(const struct procfs_pids *p, pid_t group)
{
	for (size_t i = 0; i < p->n; i++)
		if (getpgid(p->v[i]) == group)
			return true;
	return false;
}

void linger_comm(pid_t pid, char out[16])
{
	char path[48];
	snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, out, 15) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		strcpy(out, "?");
		return;
	}
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
}

void linger_names(const struct procfs_pids *p, char *buf, size_t len, char first[16])
{
	size_t at = 0;
	buf[0] = '\0';
	strcpy(first, "?");
	for (size_t i = 0; i < p->n && i < LINGER_NAMED && at < len; i++) {
		char comm[16];
		linger_comm(p->v[i], comm);
		if (!i)
			memcpy(first, comm, sizeof comm);
		int w = snprintf(buf + at, len - at, "%spid %d (%s)", i ? ", " : "",
				 (int)p->v[i], comm);
		at += w > 0 ? (size_t)w : 0;
	}
	if (p->n > LINGER_NAMED && at < len)
		snprintf(buf + at, len - at, " and %zu more", p->n - LINGER_NAMED);
}

bool linger_ignores(pid_t pid, int sig)
{
	char path[48], text[4096];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0 || sig < 1 || sig > 64)
		return false;
	text[n] = '\0';
	const char *p = strstr(text, "\nSigIgn:");
	if (!p)
		return false;
	unsigned long long mask = strtoull(p + strlen("\nSigIgn:"), NULL, 16);
	return (mask >> (sig - 1)) & 1;
}
