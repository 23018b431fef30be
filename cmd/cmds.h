/* One function per subcommand, one file each (cmd/<name>.c). */
#ifndef PROF_CMDS_H
#define PROF_CMDS_H

#include <stdint.h>

int cmd_run(int argc, char **argv);
int cmd_parse(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_session(int argc, char **argv);
int cmd_window(int argc, char **argv);

/* The parse options of a configuration (export_type, step_list,
 * timeline_limit, data_simplification, pretty, gzip) into `o`; *steps
 * is malloc'd for the caller to free after the parse. 0, or -1 said on
 * stderr. */
struct parse_opts;
struct prof_config;
int parse_opts_from_cfg(struct parse_opts *o, const struct prof_config *c, uint64_t **steps);

#endif
