/*
 * libFuzzer harness for the raw-file reader (lib/raw/raw_reader.h): the
 * input is a whole raw stream, opened in memory (so that AddressSanitizer
 * sees every byte past the end), walked by a loud cursor that looks up
 * every string a record could name, then by a quiet one.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "raw/raw_reader.h"

static FILE *devnull(void)
{
	static FILE *f;
	if (!f)
		f = fopen("/dev/null", "w");
	return f;
}

/* Every aligned 32-bit word of a payload, tried as a string id. */
static size_t touch_strings(const struct raw_cursor *c, const struct raw_rec *r)
{
	size_t sum = 0;
	const unsigned char *p = r->payload;
	for (uint32_t off = 0; off + 4 <= r->len; off += 4) {
		uint32_t id, len = 0;
		memcpy(&id, p + off, 4);
		const char *s = raw_cursor_str(c, id, &len);
		if (s) {
			if (strlen(s) > len)
				__builtin_trap();  /* the text must end at its length */
			sum += len;
		}
		sum += strlen(raw_cursor_name(c, id));
	}
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct raw_file f;
	char why[256];
	if (raw_file_open_mem(&f, "fuzz.raw", data, size, devnull(), why, sizeof why) != 0)
		return 0;
	struct raw_clock_pair pair;
	raw_file_last_pair(&f, &pair);

	struct raw_cursor c;
	struct raw_rec r;
	enum raw_next n;
	volatile size_t sink = 0;
	raw_cursor_init(&c, &f, 0);
	while ((n = raw_cursor_next(&c, &r)) != RAW_NEXT_END) {
		if (n != RAW_NEXT_RECORD)
			continue;
		if (r.len != r.size - 16 || r.offset + r.size > f.size)
			__builtin_trap();
		/* read the whole payload, so that ASan checks its bounds */
		const unsigned char *p = r.payload;
		for (uint32_t i = 0; i < r.len; i++)
			sink += p[i];
		sink += touch_strings(&c, &r);
	}
	raw_cursor_free(&c);

	raw_cursor_init(&c, &f, 1);
	while ((n = raw_cursor_next(&c, &r)) != RAW_NEXT_END)
		sink += r.size;
	raw_cursor_free(&c);
	raw_file_close(&f);
	(void)sink;
	return 0;
}
