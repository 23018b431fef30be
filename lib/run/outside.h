/*
 * Commands whose work runs outside prof's process tree: a cluster
 * launcher (srun), a batch queue (sbatch), a remote shell (ssh), a
 * container (docker). `prof run -- srun python train.py` records srun
 * and nothing of the training; the user hears where prof goes instead.
 */
#ifndef PROF_RUN_OUTSIDE_H
#define PROF_RUN_OUTSIDE_H

/* What to say of running cmd0 (argv[0], a path or a name) under prof, or
 * NULL when its work runs in the tree. MPI's launchers start their local
 * ranks as children, so theirs is said only when the parse saw no step
 * (steps_seen 0; 1: some, -1: not parsed). */
const char *run_outside_tree(const char *cmd0, int steps_seen);

#endif
