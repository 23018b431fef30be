/*
 * NVTX ranges waiting for their end: CUPTI reports a range as a START and
 * an END marker record sharing an id, possibly in different buffers (the
 * end may come from another thread for nvtxRangeStart/End). A linear
 * probing table keyed by id; deletion shifts back, so there are no
 * tombstones to pile up over a long run.
 */
#include "agent/device/cuda/backend_convert.h"

#include <stdlib.h>
#include <string.h>

static uint32_t cuda_markers_home(const struct cuda_conv *c, uint64_t key)
{
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (c->open_cap - 1);
}

static int cuda_markers_grow(struct cuda_conv *c)
{
	uint32_t cap = c->open_cap ? c->open_cap * 2 : 64;
	struct cuda_marker_open *old = c->open, *nv = calloc(cap, sizeof *nv);
	if (!nv)
		return -1;
	uint32_t old_cap = c->open_cap;
	c->open = nv;
	c->open_cap = cap;
	for (uint32_t i = 0; i < old_cap; i++) {
		if (!old[i].key)
			continue;
		uint32_t j = cuda_markers_home(c, old[i].key);
		while (nv[j].key)
			j = (j + 1) & (cap - 1);
		nv[j] = old[i];
	}
	free(old);
	return 0;
}

/* A slot for range `id`, its key set; NULL when the table is full (the
 * caller counts the range lost). An id already open is replaced. */
struct cuda_marker_open *cuda_markers_put(struct cuda_conv *c, uint32_t id)
{
	if ((c->open_used + 1) * 2 > c->open_cap) {
		if (c->open_cap >= CUDA_MAX_OPEN_MARKERS * 2 || cuda_markers_grow(c))
			return NULL;
	}
	uint64_t key = (uint64_t)id + 1;
	uint32_t i = cuda_markers_home(c, key);
	while (c->open[i].key && c->open[i].key != key)
		i = (i + 1) & (c->open_cap - 1);
	if (c->open[i].key) {
		free(c->open[i].name);
		free(c->open[i].domain);
	} else {
		c->open_used++;
	}
	memset(&c->open[i], 0, sizeof c->open[i]);
	c->open[i].key = key;
	return &c->open[i];
}

/* Is `k`'s home outside the cyclic interval (hole, j]? Then it may move
 * back into the hole. */
static int cuda_markers_movable(uint32_t k, uint32_t hole, uint32_t j)
{
	return hole <= j ? (k <= hole || k > j) : (k <= hole && k > j);
}

static void cuda_markers_delete(struct cuda_conv *c, uint32_t hole)
{
	uint32_t mask = c->open_cap - 1, j = hole;
	for (;;) {
		j = (j + 1) & mask;
		if (!c->open[j].key)
			break;
		if (cuda_markers_movable(cuda_markers_home(c, c->open[j].key), hole, j)) {
			c->open[hole] = c->open[j];
			hole = j;
		}
	}
	memset(&c->open[hole], 0, sizeof c->open[hole]);
	c->open_used--;
}

/* Removes range `id` into `*out` (the caller owns its strings). */
bool cuda_markers_take(struct cuda_conv *c, uint32_t id, struct cuda_marker_open *out)
{
	if (!c->open_used)
		return false;
	uint64_t key = (uint64_t)id + 1;
	uint32_t i = cuda_markers_home(c, key);
	while (c->open[i].key && c->open[i].key != key)
		i = (i + 1) & (c->open_cap - 1);
	if (!c->open[i].key)
		return false;
	*out = c->open[i];
	cuda_markers_delete(c, i);
	return true;
}

void cuda_markers_free(struct cuda_conv *c)
{
	for (uint32_t i = 0; i < c->open_cap; i++) {
		free(c->open[i].name);
		free(c->open[i].domain);
	}
	free(c->open);
	c->open = NULL;
	c->open_cap = c->open_used = 0;
}
