/*
 * libFuzzer harness for the configuration parser (lib/config/config.h):
 * the input is a PROF_OPTIONS / --config text, applied over the defaults,
 * then validated and written back out as JSON. The step-list parser gets the same text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "fuzz_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	if (!text)
		return 0;

	struct prof_config c;
	struct cfg_error err = { { 0 } };
	cfg_defaults(&c);
	if (cfg_apply_json(&c, text, "PROF_OPTIONS", &err) == 0) {
		cfg_validate(&c, &err);
		char pending[256];
		cfg_pending_keys(&c, pending, sizeof pending);
		char *json = cfg_to_json(&c);
		free(json);
	}
	if (strnlen(err.msg, CFG_ERR_MAX) == CFG_ERR_MAX)
		__builtin_trap();
	cfg_free(&c);

	uint64_t *steps = NULL;
	size_t n = 0;
	char why[256];
	if (cfg_parse_step_list(text, &steps, &n, why, sizeof why) == 0) {
		for (size_t i = 1; i < n; i++)
			if (steps[i - 1] >= steps[i])
				__builtin_trap();  /* sorted, without duplicates */
		free(steps);
	}
	free(text);
	return 0;
}
