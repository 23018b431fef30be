/* torch's operator ranges among NVTX messages (torch_nvtx.h). */
#include "common/torch_nvtx.h"

#include <string.h>

#define OP_ID ", op_id = "
#define SEQ ", seq = "
#define SIZES ", sizes = "
#define INPUT_IDS ", input_op_ids = "

/* Digits at s (at least one, at most 19: no overflow): their value, and
 * how many there are; 0 when none. */
static size_t digits(const char *s, uint64_t *v)
{
	size_t n = 0;
	*v = 0;
	while (n < 19 && s[n] >= '0' && s[n] <= '9')
		*v = *v * 10 + (uint64_t)(s[n++] - '0');
	return s[n] >= '0' && s[n] <= '9' ? 0 : n;
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Is s[0, n) one bracketed list, "[...]", its brackets balanced? */
static bool one_list(const char *s, size_t n)
{
	int depth = 0;
	for (size_t i = 0; i < n; i++) {
		depth += (s[i] == '[') - (s[i] == ']');
		if (depth <= 0 && i + 1 < n)
			return false;
	}
	return n > 1 && s[0] == '[' && depth == 0;
}

/* What follows the op id: nothing, or sizes and/or input ids, each a
 * bracketed list (sizes' list ends where the input ids begin). */
static bool tail(const char *s, const char *msg, struct torch_nvtx_op *op)
{
	if (starts(s, SIZES)) {
		s += strlen(SIZES);
		const char *ids = strstr(s, INPUT_IDS);
		op->sizes_at = (size_t)(s - msg);
		op->sizes_len = ids ? (size_t)(ids - s) : strlen(s);
		if (!one_list(s, op->sizes_len))
			return false;
		s += op->sizes_len;
	}
	if (starts(s, INPUT_IDS)) {
		s += strlen(INPUT_IDS);
		return one_list(s, strlen(s));
	}
	return *s == '\0';
}

/* The sequence number right before the op id, if there is one. */
static void seq_before(const char *msg, struct torch_nvtx_op *op)
{
	op->seq = -1;
	size_t end = op->name_len, n = 0;
	while (n < end && msg[end - n - 1] >= '0' && msg[end - n - 1] <= '9')
		n++;
	size_t at = end - n;
	uint64_t v;
	if (n && n < 19 && at >= strlen(SEQ) && starts(msg + at - strlen(SEQ), SEQ) &&
	    digits(msg + at, &v) == n) {
		op->seq = (int64_t)v;
		op->name_len = at - strlen(SEQ);
	}
}

bool torch_nvtx_op_parse(const char *msg, struct torch_nvtx_op *op)
{
	if (!msg)
		return false;
	/* the first op id that the rest of the message follows: a name that
	 * holds the text itself is still read right */
	for (const char *at = strstr(msg, OP_ID); at; at = strstr(at + 1, OP_ID)) {
		memset(op, 0, sizeof *op);
		size_t n = digits(at + strlen(OP_ID), &op->op_id);
		if (!n || !op->op_id || !tail(at + strlen(OP_ID) + n, msg, op))
			continue;
		op->name_len = (size_t)(at - msg);
		seq_before(msg, op);
		return op->name_len > 0;
	}
	return false;
}

bool torch_nvtx_is_annotation(const char *name)
{
	if (strstr(name, "::"))
		return false;
	const char *b = strstr(name, "Backward"), *last = NULL;
	for (; b; b = strstr(b + 1, "Backward"))
		last = b;
	if (!last)
		return true;
	last += strlen("Backward");
	last += strspn(last, "0123456789");
	return *last != '\0';
}

/* On every operator's range (the NVTX hook's hot path): the first byte
 * settles almost all without a call. */
bool torch_nvtx_left_out(const char *name)
{
	return (name[0] == 'e' &&
		strncmp(name, TORCH_NEXT_PREFIX, sizeof TORCH_NEXT_PREFIX - 1) == 0) ||
	       (name[0] == 'P' &&
		strncmp(name, TORCH_STEP_PREFIX, sizeof TORCH_STEP_PREFIX - 1) == 0);
}
