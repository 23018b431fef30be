#include "model/parse_model_int.h"

#include <errno.h>
#include <stdlib.h>

static void copy_name(char *dst, const char *src)
{
	memcpy(dst, src, RAW_NAME_MAX);
	dst[RAW_NAME_MAX] = '\0';
}

static struct model_proc *proc_of(struct parse_model *m, const struct parse_stream *s)
{
	for (size_t i = 0; i < m->nprocs; i++)
		if (strcmp(m->procs[i]->image, s->src->image) == 0)
			return m->procs[i];
	struct model_proc **v = realloc(m->procs, (m->nprocs + 1) * sizeof *v);
	if (!v)
		return NULL;
	m->procs = v;
	struct model_proc *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->image = s->src->image;
	p->pid = s->file.hdr.pid;
	p->n = s->src->n;
	p->first_ns = p->last_ns = p->step_from = s->open_ns;
	p->recording = 1;
	p->step_tid = p->pid;
	if (s->file.hdr.kind == RAW_STREAM_THREAD)
		copy_name(p->comm, s->file.hdr.comm);
	m->procs[m->nprocs++] = p;
	return p;
}

struct model_thread *model_thread_find(struct model_proc *p, int32_t tid)
{
	return parse_idmap_get(&p->thread_of, (uint32_t)tid);
}

struct model_thread *model_thread_of(struct model_proc *p, int32_t tid)
{
	struct model_thread *found = model_thread_find(p, tid);
	if (found)
		return found;
	if (p->nthreads == p->capthreads) {
		size_t cap = p->capthreads ? p->capthreads * 2 : 8;
		struct model_thread **v = realloc(p->threads, cap * sizeof *v);
		if (!v)
			return NULL;
		p->threads = v;
		p->capthreads = cap;
	}
	struct model_thread *t = calloc(1, sizeof *t);
	if (!t || parse_idmap_put(&p->thread_of, (uint32_t)tid, t) == t) {
		free(t);
		return NULL;
	}
	t->tid = tid;
	p->threads[p->nthreads++] = t;
	return t;
}

/* A process's first moment is its earliest stream's opening; its name
 * comes from its main thread (tid == pid) when there is one. A framework
 * or device stream belongs to its process image, not to a thread (its
 * records name theirs), and opens late (at its first flush): it names
 * nothing. */
static int attach(struct parse_model *m, struct parse_stream *s)
{
	const struct raw_file_header *h = &s->file.hdr;
	if (h->kind == RAW_STREAM_FRAMEWORK || h->kind == RAW_STREAM_DEVICE) {
		s->proc = proc_of(m, s);
		return s->proc ? 0 : -ENOMEM;
	}
	if (h->kind != RAW_STREAM_THREAD)
		return 0;
	struct model_proc *p = proc_of(m, s);
	struct model_thread *t = p ? model_thread_of(p, h->tid) : NULL;
	if (!t)
		return -ENOMEM;
	if (s->open_ns < p->first_ns)
		p->first_ns = p->last_ns = p->step_from = s->open_ns;
	if (h->tid == h->pid)
		copy_name(p->comm, h->comm);
	t->has_stream = 1;
	copy_name(t->comm, h->comm);
	s->proc = p;
	s->thr = t;
	return 0;
}

int model_init(struct parse_model *m, struct parse_stream *streams, size_t n,
	       const struct model_outs *outs, FILE *log)
{
	memset(m, 0, sizeof *m);
	m->out = *outs;
	m->log = log;
	for (size_t i = 0; i < n; i++)
		if (attach(m, &streams[i]) != 0)
			return -ENOMEM;
	return 0;
}

void model_record(struct parse_model *m, struct parse_stream *s)
{
	if (s->proc && s->ns > s->proc->last_ns)
		s->proc->last_ns = s->ns;
	if (m->node_head)
		model_devnodes_expire(m, s->ns);
	switch (s->rec.type) {
	case RAW_REC_MARK:        model_on_mark(m, s); break;
	case RAW_REC_RANGE_PUSH:  model_on_push(m, s); break;
	case RAW_REC_RANGE_POP:   model_on_pop(m, s); break;
	case RAW_REC_RANGE_START: model_on_start(m, s); break;
	case RAW_REC_RANGE_END:   model_on_end(m, s); break;
	case RAW_REC_STEP:        model_on_step(m, s); break;
	case RAW_REC_RECORDING:   model_on_recording(m, s); break;
	case RAW_REC_THREAD_NAME: model_on_thread_name(m, s); break;
	case RAW_REC_PROCESS:     model_on_process(m, s); break;
	case RAW_REC_METADATA:    model_on_metadata(m, s); break;
	case RAW_REC_LOST:        model_on_lost(m, s); break;
	case RAW_REC_HOST_SAMPLE: model_on_host_sample(m, s); break;
	case RAW_REC_HOST_NET:    model_on_host_net(m, s); break;
	case RAW_REC_GC:          model_on_gc(m, s); break;
	case RAW_REC_OP:          model_on_op(m, s); break;
	case RAW_REC_OP_BEGIN:    model_on_op_begin(m, s); break;
	case RAW_REC_OP_END:      model_on_op_end(m, s); break;
	case RAW_REC_DEV_ACTIVITY: model_on_dev_activity(m, s); break;
	case RAW_REC_DEV_API:     model_on_dev_api(m, s); break;
	case RAW_REC_DEV_MEMORY:  model_on_dev_memory(m, s); break;
	case RAW_REC_FW_MEMORY:   model_on_fw_memory(m, s); break;
	case RAW_REC_DEV_COLLECTIVE: model_on_dev_collective(m, s); break;
	case RAW_REC_DEV_SAMPLE:  model_on_dev_sample(m, s); break;
	case RAW_REC_DEV_INFO:    model_on_dev_info(m, s); break;
	case RAW_REC_DEV_MARKER:  model_on_dev_marker(m, s); break;
	default: break;           /* strings and clock pairs: used by the reader */
	}
}

void model_stream_end(struct parse_model *m, struct parse_stream *s)
{
	uint64_t end = parse_stream_end_ns(s);
	if (s->proc && end > s->proc->last_ns)
		s->proc->last_ns = end;
	if (s->thr) {
		model_api_flush(m, s->proc, s->thr, end);
		model_close_gc(m, s, end);
		model_close_stack(m, s, end);
	}
}

/* "thread <tid> (<name>)", Kineto's form; "torch thread <id>" for a
 * framework thread id. */
static void thread_meta(struct parse_model *m, int32_t pid, const struct model_thread *t)
{
	const char *name = t->name && *t->name ? t->name : t->comm;
	char buf[512];
	if (t->tid <= 0)
		snprintf(buf, sizeof buf, "torch thread %lld", -(long long)t->tid);
	else if (*name)
		snprintf(buf, sizeof buf, "thread %d (%s)", t->tid, name);
	else
		snprintf(buf, sizeof buf, "thread %d", t->tid);
	out_trace_thread(m->out.trace, pid, model_out_tid(t), buf, model_out_tid(t));
}

static int thread_shown(const struct model_thread *t)
{
	return t->has_stream || t->has_ops || t->has_dev;
}

/* The tid appears in a later image of the same pid, which names it. */
static int named_later(struct parse_model *m, size_t i, int32_t tid)
{
	for (size_t k = i + 1; k < m->nprocs && m->procs[k]->pid == m->procs[i]->pid; k++)
		for (size_t j = 0; j < m->procs[k]->nthreads; j++)
			if (thread_shown(m->procs[k]->threads[j]) &&
			    m->procs[k]->threads[j]->tid == tid)
				return 1;
	return 0;
}

static const char *proc_name(const struct model_proc *p)
{
	return p->cmdline && *p->cmdline ? p->cmdline : p->comm;
}

/* A DataLoader worker (a fork carries the parent's command line, which
 * would name it as the trainer): it fetched samples and never stepped, or
 * torch 2.x named its main thread "pt_data_worker". */
static int dataloader_worker(const struct model_proc *p)
{
	if (p->fetches && !p->steps)
		return 1;
	for (size_t j = 0; j < p->nthreads; j++) {
		const struct model_thread *t = p->threads[j];
		const char *n = t->name ? t->name : t->comm;
		if (t->tid == p->pid && strcmp(n, "pt_data_worker") == 0)
			return 1;
	}
	return 0;
}

/* One process_name per pid: the images an exec chain went through, in
 * order, joined by " -> ". Procs are in (pid, image) order already. */
static void proc_meta(struct parse_model *m, size_t i, size_t end)
{
	struct strbuf sb = STRBUF_INIT;
	if (dataloader_worker(m->procs[end - 1]))
		sb_puts(&sb, "DataLoader worker: ");
	for (size_t k = i; k < end; k++) {
		if (k > i)
			sb_puts(&sb, " -> ");
		sb_puts(&sb, proc_name(m->procs[k]));
	}
	out_trace_process(m->out.trace, m->procs[i]->pid, sb.buf ? sb.buf : "", "CPU",
			  m->procs[i]->pid);
	sb_free(&sb);
	int windows = 0;
	for (size_t k = i; k < end; k++) {
		windows |= m->procs[k]->windows != 0;
		for (size_t j = 0; j < m->procs[k]->nthreads; j++) {
			const struct model_thread *t = m->procs[k]->threads[j];
			if (thread_shown(t) && !named_later(m, k, t->tid))
				thread_meta(m, m->procs[k]->pid, t);
		}
	}
	if (windows)
		out_trace_thread(m->out.trace, m->procs[i]->pid, MODEL_WINDOWS_TID, "prof windows",
				 MODEL_WINDOWS_TID);
}

static int proc_cmp(const void *pa, const void *pb)
{
	const struct model_proc *a = *(struct model_proc *const *)pa;
	const struct model_proc *b = *(struct model_proc *const *)pb;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->n < b->n ? -1 : a->n > b->n;
}

void model_finish(struct parse_model *m)
{
	model_api_finish(m);
	model_ops_finish(m);
	model_devnodes_finish(m);
	model_windows_finish(m);
	model_gpuann_finish(m);
	for (size_t i = 0; i < m->nprocs; i++) {
		model_close_async(m, m->procs[i]);
		model_ranges_settle(m, m->procs[i], 0, 0);   /* steps never ended */
	}
	if (m->nprocs)
		qsort(m->procs, m->nprocs, sizeof *m->procs, proc_cmp);
	for (size_t i = 0, end; i < m->nprocs; i = end) {
		for (end = i + 1; end < m->nprocs && m->procs[end]->pid == m->procs[i]->pid; end++)
			;
		proc_meta(m, i, end);
	}
	for (size_t i = 0; i < m->nhost; i++)
		out_trace_process(m->out.trace, m->host_pids[i], "Host", "Host", -1);
	model_dev_meta(m);
}

void model_free_val(void *ctx, void *val)
{
	(void)ctx;
	free(val);
}

void model_free(struct parse_model *m)
{
	model_gpuann_free(m);
	for (size_t i = 0; i < m->nprocs; i++) {
		struct model_proc *p = m->procs[i];
		for (size_t j = 0; j < p->nthreads; j++) {
			free(p->threads[j]->stack);
			free(p->threads[j]->ops);
			free(p->threads[j]);
		}
		free(p->threads);
		parse_idmap_free(&p->thread_of);
		model_dev_free(p);
		model_stepsel_free(p);
		model_fwmem_free(p);
		for (size_t k = 0; k < p->nrwait; k++)
			free(p->rwait[k].name);
		free(p->rwait);
		free(p->fwd_seq);
		parse_idmap_each(&p->async, model_free_val, NULL);
		parse_idmap_free(&p->async);
		free(p);
	}
	free(m->procs);
	free(m->steps);
	free(m->step_procs);
	free(m->dev_rows);
	free(m->tracks);
	parse_idmap_free(&m->track_at);
	model_devnodes_free(m);
	parse_idmap_free(&m->op_json);
	memset(m, 0, sizeof *m);
}
