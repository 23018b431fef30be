#include "parse/parse_stream.h"

#include <errno.h>
#include <string.h>

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
	return 0;
}

int parse_stream_next(struct parse_stream *s)
{
	for (;;) {
		enum raw_next n = raw_cursor_next(&s->cur, &s->rec);
		if (n == RAW_NEXT_END)
			return 0;
		/* Strings and clock pairs are not events: the reader and the time
		 * map took them; their stamps must not push later events on. */
		if (n != RAW_NEXT_RECORD || s->rec.type == RAW_REC_STRING ||
		    s->rec.type == RAW_REC_CLOCK_SYNC)
			continue;
		uint64_t ns = timemap_map(&s->tm, s->rec.ts);
		if (s->nrec && ns <= s->last_ns)
			ns = s->file.hdr.kind == RAW_STREAM_FRAMEWORK ? s->last_ns : s->last_ns + 1;
		s->ns = s->last_ns = ns;
		s->nrec++;
		return 1;
	}
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
	raw_file_close(&s->file);
}
