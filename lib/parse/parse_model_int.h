/* Inside the model: the record handlers, one file per family. */
#ifndef PROF_PARSE_MODEL_INT_H
#define PROF_PARSE_MODEL_INT_H

#include <string.h>
#include "parse/parse_model.h"

/* The record's payload copied out (the mapping need not be aligned for it). */
#define MODEL_PAYLOAD(s, type, var) type var; memcpy(&var, (s)->rec.payload, sizeof var)

/* parse_model_ranges.c */
void model_on_mark(struct parse_model *m, struct parse_stream *s);
void model_on_push(struct parse_model *m, struct parse_stream *s);
void model_on_pop(struct parse_model *m, struct parse_stream *s);
void model_on_start(struct parse_model *m, struct parse_stream *s);
void model_on_end(struct parse_model *m, struct parse_stream *s);
void model_close_stack(struct parse_model *m, struct parse_stream *s, uint64_t end_ns);
void model_close_async(struct parse_model *m, struct model_proc *p);

/* parse_model_steps.c */
void model_on_step(struct parse_model *m, struct parse_stream *s);
void model_on_recording(struct parse_model *m, struct parse_stream *s);

/* parse_model_misc.c */
void model_on_host_sample(struct parse_model *m, struct parse_stream *s);
void model_on_thread_name(struct parse_model *m, struct parse_stream *s);
void model_on_process(struct parse_model *m, struct parse_stream *s);
void model_on_metadata(struct parse_model *m, struct parse_stream *s);
void model_on_lost(struct parse_model *m, struct parse_stream *s);

/* parse_model_ops.c */
void model_on_op(struct parse_model *m, struct parse_stream *s);
void model_ops_boundary(struct parse_model *m, struct model_proc *p, int32_t tid, uint64_t ns);
void model_ops_finish(struct parse_model *m);
int64_t model_out_tid(const struct model_thread *t);

/* parse_model_windows.c */
const char *model_cause_name(uint32_t cause);
void model_window_switch(struct parse_model *m, struct model_proc *p, int on, uint32_t cause,
			 uint64_t ns);
void model_windows_finish(struct parse_model *m);

/* parse_model.c */
struct model_thread *model_thread_of(struct model_proc *p, int32_t tid);
struct model_thread *model_thread_find(struct model_proc *p, int32_t tid);

#endif
