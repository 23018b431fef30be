/*
 * --dynamic DIR: recording switched on while the job runs by editing
 * DIR/profiler_config.json (the Ascend dynamic_profile shape). The launcher
 * writes the template, watches the file, validates each edit and publishes
 * an accepted one on the control page; every agent starts its window at its
 * next step. Accepted and rejected edits are logged in DIR/prof_dynamic.log.
 */
#ifndef PROF_DYNAMIC_H
#define PROF_DYNAMIC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "config/config.h"
#include "raw/raw_control.h"

#define DYN_CONFIG_FILE "profiler_config.json"
#define DYN_LOG_FILE    "prof_dynamic.log"

struct dyn_watch {
	char *dir;
	char *path;                /* DIR/profiler_config.json */
	FILE *log;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	off_t size;
	uint32_t activations;
	/* The last accepted activation's "analyse": true result directory
	 * (its prof_dir, absolute; NULL: RUN_DIR/cycles), for the launcher's
	 * window queue (run/windows.h). */
	bool last_analyse;
	char *last_prof_dir;
};

/* What an accepted edit asks for. */
struct dyn_request {
	uint32_t active;           /* steps recorded */
	uint32_t warmup;           /* steps warmed up before them */
	uint32_t start_step;       /* the first (warm-up) step; 0: the next step */
	uint32_t flags;            /* PROF_FW_* */
	int is_rank;               /* only the ranks in `ranks` record */
	uint64_t ranks[RAW_DYN_RANK_WORDS];  /* rank_list, bit r for rank r */
	/* Checked and kept, not acted on here: the activation's own result
	 * (a window: lib/run/windows.h) takes them from here. prof_dir: NULL
	 * when absent; analyse: -1 when absent. */
	char *prof_dir;
	int analyse;
	/* experimental_config applied onto the defaults, as --config applies
	 * it (export_type, data_simplification, ...), and with_flops,
	 * profile_memory, with_modules; exp.notes: what cannot act here.
	 * `exp_keys` names the sub-keys given that map onto prof's keys,
	 * which act for the whole run only ("a, b"; "" for none). */
	bool has_exp;
	struct prof_config exp;
	char exp_keys[256];
};

/* Creates DIR (0750) and writes the template from `cfg`, opens the log.
 * 0, or -1 with `err` naming the path. */
int dyn_start(struct dyn_watch *w, const char *dir, const struct prof_config *cfg,
	      char *err, size_t errlen);

/* Checks the file; when it changed, validates it and, if it is good,
 * publishes it on `ctl`. Returns 1 for a published activation, 0 for no
 * change or a rejected edit (logged). Never fails the run. */
int dyn_poll(struct dyn_watch *w, struct raw_control *ctl);

/* Parses and checks one edit. 0, or -1 with the reason in `why`. Either
 * way `out` is then freed with dyn_request_free. */
int dyn_parse(const char *text, struct dyn_request *out, char *why, size_t len);
void dyn_request_free(struct dyn_request *q);

void dyn_stop(struct dyn_watch *w);

#endif
