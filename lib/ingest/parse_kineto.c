#include "ingest/parse_kineto.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "common/grow.h"
#include "common/torch_nvtx.h"
#include "ingest/parse_discover.h"

/* As ops.py names them. */
#define SYNC_NAME "prof::clock_sync"
#define SYNC_OP "aten::empty"

int kineto_meta_parse(const char *text, struct kineto_meta *m, unsigned *line)
{
	memset(m, 0, sizeof *m);
	int have = 0;
	*line = 0;
	for (const char *p = text; *p; p += strcspn(p, "\n"), p += *p == '\n') {
		++*line;
		long long a, b;
		char key[16];
		int n = sscanf(p, "%15s %lld %lld", key, &a, &b);
		if (n < 1 || key[0] == '#')
			continue;
		if (n == 2 && strcmp(key, "pid") == 0)
			m->pid = (int32_t)a, have |= 1;
		else if (n == 2 && strcmp(key, "tid") == 0)
			m->tid = (int32_t)a, have |= 2;
		else if (n == 2 && strcmp(key, "keep_from") == 0)
			m->keep_from = (uint64_t)a, have |= 4;
		else if (n == 3 && strcmp(key, "mark") == 0 && m->nmarks < KINETO_MARKS_MAX && b >= a) {
			m->marks[m->nmarks][0] = (uint64_t)a;
			m->marks[m->nmarks++][1] = (uint64_t)b;
		} else {
			return -EINVAL;
		}
	}
	return have == 7 && m->nmarks ? 0 : -EINVAL;
}

/* qsort, which must not be handed an empty table's NULL. */
static void sort_n(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(v, n, size, cmp);
}

static int by_start(const void *a, const void *b)
{
	const struct kineto_op *x = a, *y = b;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->dur_ns > y->dur_ns ? -1 : x->dur_ns < y->dur_ns;   /* parents first */
}

static int by_thread_start(const void *a, const void *b)
{
	const struct kineto_op *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return by_start(a, b);
}

/* ns to add to the file's times: as ops.py's Collector._offset, from the
 * most tightly timed clock mark, or the midpoints when marks are missing.
 * ops are in thread and start order: the sync range's thread's last
 * nmarks aten::empty inside the range are the marks. */
static int64_t clock_offset(const struct kineto_ops *ops, const struct kineto_op *sync,
			    const struct kineto_meta *m)
{
	int64_t ss = sync->start_ns, se = sync->start_ns + sync->dur_ns;
	const struct kineto_op *marks[KINETO_MARKS_MAX];
	unsigned n = 0;
	for (size_t i = 0; i < ops->n; i++) {
		const struct kineto_op *o = &ops->v[i];
		if (o->tid != sync->tid || o->start_ns < ss || o->start_ns > se ||
		    strcmp(o->name, SYNC_OP) != 0)
			continue;
		if (n == m->nmarks)
			memmove(marks, marks + 1, --n * sizeof *marks);
		marks[n++] = o;
	}
	if (n != m->nmarks)
		return (int64_t)(m->marks[0][0] + m->marks[m->nmarks - 1][1]) / 2 - (ss + se) / 2;
	unsigned best = 0;
	for (unsigned i = 1; i < n; i++)
		if (m->marks[i][1] - m->marks[i][0] < m->marks[best][1] - m->marks[best][0])
			best = i;
	return (int64_t)(m->marks[best][0] + m->marks[best][1]) / 2 -
	       (marks[best]->start_ns * 2 + marks[best]->dur_ns) / 2;
}

struct seq_tid {
	int64_t seq, tid;
};

static int by_seq(const void *a, const void *b)
{
	const struct seq_tid *x = a, *y = b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Backward flags by nesting on each thread (an autograd node, or inside
 * one; ops in thread and start order), and each forward operator's thread
 * by sequence number (*fwd, sorted). */
static int mark_backward(struct kineto_ops *ops, struct seq_tid **fwd, size_t *nfwd)
{
	struct { int64_t end; int bwd; } *st = malloc((ops->n + 1) * sizeof *st);
	*fwd = malloc((ops->n + 1) * sizeof **fwd);
	if (!st || !*fwd) {
		free(st);
		free(*fwd);
		*fwd = NULL;
		return -ENOMEM;
	}
	size_t depth = 0;
	*nfwd = 0;
	for (size_t i = 0; i < ops->n; i++) {
		struct kineto_op *o = &ops->v[i];
		int64_t end = o->start_ns + o->dur_ns;
		if (i && ops->v[i - 1].tid != o->tid)
			depth = 0;
		while (depth && end > st[depth - 1].end)
			depth--;
		o->backward = strncmp(o->name, TORCH_BACKWARD_PREFIX,
				      sizeof TORCH_BACKWARD_PREFIX - 1) == 0 ||
			      (depth && st[depth - 1].bwd);
		st[depth].end = end;
		st[depth++].bwd = o->backward;
		if (!o->backward && o->seq >= 0)
			(*fwd)[(*nfwd)++] = (struct seq_tid){ o->seq, o->tid };
	}
	free(st);
	sort_n(*fwd, *nfwd, sizeof **fwd, by_seq);
	return 0;
}

static int32_t forward_tid(const struct kineto_op *o, const struct seq_tid *fwd, size_t nfwd)
{
	if (o->fwd_tid <= 0)
		return 0;
	struct seq_tid key = { o->seq, 0 };
	const struct seq_tid *f = o->seq >= 0 ? bsearch(&key, fwd, nfwd, sizeof key, by_seq) : NULL;
	return f ? (int32_t)f->tid : (int32_t)-o->fwd_tid;   /* negated: a torch id */
}

/* A kept JSON text (record_shapes) interned; 0 when absent or empty
 * ("[]": an operator without inputs, as torch's getters give none). */
static uint32_t intern_text(struct raw_writer *w, const char *buf, uint32_t at, uint32_t len,
			    uint64_t ts)
{
	char small[256], *t = len < sizeof small ? small : malloc((size_t)len + 1);
	if (!len || !t || (len == 2 && buf[at] == '[' && buf[at + 1] == ']')) {
		if (t != small)
			free(t);
		return 0;
	}
	memcpy(t, buf + at, len);
	t[len] = '\0';
	uint32_t id = raw_writer_intern(w, t, ts);
	if (t != small)
		free(t);
	return id;
}

/* The operators, now in time order for the stream, on CLOCK_MONOTONIC. */
static long emit_all(struct kineto_ops *ops, const struct seq_tid *fwd, size_t nfwd, int64_t off,
		     const struct kineto_meta *m, struct raw_writer *w)
{
	sort_n(ops->v, ops->n, sizeof *ops->v, by_start);
	long done = 0;
	for (size_t i = 0; i < ops->n; i++) {
		const struct kineto_op *o = &ops->v[i];
		int64_t start = o->start_ns + off;
		if (start < (int64_t)m->keep_from || strcmp(o->name, SYNC_NAME) == 0 ||
		    strncmp(o->name, TORCH_NEXT_PREFIX, sizeof TORCH_NEXT_PREFIX - 1) == 0)
			continue;
		struct raw_op r = {
			.end = (uint64_t)(start + o->dur_ns), .tid = (int32_t)o->tid,
			.name_id = raw_writer_intern(w, o->name, (uint64_t)start),
			.flags = (o->backward ? RAW_OP_BACKWARD : 0) | (o->user ? RAW_OP_USER : 0),
			.seq = o->seq, .fwd_tid = o->backward ? forward_tid(o, fwd, nfwd) : 0,
		};
		r.shapes_id = intern_text(w, ops->buf, o->shapes_at, o->shapes_len, (uint64_t)start);
		if (r.shapes_id)
			r.types_id = intern_text(w, ops->buf, o->types_at, o->types_len,
						 (uint64_t)start);
		if (raw_writer_emit(w, RAW_REC_OP, (uint64_t)start, &r, sizeof r) == 0)
			done++;
	}
	return done;
}

long kineto_convert(struct kineto_ops *ops, const struct kineto_meta *m, struct raw_writer *w,
		    const char **why)
{
	sort_n(ops->v, ops->n, sizeof *ops->v, by_thread_start);
	const struct kineto_op *sync = NULL;
	for (size_t i = 0; i < ops->n && !sync; i++)
		if (ops->v[i].user && strcmp(ops->v[i].name, SYNC_NAME) == 0)
			sync = &ops->v[i];
	if (!sync) {
		*why = "its clock marks (\"" SYNC_NAME "\") are not in it";
		return -EINVAL;
	}
	int64_t off = clock_offset(ops, sync, m);
	struct seq_tid *fwd = NULL;
	size_t nfwd = 0;
	if (mark_backward(ops, &fwd, &nfwd)) {
		*why = "out of memory";
		return -ENOMEM;
	}
	long done = emit_all(ops, fwd, nfwd, off, m, w);
	free(fwd);
	return done;
}

/* ---- the run directory -------------------------------------------------- */

static int by_n(const void *a, const void *b)
{
	const long *x = a, *y = b;
	return *x < *y ? -1 : *x > *y;
}

long kineto_list(int dirfd, long **out, long *orphans)
{
	DIR *d = dirfd >= 0 ? fdopendir(dup(dirfd)) : NULL;
	long n = 0, json = 0;
	size_t cap = 0;
	struct dirent *e;
	*out = NULL;
	*orphans = 0;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		long k;
		char tail[16];
		if (sscanf(e->d_name, "kineto-%ld.%15s", &k, tail) != 2)
			continue;
		if (strcmp(tail, "json") == 0 || strcmp(tail, "json.tmp") == 0)
			json++;
		if (strcmp(tail, "meta") != 0)
			continue;
		long *v = grow_room(*out, (size_t)n, &cap, sizeof *v);
		if (!v) {
			closedir(d);
			return -ENOMEM;
		}
		*out = v;
		v[n++] = k;
	}
	closedir(d);
	sort_n(*out, (size_t)n, sizeof **out, by_n);
	*orphans = json > n ? json - n : 0;
	return n;
}

int kineto_flush_into(int dirfd, const char *image, long k, struct raw_writer *w, FILE *log,
		      long *ops_out)
{
	char name[64], *text = NULL, *json = NULL;
	size_t len = 0, at = 0;
	struct kineto_meta m;
	struct kineto_ops ops = { 0 };
	unsigned line = 0;
	const char *why = NULL;
	int rc = -1;
	snprintf(name, sizeof name, "/proc/self/fd/%d/kineto-%ld.meta", dirfd, k);
	if (fs_read_file(name, &text, &len) || kineto_meta_parse(text, &m, &line)) {
		why = "prof's note beside it cannot be read";
	} else {
		snprintf(name, sizeof name, "/proc/self/fd/%d/kineto-%ld.json", dirfd, k);
		int r = fs_read_file(name, &json, &len);
		r = r ? r : kineto_read(json, len, &ops, &at);
		why = r == -EINVAL ? "it is not Kineto's trace JSON" : r ? strerror(-r) : NULL;
	}
	long done = why ? -1 : kineto_convert(&ops, &m, w, &why);
	if (done >= 0) {
		*ops_out += done;
		rc = 0;
	} else if (log) {
		fprintf(log, "prof parse: raw/%s/kineto-%ld.json: torch's trace of an operator "
			"flush left out: %s (kept there)\n", image, k, why);
	}
	free(text);
	free(json);
	kineto_ops_free(&ops);
	return rc;
}

void kineto_flush_remove(int dirfd, long k)
{
	char f[40];
	snprintf(f, sizeof f, "kineto-%ld.json", k);
	unlinkat(dirfd, f, 0);
	snprintf(f, sizeof f, "kineto-%ld.meta", k);
	unlinkat(dirfd, f, 0);
}

#define PARTIAL ".fwk.partial"

/* The stream's final name: fwk.raw, or fwk.<i>.raw beside one made by an
 * earlier parse. The flushes' files go only once it has it: a parse cut
 * short leaves them and a .partial that the next one replaces. */
static int publish(int dirfd)
{
	char name[32] = "fwk.raw";
	for (int i = 1; faccessat(dirfd, name, F_OK, 0) == 0 && i < 1000; i++)
		snprintf(name, sizeof name, "fwk.%d.raw", i);
	return renameat(dirfd, PARTIAL, dirfd, name) ? -errno : 0;
}

static long image_ingest(const char *raw_dir, const char *image, long pid, FILE *log)
{
	char *path = fs_join(raw_dir, image);
	int dirfd = path ? open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	free(path);
	long *v = NULL, orphans = 0, n = kineto_list(dirfd, &v, &orphans), ok = 0, ops = 0;
	if (orphans)
		fprintf(log, "prof parse: raw/%s: %ld of torch's operator flush files have no note "
			"of prof's (the process ended while torch wrote them): their operators are "
			"left out\n", image, orphans);
	struct raw_writer w = { .fd = -1 };
	struct raw_writer_opts o = { .clock = RAW_CLOCK_MONOTONIC, .kind = RAW_STREAM_FRAMEWORK,
				     .pid = (int32_t)pid, .comm = "framework" };
	unlinkat(dirfd, PARTIAL, 0);
	if (n > 0 && raw_writer_open(&w, dirfd, PARTIAL, &o) == 0) {
		for (long i = 0; i < n; i++)
			if (kineto_flush_into(dirfd, image, v[i], &w, log, &ops) == 0)
				v[ok++] = v[i];
		raw_writer_close(&w);
		int rc = ok ? publish(dirfd) : -ENODATA;
		for (long i = 0; rc == 0 && i < ok; i++)
			kineto_flush_remove(dirfd, v[i]);
		if (rc && ok)
			fprintf(log, "prof parse: raw/%s: the operators of torch's flush files cannot be "
				"kept: %s\n", image, strerror(-rc));
		if (rc)
			ok = 0, unlinkat(dirfd, PARTIAL, 0);
	} else if (n > 0) {
		fprintf(log, "prof parse: raw/%s: torch's operator flush files cannot be converted "
			"(the directory cannot be written): their operators are left out\n", image);
	}
	free(v);
	if (dirfd >= 0)
		close(dirfd);
	return ok;
}

long parse_kineto_ingest(const char *raw_dir, FILE *log)
{
	DIR *d = opendir(raw_dir);
	if (!d)
		return 0;
	long done = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		long pid, n;
		if (parse_image_name(e->d_name, &pid, &n) != 0)
			continue;
		done += image_ingest(raw_dir, e->d_name, pid, log);
	}
	closedir(d);
	return done;
}
