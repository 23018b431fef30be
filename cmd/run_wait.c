/*
 * prof run's wait, from the fork to the tree's end: --delay/--duration,
 * the signals passed on (to the processes the terminal cannot reach),
 * what CMD left running once it ended (said, stopped at a Ctrl-C, killed
 * at a second), the storage limit and a full disk said as they are met,
 * --dynamic edits and window results polled, and every descendant reaped
 * (prof is a child subreaper).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run.h"
#include "launcher/procfs.h"

void run_set_timers(struct run_ctx *r)
{
	uint64_t launch = raw_clock_ns(CLOCK_MONOTONIC);
	double d = r->cfg.delay_s, t = r->cfg.duration_s;
	if (d > 0)
		r->delay_end = launch + (uint64_t)(d * 1e9);
	if (t > 0)
		r->duration_end = launch + (uint64_t)((d + t) * 1e9);
}

/* --delay and --duration, each said when it acts: a recording that stops
 * while CMD runs on must not look like prof hanging, nor a short profile
 * like lost data. */
static void run_fire_timers(struct run_ctx *r, uint64_t now)
{
	if (r->delay_end && now >= r->delay_end) {
		rundir_set_recording(&r->rd, true);
		r->delay_end = 0;
		if (!r->have_status)
			fprintf(stderr, "prof: recording starts (delay %g s)\n", r->cfg.delay_s);
	}
	if (r->duration_end && !r->delay_end && now >= r->duration_end) {
		rundir_set_recording(&r->rd, false);
		r->duration_end = 0;
		if (!r->have_status)
			fprintf(stderr, "prof: recording stopped (duration %g s); %s runs on, and prof "
				"parses when it ends (Ctrl-C ends it now)\n", r->cfg.duration_s,
				r->cmd ? r->cmd[0] : "the program");
	}
}

#define RUN_DYNAMIC_POLL_NS 100000000ull

static struct timespec *run_timeout(const struct run_ctx *r, uint64_t now, struct timespec *ts)
{
	uint64_t next = r->delay_end ? r->delay_end : r->duration_end;
	/* --dynamic edits and window requests are polled */
	if (!next || next > now + RUN_DYNAMIC_POLL_NS)
		next = now + RUN_DYNAMIC_POLL_NS;
	if (!next)
		return NULL;
	uint64_t left = next > now ? next - now : 0;
	ts->tv_sec = (time_t)(left / 1000000000u);
	ts->tv_nsec = (long)(left % 1000000000u);
	return ts;
}

static bool run_pids_have(const struct procfs_pids *p, pid_t pid)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i] == pid)
			return true;
	return false;
}

/* To the program's processes in prof's process group, those the terminal
 * signals with prof; when none is left but descendants that left the
 * group live on, to each of them. */
static void run_send_tree(const struct procfs_pids *tree, int sig)
{
	pid_t group = getpgrp();
	size_t sent = 0;
	for (size_t i = 0; i < tree->n; i++)
		if (getpgid(tree->v[i]) == group && kill(tree->v[i], sig) == 0)
			sent++;
	if (!sent)
		for (size_t i = 0; i < tree->n; i++)
			kill(tree->v[i], sig);
}

/* CMD has ended and an INT or QUIT came (the terminal's, or one sent to
 * prof alone). The first reaches each process CMD left running, or
 * SIGTERM does where it ignores that signal (a shell script's `cmd &`
 * ignores SIGINT and SIGQUIT); the terminal's own reached those in prof's
 * group already. A second kills what is left. */
static void run_linger_signal(struct run_ctx *r, const struct procfs_pids *tree, int sig,
			      bool terminal)
{
	char names[256], first[16];
	if (r->linger.interrupts++ > 0) {
		linger_names(tree, names, sizeof names, first);
		fprintf(stderr, "prof: killing what %s left running: %s\n", r->cmd[0], names);
		for (size_t i = 0; i < tree->n; i++)
			kill(tree->v[i], SIGKILL);
		return;
	}
	pid_t group = getpgrp();
	for (size_t i = 0; i < tree->n; i++) {
		pid_t p = tree->v[i];
		if (linger_ignores(p, sig)) {
			char name[32];
			linger_comm(p, first);
			fprintf(stderr, "prof: pid %d (%s) ignores %s: sent it SIGTERM\n", (int)p, first,
				sig_name(sig, name, sizeof name));
			kill(p, SIGTERM);
		} else if (!terminal || getpgid(p) != group) {
			kill(p, sig);
		}
	}
}

/* CMD has ended and an INT or QUIT came: it is for what CMD left running
 * (run_linger_signal) or, none being left, for prof's own window parses,
 * which it skips. false, doing nothing, for any other signal or while CMD
 * runs. */
static bool run_after_cmd(struct run_ctx *r, const struct procfs_pids *tree, int sig,
			  bool terminal)
{
	if (!r->have_status || (sig != SIGINT && sig != SIGQUIT))
		return false;
	size_t left = win_left(&r->win);
	if (tree->n) {
		run_linger_signal(r, tree, sig, terminal);
	} else if (left && !r->win.skipping) {
		fprintf(stderr, "prof: skipping the %zu window result%s left\n", left,
			left == 1 ? "" : "s");
		win_skip(&r->win);
	}
	return true;
}

/* The terminal's Ctrl-C or Ctrl-\ reached prof's process group. The
 * program's processes that left it (setsid, daemons) it did not reach:
 * when none is left in the group, they get it from prof. */
static void run_forward_terminal(struct run_ctx *r, int sig)
{
	if (sig != SIGINT && sig != SIGQUIT)
		return;
	struct procfs_pids tree = { 0 };
	if (linger_tree(r->win.child, &tree) == 0 && !run_after_cmd(r, &tree, sig, true) &&
	    !linger_any_in_group(&tree, getpgrp()))
		for (size_t i = 0; i < tree.n; i++)
			kill(tree.v[i], sig);
	procfs_pids_free(&tree);
}

/* Passes on a signal sent to prof alone. Not one from the terminal, nor
 * one sent by a process of the tree (`kill 0` in the program): prof's
 * process group, the program's too, has it already (but see
 * run_forward_terminal). prof's own window parse is left out. */
static void run_forward(struct run_ctx *r, const struct sig_got *g)
{
	if (!g->by_process) {
		run_forward_terminal(r, g->signo);
		return;
	}
	struct procfs_pids tree = { 0 };
	int rc = linger_tree(r->win.child, &tree);
	if (rc) {
		char name[32];
		fprintf(stderr, "prof: warning: cannot list the program's processes (%s): %s %s\n",
			strerror(-rc), sig_name(g->signo, name, sizeof name),
			r->have_status ? "not passed on" : "passed on to the program alone");
		if (!r->have_status)
			kill(r->child.pid, g->signo);
	} else if (!run_pids_have(&tree, g->sender) && !run_after_cmd(r, &tree, g->signo, false)) {
		run_send_tree(&tree, g->signo);
	}
	procfs_pids_free(&tree);
}

/* What CMD left running, which prof waits for (run_linger_look). */
static void run_linger_say(struct run_ctx *r, const struct procfs_pids *tree)
{
	struct linger_state *l = &r->linger;
	char names[256], how[48];
	linger_names(tree, names, sizeof names, l->first_name);
	l->first = tree->v[0];
	l->said = true;
	bool one = tree->n == 1;
	if (WIFEXITED(r->status))
		snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(r->status));
	else
		sig_name(WTERMSIG(r->status), how, sizeof how);
	const char *it = one ? "it" : "them";
	fprintf(stderr, "prof: %s ended (%s) and left %zu process%s running: %s. prof waits for "
		"%s, to record %s whole; Ctrl-C (or kill -INT %d) stops %s and a second one kills "
		"%s, then prof parses\n", r->cmd[0], how, tree->n, one ? "" : "es", names, it, it,
		(int)getpid(), it, it);
}

/* Once CMD has ended and LINGER_QUIET_NS has passed, says what prof
 * still waits for: what CMD left running, or else prof's own window
 * parses (looked at each second until said). */
static void run_linger_look(struct run_ctx *r, uint64_t now)
{
	struct linger_state *l = &r->linger;
	if (!l->cmd_end_ns || l->said || l->windows_said || now < l->next_look_ns)
		return;
	l->next_look_ns = now + 1000000000ull;
	struct procfs_pids tree = { 0 };
	int rc = linger_tree(r->win.child, &tree);
	if (!rc && tree.n) {
		run_linger_say(r, &tree);
	} else if (!rc && win_left(&r->win)) {
		win_say_left(&r->win, stderr, 1);
		l->windows_said = true;
	}
	procfs_pids_free(&tree);
}

/* Reaps whatever has ended; true once no child is left. Every descendant
 * counts: prof is a child subreaper, so orphans of the tree, even those
 * that left for a session of their own, are its children. */
static bool run_reap(struct run_ctx *r)
{
	for (;;) {
		int st;
		pid_t p = waitpid(-1, &st, WNOHANG);
		if (p < 0 && errno == EINTR)
			continue;
		if (p <= 0)
			return p < 0;   /* ECHILD: the whole tree is gone */
		if (win_reaped(&r->win, p, st) || p != r->child.pid)
			continue;
		r->status = st;
		r->have_status = true;
		r->linger.cmd_end_ns = raw_clock_ns(CLOCK_MONOTONIC);
		r->linger.next_look_ns = r->linger.cmd_end_ns + LINGER_QUIET_NS;
	}
}

/* An accepted --dynamic edit: its result, with "analyse": true, goes to
 * its prof_dir. */
static void run_dyn_poll(struct run_ctx *r)
{
	if (r->dynamic_dir && dyn_poll(&r->dyn, r->rd.control) == 1 && r->dyn.last_analyse &&
	    win_dynamic_out(&r->win, r->dyn.activations, r->dyn.last_prof_dir))
		fprintf(stderr, "prof: warning: out of memory: activation %u's result goes to "
			"%s/cycles\n", r->dyn.activations, r->rd.path);
}

/* --storage-limit reached while the program runs: said at once, for a
 * long job whose profile is capped from here on (and again at the end,
 * with the records lost). */
static void run_storage_look(struct run_ctx *r)
{
	if (r->storage_said || !r->cfg.storage_limit_mb || !rundir_budget_reached(&r->rd, NULL))
		return;
	r->storage_said = true;
	fprintf(stderr, "prof: storage limit of %u MB reached: recording stops here (what "
		"follows is counted as lost); %s runs on\n", r->cfg.storage_limit_mb,
		r->cmd ? r->cmd[0] : "the program");
}

/* A full filesystem met while the program runs: said at once, for a long
 * job whose streams stop one by one as each needs room (and again at the
 * end, with the records lost). */
static void run_disk_look(struct run_ctx *r)
{
	const struct raw_control *c = r->rd.control;
	if (r->disk_said || !c || (!__atomic_load_n(&c->streams_disk_full, __ATOMIC_RELAXED) &&
				   !__atomic_load_n(&c->streams_no_space, __ATOMIC_RELAXED)))
		return;
	r->disk_said = true;
	fprintf(stderr, "prof: the filesystem holding %s is full (no space left on device): "
		"streams stop recording as they need room there, and what they drop is counted "
		"as lost; free space there now to keep the rest; %s runs on\n", r->rd.path,
		r->cmd ? r->cmd[0] : "the program");
}

/* What prof says while the program runs of the recording's room. */
static void run_room_look(struct run_ctx *r)
{
	run_storage_look(r);
	run_disk_look(r);
}

void run_loop(struct run_ctx *r)
{
	while (!run_reap(r)) {
		uint64_t now = raw_clock_ns(CLOCK_MONOTONIC);
		run_fire_timers(r, now);
		struct timespec ts;
		struct pollfd pfd = { .fd = r->sig.fd, .events = POLLIN };
		ppoll(&pfd, 1, run_timeout(r, now, &ts), NULL);
		run_fire_timers(r, raw_clock_ns(CLOCK_MONOTONIC));
		run_dyn_poll(r);
		win_poll(&r->win);
		struct sig_got g;
		while (sig_next(&r->sig, &g) > 0)
			if (sig_is_forwarded(g.signo))
				run_forward(r, &g);
		run_linger_look(r, raw_clock_ns(CLOCK_MONOTONIC));
		run_room_look(r);
	}
}

/* prof session: until the program closes the pipe it holds (it finished,
 * or died), or prof is told to stop. Window parses are reaped meanwhile. */
void run_session_loop(struct run_ctx *r)
{
	for (bool end = false; !end;) {
		run_reap(r);
		uint64_t now = raw_clock_ns(CLOCK_MONOTONIC);
		run_fire_timers(r, now);
		struct timespec ts;
		struct pollfd pfd[2] = { { .fd = r->sig.fd, .events = POLLIN },
					 { .fd = STDIN_FILENO, .events = POLLIN } };
		ppoll(pfd, 2, run_timeout(r, now, &ts), NULL);
		char buf[256];
		if (pfd[1].revents & (POLLIN | POLLHUP | POLLERR))
			end = read(STDIN_FILENO, buf, sizeof buf) <= 0 || (pfd[1].revents & POLLNVAL);
		run_fire_timers(r, raw_clock_ns(CLOCK_MONOTONIC));
		run_dyn_poll(r);
		win_poll(&r->win);
		struct sig_got g;
		while (sig_next(&r->sig, &g) > 0)
			end |= sig_is_forwarded(g.signo);
		run_room_look(r);
	}
}
