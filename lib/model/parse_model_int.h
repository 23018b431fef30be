/* Inside the model: the record handlers, one file per family. */
#ifndef PROF_PARSE_MODEL_INT_H
#define PROF_PARSE_MODEL_INT_H

#include <string.h>
#include "model/parse_model.h"

/* The record's payload copied out (the mapping need not be aligned for it). */
#define MODEL_PAYLOAD(s, type, var) type var; memcpy(&var, (s)->rec.payload, sizeof var)
/* The same for a record that grew: older writers' end before its last
 * fields, which then read 0 (the reader checked raw_payload_min). */
#define MODEL_PAYLOAD_GROWN(s, type, var) type var; memset(&var, 0, sizeof var); \
	memcpy(&var, (s)->rec.payload, (s)->rec.len < sizeof var ? (s)->rec.len : sizeof var)

/* parse_model_ranges.c */
/* "args" of a trace event begun with out_trace_begin: {"domain": ...,
 * "unfinished": true}, each when there is one; nothing without either. */
void model_event_args(struct jo *j, const char *domain, int unfinished);
void model_on_mark(struct parse_model *m, struct parse_stream *s);
void model_on_push(struct parse_model *m, struct parse_stream *s);
void model_on_pop(struct parse_model *m, struct parse_stream *s);
void model_on_start(struct parse_model *m, struct parse_stream *s);
void model_on_end(struct parse_model *m, struct parse_stream *s);
void model_close_stack(struct parse_model *m, struct parse_stream *s, uint64_t end_ns);
/* A range of thread t ended (its enclosing ones still on t's stack): into
 * range_statistic.csv, now or at its step's end (parse_model_rangestat.c). */
void model_range_done(struct parse_model *m, struct model_proc *p, struct model_thread *t,
		      const struct model_range *r, uint64_t end_ns);
/* A step boundary of p (known: step `number` ended and is recorded): the
 * ranges waiting get their step, or none. */
void model_ranges_settle(struct parse_model *m, struct model_proc *p, int known,
			 uint64_t number);
void model_close_async(struct parse_model *m, struct model_proc *p);

/* parse_model_steps.c */
void model_on_step(struct parse_model *m, struct parse_stream *s);
void model_on_recording(struct parse_model *m, struct parse_stream *s);

/* parse_model_misc.c */
void model_on_host_sample(struct parse_model *m, struct parse_stream *s);
void model_on_host_net(struct parse_model *m, struct parse_stream *s);

/* parse_model_gc.c */
void model_on_gc(struct parse_model *m, struct parse_stream *s);
void model_close_gc(struct parse_model *m, struct parse_stream *s, uint64_t end_ns);
void model_on_thread_name(struct parse_model *m, struct parse_stream *s);
void model_on_process(struct parse_model *m, struct parse_stream *s);
void model_on_metadata(struct parse_model *m, struct parse_stream *s);
void model_on_lost(struct parse_model *m, struct parse_stream *s);

/* parse_model_dev.c: a communication task in the step accounting of
 * (vendor, device) of p; the n-th collective of p in `group`. */
void model_step_comm(struct model_proc *p, uint32_t vendor, uint32_t device, uint64_t start_ns,
		     uint64_t end_ns, int recv);
uint64_t model_group_seq(struct model_proc *p, const char *group);

/* parse_model_fwcoll.c: the collectives of torch.distributed's CPU
 * backends, from their work ranges among the operators. */
#define MODEL_HOST_DEVICE ((uint32_t)-1)   /* the row's Device_id -1 */
int model_fw_is_collective(const char *name);
void model_fw_collective(struct parse_model *m, struct model_proc *p, const struct model_op *op);
uint64_t model_fw_coll_bytes(const char *shapes, const char *types);

/* parse_model_ops.c */
void model_on_op(struct parse_model *m, struct parse_stream *s);
void model_on_op_begin(struct parse_model *m, struct parse_stream *s);
void model_on_op_end(struct parse_model *m, struct parse_stream *s);
/* What the Python hooks mark on the thread that trains: an optimizer being
 * built (steps.py) and a batch taken from a DataLoader (data.py, Kineto's
 * name). Where the first step can begin. */
#define MODEL_BUILT_PREFIX "Optimizer.__init__#"
/* ranges prof itself opens on a program thread (the hooks' operator flush) */
#define MODEL_OWN_PREFIX "prof::"
/* with_modules' ranges (_prof_hooks/modules.py), Kineto's name and category */
#define MODEL_MODULE_PREFIX "nn.Module: "
#define CAT_MODULE "python_function"
#define MODEL_FETCH_NAME "enumerate(DataLoader)#_BaseDataLoaderIter.__next__"
/* A dataset fetch (data.py): in a process without steps, a DataLoader worker's */
#define MODEL_WORKER_FETCH "DataLoader fetch"

/* Names checked against a literal for every op, kernel or range: the
 * first byte settles most of them without a call into libc (those calls
 * were a hundredth of a parse). */
#define MODEL_STARTS(s, lit) ((s)[0] == (lit)[0] && strncmp((s), (lit), sizeof(lit) - 1) == 0)
#define MODEL_IS(s, lit) ((s)[0] == (lit)[0] && strcmp((s), (lit)) == 0)
/* Sets *hint (t's) to ns; on the stepping thread before the first step,
 * what the devices and sums gathered so far was set-up, not the step. */
void model_loop_hint(struct parse_model *m, struct model_proc *p, struct model_thread *t,
		     uint64_t *hint, uint64_t ns);

/* --step-list (parse_model_stepsel.c): where a process's sums go, and
 * the end of its step (known: it was a recorded step, of that number). */
int model_step_wanted(const struct parse_model *m, uint64_t number);
struct out_op_stat *model_opstat(struct parse_model *m, struct model_proc *p);
struct out_api_stat *model_apistat(struct parse_model *m, struct model_proc *p);
void model_stepsel_end(struct parse_model *m, struct model_proc *p, int known,
		       uint64_t number);
void model_stepsel_free(struct model_proc *p);
void model_ops_boundary(struct parse_model *m, struct model_proc *p, int32_t tid, uint64_t ns);
void model_ops_finish(struct parse_model *m);
int64_t model_out_tid(const struct model_thread *t);

/* parse_model_windows.c */
const char *model_cause_name(uint32_t cause);
void model_window_switch(struct parse_model *m, struct model_proc *p, int on, uint32_t cause,
			 uint64_t ns);
void model_windows_finish(struct parse_model *m);

/* parse_model_api.c */
void model_on_dev_api(struct parse_model *m, struct parse_stream *s);
/* Writes t's waiting call, its end cut to `limit` (what came next on the
 * thread); UINT64_MAX: no cut. */
void model_api_flush(struct parse_model *m, struct model_proc *p, struct model_thread *t,
		     uint64_t limit);
void model_api_finish(struct parse_model *m);
struct model_corr *model_corr_find(struct model_proc *p, uint64_t corr);
/* parse_model_gpuann.c: the program's range a call was made in, and the
 * device work it launched, as Kineto's gpu_user_annotation spans. */
void model_gpuann_note(const struct model_thread *t, struct model_corr *c);
void model_gpuann_extend(struct parse_model *m, const struct model_corr *c, uint32_t device,
			 int64_t stream, uint64_t start_ns, uint64_t end_ns);
void model_gpuann_finish(struct parse_model *m);
/* Its spans dropped unwritten (a parse that failed). */
void model_gpuann_free(struct parse_model *m);
void model_corr_free(struct model_proc *p);
/* The innermost op of t open at ns (start <= ns < end), -1 if none. */
long model_op_at(const struct model_thread *t, uint64_t ns);
const char *model_opt_str(const struct parse_stream *s, uint32_t id);
/* The thread a device record names: its tid, the main thread's when the
 * backend did not know it (<= 0). */
int32_t model_caller(const struct model_proc *p, int32_t tid);

/* parse_model_devops.c */
/* The devnode of op k of t, made (with its ancestors') if need be. */
struct model_devnode *model_devnode_for(struct parse_model *m, struct model_thread *t,
					size_t k);
/* One more call of the node's op waits for its first task. */
void model_devnode_pending(struct model_devnode *n);
/* An op with a devnode closed: its row waits there. */
void model_devnode_close(struct parse_model *m, struct model_devnode *n,
			 const struct out_op *row);
/* A task of `ns` launched by the op `ext_id`; `first`: the first of its call. */
void model_devnode_credit(struct parse_model *m, uint64_t ext_id, uint64_t ns, int kernel,
			  int first);
void model_devnodes_expire(struct parse_model *m, uint64_t now);
void model_devnodes_finish(struct parse_model *m);
/* Frees the nodes, written or not (any time: error paths too). */
void model_devnodes_free(struct parse_model *m);

/* parse_model_dev.c */
void model_on_dev_activity(struct parse_model *m, struct parse_stream *s);
void model_on_dev_collective(struct parse_model *m, struct parse_stream *s);
void model_dev_free(struct model_proc *p);

/* parse_model_devmisc.c */
void model_on_dev_memory(struct parse_model *m, struct parse_stream *s);
/* parse_model_fwmem.c */
void model_on_fw_memory(struct parse_model *m, struct parse_stream *s);
void model_fwmem_free(struct model_proc *p);
void model_fwmem_device(char *buf, size_t n, int16_t type, int16_t index);
void model_on_dev_sample(struct parse_model *m, struct parse_stream *s);
void model_on_dev_marker(struct parse_model *m, struct parse_stream *s);
void model_on_dev_info(struct parse_model *m, struct parse_stream *s);

/* parse_model_devmeta.c */
void model_dev_track(struct parse_model *m, uint32_t device, uint32_t vendor, int64_t tid);
void model_dev_meta(struct parse_model *m);

/* parse_model_steps.c */
void model_steps_reset_devices(struct model_proc *p);

/* parse_model.c */
/* free(val), as parse_idmap_each calls it: for maps that own their values. */
void model_free_val(void *ctx, void *val);
struct model_thread *model_thread_of(struct model_proc *p, int32_t tid);
struct model_thread *model_thread_find(struct model_proc *p, int32_t tid);

#endif
