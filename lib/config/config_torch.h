/*
 * torch_npu's profiler_config.json (the seed's dynamic_profile file) read
 * beside prof's own keys: its experimental_config object, which --dynamic
 * edits carry too, is checked and mapped by the same code.
 */
#ifndef PROF_CONFIG_TORCH_H
#define PROF_CONFIG_TORCH_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "config/config.h"

/* Applies an experimental_config object (null: nothing) onto `c`: each
 * sub-key mapped onto prof's key, or noted where it cannot act here; an
 * unknown sub-key, a wrong type or value is an error naming
 * "experimental_config.KEY" and `source` ("" for none). 0 or -1. */
int cfg_apply_experimental(struct prof_config *c, const cJSON *obj, const char *source,
			   struct cfg_error *err);

/* Whether experimental_config's sub-key `key` maps onto one of prof's
 * keys (profiler_level, export_type, ...), rather than being only
 * checked and noted (aic_metrics, l2_cache, ...). */
bool cfg_experimental_maps(const char *key);

#endif
