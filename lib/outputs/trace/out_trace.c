#include "outputs/trace/out_trace.h"

#include "outputs/trace/out_trace_dev.h"


int out_trace_open(struct out_trace *t, const char *dir, const struct out_trace_meta *m)
{
	int rc = out_file_open(&t->file, dir, "trace_view.json");
	if (rc)
		return rc;
	t->base = m->base_mono_ns;
	t->events = 0;
	jo_init_file(&t->j, t->file.f, 2);
	jo_tight(&t->j);
	jo_background(&t->j);
	jo_obj_begin(&t->j);
	jo_kint(&t->j, "schemaVersion", 1);
	if (m->ndevs)
		out_trace_dev_props(&t->j, m->devs, m->ndevs);
	jo_kstr(&t->j, "displayTimeUnit", "ms");
	jo_kuint(&t->j, "baseTimeNanoseconds", m->base_real_ns);
	if (m->rank >= 0) {
		jo_key(&t->j, "distributedInfo");
		jo_obj_begin(&t->j);
		jo_kint(&t->j, "rank", m->rank);
		jo_obj_end(&t->j);
	}
	jo_key(&t->j, "traceEvents");
	jo_arr_begin(&t->j);
	return 0;
}

int out_trace_close(struct out_trace *t)
{
	jo_arr_end(&t->j);
	jo_kstr(&t->j, "traceName", "trace_view.json");
	jo_obj_end(&t->j);
	int err = jo_finish(&t->j);
	fputc('\n', t->file.f);
	return out_file_commit(&t->file, err);
}

void out_trace_abort(struct out_trace *t)
{
	jo_abort(&t->j);
	out_file_abort(&t->file);
}

int64_t out_trace_rel(const struct out_trace *t, uint64_t ns)
{
	return (int64_t)(ns - t->base);
}

void out_trace_begin(struct out_trace *t, const char *ph, const char *cat,
		     const char *name, int64_t pid, int64_t tid, uint64_t ns)
{
	jo_event_head(&t->j, ph, cat, name, pid, tid, out_trace_rel(t, ns));
}

void out_trace_end(struct out_trace *t)
{
	jo_obj_end(&t->j);
	t->events++;
}

char *out_trace_x_at(struct out_trace *t, const char *cat, const char *name, int64_t pid,
		     int64_t tid, uint64_t start_ns, uint64_t end_ns)
{
	struct jo *j = &t->j;
	char *p = jo_event_at(j, jo_item_at(j), 'X', cat, name, pid, tid, out_trace_rel(t, start_ns));
	p = JO_LIT(p, ",\"dur\":");
	p += jo_fmt_us3(p, end_ns > start_ns ? (int64_t)(end_ns - start_ns) : 0);
	return jo_room(j, p);
}

void out_trace_line_end(struct out_trace *t, char *p)
{
	jo_item_end(&t->j, p);
	t->events++;
}

void out_trace_complete(struct out_trace *t, int64_t pid, int64_t tid, const char *cat,
			const char *name, uint64_t start_ns, uint64_t end_ns,
			int64_t step_id, int unfinished)
{
	char *p = out_trace_x_at(t, cat, name, pid, tid, start_ns, end_ns);
	if (step_id >= 0 || unfinished) {
		p = JO_LIT(p, ",\"args\":{");
		if (step_id >= 0) {
			p = JO_LIT(p, "\"Step Id\":");
			p += jo_fmt_int(p, step_id);
		}
		if (unfinished)
			p = step_id >= 0 ? JO_LIT(p, ",\"unfinished\":true") : JO_LIT(p, "\"unfinished\":true");
		*p++ = '}';
	}
	*p++ = '}';
	out_trace_line_end(t, p);
}

static void meta(struct out_trace *t, const char *what, int64_t pid, int64_t tid,
		 const char *key, const char *sval, int64_t ival)
{
	struct jo *j = &t->j;
	jo_obj_begin(j);
	jo_kstr(j, "ph", "M");
	jo_kstr(j, "name", what);
	jo_kint(j, "pid", pid);
	jo_kint(j, "tid", tid);
	jo_kint(j, "ts", 0);
	jo_key(j, "args");
	jo_obj_begin(j);
	if (sval)
		jo_kstr(j, key, sval);
	else
		jo_kint(j, key, ival);
	jo_obj_end(j);
	out_trace_end(t);
}

void out_trace_process(struct out_trace *t, int64_t pid, const char *name,
		       const char *label, int64_t sort_index)
{
	meta(t, "process_name", pid, 0, "name", name, 0);
	meta(t, "process_labels", pid, 0, "labels", label, 0);
	meta(t, "process_sort_index", pid, 0, "sort_index", NULL, sort_index);
}

void out_trace_thread(struct out_trace *t, int64_t pid, int64_t tid, const char *name,
		      int64_t sort_index)
{
	meta(t, "thread_name", pid, tid, "name", name, 0);
	meta(t, "thread_sort_index", pid, tid, "sort_index", NULL, sort_index);
}
