/*
 * The pieces of the CUDA backend (backend.c) that hold state of their
 * own: the activity buffer pool, the CUPTI-thread-id map, the record of
 * recording windows and the kernel-name cache. Agent side only.
 */
#ifndef PROF_CUDA_BACKEND_PARTS_H
#define PROF_CUDA_BACKEND_PARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* backend_buffers.c: CUPTI's activity buffers, from mmap, recycled. A
 * request takes a free buffer without a lock or a system call; only
 * growth maps a new one. */
#define CUDA_BUF_SIZE     (4u << 20)   /* Kineto's size; CUPTI suggests 1-10 MiB */
#define CUDA_BUF_PREALLOC 8
#define CUDA_BUF_SLOTS    64           /* 256 MiB at most in the pool */

struct cuda_pool_stats { uint64_t requests, grown, overflow, refused; };

int cuda_pool_init(uint32_t cupti_version);   /* 0 or -errno */
uint8_t *cuda_pool_get(void);                 /* NULL: CUPTI drops the records */
void cuda_pool_put(uint8_t *buf);
void cuda_pool_stats(struct cuda_pool_stats *out);

/* backend_tid.c: CUPTI names threads by the low 32 bits of pthread_self();
 * the raw format wants OS tids. Each thread that makes a traced CUDA call
 * registers itself from a CUPTI callback, once (a thread-local flag);
 * lock-free. */
void cuda_tid_once(void);                     /* registers on first call per thread */
void cuda_tid_register(void);                 /* the calling thread */
int32_t cuda_tid_lookup(uint32_t cupti_tid);  /* 0: unknown */

/* backend_window.c: when recording windows opened and closed, so host-side
 * records that began while none was open are dropped (dev_sink.h). */
void cuda_window_mark(uint64_t ts, bool on);
void cuda_window_snapshot(void);              /* before a batch; sink lock held */
bool cuda_window_at(uint64_t ts);             /* from the snapshot */

/* backend_demangle.c: kernel names as people read them, through the C++
 * runtime's __cxa_demangle when the process has one mapped; cached by
 * CUPTI's name pointer (shared by every record of a kernel). Sink lock
 * held. */
const char *cuda_demangle(const char *name);
void cuda_demangle_free(void);

/* backend_nvtx.c: torch's operator ranges taken at the NVTX call, the
 * other ranges handed on to CUPTI. cuda_nvtx_init hands an NVTX instance
 * (InitializeInjectionNvtx2's argument) to CUPTI through `to_cupti`, then
 * puts prof's push and pop in front of what CUPTI set; it returns
 * to_cupti's answer, and *why is NULL or why the instance was not hooked
 * (its ranges then all go to CUPTI). */
int cuda_nvtx_init(void *get_export_table, int (*to_cupti)(void *), const char **why);
int cuda_nvtx_via_cupti(void);                /* PROF_NVTX_VIA_CUPTI=1: no hook */
uint64_t cuda_nvtx_hook_ops(void);            /* operators it wrote */

#endif
