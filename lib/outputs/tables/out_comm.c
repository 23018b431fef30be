#include "outputs/tables/out_comm.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "outputs/tables/out_comm_int.h"
#include "outputs/out_file.h"

int out_comm_init(struct out_comm *c, const char *dir)
{
	memset(c, 0, sizeof *c);
	c->dir = strdup(dir);
	return c->dir ? 0 : -ENOMEM;
}

static FILE *spill_of(struct out_comm *c, const void *owner)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->src[i].owner == owner)
			return c->src[i].spill.f;
	struct out_comm_src *v = realloc(c->src, (c->n + 1) * sizeof *v);
	if (!v)
		return NULL;
	c->src = v;
	struct out_comm_src *s = &v[c->n];
	s->owner = owner;
	if (out_file_scratch(&s->spill, c->dir) != 0)
		return NULL;
	c->n++;
	return s->spill.f;
}

void out_comm_add(struct out_comm *c, const void *owner, const struct out_coll *r)
{
	FILE *f = spill_of(c, owner);
	if (!f || fwrite(r, sizeof *r, 1, f) != 1)
		c->error = 1;
}

/* Reading one process's spill back, step by step. */
struct cursor {
	FILE *f;
	struct out_coll cur;
	int64_t step, floor;
	int have;
};

/* Moves to the next collective that belongs to a step. Steps never go
 * back: a collective later than the reorder window stays in the step
 * being read. */
static void advance(struct cursor *k, const struct out_step_find *f, int have_steps)
{
	k->have = 0;
	while (fread(&k->cur, sizeof k->cur, 1, k->f) == 1) {
		int64_t s = have_steps ? out_step_find(f, k->cur.pid, k->cur.start_ns) : 0;
		if (s < 0)
			continue;
		k->step = s < k->floor ? k->floor : s;
		k->floor = k->step;
		k->have = 1;
		return;
	}
}

struct step_buf {
	struct out_coll *v;
	size_t n, cap;
	const struct out_coll **ptr;   /* p2p first, then collective */
};

static int buf_add(struct step_buf *b, const struct out_coll *r)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct out_coll *v = realloc(b->v, cap * sizeof *v);
		const struct out_coll **p = realloc(b->ptr, cap * sizeof *p);
		if (v)
			b->v = v;
		if (p)
			b->ptr = p;
		if (!v || !p)
			return -1;
		b->cap = cap;
	}
	b->v[b->n++] = *r;
	return 0;
}

static int start_cmp(const void *pa, const void *pb)
{
	const struct out_coll *a = pa, *b = pb;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

/* Splits the step's collectives into p2p and collective, by start. */
static void split(struct step_buf *b, struct out_comm_set *p2p, struct out_comm_set *coll)
{
	qsort(b->v, b->n, sizeof *b->v, start_cmp);
	size_t np = 0, k = 0;
	for (size_t i = 0; i < b->n; i++)
		np += out_comm_is_p2p(b->v[i].op) != 0;
	for (size_t i = 0; i < b->n; i++)
		if (out_comm_is_p2p(b->v[i].op))
			b->ptr[k++] = &b->v[i];
	for (size_t i = 0; i < b->n; i++)
		if (!out_comm_is_p2p(b->v[i].op))
			b->ptr[k++] = &b->v[i];
	*p2p = (struct out_comm_set){ b->ptr, np };
	*coll = (struct out_comm_set){ b->ptr + np, b->n - np };
}

struct outs {
	struct out_file cf, mf;
	struct jo cj, mj;
};

static void write_step(struct outs *o, struct step_buf *b, int64_t step, int have_steps,
		       uint64_t base)
{
	char key[32] = "step";
	struct out_comm_set p2p, coll;
	if (have_steps)
		snprintf(key, sizeof key, "step%" PRId64, step);
	split(b, &p2p, &coll);
	jo_key(&o->cj, key);
	jo_obj_begin(&o->cj);
	jo_key(&o->cj, "p2p");
	out_comm_json_set(&o->cj, &p2p, base);
	jo_key(&o->cj, "collective");
	out_comm_json_set(&o->cj, &coll, base);
	jo_obj_end(&o->cj);
	jo_key(&o->mj, key);
	jo_obj_begin(&o->mj);
	jo_key(&o->mj, "p2p");
	out_comm_matrix_set(&o->mj, &p2p);
	jo_key(&o->mj, "collective");
	out_comm_matrix_set(&o->mj, &coll);
	jo_obj_end(&o->mj);
}

/* The smallest step any cursor is at; 0 when all are done. */
static int min_step(const struct cursor *k, size_t n, int64_t *step)
{
	int any = 0;
	for (size_t i = 0; i < n; i++)
		if (k[i].have && (!any || k[i].step < *step)) {
			*step = k[i].step;
			any = 1;
		}
	return any;
}

static int merge_steps(struct out_comm *c, struct outs *o, struct cursor *k,
		       const struct out_step_find *f, int have_steps, uint64_t base)
{
	struct step_buf b = { 0 };
	int64_t step = 0; /* set by min_step before use */
	int rc = 0;
	for (size_t i = 0; i < c->n; i++) {
		k[i].f = c->src[i].spill.f;
		rewind(k[i].f);
		advance(&k[i], f, have_steps);
	}
	while (rc == 0 && min_step(k, c->n, &step)) {
		b.n = 0;
		for (size_t i = 0; i < c->n && rc == 0; i++)
			for (; k[i].have && k[i].step == step && rc == 0; advance(&k[i], f, have_steps))
				rc = buf_add(&b, &k[i].cur) ? -ENOMEM : 0;
		if (rc == 0 && (have_steps ? out_step_find_wanted(f, step) : !f->want))
			write_step(o, &b, step, have_steps, base);
	}
	free(b.v);
	free(b.ptr);
	return rc;
}

static int open_outs(struct out_comm *c, struct outs *o)
{
	int rc = out_file_open(&o->cf, c->dir, "communication.json");
	if (rc)
		return rc;
	if ((rc = out_file_open(&o->mf, c->dir, "communication_matrix.json")) != 0) {
		out_file_abort(&o->cf);
		return rc;
	}
	jo_init_file(&o->cj, o->cf.f, 3);
	jo_init_file(&o->mj, o->mf.f, 4);
	jo_obj_begin(&o->cj);
	jo_obj_begin(&o->mj);
	return 0;
}

static int close_out(struct out_file *of, struct jo *j, int failed)
{
	jo_obj_end(j);
	int err = jo_finish(j);
	fputc('\n', of->f);
	return out_file_commit(of, err ? err : failed);
}

int out_comm_write(struct out_comm *c, const struct out_step_find *f, int have_steps,
		   uint64_t base_mono_ns)
{
	struct outs o;
	int rc = open_outs(c, &o);
	if (rc)
		return rc;
	struct cursor *k = calloc(c->n ? c->n : 1, sizeof *k);
	rc = k ? merge_steps(c, &o, k, f, have_steps, base_mono_ns) : -ENOMEM;
	free(k);
	int failed = rc != 0 || c->error;
	for (size_t i = 0; i < c->n; i++)
		failed |= ferror(c->src[i].spill.f) != 0;
	int r1 = close_out(&o.cf, &o.cj, failed);
	int r2 = close_out(&o.mf, &o.mj, failed);
	return rc ? rc : r1 ? r1 : r2;
}

void out_comm_free(struct out_comm *c)
{
	for (size_t i = 0; i < c->n; i++)
		out_file_abort(&c->src[i].spill);
	free(c->src);
	free(c->dir);
	memset(c, 0, sizeof *c);
}
