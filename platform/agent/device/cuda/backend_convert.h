/*
 * CUPTI activity records -> raw device records (lib/raw/raw_format.h).
 * Pure functions over record bytes: no CUPTI calls, no sink, no logging,
 * so the unit tests feed records built from the 13.0 structs through them
 * without a GPU (test/unit/test_cuda_convert.c).
 *
 * Only fields in the prefix common to every struct version a supported
 * CUPTI emits are read (Kernel4..Kernel10, Memcpy..Memcpy6, ...: checked by
 * static assertions in backend_convert.c), so one parser serves CUPTI from
 * CUDA 11.0 (CUPTI_MIN_VERSION) to 13.x.
 */
#ifndef PROF_CUDA_BACKEND_CONVERT_H
#define PROF_CUDA_BACKEND_CONVERT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/domain_filter.h"
#include "raw/raw_format.h"

#define CUPTI_MIN_VERSION 13u        /* cuptiGetVersion() of CUDA 11.0 */
#define CUPTI_VERSION_13_0_0 130000u /* disabling kernel tracing may deadlock */

/* What one record became. */
enum cuda_out_kind {
	CUDA_OUT_SKIP = 0,   /* nothing to write: kept for later, filtered, not ours */
	CUDA_OUT_ACTIVITY,   /* u.act (kernel, copy, set, sync); for a NCCL kernel
			      * `collective` is set and `coll` is what to write
			      * instead (the parse takes it as the kernel too) */
	CUDA_OUT_API,        /* u.api */
	CUDA_OUT_MEMORY,     /* u.mem */
	CUDA_OUT_MARKER,     /* u.marker: an NVTX range (start and end paired) or mark */
	CUDA_OUT_OP,         /* u.op: torch's NVTX range of an operator (torch_nvtx.h);
			      * `name` its name, `domain` its input sizes or NULL */
	CUDA_OUT_INFO,       /* u.info; `domain` holds the uuid text */
	CUDA_OUT_LOST,       /* a record CUPTI could not complete: count it lost */
};

struct cuda_out {
	enum cuda_out_kind kind;
	uint64_t ts;           /* start or instant, CLOCK_MONOTONIC ns */
	const char *name;      /* valid until the next cuda_convert; may be NULL */
	const char *domain;    /* NVTX domain, or the device uuid; may be NULL */
	bool collective;
	union {
		struct raw_dev_activity act;
		struct raw_dev_api api;
		struct raw_dev_memory mem;
		struct raw_dev_marker marker;
		struct raw_op op;
		struct raw_dev_info info;
	} u;
	struct raw_dev_collective coll;
	char buf[64];          /* "cbid <n>", "Memcpy HtoD (Pinned -> Device)", a uuid */
};

/* An NVTX range whose start record came and whose end has not. */
struct cuda_marker_open {
	uint64_t key;          /* the marker id + 1; 0: a free slot */
	int32_t tid;
	uint64_t ts;
	char *name, *domain;
};

#define CUDA_MAX_CONTEXTS 64
#define CUDA_MAX_OPEN_MARKERS (1u << 16)  /* beyond this, starts count as lost */
#define CUDA_OVERHEAD_SLOTS 10
#define CUDA_EVENT_SLOTS 4096u   /* CUDA events kept (backend_events.c); a power of 2 */
#define CUDA_EVENT_HISTORY 4u    /* records kept per event */

struct cuda_conv_stats {
	uint64_t records, written, blocked, filtered, lost, other_kinds;
	/* event syncs whose event's record was not known; events given up */
	uint64_t waits_unknown, events_evicted;
	uint64_t torch_ops;          /* torch's operator ranges made operators */
	uint64_t overhead_ns[CUDA_OVERHEAD_SLOTS];   /* by cuda_overhead_slot() */
};

struct cuda_conv {
	/* Set by the caller. */
	uint32_t version;            /* cuptiGetVersion() */
	int64_t ts_offset;           /* added to every CUPTI timestamp: CUPTI's clock
				      * onto CLOCK_MONOTONIC */
	int32_t rank;                /* global rank, -1 unknown */
	/* CUPTI's thread ids are OS tids already (cuptiSetThreadIdType
	 * SYSTEM took): tid_of is not asked. */
	bool os_tids;
	/* CUPTI's thread id (the low 32 bits of pthread_self()) -> OS tid; 0
	 * unknown. NULL or 0: the record says the negated CUPTI id. */
	int32_t (*tid_of)(uint32_t cupti_tid);
	/* Kernel name as printed (demangled); NULL: as CUPTI gives it. */
	const char *(*kernel_name)(const char *cupti_name);
	/* Was a recording window open at `ts`? NULL: always. Host-side
	 * records (API calls, markers, allocations, syncs) that began outside
	 * every window are dropped; device work is not (it was launched inside
	 * one, or its kind was off), except kernels when `filter_kernels`. */
	bool (*recording_at)(uint64_t ts);
	bool filter_kernels;
	/* mstx_domain_include / _exclude for NVTX domains (CUPTI's marker
	 * records name theirs; NULL is the default domain). NULL: keep all. */
	const struct domain_filter *domains;
	/* Internal. */
	struct cuda_marker_open *open;
	uint32_t open_cap, open_used;
	char *held[2];               /* last output's strings, freed next call */
	struct cuda_event_slot *events;   /* CUDA_EVENT_SLOTS, or NULL before the first */
	struct { uint32_t context, device; } ctx[CUDA_MAX_CONTEXTS];
	uint32_t nctx;
	struct cuda_conv_stats stats;
};

void cuda_conv_init(struct cuda_conv *c);
void cuda_conv_free(struct cuda_conv *c);

/* Converts one record (a CUpti_Activity* from cuptiActivityGetNextRecord).
 * Returns out->kind. */
enum cuda_out_kind cuda_convert(struct cuda_conv *c, const void *record, struct cuda_out *out);

/* The collective a NCCL kernel runs (enum raw_coll_op), 0 for any other
 * kernel; backend_nccl.c. */
uint32_t cuda_nccl_op(const char *kernel_name);

/* Open NVTX ranges (backend_markers.c): a slot for `id` with its key set,
 * NULL when full; removing one hands its strings to the caller. */
struct cuda_marker_open *cuda_markers_put(struct cuda_conv *c, uint32_t id);
bool cuda_markers_take(struct cuda_conv *c, uint32_t id, struct cuda_marker_open *out);
void cuda_markers_free(struct cuda_conv *c);

/* CUDA event records (backend_events.c): one kept, and the one a sync on
 * the event issued as `wait_corr` waited for (the latest issued before
 * it), false when not known. */
void cuda_events_put(struct cuda_conv *c, uint32_t context, uint32_t event, uint32_t stream,
		     uint32_t corr);
bool cuda_events_waited(const struct cuda_conv *c, uint32_t context, uint32_t event,
			uint32_t wait_corr, uint32_t *stream, uint32_t *record_corr);
void cuda_events_free(struct cuda_conv *c);

/* CUPTI overhead kinds folded into CUDA_OVERHEAD_SLOTS, and their names. */
unsigned cuda_overhead_slot(uint32_t overhead_kind);
const char *cuda_overhead_name(unsigned slot);

#endif
