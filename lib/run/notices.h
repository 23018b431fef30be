/*
 * Notices: what a process of the run wants the user to hear when the run
 * ends (prof stepped aside for the program's own profiler, that profiler
 * gets no CUDA activity, ...). The agent and the Python hooks write each as
 * a line holding "notice: TEXT" in logs/agent-<pid>.log; the launcher
 * gathers them once the program has ended, says each distinct text once on
 * the terminal with the processes that said it, and keeps them in
 * profiler_info.json (end_info.notices) for `prof parse` and `prof stats`.
 */
#ifndef PROF_RUN_NOTICES_H
#define PROF_RUN_NOTICES_H

#include <stddef.h>

#define RUN_NOTICE_MARK "notice: "
/* How the Python hooks begin a notice that their process never stepped
 * (_prof_hooks/__init__.py). It speaks of that process alone: in a run
 * where other processes stepped (Hogwild's parent evaluating after its
 * workers trained) it is moot, and not said. */
#define RUN_NOTICE_NO_STEPS "no steps were seen"
#define RUN_NOTICES_MAX 32     /* distinct texts kept; more are counted */

struct run_notice {
	char *text;
	int pid;            /* the first process that said it */
	unsigned processes; /* how many said it */
};

struct run_notices {
	struct run_notice v[RUN_NOTICES_MAX];
	size_t n;
	size_t dropped;     /* distinct texts past RUN_NOTICES_MAX */
};

/* Reads <run_dir>/logs/agent-*.log. 0, or -errno (ENOMEM); a missing or
 * unreadable log directory is no notice. */
int run_notices_collect(const char *run_dir, struct run_notices *out);

/* Adds one text said by `pid` (deduplicated). 0 or -ENOMEM. */
int run_notices_add(struct run_notices *ns, const char *text, size_t len, int pid);

void run_notices_free(struct run_notices *ns);

/* Whether a notice's text is one to leave unsaid in a run that has
 * steps (RUN_NOTICE_NO_STEPS). */
int run_notice_moot(const char *text, int run_has_steps);

#endif
