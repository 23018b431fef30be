/*
 * The commands' options: one loop over getopt_long for the commands whose
 * options are a table (prof stats, prof diff), and one wording for an
 * option that is unknown or lacks its value, in every command.
 */
#ifndef PROF_CMD_OPTIONS_H
#define PROF_CMD_OPTIONS_H

#include <getopt.h>
#include <stdio.h>

/* "prof CMD: unknown option '--x'; see 'prof CMD --help'", or "option
 * '--x' needs a value" when `missing`, for the option getopt just read;
 * returns 2, the exit status of misuse. */
int cmd_bad_option(const char *cmd, char **argv, int missing);

/* getopt_long over argv with `longopts` (stopping at the first operand):
 * --help / -h prints usage(stdout) and returns -1; a bad option is said
 * (cmd_bad_option) and returns 2; every other option goes to each(ctx, ch),
 * which returns 0 to go on or the exit status. 0 at the first operand
 * (optind) or the end. */
int cmd_options(const char *cmd, int argc, char **argv, const struct option *longopts,
		void (*usage)(FILE *), int (*each)(void *ctx, int ch), void *ctx);

#endif
