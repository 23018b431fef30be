/*
 * Rows that need their step, which is known only when it ends: they wait
 * in a scratch file, each a binary key (pid, ns) then the CSV row, and are
 * written out once the parse has seen every step (kernel_details.csv's
 * Step Id; --step-list for operator_details.csv). Memory: none per row.
 */
#ifndef PROF_OUT_SPILL_H
#define PROF_OUT_SPILL_H

#include <stdint.h>
#include <stdio.h>
#include "common/csv_out.h"
#include "outputs/out_file.h"
#include "outputs/out_step_find.h"

/* Where a row's step goes as it is written out. */
enum out_spill_step {
	OUT_STEP_NONE,     /* nowhere: the step only picks the rows */
	OUT_STEP_FIRST,    /* a column before the row's own */
	OUT_STEP_LAST,     /* a column after them */
};

/* Opens the scratch file in dir (out_file_abort closes it). 0 or a
 * negative errno. */
int out_spill_open(struct out_file *spill, const char *dir);
/* Starts a row (of c, writing to the spill): the process and moment that
 * pick its step. */
void out_spill_key(struct csv *c, int32_t pid, uint64_t ns);
/* The Step Id field and its comma into b (24 bytes): empty for -1. */
size_t out_spill_step_field(char *b, int64_t step);
/* A row's end for OUT_STEP_LAST: a comma, the Step Id field and the
 * newline into b (24 bytes). */
size_t out_spill_step_end(char *b, int64_t step);
/* Copies the rows of the steps f wants to out, each with its step where
 * `where` says (empty outside every step). 0 or -EIO. */
int out_spill_replay(FILE *spill, FILE *out, const struct out_step_find *f,
		     enum out_spill_step where);

#endif
