/*
 * Which recorded step a moment of a process falls in: for the outputs
 * that name a step (kernel_details.csv, communication*.json), built once
 * the parse knows every step. Memory: a copy of the steps.
 */
#ifndef PROF_OUT_STEP_FIND_H
#define PROF_OUT_STEP_FIND_H

#include <stddef.h>
#include <stdint.h>
#include "parse/out_step_trace.h"

struct out_step_find {
	struct out_step *v;      /* sorted by (pid, start) */
	size_t n;
};

/* 0 or -ENOMEM (then nothing is found). */
int out_step_find_init(struct out_step_find *f, const struct out_step *steps, size_t n);
/* The number of pid's step whose [start, end) holds ns, or -1. */
int64_t out_step_find(const struct out_step_find *f, int32_t pid, uint64_t ns);
void out_step_find_free(struct out_step_find *f);

#endif
