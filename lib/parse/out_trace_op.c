#include "parse/out_trace_op.h"

#include <cjson/cJSON.h>
#include <stdint.h>

enum { TEXT_PLAIN = 1, TEXT_ODD = 2, TEXT_BAD = 3 };

/* TEXT_PLAIN: valid JSON of printable ASCII, copied as it is; TEXT_ODD:
 * valid, but rewritten through the escaping writer; TEXT_BAD: a string. */
static int classify(const char *text)
{
	cJSON *v = cJSON_Parse(text);
	if (!v)
		return TEXT_BAD;
	cJSON_Delete(v);
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		if (*p < 0x20 || *p >= 0x7f)
			return TEXT_ODD;
	return TEXT_PLAIN;
}

static int verdict(struct parse_idmap *seen, const char *text)
{
	uint64_t key = (uint64_t)(uintptr_t)text;
	void *v = parse_idmap_get(seen, key);
	if (v)
		return (int)(uintptr_t)v;
	int k = classify(text);
	parse_idmap_put(seen, key, (void *)(uintptr_t)k);  /* out of memory: checked again */
	return k;
}

static void json_arg(struct jo *j, struct parse_idmap *seen, const char *key, const char *text)
{
	if (!text)
		return;
	jo_key(j, key);
	int k = verdict(seen, text);
	if (k == TEXT_PLAIN) {
		jo_raw(j, text);
	} else if (k == TEXT_ODD) {
		cJSON *v = cJSON_Parse(text);
		jo_cjson(j, v);
		cJSON_Delete(v);
	} else {
		jo_str(j, text);
	}
}

void out_trace_op(struct out_trace *t, struct parse_idmap *seen, const struct out_op *op)
{
	struct jo *j = &t->j;
	out_trace_begin(t, "X", op->user ? "user_annotation" : "cpu_op", op->name, op->pid, op->tid,
			op->start_ns);
	jo_kns_us(j, "dur", (int64_t)(op->end_ns - op->start_ns));
	jo_key(j, "args");
	jo_obj_begin(j);
	jo_kuint(j, "External id", op->id);
	json_arg(j, seen, "Input Dims", op->shapes);
	json_arg(j, seen, "Input type", op->types);
	if (op->stack)
		jo_kstr(j, "Call stack", op->stack);
	if (op->seq >= 0)
		jo_kint(j, "Sequence number", op->seq);
	if (op->fwd_tid)
		jo_kint(j, "Fwd thread id", op->fwd_tid);
	jo_obj_end(j);
	out_trace_end(t);
}
