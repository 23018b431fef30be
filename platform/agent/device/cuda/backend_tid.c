/*
 * CUPTI thread ids -> OS tids. CUPTI reports the low 32 bits of
 * pthread_self() (Kineto reproduces that value to join them), while every
 * prof stream names threads by gettid(). A thread registers the pair the
 * first time it makes a traced CUDA call; the buffer-completion thread
 * looks them up. One 64-bit word per slot (key << 32 | tid), so a reader
 * never sees half a pair; a thread whose pthread_t is reused by a later
 * thread overwrites its slot.
 */
#define _GNU_SOURCE
#include "agent/device/cuda/backend_parts.h"

#include <pthread.h>
#include <unistd.h>

#define CUDA_TID_SLOTS 4096u   /* threads that ever call CUDA, per process */

static uint64_t cuda_tids[CUDA_TID_SLOTS];
static __thread int cuda_tid_done;

static uint32_t cuda_tid_home(uint32_t key)
{
	return (key * 0x9e3779b1u) >> 20;   /* 12 bits: CUDA_TID_SLOTS */
}

void cuda_tid_register(void)
{
	uint32_t key = (uint32_t)(uintptr_t)pthread_self();
	uint64_t word = (uint64_t)key << 32 | (uint32_t)gettid();
	if (!key)
		return;
	for (uint32_t n = 0, i = cuda_tid_home(key); n < CUDA_TID_SLOTS;
	     n++, i = (i + 1) & (CUDA_TID_SLOTS - 1)) {
		uint64_t cur = __atomic_load_n(&cuda_tids[i], __ATOMIC_ACQUIRE);
		while (cur == 0 || (uint32_t)(cur >> 32) == key) {
			if (__atomic_compare_exchange_n(&cuda_tids[i], &cur, word, false,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				return;
		}
	}
	/* Full: this thread's records name it by CUPTI's id. */
}

void cuda_tid_once(void)
{
	if (!cuda_tid_done) {
		cuda_tid_done = 1;
		cuda_tid_register();
	}
}

int32_t cuda_tid_lookup(uint32_t key)
{
	if (!key)
		return 0;
	for (uint32_t n = 0, i = cuda_tid_home(key); n < CUDA_TID_SLOTS;
	     n++, i = (i + 1) & (CUDA_TID_SLOTS - 1)) {
		uint64_t cur = __atomic_load_n(&cuda_tids[i], __ATOMIC_ACQUIRE);
		if (!cur)
			return 0;
		if ((uint32_t)(cur >> 32) == key)
			return (int32_t)(uint32_t)cur;
	}
	return 0;
}
