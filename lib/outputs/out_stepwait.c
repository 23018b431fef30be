#include "outputs/out_stepwait.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int out_stepwait_init(struct out_stepwait *w, struct csv *oc, const char *dir,
		      enum out_spill_step where, size_t max_wait)
{
	memset(w, 0, sizeof *w);
	w->oc = oc;
	w->where = where;
	w->max_wait = max_wait;
	w->dir = strdup(dir);
	if (!w->dir)
		return -ENOMEM;
	csv_init(&w->c, NULL);
	return 0;
}

/* Keeps a row in memory; 0 when that would pass max_wait. */
static int wait_push(struct out_stepwait *w, int32_t pid, uint64_t ns, const char *text, size_t n)
{
	struct out_stepwait_hdr h = { pid, (uint32_t)n, ns };
	size_t need = sizeof h + n;
	if (w->len - w->head + need > w->max_wait)
		return 0;
	if (w->len + need > w->cap && w->head) {   /* what was written goes */
		memmove(w->wait, w->wait + w->head, w->len - w->head);
		w->len -= w->head;
		w->head = 0;
	}
	if (w->len + need > w->cap) {
		size_t cap = w->cap ? w->cap : 65536;
		while (cap < w->len + need)
			cap *= 2;
		unsigned char *v = realloc(w->wait, cap);
		if (!v)
			return 0;
		w->wait = v;
		w->cap = cap;
	}
	memcpy(w->wait + w->len, &h, sizeof h);
	memcpy(w->wait + w->len + sizeof h, text, n);
	w->len += need;
	return 1;
}

/* From now on rows wait in the spill: the waiting ones go there first. */
static int start_spill(struct out_stepwait *w)
{
	int rc = out_spill_open(&w->spill, w->dir);
	if (rc)
		return rc;
	csv_init(&w->c, w->spill.f);
	w->spilling = 1;
	while (w->head < w->len) {
		struct out_stepwait_hdr h;
		memcpy(&h, w->wait + w->head, sizeof h);
		out_spill_key(&w->c, h.pid, h.ns);
		csv_raw(&w->c, w->wait + w->head + sizeof h, h.len);
		w->head += sizeof h + h.len;
	}
	free(w->wait);
	w->wait = NULL;
	w->head = w->len = w->cap = 0;
	return 0;
}

void out_stepwait_row(struct out_stepwait *w, int32_t pid, uint64_t ns,
		      out_stepwait_render_fn render, const void *row, const void *ctx)
{
	if (!w->spilling) {
		size_t n;
		render(&w->c, row, ctx);
		const char *text = csv_take(&w->c, &n);
		if (!w->c.error && wait_push(w, pid, ns, text, n))
			return;
		w->c.error = 0;   /* too long for the row buffer, or too much waiting */
		int rc = start_spill(w);
		if (rc) {
			w->failed = rc;
			return;
		}
	}
	out_spill_key(&w->c, pid, ns);
	render(&w->c, row, ctx);
}

/* A row's text (through its newline) with its step. */
static void put_row(struct out_stepwait *w, int64_t step, const unsigned char *text, size_t n)
{
	char b[24];
	if (w->where == OUT_STEP_FIRST)
		csv_raw(w->oc, b, out_spill_step_field(b, step));
	if (w->where != OUT_STEP_LAST || n == 0) {
		csv_raw(w->oc, text, n);
		return;
	}
	csv_raw(w->oc, text, n - 1);
	csv_raw(w->oc, b, out_spill_step_end(b, step));
}

static void drain(struct out_stepwait *w, out_stepwait_step_fn step, void *ctx,
		  const struct out_step_find *want)
{
	while (w->head < w->len) {
		struct out_stepwait_hdr h;
		memcpy(&h, w->wait + w->head, sizeof h);
		int64_t s = step(ctx, h.pid, h.ns);
		if (s == OUT_STEPWAIT)
			break;
		if (out_step_find_wanted(want, s))
			put_row(w, s, w->wait + w->head + sizeof h, h.len);
		w->head += sizeof h + h.len;
	}
	if (w->head == w->len)
		w->head = w->len = 0;
}

void out_stepwait_settle(struct out_stepwait *w, out_stepwait_step_fn step, void *ctx,
			 const uint64_t *want, size_t nwant)
{
	struct out_step_find f = { .want = want, .nwant = nwant };
	drain(w, step, ctx, &f);
}

static int64_t final_step(void *ctx, int32_t pid, uint64_t ns)
{
	return out_step_find(ctx, pid, ns);
}

int out_stepwait_finish(struct out_stepwait *w, FILE *out, const struct out_step_find *f)
{
	drain(w, final_step, (void *)f, f);
	int err = csv_finish(w->oc);   /* before the spill's rows */
	if (!err)
		err = w->failed;
	if (!err && w->spilling)
		err = csv_finish(&w->c);
	if (!err && w->spilling)
		err = out_spill_replay(w->spill.f, out, f, w->where);
	return err;
}

void out_stepwait_free(struct out_stepwait *w)
{
	if (w->spill.f)
		out_file_abort(&w->spill);
	free(w->wait);
	free(w->dir);
	w->wait = NULL;
	w->dir = NULL;
}
