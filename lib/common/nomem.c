#include "common/nomem.h"

static int64_t nomem_notes, nomem_said;

void prof_nomem_note(void)
{
	__atomic_add_fetch(&nomem_notes, 1, __ATOMIC_RELAXED);
}

void prof_nomem_recovered(void)
{
	__atomic_sub_fetch(&nomem_notes, 1, __ATOMIC_RELAXED);
}

int64_t prof_nomem_count(void)
{
	return __atomic_load_n(&nomem_notes, __ATOMIC_RELAXED);
}

void prof_nomem_said(int64_t n)
{
	__atomic_add_fetch(&nomem_said, n, __ATOMIC_RELAXED);
}

int64_t prof_nomem_unsaid(void)
{
	return prof_nomem_count() - __atomic_load_n(&nomem_said, __ATOMIC_RELAXED);
}
