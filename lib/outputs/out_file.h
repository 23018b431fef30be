/*
 * An output file: created with PROF_FILE_MODE under a temporary name in its
 * final directory and renamed into place only when complete, so a reader
 * (or a crash of the parse) never leaves a half-written output under the
 * real name.
 */
#ifndef PROF_OUT_FILE_H
#define PROF_OUT_FILE_H

#include <stdio.h>

struct out_file {
	FILE *f;
	char *path;    /* final name */
	char *tmp;     /* name while being written */
	char *vbuf;    /* f's buffer: glibc sizes its own by st_blksize (4 KiB on
			* tmpfs, a system call per 4 KiB) whatever setvbuf asks */
};

/* Opens dir/name.tmp for writing. 0 or a negative errno. */
int out_file_open(struct out_file *o, const char *dir, const char *name);
/* Closes and renames into place. 0 or a negative errno (the file is then
 * removed). `write_err`, the writer's result, forces the failure path: a
 * negative errno (csv_finish's, jo_finish's) is what is returned; a
 * positive value (failed, cause unknown) returns the FILE's own error,
 * else -EIO. */
int out_file_commit(struct out_file *o, int write_err);
/* Closes and removes, for an output abandoned half-way; closes a scratch
 * file. */
void out_file_abort(struct out_file *o);

/* A scratch file in `dir` with no name (removed already, so nothing is left
 * behind whatever happens), open for writing and reading back; for the
 * outputs that gather rows before they can be written. Closed with
 * out_file_abort. 0 or a negative errno. */
int out_file_scratch(struct out_file *o, const char *dir);

/* Writes a small whole file the same way. 0 or a negative errno. */
int out_file_write(const char *dir, const char *name, const char *data, size_t len);

#endif
