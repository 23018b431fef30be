/*
 * Processes CMD left running. prof is a child subreaper and waits for
 * every descendant, daemons included, so that each is recorded whole; but
 * a wait the user cannot see looks like a hang, and a terminal's Ctrl-C
 * does not reach a process that left prof's process group. The launcher
 * says which processes it waits for, passes the terminal's Ctrl-C and
 * Ctrl-\ on to those the terminal cannot reach, and kills what is left at
 * a second one.
 */
#ifndef PROF_LINGER_H
#define PROF_LINGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "launcher/procfs.h"

/* How long after CMD ended prof waits quietly: DataLoader workers, pool
 * processes and shells' children end well within it. */
#define LINGER_QUIET_NS 2000000000ull

struct linger_state {
	uint64_t cmd_end_ns;   /* CLOCK_MONOTONIC when CMD ended; 0: running */
	uint64_t next_look_ns; /* when the tree is listed again */
	bool said;             /* the user was told what prof waits for */
	bool windows_said;     /* ... that it was prof's window parses alone */
	unsigned interrupts;   /* the terminal's INT/QUIT since CMD ended */
	pid_t first;           /* the first process said, for the end's note */
	char first_name[16];
};

/* The program's processes under prof (every descendant of the calling
 * process but the process group `skip`, prof's own window parse; 0: none)
 * into `out`. 0 or -errno. */
int linger_tree(pid_t skip, struct procfs_pids *out);

/* Whether any of `p` is in process group `group`. */
bool linger_any_in_group(const struct procfs_pids *p, pid_t group);

/* "pid 12 (sleep), pid 34 (python3) and 3 more" into `buf`; the first
 * process's command name into `first` (16 bytes). */
void linger_names(const struct procfs_pids *p, char *buf, size_t len, char first[16]);

/* The process's command name (/proc/<pid>/comm), "?" when gone. */
void linger_comm(pid_t pid, char out[16]);

/* Whether the process ignores `sig` (SigIgn of /proc/<pid>/status): a
 * shell script's `cmd &` ignores SIGINT and SIGQUIT. */
bool linger_ignores(pid_t pid, int sig);

#endif
