/*
 * The one configuration model, filled from five sources, each
 * overriding the last: defaults, MS_PROFILER_OPTIONS (MindSpore's keys),
 * PROF_OPTIONS (JSON), --config FILE (JSON), command-line flags. The JSON
 * sources also take torch_npu's profiler_config.json keys. Every error
 * names the key and the source; a key that is accepted but cannot act
 * here leaves a note (struct cfg_note) that prof says before launching.
 */
#ifndef PROF_CONFIG_H
#define PROF_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cfg_activity { CFG_ACT_CPU = 1u << 0, CFG_ACT_DEVICE = 1u << 1 };
enum cfg_export   { CFG_EXPORT_TEXT = 1u << 0, CFG_EXPORT_DB = 1u << 1 };
enum cfg_host_sys { CFG_HOST_CPU = 1u << 0, CFG_HOST_MEM = 1u << 1,
		    CFG_HOST_DISK = 1u << 2, CFG_HOST_NETWORK = 1u << 3 };
enum cfg_level    { CFG_LEVEL_NONE, CFG_LEVEL_0, CFG_LEVEL_1, CFG_LEVEL_2 };
/* Same order as enum arc_format (archive/archive.h). */
enum cfg_archive  { CFG_ARCHIVE_NONE, CFG_ARCHIVE_TAR_GZ, CFG_ARCHIVE_TAR_ZST, CFG_ARCHIVE_ZIP };

struct cfg_schedule {
	bool set;                 /* false: record every step */
	uint32_t skip_first, wait, warmup, active, repeat;
};

/* Ranks of is_rank/rank_list: 0 to CFG_RANKS - 1 (the control page's
 * RAW_DYN_RANKS, which --dynamic's rank_list shares). */
#define CFG_RANKS 8192u

/* A key set by a source that prof accepts but cannot act on as asked (an
 * Ascend-only counter, a feature of a later release): `key` as the source
 * spelled it, `target` the key it maps onto (a later source setting the
 * same target replaces the note), `why` one line. */
struct cfg_note {
	char *key, *target, *source;
	const char *why;
};
#define CFG_NOTES_MAX 48

struct prof_config {
	char *output_path;            /* "./prof_data" */
	uint32_t activities;          /* CFG_ACT_* ; CPU|DEVICE */
	struct cfg_schedule schedule;
	bool record_shapes, profile_memory, with_stack, with_modules;
	bool analyse;                 /* parse after the run; --no-parse clears it */
	uint32_t export_type;         /* CFG_EXPORT_* ; TEXT */
	enum cfg_level profiler_level;/* Level0 */
	bool data_simplification;     /* false: delete raw/ after a clean parse */
	uint32_t timeline_limit_mb;   /* 0: none */
	char *step_list;              /* NULL: every step; else "3,4,5" (checked) */
	bool pretty;                  /* indented trace_view.json */
	bool report;                  /* PROFILER_OUTPUT/report.html (default true) */
	bool gzip;                    /* trace_view.json.gz instead */
	uint32_t storage_limit_mb;    /* 0: none */
	uint32_t host_sys;            /* CFG_HOST_* ; CPU|MEM */
	enum cfg_archive archive;     /* none; pack the run directory after the parse */
	double delay_s;               /* 0 */
	double duration_s;            /* 0: until the program ends */
	uint32_t sampling_interval_ms;/* 20; 0 switches host sampling off */
	bool start_paused;
	bool cycle_results;           /* a result per schedule cycle, while the job runs */
	bool with_flops;              /* checked; FLOPs are not counted yet */
	bool msprof_tx;               /* true: prof_tx and NVTX marks and ranges record */
	bool is_rank;                 /* only the processes whose rank is in rank_list record */
	char *rank_list;              /* "0,3" (checked); NULL: none */
	bool gc_detect;               /* Python garbage collections as ranges */
	char *mstx_domain_include;    /* NULL, or the only prof_tx/NVTX domains kept: "a,b" */
	char *mstx_domain_exclude;    /* NULL, or the domains dropped (not with include) */
	uint64_t set_keys;            /* bit i: key i of the table was set by a source */
	struct cfg_note notes[CFG_NOTES_MAX];
	size_t nnotes;
};

#define CFG_ERR_MAX 512
struct cfg_error { char msg[CFG_ERR_MAX]; };

void cfg_defaults(struct prof_config *c);
void cfg_free(struct prof_config *c);

/* Applies a JSON object. `source` names it in errors ("PROF_OPTIONS",
 * a file path). Returns 0, or -1 with `err` filled. */
int cfg_apply_json(struct prof_config *c, const char *text, const char *source,
		   struct cfg_error *err);
int cfg_apply_file(struct prof_config *c, const char *path, struct cfg_error *err);

/* Applies MS_PROFILER_OPTIONS' text: a JSON object of MindSpore's keys
 * (start, output_path, memory, hccl, ...), mapped onto prof's. 0, or -1
 * with `err` naming the key and "MS_PROFILER_OPTIONS". */
#define CFG_MS_SOURCE "MS_PROFILER_OPTIONS"
int cfg_apply_ms_options(struct prof_config *c, const char *text, struct cfg_error *err);

/* Sets one key from a flag's text value ("--delay 2" → "delay", "2").
 * Nested keys use a dot: "schedule.wait". */
int cfg_set(struct prof_config *c, const char *key, const char *value,
	    const char *source, struct cfg_error *err);

/* Checks what only the whole configuration can tell (a schedule without
 * `active`). Call after the last source. 0 or -1 with `err` filled. */
int cfg_validate(const struct prof_config *c, struct cfg_error *err);

/* The whole configuration as a JSON object text (malloc'd), for
 * profiler_info.json. */
char *cfg_to_json(const struct prof_config *c);

/* The keys that have notes (c->notes), comma-separated into `buf` (""
 * if none). cmd/ says each note in full. */
void cfg_pending_keys(const struct prof_config *c, char *buf, size_t len);

/* What is recorded in the end: `activities` less DEVICE under
 * profiler_level Level_none. */
uint32_t cfg_activities(const struct prof_config *c);

/* Parses a step list ("3,4,5", "3-5", spaces allowed) into a malloc'd
 * sorted array without duplicates. 0, or -1 with `why` filled. */
int cfg_parse_step_list(const char *s, uint64_t **steps, size_t *n, char *why, size_t len);

/* The keys cfg knows and a one-line help each, for --help and README. */
struct cfg_key_doc { const char *key; const char *type; const char *help; };
const struct cfg_key_doc *cfg_key_docs(void);

/* The other projects' keys that cfg reads, with what each becomes here
 * (`type` holds the key it maps onto, or "note" for one that cannot act
 * here): torch_npu's profiler_config.json keys (JSON sources) and
 * MindSpore's (MS_PROFILER_OPTIONS). NULL-terminated. */
const struct cfg_key_doc *cfg_torch_key_docs(void);
const struct cfg_key_doc *cfg_ms_key_docs(void);

#endif
