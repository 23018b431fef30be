/*
 * The run directory (share/prof/doc/raw-format.md says what raw/ holds):
 *   <output>/<host>_<pid>_<YYYYmmddHHMMSSmmm>_prof/{raw/launcher, logs}
 * plus raw/control, the page through which the launcher switches recording
 * on and off for every agent (raw/raw_control.h).
 *
 * Everything below the output path is created relative to directory
 * descriptors opened with O_NOFOLLOW, so a symbolic link planted anywhere in
 * the run directory is never followed; the output path itself is refused
 * when it is a symbolic link. Directories are 0750 and files 0640 whatever
 * the umask.
 */
#ifndef PROF_RUNDIR_H
#define PROF_RUNDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "raw/raw_control.h"
#include "raw/raw_writer.h"

#define RUNDIR_INFO_FILE "profiler_info.json"
#define RUNDIR_ERR_MAX 512

struct rundir {
	char *path;                  /* absolute */
	int fd;                      /* the run directory */
	int raw_fd;                  /* raw/ */
	int launcher_fd;             /* raw/launcher/ */
	struct raw_control *control; /* raw/control, mapped shared */
	size_t control_len;
	/* raw/launcher/switches.raw: each switch of `recording`, so the parse
	 * knows when recording began in processes whose agents saw it only
	 * as a changed page. */
	struct raw_writer switches;
};

/* "<host>_<pid>_<YYYYmmddHHMMSSmmm>_prof" for wall time `real_ns` (local
 * time); characters of `host` that do not belong in a file name become
 * '_'. Returns snprintf's count. */
int rundir_name(char *buf, size_t len, const char *host, pid_t pid, uint64_t real_ns);

/* Checks the output path (creating it and its parents when missing):
 * refuses a symbolic link, a non-directory and one we may not write to.
 * 0, or -errno with `err` naming the path and what to do. */
int rundir_check_output(const char *output, char *err, size_t errlen);

/* Creates the run directory `name` under `output` (which must pass
 * rundir_check_output) with raw/, raw/launcher/, logs/ and raw/control,
 * whose `recording` starts as given. 0, or -errno with `err` filled;
 * on error nothing stays open (what was made stays on disk). */
int rundir_create(struct rundir *rd, const char *output, const char *name,
		  bool recording, char *err, size_t errlen);

/* Switches recording for the whole tree; bumps the generation on a change. */
void rundir_set_recording(struct rundir *rd, bool on);

/* --storage-limit: the budget of raw chunk bytes every agent of the tree
 * shares (0: none). Set before the program starts. */
void rundir_set_budget(struct rundir *rd, uint64_t bytes);

/* Whether the tree asked for more raw chunk bytes than the budget allowed
 * (some stream then stopped recording); *used gets the bytes asked for. */
bool rundir_budget_reached(const struct rundir *rd, uint64_t *used);

/* How many programs the run's processes started with an environment
 * without prof's variables (raw_control.execs_apart), and the first's
 * path and pid (path "" when the page does not say). */
uint32_t rundir_execs_apart(const struct rundir *rd, char *path, size_t len, int *pid);

/* The same read from a run directory's raw/control (the parse): 1 reached,
 * 0 not or no budget, with *budget the limit (0: none); -1 unreadable. */
int rundir_budget_of(const char *run_dir, uint64_t *budget);

/* Whether a run directory's `prof run` (or prof session) still holds it:
 * 1 it does (the run is going), 0 it does not (it ended, or was killed),
 * -errno when that cannot be told (no locks on this file system). */
int rundir_live(const char *run_dir);

/* The tree is gone: closes the launcher's switch stream so the parse sees
 * it ended cleanly. rundir_close does it too, for the error paths. */
void rundir_finish(struct rundir *rd);

void rundir_close(struct rundir *rd);

#endif
