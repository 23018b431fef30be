/*
 * Which recorded step a moment of a process falls in: for the outputs
 * that name a step (kernel_details.csv, communication*.json), built once
 * the parse knows every step. Memory: a copy of the steps.
 */
#ifndef PROF_OUT_STEP_FIND_H
#define PROF_OUT_STEP_FIND_H

#include <stddef.h>
#include <stdint.h>
#include "outputs/tables/out_step_trace.h"

struct out_step_find {
	struct out_step *v;      /* sorted by (pid, start) */
	size_t n;
	const uint64_t *want;    /* --step-list, or NULL: every step */
	size_t nwant;
};

/* 0 or -ENOMEM (then nothing is found). */
int out_step_find_init(struct out_step_find *f, const struct out_step *steps, size_t n);
/* The number of pid's step whose [start, end) holds ns, or -1. */
int64_t out_step_find(const struct out_step_find *f, int32_t pid, uint64_t ns);
/* Whether a step found (or -1: none) is one --step-list asked for. */
int out_step_find_wanted(const struct out_step_find *f, int64_t step);
/* Whether `step` is among v[0..n). */
int out_step_listed(const uint64_t *v, size_t n, uint64_t step);
void out_step_find_free(struct out_step_find *f);

#endif
