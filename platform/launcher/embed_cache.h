/*
 * The static build's embedded files (-DPROF_STATIC=ON): the agent, the sim
 * and tx libraries and share/prof/python travel inside bin/prof and are
 * unpacked on first use into a private cache laid out as an install prefix:
 *
 *   $XDG_CACHE_HOME/prof/<build id>/lib/prof/libprof_agent.so
 *                                  /share/prof/python/...
 *
 * ($XDG_CACHE_HOME, else $HOME/.cache, else /tmp/prof-<uid> when neither
 * can be written.) Every directory is made 0700 and opened without
 * following links; one that is a link, is owned by another user or can be
 * written by others is refused. A file is written under an O_EXCL temporary
 * name and renamed into place, so 64 ranks starting at once on one shared
 * home each see a whole file; one process at a time writes (flock on
 * <build id>/.lock), the others find its files. Each file is checked
 * against its embedded SHA-256 at every use: one changed or truncated is
 * replaced, and said.
 *
 * The table is generated at build time (cmake/embed.cmake) and linked into
 * bin/prof only; prof_embed is weak, so everything else (the normal build,
 * the unit tests) sees it absent.
 */
#ifndef PROF_EMBED_CACHE_H
#define PROF_EMBED_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "common/sha256.h"

struct embed_file {
	const char *path;          /* relative to the cache root */
	const unsigned char *data;
	size_t size;
	unsigned mode;             /* 0755 or 0644 as built; owner bits are kept */
	uint8_t sha256[SHA256_LEN];
};

struct embed_table {
	const char *build_id;      /* <version>-<16 hex digits of the files' hash> */
	size_t n;
	const struct embed_file *files;
};

extern const struct embed_table prof_embed __attribute__((weak));

/* The embedded table, or NULL in a build without one. */
const struct embed_table *embed_table(void);

/* The cache root for `t` (malloc'd, absolute), every file in place and
 * verified. 0, or -1 after a message on stderr that names what was
 * refused or could not be written. `base` overrides the search ($XDG_...)
 * with one directory to hold prof/<build id> (the tests). */
int embed_cache_root(const struct embed_table *t, const char *base, char **root);

#endif
