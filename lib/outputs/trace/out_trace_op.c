#include "outputs/trace/out_trace_op.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <string.h>

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

/* A value the line cannot take as it is, through the writer into a
 * strbuf (tight, as the line), then copied in. */
static char *rewritten_at(struct jo *j, char *p, const char *text, int k)
{
	struct strbuf sb = STRBUF_INIT;
	struct jo w;
	jo_init_sb(&w, &sb, 0);
	jo_tight(&w);
	if (k == TEXT_ODD) {
		cJSON *v = cJSON_Parse(text);
		jo_cjson(&w, v);
		cJSON_Delete(v);
	} else {
		jo_str(&w, text);
	}
	jo_finish(&w);
	p = jo_raw_at(j, p, sb.buf ? sb.buf : "null");
	sb_free(&sb);
	return p;
}

static char *json_arg_at(struct jo *j, char *p, struct parse_idmap *seen, const char *key,
			 size_t klen, const char *text)
{
	if (!text)
		return p;
	memcpy(p, key, klen);
	p += klen;
	int k = verdict(seen, text);
	return k == TEXT_PLAIN ? jo_raw_at(j, p, text) : rewritten_at(j, p, text, k);
}
#define ARG(key) ",\"" key "\":", sizeof(",\"" key "\":") - 1

void out_trace_op(struct out_trace *t, struct parse_idmap *seen, const struct out_op *op)
{
	struct jo *j = &t->j;
	char *p = out_trace_x_at(t, op->user ? "user_annotation" : "cpu_op", op->name, op->pid,
				 op->tid, op->start_ns, op->end_ns);
	p = JO_LIT(p, ",\"args\":{\"External id\":");
	p += jo_fmt_uint(p, op->id);
	p = json_arg_at(j, p, seen, ARG("Input Dims"), op->shapes);
	p = json_arg_at(j, p, seen, ARG("Input type"), op->types);
	if (op->stack) {
		p = JO_LIT(p, ",\"Call stack\":\"");
		p = jo_cstr_at(j, p, op->stack);
		*p++ = '"';
	}
	if (op->seq >= 0) {
		p = JO_LIT(p, ",\"Sequence number\":");
		p += jo_fmt_int(p, op->seq);
	}
	if (op->flops) {
		p = JO_LIT(p, ",\"flops\":");
		p += jo_fmt_uint(p, op->flops);
	}
	if (op->fwd_tid) {
		p = JO_LIT(p, ",\"Fwd thread id\":");
		p += jo_fmt_int(p, op->fwd_tid);
	}
	out_trace_line_end(t, JO_LIT(p, "}}"));
}
