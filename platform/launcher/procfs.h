/*
 * Reading /proc for the host sampler: the launcher's process tree, one
 * process's CPU, memory and I/O counters, the system's CPU and memory,
 * and the network interfaces' counters.
 * Processes come and go between two reads; a vanished one is an ordinary
 * -ENOENT/-ESRCH, not an error worth reporting.
 */
#ifndef PROF_PROCFS_H
#define PROF_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct procfs_pids {
	pid_t *v;
	size_t n, cap;
};

void procfs_pids_free(struct procfs_pids *p);

/* `add` put in the list and `drop` taken out (the program's own process
 * in, prof's out, when prof is the program's child). 0 or -ENOMEM. */
int procfs_pids_self_not(struct procfs_pids *p, pid_t add, pid_t drop);

/* Every descendant of `root` (not `root` itself), appended to `out`. Uses
 * /proc/<pid>/task/<tid>/children, or a scan of every /proc/<pid>/stat
 * where the kernel lacks that file. 0 or -errno. */
int procfs_descendants(pid_t root, struct procfs_pids *out);

/* The same through the scan only (exposed for tests). */
int procfs_descendants_scan(pid_t root, struct procfs_pids *out);

struct procfs_proc {
	pid_t pid;
	pid_t ppid;
	uint64_t start_ticks;   /* start time: tells a reused pid apart */
	uint64_t utime, stime;  /* clock ticks (sysconf _SC_CLK_TCK) */
	uint64_t rss_bytes;
	uint32_t threads;
	uint64_t read_bytes, write_bytes; /* since start; 0 if unreadable */
};

/* Reads /proc/<pid>/stat and, with `io` and when permitted,
 * /proc/<pid>/io (else the byte counts are 0). 0 or -errno. */
int procfs_read_proc(pid_t pid, struct procfs_proc *out, bool io);

/* Parses the text of a /proc/<pid>/stat file. 0 or -EINVAL. */
int procfs_parse_stat(const char *text, struct procfs_proc *out);

struct procfs_cpu {
	uint64_t total, idle;   /* clock ticks summed over all CPUs */
};

/* The first line of /proc/stat. 0 or -errno. */
int procfs_sys_cpu(struct procfs_cpu *out);

/* The process's command name (/proc/<pid>/comm, at most 15 bytes), into
 * `out`. 0 or -errno (gone). */
int procfs_comm(pid_t pid, char out[16]);

/* The signals the process ignores (SigIgn of /proc/<pid>/status): bit
 * sig - 1 for each. 0 or -errno. */
int procfs_sig_ignored(pid_t pid, uint64_t *mask);

/* MemTotal and MemAvailable of /proc/meminfo, in bytes. 0 or -errno. */
int procfs_meminfo(uint64_t *total, uint64_t *avail);

struct procfs_netdev {
	char name[16];          /* IFNAMSIZ */
	uint64_t rx_bytes, rx_packets, tx_bytes, tx_packets;  /* since boot */
};

/* /proc/net/dev's text is read whole: room for about 250 interfaces. */
#define PROCFS_NET_DEV_TEXT 32768

/* The interfaces of /proc/net/dev (the launcher's network namespace), at
 * most `max` of them, into `out`; *n says how many. 0 or -errno. */
int procfs_net_dev(struct procfs_netdev *out, size_t max, size_t *n);

/* Parses the text of /proc/net/dev; returns the interfaces found. */
size_t procfs_parse_net_dev(const char *text, struct procfs_netdev *out, size_t max);

/* An interface's rated speed in Mb/s (/sys/class/net/<name>/speed); 0 when
 * unknown: loopback, virtual interfaces, a link that is down. */
uint32_t procfs_net_speed(const char *name);

#endif
