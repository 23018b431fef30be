/* The fuzzer's bytes as a NUL-terminated text (malloc'd; NULL when memory
 * ran out), for the harnesses of text parsers. */
#ifndef PROF_FUZZ_TEXT_H
#define PROF_FUZZ_TEXT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline char *fuzz_text(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (text) {
		memcpy(text, data, size);
		text[size] = '\0';
	}
	return text;
}

#endif
