/*
 * The rank of each process image of a run: the rank its RAW_REC_PROCESS
 * record carries (the agent takes it from RANK, OMPI_COMM_WORLD_RANK,
 * PMI_RANK or SLURM_PROCID at load, or from the program's
 * init_process_group later, then in a stream of its own, rank.raw). A
 * run whose images carry several ranks (one `prof run -- torchrun ...`,
 * a program that calls torch.multiprocessing.spawn) is parsed once per
 * rank as well.
 */
#ifndef PROF_PARSE_RANK_H
#define PROF_PARSE_RANK_H

#include <stdint.h>

#include "ingest/parse_discover.h"

/* ranks[i]: the rank of s->v[i]'s image, -1 for none (and the launcher's
 * streams). Only the first records of each stream are read, until the
 * image's PROCESS record is found. 0, or -ENOMEM. */
int parse_src_ranks(const struct parse_srcs *s, int64_t **ranks);

/* Keeps the sources of the images of `rank` and the launcher's, frees the
 * others. 0, or -ENOMEM. */
int parse_srcs_keep_rank(struct parse_srcs *s, int64_t rank);

/* The rank the latest image of `pid` under raw_dir recorded (its PROCESS
 * record: the agent's own reading of RANK and the like); -1 for none, or
 * when pid has no stream there. */
int64_t parse_raw_pid_rank(const char *raw_dir, long pid);

/* The distinct ranks (>= 0) of the images under raw_dir, sorted, in
 * *out (malloc'd, NULL when none). 0, or a negative errno. */
int parse_raw_ranks(const char *raw_dir, int64_t **out, size_t *n);

#endif
