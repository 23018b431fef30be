#include "ingest/parse_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { LOOK_OPEN, LOOK_CHUNKS, LOOK_CLOSE, LOOK_DONE };

/* The time map's pair source: open pair, then each chunk's pair and each
 * clock-sync record in file order, then the close pair. */
static int next_pair(void *ctx, struct raw_clock_pair *out)
{
	struct parse_stream *s = ctx;
	struct raw_rec r;
	switch (s->look_state) {
	case LOOK_OPEN:
		s->look_state = LOOK_CHUNKS;
		*out = s->file.hdr.open_pair;
		return 1;
	case LOOK_CHUNKS:
		for (;;) {
			enum raw_next n = raw_cursor_next(&s->look, &r);
			if (n == RAW_NEXT_CHUNK) {
				*out = s->look.ch.pair;
				return 1;
			}
			if (n == RAW_NEXT_RECORD && r.type == RAW_REC_CLOCK_SYNC) {
				memcpy(out, r.payload, sizeof *out);
				return 1;
			}
			if (n == RAW_NEXT_END)
				break;
		}
		s->look_state = LOOK_CLOSE;
		/* fall through */
	case LOOK_CLOSE:
		s->look_state = LOOK_DONE;
		if (s->file.hdr.flags & RAW_FILE_CLOSED) {
			*out = s->file.hdr.close_pair;
			return 1;
		}
		return 0;
	default:
		return 0;
	}
}

int parse_stream_open(struct parse_stream *s, const struct parse_src *src,
		      size_t index, uint64_t run_tsc_hz, FILE *log)
{
	memset(s, 0, sizeof *s);
	int rc = raw_file_open(&s->file, src->path, log, NULL, 0);
	if (rc)
		return rc; /* named on `log` by raw_file_open */
	s->src = src;
	s->index = index;
	s->open_ns = s->file.hdr.open_pair.mono_ns;
	raw_cursor_init(&s->cur, &s->file, 0);
	raw_cursor_init(&s->look, &s->file, 1);
	struct raw_clock_pair last;
	uint64_t rt, rn;
	raw_file_last_pair(&s->file, &last);
	s->rate_src = timemap_pick_rate(run_tsc_hz, &s->file.hdr.open_pair, &last,
					s->file.hdr.tsc_hz, &rt, &rn);
	timemap_init(&s->tm, s->file.hdr.clock, rt, rn, next_pair, s);
	s->reorder = s->file.hdr.kind == RAW_STREAM_DEVICE;
	reorder_init(&s->rq);
	/* The writer's word on how late a record can be (in ns: not for a
	 * TSC-clocked stream, whose records the time map moves). */
	if (s->reorder && (s->file.hdr.flags & RAW_FILE_LATE_BOUND) &&
	    s->file.hdr.clock != RAW_CLOCK_TSC && s->file.hdr.late_ns < s->rq.window_ns)
		s->rq.window_ns = s->file.hdr.late_ns;
	if (s->reorder)   /* NULL: pages are given back at the end only */
		s->chunk_refs = calloc(s->file.nchunks ? s->file.nchunks : 1, sizeof *s->chunk_refs);
	return 0;
}

/* The next record of the file that is an event (strings and clock pairs
 * are not: the reader and the time map took them; their stamps must not
 * push later events on). 1, or 0 at the end. */
static int next_event(struct parse_stream *s, struct raw_rec *r, uint64_t *ns)
{
	for (;;) {
		enum raw_next n = raw_cursor_next(&s->cur, r);
		if (n == RAW_NEXT_END)
			return 0;
		if (n != RAW_NEXT_RECORD || r->type == RAW_REC_STRING ||
		    r->type == RAW_REC_CLOCK_SYNC)
			continue;
		*ns = timemap_map(&s->tm, r->ts);
		return 1;
	}
}

/* The record whose header is at `p`, as the cursor would have given it. */
static void rec_at(const struct parse_stream *s, const unsigned char *p, struct raw_rec *r)
{
	struct raw_record h;
	memcpy(&h, p, sizeof h);
	uint64_t off = (uint64_t)(p - s->file.map);
	*r = (struct raw_rec){ .type = h.type, .flags = h.flags, .size = h.size, .ts = h.ts,
			       .payload = p + sizeof h, .len = h.size - (uint32_t)sizeof h,
			       .chunk = (off - RAW_HEADER_SIZE) / s->file.hdr.chunk_size,
			       .offset = off };
}

void parse_file_release(const struct raw_file *f, uint64_t from, uint64_t to)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), base = (uintptr_t)f->map;
	uintptr_t a = base + RAW_HEADER_SIZE + from * f->hdr.chunk_size;
	uintptr_t b = base + RAW_HEADER_SIZE + to * f->hdr.chunk_size;
	uintptr_t end = base + f->size;
	if (!f->map)
		return;
	a = a - base > (64u << 10) ? a - (64u << 10) : base;
	a = (a + page - 1) & ~(page - 1);
	b = (b < end ? b : end) & ~(page - 1);
	if (b > a)
		madvise((void *)a, b - a, MADV_DONTNEED);
}

/* A record of chunk c entered (+1) or left (-1) the window. Chunks below
 * the oldest one with a record in the window, and below the cursor, are
 * done: their pages go. */
static void chunk_ref(struct parse_stream *s, uint64_t c, int d)
{
	if (!s->chunk_refs || c >= s->file.nchunks)
		return;
	s->chunk_refs[c] += (uint32_t)d;
	uint64_t limit = s->read_all ? s->file.nchunks : s->cur.chunk, low = s->chunk_low;
	while (d < 0 && low < limit && s->chunk_refs[low] == 0)
		low++;
	if (low > s->chunk_low) {
		parse_file_release(&s->file, s->chunk_low, low);
		s->chunk_low = low;
	}
}

/* Fills the window until its earliest record may go, then hands it out. */
static int next_reordered(struct parse_stream *s)
{
	struct raw_rec r;
	uint64_t ns;
	while (!s->read_all && !reorder_ripe(&s->rq)) {
		if (!next_event(s, &r, &ns))
			s->read_all = 1;
		else if (reorder_push(&s->rq, ns, s->file.map + r.offset) != 0)
			s->file.st.bad_records++;   /* out of memory: dropped, said as damage */
		else
			chunk_ref(s, r.chunk, +1);
	}
	if (s->rq.n == 0)
		return 0;
	struct reorder_ent e = reorder_pop(&s->rq);
	rec_at(s, e.rec, &s->rec);
	chunk_ref(s, s->rec.chunk, -1);
	s->ns = e.ns;
	if (!s->nrec || e.ns > s->last_ns)
		s->last_ns = e.ns;
	s->nrec++;
	return 1;
}

int parse_stream_next(struct parse_stream *s)
{
	if (s->reorder)
		return next_reordered(s);
	uint64_t ns;
	if (!next_event(s, &s->rec, &ns))
		return 0;
	if (s->nrec && ns <= s->last_ns)
		ns = s->file.hdr.kind == RAW_STREAM_FRAMEWORK ? s->last_ns : s->last_ns + 1;
	s->ns = s->last_ns = ns;
	s->nrec++;
	return 1;
}

uint64_t parse_stream_end_ns(const struct parse_stream *s)
{
	uint64_t end = s->nrec ? s->last_ns : s->open_ns;
	if ((s->file.hdr.flags & RAW_FILE_CLOSED) && s->file.hdr.close_pair.mono_ns > end)
		end = s->file.hdr.close_pair.mono_ns;
	return end;
}

const char *parse_stream_str(const struct parse_stream *s, uint32_t id)
{
	return raw_cursor_name(&s->cur, id);
}

void parse_stream_close(struct parse_stream *s)
{
	raw_cursor_free(&s->cur);
	raw_cursor_free(&s->look);
	reorder_free(&s->rq);
	free(s->chunk_refs);
	raw_file_close(&s->file);
}
