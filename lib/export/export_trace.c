/* trace_view.json rewritten a line at a time: --step-list, --timeline-limit,
 * --pretty, --gzip. trace_view.json as the parse writes it holds one event
 * per line between the "traceEvents" line and the line that closes it. */
#include "export/export.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "common/fsutil.h"
#include "outputs/out_file.h"

#define TRACE "trace_view.json"
#define NBUCKETS_NOSTEP 256

struct ev {
	int meta;            /* "M": always kept */
	double ts, dur;
};

/* The event on a line ("    {...},"): 1, or 0 when the line is no event. */
static int event_of(char *line, size_t len, struct ev *e)
{
	while (len && (line[len - 1] == '\n' || line[len - 1] == ',' || line[len - 1] == ' '))
		len--;
	cJSON *j = cJSON_ParseWithLength(line, len);
	if (!j)
		return 0;
	const cJSON *ph = cJSON_GetObjectItemCaseSensitive(j, "ph");
	const cJSON *ts = cJSON_GetObjectItemCaseSensitive(j, "ts");
	const cJSON *dur = cJSON_GetObjectItemCaseSensitive(j, "dur");
	e->meta = cJSON_IsString(ph) && strcmp(ph->valuestring, "M") == 0;
	e->ts = cJSON_IsNumber(ts) ? ts->valuedouble : 0;
	e->dur = cJSON_IsNumber(dur) && dur->valuedouble > 0 ? dur->valuedouble : 0;
	cJSON_Delete(j);
	return 1;
}

/* Where the line is: before the events, an event, after them. */
enum part { HEAD, EVENTS, TAIL };

static enum part next_part(enum part p, const char *line)
{
	const char *s = line + strspn(line, " \t");
	if (p == HEAD && strstr(line, "\"traceEvents\"") && !strstr(line, "[]"))
		return EVENTS;
	if (p == HEAD && strstr(line, "\"traceEvents\""))
		return TAIL;
	if (p == EVENTS && *s == ']')
		return TAIL;
	return p;
}

static int selected(const struct ev *e, const struct export_span *spans, size_t nspans,
		    const uint64_t *sel, size_t nsel)
{
	if (!sel || e->meta)
		return 1;
	for (size_t i = 0; i < nspans; i++) {
		double a = spans[i].start_us, b = spans[i].end_us;
		if (e->ts > b || e->ts + e->dur < a ||
		    (e->dur > 0 && (e->ts >= b || e->ts + e->dur <= a)))
			continue;
		for (size_t k = 0; k < nsel; k++)
			if (sel[k] == spans[i].step)
				return 1;
	}
	return 0;
}

/* Steps ordered by their first start: the limit keeps groups 1..K and the
 * events before the first step (bucket 0). */
struct groups {
	uint64_t *step;
	double *start;
	size_t n;
	int by_time;         /* no steps: NBUCKETS_NOSTEP slices of [0, max ts] */
	double max_ts;
};

static int cmp_dbl_step(const void *a, const void *b)
{
	const struct export_span *x = a, *y = b;
	return x->start_us < y->start_us ? -1 : x->start_us > y->start_us;
}

static int groups_make(struct groups *g, const struct export_span *spans, size_t nspans,
		       const uint64_t *sel, size_t nsel)
{
	memset(g, 0, sizeof *g);
	struct export_span *v = nspans ? malloc(nspans * sizeof *v) : NULL;
	if (nspans && !v)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < nspans; i++) {
		int in = !sel;
		for (size_t k = 0; sel && k < nsel; k++)
			in |= sel[k] == spans[i].step;
		if (in)
			v[n++] = spans[i];
	}
	if (n)   /* a run without steps has no spans: v is NULL */
		qsort(v, n, sizeof *v, cmp_dbl_step);
	g->step = malloc((n + 1) * sizeof *g->step);
	g->start = malloc((n + 1) * sizeof *g->start);
	if (!g->step || !g->start) {
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		size_t k;
		for (k = 0; k < g->n && g->step[k] != v[i].step; k++)
			;
		if (k == g->n) {
			g->step[g->n] = v[i].step;
			g->start[g->n++] = v[i].start_us;
		}
	}
	free(v);
	g->by_time = g->n == 0;
	return 0;
}

static size_t nbuckets(const struct groups *g)
{
	return g->by_time ? NBUCKETS_NOSTEP + 1 : g->n + 1;
}

static size_t bucket_of(const struct groups *g, const struct ev *e)
{
	if (g->by_time) {
		if (g->max_ts <= 0)
			return NBUCKETS_NOSTEP;
		double b = e->ts / g->max_ts * NBUCKETS_NOSTEP;
		return b < 0 ? 0 : b >= NBUCKETS_NOSTEP ? NBUCKETS_NOSTEP : (size_t)b + 1;
	}
	size_t lo = 0, hi = g->n;   /* starts are sorted */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (g->start[mid] <= e->ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Pass 1: how many bytes each bucket's events take; the last bucket kept
 * in *keep (SIZE_MAX: only metadata). */
static int measure(FILE *in, struct groups *g, const struct export_span *spans, size_t nspans,
		   const uint64_t *sel, size_t nsel, uint64_t limit, size_t *keep)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	enum part p = HEAD;
	uint64_t base = 200;   /* the prof_truncated key */
	size_t nb = nbuckets(g);
	uint64_t *bytes = calloc(nb, sizeof *bytes);
	if (!bytes)
		return -ENOMEM;
	if (g->by_time) {       /* the time span first */
		while ((len = getline(&line, &cap, in)) > 0) {
			enum part q = next_part(p, line);
			struct ev e;
			if (p == EVENTS && q == EVENTS && event_of(line, (size_t)len, &e) &&
			    !e.meta && e.ts > g->max_ts)
				g->max_ts = e.ts;
			p = q;
		}
		rewind(in);
		p = HEAD;
	}
	while ((len = getline(&line, &cap, in)) > 0) {
		enum part q = next_part(p, line);
		struct ev e;
		if (p == EVENTS && q == EVENTS && event_of(line, (size_t)len, &e)) {
			if (selected(&e, spans, nspans, sel, nsel)) {
				if (e.meta)
					base += (uint64_t)len;
				else
					bytes[bucket_of(g, &e)] += (uint64_t)len;
			}
		} else {
			base += (uint64_t)len;
		}
		p = q;
	}
	free(line);
	rewind(in);
	uint64_t total = base;
	*keep = SIZE_MAX;
	for (size_t b = 0; b < nb; b++) {
		total += bytes[b];
		if (total > limit)
			break;
		*keep = b;
	}
	free(bytes);
	return ferror(in) ? -EIO : 0;
}

static void write_truncated(FILE *f, const struct groups *g, size_t keep, uint64_t limit,
			    uint64_t dropped, struct export_trace_result *res)
{
	fprintf(f, "  \"prof_truncated\": {\"limit_bytes\": %llu, \"kept_steps\": [",
		(unsigned long long)limit);
	size_t nk = 0;
	if (!g->by_time && keep != SIZE_MAX)
		nk = keep < g->n ? keep : g->n;
	res->kept_steps = nk ? malloc(nk * sizeof *res->kept_steps) : NULL;
	for (size_t i = 0; i < nk; i++) {
		fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)g->step[i]);
		if (res->kept_steps)
			res->kept_steps[res->nkept_steps++] = g->step[i];
	}
	fprintf(f, "], \"dropped_events\": %llu", (unsigned long long)dropped);
	if (g->by_time)
		fprintf(f, ", \"kept_until_us\": %.3f", keep == SIZE_MAX ? 0.0 :
			keep >= NBUCKETS_NOSTEP ? g->max_ts :
			g->max_ts * (double)keep / NBUCKETS_NOSTEP);
	fprintf(f, "},\n");
}

/* Pass 1 again, counting what the limit leaves out. */
static uint64_t count_dropped(FILE *in, const struct groups *g, size_t keep,
			      const struct export_span *spans, size_t nspans,
			      const uint64_t *sel, size_t nsel)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	enum part p = HEAD;
	uint64_t n = 0;
	while ((len = getline(&line, &cap, in)) > 0) {
		enum part q = next_part(p, line);
		struct ev e;
		if (p == EVENTS && q == EVENTS && event_of(line, (size_t)len, &e)) {
			if (selected(&e, spans, nspans, sel, nsel) && !e.meta &&
			    (keep == SIZE_MAX || bucket_of(g, &e) > keep))
				n++;
		}
		p = q;
	}
	free(line);
	rewind(in);
	return n;
}

int export_trace_filter(const char *dir, const struct export_span *spans, size_t nspans,
			const uint64_t *sel, size_t nsel, uint64_t limit_bytes,
			struct export_trace_result *res)
{
	memset(res, 0, sizeof *res);
	char *path = fs_join(dir, TRACE);
	FILE *in = path ? fopen(path, "re") : NULL;
	int rc = in ? 0 : path ? -errno : -ENOMEM;
	free(path);
	if (rc)
		return rc;
	struct groups g;
	size_t keep = SIZE_MAX - 1;   /* no limit: keep every bucket */
	rc = groups_make(&g, spans, nspans, sel, nsel);
	res->nsteps = g.n;
	if (!rc && limit_bytes) {
		rc = measure(in, &g, spans, nspans, sel, nsel, limit_bytes, &keep);
		if (!rc && keep + 1 >= nbuckets(&g) && keep != SIZE_MAX)
			keep = SIZE_MAX - 1;
		else if (!rc)
			res->truncated = 1;
	}
	struct out_file of;
	if (!rc)
		rc = out_file_open(&of, dir, TRACE);
	if (rc) {
		fclose(in);
		free(g.step);
		free(g.start);
		return rc;
	}
	uint64_t dropped = res->truncated ? count_dropped(in, &g, keep, spans, nspans, sel, nsel) : 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	enum part p = HEAD;
	int first = 1;
	while ((len = getline(&line, &cap, in)) > 0) {
		enum part q = next_part(p, line);
		struct ev e;
		if (p == HEAD && q != HEAD && res->truncated)
			write_truncated(of.f, &g, keep, limit_bytes, dropped, res);
		if (p == EVENTS && q == EVENTS && event_of(line, (size_t)len, &e)) {
			int ok = selected(&e, spans, nspans, sel, nsel) &&
				 (e.meta || keep == SIZE_MAX - 1 ||
				  (keep != SIZE_MAX && bucket_of(&g, &e) <= keep));
			if (!ok) {
				res->dropped++;
				continue;
			}
			size_t n = (size_t)len;
			while (n && (line[n - 1] == '\n' || line[n - 1] == ','))
				n--;
			if (!first)
				fputs(",\n", of.f);
			fwrite(line, 1, n, of.f);
			first = 0;
			res->kept++;
			continue;
		}
		if (p == EVENTS && q == TAIL && !first)
			fputc('\n', of.f);
		fwrite(line, 1, (size_t)len, of.f);
		p = q;
	}
	int failed = ferror(in);
	free(line);
	fclose(in);
	free(g.step);
	free(g.start);
	return out_file_commit(&of, failed);
}

/* --pretty: one compact event line re-indented, numbers and strings kept
 * byte for byte. */
static void indent(FILE *f, int depth)
{
	fputc('\n', f);
	for (int i = 0; i < depth; i++)
		fputs("  ", f);
}

static void pretty_event(FILE *f, const char *s, size_t n, int depth)
{
	int str = 0, esc = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (str) {
			fputc(c, f);
			if (esc)
				esc = 0;
			else if (c == '\\')
				esc = 1;
			else if (c == '"')
				str = 0;
			continue;
		}
		if (c == ' ')
			continue;
		if (c == '"') {
			str = 1;
			fputc(c, f);
		} else if (c == '{' || c == '[') {
			size_t j = i + 1;
			while (j < n && s[j] == ' ')
				j++;
			if (j < n && (s[j] == '}' || s[j] == ']')) {   /* {} [] */
				fputc(c, f);
				fputc(s[j], f);
				i = j;
				continue;
			}
			fputc(c, f);
			indent(f, ++depth);
		} else if (c == '}' || c == ']') {
			indent(f, --depth);
			fputc(c, f);
		} else if (c == ',') {
			fputc(c, f);
			indent(f, depth);
		} else if (c == ':') {
			fputs(": ", f);
		} else {
			fputc(c, f);
		}
	}
}

/* An event line pretty-printed into *buf, keeping its indent and comma. */
static int pretty_line(const char *line, size_t n, char **buf, size_t *len)
{
	size_t m = n;
	int comma = 0;
	while (m && (line[m - 1] == '\n' || line[m - 1] == ',' || line[m - 1] == ' '))
		comma |= line[--m] == ',';
	size_t lead = strspn(line, " ");
	if (lead > m)   /* nothing but separators: no event to indent */
		lead = m;
	FILE *mem = open_memstream(buf, len);
	if (!mem)
		return -ENOMEM;
	fwrite(line, 1, lead, mem);
	pretty_event(mem, line + lead, m - lead, 2);
	fputs(comma ? ",\n" : "\n", mem);
	fclose(mem);
	return 0;
}

/* The line by line copy; *failed says a write failed. */
static int copy_lines(FILE *in, int pretty, gzFile gz, struct out_file *of, int *failed)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	enum part p = HEAD;
	char *mbuf = NULL;   /* pretty text of one line before gzip */
	size_t mlen = 0;
	int rc = 0;
	while ((len = getline(&line, &cap, in)) > 0) {
		enum part q = next_part(p, line);
		const char *out = line;
		size_t n = (size_t)len;
		if (pretty && p == EVENTS && q == EVENTS) {
			if ((rc = pretty_line(line, n, &mbuf, &mlen)) != 0)
				break;
			out = mbuf;
			n = mlen;
		}
		if (gz)
			*failed |= n && gzwrite(gz, out, (unsigned)n) != (int)n;
		else
			*failed |= fwrite(out, 1, n, of->f) != n;
		free(mbuf);
		mbuf = NULL;
		p = q;
	}
	free(line);
	return rc;
}

/* trace_view.json.gz is written under a temporary name, with the mode of
 * every output. */
static int gz_open(const char *gztmp, gzFile *gz)
{
	int gfd = fs_create_file(gztmp, O_WRONLY);
	*gz = gfd >= 0 ? gzdopen(gfd, "wb") : NULL;
	if (!*gz && gfd >= 0)
		close(gfd);
	if (!*gz)
		return gfd < 0 ? gfd : -ENOMEM;
	return 0;
}

/* Closes the gzip stream; a whole one replaces trace_view.json. */
static int gz_commit(gzFile gz, int failed, int rc, const char *gztmp, const char *gzpath,
		     const char *path)
{
	failed |= gzclose(gz) != Z_OK;
	if (!rc && failed)
		rc = -EIO;
	if (!rc && rename(gztmp, gzpath) != 0)
		rc = -errno;
	if (rc)
		unlink(gztmp);
	else
		unlink(path);
	return rc;
}

int export_trace_format(const char *dir, int pretty, int gzip)
{
	if (!pretty && !gzip)
		return 0;
	char *path = fs_join(dir, TRACE);
	char *gzpath = fs_join(dir, TRACE ".gz");
	char *gztmp = fs_join(dir, TRACE ".gz.tmp");
	FILE *in = path ? fopen(path, "re") : NULL;
	int rc = !path || !gzpath || !gztmp ? -ENOMEM : !in ? -errno : 0;
	struct out_file of = { 0 };
	gzFile gz = NULL;
	int failed = 0;
	if (!rc)
		rc = gzip ? gz_open(gztmp, &gz) : out_file_open(&of, dir, TRACE);
	if (!rc)
		rc = copy_lines(in, pretty, gz, &of, &failed);
	if (in) {
		failed |= ferror(in);
		fclose(in);
	}
	if (gz) {
		rc = gz_commit(gz, failed, rc, gztmp, gzpath, path);
	} else if (of.f) {
		int crc = out_file_commit(&of, failed || rc);
		rc = rc ? rc : crc;
	}
	free(path);
	free(gzpath);
	free(gztmp);
	return rc;
}
