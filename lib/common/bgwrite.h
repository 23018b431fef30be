/*
 * A background writer: full buffers go to a thread that writes them to a
 * FILE while the caller fills the next one. Writing trace_view.json is
 * mostly the kernel copying pages (a third of a parse's time); on a machine
 * with a second core that now overlaps with building the next megabyte.
 * One buffer is written at a time, in the order given; while a writer runs
 * the caller must not touch the FILE.
 */
#ifndef PROF_BGWRITE_H
#define PROF_BGWRITE_H

#include <stddef.h>
#include <stdio.h>

struct bgw;

/* A writer to f with two buffers of cap bytes; *buf gets the first one to
 * fill. NULL (errno set) when a thread or memory cannot be had. */
struct bgw *bgw_start(FILE *f, size_t cap, char **buf);
/* Hands over `full` (len bytes, from this writer) and returns an empty
 * buffer, once the writer is done with the one before. */
char *bgw_swap(struct bgw *w, char *full, size_t len);
/* Writes what is pending, stops the thread, frees the writer; 0, or -1
 * when a write failed. */
int bgw_stop(struct bgw *w);

#endif
