/*
 * libFuzzer harness for reading torch's operator ranges out of NVTX
 * messages (common/torch_nvtx.h): the agent reads every message a program
 * pushes, inside the program, so no message may make it read outside
 * the text or hand back pieces that do not fit in it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/torch_nvtx.h"
#include "fuzz_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	if (!text)
		return 0;
	size_t len = strlen(text);
	struct torch_nvtx_op op;
	if (torch_nvtx_op_parse(text, &op)) {
		if (op.name_len == 0 || op.name_len > len || op.op_id == 0 ||
		    op.sizes_at + op.sizes_len > len || (op.sizes_len && op.sizes_at < op.name_len))
			__builtin_trap();
		text[op.name_len] = '\0';
		(void)torch_nvtx_is_annotation(text);
	}
	free(text);
	return 0;
}
