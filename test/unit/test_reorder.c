/* The device stream's reorder window (parse/parse_reorder): records put
 * back in start order through the open run, the closed runs and the heap
 * together, checked against a plain sorted list driven the same way (push
 * until ripe, then pop), with the window, the size cap, the run size and
 * the late/forced counts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/parse_reorder.h"
#include "unit/unit.h"

#define N 20000

/* The reference: every waiting record in a sorted array. */
struct ref {
	struct reorder_ent v[N];
	size_t n;
	uint64_t high, last, late, forced;
};

static int before(const struct reorder_ent *a, const struct reorder_ent *b)
{
	return a->ns != b->ns ? a->ns < b->ns : a->rec < b->rec;
}

static void ref_push(struct ref *r, struct reorder_ent e)
{
	size_t i = r->n++;
	while (i > 0 && before(&e, &r->v[i - 1])) {
		r->v[i] = r->v[i - 1];
		i--;
	}
	r->v[i] = e;
	if (e.ns > r->high)
		r->high = e.ns;
}

static int ref_ripe(const struct ref *r, uint64_t window, size_t max)
{
	return r->n && (r->n >= max || r->v[0].ns + window <= r->high);
}

static struct reorder_ent ref_pop(struct ref *r, uint64_t window, size_t max)
{
	struct reorder_ent top = r->v[0];
	if (r->n >= max && top.ns + window > r->high)
		r->forced++;
	memmove(r->v, r->v + 1, --r->n * sizeof *r->v);
	if (top.ns < r->last)
		r->late++;
	else
		r->last = top.ns;
	return top;
}

enum shape { RISING, FAR_LATE, FAR_EARLY, FALLING };

/* Start times that mostly rise, with `jitter` % of the records moved back
 * by up to `back` ns (a long kernel reported after short ones). FAR_LATE:
 * also one in 50 from far back (beyond any scan). FAR_EARLY: one in 50
 * from far ahead (a damaged clock: it pins its run). FALLING: blocks of 40
 * in falling order. */
static void make(uint64_t *ns, size_t n, unsigned seed, int jitter, uint64_t back,
		 enum shape shape)
{
	srand(seed);
	uint64_t t = 1000000;
	for (size_t i = 0; i < n; i++) {
		t += (uint64_t)(rand() % 50);   /* equal starts happen */
		ns[i] = t;
		if (rand() % 100 < jitter)
			ns[i] = t > back ? t - (uint64_t)(rand() % (int)back) : 0;
		if (shape == FAR_LATE && rand() % 50 == 0)
			ns[i] = t / 2;
		if (shape == FAR_EARLY && rand() % 50 == 0)
			ns[i] = t * 4;
		if (shape == FALLING)
			ns[i] = t + 4000 - (i % 40) * 100;
	}
}

static void run(unsigned seed, int jitter, uint64_t back, uint64_t window, size_t max,
		size_t run_cap, enum shape shape)
{
	static uint64_t ns[N];
	static struct ref r;
	static unsigned char recs[N];   /* distinct record addresses, in file order */
	struct parse_reorder q;
	reorder_init(&q);
	q.window_ns = window;
	q.max = max;
	q.run_cap = run_cap;
	memset(&r, 0, sizeof r);
	make(ns, N, seed, jitter, back, shape);
	size_t i = 0, out = 0, same = 0;
	for (;;) {
		while (i < N && !reorder_ripe(&q)) {
			CHECK(ref_ripe(&r, window, max) == 0);
			CHECK(reorder_push(&q, ns[i], recs + i) == 0);
			ref_push(&r, (struct reorder_ent){ ns[i], recs + i });
			i++;
		}
		if (q.n == 0)
			break;
		struct reorder_ent a = reorder_pop(&q), b = ref_pop(&r, window, max);
		same += a.ns == b.ns && a.rec == b.rec;
		out++;
	}
	CHECK(out == N && same == N);
	CHECK(r.n == 0);
	CHECK(q.late == r.late && q.forced == r.forced);
	reorder_free(&q);
}

/* One record in a hundred starts nearly a window ahead of the others,
 * so it waits a window while the rest wait a hundredth of one: each would
 * hold its whole run (a hundred entries) that long. Runs overtaken with a
 * quarter left give their records to the heap instead, so the window
 * holds those records, not a thousand runs. */
static void test_pinned_runs(void)
{
	enum { RECS = 300000, CAP = 100 };
	static unsigned char recs[RECS];
	struct parse_reorder q;
	reorder_init(&q);
	q.window_ns = 1000000;
	q.run_cap = CAP;
	size_t out = 0;
	for (size_t i = 0; i < RECS; i++) {
		while (reorder_ripe(&q)) {
			reorder_pop(&q);
			out++;
		}
		uint64_t ns = 1000000 + i * 10;
		CHECK(reorder_push(&q, i % CAP == 50 ? ns + 990000 : ns, recs + i) == 0);
	}
	CHECK(q.nruns <= 20);
	CHECK(q.nheap >= 900);
	while (q.n) {
		reorder_pop(&q);
		out++;
	}
	CHECK(out == RECS && q.late == 0);
	reorder_free(&q);
}

int main(void)
{
	test_pinned_runs();
	size_t caps[] = { PARSE_REORDER_RUN, 1, 4, 100 };
	for (size_t c = 0; c < sizeof caps / sizeof *caps; c++) {
		size_t rc = caps[c];
		run(1, 0, 1, 1000, 1u << 20, rc, RISING);            /* in order: the open run alone */
		run(2, 5, 2000, 1000, 1u << 20, rc, RISING);         /* a few late, beyond the window */
		run(3, 30, 500, 100000, 1u << 20, rc, RISING);       /* many out of order, within it */
		run(4, 50, 5000, 1000, 64, rc, RISING);              /* a small cap: forced hand-outs */
		run(5, 100, 100000, UINT64_MAX / 2, 1u << 20, rc, RISING); /* every record waits */
		run(6, 20, 300, 50000, 1u << 20, rc, FAR_LATE);      /* some beyond the open run's reach */
		run(7, 20, 300, 50000, 1u << 20, rc, FAR_EARLY);     /* some pin their runs */
		run(8, 20, 300, 50000, 3000, rc, FAR_EARLY);         /* ... in a full window */
		run(9, 0, 1, 20000, 1u << 20, rc, FALLING);
	}
	return unit_done();
}
