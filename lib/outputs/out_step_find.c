#include "outputs/out_step_find.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *pa, const void *pb)
{
	const struct out_step *a = pa, *b = pb;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

int out_step_find_init(struct out_step_find *f, const struct out_step *steps, size_t n)
{
	f->n = 0;
	f->want = NULL;
	f->nwant = 0;
	f->v = malloc((n ? n : 1) * sizeof *f->v);
	if (!f->v)
		return -ENOMEM;
	if (n)
		memcpy(f->v, steps, n * sizeof *steps);
	f->n = n;
	qsort(f->v, n, sizeof *f->v, cmp);
	return 0;
}

int out_step_listed(const uint64_t *v, size_t n, uint64_t step)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == step)
			return 1;
	return 0;
}

int out_step_find_wanted(const struct out_step_find *f, int64_t step)
{
	if (!f->want)
		return 1;
	return step >= 0 && out_step_listed(f->want, f->nwant, (uint64_t)step);
}

int64_t out_step_find(const struct out_step_find *f, int32_t pid, uint64_t ns)
{
	size_t lo = 0, hi = f->n;      /* first step after (pid, ns) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct out_step *s = &f->v[mid];
		if (s->pid < pid || (s->pid == pid && s->start_ns <= ns))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	const struct out_step *s = &f->v[lo - 1];
	if (s->pid != pid || ns >= s->end_ns || s->number > INT64_MAX)
		return -1;
	return (int64_t)s->number;
}

void out_step_find_free(struct out_step_find *f)
{
	free(f->v);
	f->v = NULL;
	f->n = 0;
}
