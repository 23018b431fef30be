/*
 * A table whose rows carry a step that is known only when the step ends
 * (kernel_details.csv's Step Id, operator_details.csv's): rows wait, in
 * memory, in the order they came, and go to the file as the model says
 * their step is settled (out_stepwait_settle). Rows that would wait for
 * more than `max_wait` bytes (a process that never marks steps, a very
 * long step) go to a spill (out_spill.h) instead, with every row after
 * them, and are written at the end: the file is the same either way.
 * Memory: at most max_wait.
 */
#ifndef PROF_OUT_STEPWAIT_H
#define PROF_OUT_STEPWAIT_H

#include <stdint.h>
#include <stdio.h>
#include "common/csv_out.h"
#include "outputs/out_file.h"
#include "outputs/out_spill.h"
#include "outputs/out_step_find.h"

/* Rows waiting for their step: each a struct out_stepwait_hdr, then its
 * text; [head, len) of wait. */
struct out_stepwait_hdr {
	int32_t pid;
	uint32_t len;
	uint64_t ns;
};

/* A row's text, its step left out, into c. */
typedef void (*out_stepwait_render_fn)(struct csv *c, const void *row, const void *ctx);

struct out_stepwait {
	struct csv *oc;              /* the table's writer, header written */
	enum out_spill_step where;   /* where the step goes in a row */
	size_t max_wait;
	struct csv c;                /* a row's text: in memory, or into the spill */
	unsigned char *wait;
	size_t head, len, cap;
	int spilling;                /* rows go to the spill from now on */
	int failed;                  /* a row could not be kept: the -errno why */
	char *dir;
	struct out_file spill;
};

/* Rows go to oc (the caller's, open until out_stepwait_finish); the spill,
 * if one is needed, is made in dir. 0 or -ENOMEM. */
int out_stepwait_init(struct out_stepwait *w, struct csv *oc, const char *dir,
		      enum out_spill_step where, size_t max_wait);
/* A row of process pid whose step holds ns, rendered by `render`. */
void out_stepwait_row(struct out_stepwait *w, int32_t pid, uint64_t ns,
		      out_stepwait_render_fn render, const void *row, const void *ctx);

/* A waiting row's step: OUT_STEPWAIT while it may still change, else its
 * number or -1 (in no step), as out_step_find will say at the end. */
#define OUT_STEPWAIT INT64_MIN
typedef int64_t (*out_stepwait_step_fn)(void *ctx, int32_t pid, uint64_t ns);

/* Writes the waiting rows, oldest first, while `step` knows their step;
 * those of steps --step-list (want, nwant; NULL: all) leaves out go. */
void out_stepwait_settle(struct out_stepwait *w, out_stepwait_step_fn step, void *ctx,
			 const uint64_t *want, size_t nwant);
/* Writes the rest (f knows every step): the waiting rows to oc, then
 * finishes oc and copies the spill's rows after them to out. 0 or a
 * negative errno. */
int out_stepwait_finish(struct out_stepwait *w, FILE *out, const struct out_step_find *f);
void out_stepwait_free(struct out_stepwait *w);

#endif
