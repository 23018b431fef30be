/*
 * libFuzzer harness for the reader of torch's own trace files of operator
 * flushes (lib/ingest/kineto_read.h): files a process may leave cut short
 * or a user may hand over. Every operator read must be whole: a name
 * inside the buffer, a duration not negative.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/kineto_read.h"
#include "fuzz_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	if (!text)
		return 0;
	struct kineto_ops ops = { 0 };
	size_t at = 0;
	int rc = kineto_read(text, size, &ops, &at);
	if (rc != 0 && at > size)
		__builtin_trap();   /* the place named lies in the input */
	for (size_t i = 0; i < ops.n; i++) {
		const struct kineto_op *o = &ops.v[i];
		if (o->name < text || o->name > text + size || o->dur_ns < 0 ||
		    strlen(o->name) > size)
			__builtin_trap();
	}
	kineto_ops_free(&ops);
	free(text);
	return 0;
}
