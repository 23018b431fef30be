#define _GNU_SOURCE
#include "launcher/sig.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

static const int sig_forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

bool sig_is_forwarded(int sig)
{
	for (size_t i = 0; i < sizeof sig_forwarded / sizeof sig_forwarded[0]; i++)
		if (sig_forwarded[i] == sig)
			return true;
	return false;
}

int sig_setup(struct sig_state *s)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof sig_forwarded / sizeof sig_forwarded[0]; i++)
		sigaddset(&set, sig_forwarded[i]);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, &s->saved_mask) != 0)
		return -errno;
	s->fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (s->fd < 0) {
		int rc = -errno;
		sigprocmask(SIG_SETMASK, &s->saved_mask, NULL);
		return rc;
	}
	return 0;
}

int sig_next(struct sig_state *s, struct sig_got *got)
{
	struct signalfd_siginfo si;
	ssize_t r = read(s->fd, &si, sizeof si);
	if (r < 0)
		return errno == EAGAIN ? 0 : -errno;
	if (r != (ssize_t)sizeof si)
		return -EIO;
	if (got) {
		/* The terminal's signals come as SI_KERNEL, with no sender. */
		int code = si.ssi_code;
		got->signo = (int)si.ssi_signo;
		got->by_process = code == SI_USER || code == SI_QUEUE || code == SI_TKILL;
		got->sender = got->by_process ? (pid_t)si.ssi_pid : 0;
	}
	return (int)si.ssi_signo;
}

void sig_teardown(struct sig_state *s)
{
	/* A signal that was meant for the child and came as it ended must not
	 * kill prof once unblocked: drop what is pending. */
	if (s->fd >= 0) {
		while (sig_next(s, NULL) > 0)
			;
		close(s->fd);
	}
	s->fd = -1;
	sigprocmask(SIG_SETMASK, &s->saved_mask, NULL);
}

static char sig_late_msg[1024];
static size_t sig_late_len;

/* Async-signal-safe: write, sigaction, raise. */
static void sig_late_handler(int sig)
{
	ssize_t w = write(STDERR_FILENO, sig_late_msg, sig_late_len);
	(void)w;
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigaction(sig, &dfl, NULL);
	raise(sig);   /* delivered once the handler returns */
}

void sig_late_setup(const char *msg)
{
	static const int late[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	snprintf(sig_late_msg, sizeof sig_late_msg, "%s", msg);
	sig_late_len = strlen(sig_late_msg);
	for (size_t i = 0; i < sizeof late / sizeof late[0]; i++) {
		struct sigaction old, sa = { .sa_handler = sig_late_handler };
		sigemptyset(&sa.sa_mask);
		/* An ignored signal (nohup, a background job) stays ignored. */
		if (sigaction(late[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
			sigaction(late[i], &sa, NULL);
	}
}

void sig_die(int sig)
{
	struct rlimit core;
	/* Lowering the soft limit cannot fail for a valid resource. */
	if (getrlimit(RLIMIT_CORE, &core) == 0) {
		core.rlim_cur = 0;
		setrlimit(RLIMIT_CORE, &core);
	}
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	raise(sig);   /* pending if blocked: the unblocking delivers it */
	sigprocmask(SIG_UNBLOCK, &one, NULL);
}

const char *sig_name(int sig, char *buf, size_t len)
{
	const char *abbrev = sigabbrev_np(sig);
	if (abbrev)
		snprintf(buf, len, "SIG%s", abbrev);
	else
		snprintf(buf, len, "SIG%d", sig);
	return buf;
}
