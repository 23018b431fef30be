/*
 * Work that runs outside prof's reach. Commands whose work runs outside
 * prof's process tree: a cluster launcher (srun), a batch queue
 * (sbatch), a remote shell (ssh), a container (docker). `prof run -- srun
 * python train.py` records srun and nothing of the training; the user
 * hears where prof goes instead. And programs started inside the tree
 * with an environment of their own, without prof's variables.
 */
#ifndef PROF_RUN_OUTSIDE_H
#define PROF_RUN_OUTSIDE_H

#include <stddef.h>
#include <stdint.h>

/* What to say of running cmd0 (argv[0], a path or a name) under prof, or
 * NULL when its work runs in the tree. MPI's launchers start their local
 * ranks as children, so theirs is said only when the parse saw no step
 * (steps_seen 0; 1: some, -1: not parsed). */
const char *run_outside_tree(const char *cmd0, int steps_seen);

/* The note on `n` programs started with an environment without prof's
 * variables, the first at `path` (raw_control.execs_apart): into buf. */
void run_apart_note(char *buf, size_t len, const char *path, uint32_t n);

#endif
