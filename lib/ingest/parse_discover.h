/*
 * Finding a run's streams: <run>/raw/<pid>.<n>/<name>.raw (one directory per
 * process image; exec keeps the pid, so n counts the images of a pid; a
 * bare <pid>/ is read as <pid>.0) and <run>/raw/launcher/<name>.raw (the
 * launcher's samplers). Anything else under raw/ is ignored.
 * Sources come sorted (pid, n, file name; the launcher last), so the parse
 * is deterministic.
 */
#ifndef PROF_PARSE_DISCOVER_H
#define PROF_PARSE_DISCOVER_H

#include <stddef.h>
#include <stdio.h>

struct parse_src {
	char *path;          /* the .raw file */
	char *image;         /* "<pid>.<n>" or "launcher" */
	long pid;            /* from the directory name; -1 for the launcher */
	long n;              /* image number of that pid */
	int launcher;
};

struct parse_srcs {
	struct parse_src *v;
	size_t n, cap;
};

/* A process image's directory name, "<pid>.<n>" or "<pid>": 0 and the
 * numbers, or -1. */
int parse_image_name(const char *s, long *pid, long *n);

/* Fills `out`. Returns 0, or a negative errno when raw_dir can't be read. */
int parse_discover(const char *raw_dir, struct parse_srcs *out, FILE *log);
void parse_srcs_free(struct parse_srcs *s);

#endif
