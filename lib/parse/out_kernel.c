#include "parse/out_kernel.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parse/out_file.h"
#include "parse/out_spill.h"

#define NA "N/A"

int out_kernel_open(struct out_kernel *k, const char *dir, uint64_t base_mono_ns)
{
	memset(k, 0, sizeof *k);
	k->base = base_mono_ns;
	k->dir = strdup(dir);
	if (!k->dir)
		return -ENOMEM;
	int rc = out_file_open(&k->out, dir, "kernel_details.csv");
	if (rc) {
		free(k->dir);
		k->dir = NULL;
		return rc;
	}
	csv_init(&k->oc, k->out.f);
	csv_background(&k->oc);
	csv_header(&k->oc, OUT_KERNEL_HEADER);
	csv_init(&k->c, NULL);
	return 0;
}

/* A row's text, Step Id left out. */
static void row_text(const struct out_kernel *k, struct csv *c, const struct out_kernel_row *r)
{
	csv_uint(c, r->device);
	csv_lit(c, NA);
	csv_uint(c, r->correlation);
	csv_uint(c, r->stream);
	csv_name(c, r->name);
	csv_name(c, r->type);
	csv_lit(c, NA);
	csv_name(c, r->core);
	csv_ts(c, (int64_t)(r->start_ns - k->base));
	csv_ns_us(c, (int64_t)(r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0));
	csv_ns_us(c, (int64_t)r->wait_ns);
	csv_uint(c, r->blocks);
	csv_lit(c, NA "," NA);
	csv_name(c, r->shapes ? r->shapes : NA);
	csv_name(c, r->types ? r->types : NA);
	csv_lit(c, NA "," NA "," NA "," NA);
	csv_end_row(c);
}

/* Keeps a row in memory; 0 when that would pass OUT_KERNEL_WAIT_MAX. */
static int wait_push(struct out_kernel *k, int32_t pid, uint64_t ns, const char *text, size_t n)
{
	struct out_kernel_wait h = { pid, (uint32_t)n, ns };
	size_t need = sizeof h + n;
	if (k->len - k->head + need > OUT_KERNEL_WAIT_MAX)
		return 0;
	if (k->len + need > k->cap && k->head) {   /* what was written goes */
		memmove(k->wait, k->wait + k->head, k->len - k->head);
		k->len -= k->head;
		k->head = 0;
	}
	if (k->len + need > k->cap) {
		size_t cap = k->cap ? k->cap : 65536;
		while (cap < k->len + need)
			cap *= 2;
		unsigned char *v = realloc(k->wait, cap);
		if (!v)
			return 0;
		k->wait = v;
		k->cap = cap;
	}
	memcpy(k->wait + k->len, &h, sizeof h);
	memcpy(k->wait + k->len + sizeof h, text, n);
	k->len += need;
	return 1;
}

/* From now on rows wait in the spill: the waiting ones go there first. */
static int start_spill(struct out_kernel *k)
{
	int rc = out_spill_open(&k->spill, k->dir);
	if (rc)
		return rc;
	csv_init(&k->c, k->spill.f);
	k->spilling = 1;
	while (k->head < k->len) {
		struct out_kernel_wait h;
		memcpy(&h, k->wait + k->head, sizeof h);
		out_spill_key(&k->c, h.pid, h.ns);
		csv_raw(&k->c, k->wait + k->head + sizeof h, h.len);
		k->head += sizeof h + h.len;
	}
	free(k->wait);
	k->wait = NULL;
	k->head = k->len = k->cap = 0;
	return 0;
}

void out_kernel_row(struct out_kernel *k, const struct out_kernel_row *r)
{
	k->rows++;
	if (!k->spilling) {
		size_t n;
		row_text(k, &k->c, r);
		const char *text = csv_take(&k->c, &n);
		if (!k->c.error && wait_push(k, r->pid, r->attr_ns, text, n))
			return;
		k->c.error = 0;   /* too long for the row buffer, or too much waiting */
		int rc = start_spill(k);
		if (rc) {
			k->failed = rc;
			return;
		}
	}
	out_spill_key(&k->c, r->pid, r->attr_ns);
	row_text(k, &k->c, r);
}

static void drain(struct out_kernel *k, out_kernel_step_fn step, void *ctx,
		  const struct out_step_find *want)
{
	while (k->head < k->len) {
		struct out_kernel_wait h;
		memcpy(&h, k->wait + k->head, sizeof h);
		int64_t s = step(ctx, h.pid, h.ns);
		if (s == OUT_KERNEL_WAIT)
			break;
		if (out_step_find_wanted(want, s)) {
			char b[24];
			csv_raw(&k->oc, b, out_spill_step_field(b, s));
			csv_raw(&k->oc, k->wait + k->head + sizeof h, h.len);
		}
		k->head += sizeof h + h.len;
	}
	if (k->head == k->len)
		k->head = k->len = 0;
}

void out_kernel_settle(struct out_kernel *k, out_kernel_step_fn step, void *ctx,
		       const uint64_t *want, size_t nwant)
{
	struct out_step_find w = { .want = want, .nwant = nwant };
	drain(k, step, ctx, &w);
}

static int64_t final_step(void *ctx, int32_t pid, uint64_t ns)
{
	return out_step_find(ctx, pid, ns);
}

int out_kernel_write(struct out_kernel *k, const struct out_step_find *f)
{
	drain(k, final_step, (void *)f, f);
	int err = csv_finish(&k->oc);   /* before the spill's rows */
	if (!err)
		err = k->failed;
	if (!err && k->spilling)
		err = csv_finish(&k->c);
	if (!err && k->spilling)
		err = out_spill_replay(k->spill.f, k->out.f, f, 1);
	return out_file_commit(&k->out, err);
}

void out_kernel_free(struct out_kernel *k)
{
	csv_abort(&k->oc);
	if (k->out.f)
		out_file_abort(&k->out);
	if (k->spill.f)
		out_file_abort(&k->spill);
	free(k->wait);
	free(k->dir);
	k->wait = NULL;
	k->dir = NULL;
}
