/*
 * Run-directory archives (lib/run/rundir.h): pack a run directory into
 * <run_dir>.tar.gz|.tar.zst|.zip next to it, and extract such an archive
 * safely so that `prof parse` can read it. Both stream through libarchive:
 * no whole file is ever held in memory.
 *
 * Library code: errors come back as a status and a message in `err`
 * that names the archive (and the entry) and the reason; nothing exits.
 */
#ifndef PROF_ARCHIVE_H
#define PROF_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

/* Same order as enum cfg_archive (config/config.h). */
enum arc_format { ARC_NONE = 0, ARC_TAR_GZ, ARC_TAR_ZST, ARC_ZIP };

enum arc_status {
	ARC_OK          = 0,
	ARC_IO          = -1, /* cannot read or write a file (err says which) */
	ARC_REFUSED     = -2, /* the archive is hostile or malformed; nothing kept */
	ARC_UNSUPPORTED = -3, /* this libarchive lacks the format or filter */
};

#define ARC_ERR_MAX 512
struct arc_error { char msg[ARC_ERR_MAX]; };

/* Limits of extraction; 0 in a field means the default. */
#define ARC_MAX_ENTRY_DEFAULT (16ull << 30)  /* 16 GiB per entry */
#define ARC_MAX_TOTAL_DEFAULT (64ull << 30)  /* 64 GiB in all */
struct arc_limits { uint64_t max_entry, max_total; };

/* "tar.gz" (also "tgz"), "tar.zst", "zip", "none" → the format; -1 if
 * unknown. */
int arc_format_from_name(const char *name, enum arc_format *out);
/* The file name extension of a format, without the dot ("tar.gz"). */
const char *arc_format_ext(enum arc_format f);
/* Whether `path` ends in a name prof extracts: .tar.gz .tgz .tar.zst .zip */
int arc_is_archive_name(const char *path);

/* Packs the directory `run_dir` into `<run_dir>.<ext>` (written through a
 * temporary name and renamed), entries `<basename>/...`, regular files and
 * directories only, modes kept; anything else is skipped and counted.
 * *out_path (malloc'd) receives the archive's path. */
enum arc_status arc_pack(const char *run_dir, enum arc_format f, char **out_path,
			 uint64_t *skipped, struct arc_error *err);

/* Extracts `archive` into a fresh directory created under `parent` (NULL:
 * the archive's own directory; when that cannot be written, $TMPDIR or
 * /tmp). The archive must hold one top-level directory; absolute paths,
 * ".." components, links of any kind, device files, FIFOs, sockets,
 * duplicate entries and entries or totals above `lim` are refused, and
 * what was extracted is removed again. Nothing is written outside the
 * fresh directory: every file is created with openat()/mkdirat() under a
 * directory descriptor, O_NOFOLLOW, modes 0750/0640.
 * On success *out_dir (malloc'd) is the extracted run directory: moved to
 * `<parent>/<top>` when that name is free, else `<fresh>/<top>`. */
enum arc_status arc_extract(const char *archive, const char *parent,
			    const struct arc_limits *lim, char **out_dir,
			    struct arc_error *err);

#endif
