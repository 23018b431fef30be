/*
 * Where prof's own files are: the build tree and every install prefix share
 * one layout (bin/prof, lib/prof/libprof_agent.so, share/prof/python), so
 * everything is found relative to /proc/self/exe and no flag is needed.
 * A static build (-DPROF_STATIC=ON) carries these files inside itself and
 * finds them in its cache instead (launcher/embed_cache.h).
 */
#ifndef PROF_SELFPATH_H
#define PROF_SELFPATH_H

#include <stddef.h>

#define SELFPATH_AGENT_NAME "libprof_agent.so"
#define SELFPATH_AGENT_REL  "../lib/prof/" SELFPATH_AGENT_NAME
#define SELFPATH_PYTHON_REL "../share/prof/python"

/* The running executable (absolute), malloc'd. 0 or -errno. */
int selfpath_exe(char **out);

/* The directory holding the running executable, malloc'd. 0 or -errno. */
int selfpath_exe_dir(char **out);

/* The agent library (absolute, normalised), malloc'd. -ENOENT when it is
 * not installed next to prof; `*out` then holds the path looked for. In a
 * static build, -EACCES with `*out` NULL when the cache was refused or
 * could not be written (said on stderr). */
int selfpath_agent(char **out);

/* share/prof/python (absolute, normalised), malloc'd. -ENOENT as above. */
int selfpath_python_dir(char **out);

/* `rel` resolved against `dir`; the same contract as above. Exposed so the
 * tests can point it at a fake prefix. */
int selfpath_resolve(const char *dir, const char *rel, char **out);

#endif
