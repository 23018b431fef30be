/*
 * Writing one raw stream (see raw_format.h). One writer per thread or per
 * collector: a writer is never shared, so it needs no lock. The fast path
 * (raw_writer_reserve + raw_writer_commit with an interned string) makes no
 * system call and allocates nothing; beginning a chunk and the first use of
 * a string are the slow paths.
 */
#ifndef PROF_RAW_WRITER_H
#define PROF_RAW_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include "raw/raw_format.h"
#include "raw/raw_clock.h"

#define RAW_INTERN_CACHE 64
/* The most distinct strings a writer remembers: names made per iteration
 * (f"batch {i}") must not grow it without end. Past it a new string is
 * defined again at each use (raw_writer.uninterned counts those uses). */
#define RAW_INTERN_MAX (1u << 15)

struct raw_intern_entry {
	uint64_t hash;
	const char *copy;        /* in the writer's arena; NULL if slot free */
	uint32_t len;
	uint32_t id;
};

struct raw_intern_cache {
	const char *ptr;         /* caller's pointer last seen in this slot */
	const char *copy;
	uint32_t id;
};

/* A chunk's first step of disk blocks (raw_writer.c: grow_to). */
#define RAW_GROW_FIRST (64u << 10)

/* Why a stream stopped (raw_writer.broken). */
enum { RAW_BROKEN_DISK = 1, RAW_BROKEN_BUDGET = 2 };

struct raw_writer {
	int fd;
	uint32_t clock;
	uint32_t chunk_size;
	struct raw_file_header *hdr;   /* header page, mapped for the stream's life */
	struct raw_chunk_header *chunk;/* current chunk, mapped */
	char *pos;                     /* next record */
	char *end;                     /* end of the current chunk */
	uint64_t lost_pending;         /* dropped since the last chunk began */
	int broken;                    /* no more chunks can be had: count losses;
					* 1: no disk or memory, 2: budget spent */
	int keeps_late;                /* a device stream: late_ns is kept */
	uint64_t high_ts;              /* the latest start emitted */
	uint64_t late_ns;              /* what the header's late_ns says */

	/* string interning */
	struct raw_intern_cache cache[RAW_INTERN_CACHE];
	struct raw_intern_entry *table;
	uint32_t table_cap;            /* power of two */
	uint32_t table_used;
	uint32_t next_id;
	uint64_t uninterned;           /* definitions past RAW_INTERN_MAX */
	char *arena;
	size_t arena_left;
	void *arena_blocks;            /* the newest block; each links the one before */

	/* A budget of chunk bytes shared with other writers (--storage-limit),
	 * or NULL: see raw_writer_opts. Last, away from the fast path's fields. */
	uint64_t *budget_used;
	uint64_t budget_limit;
	uint64_t *disk_full;           /* see raw_writer_opts */
};

struct raw_writer_opts {
	uint32_t clock;          /* enum raw_clock */
	uint32_t kind;           /* enum raw_stream_kind */
	uint32_t chunk_size;     /* 0: RAW_CHUNK_DEFAULT */
	int32_t pid, tid, ppid;
	uint64_t tsc_hz;
	const char *comm;
	/* Optional budget (the run's --storage-limit): every step of chunk
	 * bytes taken (RAW_GROW_FIRST, then doubling up to chunk_size) adds
	 * its bytes to *budget_used with an atomic fetch_add (writers in
	 * other processes may share the counter through a shared mapping). A
	 * step that would take the total past budget_limit is refused: the
	 * stream stops recording (it is then "broken") and every later record
	 * is counted as lost. Chunk 0's first step is asked for too: a stream
	 * opened once the budget is spent is a header without chunks (its
	 * lost_total counts what it was offered), so the chunk bytes never
	 * exceed the budget.
	 * Stopping, not dropping the oldest chunks, keeps the crash-safety
	 * rule that committed data is never rewritten. NULL (the launcher's
	 * own writers): no budget. */
	uint64_t *budget_used;
	uint64_t budget_limit;
	/* Optional: a count shared with other writers (the control page's
	 * streams_disk_full), added to (atomic) once, when a full filesystem
	 * first stops this stream, so that the launcher can say so while the
	 * program runs. NULL: not counted (the header's RAW_FILE_NO_SPACE
	 * says it all the same). */
	uint64_t *disk_full;
};

/* Creates `name` under `dirfd` (O_EXCL, mode 0640) and begins chunk 0.
 * Returns 0 or a negative errno; on error the writer is left closed, and
 * the file removed when not even its header could be written (no disk
 * space: -ENOSPC). When chunk 0 alone is refused (budget or disk), the
 * stream opens without chunks and counts what it is offered as lost. */
int raw_writer_open(struct raw_writer *w, int dirfd, const char *name,
		    const struct raw_writer_opts *o);

/* Marks the stream closed (clean end), cuts the file to its last
 * committed record and unmaps it. */
void raw_writer_close(struct raw_writer *w);

/* raw_writer_close without the mark, for a stream whose mark another
 * thread may have written (raw_writer_mark_closed): only the writer's
 * own thread may release it. */
void raw_writer_release(struct raw_writer *w);

/* Only the mark: the close pair, then the closed flag, in the header page.
 * Stores to a mapping and the clock, no lock: async-signal-safe, and done
 * for a writer by another thread (at process exit) while its own thread
 * still writes records; the caller sees to it that one closer does it. */
void raw_writer_mark_closed(struct raw_writer *w);

/* Drops the mappings and the descriptor without touching the file (a
 * stream given up). */
void raw_writer_abandon(struct raw_writer *w);

/* In a fork child, the parent's writer: the child did not inherit its
 * mappings (they are MADV_DONTFORK), so only its descriptor is closed;
 * nothing is unmapped (those addresses may hold the child's own mappings
 * by now) and the file is not touched. */
void raw_writer_forget(struct raw_writer *w);

/* In a fork child: how many writer mappings of the parent were between
 * their mmap and their MADV_DONTFORK when it forked (they came along:
 * the child unmaps them by their file); and from now on none. */
uint32_t raw_writer_maps_in_flight(void);

/* Slow path of raw_writer_reserve: begins the next chunk. */
void *raw_writer_reserve_slow(struct raw_writer *w, uint32_t size);

/* Room for one record of `size` bytes (header included, aligned), or NULL
 * when the record must be dropped (it is then counted as lost). */
static inline void *raw_writer_reserve(struct raw_writer *w, uint32_t size)
{
	if (__builtin_expect(w->pos + size <= w->end, 1))
		return w->pos;
	return raw_writer_reserve_slow(w, size);
}

/* Publishes the record written at the reserved place. */
static inline void raw_writer_commit(struct raw_writer *w, uint32_t size)
{
	struct raw_chunk_header *c = w->chunk;
	w->pos += size;
	c->records++;
	__atomic_store_n(&c->committed,
			 (uint64_t)(w->pos - (char *)(c + 1)), __ATOMIC_RELEASE);
}

/* Writes a record with `len` payload bytes; returns 0 or -1 (counted lost).
 * The header's late_ns follows the starts given here and to
 * raw_writer_emit_aux, so a device stream (RAW_FILE_LATE_BOUND) must write
 * every record through these two, never raw_writer_reserve. */
int raw_writer_emit(struct raw_writer *w, uint16_t type, uint64_t ts,
		    const void *payload, uint32_t len);

/* The same for a bookkeeping record (a thread's name, the process record,
 * a recording switch): written when there is room, but a failure is not
 * counted as lost. `lost` counts only the events the program or a
 * collector produced, so that emitted = recorded + lost holds exactly.
 * String definitions are bookkeeping too: the record naming the string is
 * the one counted when it cannot be written. */
int raw_writer_emit_aux(struct raw_writer *w, uint16_t type, uint64_t ts,
			const void *payload, uint32_t len);

/* Whether the stream stopped recording because its budget was spent. */
static inline int raw_writer_over_budget(const struct raw_writer *w)
{
	return w->broken == RAW_BROKEN_BUDGET;
}

/* Whether a budget of shared bytes (*used of limit; used NULL or limit 0:
 * none) grants `bytes` more. The fetch_add is not undone on refusal: a
 * total past the limit is how the launcher learns that it was reached. */
static inline int raw_budget_grant(uint64_t *used, uint64_t limit, uint64_t bytes)
{
	if (!used || !limit)
		return 1;
	return __atomic_fetch_add(used, bytes, __ATOMIC_RELAXED) + bytes <= limit;
}

/* The id of string `s` in this stream, writing its definition the first
 * time (stamped `ts`). Returns 0 when it could not be written. */
uint32_t raw_writer_intern_slow(struct raw_writer *w, const char *s, uint64_t ts);

static inline uint32_t raw_writer_intern(struct raw_writer *w, const char *s, uint64_t ts)
{
	struct raw_intern_cache *c = &w->cache[((uintptr_t)s >> 3) & (RAW_INTERN_CACHE - 1)];
	if (__builtin_expect(c->ptr == s && c->copy, 1)) {
		/* The same pointer may hold new text (a reused buffer). */
		const char *a = c->copy, *b = s;
		while (*a && *a == *b) { a++; b++; }
		if (*a == *b)
			return c->id;
	}
	return raw_writer_intern_slow(w, s, ts);
}

/* The id of s[0, len), which need not end there (a name cut out of a
 * longer text): no cache, a hash lookup each time. */
uint32_t raw_writer_intern_len(struct raw_writer *w, const char *s, size_t len, uint64_t ts);

/* Adds `n` to the lost count of the stream. */
void raw_writer_lose(struct raw_writer *w, uint64_t n);

#endif
