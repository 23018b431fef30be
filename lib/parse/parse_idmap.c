#include "parse/parse_idmap.h"

#include <stdlib.h>

static size_t hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k;
}

static size_t find(const struct parse_idmap *m, uint64_t key)
{
	size_t i = hash(key) & (m->cap - 1);
	while (m->slot[i].val && m->slot[i].key != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static int grow(struct parse_idmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 16;
	struct parse_idmap_slot *old = m->slot;
	size_t oldcap = m->cap;
	m->slot = calloc(cap, sizeof *m->slot);
	if (!m->slot) {
		m->slot = old;
		return -1;
	}
	m->cap = cap;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].val)
			m->slot[find(m, old[i].key)] = old[i];
	free(old);
	return 0;
}

void *parse_idmap_put(struct parse_idmap *m, uint64_t key, void *val)
{
	if ((m->n + 1) * 4 > m->cap * 3 && grow(m) != 0)
		return val;
	size_t i = find(m, key);
	void *prev = m->slot[i].val;
	m->slot[i].key = key;
	m->slot[i].val = val;
	if (!prev)
		m->n++;
	return prev;
}

void *parse_idmap_get(const struct parse_idmap *m, uint64_t key)
{
	return m->cap ? m->slot[find(m, key)].val : NULL;
}

void *parse_idmap_del(struct parse_idmap *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	size_t mask = m->cap - 1, i = find(m, key);
	void *val = m->slot[i].val;
	if (!val)
		return NULL;
	/* Shift later members of the probe run back over the hole. */
	for (size_t j = (i + 1) & mask; m->slot[j].val; j = (j + 1) & mask) {
		size_t home = hash(m->slot[j].key) & mask;
		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->slot[i] = m->slot[j];
			i = j;
		}
	}
	m->slot[i].val = NULL;
	m->n--;
	return val;
}

void parse_idmap_each(const struct parse_idmap *m, void (*fn)(void *ctx, void *val), void *ctx)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->slot[i].val)
			fn(ctx, m->slot[i].val);
}

void parse_idmap_free(struct parse_idmap *m)
{
	free(m->slot);
	m->slot = NULL;
	m->cap = m->n = 0;
}
