/* One function per subcommand, one file each (cmd/<name>.c). */
#ifndef PROF_CMDS_H
#define PROF_CMDS_H

#include <stdint.h>

int cmd_run(int argc, char **argv);
int cmd_parse(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_session(int argc, char **argv);
int cmd_window(int argc, char **argv);
int cmd_diff(int argc, char **argv);

/* For commands that read runs (prof diff): parses a run or cluster
 * directory as `prof parse -q` does, diagnostics on stderr, nothing on
 * stdout. The parse status (enum parse_status). */
int parse_for_reading(const char *dir);

#endif
