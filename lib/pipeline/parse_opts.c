/* The parse options of a configuration (parse.h). */
#include <stdint.h>
#include <stdio.h>

#include "config/config.h"
#include "pipeline/parse.h"

void parse_opts_outputs(struct parse_opts *o, const struct prof_config *c)
{
	o->export_type = (c->export_type & CFG_EXPORT_TEXT ? PARSE_EXPORT_TEXT : 0) |
			 (c->export_type & CFG_EXPORT_DB ? PARSE_EXPORT_DB : 0);
	o->timeline_limit = (uint64_t)c->timeline_limit_mb << 20;
	o->pretty = c->pretty;
	o->no_report = !c->report;
	o->gzip = c->gzip;
}

int parse_opts_from_cfg(struct parse_opts *o, const struct prof_config *c, uint64_t **steps,
			char *why, size_t len)
{
	*steps = NULL;
	o->steps = NULL;
	o->nsteps = 0;
	if (c->step_list) {
		char msg[200];
		if (cfg_parse_step_list(c->step_list, steps, &o->nsteps, msg, sizeof msg)) {
			snprintf(why, len, "step_list: %s", msg);
			return -1;
		}
		o->steps = *steps;
	}
	parse_opts_outputs(o, c);
	o->data_simplification = c->data_simplification;
	return 0;
}
