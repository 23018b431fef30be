/*
 * lib/model/: records in time order in (lib/ingest), typed events out to
 * the outputs (lib/outputs), through their sinks (outputs/out_sink.h) but
 * for the four of struct model_outs. parse_model_*.c hold the record kinds: ranges,
 * steps and step selection, framework operators and collectives, device
 * calls, tasks and samples, windows, GC, host samples, metadata.
 *
 * From merged records to timeline events: per process image and per thread
 * state (range stacks, cross-thread ranges waiting for their end, the step
 * boundary, thread names), fed one record at a time in time order. What it
 * keeps grows with the processes, threads, open ranges and steps, never
 * with the number of records.
 *
 * Rules (share/prof/doc/outputs.md says them for users):
 *  - MARK, RANGE_PUSH, RANGE_START of a named domain say it in their args
 *    ("domain"), as NVTX markers do.
 *  - RANGE_PUSH/POP on a thread -> "X" user_annotation; nesting is exact
 *    because a stream's timestamps never go back. A pop with an empty
 *    stack is counted and ignored. Ranges open when the stream ends close
 *    at its last moment with "unfinished": true.
 *  - RANGE_START/END, matched by id within a process image, -> async "b" /
 *    "e" pairs (string id "<pid>.<image>.<id>"). An end without a start is
 *    counted and ignored; a start without an end ends at the process's last
 *    moment, "unfinished".
 *  - STEP n ends step n of the process: "ProfilerStep#n" X on the calling
 *    thread, from the previous boundary (the first: from when recording
 *    began in the process) to this record. Recording switched (back) on
 *    moves the boundary to that moment. The agent numbers steps while
 *    paused too but records none, so a step whose number does not follow
 *    the previous one, with no switch-on since, has an unknown start: it
 *    is only a boundary (counted in steps_unknown_start). RECORDING records
 *    in a stream of no process (the launcher's) apply to every process.
 *    A step starting where recording began starts no earlier than the
 *    innermost range still open on its thread (a range around the whole
 *    loop would otherwise overlap step 1 partially). Ranges that cross a
 *    step boundary (pushed in step n, popped in step n+1) do overlap the
 *    steps partially, as in Kineto traces.
 *  - HOST_SAMPLE -> counters on a process "Host" (the launcher's pid) for
 *    what it holds (host_sys), a host_usage.csv row, and with disk the
 *    host_disk_usage.csv summary; HOST_NET -> a counter per interface on
 *    "Host" and the host_network_usage.csv summary.
 *  - OP (framework streams) -> "X" cpu_op on (pid, tid) of the op, an
 *    operator_details.csv row and an op_statistic.csv count, written when
 *    the op closes. Ops of a thread form a stack: an op closes when one
 *    starting at or after its end arrives, at a step boundary of its
 *    thread, or at the end; a child's end is clamped to its parent's. Two
 *    ops starting at the same ns nest by length (the longer is the
 *    parent), whatever order they came in. A step boundary (a STEP record,
 *    or recording switched on) closes every op still open on the thread
 *    that calls prof_step, its end clamped to the boundary: an op belongs
 *    to the step its start is in and never overlaps a step partially.
 *    Op tids <= 0 (negated framework thread ids) are threads of their
 *    own, "torch thread <id>", at tid MODEL_TORCH_TID_BASE + id.
 *  - Recording windows (RECORDING on to off, any cause) -> "X" events
 *    "Window #k (<cause>)" on thread MODEL_WINDOWS_TID "prof windows" of
 *    the process, k counting the windows of the pid from 1.
 *  - Device records (dev.raw, read in start order through the reorder
 *    window; share/prof/doc/outputs.md says the outputs):
 *    DEV_API -> "X" cuda_runtime / cuda_driver on (pid, calling tid), a
 *    leaf: the innermost op open on that thread at the call's start is
 *    its launcher (it gives the call and the call's tasks its External
 *    id), the call's end is cut to that op's end, and to the start of
 *    whatever comes next on the thread (op, range, step, marker, call),
 *    so calls, ops and ranges nest. The call waits on its thread until
 *    then (one per thread). Correlations are remembered for
 *    MODEL_CORR_KEEP_NS of device time (at most MODEL_CORR_MAX per
 *    process) to link tasks to their calls.
 *    DEV_ACTIVITY, DEV_COLLECTIVE -> "X" on (device, stream), ac2g flows
 *    from the call, kernel_details.csv, op_statistic.csv device rows, the
 *    step accumulator of (process, device), communication*.json.
 *    An op whose calls launched tasks keeps its operator_details.csv row
 *    (a "devnode") until its tasks and its children's are in: when every
 *    call's first task has come, or MODEL_LAUNCH_WAIT_NS of device time
 *    after its end, or at the end of the parse.
 *    DEV_MEMORY -> memory_record.csv, operator_memory.csv, "[memory]"
 *    instants; DEV_SAMPLE -> device_usage.csv and counters on the device
 *    process; DEV_MARKER -> user_annotation on the calling thread.
 *  - FW_MEMORY (profile_memory, fwmem.raw) -> the sinks' fw_memory
 *    (memory_record.csv "PTA" rows, operator_memory.csv), "[memory]"
 *    instants on the allocating thread and a "Framework Memory <device>"
 *    counter on the process; its operator is the innermost op open on
 *    its thread at its moment.
 *  - GC START then STOP on a thread -> "X" "GC" (category "GC", args
 *    generation, collected, uncollectable) there and a gc_record.csv row;
 *    one still open at the stream's end closes there, "unfinished".
 */
#ifndef PROF_PARSE_MODEL_H
#define PROF_PARSE_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "outputs/tables/out_step_trace.h"
#include "outputs/trace/out_trace.h"
#include "common/idmap.h"
#include "ingest/parse_stream.h"

#include "outputs/out_sink.h"
#include "outputs/tables/out_api_stat.h"
#include "outputs/tables/out_memory.h"
#include "outputs/tables/out_op_stat.h"

#define MODEL_WINDOWS_TID 0            /* no Linux thread has tid 0 */
#define MODEL_TORCH_TID_BASE 1000000000 /* above any Linux tid (pid_max <= 2^22) */
#define MODEL_SYNC_TID_BASE 1000000    /* device sync records: stream + this */
#define MODEL_DEV_SORT_BASE 5000000    /* device processes sort after every pid */
#define MODEL_CORR_KEEP_NS PARSE_REORDER_WINDOW_NS
#define MODEL_CORR_MAX (1u << 18)
#define MODEL_LAUNCH_WAIT_NS 1000000000ull

struct model_devnode;

struct model_range {
	const char *name;          /* in the stream's mapping */
	uint64_t start_ns;
	const char *domain;        /* the prof_tx domain; NULL: the default */
	uint64_t child_ns;         /* ranges of its kind directly inside */
};

/* A range ended in the step in progress, waiting for its number
 * (parse_model_rangestat.c). */
struct model_rangewait {
	int module;                /* with_modules' range; else the program's */
	char *name;                /* its name or module path, malloc'd */
	uint64_t start_ns, total_ns, self_ns;
};

/* A framework op still open on its thread. */
struct model_op {
	uint64_t start_ns, end_ns;
	uint64_t child_ns;             /* durations of its closed children */
	const char *name, *shapes, *types, *stack;  /* NULL: not recorded */
	int64_t seq;
	int32_t fwd_tid;
	uint32_t flags;                /* RAW_OP_* */
	uint64_t flops;                /* with_flops; 0: none */
	uint64_t id;                   /* External id, given when it opened */
	struct model_devnode *node;    /* it (or a child) launched device work */
	uint32_t children;             /* direct children closed so far */
	int same_child;                /* the last of them bears its name */
	int open;                      /* begun (OP_BEGIN), its end not read yet */
};

/* A device API call waiting on its thread for what comes next. */
struct model_api {
	uint64_t start_ns, end_ns;
	uint64_t corr, ext_id;
	const char *name;
	uint32_t cbid, domain, vendor;
};

/* A correlation id remembered: the call that launched it. */
struct model_corr {
	uint64_t corr;
	uint64_t start_ns, end_ns;     /* the call's own */
	uint64_t ext_id;               /* its op's External id, 0: none */
	const char *shapes, *types;    /* its op's */
	const char *ann;               /* the program's innermost range then; NULL: none */
	uint64_t ann_key;              /* that range's instance (thread, start) */
	int64_t tid;                   /* as in the trace */
	int matched, flowed;           /* a task came; its flow was written */
};

/* A device of a process: the step accumulator. */
struct model_pdev {
	uint32_t vendor, device;
	struct out_step_acc acc;
};

/* A stream of a process: when its last task ended (for Wait Time). */
struct model_pstream {
	uint32_t vendor, device, stream;
	uint64_t last_end;
	size_t next;                   /* of the same hash: common/idmap.h */
};

/* Collectives counted per group, for their keys. */
struct model_pgroup {
	const char *group;
	uint64_t n;
	size_t next;                   /* of the same hash */
};

struct model_thread {
	int32_t tid;                   /* <= 0: a framework thread id, negated */
	int has_stream, has_ops;
	struct model_range *stack;
	size_t depth, cap;
	struct model_op *ops;          /* open framework ops, outermost first */
	size_t nops, capops;
	char comm[RAW_NAME_MAX + 1];   /* from the stream header */
	const char *name;              /* latest RAW_REC_THREAD_NAME, or NULL */
	int has_dev;                   /* device calls, markers or memory events */
	int api_waiting;               /* `api` is not written yet */
	struct model_api api;
	uint64_t built_ns;             /* the latest optimizer built, or 0 ... */
	uint64_t fetch_ns;             /* ... and first batch fetched, since
					* recording (re)started: parse_model_steps.c */
	int gc_open;                   /* a Python collection is in progress ... */
	uint32_t gc_generation;        /* ... of this generation ... */
	uint64_t gc_start_ns;          /* ... since then: parse_model_gc.c */
};

/* A framework allocator's device in a process (profile_memory): its total
 * allocated, torch's or (without it) the running sum of its events. */
struct model_fwmem {
	int16_t type, index;           /* raw_fw_memory's device_type, device_index */
	int64_t allocated, peak;
};

struct model_proc {
	const char *image;             /* "<pid>.<n>", from the source */
	int32_t pid;
	long n;
	const char *cmdline, *exe, *rank;   /* RAW_REC_PROCESS; NULL if none */
	char comm[RAW_NAME_MAX + 1];
	uint64_t first_ns, last_ns;
	uint64_t begin_ns;             /* RAW_REC_PROCESS's: where it read the
					* recording state; 0 until seen */
	int recording, seen_recording;
	int resumed;                   /* switched on since the last boundary */
	uint64_t step_from, steps, last_step;
	int fetches;                   /* it fetched DataLoader samples */
	int32_t step_tid;              /* the thread that calls prof_step (pid until seen) */
	int win_open;                  /* a recording window is open ... */
	uint32_t win_cause;            /* ... begun for this cause ... */
	uint64_t win_start, win_no;    /* ... at this moment, numbered so */
	uint64_t windows;              /* windows begun in this image */
	struct parse_idmap async;      /* id -> struct model_async */
	struct model_thread **threads;
	size_t nthreads, capthreads;
	struct parse_idmap thread_of;  /* tid -> struct model_thread */
	struct parse_idmap corr;       /* correlation -> its number k + 1 */
	struct model_corr *corr_ring;  /* number k at k & (corr_cap - 1), by value */
	uint64_t corr_first;           /* the number of the oldest, forgotten first */
	size_t corr_n, corr_cap;       /* cap: 0 or a power of two */
	/* Found by key, not by a scan: damaged records can name a new device,
	 * stream or group each. */
	struct model_pdev *devs;
	size_t ndevs, capdevs;
	struct parse_idmap dev_at;     /* vendor << 32 | device -> position in devs */
	struct model_pstream *streams;
	size_t nstreams, capstreams;
	struct parse_idmap stream_at;  /* its hash -> position of the first in streams */
	struct model_pgroup *groups;
	size_t ngroups, capgroups;
	struct parse_idmap group_at;   /* its text's hash -> position of the first */
	struct out_op_stat sel_ops;    /* --step-list: this step's sums, until */
	struct out_api_stat sel_apis;  /* its number says whether they count */
	struct model_rangewait *rwait; /* ranges begun in the step in progress */
	size_t nrwait, caprwait;
	struct model_fwmem *fwmem;     /* profile_memory: per allocator device */
	size_t nfwmem, capfwmem;
	struct model_seqtid *fwd_seq;  /* NVTX operators: seq -> forward thread, by seq's
					* low bits; NULL until one is read */
};

/* A forward operator's autograd sequence number and its thread. */
struct model_seqtid {
	int64_t seq;
	int32_t tid;
};
#define MODEL_FWD_SEQ_SLOTS 4096u

/* A device track of the trace: (device, tid) with tid a stream, or a
 * stream's sync track; tid -1: the device only (samples). */
struct model_track {
	uint32_t device, vendor;
	int64_t tid;
	size_t next;                   /* of the same hash */
};

/* A device row of step_trace_time.csv, for step `step` (index into steps). */
struct model_step_row {
	size_t step;
	struct out_step_row row;
};

struct model_counts {
	uint64_t unmatched_pops, unmatched_ends;
	uint64_t unfinished_ranges, unfinished_async;
	uint64_t steps_unknown_start, lost_records, host_samples;
	uint64_t ops, ops_clamped, ops_dropped, ops_merged, windows;
	uint64_t fw_collectives;       /* from CPU backends' work ranges */
	uint64_t dev_tasks, dev_apis, dev_collectives, dev_memory, dev_samples, dev_markers;
	uint64_t fw_memory;            /* framework allocator events (profile_memory) */
	uint64_t dev_unlinked;         /* tasks whose call was not (or no longer) known */
	uint64_t gc_collections;       /* Python collections (gc_detect) */
};

/* Where the model writes. */
/* Where the model's events go: every output but four through the sinks;
 * those four it writes itself (out_sink.h says why). */
struct model_outs {
	struct out_trace *trace;
	struct out_op_stat *opstat;
	struct out_api_stat *apis;
	struct out_memory *mem;
	const struct out_sinks *sinks;
};

struct parse_model {
	struct model_proc **procs;
	size_t nprocs;
	struct model_outs out;
	struct parse_idmap op_json;    /* shapes/types texts checked: out_trace_op.h */
	uint64_t op_ids;               /* External ids given */
	FILE *log;
	struct out_step *steps;        /* one per recorded step: for step_trace_time.csv */
	struct model_proc **step_procs;/* the process of each */
	size_t nsteps, capsteps;
	struct model_step_row *dev_rows;  /* device rows of steps, in step order */
	size_t ndev_rows, capdev_rows;
	struct parse_idmap devnodes;   /* External id -> struct model_devnode */
	struct model_devnode *node_head, *node_tail;  /* closed ones, by close */
	struct model_devnode *node_free;              /* written ones, for reuse */
	struct model_track *tracks;
	size_t ntracks, captracks;
	struct parse_idmap track_at;   /* its hash -> position of the first in tracks */
	int32_t host_pids[8];
	size_t nhost;
	struct model_counts n;
	/* gpu_user_annotation: per (range instance, device, stream), the span
	 * of the work launched inside the range (parse_model_gpuann.c) */
	struct parse_idmap gpuann_at;
	struct model_gpuann **gpuann;
	size_t ngpuann, capgpuann;
	const uint64_t *want_steps;    /* --step-list, or NULL: every step */
	size_t nwant_steps;
	int steps_unordered;           /* a pid's steps came out of start order */
};

/* Builds the processes and threads of the streams and links each stream
 * to them. 0 or -ENOMEM. */
int model_init(struct parse_model *m, struct parse_stream *streams, size_t n,
	       const struct model_outs *outs, FILE *log);
/* One record: s->rec at s->ns. */
void model_record(struct parse_model *m, struct parse_stream *s);
/* The stream has no more records. */
void model_stream_end(struct parse_model *m, struct parse_stream *s);
/* Closes what is still open (ops, windows, cross-thread ranges) and
 * writes the process and thread metadata. */
void model_finish(struct parse_model *m);
/* The rows of step_trace_time.csv (malloc'd, *n of them): per step, a row
 * per device of its process, or the host-only row. 0 or -ENOMEM. */
int model_step_rows(const struct parse_model *m, struct out_step_row **rows, size_t *n);
void model_free(struct parse_model *m);
/* The process's rank (RAW_REC_PROCESS), or -1. */
int64_t model_proc_rank(const struct model_proc *p);

#endif
