/*
 * profiler_metadata.json at the top of the run directory (lib/run/rundir.h): the
 * user's metadata (prof_add_metadata / prof_add_metadata_json) as
 * "key": value, plus "ENV_VARIABLES": profiler_info.json's "env" (the
 * launcher's), under the values a rank's process read itself (its agent
 * records them): those win, unless the processes of the output disagree
 * (several ranks in one combined output), when the launcher's stand alone.
 * A later value for a key replaces the earlier one. A JSON value that does
 * not parse is kept as a string (and said on the log). Keys and values
 * together are capped at OUT_META_CAP bytes, as torch_npu caps them; the
 * rest is dropped and counted.
 */
#ifndef PROF_OUT_META_H
#define PROF_OUT_META_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define OUT_META_CAP (50 * 1024)

struct cJSON;

struct out_meta {
	struct cJSON *user;
	struct cJSON *proc_env;      /* a process's own ENV_VARIABLES, the first */
	int env_disagree;            /* another process said other values */
	size_t bytes;
	uint64_t entries, dropped, bad_json;
};

int out_meta_init(struct out_meta *m);
void out_meta_add(struct out_meta *m, const char *key, const char *value, int is_json,
		  FILE *log);
/* Writes run_dir/profiler_metadata.json; `env` (may be NULL) is an object.
 * 0 or a negative errno. */
int out_meta_write(struct out_meta *m, const char *run_dir, const struct cJSON *env,
		   FILE *log);
void out_meta_free(struct out_meta *m);

#endif
