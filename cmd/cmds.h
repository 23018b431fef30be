/* One function per subcommand, one file each (cmd/<name>.c). */
#ifndef PROF_CMDS_H
#define PROF_CMDS_H

#include <stdint.h>

int cmd_run(int argc, char **argv);
int cmd_parse(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_session(int argc, char **argv);
int cmd_window(int argc, char **argv);

#endif
