/*
 * A directory that holds runs rather than being one (./prof_data after a
 * few `prof run`s): the runs named for the user to pick, as prof stats and
 * prof diff say it.
 */
#ifndef PROF_CMD_RUNS_H
#define PROF_CMD_RUNS_H

#include <stddef.h>
#include <stdio.h>

/* "CMD: DIR holds N runs; name one (oldest first):" and the runs, the
 * newest last and marked, at most 8 of them; `runs` is sorted by the time
 * in their names. */
void cmd_list_runs(FILE *out, const char *cmd, const char *dir, char **runs, size_t n);

#endif
