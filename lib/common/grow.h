/*
 * Arrays that grow by doubling, for tables whose size input decides (a
 * damaged stream can name a new device in every record): a realloc per
 * element could copy the table at each.
 */
#ifndef PROF_GROW_H
#define PROF_GROW_H

#include <stddef.h>
#include <stdlib.h>

/* v (n elements of `size`, room for *cap) with room for one more, or
 * NULL when memory ran out (v is then as it was). */
static inline void *grow_room(void *v, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return v;
	size_t c = *cap ? *cap * 2 : 8;
	void *nv = realloc(v, c * size);
	if (nv)
		*cap = c;
	return nv;
}

#endif
