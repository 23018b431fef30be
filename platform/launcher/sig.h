/*
 * The launcher's signals: the ones it forwards to the program and SIGCHLD
 * are blocked and read from a signalfd by the main loop, so no work runs in
 * an asynchronous handler and the sampler thread (created afterwards,
 * inheriting the mask) never sees them. Each comes with who sent it, since
 * the terminal signals the program itself (it shares prof's process group)
 * and only what was sent to prof alone needs passing on.
 */
#ifndef PROF_SIG_H
#define PROF_SIG_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct sig_state {
	int fd;              /* signalfd, non-blocking, close-on-exec */
	sigset_t saved_mask; /* the mask prof started with: the child's */
};

/* Blocks the forwarded signals and SIGCHLD and opens the signalfd.
 * 0 or -errno. */
int sig_setup(struct sig_state *s);

struct sig_got {
	int signo;
	bool by_process;     /* kill(), sigqueue(), tgkill(); false: the kernel
			      * (the terminal's Ctrl-C, a hangup) */
	pid_t sender;        /* when by_process; 0 from another pid namespace */
};

/* Reads one pending signal into `got` (NULL: dropped): its number, 0 when
 * none is pending, or -errno. */
int sig_next(struct sig_state *s, struct sig_got *got);

/* Drops pending signals, closes the signalfd and restores the mask. */
void sig_teardown(struct sig_state *s);

/* Before sig_teardown (the signals still blocked, so none falls between
 * the unmasking and the handlers), for the work left once the child has
 * ended (the parse): SIGINT, SIGTERM, SIGHUP and SIGQUIT, where their
 * action is the default, write `msg` to standard error and then end prof
 * by the signal's default action. `msg` is copied (up to 1 KiB). */
void sig_late_setup(const char *msg);

/* Ends the process by `sig`, as the program it ran ended: the default
 * action restored, the signal unblocked, core dumps off (a core of prof
 * would be taken for the program's, or overwrite it). Returns only where
 * `sig`'s default action does not end a process; the caller exits then. */
void sig_die(int sig);

/* True for SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2. */
bool sig_is_forwarded(int sig);

/* "SIGSEGV" for 11; "SIG<n>" for numbers without a name. */
const char *sig_name(int sig, char *buf, size_t len);

#endif
