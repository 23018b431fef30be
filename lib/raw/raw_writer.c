/*
 * Writing one raw stream through shared file mappings. The agent compiles
 * this file too: it may use only libc, never malloc (the program's
 * allocator may be what is being traced, or not be reentrant at this
 * point), so memory comes from mmap.
 */
#define _GNU_SOURCE   /* fallocate */
#include "raw/raw_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define INTERN_TABLE_MIN 256u
#define ARENA_BLOCK      (64u << 10)

/* Mappings between their mmap and their madvise, in every thread. */
static uint32_t maps_in_flight;

/* A fork child gets none of a writer's mappings: they are the parent's
 * stream (a DataLoader worker forked from a 64-thread trainer would
 * inherit 64 chunk mappings, and their addresses are no use to it). A
 * fork between the two calls is seen in the child's copy of
 * maps_in_flight (raw_writer_maps_in_flight). */
static void *map_no_fork(size_t len, int flags, int fd, off_t off)
{
	__atomic_add_fetch(&maps_in_flight, 1, __ATOMIC_ACQ_REL);
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, off);
	if (p != MAP_FAILED)
		madvise(p, len, MADV_DONTFORK);
	__atomic_sub_fetch(&maps_in_flight, 1, __ATOMIC_ACQ_REL);
	return p;
}

uint32_t raw_writer_maps_in_flight(void)
{
	uint32_t n = __atomic_load_n(&maps_in_flight, __ATOMIC_ACQUIRE);
	__atomic_store_n(&maps_in_flight, 0, __ATOMIC_RELEASE);
	return n;
}

static void *map_anon(size_t len)
{
	void *p = map_no_fork(len, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static off_t chunk_offset(const struct raw_writer *w, uint64_t index)
{
	return (off_t)RAW_HEADER_SIZE + (off_t)index * w->chunk_size;
}

/* Writes zeros over [off, off+len): blocks for real where fallocate is
 * not to be had (ftruncate would leave a hole). 0 or -errno. */
static int write_zeros(int fd, off_t off, off_t len)
{
	static const char zeros[16384];
	while (len > 0) {
		size_t n = len < (off_t)sizeof zeros ? (size_t)len : sizeof zeros;
		ssize_t w = pwrite(fd, zeros, n, off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		off += w;
		len -= w;
	}
	return 0;
}

/* Gives [off, off+len) disk blocks before it is mapped: a store to a
 * shared mapping of a hole the filesystem cannot fill (a full disk, a full
 * tmpfs) is a SIGBUS in the program, while a refusal here is an error the
 * writer counts as loss. A filesystem without fallocate gets the zeros
 * written, as posix_fallocate would. 0 or -errno. */
static int reserve_disk(int fd, off_t off, off_t len)
{
	int rc;
	while ((rc = fallocate(fd, 0, off, len)) != 0 && errno == EINTR)
		;
	if (rc == 0)
		return 0;
	if (errno != EOPNOTSUPP && errno != ENOSYS)
		return -errno;
	return write_zeros(fd, off, len);
}

static int budget_grant(struct raw_writer *w, uint32_t bytes);
static int no_chunk(struct raw_writer *w, int rc);

/* Bytes [from, to) of chunk `index`: granted by the budget, then given
 * their disk blocks. 0, or why not: RAW_BROKEN_BUDGET, RAW_BROKEN_DISK. */
static int take_room(struct raw_writer *w, uint64_t index, uint32_t from, uint32_t to)
{
	if (!budget_grant(w, to - from))
		return RAW_BROKEN_BUDGET;
	if (no_chunk(w, reserve_disk(w->fd, chunk_offset(w, index) + from, to - from)))
		return RAW_BROKEN_DISK;
	return 0;
}

/* A chunk's blocks are taken in steps, the first RAW_GROW_FIRST bytes
 * and then doubling, so that a stream of a few records costs a few
 * kilobytes of disk and of --storage-limit, not a whole chunk. */
static uint32_t grow_to(const struct raw_writer *w, uint32_t have, uint32_t need)
{
	uint32_t to = have ? have : RAW_GROW_FIRST;
	while (to < need && to < w->chunk_size)
		to *= 2;
	return to < w->chunk_size ? to : w->chunk_size;
}

/* Maps chunk `index` (growing the file by its first step) and makes it
 * current. 0, or RAW_BROKEN_*. */
static int begin_chunk(struct raw_writer *w, uint64_t index)
{
	uint32_t first = grow_to(w, 0, 0);
	int why = take_room(w, index, 0, first);
	if (why)
		return why;
	void *p = map_no_fork(w->chunk_size, MAP_SHARED, w->fd, chunk_offset(w, index));
	if (p == MAP_FAILED)
		return RAW_BROKEN_DISK;
	if (w->chunk)
		munmap(w->chunk, w->chunk_size);
	struct raw_chunk_header *c = p;
	c->index = (uint32_t)index;
	c->committed = 0;
	c->records = 0;
	c->lost = w->lost_pending;
	raw_clock_pair(w->clock, &c->pair);
	__atomic_store_n(&c->magic, RAW_CHUNK_MAGIC, __ATOMIC_RELEASE);
	w->lost_pending = 0;
	w->chunk = c;
	w->pos = (char *)(c + 1);
	w->end = (char *)p + first;   /* the fast path stays within the blocks taken */
	__atomic_store_n(&w->hdr->chunks, index + 1, __ATOMIC_RELAXED);
	return 0;
}

/* Room for `size` more bytes in the current chunk, taking its next
 * steps: 0, or RAW_BROKEN_*; -1 when the chunk cannot hold them. */
static int grow_chunk(struct raw_writer *w, uint32_t size)
{
	char *base = (char *)w->chunk;
	uint32_t have = (uint32_t)(w->end - base);
	uint64_t need = (uint64_t)(w->pos - base) + size;
	if (need > w->chunk_size)
		return -1;
	uint32_t to = grow_to(w, have, (uint32_t)need);
	int why = take_room(w, w->chunk->index, have, to);
	if (!why)
		w->end = base + to;
	return why;
}

/* True when begin_chunk failed (`rc`); a full filesystem is said in the
 * header so the launcher can name it, and counted once a stream in the
 * shared count it reads while the program runs. */
static int no_chunk(struct raw_writer *w, int rc)
{
	if (rc != -ENOSPC && rc != -EDQUOT)
		return rc != 0;
	uint32_t was = __atomic_fetch_or(&w->hdr->flags, RAW_FILE_NO_SPACE, __ATOMIC_RELEASE);
	if (!(was & RAW_FILE_NO_SPACE) && w->disk_full)
		__atomic_add_fetch(w->disk_full, 1, __ATOMIC_RELAXED);
	return 1;
}

static void fill_header(struct raw_writer *w, const struct raw_writer_opts *o)
{
	struct raw_file_header *h = w->hdr;
	h->version = RAW_VERSION;
	h->byte_order = RAW_BYTE_ORDER;
	h->header_size = RAW_HEADER_SIZE;
	h->chunk_size = w->chunk_size;
	h->clock = w->clock;
	h->kind = o->kind;
	h->pid = o->pid;
	h->tid = o->tid;
	h->ppid = o->ppid;
	h->tsc_hz = o->tsc_hz;
	raw_clock_pair(w->clock, &h->open_pair);
	if (o->comm)
		strncpy(h->comm, o->comm, RAW_NAME_MAX - 1);
	w->keeps_late = o->kind == RAW_STREAM_DEVICE;
	h->flags = RAW_FILE_DEVINFO_BOUND | (w->keeps_late ? RAW_FILE_LATE_BOUND : 0);
	/* The magic goes last, a release store of its 8 bytes (the header's
	 * first, aligned): a header without it was never finished. */
	uint64_t magic;
	_Static_assert(sizeof h->magic == sizeof magic, "the magic is 8 bytes");
	memcpy(&magic, RAW_MAGIC, sizeof magic);
	__atomic_store_n((uint64_t *)(void *)h->magic, magic, __ATOMIC_RELEASE);
}

/* Whether the budget grants `bytes` more of chunks. */
static int budget_grant(struct raw_writer *w, uint32_t bytes)
{
	return raw_budget_grant(w->budget_used, w->budget_limit, bytes);
}

int raw_writer_open(struct raw_writer *w, int dirfd, const char *name,
		    const struct raw_writer_opts *o)
{
	memset(w, 0, sizeof *w);
	w->fd = -1;
	w->clock = o->clock ? o->clock : RAW_CLOCK_MONOTONIC;
	w->chunk_size = o->chunk_size ? o->chunk_size : RAW_CHUNK_DEFAULT;
	w->budget_used = o->budget_used;
	w->budget_limit = o->budget_limit;
	w->disk_full = o->disk_full;
	if (w->chunk_size < RAW_CHUNK_MIN || w->chunk_size > RAW_CHUNK_MAX ||
	    w->chunk_size % (uint32_t)sysconf(_SC_PAGESIZE))
		return -EINVAL;
	w->next_id = 1;
	w->fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0640);
	if (w->fd < 0)
		return -errno;
	int rc = 0;
	/* The mode went through the umask; the run directory's is fixed. */
	if (fchmod(w->fd, 0640) != 0)
		rc = -errno;
	if (!rc)
		rc = reserve_disk(w->fd, 0, RAW_HEADER_SIZE);
	if (!rc) {
		void *h = map_no_fork(RAW_HEADER_SIZE, MAP_SHARED, w->fd, 0);
		if (h == MAP_FAILED)
			rc = -errno;
		else
			w->hdr = h;
	}
	if (!rc) {
		fill_header(w, o);
		int why = begin_chunk(w, 0);
		if (why) {
			/* The budget is spent, or the disk is full: a header
			 * without chunks, whose lost_total counts every record
			 * offered. pos == end sends each reserve to the slow path. */
			static char no_room;
			w->broken = why;
			w->pos = w->end = &no_room;
		}
	}
	if (rc && !w->hdr)
		unlinkat(dirfd, name, 0);   /* empty: not worth a "damaged" stream */
	if (rc)
		raw_writer_abandon(w);
	return rc;
}

/* The slow path: the current chunk's next step, else the next chunk.
 * Refused (the run's storage limit, no disk or address space), the
 * stream stops there and counts what it drops; committed data stays.
 * `count`: a drop is counted as lost. */
static void *reserve_slow(struct raw_writer *w, uint32_t size, int count)
{
	if (w->broken || !w->chunk ||
	    size > w->chunk_size - sizeof(struct raw_chunk_header))
		goto drop;
	int why = grow_chunk(w, size);
	if (why < 0)
		why = begin_chunk(w, (uint64_t)w->chunk->index + 1);
	if (why) {
		w->broken = why;
		goto drop;
	}
	return w->pos;
drop:
	if (count)
		raw_writer_lose(w, 1);
	return NULL;
}

void *raw_writer_reserve_slow(struct raw_writer *w, uint32_t size)
{
	return reserve_slow(w, size, 1);
}

static inline void *reserve_aux(struct raw_writer *w, uint32_t size)
{
	if (w->pos + size <= w->end)
		return w->pos;
	return reserve_slow(w, size, 0);
}

void raw_writer_lose(struct raw_writer *w, uint64_t n)
{
	w->lost_pending += n;
	if (w->hdr)
		__atomic_store_n(&w->hdr->lost_total, w->hdr->lost_total + n, __ATOMIC_RELAXED);
}

/* Keeps late_ns, raised before the record is written: a crash leaves it
 * covering every record in the file. Only where the header claims it: a
 * thread stream's records pay nothing. */
static void track_late(struct raw_writer *w, uint64_t ts)
{
	if (!w->keeps_late)
		return;
	if (ts >= w->high_ts) {
		w->high_ts = ts;
	} else if (w->high_ts - ts > w->late_ns && w->hdr) {
		w->late_ns = w->high_ts - ts;
		__atomic_store_n(&w->hdr->late_ns, w->late_ns, __ATOMIC_RELEASE);
	}
}

static int emit(struct raw_writer *w, uint16_t type, uint64_t ts,
		const void *payload, uint32_t len, int count)
{
	track_late(w, ts);
	uint32_t size = raw_align((uint32_t)sizeof(struct raw_record) + len);
	/* The bound first, covering this chunk and the next (where the record
	 * goes if this one is full): a crash between the two leaves a bound
	 * too high, never one that hides the record. */
	if (type == RAW_REC_DEV_INFO && w->hdr)
		__atomic_store_n(&w->hdr->devinfo_chunks, w->hdr->chunks + 1, __ATOMIC_RELEASE);
	struct raw_record *r = count ? raw_writer_reserve(w, size) : reserve_aux(w, size);
	if (!r)
		return -1;
	r->type = type;
	r->flags = 0;
	r->size = size;
	r->ts = ts;
	if (len)
		memcpy(r + 1, payload, len);
	/* Zero the alignment padding so files are reproducible. */
	memset((char *)(r + 1) + len, 0, size - sizeof *r - len);
	raw_writer_commit(w, size);
	return 0;
}

int raw_writer_emit(struct raw_writer *w, uint16_t type, uint64_t ts,
		    const void *payload, uint32_t len)
{
	return emit(w, type, ts, payload, len, 1);
}

int raw_writer_emit_aux(struct raw_writer *w, uint16_t type, uint64_t ts,
			const void *payload, uint32_t len)
{
	return emit(w, type, ts, payload, len, 0);
}

static uint64_t hash_bytes(const char *s, uint32_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (uint32_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

static int table_grow(struct raw_writer *w)
{
	uint32_t cap = w->table_cap ? w->table_cap * 2 : INTERN_TABLE_MIN;
	struct raw_intern_entry *t = map_anon(cap * sizeof *t);
	if (!t)
		return -1;
	for (uint32_t i = 0; i < w->table_cap; i++) {
		struct raw_intern_entry *e = &w->table[i];
		if (!e->copy)
			continue;
		uint32_t j = (uint32_t)e->hash & (cap - 1);
		while (t[j].copy)
			j = (j + 1) & (cap - 1);
		t[j] = *e;
	}
	if (w->table)
		munmap(w->table, w->table_cap * sizeof *t);
	w->table = t;
	w->table_cap = cap;
	return 0;
}

/* The head of an arena block: blocks are never freed while the stream
 * lives (the table points into them), and all of them when it ends. */
struct arena_block {
	void *prev;
	size_t size;
};

static const char *arena_copy(struct raw_writer *w, const char *s, uint32_t len)
{
	if (w->arena_left < len + 1) {
		size_t need = sizeof(struct arena_block) + len + 1;
		size_t block = need > ARENA_BLOCK ? need : ARENA_BLOCK;
		struct arena_block *b = map_anon(block);
		if (!b)
			return NULL;
		/* The old block's tail is wasted. */
		b->prev = w->arena_blocks;
		b->size = block;
		w->arena_blocks = b;
		w->arena = (char *)(b + 1);
		w->arena_left = block - sizeof *b;
	}
	char *d = w->arena;
	memcpy(d, s, len);
	d[len] = '\0';
	w->arena += len + 1;
	w->arena_left -= len + 1;
	return d;
}

static uint32_t define_string(struct raw_writer *w, const char *s, uint32_t len, uint64_t ts,
			      uint32_t id)
{
	uint32_t size = raw_align((uint32_t)(sizeof(struct raw_record) + sizeof(struct raw_string)) + len + 1);
	/* Not counted when dropped: the record that names it is. */
	struct raw_record *r = reserve_aux(w, size);
	if (!r)
		return 0;
	struct raw_string *rs = (struct raw_string *)(r + 1);
	r->type = RAW_REC_STRING;
	r->flags = 0;
	r->size = size;
	r->ts = ts;
	rs->id = id;
	rs->len = len;
	char *text = (char *)(rs + 1);
	memcpy(text, s, len);
	memset(text + len, 0, size - sizeof *r - sizeof *rs - len);
	raw_writer_commit(w, size);
	return id;
}

/* The id of s[0, len), defined the first time; its table entry in *slot
 * (NULL when it was defined without one: table full or unmapped). */
static uint32_t intern_text(struct raw_writer *w, const char *s, uint32_t len, uint64_t ts,
			    const struct raw_intern_entry **slot)
{
	*slot = NULL;
	uint64_t h = hash_bytes(s, len);
	if (w->table_used * 2 >= w->table_cap && w->table_used < RAW_INTERN_MAX &&
	    table_grow(w) != 0)
		return define_string(w, s, len, ts, w->next_id++);
	uint32_t j = (uint32_t)h & (w->table_cap - 1);
	for (; w->table[j].copy; j = (j + 1) & (w->table_cap - 1)) {
		struct raw_intern_entry *e = &w->table[j];
		if (e->hash == h && e->len == len && memcmp(e->copy, s, len) == 0)
			goto found;
	}
	if (w->table_used >= RAW_INTERN_MAX) {
		/* atomic: the process's finisher may read it */
		__atomic_fetch_add(&w->uninterned, 1, __ATOMIC_RELAXED);
		return define_string(w, s, len, ts, w->next_id++);
	}
	const char *copy = arena_copy(w, s, len);
	if (!copy)
		return define_string(w, s, len, ts, w->next_id++);
	uint32_t id = define_string(w, s, len, ts, w->next_id);
	if (!id)
		return 0;
	w->next_id++;
	w->table[j] = (struct raw_intern_entry){ .hash = h, .copy = copy, .len = len, .id = id };
	w->table_used++;
found:
	*slot = &w->table[j];
	return w->table[j].id;
}

uint32_t raw_writer_intern_slow(struct raw_writer *w, const char *s, uint64_t ts)
{
	if (!s)
		s = "";
	size_t full = strlen(s);
	uint32_t max = w->chunk_size / 2;
	uint32_t len = full > max ? max : (uint32_t)full;
	const struct raw_intern_entry *e;
	uint32_t id = intern_text(w, s, len, ts, &e);
	/* A truncated string's copy differs from the caller's text, so the
	 * fast compare would miss every time; leave it out of the cache. */
	if (e && len == full) {
		struct raw_intern_cache *c = &w->cache[((uintptr_t)s >> 3) & (RAW_INTERN_CACHE - 1)];
		c->ptr = s;
		c->copy = e->copy;
		c->id = e->id;
	}
	return id;
}

uint32_t raw_writer_intern_len(struct raw_writer *w, const char *s, size_t len, uint64_t ts)
{
	uint32_t max = w->chunk_size / 2;
	const struct raw_intern_entry *e;
	return intern_text(w, s, len > max ? max : (uint32_t)len, ts, &e);
}

static void unmap_private(struct raw_writer *w)
{
	if (w->table)
		munmap(w->table, w->table_cap * sizeof *w->table);
	for (struct arena_block *b = w->arena_blocks; b;) {
		struct arena_block *prev = b->prev;
		munmap(b, b->size);
		b = prev;
	}
	w->arena_blocks = NULL;
	w->table = NULL;
	w->table_cap = w->table_used = 0;
	w->arena = NULL;
	w->arena_left = 0;
	memset(w->cache, 0, sizeof w->cache);
}

void raw_writer_mark_closed(struct raw_writer *w)
{
	if (!w->hdr)
		return;
	raw_clock_pair(w->clock, &w->hdr->close_pair);
	__atomic_or_fetch(&w->hdr->flags, RAW_FILE_CLOSED, __ATOMIC_RELEASE);
}

/* The file ends where the last chunk's committed records do: a stream
 * that recorded a few records keeps a few hundred bytes of its chunk,
 * not the whole preallocated chunk (the reader takes a short last chunk
 * as it is). */
static void trim(struct raw_writer *w)
{
	if (w->fd < 0 || !w->chunk || w->broken)
		return;
	off_t end = chunk_offset(w, w->chunk->index) + (off_t)sizeof *w->chunk +
		    (off_t)__atomic_load_n(&w->chunk->committed, __ATOMIC_ACQUIRE);
	int rc = ftruncate(w->fd, end);
	(void)rc;   /* refused, the chunk stays whole: nothing is lost */
}

void raw_writer_release(struct raw_writer *w)
{
	trim(w);
	raw_writer_abandon(w);
}

void raw_writer_close(struct raw_writer *w)
{
	raw_writer_mark_closed(w);
	raw_writer_release(w);
}

/* The descriptor is forgotten before it is closed: a fork child that
 * sees it still set knows the number is still the stream's. */
static void close_fd(struct raw_writer *w)
{
	int fd = w->fd;
	__atomic_store_n(&w->fd, -1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (fd >= 0)
		close(fd);
}

void raw_writer_abandon(struct raw_writer *w)
{
	if (w->chunk)
		munmap(w->chunk, w->chunk_size);
	if (w->hdr)
		munmap(w->hdr, RAW_HEADER_SIZE);
	close_fd(w);
	unmap_private(w);
	w->chunk = NULL;
	w->hdr = NULL;
	w->pos = w->end = NULL;
}

void raw_writer_forget(struct raw_writer *w)
{
	close_fd(w);
	memset(w, 0, sizeof *w);
	w->fd = -1;
}
