/*
 * CUPTI's activity buffers. CUPTI asks for one on the thread that is
 * launching work, so a slow answer shows up in the program ("a kernel
 * launch that triggered a bufferRequest took orders of magnitude longer",
 * kineto#1020): a request pops a free buffer from a bitmask, no lock, no
 * malloc. Buffers come from mmap and are kept for reuse (their pages stay
 * faulted in); when every slot is busy the writer is behind, and CUPTI
 * older than 12.9 (API 27) must still get a buffer ("rejecting buffers can
 * crash CUPTI before API v27", Kineto), so it gets an extra mapping that
 * is unmapped after use; newer CUPTI gets NULL and counts the drop.
 */
#define _GNU_SOURCE
#include "agent/device/cuda/backend_parts.h"

#include <errno.h>
#include <sys/mman.h>

#define CUDA_CUPTI_NULL_OK 27u   /* first API version that survives a refusal */

static struct {
	uint8_t *slot[CUDA_BUF_SLOTS];
	uint64_t claimed;   /* bit i: slot i is mapped or being mapped */
	uint64_t free;      /* bit i: slot i is mapped and free */
	uint32_t version;
	struct cuda_pool_stats stats;
} cuda_pool;

static uint8_t *cuda_map(void)
{
	void *p = mmap(NULL, CUDA_BUF_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	return p == MAP_FAILED ? NULL : p;   /* page aligned: CUPTI wants 8 */
}

int cuda_pool_init(uint32_t cupti_version)
{
	cuda_pool.version = cupti_version;
	for (unsigned i = 0; i < CUDA_BUF_PREALLOC; i++) {
		if (cuda_pool.slot[i])
			continue;
		if (!(cuda_pool.slot[i] = cuda_map()))
			return -ENOMEM;
		__atomic_or_fetch(&cuda_pool.claimed, 1ull << i, __ATOMIC_RELAXED);
		__atomic_or_fetch(&cuda_pool.free, 1ull << i, __ATOMIC_RELEASE);
	}
	return 0;
}

static uint8_t *cuda_pool_pop(void)
{
	uint64_t f = __atomic_load_n(&cuda_pool.free, __ATOMIC_ACQUIRE);
	while (f) {
		uint64_t bit = f & -f;
		if (__atomic_compare_exchange_n(&cuda_pool.free, &f, f & ~bit, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return __atomic_load_n(&cuda_pool.slot[__builtin_ctzll(bit)], __ATOMIC_ACQUIRE);
	}
	return NULL;
}

/* Maps a buffer into a slot never used yet; it is handed out at once. */
static uint8_t *cuda_pool_grow(void)
{
	uint64_t c = __atomic_load_n(&cuda_pool.claimed, __ATOMIC_ACQUIRE);
	while (~c) {
		uint64_t bit = ~c & (c + 1);   /* lowest clear bit */
		if (!__atomic_compare_exchange_n(&cuda_pool.claimed, &c, c | bit, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue;
		uint8_t *b = cuda_map();
		if (!b) {
			__atomic_and_fetch(&cuda_pool.claimed, ~bit, __ATOMIC_RELEASE);
			return NULL;
		}
		__atomic_store_n(&cuda_pool.slot[__builtin_ctzll(bit)], b, __ATOMIC_RELEASE);
		__atomic_add_fetch(&cuda_pool.stats.grown, 1, __ATOMIC_RELAXED);
		return b;
	}
	return NULL;
}

uint8_t *cuda_pool_get(void)
{
	__atomic_add_fetch(&cuda_pool.stats.requests, 1, __ATOMIC_RELAXED);
	uint8_t *b = cuda_pool_pop();
	if (!b)
		b = cuda_pool_grow();
	if (b)
		return b;
	if (cuda_pool.version >= CUDA_CUPTI_NULL_OK) {
		__atomic_add_fetch(&cuda_pool.stats.refused, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	__atomic_add_fetch(&cuda_pool.stats.overflow, 1, __ATOMIC_RELAXED);
	return cuda_map();
}

void cuda_pool_put(uint8_t *buf)
{
	if (!buf)
		return;
	for (unsigned i = 0; i < CUDA_BUF_SLOTS; i++) {
		if (__atomic_load_n(&cuda_pool.slot[i], __ATOMIC_ACQUIRE) == buf) {
			__atomic_or_fetch(&cuda_pool.free, 1ull << i, __ATOMIC_RELEASE);
			return;
		}
	}
	munmap(buf, CUDA_BUF_SIZE);   /* an overflow buffer */
}

void cuda_pool_stats(struct cuda_pool_stats *out)
{
	out->requests = __atomic_load_n(&cuda_pool.stats.requests, __ATOMIC_RELAXED);
	out->grown = __atomic_load_n(&cuda_pool.stats.grown, __ATOMIC_RELAXED);
	out->overflow = __atomic_load_n(&cuda_pool.stats.overflow, __ATOMIC_RELAXED);
	out->refused = __atomic_load_n(&cuda_pool.stats.refused, __ATOMIC_RELAXED);
}
