/*
 * The raw format: the one definition shared by every writer (the agent, the
 * launcher's samplers) and the reader (the parse pipeline).
 * share/prof/doc/raw-format.md describes it for people; keep the two in step.
 *
 * A raw file is one stream: one thread of one process, or one collector.
 *
 *   offset 0             struct raw_file_header (padded to RAW_HEADER_SIZE)
 *   RAW_HEADER_SIZE      chunk 0: struct raw_chunk_header, then records
 *   + chunk_size         chunk 1 ...
 *
 * Crash safety: a chunk's `committed` counter is advanced with a release
 * store after each record is fully written, so a reader that trusts only
 * [0, committed) never sees a torn record, even after SIGKILL (the kernel
 * keeps the pages of a shared file mapping).
 */
#ifndef PROF_RAW_FORMAT_H
#define PROF_RAW_FORMAT_H

#include <stdint.h>

#define RAW_MAGIC          "PROFRAW"  /* 7 chars + NUL = 8 bytes */
#define RAW_VERSION        1u
#define RAW_BYTE_ORDER     0x01020304u
#define RAW_HEADER_SIZE    4096u
#define RAW_CHUNK_MAGIC    0x4b4e4843u /* "CHNK" little-endian */
#define RAW_CHUNK_DEFAULT  (1u << 20)
#define RAW_CHUNK_MIN      (16u << 10)
#define RAW_CHUNK_MAX      (64u << 20)
#define RAW_ALIGN          8u
#define RAW_NAME_MAX       64u

/* What ticks the record timestamps count. */
enum raw_clock {
	RAW_CLOCK_MONOTONIC = 1, /* CLOCK_MONOTONIC nanoseconds */
	RAW_CLOCK_TSC       = 2, /* x86 invariant TSC; mapped through clock pairs */
};

/* What the stream holds. */
enum raw_stream_kind {
	RAW_STREAM_THREAD = 1, /* events of one thread of a profiled process */
	RAW_STREAM_HOST   = 2, /* the launcher's host sampler */
	RAW_STREAM_LAUNCHER = 3, /* the launcher's own events (recording switches) */
	RAW_STREAM_FRAMEWORK = 4, /* framework operators converted after the fact
				   * (from torch.profiler): CLOCK_MONOTONIC, one per
				   * process image, records in time order per batch */
	RAW_STREAM_DEVICE = 5,   /* device activity from a HAL backend (dev.raw):
				  * CLOCK_MONOTONIC (the backend maps the device
				  * clock), one per process image, written in the
				  * order buffers complete: NOT sorted by ts */
	RAW_STREAM_DEVICE_SAMPLES = 6, /* the launcher's device sampler (NVML) */
};

/* Header flags. */
#define RAW_FILE_CLOSED 0x1u /* the writer closed the stream cleanly */
#define RAW_FILE_NO_SPACE 0x2u /* the filesystem refused a chunk (full disk or
				* quota): the stream stopped recording there */
#define RAW_FILE_DEVINFO_BOUND 0x4u /* the writer keeps devinfo_chunks (files of
				     * older writers: read them all) */
#define RAW_FILE_LATE_BOUND 0x8u /* the writer keeps late_ns (device streams;
				  * files without it: assume the worst) */

/* A clock pair: the stream's tick and CLOCK_MONOTONIC / CLOCK_REALTIME ns,
 * read back to back. Readers map ticks onto monotonic ns with these. */
struct raw_clock_pair {
	uint64_t ticks;
	uint64_t mono_ns;
	uint64_t real_ns;
};

struct raw_file_header {
	char     magic[8];
	uint32_t version;
	uint32_t byte_order;
	uint32_t header_size;
	uint32_t chunk_size;
	uint32_t clock;          /* enum raw_clock */
	uint32_t kind;           /* enum raw_stream_kind */
	int32_t  pid;
	int32_t  tid;
	int32_t  ppid;
	uint32_t flags;          /* RAW_FILE_*; updated by the writer */
	uint64_t tsc_hz;         /* writer's estimate, 0 if unknown */
	struct raw_clock_pair open_pair;
	struct raw_clock_pair close_pair;  /* zero unless RAW_FILE_CLOSED */
	uint64_t chunks;         /* chunks begun; updated by the writer */
	uint64_t lost_total;     /* records dropped; updated by the writer */
	char     comm[RAW_NAME_MAX];  /* thread name at open */
	/* DEV_INFO records lie in chunks below this; raised before each is
	 * written, so the parse finds every device without reading a long
	 * device stream twice. Kept when flags has RAW_FILE_DEVINFO_BOUND. */
	uint64_t devinfo_chunks;
	/* No record starts more than this before the latest start written
	 * ahead of it in the file: how far out of order the stream is, so
	 * the parse holds records back only that long. Raised before a later
	 * record is written. Kept when flags has RAW_FILE_LATE_BOUND. */
	uint64_t late_ns;
};

struct raw_chunk_header {
	uint32_t magic;          /* RAW_CHUNK_MAGIC once the chunk is valid */
	uint32_t index;          /* position in the file, from 0 */
	uint64_t committed;      /* bytes of complete records after this header */
	uint64_t records;        /* complete records in this chunk */
	uint64_t lost;           /* records dropped just before this chunk */
	struct raw_clock_pair pair; /* taken when the chunk was begun */
};

/* Every record starts so; `size` includes this header and is a multiple
 * of RAW_ALIGN. */
struct raw_record {
	uint16_t type;
	uint16_t flags;
	uint32_t size;
	uint64_t ts;             /* ticks of the stream's clock */
};

enum raw_record_type {
	RAW_REC_STRING      = 1,  /* struct raw_string + bytes + NUL */
	RAW_REC_MARK        = 2,  /* struct raw_mark */
	RAW_REC_RANGE_PUSH  = 3,  /* struct raw_range_push */
	RAW_REC_RANGE_POP   = 4,  /* no payload */
	RAW_REC_RANGE_START = 5,  /* struct raw_range_start */
	RAW_REC_RANGE_END   = 6,  /* struct raw_range_end */
	RAW_REC_STEP        = 7,  /* struct raw_step */
	RAW_REC_THREAD_NAME = 8,  /* struct raw_thread_name */
	RAW_REC_METADATA    = 9,  /* struct raw_metadata */
	RAW_REC_PROCESS     = 10, /* struct raw_process */
	RAW_REC_RECORDING   = 11, /* struct raw_recording */
	RAW_REC_LOST        = 12, /* struct raw_lost */
	RAW_REC_CLOCK_SYNC  = 13, /* struct raw_clock_pair */
	RAW_REC_HOST_SAMPLE = 14, /* struct raw_host_sample */
	RAW_REC_OP          = 15, /* struct raw_op: a framework operator */
	RAW_REC_DEV_ACTIVITY = 16, /* struct raw_dev_activity: kernel, copy, set */
	RAW_REC_DEV_API     = 17, /* struct raw_dev_api: a runtime/driver call */
	RAW_REC_DEV_MEMORY  = 18, /* struct raw_dev_memory: an allocation or free */
	RAW_REC_DEV_COLLECTIVE = 19, /* struct raw_dev_collective */
	RAW_REC_DEV_SAMPLE  = 20, /* struct raw_dev_sample: NVML-like sample */
	RAW_REC_DEV_INFO    = 21, /* struct raw_dev_info: a device's properties */
	RAW_REC_DEV_MARKER  = 22, /* struct raw_dev_marker: NVTX range or mark */
	RAW_REC_HOST_NET    = 23, /* struct raw_host_net: one network interface */
	RAW_REC_GC          = 24, /* struct raw_gc: a Python collection starts or stops */
	RAW_REC_FW_MEMORY   = 25, /* struct raw_fw_memory: a framework allocator's event */
	RAW_REC_OP_BEGIN    = 26, /* struct raw_op_begin: an operator starts on this thread */
	RAW_REC_OP_END      = 27, /* no payload: the thread's innermost open operator ends */
	RAW_REC_TYPE_MAX
};

/* Strings are interned per stream: defined once, referred to by id after.
 * Id 0 means "no string". */
struct raw_string {
	uint32_t id;
	uint32_t len;            /* bytes, without the NUL that follows */
};

/* domain_id: the prof_tx domain's name (prof_mark_domain ...), 0 for the
 * default domain (and in files of writers before domains, whose pad it is). */
struct raw_mark        { uint32_t msg_id; uint32_t domain_id; };
struct raw_range_push  { uint32_t name_id; uint32_t domain_id; };
/* Ranges that may end on another thread: matched by (pid, id). */
struct raw_range_start { uint64_t id; uint32_t name_id; uint32_t domain_id; };
struct raw_range_end   { uint64_t id; };
/* A step boundary: step `number` of the process ends at this record. */
struct raw_step        { uint64_t number; };
struct raw_thread_name { int32_t tid; uint32_t name_id; };

#define RAW_METADATA_JSON 0x1u /* value is a JSON text, not a plain string */
struct raw_metadata    { uint32_t key_id; uint32_t value_id; uint32_t flags; uint32_t pad; };

/* Written once when a process image starts recording. */
struct raw_process {
	int32_t  pid;
	int32_t  ppid;
	uint32_t cmdline_id;     /* argv joined by spaces */
	uint32_t exe_id;
	uint32_t rank_id;        /* string id of the rank, 0 if none */
	uint32_t pad;
};

/* Recording switched on or off, and why. */
enum raw_recording_cause {
	RAW_CAUSE_START   = 1,   /* recording began (agent start, --delay ended) */
	RAW_CAUSE_API     = 2,   /* prof_start / prof_stop */
	RAW_CAUSE_LAUNCHER = 3,  /* --delay / --duration */
	RAW_CAUSE_SCHEDULE = 4,  /* the schedule's active steps began or ended */
	RAW_CAUSE_DYNAMIC  = 5,  /* a --dynamic activation began or ended */
	RAW_CAUSE_RANK     = 6,  /* is_rank: the rank became known (init_process_group) */
};
struct raw_recording   { uint32_t on; uint32_t cause; };

struct raw_lost        { uint64_t count; };

/* raw_host_sample.parts: what host_sys asked the sample to hold; the
 * other fields are 0. 0 is a sample of a writer that sampled everything
 * (before host_sys was read): read it as RAW_HOST_ALL. */
#define RAW_HOST_CPU  0x1u   /* proc_cpu_*_pct, sys_cpu_pct */
#define RAW_HOST_MEM  0x2u   /* proc_rss_bytes, sys_mem_*_bytes */
#define RAW_HOST_DISK 0x4u   /* proc_read_bytes, proc_write_bytes */
#define RAW_HOST_ALL  0x7u

/* One sample of the host sampler. Percentages are of one CPU (100 = one
 * core busy); bytes are totals since the previous sample. Processes and
 * threads are always there. Records of older writers end before `parts`. */
struct raw_host_sample {
	uint32_t processes;
	uint32_t threads;
	double   proc_cpu_user_pct;
	double   proc_cpu_sys_pct;
	uint64_t proc_rss_bytes;
	uint64_t proc_read_bytes;
	uint64_t proc_write_bytes;
	double   sys_cpu_pct;       /* of all CPUs: 100 = machine busy */
	uint64_t sys_mem_used_bytes;
	uint64_t sys_mem_avail_bytes;
	uint32_t parts;             /* RAW_HOST_* */
	uint32_t pad;
};

/* One network interface at a host sample (host_sys network), from
 * /proc/net/dev: what it moved since the previous sample, `interval_ns`
 * before (both 0 at the interface's first sample). An interface idle since
 * its last record is left out until it moves again, so a counter drawn
 * from these falls to 0 and stays there. */
struct raw_host_net {
	uint32_t name_id;           /* "eth0" */
	uint32_t speed_mbps;        /* rated speed (/sys/class/net/<if>/speed), 0: unknown */
	uint64_t interval_ns;
	uint64_t rx_bytes, rx_packets;
	uint64_t tx_bytes, tx_packets;
};

/* A framework operator, written when its window is flushed: `ts` is its
 * start, `end` its end, both in the stream's clock. `tid` is the OS thread
 * id, or the negated framework thread id when the OS id is unknown.
 * Strings: shapes and types are JSON arrays ("[[64, 128], []]",
 * "[\"float\", \"\"]"), the stack is frames joined by ';'. */
#define RAW_OP_BACKWARD 0x1u /* ran in the autograd backward pass */
#define RAW_OP_USER     0x2u /* a user annotation (torch.profiler.record_function) */
/* read from torch's NVTX range around the op (common/torch_nvtx.h), in a
 * device stream: tid is as the stream's markers' (model_caller), and the
 * reader finds BACKWARD and fwd_tid itself (by nesting, by seq) */
#define RAW_OP_NVTX     0x4u
struct raw_op {
	uint64_t end;
	int32_t  tid;
	uint32_t name_id;
	uint32_t shapes_id;      /* 0: not recorded */
	uint32_t types_id;       /* 0: not recorded */
	uint32_t stack_id;       /* 0: not recorded */
	uint32_t flags;          /* RAW_OP_* */
	int64_t  seq;            /* autograd sequence number, -1 if none */
	int32_t  fwd_tid;        /* backward ops: the forward op's thread, 0 if none */
	uint32_t pad;
	/* with_flops: the operator's floating-point operations as torch
	 * counts them (0: none counted). Files of older writers end before
	 * it: readers take it as 0 (raw_payload_min). */
	uint64_t flops;
};

/* An operator recorded on its own thread as it runs (torch's NVTX range
 * around it, taken at the NVTX call: platform/agent/device/cuda/
 * backend_nvtx.c), in that thread's stream: begun here, ended by the
 * OP_END that balances it, as RANGE_PUSH and RANGE_POP pair. Read as a
 * RAW_OP_NVTX operator; an op still open when the stream ends (the
 * program died in it) ends with its process's last record. */
struct raw_op_begin {
	uint32_t name_id;
	uint32_t shapes_id;      /* 0: not recorded */
	int64_t  seq;            /* autograd sequence number, -1 if none */
};

/*
 * Device activity (the agent's HAL). Every device record names its backend's
 * device family in `vendor` (enum raw_dev_vendor), so outputs say CUDA or
 * SIM. Times are CLOCK_MONOTONIC ns (`ts` start, `end` end). `correlation`
 * joins an activity to the API call that launched it (CUPTI's correlation
 * id; the sim library's own ids); 0 means none.
 */
enum raw_dev_vendor { RAW_VENDOR_SIM = 1, RAW_VENDOR_CUDA = 2 };

enum raw_dev_kind {
	RAW_DEV_KERNEL = 1,
	RAW_DEV_MEMCPY = 2,
	RAW_DEV_MEMSET = 3,
	RAW_DEV_SYNC   = 4,      /* a synchronization the device waited in */
};

enum raw_copy_kind {
	RAW_COPY_UNKNOWN = 0, RAW_COPY_HTOD = 1, RAW_COPY_DTOH = 2, RAW_COPY_DTOD = 3,
	RAW_COPY_HTOH = 4, RAW_COPY_PTOP = 5,
};

struct raw_dev_activity {
	uint64_t end;
	uint64_t correlation;
	uint64_t bytes;          /* copies and sets */
	uint32_t kind;           /* enum raw_dev_kind */
	uint32_t vendor;         /* enum raw_dev_vendor */
	uint32_t device;
	uint32_t stream;
	uint32_t name_id;        /* kernel name; copies and sets: the backend's name if any
				  * (CUDA: Kineto's "Memcpy HtoD (Pinned -> Device)",
				  * "Memset (Device)"), else 0 and the outputs name them */
	uint32_t copy_kind;      /* enum raw_copy_kind */
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t registers;      /* per thread */
	uint32_t shared_bytes;   /* static + dynamic shared memory */
	/* A sync on an event ("Event Sync", "Stream Wait Event"): the event,
	 * and the event-record call that last recorded it before the wait,
	 * with the stream it recorded on: HTA's critical path follows them
	 * (Kineto's wait_on_* args). wait_corr 0: not known. Files of older
	 * writers end before these: readers take them as 0 (raw_payload_min). */
	uint64_t wait_corr;
	uint32_t wait_stream;
	uint32_t event_id;
};

enum raw_api_domain { RAW_API_RUNTIME = 1, RAW_API_DRIVER = 2, RAW_API_SIM = 3 };

struct raw_dev_api {
	uint64_t end;
	uint64_t correlation;
	int32_t  tid;            /* OS tid; <= 0 when the backend could not tell (CUDA:
				  * the negated CUPTI thread id): the parse uses the
				  * process's main thread */
	uint32_t name_id;        /* "cudaLaunchKernel", "sim_kernel" ... */
	uint32_t domain;         /* enum raw_api_domain */
	uint32_t vendor;
	uint32_t cbid;           /* CUPTI callback id; 0 for sim */
	uint32_t pad;
};

#define RAW_MEM_FREE 0x1u    /* a release; otherwise an allocation */
struct raw_dev_memory {
	uint64_t address;
	uint64_t bytes;
	uint64_t correlation;
	int32_t  tid;            /* the thread that asked, 0 if unknown */
	uint32_t device;
	uint32_t vendor;
	uint32_t flags;          /* RAW_MEM_* */
	uint32_t stream;         /* 0 if not stream-ordered */
	uint32_t pad;
};

enum raw_coll_op {
	RAW_COLL_ALLREDUCE = 1, RAW_COLL_ALLGATHER = 2, RAW_COLL_BROADCAST = 3,
	RAW_COLL_REDUCESCATTER = 4, RAW_COLL_SEND = 5, RAW_COLL_RECV = 6,
	RAW_COLL_ALLTOALL = 7, RAW_COLL_REDUCE = 8,
};

/* A collective as the device ran it: `ts`..`end` on `stream`. A NCCL
 * kernel is written as a collective only, never also as an activity. */
struct raw_dev_collective {
	uint64_t end;
	uint64_t bytes;
	uint64_t correlation;
	uint32_t op;             /* enum raw_coll_op */
	uint32_t vendor;
	uint32_t device;
	uint32_t stream;
	uint32_t name_id;        /* the kernel or op name as the backend saw it */
	uint32_t group_id;       /* the group's name ("default_group", "tp0") */
	uint32_t ranks_id;       /* the group's global ranks, "0,1,2,3" */
	int32_t  rank;           /* this process's global rank, -1 unknown */
	int32_t  peer;           /* send/recv: the other global rank; -1 otherwise */
	uint32_t pad;
};

/* Written by the launcher's sampler; `ts` is the sample time. */
struct raw_dev_sample {
	uint32_t device;
	uint32_t vendor;
	uint32_t util_pct;       /* compute utilisation */
	uint32_t mem_util_pct;   /* memory-controller utilisation */
	uint64_t mem_used_bytes;
	uint64_t mem_total_bytes;
	uint32_t power_mw;
	uint32_t sm_clock_mhz;
	uint32_t temperature_c;
	uint32_t pad;
};

struct raw_dev_info {
	uint32_t device;
	uint32_t vendor;
	uint32_t name_id;
	uint32_t sm_count;
	uint64_t total_mem_bytes;
	uint32_t compute_major, compute_minor;
	uint32_t uuid_id;        /* string, 0 if unknown */
	uint32_t pad;
};

#define RAW_MARKER_RANGE 0x1u /* a range [ts, end]; else an instant mark */
struct raw_dev_marker {
	uint64_t end;
	int32_t  tid;
	uint32_t name_id;
	uint32_t domain_id;      /* NVTX domain name, 0: default */
	uint32_t flags;          /* RAW_MARKER_* */
};

/* gc_detect: a Python garbage collection on the stream's thread, as
 * gc.callbacks report it: a START, then its STOP with what it found. A
 * thread collects one generation at a time (Python does not nest them). */
enum raw_gc_phase { RAW_GC_START = 1, RAW_GC_STOP = 2 };
struct raw_gc {
	uint32_t phase;             /* enum raw_gc_phase */
	uint32_t generation;        /* 0, 1, 2: the oldest generation collected */
	uint64_t collected;         /* STOP: unreachable objects freed */
	uint64_t uncollectable;     /* STOP: unreachable objects left (gc.garbage) */
};

/* profile_memory: an allocation or free of the framework's allocator
 * (torch's CPU allocator, its CUDA caching allocator), as torch's profiler
 * reported it; `ts` is its time. Written by the Python hooks through the
 * agent (prof_fw_memory) into the process's fwmem.raw, in time order.
 * Not a device record: the device runtime's own allocations are
 * RAW_REC_DEV_MEMORY. Unknown values: address 0, totals -1 (torch 1.13's
 * profiler events carry neither; its event tree and torch 2.x do). */
#define RAW_FW_DEV_CPU  0    /* device_type: c10::DeviceType, as Kineto writes it */
#define RAW_FW_DEV_CUDA 1
struct raw_fw_memory {
	int64_t  bytes;             /* negative: a free */
	uint64_t address;           /* 0: unknown */
	int64_t  total_allocated;   /* the allocator's, after the event; -1: unknown */
	int64_t  total_reserved;    /* -1: unknown */
	int64_t  total_active;      /* -1: unknown */
	int32_t  tid;               /* OS tid; negated framework thread id when unknown */
	int16_t  device_type;       /* RAW_FW_DEV_* */
	int16_t  device_index;      /* -1: the CPU */
};

/* What a host sample holds; older writers' say 0 and hold everything. */
static inline uint32_t raw_host_parts(const struct raw_host_sample *s)
{
	return s->parts ? s->parts : RAW_HOST_ALL;
}

static inline uint32_t raw_align(uint32_t n)
{
	return (n + RAW_ALIGN - 1) & ~(RAW_ALIGN - 1);
}

#endif
