/*
 * What prof stats and prof diff say and do alike of the runs they are
 * given: a directory that holds runs rather than being one (./prof_data
 * after a few `prof run`s), its runs named for the user to pick; an
 * archive, read from a temporary directory.
 */
#ifndef PROF_CMD_RUNS_H
#define PROF_CMD_RUNS_H

#include <stddef.h>
#include <stdio.h>

/* "CMD: DIR holds N runs; name one (oldest first):" and the runs, the
 * newest last and marked, at most 8 of them; `runs` is sorted by the time
 * in their names. */
void cmd_list_runs(FILE *out, const char *cmd, const char *dir, char **runs, size_t n);

/* Extracts `archive` into a fresh temporary directory ($TMPDIR, else
 * /tmp): *tmp that directory, *dir the run directory in it (both
 * malloc'd; *tmp set as soon as it exists, to be removed). 0, or -1 after
 * saying why as "CMD: ...". */
int cmd_unpack_temp(const char *cmd, const char *archive, char **tmp, char **dir);
/* rm -rf DIR. */
void cmd_remove_tree(const char *dir);

#endif
