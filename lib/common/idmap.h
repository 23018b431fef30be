/*
 * A map from 64-bit ids to pointers (open addressing, linear probing,
 * backward-shift deletion): for what is open at a moment, such as
 * cross-thread ranges waiting for their end. Memory follows the number of
 * entries present, not the number ever inserted.
 *
 * Keys go to the slot of their low bits while that works: ids handed out
 * in sequence (correlations, External ids, range ids) then sit side by
 * side, and a window of them sliding on touches memory in order where a
 * hash sent each to a cache miss of its own (a twentieth of a parse).
 * Keys that pile up on a slot (addresses, strides of a power of two) make
 * the map switch for good to hashing them, at its first long probe. A
 * lookup stops at the longest distance any key sits from its home, so a
 * key not there costs no more than one that is, even when it lands in a
 * long run of sequential ids.
 */
#ifndef PROF_PARSE_IDMAP_H
#define PROF_PARSE_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct parse_idmap_slot {
	uint64_t key;
	void *val;               /* NULL: empty slot */
};

struct parse_idmap {
	struct parse_idmap_slot *slot;
	size_t cap, n;           /* cap: 0 or a power of two */
	size_t longest;          /* no key sits further than this past its home */
	int mixed;               /* keys hashed; else placed by their low bits */
};

/* Inserts or replaces; returns the previous value (NULL if none), or
 * `val` itself when memory ran out (then nothing was stored). */
void *parse_idmap_put(struct parse_idmap *m, uint64_t key, void *val);
/* The slot a key goes to first, its home (cap > 0). */
static inline size_t parse_idmap_home(const struct parse_idmap *m, uint64_t k)
{
	if (m->mixed) {
		k ^= k >> 33;
		k *= 0xff51afd7ed558ccdull;
		k ^= k >> 33;
	}
	return (size_t)k & (m->cap - 1);
}

/* parse_idmap_get past the home slot. */
void *parse_idmap_get_far(const struct parse_idmap *m, uint64_t key);
/* The value, NULL if absent. Inline for a key at its home or a home
 * empty, as most are (the call was 3% of a parse). */
static inline void *parse_idmap_get(const struct parse_idmap *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	const struct parse_idmap_slot *s = &m->slot[parse_idmap_home(m, key)];
	if (!s->val || s->key == key)   /* no tombstones: an empty home ends the run */
		return s->val;
	return parse_idmap_get_far(m, key);
}
/* Removes and returns the value, NULL if absent. */
void *parse_idmap_del(struct parse_idmap *m, uint64_t key);
/* Calls fn on every value (order unspecified); the map may not change. */
void parse_idmap_each(const struct parse_idmap *m, void (*fn)(void *ctx, void *val), void *ctx);
void parse_idmap_free(struct parse_idmap *m);

/* Maps to positions in an array of the caller's: position i is stored as
 * i + 1, so that no value is NULL. parse_idmap_pos: i + 1, or 0 when the
 * key is absent. parse_idmap_put_pos (a position the key does not hold
 * already): 0, or -1 out of memory (nothing stored). */
static inline size_t parse_idmap_pos(const struct parse_idmap *m, uint64_t key)
{
	return (size_t)(uintptr_t)parse_idmap_get(m, key);
}

static inline int parse_idmap_put_pos(struct parse_idmap *m, uint64_t key, size_t i)
{
	void *v = (void *)(uintptr_t)(i + 1);
	return parse_idmap_put(m, key, v) == v ? -1 : 0;
}

/* Keys wider than 64 bits go in by a hash of them, and the caller
 * chains the entries of one hash (each holds the position + 1 of the
 * next, 0 at the end; the map holds the first's). The hash of a pair: */
static inline uint64_t parse_idmap_hash2(uint64_t a, uint64_t b)
{
	return (a * 0x9e3779b97f4a7c15ull) ^ b;
}

/* ... and of a text: FNV-1a, continued from h (PARSE_IDMAP_TEXT0 to begin). */
#define PARSE_IDMAP_TEXT0 0xcbf29ce484222325ull
uint64_t parse_idmap_hash_text(uint64_t h, const char *s);

#endif
