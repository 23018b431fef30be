/*
 * What the configuration's own files share (config.c, config_note.c,
 * config_torch.c, config_ms.c): applying one JSON value to one of prof's
 * keys under the name a source spelled it, and the notes.
 */
#ifndef PROF_CONFIG_INT_H
#define PROF_CONFIG_INT_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "config/config.h"

/* Fills `err` with "SOURCE: key "KEY": what" (no "SOURCE: " when source
 * is ""); returns -1. */
__attribute__((format(printf, 4, 5)))
int cfg_fail(struct cfg_error *err, const char *source, const char *key, const char *fmt, ...);

/* "a boolean", "a number", ...: what a value is, for "expected X, got Y". */
const char *cfg_json_type(const cJSON *v);

/* Applies `v` to prof's key `target` (a key of config.c's table), for a
 * source that spelled it `shown`: errors and notes name `shown`. */
int cfg_apply_as(struct prof_config *c, const char *target, const cJSON *v, const char *shown,
		 const char *source, struct cfg_error *err);

/* The same from a text value, as a flag gives it. */
int cfg_set_as(struct prof_config *c, const char *target, const char *value, const char *shown,
	       const char *source, struct cfg_error *err);

/* A JSON boolean, or an integer from min to max, named `key` in errors. */
int cfg_json_bool(const cJSON *v, const char *key, const char *source, bool *out,
		  struct cfg_error *err);
int cfg_json_int(const cJSON *v, const char *key, long min, long max, const char *source,
		 long *out, struct cfg_error *err);

/* Sets `target`'s note (replacing the one an earlier source left) to `why`
 * for the key the source spelled `shown`; why NULL removes it. */
void cfg_note(struct prof_config *c, const char *shown, const char *target, const char *source,
	      const char *why);
void cfg_notes_free(struct prof_config *c);

/* One member of a source's top-level object: 0, -1 with `err` filled, or
 * 1 when `v->string` is not a key this function knows. */
typedef int (*cfg_member_fn)(struct prof_config *c, const cJSON *v, const char *source,
			     struct cfg_error *err);

/* Parses `text` as a JSON object and hands each member to `each`; a
 * member it does not know is an unknown key. 0, or -1 with `err`. */
int cfg_apply_members(struct prof_config *c, const char *text, const char *source,
		      cfg_member_fn each, struct cfg_error *err);

/* Why the Ascend-only keys of both seeds cannot act here (notes). */
#define CFG_WHY_AIC \
	"AI Core metrics are counters of Ascend NPUs; none are recorded on a GPU or CPU"
#define CFG_WHY_L2 \
	"L2 cache hit rates are counters of Ascend NPUs; none are recorded on a GPU or CPU"

/* torch_npu's profiler_config.json keys that are not prof's own
 * (config_torch.c): prof_dir, active, warmup, start_step,
 * experimental_config. 1 when `v->string` is none of them. */
int cfg_torch_member(struct prof_config *c, const cJSON *v, const char *source,
		     struct cfg_error *err);

#endif
