#include "common/idmap.h"

#include <stdint.h>
#include <stdlib.h>

#include "common/nomem.h"

#define IDMAP_LONG_PROBE 32

/* Where the key is, or the empty slot where it would go; *probes: how
 * many slots were passed. */
static size_t place(const struct parse_idmap *m, uint64_t key, size_t *probes)
{
	size_t i = parse_idmap_home(m, key), k = 0;
	while (m->slot[i].val && m->slot[i].key != key) {
		i = (i + 1) & (m->cap - 1);
		k++;
	}
	*probes = k;
	return i;
}

/* Where the key is, or SIZE_MAX. */
static size_t lookup(const struct parse_idmap *m, uint64_t key)
{
	size_t mask = m->cap - 1, i = parse_idmap_home(m, key);
	for (size_t k = 0; k <= m->longest && m->slot[i].val; k++, i = (i + 1) & mask)
		if (m->slot[i].key == key)
			return i;
	return SIZE_MAX;
}

static int rebuild(struct parse_idmap *m, size_t cap, int mixed)
{
	struct parse_idmap_slot *old = m->slot, *v = calloc(cap, sizeof *v);
	size_t oldcap = m->cap, k;
	if (!v)
		return -1;
	m->slot = v;
	m->cap = cap;
	m->mixed = mixed;
	m->longest = 0;
	for (size_t i = 0; i < oldcap; i++) {
		if (old[i].val) {
			m->slot[place(m, old[i].key, &k)] = old[i];
			m->longest = k > m->longest ? k : m->longest;
		}
	}
	free(old);
	return 0;
}

void *parse_idmap_put(struct parse_idmap *m, uint64_t key, void *val)
{
	size_t k;
	if ((m->n + 1) * 4 > m->cap * 3 && rebuild(m, m->cap ? m->cap * 2 : 16, m->mixed) != 0)
		return val;
	size_t i = place(m, key, &k);
	/* memory short for the rebuild: the keys stay where they are, found
	 * as before, a little slower */
	if (k > IDMAP_LONG_PROBE && !m->mixed) {
		if (rebuild(m, m->cap, 1) == 0)
			i = place(m, key, &k);
		else
			prof_nomem_recovered();
	}
	m->longest = k > m->longest ? k : m->longest;
	void *prev = m->slot[i].val;
	m->slot[i].key = key;
	m->slot[i].val = val;
	if (!prev)
		m->n++;
	return prev;
}

void *parse_idmap_get_far(const struct parse_idmap *m, uint64_t key)
{
	size_t i = m->cap ? lookup(m, key) : SIZE_MAX;
	return i == SIZE_MAX ? NULL : m->slot[i].val;
}

void *parse_idmap_del(struct parse_idmap *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	size_t mask = m->cap - 1, i = lookup(m, key);
	if (i == SIZE_MAX)
		return NULL;
	void *val = m->slot[i].val;
	/* Shift later members of the probe run back over the hole. */
	for (size_t j = (i + 1) & mask; m->slot[j].val; j = (j + 1) & mask) {
		size_t home = parse_idmap_home(m, m->slot[j].key);
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
	m->cap = m->n = m->longest = 0;
	m->mixed = 0;
}

uint64_t parse_idmap_hash_text(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}
