#define _GNU_SOURCE
#include <stdio.h>
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
	if (procfs_comm(pid, out) != 0 || !*out)
		strcpy(out, "?");
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
	uint64_t mask;
	return sig >= 1 && sig <= 64 && procfs_sig_ignored(pid, &mask) == 0 &&
	       ((mask >> (sig - 1)) & 1);
}
