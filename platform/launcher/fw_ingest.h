/*
 * Torch's own operator flush files (PROF_OPS_KINETO_SAVE, ingest/
 * parse_kineto.h) converted while the program runs, by a launcher thread,
 * into raw/<image>/fwk.raw, and removed: on disk they take about eight
 * times what the records do, and a long run would fill it. What is left
 * at the end (a flush the thread could not read, one written as the
 * program ended) the parse converts or names.
 */
#ifndef PROF_FW_INGEST_H
#define PROF_FW_INGEST_H

#include <stdint.h>

struct fw_ingest;

/* How often the launcher looks: a flush every 10 steps of ~2 ms makes
 * one every 20 ms, ~700 KB each on a small MLP. */
#define FW_INGEST_MS 500

/* Looks into raw/ (raw_fd) every interval_ms; a full filesystem that
 * stops a stream it writes is counted in *disk_full (NULL: not counted).
 * 0 or a negative errno. */
int fw_ingest_start(struct fw_ingest **out, int raw_fd, uint32_t interval_ms,
		    uint64_t *disk_full);

/* A last look, the streams closed, the thread gone. Returns the flushes
 * converted over the run. NULL: nothing. */
uint64_t fw_ingest_stop(struct fw_ingest *f);

#endif
