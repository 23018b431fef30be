#define _GNU_SOURCE
#include "launcher/procfs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void procfs_pids_free(struct procfs_pids *p)
{
	free(p->v);
	p->v = NULL;
	p->n = p->cap = 0;
}

static int procfs_pids_add(struct procfs_pids *p, pid_t pid)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		pid_t *v = realloc(p->v, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n++] = pid;
	return 0;
}

int procfs_pids_self_not(struct procfs_pids *p, pid_t add, pid_t drop)
{
	size_t k = 0;
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i] != drop)
			p->v[k++] = p->v[i];
	p->n = k;
	return procfs_pids_add(p, add);
}

/* Small /proc files are read in one go into `buf`. */
static int procfs_slurp(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n;
	while ((n = read(fd, buf, len - 1)) < 0 && errno == EINTR)
		;
	int rc = n < 0 ? -errno : 0;
	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return rc;
}

static bool procfs_all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* Appends the children listed in one task's children file. */
static int procfs_task_children(pid_t pid, const char *tid, struct procfs_pids *out)
{
	char path[96], buf[8192];
	snprintf(path, sizeof path, "/proc/%d/task/%s/children", (int)pid, tid);
	int rc = procfs_slurp(path, buf, sizeof buf);
	if (rc)
		return rc;
	char *s = buf, *end;
	for (;;) {
		long v = strtol(s, &end, 10);
		if (end == s)
			return 0;
		if ((rc = procfs_pids_add(out, (pid_t)v)))
			return rc;
		s = end;
	}
}

/* Children are listed under the thread that forked them, so every task
 * of `pid` is read. */
static int procfs_children_of(pid_t pid, struct procfs_pids *out)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	struct dirent *de;
	int rc = 0;
	while (!rc && (de = readdir(d))) {
		if (!procfs_all_digits(de->d_name))
			continue;
		rc = procfs_task_children(pid, de->d_name, out);
		if (rc == -ENOENT || rc == -ESRCH)
			rc = 0;   /* the thread ended meanwhile */
	}
	closedir(d);
	return rc;
}

static int procfs_children_supported(void)
{
	static int supported = -1;
	if (supported < 0) {
		char path[64];
		snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)gettid());
		supported = access(path, R_OK) == 0;
	}
	return supported;
}

int procfs_descendants(pid_t root, struct procfs_pids *out)
{
	if (!procfs_children_supported())
		return procfs_descendants_scan(root, out);
	size_t first = out->n;
	int rc = procfs_children_of(root, out);
	/* `out` grows as it is walked: a breadth-first walk of the tree. */
	for (size_t i = first; !rc && i < out->n; i++) {
		rc = procfs_children_of(out->v[i], out);
		if (rc == -ENOENT || rc == -ESRCH)
			rc = 0;
	}
	return rc;
}

static int procfs_read_ppid(pid_t pid, pid_t *ppid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int rc = procfs_slurp(path, buf, sizeof buf);
	if (rc)
		return rc;
	struct procfs_proc p;
	if (procfs_parse_stat(buf, &p))
		return -EINVAL;
	*ppid = p.ppid;
	return 0;
}

/* Every (pid, ppid) on the system, as two parallel arrays. */
static int procfs_scan_all(struct procfs_pids *pids, struct procfs_pids *ppids)
{
	DIR *d = opendir("/proc");
	if (!d)
		return -errno;
	struct dirent *de;
	int rc = 0;
	while (!rc && (de = readdir(d))) {
		pid_t pid, ppid;
		if (!procfs_all_digits(de->d_name))
			continue;
		pid = (pid_t)atoi(de->d_name);
		if (procfs_read_ppid(pid, &ppid))
			continue;
		if (!(rc = procfs_pids_add(pids, pid)))
			rc = procfs_pids_add(ppids, ppid);
	}
	closedir(d);
	return rc;
}

static int procfs_add_children(const struct procfs_pids *pids, const struct procfs_pids *ppids,
			       pid_t parent, pid_t root, struct procfs_pids *out)
{
	int rc = 0;
	for (size_t j = 0; !rc && j < pids->n; j++)
		if (ppids->v[j] == parent && pids->v[j] != root)
			rc = procfs_pids_add(out, pids->v[j]);
	return rc;
}

int procfs_descendants_scan(pid_t root, struct procfs_pids *out)
{
	struct procfs_pids pids = { 0 }, ppids = { 0 };
	int rc = procfs_scan_all(&pids, &ppids);
	size_t first = out->n;
	if (!rc)
		rc = procfs_add_children(&pids, &ppids, root, root, out);
	/* `out` grows as it is walked: breadth first, n passes over a small
	 * table for a tree of n processes. */
	for (size_t i = first; !rc && i < out->n; i++)
		rc = procfs_add_children(&pids, &ppids, out->v[i], root, out);
	procfs_pids_free(&pids);
	procfs_pids_free(&ppids);
	return rc;
}

int procfs_parse_stat(const char *text, struct procfs_proc *p)
{
	/* The command name may hold spaces and ')': fields resume after the
	 * last ')'. */
	const char *s = strrchr(text, ')');
	if (!s)
		return -EINVAL;
	char state;
	int ppid;
	unsigned long long ut, st, start, rss;
	long threads;
	/* %*s skips a field whatever its width or sign. */
	int n = sscanf(s + 1, " %c %d %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu"
		       " %*s %*s %*s %*s %ld %*s %llu %*s %llu",
		       &state, &ppid, &ut, &st, &threads, &start, &rss);
	if (n != 7)
		return -EINVAL;
	p->pid = (pid_t)atoi(text);
	p->ppid = (pid_t)ppid;
	p->utime = ut;
	p->stime = st;
	p->threads = threads > 0 ? (uint32_t)threads : 0;
	p->start_ticks = start;
	p->rss_bytes = rss * (uint64_t)sysconf(_SC_PAGESIZE);
	return 0;
}

static void procfs_read_io(pid_t pid, struct procfs_proc *p)
{
	char path[64], buf[1024];
	p->read_bytes = p->write_bytes = 0;
	snprintf(path, sizeof path, "/proc/%d/io", (int)pid);
	if (procfs_slurp(path, buf, sizeof buf))
		return;   /* another user's process, or no task I/O accounting */
	const char *r = strstr(buf, "\nread_bytes:");
	const char *w = strstr(buf, "\nwrite_bytes:");
	if (r)
		p->read_bytes = strtoull(r + 12, NULL, 10);
	if (w)
		p->write_bytes = strtoull(w + 13, NULL, 10);
}

int procfs_read_proc(pid_t pid, struct procfs_proc *p, bool io)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int rc = procfs_slurp(path, buf, sizeof buf);
	if (rc)
		return rc;
	if (procfs_parse_stat(buf, p))
		return -EINVAL;
	if (io)
		procfs_read_io(pid, p);
	else
		p->read_bytes = p->write_bytes = 0;
	return 0;
}

int procfs_comm(pid_t pid, char out[16])
{
	char path[48];
	snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
	int rc = procfs_slurp(path, out, 16);
	/* a process gone before open leaves `out` as it was: never read it */
	if (rc)
		out[0] = '\0';
	else
		out[strcspn(out, "\n")] = '\0';
	return rc;
}

int procfs_sig_ignored(pid_t pid, uint64_t *mask)
{
	char path[48], text[4096];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	int rc = procfs_slurp(path, text, sizeof text);
	const char *p = rc ? NULL : strstr(text, "\nSigIgn:");
	if (!rc && !p)
		rc = -EINVAL;
	*mask = p ? strtoull(p + strlen("\nSigIgn:"), NULL, 16) : 0;
	return rc;
}

int procfs_sys_cpu(struct procfs_cpu *c)
{
	char buf[512];
	int rc = procfs_slurp("/proc/stat", buf, sizeof buf);
	if (rc)
		return rc;
	unsigned long long v[8] = { 0 };
	if (sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
		   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) < 4)
		return -EINVAL;
	/* guest time is already part of user time: not added twice. */
	c->total = 0;
	for (int i = 0; i < 8; i++)
		c->total += v[i];
	c->idle = v[3] + v[4];   /* idle + iowait */
	return 0;
}

int procfs_meminfo(uint64_t *total, uint64_t *avail)
{
	char buf[4096];
	int rc = procfs_slurp("/proc/meminfo", buf, sizeof buf);
	if (rc)
		return rc;
	const char *t = strstr(buf, "MemTotal:");
	const char *a = strstr(buf, "MemAvailable:");
	if (!t || !a)
		return -EINVAL;
	*total = strtoull(t + 9, NULL, 10) * 1024;
	*avail = strtoull(a + 13, NULL, 10) * 1024;
	return 0;
}

/* One interface line of `len` bytes: "  eth0: rx bytes packets errs
 * drop fifo frame compressed multicast, tx bytes packets ...". Old
 * kernels glue a long rx byte count to the colon. 0, or -1 for a line
 * that is not one (the two header lines). */
static int procfs_net_line(const char *line, size_t len, struct procfs_netdev *d)
{
	const char *colon = memchr(line, ':', len);
	while (line < colon && *line == ' ')
		line++;
	if (!colon || colon == line || (size_t)(colon - line) >= sizeof d->name)
		return -1;
	unsigned long long v[4];
	if (sscanf(colon + 1, "%llu %llu %*u %*u %*u %*u %*u %*u %llu %llu",
		   &v[0], &v[1], &v[2], &v[3]) != 4)
		return -1;
	memcpy(d->name, line, (size_t)(colon - line));
	d->name[colon - line] = '\0';
	d->rx_bytes = v[0];
	d->rx_packets = v[1];
	d->tx_bytes = v[2];
	d->tx_packets = v[3];
	return 0;
}

size_t procfs_parse_net_dev(const char *text, struct procfs_netdev *out, size_t max)
{
	size_t n = 0;
	for (const char *line = text; n < max && *line; ) {
		size_t len = strcspn(line, "\n");
		if (procfs_net_line(line, len, &out[n]) == 0)
			n++;
		line += len + (line[len] == '\n');
	}
	return n;
}

int procfs_net_dev(struct procfs_netdev *out, size_t max, size_t *n)
{
	char buf[PROCFS_NET_DEV_TEXT];
	int rc = procfs_slurp("/proc/net/dev", buf, sizeof buf);
	*n = rc ? 0 : procfs_parse_net_dev(buf, out, max);
	return rc;
}

uint32_t procfs_net_speed(const char *name)
{
	char path[96], buf[32];
	snprintf(path, sizeof path, "/sys/class/net/%s/speed", name);
	/* loopback and virtual interfaces refuse the read (EINVAL); a link
	 * that is down says -1 */
	if (procfs_slurp(path, buf, sizeof buf))
		return 0;
	long v = strtol(buf, NULL, 10);
	return v > 0 && v < UINT32_MAX ? (uint32_t)v : 0;
}
