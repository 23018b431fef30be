/*
 * A result per recording window, while the job runs: torch's on_trace_ready,
 * paddle's RECORD_AND_RETURN, a --dynamic activation with "analyse": true,
 * `prof run --cycle-results`. Whoever sees a window end (the in-script
 * profiler objects of share/prof/python/prof, the agent at a schedule's
 * boundary) writes a request, RUN_DIR/windows/<name>.req (JSON, see
 * win_request); the launcher (prof run, or prof session for a Python program
 * that profiles itself) runs `prof window REQ` for each, one at a time, in a
 * process group of its own at the lowest priority, never on the program's
 * threads. `prof window` parses the window's steps of the requesting
 * process's rank (as its agent recorded it) into the request's `out`
 * directory and writes
 * <name>.done (JSON: status, out) beside the request, which a waiting
 * export_chrome_trace() reads.
 */
#ifndef PROF_RUN_WINDOWS_H
#define PROF_RUN_WINDOWS_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define WIN_DIR         "windows"
#define WIN_REQ_SUFFIX  ".req"
#define WIN_DONE_SUFFIX ".done"

/* A request's content. */
struct win_request {
	char *out;                 /* absolute; NULL: the launcher's default */
	uint64_t first, last;      /* the window's steps (1-based, inclusive); 0, 0 (no
				    * "steps"): all the rank recorded */
	int pid;                   /* the requesting process: its rank is the one its
				    * agent recorded (prof window reads it from raw/) */
	uint32_t window;           /* the process's window number */
	char *label;               /* who asked ("prof.profile", "schedule", ...) */
	uint32_t activation;       /* the --dynamic activation it ends; 0: none */
	char *export_type;         /* JSON list ("[\"text\",\"db\"]"); NULL: the run's */
};

/* Reads and checks a request file. 0, or -1 with the reason in `why`. */
int win_request_read(const char *path, struct win_request *r, char *why, size_t len);
void win_request_free(struct win_request *r);

struct win_queue {
	char *run_dir;
	char *dir;                 /* RUN_DIR/windows */
	char *prof_exe;            /* this prof, run as `prof window REQ` */
	char *default_out;         /* for requests without `out` */
	char **seen;               /* request names taken, in order */
	size_t nseen, cap;
	size_t next;               /* seen[next] is the next to parse */
	pid_t child;               /* `prof window` running; 0: none */
	uint32_t ok, failed;
	uint32_t skipped;          /* left unwritten at the user's word (win_skip) */
	int skipping;              /* win_skip was called: nothing more starts */
	char *last_out;            /* the last result written, for the report */
	char *first_failed;        /* the first failed request, for the report */
	char **dyn_out;            /* by --dynamic activation: its prof_dir, or NULL */
	size_t ndyn_out;
};

/* Makes RUN_DIR/windows. `default_out`: where requests without `out` go
 * (NULL: RUN_DIR/cycles). 0, or -errno with `err` filled. */
int win_start(struct win_queue *q, const char *run_dir, const char *default_out,
	      char *err, size_t len);

/* --dynamic activation `activation` has its result go to `dir` (its
 * prof_dir). 0 or -ENOMEM. */
int win_dynamic_out(struct win_queue *q, uint32_t activation, const char *dir);

/* Takes new requests and, when none is running, starts the next parse. */
void win_poll(struct win_queue *q);

/* The launcher reaped `pid`: 1 when it was a window's parse (the next one
 * starts), 0 otherwise. */
int win_reaped(struct win_queue *q, pid_t pid, int status);

/* Requests taken and not yet parsed, the one running included. */
size_t win_left(const struct win_queue *q);

/* How many window results are still to be written, said on `out`, and
 * (skippable) that a Ctrl-C skips them (win_skip). */
void win_say_left(const struct win_queue *q, FILE *out, int skippable);

/* The user does not want the results left (a Ctrl-C once the program
 * has ended): the parse running is stopped, none starts any more, and
 * each request left gets a .done saying it was skipped. */
void win_skip(struct win_queue *q);

/* Once the program has ended: every request left, parsed (blocking);
 * a drain that takes more than a second says on `say` (NULL: nothing) how
 * many are left. */
void win_drain(struct win_queue *q, FILE *say);

/* One line per outcome on `out` ("N window results in DIR"), nothing when
 * no window asked for one. */
void win_report(const struct win_queue *q, FILE *out);

void win_stop(struct win_queue *q);

#endif
