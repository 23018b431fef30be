/*
 * Reading raw streams back, damaged ones included. The reader trusts only
 * committed bytes, checks every record's size and type, and reports what it
 * skipped (file, chunk, offset, why) instead of stopping.
 *
 * A file is mapped read-only once (raw_file); any number of cursors walk it
 * (raw_cursor): the parse uses one for the records and a quiet one that runs
 * ahead collecting clock pairs. Damage found by a loud cursor is named on
 * the file's log and counted in the file's stats:
 *   - bad header (magic, version, byte order, sizes): the file is skipped;
 *   - bad chunk header (magic, index, committed): the chunk is skipped;
 *   - a record whose size breaks the framing (< 16, not a multiple of 8,
 *     past `committed`): the rest of the chunk is skipped;
 *   - a record that is framed right but wrong inside (type 0, payload too
 *     short for its type, a bad string definition): that record only;
 *   - a record naming a string never defined (its definition was in a
 *     skipped chunk): kept, the name reads RAW_STRING_LOST, counted in
 *     st.unnamed_records (dropping a range push would unbalance a stack);
 *   - a record of a type newer than this reader: skipped by its size and
 *     counted apart (st.unknown_records), not damage (raw-format.md);
 *   - a file that ends inside a chunk: what is there is read, the rest named.
 * A stream without RAW_FILE_CLOSED (the process crashed or was killed) is
 * not damage: every committed record is still there.
 */
#ifndef PROF_RAW_READER_H
#define PROF_RAW_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "common/idmap.h"
#include "raw/raw_format.h"

/* Totals over every stream under a run's raw/ directory: for
 * profiler_info.json at the end of a run. */
struct raw_totals {
	uint64_t streams;
	uint64_t records;
	uint64_t lost;
	uint64_t damaged_streams;  /* header unreadable or chunks skipped */
	uint64_t no_space_streams; /* stopped by a full filesystem (RAW_FILE_NO_SPACE) */
};

/* Sums the chunk headers of every *.raw file under `raw_dir` (recursively).
 * Cheap: reads headers only. Returns 0 or a negative errno. */
int raw_totals_of_dir(const char *raw_dir, struct raw_totals *out);

/* What reading a file found; filled by loud cursors. */
struct raw_read_stats {
	uint64_t records;          /* valid records returned */
	uint64_t lost;             /* chunk headers' `lost` + RAW_REC_LOST counts */
	uint64_t skipped_chunks;   /* chunks skipped whole or in part */
	uint64_t skipped_bytes;    /* committed bytes not returned */
	uint64_t bad_records;      /* records skipped */
	uint64_t unknown_records;  /* types newer than this reader: skipped, not damage */
	uint64_t unnamed_records;  /* kept, but a string they name was never defined */
};

#define RAW_STRING_LOST "(name lost)"

struct raw_file {
	char *path;                /* as given; names the file in messages */
	const unsigned char *map;  /* the whole file, read-only */
	size_t size;
	struct raw_file_header hdr;
	uint64_t nchunks;          /* chunk slots present; the last may be partial */
	FILE *log;                 /* where damage is named; NULL: nowhere */
	const char *who;           /* message prefix, "prof parse" by default */
	struct raw_read_stats st;
	int borrowed;              /* map is the caller's (raw_file_open_mem) */
};

/* Opens and maps `path`, checks its header. Returns 0; -EINVAL for a file
 * that is not a raw stream of this version, or another negative errno when
 * it can't be read. Either way the file is named on `log` (if not NULL) and
 * `why` (if not NULL) receives the reason. */
int raw_file_open(struct raw_file *f, const char *path, FILE *log,
		  char *why, size_t why_len);
/* The same over `size` bytes the caller holds (and keeps until
 * raw_file_close); `name` names them in messages. For tests and fuzzing. */
int raw_file_open_mem(struct raw_file *f, const char *name, const void *data,
		      size_t size, FILE *log, char *why, size_t why_len);
void raw_file_close(struct raw_file *f);

/* Checks a header read from a file of `file_size` bytes. 0, or -1 with the
 * reason in `why`. */
int raw_header_check(const struct raw_file_header *h, uint64_t file_size,
		     char *why, size_t why_len);

/* The latest clock pair the file holds at a fixed place: the close pair
 * when closed, else the pair of the last valid chunk header, else the open
 * pair. For a rate over the whole stream without reading it all. */
void raw_file_last_pair(const struct raw_file *f, struct raw_clock_pair *out);

/* A record as returned by a cursor; `payload` points into the mapping. */
struct raw_rec {
	uint16_t type, flags;
	uint32_t size;
	uint64_t ts;               /* ticks of the stream's clock */
	const void *payload;
	uint32_t len;              /* payload bytes (size - 16) */
	uint64_t chunk;            /* chunk index */
	uint64_t offset;           /* of the record in the file */
};

enum raw_next {
	RAW_NEXT_END = 0,          /* no more records */
	RAW_NEXT_RECORD = 1,       /* `rec` holds a valid record */
	RAW_NEXT_CHUNK = 2,        /* a valid chunk began: see cursor->ch */
};

struct raw_cursor {
	struct raw_file *f;
	uint64_t next_chunk;       /* the chunk slot to enter next */
	uint64_t chunk;            /* the chunk being read */
	const unsigned char *pos, *end; /* unread committed bytes of it */
	int truncated;             /* the file ends inside this chunk */
	int quiet;                 /* neither names nor counts damage */
	int ended;                 /* the end was reached (and checked) */
	struct raw_chunk_header ch;
	/* strings defined so far: id -> its struct raw_string in the mapping;
	 * memory follows the definitions seen, whatever their ids (a damaged
	 * id costs what any definition costs) */
	struct parse_idmap str;
	int track_strings;
	int str_nomem;             /* a definition the map could not hold */
};

/* A loud cursor checks string ids (tracks definitions); a quiet one skips
 * damage silently and ignores strings. */
void raw_cursor_init(struct raw_cursor *c, struct raw_file *f, int quiet);
void raw_cursor_free(struct raw_cursor *c);
enum raw_next raw_cursor_next(struct raw_cursor *c, struct raw_rec *rec);

/* The text of string `id` (NUL-terminated, in the mapping); "" for id 0,
 * NULL when undefined. `len` may be NULL. */
const char *raw_cursor_str(const struct raw_cursor *c, uint32_t id, uint32_t *len);

/* The same, but RAW_STRING_LOST for an undefined id: never NULL. */
const char *raw_cursor_name(const struct raw_cursor *c, uint32_t id);

/* Smallest payload of each record type; 0 for unknown types. */
uint32_t raw_payload_min(uint16_t type);

#endif
