#include "raw/raw_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK_HDR ((uint64_t)sizeof(struct raw_chunk_header))
#define REC_HDR   ((uint32_t)sizeof(struct raw_record))

static void why_set(char *why, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void why_set(char *why, size_t n, const char *fmt, ...)
{
	if (!why || !n)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
}

int raw_header_check(const struct raw_file_header *h, uint64_t file_size,
		     char *why, size_t n)
{
	if (file_size < sizeof *h) {
		why_set(why, n, "file too short for a header (%" PRIu64 " bytes)", file_size);
		return -1;
	}
	if (memcmp(h->magic, RAW_MAGIC, sizeof RAW_MAGIC) != 0) {
		why_set(why, n, "not a prof raw file (bad magic)");
		return -1;
	}
	if (h->byte_order != RAW_BYTE_ORDER) {
		why_set(why, n, "byte order 0x%08x: written on a machine of another byte order",
			h->byte_order);
		return -1;
	}
	if (h->version != RAW_VERSION) {
		why_set(why, n, "format version %u, this prof reads version %u",
			h->version, RAW_VERSION);
		return -1;
	}
	if (h->header_size != RAW_HEADER_SIZE) {
		why_set(why, n, "header size %u, expected %u", h->header_size, RAW_HEADER_SIZE);
		return -1;
	}
	if (h->chunk_size < RAW_CHUNK_MIN || h->chunk_size > RAW_CHUNK_MAX ||
	    h->chunk_size % RAW_ALIGN) {
		why_set(why, n, "chunk size %u out of range [%u, %u]",
			h->chunk_size, RAW_CHUNK_MIN, RAW_CHUNK_MAX);
		return -1;
	}
	if (h->clock != RAW_CLOCK_MONOTONIC && h->clock != RAW_CLOCK_TSC) {
		why_set(why, n, "unknown clock %u", h->clock);
		return -1;
	}
	if (h->kind < RAW_STREAM_THREAD || h->kind > RAW_STREAM_DEVICE_SAMPLES) {
		why_set(why, n, "unknown stream kind %u", h->kind);
		return -1;
	}
	return 0;
}

static uint64_t chunk_slots(uint64_t size, uint32_t chunk_size)
{
	if (size <= RAW_HEADER_SIZE)
		return 0;
	return (size - RAW_HEADER_SIZE + chunk_size - 1) / chunk_size;
}

static int check_opened(struct raw_file *f, char *why, size_t why_len);

static int map_file(struct raw_file *f, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	int rc = 0;
	if (fstat(fd, &st) != 0) {
		rc = -errno;
	} else if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
	} else if (st.st_size > 0) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			rc = -errno;
		else
			f->map = m;
		f->size = (size_t)st.st_size;
	}
	close(fd);
	return rc;
}

int raw_file_open(struct raw_file *f, const char *path, FILE *log,
		  char *why, size_t why_len)
{
	memset(f, 0, sizeof *f);
	f->log = log;
	f->who = "prof parse";
	f->path = strdup(path);
	if (!f->path)
		return -ENOMEM;
	int rc = map_file(f, path);
	if (rc) {
		const char *e = rc == -EINVAL ? "not a regular file" : strerror(-rc);
		if (log)
			fprintf(log, "%s: %s: %s; file skipped\n", f->who, path, e);
		why_set(why, why_len, "%s", e);
		raw_file_close(f);
		return rc == -EINVAL ? -EIO : rc;
	}
	return check_opened(f, why, why_len);
}

/* The header check shared by both ways of opening. */
static int check_opened(struct raw_file *f, char *why, size_t why_len)
{
	char buf[256];
	if (f->size >= sizeof f->hdr)
		memcpy(&f->hdr, f->map, sizeof f->hdr);
	if (raw_header_check(&f->hdr, f->size, buf, sizeof buf) != 0) {
		if (f->log)
			fprintf(f->log, "%s: %s: %s; file skipped\n", f->who, f->path, buf);
		why_set(why, why_len, "%s", buf);
		raw_file_close(f);
		return -EINVAL;
	}
	f->nchunks = chunk_slots(f->size, f->hdr.chunk_size);
	return 0;
}

int raw_file_open_mem(struct raw_file *f, const char *name, const void *data,
		      size_t size, FILE *log, char *why, size_t why_len)
{
	memset(f, 0, sizeof *f);
	f->log = log;
	f->who = "prof parse";
	f->path = strdup(name);
	if (!f->path)
		return -ENOMEM;
	f->map = size ? data : NULL;
	f->size = size;
	f->borrowed = 1;
	return check_opened(f, why, why_len);
}

void raw_file_close(struct raw_file *f)
{
	if (f->map && !f->borrowed)
		munmap((void *)f->map, f->size);
	free(f->path);
	f->map = NULL;
	f->path = NULL;
}

static int chunk_header_at(const struct raw_file *f, uint64_t i,
			   struct raw_chunk_header *ch)
{
	uint64_t off = RAW_HEADER_SIZE + i * (uint64_t)f->hdr.chunk_size;
	if (off + CHUNK_HDR > f->size)
		return -1;
	memcpy(ch, f->map + off, sizeof *ch);
	return 0;
}

void raw_file_last_pair(const struct raw_file *f, struct raw_clock_pair *out)
{
	*out = f->hdr.open_pair;
	if (f->hdr.flags & RAW_FILE_CLOSED) {
		*out = f->hdr.close_pair;
		return;
	}
	for (uint64_t i = f->nchunks; i-- > 0;) {
		struct raw_chunk_header ch;
		if (chunk_header_at(f, i, &ch) == 0 && ch.magic == RAW_CHUNK_MAGIC &&
		    ch.index == i && ch.pair.ticks >= out->ticks) {
			*out = ch.pair;
			return;
		}
	}
}

uint32_t raw_payload_min(uint16_t type)
{
	switch (type) {
	case RAW_REC_STRING:      return sizeof(struct raw_string) + 1;
	case RAW_REC_MARK:        return sizeof(struct raw_mark);
	case RAW_REC_RANGE_PUSH:  return sizeof(struct raw_range_push);
	case RAW_REC_RANGE_POP:   return 0;
	case RAW_REC_RANGE_START: return sizeof(struct raw_range_start);
	case RAW_REC_RANGE_END:   return sizeof(struct raw_range_end);
	case RAW_REC_STEP:        return sizeof(struct raw_step);
	case RAW_REC_THREAD_NAME: return sizeof(struct raw_thread_name);
	case RAW_REC_METADATA:    return sizeof(struct raw_metadata);
	case RAW_REC_PROCESS:     return sizeof(struct raw_process);
	case RAW_REC_RECORDING:   return sizeof(struct raw_recording);
	case RAW_REC_LOST:        return sizeof(struct raw_lost);
	case RAW_REC_CLOCK_SYNC:  return sizeof(struct raw_clock_pair);
	case RAW_REC_HOST_SAMPLE: return offsetof(struct raw_host_sample, parts);
	case RAW_REC_OP:          return offsetof(struct raw_op, flops);
	case RAW_REC_DEV_ACTIVITY: return offsetof(struct raw_dev_activity, wait_corr);
	case RAW_REC_DEV_API:     return sizeof(struct raw_dev_api);
	case RAW_REC_DEV_MEMORY:  return sizeof(struct raw_dev_memory);
	case RAW_REC_DEV_COLLECTIVE: return sizeof(struct raw_dev_collective);
	case RAW_REC_DEV_SAMPLE:  return sizeof(struct raw_dev_sample);
	case RAW_REC_DEV_INFO:    return sizeof(struct raw_dev_info);
	case RAW_REC_DEV_MARKER:  return sizeof(struct raw_dev_marker);
	case RAW_REC_HOST_NET:    return sizeof(struct raw_host_net);
	case RAW_REC_GC:          return sizeof(struct raw_gc);
	case RAW_REC_FW_MEMORY:   return sizeof(struct raw_fw_memory);
	case RAW_REC_OP_BEGIN:    return sizeof(struct raw_op_begin);
	case RAW_REC_OP_END:      return 0;
	default:                  return 0;
	}
}

/* ---- cursors ---- */

void raw_cursor_init(struct raw_cursor *c, struct raw_file *f, int quiet)
{
	memset(c, 0, sizeof *c);
	c->f = f;
	c->quiet = quiet;
	c->track_strings = !quiet;
}

void raw_cursor_free(struct raw_cursor *c)
{
	parse_idmap_free(&c->str);
}

static void damage(struct raw_cursor *c, uint64_t chunk, uint64_t off,
		   uint64_t skipped, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void damage(struct raw_cursor *c, uint64_t chunk, uint64_t off,
		   uint64_t skipped, const char *fmt, ...)
{
	if (c->quiet)
		return;
	struct raw_file *f = c->f;
	f->st.skipped_bytes += skipped;
	if (!f->log)
		return;
	char reason[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof reason, fmt, ap);
	va_end(ap);
	fprintf(f->log, "%s: %s: chunk %" PRIu64 " at offset 0x%" PRIx64 ": %s; skipped %"
		PRIu64 " bytes\n", f->who, f->path, chunk, off, reason, skipped);
}

static void chunk_skipped(struct raw_cursor *c)
{
	if (!c->quiet)
		c->f->st.skipped_chunks++;
}

static int all_zero(const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

/* A slot whose header was never written: the writer had not begun it (the
 * file was extended ahead) or died while beginning it. Damage only when the
 * writer went on to later chunks. */
static int zero_slot_is_damage(const struct raw_file *f, uint64_t i)
{
	return i + 1 < f->hdr.chunks;
}

/* Validates chunk slot i and sets the cursor on its records; 0 if usable. */
static int enter_chunk(struct raw_cursor *c, uint64_t i)
{
	struct raw_file *f = c->f;
	uint64_t off = RAW_HEADER_SIZE + i * (uint64_t)f->hdr.chunk_size;
	uint64_t avail = f->size - off;
	uint64_t area = f->hdr.chunk_size - CHUNK_HDR;
	struct raw_chunk_header ch;
	if (avail > f->hdr.chunk_size)
		avail = f->hdr.chunk_size;
	if (avail < CHUNK_HDR) {
		if (!all_zero(f->map + off, avail) || zero_slot_is_damage(f, i)) {
			chunk_skipped(c);
			damage(c, i, off, 0, "file ends inside the chunk header");
		}
		return -1;
	}
	memcpy(&ch, f->map + off, sizeof ch);
	if (ch.magic == 0 && all_zero(&ch, sizeof ch)) {
		if (zero_slot_is_damage(f, i)) {
			chunk_skipped(c);
			damage(c, i, off, 0, "chunk header never written, though later chunks were");
		}
		return -1;
	}
	if (ch.magic != RAW_CHUNK_MAGIC || ch.index != i) {
		chunk_skipped(c);
		damage(c, i, off, avail - CHUNK_HDR, ch.magic != RAW_CHUNK_MAGIC ?
		       "bad chunk magic 0x%08x" : "chunk header says index %u",
		       ch.magic != RAW_CHUNK_MAGIC ? ch.magic : ch.index);
		return -1;
	}
	if (ch.committed > area || ch.committed % RAW_ALIGN) {
		chunk_skipped(c);
		damage(c, i, off, avail - CHUNK_HDR, "committed %" PRIu64
		       " bytes does not fit the chunk (%" PRIu64 " bytes)", ch.committed, area);
		return -1;
	}
	c->ch = ch;
	c->chunk = i;
	c->pos = f->map + off + CHUNK_HDR;
	c->truncated = CHUNK_HDR + ch.committed > avail;
	c->end = c->pos + (c->truncated ? avail - CHUNK_HDR : ch.committed);
	if (c->truncated) {
		chunk_skipped(c);
		damage(c, i, off, CHUNK_HDR + ch.committed - avail,
		       "file ends inside the chunk: %" PRIu64 " of %" PRIu64
		       " committed bytes present", avail - CHUNK_HDR, ch.committed);
	}
	if (!c->quiet)
		f->st.lost += ch.lost;
	return 0;
}

static uint64_t offset_of(const struct raw_cursor *c, const unsigned char *p)
{
	return (uint64_t)(p - c->f->map);
}

static int str_define(struct raw_cursor *c, const struct raw_rec *r)
{
	struct raw_string s;
	memcpy(&s, r->payload, sizeof s);
	const char *text = (const char *)r->payload + sizeof s;
	if (s.id == 0 || (uint64_t)s.len + sizeof s + 1 > r->len || text[s.len] != '\0')
		return -EINVAL;
	/* The writer never puts a NUL inside a string: one there would make
	 * the text and its length disagree for every reader after us. */
	if (memchr(text, '\0', s.len))
		return -EINVAL;
	if (!c->track_strings)
		return 0;
	/* A map that cannot grow loses the name, not the record: the failed
	 * allocation is noted, and the parse says memory ran out. */
	void *def = (void *)(uintptr_t)r->payload;
	if (parse_idmap_put(&c->str, s.id, def) != def)
		return 0;
	c->str_nomem = 1;
	return -ENOMEM;
}

const char *raw_cursor_name(const struct raw_cursor *c, uint32_t id)
{
	const char *s = raw_cursor_str(c, id, NULL);
	return s ? s : RAW_STRING_LOST;
}

const char *raw_cursor_str(const struct raw_cursor *c, uint32_t id, uint32_t *len)
{
	if (id == 0) {
		if (len)
			*len = 0;
		return "";
	}
	const unsigned char *def = parse_idmap_get(&c->str, id);
	if (!def)
		return NULL;
	if (len)
		memcpy(len, def + offsetof(struct raw_string, len), sizeof *len);
	return (const char *)def + sizeof(struct raw_string);
}

/* The first id of the list that is not defined, 0 if all are. */
static uint32_t undefined_id(const struct raw_cursor *c, const uint32_t *ids, int n)
{
	for (int i = 0; i < n; i++)
		if (!raw_cursor_str(c, ids[i], NULL))
			return ids[i];
	return 0;
}

#define REF(type, field, i) memcpy(&ids[i], p + offsetof(type, field), 4)

/* The string ids a record of the later types (the device records and
 * after) refers to; returns how many. */
static int dev_string_refs(const struct raw_rec *r, uint32_t ids[4])
{
	const unsigned char *p = r->payload;
	switch (r->type) {
	case RAW_REC_DEV_ACTIVITY:
		REF(struct raw_dev_activity, name_id, 0);
		return 1;
	case RAW_REC_DEV_API:
		REF(struct raw_dev_api, name_id, 0);
		return 1;
	case RAW_REC_DEV_COLLECTIVE:
		REF(struct raw_dev_collective, name_id, 0);
		REF(struct raw_dev_collective, group_id, 1);
		REF(struct raw_dev_collective, ranks_id, 2);
		return 3;
	case RAW_REC_DEV_INFO:
		REF(struct raw_dev_info, name_id, 0);
		REF(struct raw_dev_info, uuid_id, 1);
		return 2;
	case RAW_REC_DEV_MARKER:
		REF(struct raw_dev_marker, name_id, 0);
		REF(struct raw_dev_marker, domain_id, 1);
		return 2;
	case RAW_REC_OP_BEGIN:
		REF(struct raw_op_begin, name_id, 0);
		REF(struct raw_op_begin, shapes_id, 1);
		return 2;
	default:
		return 0;
	}
}

/* The string ids a record refers to; returns how many. */
static int string_refs(const struct raw_rec *r, uint32_t ids[4])
{
	const unsigned char *p = r->payload;
	if (r->type >= RAW_REC_DEV_ACTIVITY)
		return dev_string_refs(r, ids);
	switch (r->type) {
	case RAW_REC_MARK:
	case RAW_REC_RANGE_PUSH:
		memcpy(&ids[0], p, 4);
		return 1;
	case RAW_REC_RANGE_START:
		memcpy(&ids[0], p + offsetof(struct raw_range_start, name_id), 4);
		return 1;
	case RAW_REC_THREAD_NAME:
		memcpy(&ids[0], p + offsetof(struct raw_thread_name, name_id), 4);
		return 1;
	case RAW_REC_METADATA:
		memcpy(&ids[0], p + offsetof(struct raw_metadata, key_id), 4);
		memcpy(&ids[1], p + offsetof(struct raw_metadata, value_id), 4);
		return 2;
	case RAW_REC_PROCESS:
		memcpy(&ids[0], p + offsetof(struct raw_process, cmdline_id), 4);
		memcpy(&ids[1], p + offsetof(struct raw_process, exe_id), 4);
		memcpy(&ids[2], p + offsetof(struct raw_process, rank_id), 4);
		return 3;
	case RAW_REC_OP:
		memcpy(&ids[0], p + offsetof(struct raw_op, name_id), 4);
		memcpy(&ids[1], p + offsetof(struct raw_op, shapes_id), 4);
		memcpy(&ids[2], p + offsetof(struct raw_op, types_id), 4);
		memcpy(&ids[3], p + offsetof(struct raw_op, stack_id), 4);
		return 4;
	default:
		return 0;
	}
}

/* Checks a framed record's inside; NULL if good, else the reason. */
static const char *record_problem(struct raw_cursor *c, const struct raw_rec *r)
{
	if (r->type == 0)
		return "record type 0";
	if (r->len < raw_payload_min(r->type))
		return "payload too short for the type";
	if (r->type == RAW_REC_STRING)
		return str_define(c, r) == -EINVAL ? "bad string definition" : NULL;
	return NULL;
}

/* A record naming a string whose definition was lost (in a skipped chunk)
 * is kept: dropping a range push would unbalance its thread's stack. It
 * reads as RAW_STRING_LOST; the first per file is named, all counted. */
static void check_names(struct raw_cursor *c, const struct raw_rec *r)
{
	uint32_t ids[4];
	int n = c->track_strings ? string_refs(r, ids) : 0;
	uint32_t id = n ? undefined_id(c, ids, n) : 0;
	if (!id || c->quiet)
		return;
	struct raw_file *f = c->f;
	if (f->st.unnamed_records++ == 0 && f->log)
		fprintf(f->log, "%s: %s: chunk %" PRIu64 " at offset 0x%" PRIx64 ": record of "
			"type %u names string %u, never defined (%s); kept without its name\n",
			f->who, f->path, r->chunk, r->offset, r->type, id, c->str_nomem ?
			"lost when memory ran out, or with a damaged chunk?" :
			"lost with a damaged chunk?");
}

/* Reads the record at c->pos: 1 good, 0 skipped (cursor moved on), -1 the
 * framing broke (rest of the chunk dropped). */
static int take_record(struct raw_cursor *c, struct raw_rec *r)
{
	uint64_t left = (uint64_t)(c->end - c->pos);
	struct raw_record h;
	uint64_t off = offset_of(c, c->pos);
	if (left < REC_HDR) {
		if (!c->truncated)
			damage(c, c->chunk, off, left, "record header cut short");
		else if (!c->quiet)
			c->f->st.skipped_bytes += left;
		return -1;
	}
	memcpy(&h, c->pos, sizeof h);
	if (h.size < REC_HDR || h.size % RAW_ALIGN || h.size > left) {
		if (c->truncated && h.size <= c->f->hdr.chunk_size && h.size >= REC_HDR &&
		    h.size % RAW_ALIGN == 0) {
			if (!c->quiet)  /* cut by the end of the file: named already */
				c->f->st.skipped_bytes += left;
		} else {
			damage(c, c->chunk, off, left, "record of type %u has bad size %u (%"
			       PRIu64 " bytes left in the chunk); rest of the chunk", h.type,
			       h.size, left);
		}
		return -1;
	}
	*r = (struct raw_rec){ .type = h.type, .flags = h.flags, .size = h.size, .ts = h.ts,
			       .payload = c->pos + REC_HDR, .len = h.size - REC_HDR,
			       .chunk = c->chunk, .offset = off };
	c->pos += h.size;
	if (h.type >= RAW_REC_TYPE_MAX) {
		/* A newer writer's type: skipped by its size, as the format allows. */
		if (!c->quiet)
			c->f->st.unknown_records++;
		return 0;
	}
	const char *why = record_problem(c, r);
	if (!why) {
		check_names(c, r);
		return 1;
	}
	if (!c->quiet)
		c->f->st.bad_records++;
	damage(c, c->chunk, off, h.size, "record of type %u: %s", h.type, why);
	return 0;
}

/* Read chunks leave the process's memory (the file keeps them; a string
 * or name still pointed at faults its page back in), so reading a long
 * stream takes memory for about one chunk, not the whole file. */
static void release_chunk(struct raw_cursor *c)
{
	if (c->quiet || c->f->borrowed)   /* the caller's memory: MADV_DONTNEED would zero it */
		return;
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)(c->f->map + RAW_HEADER_SIZE +
				  c->chunk * (uint64_t)c->f->hdr.chunk_size);
	uintptr_t b = a + c->f->hdr.chunk_size;
	a = (a + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	b &= ~((uintptr_t)page - 1);
	if (b > (uintptr_t)(c->f->map + c->f->size))
		b = (uintptr_t)(c->f->map + c->f->size) & ~((uintptr_t)page - 1);
	if (b > a)
		madvise((void *)a, b - a, MADV_DONTNEED);
}

/* The header counts the chunks the writer began: more than the file holds
 * means the file was cut short. */
static void end_check(struct raw_cursor *c)
{
	struct raw_file *f = c->f;
	if (c->ended || c->quiet)
		return;
	c->ended = 1;
	if (f->st.unnamed_records > 1 && f->log)
		fprintf(f->log, "%s: %s: %" PRIu64 " records in all named strings never defined\n",
			f->who, f->path, f->st.unnamed_records);
	if (f->hdr.chunks <= f->nchunks)
		return;
	f->st.skipped_chunks += f->hdr.chunks - f->nchunks;
	damage(c, f->nchunks, f->size, 0, "file ends here, but the header says %" PRIu64
	       " chunks were begun; %" PRIu64 " missing", f->hdr.chunks,
	       f->hdr.chunks - f->nchunks);
}

enum raw_next raw_cursor_next(struct raw_cursor *c, struct raw_rec *r)
{
	for (;;) {
		if (c->pos && c->pos < c->end) {
			int t = take_record(c, r);
			if (t > 0) {
				if (!c->quiet) {
					c->f->st.records++;
					if (r->type == RAW_REC_LOST) {
						struct raw_lost l;
						memcpy(&l, r->payload, sizeof l);
						c->f->st.lost += l.count;
					}
				}
				return RAW_NEXT_RECORD;
			}
			if (t < 0) {
				if (!c->truncated)
					chunk_skipped(c);
				c->pos = c->end = NULL;
			}
			continue;
		}
		if (c->pos)
			release_chunk(c);
		c->pos = c->end = NULL;
		if (c->next_chunk >= c->f->nchunks) {
			end_check(c);
			return RAW_NEXT_END;
		}
		if (enter_chunk(c, c->next_chunk++) == 0)
			return RAW_NEXT_CHUNK;
	}
}
