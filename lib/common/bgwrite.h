/*
 * A background writer: full buffers go to a thread that writes them to a
 * FILE while the caller fills the next one, for the largest outputs
 * (trace_view.json, kernel_details.csv, operator_details.csv). Where the
 * file system allows, the thread writes with direct I/O (fsutil.h
 * fs_direct_on): the bytes go from these buffers to the disk, without the
 * page cache's copy and bookkeeping, and the disk's time overlaps the
 * parse's. Elsewhere it writes through the page cache, flushed behind.
 * Buffers are written one at a time, in the order given; while a writer
 * runs the caller must not touch the FILE.
 */
#ifndef PROF_BGWRITE_H
#define PROF_BGWRITE_H

#include <stddef.h>
#include <stdio.h>

/* Buffers per writer: the caller fills one while the others wait for the
 * disk (measured, one core, 10 M events: four were as fast as eight and
 * sixteen; with two the parse waited for the disk a third of its time). */
#define BGW_BUFS 4
/* A writer's buffer size (a multiple of fsutil.h's FS_DIRECT_ALIGN). */
#define BGW_BUF (1u << 20)

struct bgw;

/* A writer to f with BGW_BUFS buffers of cap bytes (a multiple of
 * FS_DIRECT_ALIGN for direct I/O); what f's stdio buffer holds is written
 * first. *buf gets the first buffer to fill, holding the n bytes of
 * `waiting` (n <= cap: what the caller had not written yet; moved, not
 * written, they keep f's offset a whole block for direct I/O). NULL
 * (errno set) when a thread or memory cannot be had. */
struct bgw *bgw_start(FILE *f, size_t cap, const char *waiting, size_t n, char **buf);
/* Hands over `full` (*len bytes, this writer's buffer being filled) and
 * returns the next one to fill, which already holds *len bytes: direct
 * I/O writes whole blocks, so the part of one at full's end is carried
 * over. Waits while every other buffer is still to be written. */
char *bgw_swap(struct bgw *w, char *full, size_t *len);
/* Writes the first len bytes of the buffer being filled and all before it,
 * stops the thread (f is the caller's again, its offset past every byte)
 * and frees the writer; 0, or the first failed write's -errno. */
int bgw_stop(struct bgw *w, size_t len);

#endif
